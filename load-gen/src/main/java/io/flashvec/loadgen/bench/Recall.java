package io.flashvec.loadgen.bench;

/** Recall@k arithmetic. Stateless. */
public final class Recall {
  private Recall() {}

  /**
   * The fraction of the true top-{@code k} ({@code truth[0..k)}) found among the first {@code k}
   * returned ids. Duplicate returned ids count once; a short answer simply finds fewer.
   *
   * @throws IllegalArgumentException if the ground truth is shallower than {@code k}
   */
  public static double atK(long[] returned, int[] truth, int k) {
    checkDepth(truth, k);
    long[] distinct = new long[Math.min(k, returned.length)];
    int d = distinct(returned, distinct);
    return (double) hits(distinct, d, truth, k) / k;
  }

  /**
   * Recall@k when the collection holds copies of base rows and returned ids have been mapped back
   * to their row (the mixed workload): an exact answer then lists a row and its copies side by
   * side, so each duplicate entry shrinks the depth compared against. With {@code d} duplicate
   * entries among the first {@code k} returned, this is the fraction of the true top-{@code (k −
   * d)} found among the distinct rows. Without duplicates it equals {@link #atK}.
   */
  public static double atKDistinct(long[] mapped, int[] truth, int k) {
    checkDepth(truth, k);
    int n = Math.min(k, mapped.length);
    long[] distinct = new long[n];
    int d = distinct(mapped, distinct);
    int depth = k - (n - d);
    return (double) hits(distinct, d, truth, depth) / depth;
  }

  private static void checkDepth(int[] truth, int k) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive [k=" + k + "]");
    }
    if (truth.length < k) {
      throw new IllegalArgumentException(
          "ground truth is shallower than k [depth=" + truth.length + ", k=" + k + "]");
    }
  }

  /**
   * Copies the distinct ids among the first {@code into.length} of {@code ids} to the front of
   * {@code into}, in their first order; returns how many.
   */
  private static int distinct(long[] ids, long[] into) {
    int d = 0;
    outer:
    for (int i = 0; i < into.length; i++) {
      for (int j = 0; j < d; j++) {
        if (into[j] == ids[i]) {
          continue outer;
        }
      }
      into[d++] = ids[i];
    }
    return d;
  }

  /** How many of the first {@code n} of {@code ids} are among {@code truth[0..depth)}. */
  private static int hits(long[] ids, int n, int[] truth, int depth) {
    int hits = 0;
    for (int i = 0; i < n; i++) {
      for (int t = 0; t < depth; t++) {
        if (truth[t] == ids[i]) {
          hits++;
          break;
        }
      }
    }
    return hits;
  }
}
