package io.flashvec.loadgen.dataset;

import io.flashvec.loadgen.internal.Parallel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Deterministic synthetic data that behaves like real embeddings.
 *
 * <p>Real text and image embeddings have a low intrinsic dimension (about 20–50 even at 768–1536
 * dimensions). So the generator draws from a Gaussian mixture in a small latent space and maps it
 * to the target dimension:
 *
 * <ol>
 *   <li>latent spectrum {@code s_j = 1/sqrt(1 + 4j/L)}: a few dominant directions, a long tail;
 *   <li>{@code clusters} centres {@code c ~ N(0, diag(s²))}, each with a spread drawn log-uniform
 *       in [{@value #MIN_SPREAD}, {@value #MAX_SPREAD}] and a weight drawn log-normal (σ = 1), so
 *       clusters differ in both size and tightness;
 *   <li>a point: pick a cluster by weight, {@code z = c + spread · s ∘ N(0, I_L)};
 *   <li>map {@code x = z A} with a random Gaussian {@code L × D} matrix {@code A / sqrt(L)};
 *   <li>add isotropic noise {@code N(0, (noise · σ_x)² I_D)} where {@code σ_x} is the expected
 *       per-coordinate standard deviation of the signal (so {@code --noise} is relative);
 *   <li>optionally normalise to unit length.
 * </ol>
 *
 * <p>Queries come from the same mixture through an independent random stream, never copies of base
 * rows. Rows are generated in blocks of {@value #BLOCK}, each block with its own seed derived from
 * (seed, stream, block): the output is bit-identical for any thread count, and {@link #writeBase}
 * streams it to disk block by block in order, so a set of tens of millions of vectors never sits on
 * the heap. Thread-safe (stateless after construction).
 */
public final class SyntheticGenerator {
  static final double MIN_SPREAD = 0.2;
  static final double MAX_SPREAD = 0.8;
  static final int BLOCK = 1024;

  /** About how many bytes of generated rows {@link #writeBase} holds between two writes. */
  static final long BATCH_BYTES = 8L << 20;

  private static final long STREAM_BASE = 1;
  private static final long STREAM_QUERY = 2;

  /** What to generate. {@code noise} is relative to the signal's per-coordinate std. */
  public record Spec(
      int n,
      int queries,
      int dim,
      int clusters,
      int latentDim,
      double noise,
      boolean normalize,
      long seed) {
    /** Validates the spec. */
    public Spec {
      if (n < 1 || queries < 0 || dim < 1 || clusters < 1 || latentDim < 1 || noise < 0) {
        throw new IllegalArgumentException(
            "invalid synthetic spec [n="
                + n
                + ", queries="
                + queries
                + ", dim="
                + dim
                + ", clusters="
                + clusters
                + ", latentDim="
                + latentDim
                + ", noise="
                + noise
                + "]");
      }
    }
  }

  private final Spec spec;
  private final float[] spectrum;
  private final float[][] centers;
  private final float[] spreads;
  private final double[] cumulativeWeight;
  private final float[][] map;
  private final float noiseStd;

  /** Draws the mixture (centres, spreads, weights and the linear map) from {@code spec.seed}. */
  public SyntheticGenerator(Spec spec) {
    this.spec = spec;
    int l = spec.latentDim;
    SplittableRandom rnd = new SplittableRandom(mix(spec.seed, 0, 0));
    spectrum = new float[l];
    double meanSq = 0;
    for (int j = 0; j < l; j++) {
      spectrum[j] = (float) (1.0 / Math.sqrt(1.0 + 4.0 * j / l));
      meanSq += spectrum[j] * spectrum[j];
    }
    meanSq /= l;
    centers = new float[spec.clusters][l];
    spreads = new float[spec.clusters];
    cumulativeWeight = new double[spec.clusters];
    double logMin = Math.log(MIN_SPREAD);
    double logMax = Math.log(MAX_SPREAD);
    double total = 0;
    for (int c = 0; c < spec.clusters; c++) {
      for (int j = 0; j < l; j++) {
        centers[c][j] = (float) (rnd.nextGaussian() * spectrum[j]);
      }
      spreads[c] = (float) Math.exp(logMin + rnd.nextDouble() * (logMax - logMin));
      total += Math.exp(rnd.nextGaussian());
      cumulativeWeight[c] = total;
    }
    for (int c = 0; c < spec.clusters; c++) {
      cumulativeWeight[c] /= total;
    }
    cumulativeWeight[spec.clusters - 1] = 1.0;
    map = new float[l][spec.dim];
    float scale = (float) (1.0 / Math.sqrt(l));
    for (int j = 0; j < l; j++) {
      for (int d = 0; d < spec.dim; d++) {
        map[j][d] = (float) rnd.nextGaussian() * scale;
      }
    }
    // E[spread²] for log-uniform spread on [a, b] is (b² − a²) / (2 ln(b/a)).
    double meanSpreadSq =
        (MAX_SPREAD * MAX_SPREAD - MIN_SPREAD * MIN_SPREAD)
            / (2 * Math.log(MAX_SPREAD / MIN_SPREAD));
    double signalStd = Math.sqrt(meanSq * (1.0 + meanSpreadSq));
    noiseStd = (float) (spec.noise * signalStd);
  }

  /** The spec this generator was built from. */
  public Spec spec() {
    return spec;
  }

  /** Generates the {@code n} base vectors on the heap (small sets; see {@link #writeBase}). */
  public float[][] base(int threads) {
    return rows(STREAM_BASE, spec.n, threads);
  }

  /** Generates the query vectors (an independent stream of the same mixture). */
  public float[][] queries(int threads) {
    return rows(STREAM_QUERY, spec.queries, threads);
  }

  /**
   * Writes the {@code n} base vectors to the fvecs file {@code file}, the same bytes as {@link
   * VecsFiles#writeFvecs} of {@link #base}, in memory bounded by a batch of blocks: {@code threads}
   * workers fill a batch of blocks, the batch is appended in order, and the buffers are reused.
   */
  public void writeBase(Path file, int threads) {
    write(file, STREAM_BASE, spec.n, threads);
  }

  /** Writes the query vectors to {@code file} as {@link #writeBase} writes the base. */
  public void writeQueries(Path file, int threads) {
    write(file, STREAM_QUERY, spec.queries, threads);
  }

  /** The number of blocks generated between two writes (bounded by {@link #BATCH_BYTES}). */
  static int batchBlocks(int dim, int threads) {
    long blockBytes = 4L * BLOCK * dim;
    long byBytes = Math.max(1, BATCH_BYTES / blockBytes);
    return (int) Math.max(threads, Math.min(4L * threads, byBytes));
  }

  private void write(Path file, long stream, int count, int threads) {
    int dim = spec.dim;
    int blocks = (count + BLOCK - 1) / BLOCK;
    int batch = Math.min(Math.max(1, blocks), batchBlocks(dim, Math.max(1, threads)));
    float[][] buffers = new float[batch][BLOCK * dim];
    try (VecsFiles.FvecsWriter w = VecsFiles.openFvecs(file, dim)) {
      for (int first = 0; first < blocks; first += batch) {
        int f = first;
        int nb = Math.min(batch, blocks - first);
        Parallel.forRange(
            "synthetic",
            nb,
            1,
            threads,
            (from, to) -> {
              float[] z = new float[spec.latentDim];
              float[] x = new float[dim];
              for (int b = from; b < to; b++) {
                fillBlock(stream, f + b, count, buffers[b], z, x);
              }
            });
        for (int b = 0; b < nb; b++) {
          w.append(buffers[b], rowsInBlock(f + b, count));
        }
      }
      w.commit();
    }
  }

  private float[][] rows(long stream, int count, int threads) {
    float[][] out = new float[count][];
    int blocks = (count + BLOCK - 1) / BLOCK;
    int dim = spec.dim;
    Parallel.forRange(
        "synthetic",
        blocks,
        1,
        threads,
        (from, to) -> {
          float[] z = new float[spec.latentDim];
          float[] x = new float[dim];
          float[] flat = new float[BLOCK * dim];
          for (int b = from; b < to; b++) {
            fillBlock(stream, b, count, flat, z, x);
            for (int r = 0; r < rowsInBlock(b, count); r++) {
              out[b * BLOCK + r] = Arrays.copyOfRange(flat, r * dim, (r + 1) * dim);
            }
          }
        });
    return out;
  }

  private static int rowsInBlock(int block, int count) {
    return Math.min(BLOCK, count - block * BLOCK);
  }

  /**
   * Fills {@code flat} with the rows of block {@code b} of {@code stream}, back to back; the
   * block's random stream depends only on (seed, stream, block), which makes the output independent
   * of the thread count and of the batching.
   */
  private void fillBlock(long stream, int b, int count, float[] flat, float[] z, float[] x) {
    SplittableRandom rnd = new SplittableRandom(mix(spec.seed, stream, b));
    int rows = rowsInBlock(b, count);
    for (int r = 0; r < rows; r++) {
      row(rnd, z, x);
      System.arraycopy(x, 0, flat, r * x.length, x.length);
    }
  }

  /** Draws one row into {@code x} ({@code z} is scratch of the latent dimension). */
  private void row(SplittableRandom rnd, float[] z, float[] x) {
    int c = cluster(rnd.nextDouble());
    float[] center = centers[c];
    float spread = spreads[c];
    for (int j = 0; j < z.length; j++) {
      z[j] = center[j] + spread * spectrum[j] * (float) rnd.nextGaussian();
    }
    Arrays.fill(x, 0f);
    for (int j = 0; j < z.length; j++) {
      float zj = z[j];
      float[] a = map[j];
      for (int d = 0; d < x.length; d++) {
        x[d] += zj * a[d];
      }
    }
    if (noiseStd > 0) {
      for (int d = 0; d < x.length; d++) {
        x[d] += noiseStd * (float) rnd.nextGaussian();
      }
    }
    if (spec.normalize) {
      float norm = (float) Math.sqrt(Distance.dot(x, x));
      if (norm > 0) {
        for (int d = 0; d < x.length; d++) {
          x[d] /= norm;
        }
      }
    }
  }

  private int cluster(double u) {
    int lo = 0;
    int hi = cumulativeWeight.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (cumulativeWeight[mid] < u) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** SplitMix64-style mixing of (seed, stream, block) into a well-spread 64-bit seed. */
  static long mix(long seed, long stream, long block) {
    long z =
        seed * 0x9E3779B97F4A7C15L + stream * 0xBF58476D1CE4E5B9L + block * 0x94D049BB133111EBL;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
