package io.flashvec.loadgen.internal;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link FloatKernels} on the incubating Vector API at the platform's preferred width, with two
 * accumulators so that consecutive fused multiply-adds do not wait on each other. Loaded only when
 * the {@code jdk.incubator.vector} module is present (see {@link FloatKernels#get()}).
 */
final class VectorApiKernels implements FloatKernels {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;

  @Override
  public float dot(float[] a, int ao, float[] b, int bo, int n) {
    int step = SPECIES.length();
    FloatVector acc0 = FloatVector.zero(SPECIES);
    FloatVector acc1 = FloatVector.zero(SPECIES);
    int i = 0;
    for (int bound = n - 2 * step; i <= bound; i += 2 * step) {
      acc0 =
          FloatVector.fromArray(SPECIES, a, ao + i)
              .fma(FloatVector.fromArray(SPECIES, b, bo + i), acc0);
      acc1 =
          FloatVector.fromArray(SPECIES, a, ao + i + step)
              .fma(FloatVector.fromArray(SPECIES, b, bo + i + step), acc1);
    }
    for (int bound = n - step; i <= bound; i += step) {
      acc0 =
          FloatVector.fromArray(SPECIES, a, ao + i)
              .fma(FloatVector.fromArray(SPECIES, b, bo + i), acc0);
    }
    float sum = acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    for (; i < n; i++) {
      sum += a[ao + i] * b[bo + i];
    }
    return sum;
  }

  @Override
  public float squaredL2(float[] a, int ao, float[] b, int bo, int n) {
    int step = SPECIES.length();
    FloatVector acc0 = FloatVector.zero(SPECIES);
    FloatVector acc1 = FloatVector.zero(SPECIES);
    int i = 0;
    for (int bound = n - 2 * step; i <= bound; i += 2 * step) {
      FloatVector d0 =
          FloatVector.fromArray(SPECIES, a, ao + i).sub(FloatVector.fromArray(SPECIES, b, bo + i));
      FloatVector d1 =
          FloatVector.fromArray(SPECIES, a, ao + i + step)
              .sub(FloatVector.fromArray(SPECIES, b, bo + i + step));
      acc0 = d0.fma(d0, acc0);
      acc1 = d1.fma(d1, acc1);
    }
    for (int bound = n - step; i <= bound; i += step) {
      FloatVector d =
          FloatVector.fromArray(SPECIES, a, ao + i).sub(FloatVector.fromArray(SPECIES, b, bo + i));
      acc0 = d.fma(d, acc0);
    }
    float sum = acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    for (; i < n; i++) {
      float d = a[ao + i] - b[bo + i];
      sum += d * d;
    }
    return sum;
  }

  @Override
  public String name() {
    return "simd-" + SPECIES.vectorBitSize();
  }
}
