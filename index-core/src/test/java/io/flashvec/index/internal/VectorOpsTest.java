package io.flashvec.index.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import io.flashvec.testing.TestSeeds;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The SIMD kernels agree with a scalar reference for every length around the lane width (tails of
 * every size), a typical embedding size, and arbitrary offsets into either array.
 */
@ExtendWith(TestSeeds.Reporter.class)
class VectorOpsTest {

  private static final int[] LENGTHS = lengths();

  private static int[] lengths() {
    int[] out = new int[72];
    for (int n = 0; n <= 70; n++) {
      out[n] = n;
    }
    out[71] = 768;
    return out;
  }

  private static double refDot(float[] a, int ao, float[] b, int bo, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
      s += (double) a[ao + i] * b[bo + i];
    }
    return s;
  }

  private static double refSquareDistance(float[] a, int ao, float[] b, int bo, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
      double d = (double) a[ao + i] - b[bo + i];
      s += d * d;
    }
    return s;
  }

  /** Sum of absolute terms: the scale the float rounding error is relative to. */
  private static double absDot(float[] a, int ao, float[] b, int bo, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
      s += Math.abs((double) a[ao + i] * b[bo + i]);
    }
    return s;
  }

  private static float[] gaussian(Random r, int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) (r.nextGaussian() * (r.nextBoolean() ? 1 : 100));
    }
    return v;
  }

  @Test
  void dotAndSquareDistanceMatchScalarReferenceForAllLengthsAndOffsets() {
    Random r = TestSeeds.random("VectorOpsTest.lengthsAndOffsets");
    int rounds = TestSeeds.atLeast(r, 3);
    for (int round = 0; round < rounds; round++) {
      for (int n : LENGTHS) {
        int ao = r.nextInt(17);
        int bo = r.nextInt(17);
        float[] a = gaussian(r, ao + n + r.nextInt(5));
        float[] b = gaussian(r, bo + n + r.nextInt(5));
        String what = "n=" + n + ", ao=" + ao + ", bo=" + bo + ", " + TestSeeds.reproduceWith();

        // float accumulation error grows with the number of terms; 1e-5 relative per term is
        // far above the ~6e-8 unit roundoff and far below any real bug (a dropped or doubled lane)
        double tol = 1e-5 * (n + 1) * absDot(a, ao, b, bo, n) + 1e-30;
        assertThat((double) VectorOps.dot(a, ao, b, bo, n))
            .as("dot " + what)
            .isCloseTo(refDot(a, ao, b, bo, n), offset(tol));

        double ref = refSquareDistance(a, ao, b, bo, n);
        assertThat((double) VectorOps.squareDistance(a, ao, b, bo, n))
            .as("squareDistance " + what)
            .isCloseTo(ref, offset(1e-5 * (n + 1) * ref + 1e-30));
      }
    }
  }

  @Test
  void exactOnSmallIntegers() {
    // Small integers are exact in float, so every lane and every tail element must count once.
    for (int n : LENGTHS) {
      float[] a = new float[n + 3];
      float[] b = new float[n + 5];
      long dot = 0;
      long sq = 0;
      for (int i = 0; i < n; i++) {
        a[3 + i] = (i % 7) - 3;
        b[5 + i] = (i % 5) - 2;
        dot += (long) ((i % 7) - 3) * ((i % 5) - 2);
        long d = ((i % 7) - 3) - ((i % 5) - 2);
        sq += d * d;
      }
      assertThat(VectorOps.dot(a, 3, b, 5, n)).as("dot n=%d", n).isEqualTo((float) dot);
      assertThat(VectorOps.squareDistance(a, 3, b, 5, n)).as("sq n=%d", n).isEqualTo((float) sq);
    }
  }

  @Test
  void identicalVectorsHaveZeroDistanceAndDotIsSymmetric() {
    Random r = TestSeeds.random("VectorOpsTest.symmetry");
    for (int n : LENGTHS) {
      float[] a = gaussian(r, n + 8);
      float[] b = gaussian(r, n);
      assertThat(VectorOps.squareDistance(a, 8, a, 8, n)).isZero();
      assertThat(VectorOps.dot(a, 8, b, 0, n)).isEqualTo(VectorOps.dot(b, 0, a, 8, n));
      assertThat(VectorOps.squareDistance(a, 8, b, 0, n))
          .isEqualTo(VectorOps.squareDistance(b, 0, a, 8, n));
    }
  }

  @Test
  void readingPastTheArrayFails() {
    float[] a = new float[16];
    float[] b = new float[16];
    assertThatThrownBy(() -> VectorOps.dot(a, 1, b, 0, 16))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> VectorOps.squareDistance(a, 0, b, 9, 8))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void int8KernelsAreExactForEveryLengthIncludingExtremeValues() {
    Random r = TestSeeds.random("vector-ops-int8");
    for (int n : LENGTHS) {
      byte[] a = new byte[n + 5];
      byte[] b = new byte[n + 3];
      for (int i = 0; i < a.length; i++) {
        a[i] = (byte) (r.nextInt(255) - 127);
      }
      for (int i = 0; i < b.length; i++) {
        // mostly the extremes: a difference of 254 must not overflow
        b[i] = (byte) (r.nextBoolean() ? (r.nextBoolean() ? 127 : -127) : r.nextInt(255) - 127);
      }
      long dot = 0;
      long l2 = 0;
      for (int i = 0; i < n; i++) {
        dot += a[5 + i] * b[3 + i];
        int d = a[5 + i] - b[3 + i];
        l2 += d * d;
      }
      assertThat(VectorOps.dot(a, 5, b, 3, n)).as("dot n=" + n).isEqualTo((int) dot);
      assertThat(VectorOps.squareDistance(a, 5, b, 3, n)).as("l2 n=" + n).isEqualTo((int) l2);
    }
  }
}
