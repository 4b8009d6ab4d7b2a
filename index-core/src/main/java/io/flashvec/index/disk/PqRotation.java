package io.flashvec.index.disk;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.EigenDecomposition_F64;

/**
 * The rotation a {@link PqCodebook} quantizes in (ADR 0013): the principal axes of a sample, dealt
 * to the PQ subspaces so that each subspace gets a similar share of the variance.
 *
 * <p>Plain PQ cuts the coordinates into consecutive groups. When the variance of the data sits in a
 * few dozen directions spread across all coordinates (embeddings: a low intrinsic dimension, a
 * random-looking basis), every group then sees a projection of the whole signal and its 256
 * centroids cannot resolve near neighbours. In the principal axes, the strongest directions are
 * dealt one per subspace in a snake order (strongest to subspace 0, 1, …, M−1, then back from M−1),
 * the "eigenvalue allocation" of optimized product quantization (Ge et al., 2013), so every
 * subspace spends its codes on a little of the signal.
 */
public final class PqRotation {

  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;

  /** The mean of the sample and the rotation ({@code dim × dim}, row-major, orthonormal rows). */
  public record Trained(float[] mean, float[] rotation, double[] eigenvalues) {}

  private PqRotation() {}

  /**
   * Trains on {@code sample} (each {@code dim} floats) for subspaces of {@code sizes} consecutive
   * output coordinates. Row {@code r} of the rotation is the principal axis placed at output
   * coordinate {@code r}.
   */
  public static Trained train(float[][] sample, int dim, int[] sizes) {
    int n = sample.length;
    if (n < 2) {
      throw new IllegalArgumentException("PQ rotation needs at least 2 points [n=" + n + "]");
    }
    double[] mean = new double[dim];
    for (float[] x : sample) {
      for (int i = 0; i < dim; i++) {
        mean[i] += x[i];
      }
    }
    for (int i = 0; i < dim; i++) {
      mean[i] /= n;
    }
    float[] meanF = new float[dim];
    for (int i = 0; i < dim; i++) {
      meanF[i] = (float) mean[i];
    }
    double[] cov = covariance(sample, meanF, dim);
    DMatrixRMaj c = new DMatrixRMaj(dim, dim, true, cov);
    EigenDecomposition_F64<DMatrixRMaj> eig = DecompositionFactory_DDRM.eig(dim, true, true);
    if (!eig.decompose(c)) {
      throw new IllegalStateException(
          "eigendecomposition of the PQ sample failed [dim=" + dim + "]");
    }
    Integer[] order = new Integer[dim];
    double[] values = new double[dim];
    for (int i = 0; i < dim; i++) {
      order[i] = i;
      values[i] = eig.getEigenvalue(i).getReal();
    }
    Arrays.sort(order, (a, b) -> Double.compare(values[b], values[a]));
    int[] slot = eigenvalueAllocation(sizes, dim);
    float[] rotation = new float[dim * dim];
    double[] sorted = new double[dim];
    for (int rank = 0; rank < dim; rank++) {
      DMatrixRMaj v = eig.getEigenVector(order[rank]);
      double norm = 0;
      for (int i = 0; i < dim; i++) {
        norm += v.get(i) * v.get(i);
      }
      norm = Math.sqrt(norm);
      int row = slot[rank];
      for (int i = 0; i < dim; i++) {
        rotation[row * dim + i] = (float) (v.get(i) / norm);
      }
      sorted[rank] = values[order[rank]];
    }
    return new Trained(meanF, rotation, sorted);
  }

  /**
   * {@code out[outOff + r] = dot(row r of rotation, x[0, dim))} for every row; the input and output
   * ranges must not overlap.
   */
  public static void rotate(float[] rotation, int dim, float[] x, float[] out, int outOff) {
    int bound = SPECIES.loopBound(dim);
    for (int r = 0; r < dim; r++) {
      int row = r * dim;
      FloatVector acc = FloatVector.zero(SPECIES);
      int i = 0;
      for (; i < bound; i += SPECIES.length()) {
        acc =
            FloatVector.fromArray(SPECIES, rotation, row + i)
                .fma(FloatVector.fromArray(SPECIES, x, i), acc);
      }
      float sum = acc.reduceLanes(VectorOperators.ADD);
      for (; i < dim; i++) {
        sum += rotation[row + i] * x[i];
      }
      out[outOff + r] = sum;
    }
  }

