package io.flashvec.index.shard;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * Where live-graph inserts run (ADR 0011, 0017): a background lane for a graph that keeps up with
 * its writes, an urgent lane for one that fell behind them by more than {@link
 * LiveIndexScheduler}'s urgent backlog, because every query scans a graph's unindexed points
 * exactly, and, when {@code searchesAssist}, the threads that serve searches, one insert after each
 * search ({@link IndexAssist}).
 *
 * <p>The server runs the background lane on a thread with a lowered CPU priority (nice 10), so the
 * inserts beside a query load take the cycles the queries leave, and the urgent lane at normal
 * priority, so a load that leaves none still gets its points indexed. Both may be the same
 * executor. While searches assist and the backlog is small, neither lane runs: the searches' event
 * loops insert between requests, so no indexer thread takes a core in the middle of a search.
 *
 * @param background runs insert batches while the graph is close behind its writes
 * @param urgent runs insert batches while the graph is far behind
 * @param assistQuiet {@code null}: searches do not assist; else they leave an insert to their
 *     thread ({@link IndexAssist}), and count as assisting while the last did so within this time
 *     (the server: {@link #ASSIST_QUIET}); after it, the lanes take over
 */
public record LiveIndexer(Executor background, Executor urgent, Duration assistQuiet) {

  /**
   * The server's quiet time of assisting searches: a hundred times a search's latency, and short
   * enough that points nobody searches for wait little for the background lane.
   */
  public static final Duration ASSIST_QUIET = Duration.ofMillis(20);

  public LiveIndexer {
    Objects.requireNonNull(background, "background");
    Objects.requireNonNull(urgent, "urgent");
    if (assistQuiet != null && (assistQuiet.isNegative() || assistQuiet.isZero())) {
      throw new IllegalArgumentException("assistQuiet must be positive: " + assistQuiet);
    }
  }

  /** Two lanes, no assisting searches. */
  public LiveIndexer(Executor background, Executor urgent) {
    this(background, urgent, null);
  }

  /** Whether searches assist. */
  public boolean searchesAssist() {
    return assistQuiet != null;
  }

  /** One executor for both lanes, no assisting searches. */
  public static LiveIndexer of(Executor executor) {
    return executor == null ? null : new LiveIndexer(executor, executor);
  }
}
