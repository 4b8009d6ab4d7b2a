package io.flashvec.loadgen.internal;

import io.flashvec.loadgen.dataset.Distance;

/**
 * Dot products and squared L2 distances over slices of float arrays, for the load generator's
 * brute-force scans (exact ground truth).
 *
 * <p>{@link #get()} uses the incubating Vector API ({@code jdk.incubator.vector}) when the JVM was
 * started with {@code --add-modules jdk.incubator.vector} ({@code ./flashvec loadgen} and the tests
 * do that), else the scalar loops of {@link Distance}, so that a plain {@code java -jar
 * load-gen.jar} still runs. The two may round differently in the last bits (a different summation
 * order); either is deterministic for its inputs. Stateless; thread-safe.
 */
public interface FloatKernels {
  /** Dot product of {@code a[ao, ao+n)} and {@code b[bo, bo+n)}. */
  float dot(float[] a, int ao, float[] b, int bo, int n);

  /** Squared Euclidean distance of {@code a[ao, ao+n)} and {@code b[bo, bo+n)}. */
  float squaredL2(float[] a, int ao, float[] b, int bo, int n);

  /** A short name for logs: {@code simd-<bits>} or {@code scalar}. */
  String name();

  /** The SIMD kernels when the Vector API module is present, else the scalar ones. */
  static FloatKernels get() {
    return Holder.BEST;
  }

  /** The scalar kernels (four accumulators, as {@link Distance#dot}). */
  static FloatKernels scalar() {
    return Scalar.INSTANCE;
  }

  /** Picks the implementation once; the SIMD class is only loaded when its module is there. */
  final class Holder {
    static final FloatKernels BEST =
        ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()
            ? new VectorApiKernels()
            : Scalar.INSTANCE;

    private Holder() {}
  }

  /** Scalar loops with four independent accumulators. */
  final class Scalar implements FloatKernels {
    static final Scalar INSTANCE = new Scalar();

    private Scalar() {}

    @Override
    public float dot(float[] a, int ao, float[] b, int bo, int n) {
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int i = 0;
      for (; i + 3 < n; i += 4) {
        s0 += a[ao + i] * b[bo + i];
        s1 += a[ao + i + 1] * b[bo + i + 1];
        s2 += a[ao + i + 2] * b[bo + i + 2];
        s3 += a[ao + i + 3] * b[bo + i + 3];
      }
      for (; i < n; i++) {
        s0 += a[ao + i] * b[bo + i];
      }
      return (s0 + s1) + (s2 + s3);
    }

    @Override
    public float squaredL2(float[] a, int ao, float[] b, int bo, int n) {
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int i = 0;
      for (; i + 3 < n; i += 4) {
        float d0 = a[ao + i] - b[bo + i];
        float d1 = a[ao + i + 1] - b[bo + i + 1];
        float d2 = a[ao + i + 2] - b[bo + i + 2];
        float d3 = a[ao + i + 3] - b[bo + i + 3];
        s0 += d0 * d0;
        s1 += d1 * d1;
        s2 += d2 * d2;
        s3 += d3 * d3;
      }
      for (; i < n; i++) {
        float d = a[ao + i] - b[bo + i];
        s0 += d * d;
      }
      return (s0 + s1) + (s2 + s3);
    }

    @Override
    public String name() {
      return "scalar";
    }
  }
}