  /**
   * The rotation rounded to bfloat16 (the upper half of each float, rounded to nearest even), for
   * {@link #rotateHalf}: a query's rotation streams the whole matrix from memory (768-d: 2.4 MB as
   * floats, more than a core's L2), so half the bytes is about half the time. bfloat16 keeps 8 bits
   * of mantissa: a rotated coordinate is off by ~0.1% of its size, far below the PQ error.
   */
  public static short[] toBfloat16(float[] rotation) {
    short[] out = new short[rotation.length];
    for (int i = 0; i < rotation.length; i++) {
      int bits = Float.floatToRawIntBits(rotation[i]);
      out[i] = (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }
    return out;
  }

  private static final VectorSpecies<Short> HALF =
      VectorSpecies.of(short.class, VectorShape.forBitSize(SPECIES.length() * 16));
  private static final VectorSpecies<Integer> WIDE =
      VectorSpecies.of(int.class, VectorShape.forBitSize(SPECIES.length() * 32));

  /** {@link #rotate} with the bfloat16 matrix of {@link #toBfloat16}. */
  public static void rotateHalf(short[] rotation, int dim, float[] x, float[] out, int outOff) {
    int bound = SPECIES.loopBound(dim);
    for (int r = 0; r < dim; r++) {
      int row = r * dim;
      FloatVector acc = FloatVector.zero(SPECIES);
      int i = 0;
      for (; i < bound; i += SPECIES.length()) {
        FloatVector m =
            ((IntVector)
                    ShortVector.fromArray(HALF, rotation, row + i)
                        .convertShape(VectorOperators.S2I, WIDE, 0))
                .lanewise(VectorOperators.LSHL, 16)
                .reinterpretAsFloats();
        acc = m.fma(FloatVector.fromArray(SPECIES, x, i), acc);
      }
      float sum = acc.reduceLanes(VectorOperators.ADD);
      for (; i < dim; i++) {
        sum += Float.intBitsToFloat(rotation[row + i] << 16) * x[i];
      }
      out[outOff + r] = sum;
    }
  }

  /**
   * The output coordinate of the principal axis of each rank: ranks are dealt to the subspaces in a
   * snake order, skipping full ones, and fill each subspace's coordinates front to back.
   */
  static int[] eigenvalueAllocation(int[] sizes, int dim) {
    int m = sizes.length;
    int[] offsets = new int[m];
    for (int s = 1; s < m; s++) {
      offsets[s] = offsets[s - 1] + sizes[s - 1];
    }
    int[] used = new int[m];
    int[] slot = new int[dim];
    int rank = 0;
    for (int round = 0; rank < dim; round++) {
      for (int j = 0; j < m && rank < dim; j++) {
        int s = round % 2 == 0 ? j : m - 1 - j;
        if (used[s] < sizes[s]) {
          slot[rank++] = offsets[s] + used[s]++;
        }
      }
    }
    return slot;
  }

  /** The sample covariance, row-major, accumulated in float per block and summed in double. */
  private static double[] covariance(float[][] sample, float[] mean, int dim) {
    double[] cov = new double[dim * dim];
    float[] block = new float[dim * dim];
    float[] x = new float[dim];
    int bound = SPECIES.loopBound(dim);
    int inBlock = 0;
    for (float[] v : sample) {
      for (int i = 0; i < dim; i++) {
        x[i] = v[i] - mean[i];
      }
      for (int i = 0; i < dim; i++) {
        FloatVector xi = FloatVector.broadcast(SPECIES, x[i]);
        int row = i * dim;
        int j = 0;
        for (; j < bound; j += SPECIES.length()) {
          xi.fma(
                  FloatVector.fromArray(SPECIES, x, j),
                  FloatVector.fromArray(SPECIES, block, row + j))
              .intoArray(block, row + j);
        }
        for (; j < dim; j++) {
          block[row + j] += x[i] * x[j];
        }
      }
      if (++inBlock == 256) {
        flush(block, cov);
        inBlock = 0;
      }
    }
    flush(block, cov);
    int n = sample.length;
    for (int i = 0; i < cov.length; i++) {
      cov[i] /= n - 1;
    }
    // exact symmetry for the symmetric eigen solver
    for (int i = 0; i < dim; i++) {
      for (int j = i + 1; j < dim; j++) {
        double a = 0.5 * (cov[i * dim + j] + cov[j * dim + i]);
        cov[i * dim + j] = a;
        cov[j * dim + i] = a;
      }
    }
    return cov;
  }

  private static void flush(float[] block, double[] cov) {
    for (int i = 0; i < block.length; i++) {
      cov[i] += block[i];
    }
    Arrays.fill(block, 0f);
  }
}
