package io.flashvec.index;

/**
 * Live-graph inserts that searches leave to their own thread, to run once their response has gone
 * out (ADR 0017): the thread that serves searches does the inserts between them, one per search,
 * instead of a background thread taking a core in the middle of one. This is cooperative scheduling
 * as in Seastar's reactors: the background work never preempts a request.
 *
 * <p>{@link Shard#search} leaves its shard here when the server lets searches assist ({@link
 * LiveIndexer#searchesAssist()}); the HTTP layer calls {@link #runPending} on the same thread after
 * the response is written. A search whose response is written elsewhere, or no one calls it for,
 * leaves nothing behind but this thread's slot, and its shard's inserts stay with the live
 * indexer's lanes.
 */
public final class IndexAssist {

  private static final ThreadLocal<Shard> PENDING = new ThreadLocal<>();
  private static final java.util.concurrent.atomic.LongAdder INSERTS =
      new java.util.concurrent.atomic.LongAdder();

  private IndexAssist() {}

  /** Notes that the current thread's search of {@code shard} may assist its indexing. */
  static void offer(Shard shard) {
    PENDING.set(shard);
  }

  /**
   * Runs the insert, if one is due, that the last search on this thread left ({@link
   * Shard#assist}); a no-op when there is none.
   */
  public static void runPending() {
    Shard s = PENDING.get();
    if (s != null) {
      PENDING.remove();
      s.assist();
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
