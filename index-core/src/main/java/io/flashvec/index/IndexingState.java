package io.flashvec.index;

/**
 * How far the index of a shard (or the sum over a collection's shards) has caught up with its
 * points.
 *
 * @param indexed live points an index answers for: in a sealed graph, in a growing or frozen
 *     segment's live graph, or every point of a {@code flat} shard (its exact scan is its index)
 * @param backlog live points outside an index that the shard is working on: a live graph's backlog,
 *     the points of frozen segments waiting for their build, the points of segments sealed raw
 *     waiting for the merge that builds their graph. Points of a growing segment without a live
 *     graph (disabled, or closed after a failure) are neither: they wait for the seal threshold, as
 *     Qdrant's points below its indexing threshold do
 * @param frozenPending frozen segments waiting for (or in) an index build
 * @param buildsRunning index builds running (per shard 0 or 1)
 * @param compactionsRunning compactions running or queued (per shard 0 or 1)
 * @param mergesPlanned shards whose merge policy has work for an automatic compaction pass (a merge
 *     of similar-sized sealed segments, or the rewrite of one with many deletes), whether or not a
 *     pass has taken it up yet (per shard 0 or 1)
 * @param deferred whether builds and live-graph inserts are deferred (bulk load)
 * @param fieldVectorsIndexed vectors of dense fields other than the primary one that sealed
 *     segments' field graphs hold (deleted points included); their backlog, the vectors those
 *     graphs are still being built for, is in {@code backlog}
 */
public record IndexingState(
    long indexed,
    long backlog,
    int frozenPending,
    int buildsRunning,
    int compactionsRunning,
    int mergesPlanned,
    boolean deferred,
    long fieldVectorsIndexed) {

  /** A state without field graphs. */
  public IndexingState(
      long indexed,
      long backlog,
      int frozenPending,
      int buildsRunning,
      int compactionsRunning,
      int mergesPlanned,
      boolean deferred) {
    this(
        indexed,
        backlog,
        frozenPending,
        buildsRunning,
        compactionsRunning,
        mergesPlanned,
        deferred,
        0);
  }

  /** Nothing of a collection or shard. */
  public static final IndexingState EMPTY = new IndexingState(0, 0, 0, 0, 0, 0, false);

  /** The sum of this and {@code o} (the state of two shards as one). */
  public IndexingState plus(IndexingState o) {
    return new IndexingState(
        indexed + o.indexed,
        backlog + o.backlog,
        frozenPending + o.frozenPending,
        buildsRunning + o.buildsRunning,
        compactionsRunning + o.compactionsRunning,
        mergesPlanned + o.mergesPlanned,
        deferred || o.deferred,
        fieldVectorsIndexed + o.fieldVectorsIndexed);
  }

  /**
   * Whether every live point the shard will index is indexed and nothing is pending: no backlog, no
   * build and no compaction running, queued or planned.
   */
  public boolean caughtUp() {
    return backlog == 0
        && frozenPending == 0
        && buildsRunning == 0
        && compactionsRunning == 0
        && mergesPlanned == 0;
  }
}
