package io.flashvec.index.shard;

import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * Where live-graph inserts run (ADR 0011): a background lane for a graph that keeps up with its
 * writes, and an urgent lane for one that fell behind them by more than {@link
 * LiveIndexScheduler}'s urgent backlog, because every query scans a graph's unindexed points
 * exactly.
 *
 * <p>The server runs the background lane on a thread with a lowered CPU priority (nice 10), so the
 * inserts beside a query load take the cycles the queries leave, and the urgent lane at normal
 * priority, so a load that leaves none still gets its points indexed. Both may be the same
 * executor.
 *
 * @param background runs insert batches while the graph is close behind its writes
 * @param urgent runs insert batches while the graph is far behind
 */
public record LiveIndexer(Executor background, Executor urgent) {

  public LiveIndexer {
    Objects.requireNonNull(background, "background");
    Objects.requireNonNull(urgent, "urgent");
  }

  /** One executor for both lanes. */
  public static LiveIndexer of(Executor executor) {
    return executor == null ? null : new LiveIndexer(executor, executor);
  }
}
