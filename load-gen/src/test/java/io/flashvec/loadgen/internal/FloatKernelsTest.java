package io.flashvec.loadgen.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.loadgen.TestVectors;
import io.flashvec.loadgen.dataset.Distance;
import io.flashvec.testing.TestSeeds;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class FloatKernelsTest {
  @Test
  void theTestsRunTheSimdKernels() {
    // the build starts test JVMs with --add-modules jdk.incubator.vector
    assertThat(FloatKernels.get().name()).startsWith("simd-");
  }

  @Test
  void simdAndScalarAgreeOnEveryLengthAndOffset() {
    SplittableRandom r = TestSeeds.splittableRandom("floatKernels");
    FloatKernels simd = FloatKernels.get();
    FloatKernels scalar = FloatKernels.scalar();
    for (int len = 0; len <= 70; len++) {
      float[][] v = TestVectors.gaussian(r, 2, len + 5);
      int ao = r.nextInt(6);
      int bo = r.nextInt(6);
      float[] a = Arrays.copyOfRange(v[0], ao, ao + len);
      float[] b = Arrays.copyOfRange(v[1], bo, bo + len);
      float tol = 1e-4f * (len + 1);
      assertThat(simd.dot(v[0], ao, v[1], bo, len))
          .as("len=%d", len)
          .isCloseTo(Distance.dot(a, b), within(tol));
      assertThat(scalar.dot(v[0], ao, v[1], bo, len)).isEqualTo(Distance.dot(a, b));
      assertThat(simd.squaredL2(v[0], ao, v[1], bo, len))
          .as("len=%d", len)
          .isCloseTo(Distance.squaredL2(a, b), within(tol));
      assertThat(scalar.squaredL2(v[0], ao, v[1], bo, len)).isEqualTo(Distance.squaredL2(a, b));
    }
  }
}
