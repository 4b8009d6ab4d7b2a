package io.flashvec.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import io.flashvec.testing.TestSeeds;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(TestSeeds.Reporter.class)
class DistanceTest {

  @Test
  void parsesApiNamesCaseInsensitivelyWithAliases() {
    assertThat(Distance.parse("Cosine")).isEqualTo(Distance.COSINE);
    assertThat(Distance.parse("COSINE")).isEqualTo(Distance.COSINE);
    assertThat(Distance.parse("dot")).isEqualTo(Distance.DOT);
    assertThat(Distance.parse("Euclid")).isEqualTo(Distance.EUCLID);
    assertThat(Distance.parse("l2")).isEqualTo(Distance.EUCLID);
    assertThat(Distance.parse("Euclidean")).isEqualTo(Distance.EUCLID);
    for (Distance d : Distance.values()) {
      assertThat(Distance.parse(d.apiName())).isEqualTo(d);
    }
    assertThat(Distance.parse("manhattan")).isEqualTo(Distance.MANHATTAN);
    assertThatThrownBy(() -> Distance.parse("Chebyshev"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("unknown distance [distance=Chebyshev, allowed=Cosine|Dot|Euclid|Manhattan]");
    assertThatThrownBy(() -> Distance.parse(null))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("unknown distance [distance=null, allowed=Cosine|Dot|Euclid|Manhattan]");
  }

  @Test
  void cosineNormalisesAndScoresByDotProduct() {
    Random r = TestSeeds.random("DistanceTest.cosine");
    for (int i = 0; i < 100; i++) {
      int dim = 1 + r.nextInt(40);
      float[] a = TestVectors.gaussian(r, dim);
      float[] b = TestVectors.gaussian(r, dim);
      float[] pa = Distance.COSINE.prepare(a);
      float[] pb = Distance.COSINE.prepare(b);
      double norm = 0;
      double dot = 0;
      double na = 0;
      double nb = 0;
      for (int j = 0; j < dim; j++) {
        norm += (double) pa[j] * pa[j];
        dot += (double) a[j] * b[j];
        na += (double) a[j] * a[j];
        nb += (double) b[j] * b[j];
      }
      assertThat(norm).isCloseTo(1.0, offset(1e-5));
      assertThat((double) Distance.COSINE.score(pa, pb, 0))
          .isCloseTo(dot / Math.sqrt(na * nb), offset(1e-5));
      assertThat(a).as("the input is not modified").isNotSameAs(pa);
    }
    float[] zero = new float[5];
    assertThat(Distance.COSINE.prepare(zero)).containsOnly(0f);
    float[] v = {1, 2};
    assertThat(Distance.DOT.prepare(v)).isSameAs(v);
    assertThat(Distance.EUCLID.prepare(v)).isSameAs(v);
  }

  @Test
  void euclidScoresTheDistanceAndLowerIsBetter() {
    float[] q = {0, 0, 0};
    float[] data = {9, 9, 3, 4, 0};
    assertThat(Distance.EUCLID.score(q, data, 2)).isEqualTo(5f);
    assertThat(Distance.DOT.score(new float[] {1, 2, 3}, new float[] {0, 4, 5, 6}, 1))
        .isEqualTo(32f);
    assertThat(Distance.EUCLID.higherIsBetter()).isFalse();
    assertThat(Distance.EUCLID.better(1f, 2f)).isTrue();
    assertThat(Distance.DOT.better(2f, 1f)).isTrue();
    assertThat(Distance.COSINE.better(1f, 1f)).isFalse();
  }

  @Test
  void manhattanScoresTheL1DistanceLowerIsBetterAndHasNoGraph() {
    // Qdrant's test_manhattan_dist: query (1, 1) against (0, 1), (0, 0), (-1, -1)
    float[] q = {1, 1};
    float[] data = {0, 1, 0, 0, -1, -1};
    assertThat(Distance.MANHATTAN.score(q, data, 0)).isEqualTo(1f);
    assertThat(Distance.MANHATTAN.score(q, data, 2)).isEqualTo(2f);
    assertThat(Distance.MANHATTAN.score(q, data, 4)).isEqualTo(4f);
    assertThat(Distance.MANHATTAN.score(q, java.lang.foreign.MemorySegment.ofArray(data), 4L * 4))
        .isEqualTo(4f);
    assertThat(Distance.MANHATTAN.higherIsBetter()).isFalse();
    assertThat(Distance.MANHATTAN.passes(1.5f, 1.5f)).isTrue();
    assertThat(Distance.MANHATTAN.graphable()).isFalse();
    assertThat(Distance.MANHATTAN.prepare(q)).isSameAs(q);
    // the SIMD kernel against a scalar sum, over lengths around the vector width
    Random r = TestSeeds.random("DistanceTest.manhattan");
    for (int round = 0; round < 100; round++) {
      int dim = 1 + r.nextInt(70);
      float[] a = TestVectors.gaussian(r, dim);
      float[] b = TestVectors.gaussian(r, dim);
      double want = 0;
      for (int i = 0; i < dim; i++) {
        want += Math.abs((double) a[i] - b[i]);
      }
      assertThat(Distance.MANHATTAN.score(a, b, 0))
          .as("dim=%d, %s", dim, TestSeeds.reproduceWith())
          .isCloseTo((float) want, offset(1e-4f));
      assertThat(Distance.MANHATTAN.similarity(a, 0, b, 0, dim)).isCloseTo(-want, offset(1e-4));
    }
  }

  @Test
  void thresholdsAreInclusive() {
    assertThat(Distance.COSINE.passes(0.5f, 0.5f)).isTrue();
    assertThat(Distance.COSINE.passes(0.49f, 0.5f)).isFalse();
    assertThat(Distance.DOT.passes(-1f, -2f)).isTrue();
    assertThat(Distance.EUCLID.passes(2f, 2f)).isTrue();
    assertThat(Distance.EUCLID.passes(2.01f, 2f)).isFalse();
    assertThat(Distance.EUCLID.passes(0f, 2f)).isTrue();
  }

  @Test
  void maxSimIsQdrantsSumOfBestSimilaritiesWithEuclidAsADistance() {
    // Qdrant's test_multi_with_euclidean collection: per query vector the smallest squared
    // distance (5, 0, 14), summed, reported as the square root
    float[] q = {1, 2, 3, 3, 3, 3, 4, 5, 6};
    float[] p = {3, 3, 3, 4, 2, 1};
    assertThat(Distance.EUCLID.maxSim(q, 3, p)).isCloseTo((float) Math.sqrt(19), offset(1e-6f));
    assertThat(Distance.EUCLID.maxSim(q, 3, q)).isZero();
    // Dot: per query vector the best dot product, summed (negative ones too)
    float[] a = {1, 0, 0, -1};
    float[] b = {2, 0, 0, 3, -1, -1};
    assertThat(Distance.DOT.maxSim(a, 2, b)).isEqualTo(2f + 1f);
    // against scalar brute force over seeded random multivectors, every metric
    Random r = TestSeeds.random("DistanceTest.maxSim");
    for (int round = 0; round < TestSeeds.atLeast(r, 200); round++) {
      int dim = 1 + r.nextInt(40);
      Distance d = Distance.values()[r.nextInt(Distance.values().length)];
      float[] query = d.prepareMulti(TestVectors.gaussian(r, dim * (1 + r.nextInt(5))), dim);
      float[] stored = d.prepareMulti(TestVectors.gaussian(r, dim * (1 + r.nextInt(5))), dim);
      double sum = 0;
      for (int qo = 0; qo < query.length; qo += dim) {
        double best = Double.NEGATIVE_INFINITY;
        for (int so = 0; so < stored.length; so += dim) {
          double sim = 0;
          for (int i = 0; i < dim; i++) {
            double x = query[qo + i];
            double y = stored[so + i];
            sim +=
                switch (d) {
                  case EUCLID -> -(x - y) * (x - y);
                  case MANHATTAN -> -Math.abs(x - y);
                  case COSINE, DOT -> x * y;
                };
          }
          best = Math.max(best, sim);
        }
        sum += best;
      }
      float want =
          (float)
              switch (d) {
                case EUCLID -> Math.sqrt(Math.abs(sum));
                case MANHATTAN -> Math.abs(sum);
                case COSINE, DOT -> sum;
              };
      assertThat(d.maxSim(query, dim, stored))
          .as("round=%d, dim=%d, %s, %s", round, dim, d, TestSeeds.reproduceWith())
          .isCloseTo(want, offset(1e-3f));
    }
  }

  @Test
  void prepareMultiNormalisesEachCosineVectorOnItsOwn() {
    float[] m = {3, 4, 0, 5};
    assertThat(Distance.COSINE.prepareMulti(m, 2)).containsExactly(0.6f, 0.8f, 0f, 1f);
    assertThat(Distance.DOT.prepareMulti(m, 2)).isSameAs(m);
  }
}
