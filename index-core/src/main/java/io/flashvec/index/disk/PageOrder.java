package io.flashvec.index.disk;

import java.util.BitSet;

/**
 * The page-local node order of a graph file: which node each ordinal of a sealed segment holds, so
 * that a node and the neighbours a search is likely to expand next share a 4 KiB page. A beam
 * search expands a node, then mostly nodes near it; when those sit on the page already read, the
 * next expansions cost no device read.
 *
 * <p>Greedy page filling, as Starling's block shuffling, with a page-local score, as Gorder's
 * window: a breadth-first walk from the entry gives each page its first node (its <em>seed</em>),
 * then the page takes, one at a time, the unplaced node with the highest score among the
 * out-neighbours of the nodes already on it, a neighbour scoring {@code degree - rank} for every
 * page member whose list holds it at {@code rank} (nearest first). A node that several members list
 * near the top is near all of them: the page becomes a tight group rather than the seed's
 * neighbours, which Vamana's pruning spreads in different directions. When the members list no
 * unplaced node, the next seed of the walk continues the page. Nodes the walk cannot reach are
 * seeds in ascending ordinal order.
 *
 * <p>Each node's neighbour list is read once, when the node is placed, and asked for ahead ({@link
 * Adjacency#willNeed}) when it is one of the next seeds or near the top of a placed node's list, so
 * that a graph read from the device keeps reads in flight. It runs in {@code O(n + edges)} time
 * (plus {@code recordsPerPage² · degree} per page to pick the best candidate) and holds three
 * {@code int[n]} (the order, the walk's queue, the scores) and two bit sets, whatever the degree:
 * nothing per edge.
 *
 * <p>An order is a permutation {@code order[newOrdinal] = oldOrdinal}; the entry is always new
 * ordinal 0. Deterministic: a function of the adjacency and the entry.
 */
public final class PageOrder {

  private PageOrder() {}

  /** Out-neighbours of a node, in the graph's own order (nearest first). */
  @FunctionalInterface
  public interface Adjacency {
    /** Writes node {@code ord}'s neighbours into {@code out}; returns how many. */
    int neighbours(int ord, int[] out);

    /**
     * Advice: node {@code ord}'s list is read soon. A graph read from a file larger than the page
     * cache starts reading it without waiting ({@code madvise(WILLNEED)}), so that the walk keeps
     * reads in flight instead of faulting one list at a time. Default: nothing.
     */
    default void willNeed(int ord) {}
  }

  /** Queued seeds whose lists are asked for ahead of the walk ({@link Adjacency#willNeed}). */
  static final int SEEDS_AHEAD = 8;

  /**
   * A placed node's nearest unplaced neighbours whose lists are asked for ahead: the page's next
   * pick is most often among them, as they score highest.
   */
  static final int NEAREST_AHEAD = 4;

  /**
   * The page-local order of a graph of {@code count} nodes packed {@code recordsPerPage} to a page,
   * or {@code null} when there is nothing to gain (one record per page, or at most one node).
   * Neighbour ids outside {@code 0..count-1} are ignored.
   *
   * @param maxDegree the longest neighbour list {@code adj} returns
   */
  public static int[] compute(
      int count, int entry, int recordsPerPage, int maxDegree, Adjacency adj) {
    if (recordsPerPage <= 1 || count <= 1) {
      return null;
    }
    if (entry < 0 || entry >= count) {
      throw new IllegalArgumentException("entry outside the graph [entry=" + entry + "]");
    }
    int[] order = new int[count];
    int[] queue = new int[count]; // the walk's FIFO: every node enters it once, when discovered
    int[] score = new int[count]; // candidates of the page being filled; 0 elsewhere
    BitSet discovered = new BitSet(count);
    BitSet placed = new BitSet(count);
    int[] nbrs = new int[Math.max(1, maxDegree)];
    int[] cand = new int[recordsPerPage * nbrs.length];
    int qHead = 0;
    int qTail = 0;
    int advised = 0; // queue positions below this were asked for ahead
    int unreached = 0; // scan position for nodes the walk does not reach
    int pos = 0;
    queue[qTail++] = entry;
    discovered.set(entry);
    while (pos < count) {
      int u = -1;
      advised = Math.max(advised, qHead);
      for (int end = Math.min(qTail, qHead + SEEDS_AHEAD); advised < end; advised++) {
        if (!placed.get(queue[advised])) {
          adj.willNeed(queue[advised]);
        }
      }
      while (qHead < qTail) {
        int q = queue[qHead++];
        if (!placed.get(q)) {
          u = q;
          break;
        }
      }
      if (u < 0) {
        unreached = placed.nextClearBit(unreached);
        u = unreached;
        discovered.set(u);
      }
      int nc = 0;
      while (true) {
        order[pos++] = u;
        placed.set(u);
        int d = Math.min(nbrs.length, adj.neighbours(u, nbrs));
        int ahead = 0;
        for (int i = 0; i < d; i++) {
          int v = nbrs[i];
          if (v < 0 || v >= count || placed.get(v)) {
            continue;
          }
          if (ahead < NEAREST_AHEAD && score[v] == 0) {
            adj.willNeed(v); // a new candidate near the top of u's list
            ahead++;
          }
          if (score[v] == 0) {
            cand[nc++] = v;
          }
          score[v] += d - i;
          if (!discovered.get(v)) {
            discovered.set(v);
            queue[qTail++] = v;
          }
        }
        if (pos % recordsPerPage == 0 || pos == count) {
          break;
        }
        int best = -1;
        int bestScore = 0;
        for (int c = 0; c < nc; c++) {
          int v = cand[c];
          if (score[v] > bestScore && !placed.get(v)) {
            best = v;
            bestScore = score[v];
          }
        }
        if (best < 0) {
          break; // the page goes on with the next seed
        }
        u = best;
      }
      for (int c = 0; c < nc; c++) {
        score[cand[c]] = 0;
      }
    }
    return order;
  }

