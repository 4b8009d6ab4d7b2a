package io.flashvec.benchmarks;

import io.flashvec.index.internal.VectorOps;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The SIMD distance kernels of {@link VectorOps} against a plain scalar loop, per distance
 * computation.
 *
 * <p>Each invocation scores one query against {@value #BATCH} vectors stored back to back in one
 * flat array and read at offsets, the way exact search reads a segment chunk. The batch stays in L2
 * (16 × 1536 floats = 96 KiB), so this measures arithmetic, not memory bandwidth. The scalar
 * baseline is not auto-vectorised: float reductions must keep their order, so C2 leaves them
 * scalar. The ratio {@code scalar / vectorOps} at one dimension is the figure to quote.
 */
public class DistanceBenchmark extends AbstractBenchmark {

  /** Vectors scored per invocation; times are reported per vector. */
  static final int BATCH = 16;

  @Param({"96", "384", "768", "1536"})
  public int dim;

  float[] query;
  float[] data;

  @Setup(Level.Trial)
  public void setup() {
    SplittableRandom r = new SplittableRandom(SEED ^ dim);
    query = gaussian(r, dim);
    data = gaussian(r, BATCH * dim);
  }

  private static float[] gaussian(SplittableRandom r, int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) r.nextGaussian();
    }
    return v;
  }

  /** A distance kernel over {@code n} floats of {@code a} and {@code b} from the given offsets. */
  @FunctionalInterface
  interface Kernel {
    float apply(float[] a, int ao, float[] b, int bo, int n);
  }

  /**
   * Scores the query against the batch with {@code kernel}. Each benchmark method runs in its own
   * fork and passes one constant kernel, so the call site stays monomorphic and is inlined.
   */
  private void scoreBatch(Kernel kernel, Blackhole bh) {
    for (int b = 0; b < BATCH; b++) {
      bh.consume(kernel.apply(query, 0, data, b * dim, dim));
    }
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void dotVectorOps(Blackhole bh) {
    scoreBatch(VectorOps::dot, bh);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void dotScalar(Blackhole bh) {
    scoreBatch(DistanceBenchmark::scalarDot, bh);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void squareDistanceVectorOps(Blackhole bh) {
    scoreBatch(VectorOps::squareDistance, bh);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void squareDistanceScalar(Blackhole bh) {
    scoreBatch(DistanceBenchmark::scalarSquareDistance, bh);
  }

  /** The baseline: a textbook dot product. */
  static float scalarDot(float[] a, int ao, float[] b, int bo, int n) {
    float sum = 0;
    for (int i = 0; i < n; i++) {
      sum += a[ao + i] * b[bo + i];
    }
    return sum;
  }

  /** The baseline: a textbook squared Euclidean distance. */
  static float scalarSquareDistance(float[] a, int ao, float[] b, int bo, int n) {
    float sum = 0;
    for (int i = 0; i < n; i++) {
      float d = a[ao + i] - b[bo + i];
      sum += d * d;
    }
    return sum;
  }
}
