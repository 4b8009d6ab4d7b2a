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
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive [k=" + k + "]");
    }
    if (truth.length < k) {
      throw new IllegalArgumentException(
          "ground truth is shallower than k [depth=" + truth.length + ", k=" + k + "]");
    }
    int n = Math.min(k, returned.length);
    int hits = 0;
    for (int i = 0; i < n; i++) {
      long id = returned[i];
      boolean seen = false;
      for (int j = 0; j < i; j++) {
        if (returned[j] == id) {
          seen = true;
          break;
        }
      }
      if (seen) {
        continue;
      }
      for (int t = 0; t < k; t++) {
        if (truth[t] == id) {
          hits++;
          break;
        }
      }
    }
    return (double) hits / k;
  }

  /**
   * Recall@k when the collection holds copies of base rows and returned ids have been mapped back
   * to their row (the mixed workload): an exact answer then lists a row and its copies side by
   * side, so each duplicate entry shrinks the depth compared against. With {@code d} duplicate
   * entries among the first {@code k} returned, this is the fraction of the true top-{@code (k −
   * d)} found among the distinct rows. Without duplicates it equals {@link #atK}.
   */
  public static double atKDistinct(long[] mapped, int[] truth, int k) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive [k=" + k + "]");
    }
    if (truth.length < k) {
      throw new IllegalArgumentException(
          "ground truth is shallower than k [depth=" + truth.length + ", k=" + k + "]");
    }
    int n = Math.min(k, mapped.length);
    long[] distinct = new long[n];
    int d = 0;
    outer:
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < d; j++) {
        if (distinct[j] == mapped[i]) {
          continue outer;
        }
      }
      distinct[d++] = mapped[i];
    }
    int depth = k - (n - d);
    int hits = 0;
    for (int i = 0; i < d; i++) {
      for (int t = 0; t < depth; t++) {
        if (truth[t] == distinct[i]) {
          hits++;
          break;
        }
      }
    }
    return (double) hits / depth;
  }
}
