package io.flashvec.index.segment;

import io.flashvec.index.Distance;

/**
 * A bounded heap keeping the best {@code k} (score, slot, ordinal) triples, worst at the root.
 * {@code slot} tells the caller which segment an ordinal belongs to. Not thread-safe; reuse with
 * {@link #reset}.
 */
public final class TopK {

  private final boolean higherIsBetter;
  private int k;
  private float[] scores;
  private int[] slots;
  private int[] ords;
  private int size;

  public TopK(Distance distance, int k) {
    this.higherIsBetter = distance.higherIsBetter();
    reset(k);
  }

  /** Empties the heap and sets its capacity. */
  public void reset(int k) {
    this.k = k;
    if (scores == null || scores.length < k) {
      scores = new float[Math.max(k, 1)];
      slots = new int[Math.max(k, 1)];
      ords = new int[Math.max(k, 1)];
    }
    size = 0;
  }

  private boolean worse(float a, float b) {
    return higherIsBetter ? a < b : a > b;
  }

  /** Whether a score would enter the heap now. */
  public boolean accepts(float score) {
    return size < k || (k > 0 && worse(scores[0], score));
  }

  public void offer(float score, int slot, int ord) {
    if (k == 0) {
      return;
    }
    if (size < k) {
      int i = size++;
      scores[i] = score;
      slots[i] = slot;
      ords[i] = ord;
      siftUp(i);
    } else if (worse(scores[0], score)) {
      scores[0] = score;
      slots[0] = slot;
      ords[0] = ord;
      siftDown(0);
    }
  }

  public int size() {
    return size;
  }

  /** Whether the heap holds {@code k} entries, so a score must beat {@link #worst} to enter. */
  public boolean full() {
    return k > 0 && size == k;
  }

  /** The worst score kept; only meaningful when {@link #full}. */
  public float worst() {
    return scores[0];
  }

  /** The {@code k} this heap keeps. */
  public int capacity() {
    return k;
  }

  /**
   * Empties the heap into the arrays best-first; returns the count. Arrays must hold {@link
   * #size()} entries.
   */
  public int drainBestFirst(float[] outScores, int[] outSlots, int[] outOrds) {
    int n = size;
    for (int i = n - 1; i >= 0; i--) {
      outScores[i] = scores[0];
      outSlots[i] = slots[0];
      outOrds[i] = ords[0];
      size--;
      if (size > 0) {
        scores[0] = scores[size];
        slots[0] = slots[size];
        ords[0] = ords[size];
        siftDown(0);
      }
    }
    return n;
  }

  private void siftUp(int i) {
    while (i > 0) {
      int p = (i - 1) >>> 1;
      if (!worse(scores[i], scores[p])) {
        break;
      }
      swap(i, p);
      i = p;
    }
  }

  private void siftDown(int i) {
    while (true) {
      int l = 2 * i + 1;
      if (l >= size) {
        return;
      }
      int r = l + 1;
      int w = (r < size && worse(scores[r], scores[l])) ? r : l;
      if (!worse(scores[w], scores[i])) {
        return;
      }
      swap(i, w);
      i = w;
    }
  }

  private void swap(int a, int b) {
    float s = scores[a];
    scores[a] = scores[b];
    scores[b] = s;
    int t = slots[a];
    slots[a] = slots[b];
    slots[b] = t;
    t = ords[a];
    ords[a] = ords[b];
    ords[b] = t;
  }
}
