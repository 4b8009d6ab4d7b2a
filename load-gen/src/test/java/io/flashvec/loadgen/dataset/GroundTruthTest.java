package io.flashvec.loadgen.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.loadgen.TestVectors;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GroundTruthTest {
  @TempDir Path dir;

  static int[] naive(float[][] base, float[] q, int k, Distance d) {
    return IntStream.range(0, base.length)
        .boxed()
        .sorted(
            Comparator.<Integer>comparingDouble(i -> -d.similarity(q, base[i]))
                .thenComparingInt(i -> i))
        .limit(k)
        .mapToInt(Integer::intValue)
        .toArray();
  }

  @Test
  void matchesNaiveSortForEveryMetric() {
    SplittableRandom r = TestSeeds.splittableRandom("groundTruthVsNaive");
    float[][] base = TestVectors.gaussian(r, 700, 12);
    float[][] queries = TestVectors.gaussian(r, 37, 12);
    for (Distance d : Distance.values()) {
      int[][] gt = GroundTruth.compute(base, queries, 20, d, 3);
      assertThat(gt).hasNumberOfRows(37);
      for (int i = 0; i < queries.length; i++) {
        // Gaussian floats: the SIMD kernels and the naive formula round differently, so two
        // nearly tied rows may swap. Rank by rank, the scores must agree to float precision.
        int[] expected = naive(base, queries[i], 20, d);
        assertThat(gt[i]).as("%s query %d", d, i).hasSize(20).doesNotHaveDuplicates();
        for (int rank = 0; rank < 20; rank++) {
          float want = d.similarity(queries[i], base[expected[rank]]);
          float got = d.similarity(queries[i], base[gt[i][rank]]);
          assertThat(got)
              .as(
                  "%s query %d rank %d (id %d, expected id %d)",
                  d, i, rank, gt[i][rank], expected[rank])
              .isCloseTo(
                  want, org.assertj.core.data.Offset.offset(1e-5f * Math.max(1f, Math.abs(want))));
        }
      }
    }
  }

  @Test
  void cosineIgnoresLengthAndEuclidDoesNot() {
    float[][] base = {{10, 0}, {0.9f, 0.1f}, {0, 1}};
    float[][] q = {{1, 0}};
    assertThat(GroundTruth.compute(base, q, 3, Distance.COSINE, 1)[0]).containsExactly(0, 1, 2);
    assertThat(GroundTruth.compute(base, q, 3, Distance.EUCLID, 1)[0]).containsExactly(1, 2, 0);
    assertThat(GroundTruth.compute(base, q, 3, Distance.DOT, 1)[0]).containsExactly(0, 1, 2);
  }

  @Test
  void tiesGoToTheSmallerIdAndKIsCappedByTheBaseSize() {
    float[][] base = {{1, 0}, {1, 0}, {1, 0}, {0, 1}};
    int[][] gt = GroundTruth.compute(base, new float[][] {{1, 0}}, 10, Distance.DOT, 1);
    assertThat(gt[0]).containsExactly(0, 1, 2, 3);
  }

  /**
   * Small integer coordinates: every dot product and squared distance is an exact float whatever
   * the summation order (SIMD or scalar), so scores tie exactly, often (duplicated rows on both
   * sides of block boundaries), and the brute force below must agree id for id.
   */
  static float[][] integerVectors(SplittableRandom r, int n, int dim) {
    float[][] out = new float[n][dim];
    for (float[] row : out) {
      for (int i = 0; i < dim; i++) {
        row[i] = r.nextInt(5) - 2;
      }
    }
    return out;
  }

  /** Every row scored as documented, sorted by score (best first) then by id. */
  static int[] bruteForce(float[][] base, float[] q, int k, Distance d, IntPredicate accept) {
    return IntStream.range(0, base.length)
        .filter(i -> accept == null || accept.test(i))
        .boxed()
        .sorted(
            Comparator.<Integer>comparingDouble(i -> -score(d, q, base[i]))
                .thenComparingInt(i -> i))
        .limit(k)
        .mapToInt(Integer::intValue)
        .toArray();
  }

  private static float score(Distance d, float[] q, float[] b) {
    return switch (d) {
      case DOT -> Distance.dot(q, b);
      case EUCLID -> -Distance.squaredL2(q, b);
      case COSINE -> {
        float norm = (float) Math.sqrt(Distance.dot(b, b));
        yield Distance.dot(q, b) * (norm == 0 ? 0f : 1f / norm);
      }
    };
  }

  @Test
  void streamingPassMatchesBruteForceWithTiesForAnyBlockSizeAndThreadCount() {
    SplittableRandom r = TestSeeds.splittableRandom("streamingGroundTruth");
    int n = 1000;
    float[][] base = integerVectors(r, n, 12);
    for (int i = 0; i < 200; i++) {
      base[r.nextInt(n)] = base[r.nextInt(n)].clone();
    }
    base[r.nextInt(n)] = new float[12];
    float[][] queries = integerVectors(r, 23, 12);
    queries[0] = base[17].clone();
    Path f = dir.resolve("base.fvecs");
    VecsFiles.writeFvecs(f, base);
    try (VectorFile file = VectorFile.open(f)) {
      for (Vectors v : new Vectors[] {Vectors.onHeap(base), file}) {
        for (Distance d : Distance.values()) {
          for (int k : new int[] {1, 10, 100, 1500}) {
            int[][] expected = new int[queries.length][];
            for (int j = 0; j < queries.length; j++) {
              expected[j] = bruteForce(base, queries[j], k, d, null);
            }
            for (int threads : new int[] {1, 3}) {
              for (int blockRows : new int[] {7, 64, 5000}) {
                int[][] gt = GroundTruth.compute(v, queries, k, d, threads, null, blockRows);
                assertThat(gt)
                    .as("%s k=%d threads=%d block=%d %s", d, k, threads, blockRows, v)
                    .isDeepEqualTo(expected);
              }
            }
          }
        }
      }
    }
  }

  @Test
  void aFilterKeepsOnlyAcceptedRowsAndReturnsBaseIds() {
    SplittableRandom r = TestSeeds.splittableRandom("filteredGroundTruth");
    float[][] base = integerVectors(r, 500, 8);
    float[][] queries = integerVectors(r, 9, 8);
    IntPredicate third = row -> row % 3 == 0;
    int[][] gt =
        GroundTruth.compute(Vectors.onHeap(base), queries, 200, Distance.EUCLID, 2, third, 10);
    for (int j = 0; j < queries.length; j++) {
      assertThat(gt[j]).hasSize(167);
      assertThat(gt[j]).containsExactly(bruteForce(base, queries[j], 200, Distance.EUCLID, third));
    }
  }

  @Test
  void aQueryOfAnotherDimensionIsRefused() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                GroundTruth.compute(
                    new float[][] {{1, 2}}, new float[][] {{1, 2}, {1, 2, 3}}, 1, Distance.DOT, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("query dimension differs from the base [query=1, dim=3, base=2]");
  }
}
