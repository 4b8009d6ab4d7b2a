package io.flashvec.index.segment;

import io.flashvec.index.PointId;
import io.flashvec.index.query.PreparedSearch;

/**
 * A set of points addressed by dense ordinals {@code 0..size()-1}.
 *
 * <p>Points are never modified in place: an update appends a new version elsewhere and marks the
 * old ordinal deleted. Reads are thread-safe and lock-free; {@link #markDeleted} may be called by
 * the shard's single writer while readers run.
 */
public interface Segment {

  /** Lifecycle of a segment as shown to users. */
  enum State {
    /** Accepting appends. */
    GROWING,
    /** Frozen, waiting for (or without) an index build. */
    SEALED,
    /** Frozen, an index build is running. */
    INDEXING,
    /** On disk, being rewritten or merged by a compaction (still searched until replaced). */
    COMPACTING
  }

  /** Unique within its shard; also orders segments by age. */
  int id();

  State state();

  /** Ordinals assigned so far (including deleted ones). */
  int size();

  /** Points not deleted. */
  int liveCount();

  PointId idAt(int ord);

  /** A copy of the stored vector. */
  float[] vectorAt(int ord);

  /**
   * Whether the point at {@code ord} has the default dense vector. One without it holds a
   * placeholder in the dense index that a dense search never returns ({@link
   * AcceptedOrdinals#withVector}) and {@link #vectorAt} returns that placeholder.
   */
  default boolean hasVector(int ord) {
    return true;
  }

  /** Ordinals (live or deleted) without the default dense vector. */
  default int withoutVector() {
    return 0;
  }

  /** Whether some point of this segment has a sparse vector. */
  default boolean hasSparse() {
    return false;
  }

  /** The sparse vector {@code name} of the point at {@code ord}, or {@code null}. */
  default io.flashvec.index.SparseVector sparseAt(int ord, String name) {
    return null;
  }

  /**
   * The graph of the dense field {@code name} (not the primary one), built or being built, or
   * {@code null} when the segment scans the field exactly.
   */
  default FieldGraph fieldGraph(String name) {
    return null;
  }

  /**
   * The progress of this segment's field graphs ({@link #fieldGraph}): element 0 the vectors they
   * hold, element 1 the vectors they will hold when built.
   */
  default long[] fieldGraphProgress() {
    return new long[2];
  }

  /** Whether some point of this segment has a dense vector other than the primary one. */
  default boolean hasDense() {
    return false;
  }

  /** The dense vector {@code name} (not the primary one) of the point at {@code ord}, or null. */
  default float[] denseAt(int ord, String name) {
    return null;
  }

  /** The dense vectors other than the primary one of the point at {@code ord} by name. */
  default java.util.Map<String, float[]> denseAt(int ord) {
    return java.util.Map.of();
  }

  /**
   * The score of the prepared query {@code q} against the dense vector {@code name} (not the
   * primary one) of the point at {@code ord} by {@code d}, or NaN when the point lacks it.
   */
  default float denseScore(String name, int ord, float[] q, io.flashvec.index.Distance d) {
    float[] v = denseAt(ord, name);
    return v == null ? Float.NaN : d.score(q, v, 0);
  }

  /**
   * The MaxSim score ({@link io.flashvec.index.Distance#maxSim}) of the prepared multivector query
   * {@code q}, {@code dim}-sized vectors back to back, against the multivector {@code name} of the
   * point at {@code ord}, or NaN when the point lacks it.
   */
  default float multiScore(String name, int ord, float[] q, int dim, io.flashvec.index.Distance d) {
    float[] v = denseAt(ord, name);
    return v == null ? Float.NaN : d.maxSim(q, dim, v);
  }

  /**
   * Whether the point at {@code ord} has the vector {@code name} ({@code ""}: the primary one), for
   * {@code has_vector}.
   */
  default boolean hasVector(int ord, String name) {
    return name.isEmpty()
        ? hasVector(ord)
        : sparseAt(ord, name) != null || (hasDense() && denseAt(ord, name) != null);
  }

  /** The sparse vectors of the point at {@code ord} by name (empty: none). */
  default java.util.Map<String, io.flashvec.index.SparseVector> sparseAt(int ord) {
    return java.util.Map.of();
  }

  /** The payload JSON bytes, or {@code null}. */
  byte[] payloadAt(int ord);

  boolean isDeleted(int ord);

  /** Marks an ordinal deleted; returns whether it was live. */
  boolean markDeleted(int ord);

  /**
   * Whether this segment is sealed on disk (listed in its shard's manifest), rather than held in
   * memory until its build.
   */
  default boolean onDisk() {
    return false;
  }

  /**
   * Points (live or deleted) that a growing segment's live graph holds, -1 for a segment without
   * one: the rest of a growing segment is scanned exactly until the graph catches up.
   */
  default int graphPoints() {
    return -1;
  }

  /**
   * Live points that an index answers for: all of a segment sealed on disk with a graph, none of
   * one sealed raw ({@link SealedSegment#hasGraph}), none of a segment held in memory unless it has
   * a live graph (see {@link GrowingSegment#indexedLiveCount}).
   */
  default int indexedLiveCount() {
    return onDisk() ? liveCount() : 0;
  }

  /** The ordinals not deleted, ascending. */
  default int[] liveOrdinals() {
    int n = size();
    int[] out = new int[n];
    int c = 0;
    for (int ord = 0; ord < n; ord++) {
      if (!isDeleted(ord)) {
        out[c++] = ord;
      }
    }
    return java.util.Arrays.copyOf(out, c);
  }

  /**
   * Offers the best live points for {@code search} among {@code accept} ({@code null}: all points)
   * to {@code out} (every live point for an exact segment) and adds what it cost to the search's
   * statistics. A graph segment decides with {@link io.flashvec.index.filter.FilterPlanner} whether
   * to score the accepted points exactly or to search its graph with them as the accept filter.
   *
   * @param share the part (0..1] of the points of all the segments the search covers that this
   *     segment holds; a growing segment's graph sizes its search by it
   * @param slot the segment's position among them, given back with each result
   */
  void search(PreparedSearch search, AcceptedOrdinals accept, double share, TopK out, int slot);

  /** Heap and off-heap bytes held in memory by this segment. */
  long memoryBytes();

  /**
   * The part of {@link #memoryBytes} on the Java heap: what a memory budget's resident slice
   * counts. Native memory with a slice of its own (the hot node cache) is left out.
   */
  default long heapBytes() {
    return memoryBytes();
  }

  /** Bytes this segment occupies on disk (0 for a memory-only segment). */
  long diskBytes();

  /**
   * Bytes of the payloads this segment stores, as JSON: every point's, deleted ones included until
   * a compaction drops them (Qdrant's payload storage size).
   */
  long payloadBytes();
}
