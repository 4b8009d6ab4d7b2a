package io.flashvec.loadgen.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.loadgen.TestVectors;
import io.flashvec.testing.TestSeeds;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class GroundTruthTest {

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
        assertThat(gt[i]).as("%s query %d", d, i).containsExactly(naive(base, queries[i], 20, d));
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
}
