package io.flashvec.index.shard;

/**
 * Live-graph inserts that searches leave to their own thread, to run once their response has gone
 * out (ADR 0017): the thread that serves searches does the inserts between them, one per search,
 * instead of a background thread taking a core in the middle of one. This is cooperative scheduling
 * as in Seastar's reactors: the background work never preempts a request.
 *
 * <p>{@link LiveIndexScheduler#noteSearch} leaves its shard here when the server lets searches
 * assist ({@link LiveIndexer#searchesAssist()}); the HTTP layer calls {@link #runPending} on the
 * same thread after the response is written. A search whose response is written elsewhere, or no
 * one calls it for, leaves nothing behind but this thread's slot, and its shards' inserts stay with
 * the live indexer's lanes. A search of several shards marks them all as assisting and inserts into
 * the one with the most points waiting, so each shard's turn comes as its backlog grows.
 */
public final class IndexAssist {

  /** Shards one search may leave (more are left to their lanes). */
  static final int MAX_SHARDS = 16;

  /** The shards the last search on a thread left. */
  private static final class Pending {
    final LiveIndexScheduler[] shards = new LiveIndexScheduler[MAX_SHARDS];
    int size;
  }

  private static final ThreadLocal<Pending> PENDING = ThreadLocal.withInitial(Pending::new);
  private static final java.util.concurrent.atomic.LongAdder INSERTS =
      new java.util.concurrent.atomic.LongAdder();

  private IndexAssist() {}

  /** Notes that the current thread's search of {@code shard} may assist its indexing. */
  static void offer(LiveIndexScheduler shard) {
    Pending p = PENDING.get();
    for (int i = 0; i < p.size; i++) {
      if (p.shards[i] == shard) {
        return;
      }
    }
    if (p.size < MAX_SHARDS) {
      p.shards[p.size++] = shard;
    }
  }

  /**
   * Runs what the last search on this thread left: its shards count as assisting ({@link
   * LiveIndexScheduler#noteAssisting}), and the one with the most points waiting gets one insert
   * ({@link LiveIndexScheduler#assist}); a no-op when it left nothing. One insert per search,
   * whatever the shard count, so the next request waits for one insert at most.
   */
  public static void runPending() {
    Pending p = PENDING.get();
    if (p.size == 0) {
      return;
    }
    LiveIndexScheduler best = null;
    int most = 0;
    for (int i = 0; i < p.size; i++) {
      LiveIndexScheduler s = p.shards[i];
      p.shards[i] = null;
      s.noteAssisting();
      int waiting = s.liveBacklog();
      if (waiting > most) {
        most = waiting;
        best = s;
      }
    }
    p.size = 0;
    if (best != null) {
      best.assist();
    }
  }

  /** Counts a point inserted by an assisting search. */
  static void inserted() {
    INSERTS.increment();
  }

  /** Points inserted by assisting searches in this process so far. */
  public static long inserts() {
    return INSERTS.sum();
  }
}
