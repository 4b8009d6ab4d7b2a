package io.flashvec.index.disk;

import java.util.Arrays;

/**
 * The nodes one graph search has visited, for graphs too large for a bit per node ({@link
 * BeamSearcher#bitsFor}): an open-addressing hash set of ordinals (linear probing) whose slots
 * carry the generation that wrote them, so {@link #clear()} is one increment, not a pass over the
 * table. Its size follows what a search visits (about {@code searchList × maxDegree}), not the
 * graph: a pooled searcher of a graph of 2^28 nodes holds about 128 KiB where bits would take 32
 * MiB.
 *
 * <p>The table doubles when half full, so a search that visits more than any before it allocates
 * once; the searcher keeps the larger table. Not thread-safe: one per searcher.
 */
final class VisitedSet {

  private int[] keys;
  private int[] gens;
  private int mask;
  private int shift;
  private int gen = 1;
  private int size;

  /** A set that holds {@code expected} ordinals before it first grows. */
  VisitedSet(int expected) {
    int cap = capacityFor(expected);
    keys = new int[cap];
    gens = new int[cap];
    mask = cap - 1;
    shift = 32 - Integer.numberOfTrailingZeros(cap);
  }

  private static int capacityFor(int expected) {
    return Integer.highestOneBit(Math.max(16, expected) * 2 - 1) << 1;
  }

  /** Heap bytes of a new set for {@code expected} ordinals ({@link #memoryBytes}). */
  static long bytesFor(int expected) {
    return 8L * capacityFor(expected);
  }

  /** Empties the set (one increment; the table is wiped once every 2^32 clears). */
  void clear() {
    if (++gen == 0) {
      Arrays.fill(gens, 0);
      gen = 1;
    }
    size = 0;
  }

  /** Adds {@code ord}; returns whether it was not there yet. */
  boolean add(int ord) {
    int i = slot(ord);
    while (gens[i] == gen) {
      if (keys[i] == ord) {
        return false;
      }
      i = (i + 1) & mask;
    }
    keys[i] = ord;
    gens[i] = gen;
    if (++size > (mask + 1) >>> 1) {
      grow();
    }
    return true;
  }

  /** Whether {@code ord} was added since the last {@link #clear()}. */
  boolean contains(int ord) {
    int i = slot(ord);
    while (gens[i] == gen) {
      if (keys[i] == ord) {
        return true;
      }
      i = (i + 1) & mask;
    }
    return false;
  }

  /** Slots in the table. */
  int capacity() {
    return mask + 1;
  }

  /** Heap bytes of the table. */
  long memoryBytes() {
    return 8L * (mask + 1);
  }

  private int slot(int ord) {
    // Fibonacci hashing spreads the neighbour lists' clustered ordinals over the table
    return (ord * 0x9E3779B9) >>> shift;
  }

  private void grow() {
    int[] oldKeys = keys;
    int[] oldGens = gens;
    int g = gen;
    int cap = (mask + 1) << 1;
    keys = new int[cap];
    gens = new int[cap];
    mask = cap - 1;
    shift = 32 - Integer.numberOfTrailingZeros(cap);
    gen = 1;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldGens[i] == g) {
        int j = slot(oldKeys[i]);
        while (gens[j] == gen) {
          j = (j + 1) & mask;
        }
        keys[j] = oldKeys[i];
        gens[j] = gen;
      }
    }
  }
}
