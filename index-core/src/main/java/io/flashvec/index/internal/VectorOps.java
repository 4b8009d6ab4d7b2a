package io.flashvec.index.internal;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * SIMD distance kernels over float arrays with offsets, using the incubating Vector API (the JVM
 * must run with {@code --add-modules jdk.incubator.vector}). Exact search scans whole segments with
 * these, so they read straight from the segment's chunk arrays without copying.
 */
public final class VectorOps {

  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;

  private VectorOps() {}

  /** Dot product of {@code a[ao, ao+n)} and {@code b[bo, bo+n)}. */
  public static float dot(float[] a, int ao, float[] b, int bo, int n) {
    int i = 0;
    int bound = SPECIES.loopBound(n);
    FloatVector acc = FloatVector.zero(SPECIES);
    for (; i < bound; i += SPECIES.length()) {
      FloatVector va = FloatVector.fromArray(SPECIES, a, ao + i);
      FloatVector vb = FloatVector.fromArray(SPECIES, b, bo + i);
      acc = va.fma(vb, acc);
    }
    float sum = acc.reduceLanes(VectorOperators.ADD);
    for (; i < n; i++) {
      sum += a[ao + i] * b[bo + i];
    }
    return sum;
  }

  /** Squared Euclidean distance of {@code a[ao, ao+n)} and {@code b[bo, bo+n)}. */
  public static float squareDistance(float[] a, int ao, float[] b, int bo, int n) {
    int i = 0;
    int bound = SPECIES.loopBound(n);
    FloatVector acc = FloatVector.zero(SPECIES);
    for (; i < bound; i += SPECIES.length()) {
      FloatVector d =
          FloatVector.fromArray(SPECIES, a, ao + i).sub(FloatVector.fromArray(SPECIES, b, bo + i));
      acc = d.fma(d, acc);
    }
    float sum = acc.reduceLanes(VectorOperators.ADD);
    for (; i < n; i++) {
      float d = a[ao + i] - b[bo + i];
      sum += d * d;
    }
    return sum;
  }

  /**
   * Dot product of {@code q[0, n)} and {@code n} little-endian floats of {@code m} at {@code off}.
   */
  public static float dot(float[] q, MemorySegment m, long off, int n) {
    int i = 0;
    int bound = SPECIES.loopBound(n);
    FloatVector acc = FloatVector.zero(SPECIES);
    for (; i < bound; i += SPECIES.length()) {
      FloatVector vq = FloatVector.fromArray(SPECIES, q, i);
      FloatVector vm =
          FloatVector.fromMemorySegment(SPECIES, m, off + 4L * i, ByteOrder.LITTLE_ENDIAN);
      acc = vq.fma(vm, acc);
    }
    float sum = acc.reduceLanes(VectorOperators.ADD);
    for (; i < n; i++) {
      sum += q[i] * m.get(LE_FLOAT, off + 4L * i);
    }
    return sum;
  }

  /** Squared L2 distance of {@code q[0, n)} and {@code n} little-endian floats of {@code m}. */
  public static float squareDistance(float[] q, MemorySegment m, long off, int n) {
    int i = 0;
    int bound = SPECIES.loopBound(n);
    FloatVector acc = FloatVector.zero(SPECIES);
    for (; i < bound; i += SPECIES.length()) {
      FloatVector d =
          FloatVector.fromArray(SPECIES, q, i)
              .sub(
                  FloatVector.fromMemorySegment(SPECIES, m, off + 4L * i, ByteOrder.LITTLE_ENDIAN));
      acc = d.fma(d, acc);
    }
    float sum = acc.reduceLanes(VectorOperators.ADD);
    for (; i < n; i++) {
      float d = q[i] - m.get(LE_FLOAT, off + 4L * i);
      sum += d * d;
    }
    return sum;
  }

  private static final java.lang.foreign.ValueLayout.OfFloat LE_FLOAT =
      java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
}
