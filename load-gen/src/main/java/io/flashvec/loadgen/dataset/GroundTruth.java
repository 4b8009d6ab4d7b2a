package io.flashvec.loadgen.dataset;

import io.flashvec.loadgen.internal.FloatKernels;
import io.flashvec.loadgen.internal.Parallel;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

/**
 * Exact (brute-force) k-nearest neighbours of a query sample over a base set of any size, in one
 * streaming pass over the base.
 *
 * <p>The base is cut into blocks of rows (about {@value #BLOCK_BYTES} bytes each, so a block stays
 * in the L2 cache). Each worker thread claims blocks in turn, copies a block out of the {@link
 * Vectors} (for a {@link VectorFile}, out of the page cache), and scores it against every query,
 * {@value #QUERY_BLOCK} queries at a time, with the {@link FloatKernels SIMD kernels}, into its own
 * bounded top-k heap per query. At the end the workers' heaps are merged. Memory is one block per
 * worker plus {@code threads × queries × k} heap entries, whatever the size of the base.
 *
 * <p>Results are ids (row numbers), best first. Ranking is by score, then by the smaller id: that
 * order is total, so the result does not depend on the thread count, the block size or the order in
 * which workers finish. For Cosine the score is {@code dot(q, b) / |b|} (the query norm does not
 * change a query's ranking).
 */
public final class GroundTruth {
  /** The depth computed and cached by default (ann-benchmarks and SIFT ship 100). */
  public static final int DEFAULT_K = 100;

  static final int QUERY_BLOCK = 16;

  /** Target bytes of base rows per block. */
  static final int BLOCK_BYTES = 1 << 20;

  private GroundTruth() {}

  /** As {@link #compute(Vectors, float[][], int, Distance, int, IntPredicate)} over all rows. */
  public static int[][] compute(
      float[][] base, float[][] queries, int k, Distance distance, int threads) {
    return compute(Vectors.onHeap(base), queries, k, distance, threads, null);
  }

  /** As {@link #compute(Vectors, float[][], int, Distance, int, IntPredicate)} over all rows. */
  public static int[][] compute(
      Vectors base, float[][] queries, int k, Distance distance, int threads) {
    return compute(base, queries, k, distance, threads, null);
  }

  /**
   * Computes the top-{@code k} base rows for each query.
   *
   * @param accept which base rows may be returned ({@code null}: all)
   * @param threads worker threads (≥ 1)
   * @return {@code queries.length} rows of at most {@code k} ids (fewer when fewer rows are
   *     accepted), best first
   */
  public static int[][] compute(
      Vectors base, float[][] queries, int k, Distance distance, int threads, IntPredicate accept) {
    return compute(base, queries, k, distance, threads, accept, blockRows(base.dim()));
  }

  static int blockRows(int dim) {
    return Math.max(64, BLOCK_BYTES / (4 * Math.max(1, dim)));
  }

  static int[][] compute(
      Vectors base,
      float[][] queries,
      int k,
      Distance distance,
      int threads,
      IntPredicate accept,
      int blockRows) {
    if (k <= 0) {
      throw new IllegalArgumentException("k must be positive [k=" + k + "]");
    }
    int n = base.size();
    int dim = base.dim();
    int nq = queries.length;
    for (int j = 0; j < nq; j++) {
      if (n > 0 && queries[j].length != dim) {
        throw new IllegalArgumentException(
            "query dimension differs from the base [query="
                + j
                + ", dim="
                + queries[j].length
                + ", base="
                + dim
                + "]");
      }
    }
    int kk = Math.min(k, Math.max(1, n));
    float[] q = new float[nq * dim];
    for (int j = 0; j < nq; j++) {
      System.arraycopy(queries[j], 0, q, j * dim, dim);
    }
    int blocks = (n + blockRows - 1) / blockRows;
    int workers = Math.max(1, Math.min(threads, blocks));
    TopK[][] heaps = new TopK[workers][];
    AtomicInteger nextBlock = new AtomicInteger();
    FloatKernels kernels = FloatKernels.get();
    Parallel.forRange(
        "gt",
        workers,
        1,
        workers,
        (from, to) -> {
          for (int w = from; w < to; w++) {
            heaps[w] =
                scan(base, q, nq, kk, distance, accept, blockRows, blocks, nextBlock, kernels);
          }
        });
    int[][] out = new int[nq][];
    for (int j = 0; j < nq; j++) {
      TopK merged = heaps[0][j];
      for (int w = 1; w < workers; w++) {
        heaps[w][j].drainInto(merged);
      }
      out[j] = merged.sortedIds();
    }
    return out;
  }

  /** One worker: claims blocks until none is left; returns its heaps, one per query. */
  private static TopK[] scan(
      Vectors base,
      float[] q,
      int nq,
      int k,
      Distance distance,
      IntPredicate accept,
      int blockRows,
      int blocks,
      AtomicInteger nextBlock,
      FloatKernels kernels) {
    int n = base.size();
    int dim = base.dim();
    TopK[] heaps = new TopK[nq];
    for (int j = 0; j < nq; j++) {
      heaps[j] = new TopK(k);
    }
    float[] rows = new float[blockRows * dim];
    float[] invNorm = new float[blockRows];
    boolean[] skip = new boolean[blockRows];
    for (int b; (b = nextBlock.getAndIncrement()) < blocks; ) {
      int first = b * blockRows;
      int count = Math.min(blockRows, n - first);
      base.get(first, first + count, rows);
      for (int r = 0; r < count; r++) {
        skip[r] = accept != null && !accept.test(first + r);
        if (distance == Distance.COSINE) {
          float norm = (float) Math.sqrt(kernels.dot(rows, r * dim, rows, r * dim, dim));
          invNorm[r] = norm == 0 ? 0f : 1f / norm;
        }
      }
      for (int j0 = 0; j0 < nq; j0 += QUERY_BLOCK) {
        int j1 = Math.min(nq, j0 + QUERY_BLOCK);
        for (int r = 0; r < count; r++) {
          if (skip[r]) {
            continue;
          }
          int ro = r * dim;
          int id = first + r;
          for (int j = j0; j < j1; j++) {
            float s =
                switch (distance) {
                  case DOT -> kernels.dot(q, j * dim, rows, ro, dim);
                  case COSINE -> kernels.dot(q, j * dim, rows, ro, dim) * invNorm[r];
                  case EUCLID -> -kernels.squaredL2(q, j * dim, rows, ro, dim);
                };
            heaps[j].offer(s, id);
          }
        }
      }
    }
    return heaps;
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

    /** Offers every entry of this heap to {@code other}. */
    void drainInto(TopK other) {
      for (int i = 0; i < size; i++) {
        other.offer(scores[i], ids[i]);
      }
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