  /** The inverse of a permutation: {@code inverse[order[i]] == i}. */
  public static int[] inverse(int[] order) {
    int[] inv = new int[order.length];
    for (int i = 0; i < order.length; i++) {
      inv[order[i]] = i;
    }
    return inv;
  }

  /**
   * Checks that {@code order} is a permutation of {@code 0..count-1}.
   *
   * @throws IllegalArgumentException naming the first offending entry otherwise
   */
  public static void checkPermutation(int[] order, int count) {
    if (order.length != count) {
      throw new IllegalArgumentException(
          "order length mismatch [length=" + order.length + ", count=" + count + "]");
    }
    BitSet seen = new BitSet(count);
    for (int i = 0; i < count; i++) {
      int o = order[i];
      if (o < 0 || o >= count || seen.get(o)) {
        throw new IllegalArgumentException(
            "not a permutation [index=" + i + ", value=" + o + ", count=" + count + "]");
      }
      seen.set(o);
    }
  }

  /** Moves the elements of one array (or several arrays indexed alike) for {@link #gather}. */
  public interface Slots {
    /** Copies slot {@code from} into a one-element buffer. */
    void save(int from);

    /** Copies slot {@code from} to slot {@code to}. */
    void move(int from, int to);

    /** Copies the buffer into slot {@code to}. */
    void restore(int to);
  }

  /**
   * Rearranges {@code slots} in place so that slot {@code i} ends up holding what slot {@code
   * order[i]} held: each cycle of the permutation is walked once, with one element buffered, so it
   * takes no second copy of the data (only a bit per slot).
   */
  public static void gather(int[] order, Slots slots) {
    int n = order.length;
    BitSet done = new BitSet(n);
    for (int start = done.nextClearBit(0); start < n; start = done.nextClearBit(start + 1)) {
      done.set(start);
      if (order[start] == start) {
        continue;
      }
      slots.save(start);
      int to = start;
      while (true) {
        int from = order[to];
        if (from == start) {
          slots.restore(to);
          break;
        }
        slots.move(from, to);
        done.set(from);
        to = from;
      }
    }
  }

  /** {@link #gather} for an array of references. */
  public static <T> void gather(int[] order, T[] a) {
    gather(
        order,
        new Slots() {
          T saved;

          @Override
          public void save(int from) {
            saved = a[from];
          }

          @Override
          public void move(int from, int to) {
            a[to] = a[from];
          }

          @Override
          public void restore(int to) {
            a[to] = saved;
          }
        });
  }

  /** {@link #gather} for {@code a} holding {@code width} bytes per slot. */
  public static void gather(int[] order, byte[] a, int width) {
    byte[] saved = new byte[width];
    gather(
        order,
        new Slots() {
          @Override
          public void save(int from) {
            System.arraycopy(a, from * width, saved, 0, width);
          }

          @Override
          public void move(int from, int to) {
            System.arraycopy(a, from * width, a, to * width, width);
          }

          @Override
          public void restore(int to) {
            System.arraycopy(saved, 0, a, to * width, width);
          }
        });
  }
}
