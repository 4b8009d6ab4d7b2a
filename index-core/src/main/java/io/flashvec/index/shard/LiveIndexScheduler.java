package io.flashvec.index.shard;

import io.flashvec.index.segment.GrowingSegment;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides when the live graph of a shard's growing segment gets its inserts (ADR 0011, 0017): on
 * the live indexer's background lane while the graph keeps up with its writes, on the urgent lane
 * once it falls behind (every query scans a graph's unindexed points exactly), and not at all while
 * a bulk load outruns it or the shard defers its builds.
 *
 * <p>Writes report here ({@link #noteWrite}, {@link #awaitIndexer}), and so do searches ({@link
 * #noteSearch}); the rates and times they leave drive the decisions. Thread-safe: the fields that
 * only the writer thread updates are noted as such.
 */
final class LiveIndexScheduler {

  private static final Logger LOG = LoggerFactory.getLogger(LiveIndexScheduler.class);

  static final int INDEX_BATCH = 256;

  /**
   * Unindexed points beyond which inserts go to the urgent lane: two batches, so a query scans at
   * most a few hundred points exactly (768-d: ~0.1 ms) when the background lane starves.
   */
  static final int URGENT_BACKLOG = 2 * INDEX_BATCH;

  /** Unindexed points beyond which the live indexer yields to writes that keep coming. */
  static final int LIVE_BACKLOG = 8192;

  /**
   * Searches this recent mean queries are being served: the indexer does not yield then, since
   * every query would scan the growing backlog exactly (measured beside 1,000 inserts/s: with the
   * indexer yielded, the tail scan took 70% of the query threads' time within 15 s).
   */
  static final long SEARCHES_QUIET_NANOS = 1_000_000_000L;

  /** Writes this recent count as "still coming". */
  static final long WRITES_QUIET_NANOS = 200_000_000L;

  /**
   * Unindexed points of a growing segment beyond which an upsert, while queries are being served,
   * waits for the live indexer before it returns: every query scans those points exactly (768-d:
   * ~0.2 ms per 1,000), so a write stream faster than the graph can take (1,000 random 768-d
   * vectors/s beside 2 query clients on 2 cores: the backlog reached 10,000 points in 24 s and
   * queries/s fell to a third) is slowed to the indexer's pace instead, as Lucene's writers build
   * their graphs as they add documents. Bulk loads (deferred builds) and writes without queries are
   * not slowed.
   */
  static final int WRITE_BACKLOG = 1024;

  /** Longest an upsert waits for the live indexer, so a large batch still returns in time. */
  static final long WRITE_WAIT_NANOS = 2_000_000_000L;

  /**
   * Runs a recheck after the quiet period; the task only queues work on the indexer's lanes, so the
   * common pool's delayer (one JDK thread) and a common-pool worker carry it.
   */
  private static final java.util.concurrent.Executor RECHECK =
      java.util.concurrent.CompletableFuture.delayedExecutor(
          WRITES_QUIET_NANOS + WRITES_QUIET_NANOS / 4, java.util.concurrent.TimeUnit.NANOSECONDS);

  private final java.util.concurrent.atomic.AtomicBoolean recheckQueued =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final Path dir;
  private final LiveIndexer lanes;
  private final SegmentSet segments;
  private final BackgroundJobs jobs;
  private volatile boolean paused;
  private volatile long lastWriteNanos = System.nanoTime() - WRITES_QUIET_NANOS;
  private volatile long lastSearchNanos = System.nanoTime() - SEARCHES_QUIET_NANOS - 1;
  // Write rate (points/s over windows of >= 250 ms; writer thread) and the live indexer's CPU
  // cost per insert (ns, moving average; indexer thread), compared by outrunByWrites.
  private long rateWindowStart = System.nanoTime();
  private long rateWindowPoints;
  private volatile double writeRate;
  private volatile double insertNanos;

  /**
   * @param lanes where inserts run; {@code null}: growing segments have no live graph and nothing
   *     is scheduled
   */
  LiveIndexScheduler(Path dir, LiveIndexer lanes, SegmentSet segments, BackgroundJobs jobs) {
    this.dir = dir;
    this.lanes = lanes;
    this.segments = segments;
    this.jobs = jobs;
  }

  /**
   * Pauses (bulk load: builds deferred) or resumes the inserts; a resume schedules the growing
   * segment's backlog.
   */
  void setPaused(boolean pause) {
    paused = pause;
    if (!pause) {
      GrowingSegment g = liveGrowing();
      if (g != null) {
        schedule(g);
      }
    }
  }

  /**
   * Queues live-graph inserts for {@code s} on the live indexer unless they are queued, there is
   * nothing to insert, or builds are deferred (bulk load). A task inserts up to {@value
   * #INDEX_BATCH} points and requeues itself, so one indexer thread serves all shards in turn; it
   * goes to the urgent lane while more than {@value #URGENT_BACKLOG} points wait, else to the
   * background lane.
   */
  void schedule(GrowingSegment s) {
    if (lanes == null || jobs.closed() || paused || !s.indexable()) {
      return;
    }
    if (outrunByWrites(s)) {
      recheckLater(s);
      return;
    }
    if (!s.claimIndexing()) {
      return;
    }
    boolean urgent = s.unindexed() > URGENT_BACKLOG;
    try {
      (urgent ? lanes.urgent() : lanes.background()).execute(() -> indexSome(s, urgent));
    } catch (RejectedExecutionException e) {
      s.indexDone(); // the node is shutting down
    }
  }

  /**
   * Called by every search of the shard: notes that queries are being served and resumes a live
   * graph that yielded to a load (a CAS when idle).
   */
  void noteSearch() {
    long now = System.nanoTime();
    if (now - lastSearchNanos > SEARCHES_QUIET_NANOS / 10) {
      lastSearchNanos = now; // a shared write at most ten times a window, not once per query
    }
    GrowingSegment g = liveGrowing();
    if (g != null) {
      schedule(g);
    }
  }

  /** The growing segment that takes writes, or {@code null}. */
  private GrowingSegment liveGrowing() {
    return segments.current().growing();
  }

  /** Points of the growing segment that wait for its live graph (0 without one). */
  int liveBacklog() {
    GrowingSegment g = liveGrowing();
    return g == null ? 0 : g.unindexed();
  }

  private void failed(GrowingSegment g, Throwable e) {
    LOG.error(
        "live graph insert failed; the segment's unindexed points are scanned exactly [dir={}, segment={}]",
        dir,
        g.id(),
        e);
    g.graph().close();
  }

  /**
   * Whether writes outrun the live indexer: its backlog passed {@link #LIVE_BACKLOG}, writes are
   * still coming (one in the last 200 ms) and they arrive faster than one thread can insert them
   * (write rate × cost per insert > 0.9 s/s), and no search came in the last second. A bulk load
   * then gets the CPU instead of a graph that would fall ever further behind (the seal finishes
   * it); unindexed points are scanned exactly meanwhile. A steady stream the indexer can follow
   * never yields, however large the backlog (after a restart, say), and neither does an indexer
   * behind writes while queries are served: each of them would scan the backlog. A recheck once the
   * writes have been quiet for {@link #WRITES_QUIET_NANOS} resumes indexing after the load.
   */
  private boolean outrunByWrites(GrowingSegment s) {
    return s.graph() != null
        && outrun(
            s.unindexed(),
            System.nanoTime() - lastWriteNanos,
            writeRate,
            insertNanos,
            System.nanoTime() - lastSearchNanos);
  }

  /** The rule of {@link #outrunByWrites}, on its inputs. */
  static boolean outrun(
      int unindexed,
      long nanosSinceWrite,
      double writesPerSecond,
      double nanosPerInsert,
      long nanosSinceSearch) {
    return unindexed > LIVE_BACKLOG
        && nanosSinceWrite < WRITES_QUIET_NANOS
        && nanosSinceSearch > SEARCHES_QUIET_NANOS
        && writesPerSecond * nanosPerInsert > 0.9e9;
  }

  /** Upserts between {@link #writeStarted} and {@link #writeEnded}. */
  private final java.util.concurrent.atomic.AtomicInteger writesInFlight =
      new java.util.concurrent.atomic.AtomicInteger();

  /**
   * When the last upsert was applied ({@link System#nanoTime}; before any, a quiet while ago), or
   * now while one is in flight: a writer waiting for seal room (ADR 0025) is a load still coming,
   * not a pause, however long the seal it waits for takes.
   */
  long lastWriteNanos() {
    return writesInFlight.get() > 0 ? System.nanoTime() : lastWriteNanos;
  }

  /** An upsert request begins (before it waits for the write lock or for seal room). */
  void writeStarted() {
    writesInFlight.incrementAndGet();
  }

  /** The upsert that called {@link #writeStarted} is applied or failed. */
  void writeEnded() {
    writesInFlight.decrementAndGet();
  }

  /** Called by the writer (its thread, lock held) for every applied upsert of {@code points}. */
  void noteWrite(int points) {
    long now = System.nanoTime();
    if (now - lastWriteNanos > WRITES_QUIET_NANOS) {
      rateWindowStart = now; // a new burst: the last window's rate is stale
      rateWindowPoints = 0;
      writeRate = 0;
    }
    lastWriteNanos = now;
    rateWindowPoints += points;
    long window = now - rateWindowStart;
    if (window >= 250_000_000L) {
      writeRate = rateWindowPoints * 1e9 / window;
      rateWindowStart = now;
      rateWindowPoints = 0;
    }
  }

  /**
   * One batch of live-graph inserts for {@code s}, then requeues itself. A batch on the background
   * lane stops once more than {@link #URGENT_BACKLOG} points wait, so the rest goes to the urgent
   * lane at once.
   */
  private void indexSome(GrowingSegment s, boolean urgent) {
    boolean yielded = false;
    try {
      if (outrunByWrites(s)) {
        yielded = true;
      } else {
        // CPU time, not wall time: an indexer slowed by busy cores is behind, not outrun.
        var threads = ManagementFactory.getThreadMXBean();
        long t0 = threads.getCurrentThreadCpuTime();
        boolean queried = System.nanoTime() - lastSearchNanos < SEARCHES_QUIET_NANOS;
        int done =
            s.indexSome(
                INDEX_BATCH,
                () ->
                    jobs.closed()
                        || paused
                        || outrunByWrites(s)
                        || (!urgent && s.unindexed() > URGENT_BACKLOG),
                queried);
        if (done > 0 && t0 >= 0) {
          double per = (threads.getCurrentThreadCpuTime() - t0) / (double) done;
          insertNanos = insertNanos == 0 ? per : 0.8 * insertNanos + 0.2 * per;
        }
      }
    } catch (RuntimeException | Error e) {
      failed(s, e);
    } finally {
      s.indexDone();
    }
    if (yielded) {
      recheckLater(s);
    } else if (!s.graph().closed()) {
      schedule(s); // more arrived meanwhile
    }
  }

  /**
   * Schedules {@code s} again once writes may have stopped ({@link #WRITES_QUIET_NANOS} and a
   * little more from now), unless such a recheck is already queued: a load the indexer yielded to
   * is indexed when it ends, not at the next request. While writes keep coming each recheck yields
   * again and queues the next one, so one timer task per shard is pending at most.
   */
  private void recheckLater(GrowingSegment s) {
    if (jobs.closed() || !recheckQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      RECHECK.execute(
          () -> {
            recheckQueued.set(false);
            GrowingSegment g = liveGrowing();
            if (g != null) {
              schedule(g);
            }
          });
    } catch (RejectedExecutionException e) {
      recheckQueued.set(false);
    }
  }

  /** Waits while {@code g}'s backlog is above {@link #WRITE_BACKLOG} (see there). */
  void awaitIndexer(GrowingSegment g) {
    if (g == null || g.unindexed() <= WRITE_BACKLOG) {
      return;
    }
    long start = System.nanoTime();
    while (g.unindexed() > WRITE_BACKLOG
        && !jobs.closed()
        && !paused
        && !g.frozen()
        && !g.graph().closed()
        && System.nanoTime() - lastSearchNanos < SEARCHES_QUIET_NANOS
        && System.nanoTime() - start < WRITE_WAIT_NANOS) {
      schedule(g); // a no-op while the indexer has it
      LockSupport.parkNanos(1_000_000L);
    }
  }
}
