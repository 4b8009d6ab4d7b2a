package io.flashvec.index.internal;

/**
 * The candidate list of a beam search (DiskANN's "L"): parallel arrays of ids, distances (lower is
 * better, ascending) and expanded flags, kept sorted by insertion; and its result list of the best
 * {@code k} ({@link #offer}). Shared by the disk segments' beam search and the live graphs'.
 */
public final class SortedCandidates {

  private SortedCandidates() {}

  /**
   * Inserts {@code id} at {@code dist} into the first {@code size} entries (capacity {@code cap}),
   * unexpanded, shifting later entries down and dropping the last one when full. Returns its
   * position, or -1 if the list is full and {@code dist} is not better than its last entry. The
   * caller grows its size by one when it was below {@code cap} and the result is not -1.
   */
  public static int insert(
      int[] ids, float[] dists, boolean[] expanded, int size, int id, float dist, int cap) {
    if (size == cap && dist >= dists[cap - 1]) {
      return -1;
    }
    // binary search for the first position with a larger distance
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (dists[mid] <= dist) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    int tail = Math.min(size, cap - 1) - lo;
    if (tail > 0) {
      System.arraycopy(ids, lo, ids, lo + 1, tail);
      System.arraycopy(dists, lo, dists, lo + 1, tail);
      System.arraycopy(expanded, lo, expanded, lo + 1, tail);
    }
    ids[lo] = id;
    dists[lo] = dist;
    expanded[lo] = false;
    return lo;
  }

  /**
   * Offers {@code id} at {@code dist} to a result list of the {@code k} best (ascending distance)
   * whose first {@code size} entries are filled: inserted in order, the last one dropped when full.
   * Returns the new size.
   */
  public static int offer(int[] ids, float[] dists, int size, int k, int id, float dist) {
    if (size == k && dist >= dists[k - 1]) {
      return size;
    }
    int i = Math.min(size, k - 1);
    while (i > 0 && dists[i - 1] > dist) {
      ids[i] = ids[i - 1];
      dists[i] = dists[i - 1];
      i--;
    }
    ids[i] = id;
    dists[i] = dist;
    return size < k ? size + 1 : size;
  }
}
