package io.flashvec.index.disk;

import java.util.ArrayList;
import java.util.List;

/**
 * A server's bytes for {@link HotNodeCache}s ({@code flashvec.search.node-cache-bytes}), split over
 * the sealed graph segments open on it in proportion to {@code log2(n)} of each one's node count: a
 * search crosses about {@code log n} hops of a graph before it reaches its neighbourhood, so a
 * larger graph deserves a larger cache, but far less than in proportion to its size.
 *
 * <p>Every {@link #join} splits the budget again and tells each member its new share ({@link
 * Member#cacheBytes}); a member rebuilds its cache there, on the thread opening a segment (a seal,
 * a compaction, a shard opening). {@link #leave} only removes the member: the others' shares grow
 * back at the next join. A segment may be closed by the search that releases its last reference,
 * and that search should not copy other segments' records. The shares always sum to at most {@link
 * #bytes()}; an old cache's memory is released when the last search holding it ends.
 *
 * <p>Thread-safe: joins and leaves are serialised.
 */
public final class NodeCacheBudget {

  /** A segment that keeps a cache within its share. */
  public interface Member {
    /** Nodes in the member's graph (the weight of its share). */
    int nodes();

    /** Keeps the member's cache within {@code bytes} (0: no cache). */
    void cacheBytes(long bytes);
  }

  /** No cache at all. */
  public static final NodeCacheBudget NONE = new NodeCacheBudget(0);

  private final long bytes;
  private final List<Member> members = new ArrayList<>();

  /**
   * @throws IllegalArgumentException naming {@code bytes} if it is negative
   */
  public NodeCacheBudget(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException(
          "node cache bytes must be at least 0 [node-cache-bytes=" + bytes + "]");
    }
    this.bytes = bytes;
  }

  /** The whole budget in bytes. */
  public long bytes() {
    return bytes;
  }

  /** Adds {@code m} and splits the budget again, {@code m} included. */
  public synchronized void join(Member m) {
    if (bytes == 0) {
      return;
    }
    members.add(m);
    split();
  }

  /**
   * Removes {@code m} (if it joined); the others keep their shares until the next {@link #join}
   * splits the budget again.
   */
  public synchronized void leave(Member m) {
    members.remove(m);
  }

  /** Members now sharing the budget. */
  public synchronized int members() {
    return members.size();
  }

  private void split() {
    double total = 0;
    for (Member m : members) {
      total += weight(m.nodes());
    }
    for (Member m : members) {
      m.cacheBytes(share(bytes, weight(m.nodes()), total));
    }
  }

  /** {@code log2(n)}, at least 1 so that a graph of one or two nodes still counts. */
  static double weight(int nodes) {
    return Math.max(1.0, Math.log(Math.max(1, nodes)) / Math.log(2));
  }

  /** The bytes of a member of {@code weight} out of {@code total}, rounded down. */
  static long share(long bytes, double weight, double total) {
    return total <= 0 ? 0 : (long) Math.floor(bytes * (weight / total));
  }
}
