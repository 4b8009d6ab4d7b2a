package io.flashvec.loadgen.dataset;

import io.flashvec.loadgen.internal.Parallel;

/**
 * Exact (brute-force) k-nearest neighbours of every query over the base set, multi-threaded.
 *
 * <p>Each task takes a block of {@value #QUERY_BLOCK} queries and scans the base set once, scoring
 * each base row against the whole block while the row sits in L1. Results are ids, best first; ties
 * are broken by the smaller id so the output is deterministic. For Cosine the base norms are
 * computed once and the query norm is left out (it does not change a query's ranking).
 */
public final class GroundTruth {
  /** The depth computed and cached by default (ann-benchmarks and SIFT ship 100). */
  public static final int DEFAULT_K = 100;

  static final int QUERY_BLOCK = 16;

  private GroundTruth() {}

  /**
   * Computes the top-{@code k} ids for each query.
   *
   * @param threads worker threads (≥ 1)
   * @return {@code queries.length} rows of {@code min(k, base.length)} ids, best first
   */
  public static int[][] compute(
      float[][] base, float[][] queries, int k, Distance distance, int threads) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive [k=" + k + "]");
    }
    int kk = Math.min(k, base.length);
    float[] invNorm = null;
    if (distance == Distance.COSINE) {
      float[] inv = new float[base.length];
      Parallel.forRange(
          "gt-norms",
          base.length,
          8192,
          threads,
          (from, to) -> {
            for (int i = from; i < to; i++) {
              float n = (float) Math.sqrt(Distance.dot(base[i], base[i]));
              inv[i] = n == 0 ? 0f : 1f / n;
            }
          });
      invNorm = inv;
    }
    final float[] norms = invNorm;
    int[][] out = new int[queries.length][];
    Parallel.forRange(
        "gt",
        queries.length,
        QUERY_BLOCK,
        threads,
        (from, to) -> {
          int nq = to - from;
          TopK[] heaps = new TopK[nq];
          for (int j = 0; j < nq; j++) {
            heaps[j] = new TopK(kk);
          }
          for (int i = 0; i < base.length; i++) {
            float[] b = base[i];
            for (int j = 0; j < nq; j++) {
              float[] q = queries[from + j];
              float s =
                  switch (distance) {
                    case DOT -> Distance.dot(q, b);
                    case COSINE -> Distance.dot(q, b) * norms[i];
                    case EUCLID -> -Distance.squaredL2(q, b);
                  };
              heaps[j].offer(s, i);
            }
          }
          for (int j = 0; j < nq; j++) {
            out[from + j] = heaps[j].sortedIds();
          }
        });
    return out;
  }

  /** A bounded min-heap of (score, id): keeps the k best; the root is the worst kept. */
  static final class TopK {
    private final float[] scores;
    private final int[] ids;
    private int size;

    TopK(int k) {
      scores = new float[k];
      ids = new int[k];
    }

    /** True if (a, ia) ranks below (b, ib): lower score, or equal score and larger id. */
    private static boolean worse(float a, int ia, float b, int ib) {
      return a < b || (a == b && ia > ib);
    }

    void offer(float score, int id) {
      int k = scores.length;
      if (size < k) {
        int i = size++;
        while (i > 0) {
          int p = (i - 1) >>> 1;
          if (!worse(score, id, scores[p], ids[p])) {
            break;
          }
          scores[i] = scores[p];
          ids[i] = ids[p];
          i = p;
        }
        scores[i] = score;
        ids[i] = id;
        return;
      }
      if (worse(scores[0], ids[0], score, id)) {
        replaceRoot(scores, ids, k, score, id);
      }
    }

    /**
     * Puts (score, id) in place of the root of the heap {@code s, id} of {@code n} entries and
     * sifts it down to where it belongs.
     */
    private static void replaceRoot(float[] s, int[] id, int n, float score, int ident) {
      int i = 0;
      while (true) {
        int l = 2 * i + 1;
        if (l >= n) {
          break;
        }
        int r = l + 1;
        int c = r < n && worse(s[r], id[r], s[l], id[l]) ? r : l;
        if (!worse(s[c], id[c], score, ident)) {
          break;
        }
        s[i] = s[c];
        id[i] = id[c];
        i = c;
      }
      s[i] = score;
      id[i] = ident;
    }

    int[] sortedIds() {
      int n = size;
      float[] s = scores.clone();
      int[] id = ids.clone();
      // pop the worst repeatedly into the back: the result ends up best first
      int[] out = new int[n];
      for (int end = n - 1; end >= 0; end--) {
        out[end] = id[0];
        replaceRoot(s, id, end, s[end], id[end]);
      }
      return out;
    }
  }
}
