package io.flashvec.index.disk;

import java.util.BitSet;

/**
 * The page-local node order of a graph file: which node each ordinal of a sealed segment holds, so
 * that a node and the neighbours a search is likely to expand next share a 4 KiB page. A beam
 * search expands a node, then mostly its nearest neighbours; when those sit on the page already
 * read, the next expansions cost no device read.
 *
 * <p>Greedy page filling in breadth-first order from the entry, as Starling's block shuffling: each
 * page starts with the next unplaced node of a breadth-first walk from the entry (its
 * <em>seed</em>), and the seed's unplaced out-neighbours, in neighbour-list order (nearest first),
 * fill the page's other slots; when they run out, the next seed of the walk continues the page.
 * Nodes the walk cannot reach are seeds in ascending ordinal order. It runs in {@code O(n + edges)}
 * time and holds three {@code int[n]}-sized structures (the order, the walk's queue and two bit
 * sets), whatever the degree: nothing per edge.
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
  }

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
    BitSet discovered = new BitSet(count);
    BitSet placed = new BitSet(count);
    int[] nbrs = new int[Math.max(1, maxDegree)];
    int qHead = 0;
    int qTail = 0;
    int unreached = 0; // scan position for nodes the walk does not reach
    int pos = 0;
    queue[qTail++] = entry;
    discovered.set(entry);
    while (pos < count) {
      int seed = -1;
      while (qHead < qTail) {
        int u = queue[qHead++];
        if (!placed.get(u)) {
          seed = u;
          break;
        }
      }
      if (seed < 0) {
        unreached = placed.nextClearBit(unreached);
        seed = unreached;
        discovered.set(seed);
      }
      order[pos++] = seed;
      placed.set(seed);
      int d = Math.min(nbrs.length, adj.neighbours(seed, nbrs));
      // fill the rest of the page with the seed's nearest unplaced neighbours
      for (int i = 0; i < d && pos % recordsPerPage != 0; i++) {
        int v = nbrs[i];
        if (v >= 0 && v < count && !placed.get(v)) {
          order[pos++] = v;
          placed.set(v);
          if (!discovered.get(v)) {
            discovered.set(v);
            queue[qTail++] = v;
          }
        }
      }
      // the walk goes on from the seed's neighbours
      for (int i = 0; i < d; i++) {
        int v = nbrs[i];
        if (v >= 0 && v < count && !discovered.get(v)) {
          discovered.set(v);
          queue[qTail++] = v;
        }
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
