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
    assertThatThrownBy(() -> Distance.parse("Manhattan"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("unknown distance [distance=Manhattan, allowed=Cosine|Dot|Euclid]");
    assertThatThrownBy(() -> Distance.parse(null))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("unknown distance [distance=null, allowed=Cosine|Dot|Euclid]");
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
  void thresholdsAreInclusive() {
    assertThat(Distance.COSINE.passes(0.5f, 0.5f)).isTrue();
    assertThat(Distance.COSINE.passes(0.49f, 0.5f)).isFalse();
    assertThat(Distance.DOT.passes(-1f, -2f)).isTrue();
    assertThat(Distance.EUCLID.passes(2f, 2f)).isTrue();
    assertThat(Distance.EUCLID.passes(2.01f, 2f)).isFalse();
    assertThat(Distance.EUCLID.passes(0f, 2f)).isTrue();
  }
}
