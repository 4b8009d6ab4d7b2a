package io.flashvec.index.diskann;

import io.flashvec.index.internal.VectorOps;
import java.util.Random;
import java.util.concurrent.ForkJoinPool;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * Seeded k-means (k-means++ seeding, then Lloyd iterations) over flat float arrays, in squared L2.
 * The same seed and input give the same centroids whatever the pool: points are assigned in
 * parallel, but sums are accumulated in point order on one thread. Used to cut a large build into
 * partitions and to train the codebooks of a partitioned build's PQ codes (jvector's own k-means
 * draws from {@code ThreadLocalRandom}, so its results cannot be reproduced).
 */
final class KMeans {

  /** Points assigned per parallel task. */
  private static final int BLOCK = 1024;

  private KMeans() {}

  /**
   * Clusters {@code count} points of {@code dim} floats ({@code data[i*dim ..]}) into {@code k}
   * centroids (flat, {@code k*dim}); {@code k} must be at most {@code count}. Checks {@code
   * cancelled} once per iteration.
   */
  static float[] cluster(
      float[] data,
      int count,
      int dim,
      int k,
      int iterations,
      long seed,
      ForkJoinPool pool,
      BooleanSupplier cancelled) {
    if (k < 1 || k > count) {
      throw new IllegalArgumentException(
          "k-means needs 1 <= k <= points [k=" + k + ", points=" + count + "]");
    }
    float[] centroids = seedPlusPlus(data, count, dim, k, new Random(seed), pool, cancelled);
    int[] assignment = new int[count];
    for (int it = 0; it < iterations; it++) {
      if (cancelled.getAsBoolean()) {
        return centroids;
      }
      float[] c = centroids;
      forEachPoint(pool, count, i -> assignment[i] = nearest(c, k, dim, data, i * dim));
      double[] sums = new double[k * dim];
      int[] sizes = new int[k];
      for (int i = 0; i < count; i++) {
        int a = assignment[i];
        sizes[a]++;
        int o = i * dim;
        int so = a * dim;
        for (int d = 0; d < dim; d++) {
          sums[so + d] += data[o + d];
        }
      }
      float[] next = centroids.clone();
      for (int a = 0; a < k; a++) {
        if (sizes[a] > 0) {
          for (int d = 0; d < dim; d++) {
            next[a * dim + d] = (float) (sums[a * dim + d] / sizes[a]);
          }
        }
        // an empty cluster keeps its centroid
      }
      centroids = next;
    }
    return centroids;
  }

  /** The index of the centroid nearest to {@code v[off, off+dim)}. */
  static int nearest(float[] centroids, int k, int dim, float[] v, int off) {
    int best = 0;
    float bestD = Float.MAX_VALUE;
    for (int c = 0; c < k; c++) {
      float d = VectorOps.squareDistance(centroids, c * dim, v, off, dim);
      if (d < bestD) {
        bestD = d;
        best = c;
      }
    }
    return best;
  }

  /**
   * k-means++: the first centroid a random point, each next one a point drawn with probability
   * proportional to its squared distance to the nearest centroid so far (kept up to date in one
   * pass per centroid).
   */
  private static float[] seedPlusPlus(
      float[] data,
      int count,
      int dim,
      int k,
      Random rnd,
      ForkJoinPool pool,
      BooleanSupplier cancelled) {
    float[] centroids = new float[k * dim];
    float[] minD = new float[count];
    java.util.Arrays.fill(minD, Float.MAX_VALUE);
    int first = rnd.nextInt(count);
    System.arraycopy(data, first * dim, centroids, 0, dim);
    for (int c = 1; c < k; c++) {
      if (cancelled.getAsBoolean()) {
        return centroids;
      }
      int prev = c - 1;
      forEachPoint(
          pool,
          count,
          i -> {
            float d = VectorOps.squareDistance(centroids, prev * dim, data, i * dim, dim);
            if (d < minD[i]) {
              minD[i] = d;
            }
          });
      double total = 0;
      for (int i = 0; i < count; i++) {
        total += minD[i];
      }
      int pick;
      if (total <= 0) {
        pick = rnd.nextInt(count); // every point sits on a centroid: any point will do
      } else {
        double r = rnd.nextDouble() * total;
        pick = count - 1;
        for (int i = 0; i < count; i++) {
          r -= minD[i];
          if (r <= 0) {
            pick = i;
            break;
          }
        }
      }
      System.arraycopy(data, pick * dim, centroids, c * dim, dim);
    }
    return centroids;
  }

  /** Runs {@code task} on {@code pool} ({@code null}: the common pool) and waits for it. */
  /** Runs {@code perPoint} for points {@code 0..count-1} in parallel blocks on {@code pool}. */
  private static void forEachPoint(ForkJoinPool pool, int count, IntConsumer perPoint) {
    run(
        pool,
        () ->
            IntStream.range(0, (count + BLOCK - 1) / BLOCK)
                .parallel()
                .forEach(
                    b -> {
                      for (int i = b * BLOCK; i < Math.min(count, b * BLOCK + BLOCK); i++) {
                        perPoint.accept(i);
                      }
                    }));
  }

  static void run(ForkJoinPool pool, Runnable task) {
    (pool != null ? pool : ForkJoinPool.commonPool()).submit(task).join();
  }
}
