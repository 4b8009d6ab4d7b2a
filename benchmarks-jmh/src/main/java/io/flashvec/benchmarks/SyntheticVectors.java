package io.flashvec.benchmarks;

import java.util.SplittableRandom;

/**
 * Seeded synthetic vectors that behave like real embeddings: a Gaussian mixture in a small latent
 * space (many clusters of varied spread and size) mapped to the target dimension by a random linear
 * map, plus a little isotropic noise, normalised to unit length.
 *
 * <p>Real text and image embeddings have an intrinsic dimensionality of roughly 20–50; data whose
 * noise fills every dimension is far harder for a graph index and is a stress case, not the
 * headline. Queries come from the same model as the data (a different stream), not from the data
 * itself.
 *
 * <p>Immutable after construction; {@link #sample} is thread-safe (each call brings its own random
 * source).
 */
public final class SyntheticVectors {

  /** Latent dimensionality (capped at the target dimension). */
  static final int LATENT_DIM = 32;

  /** Mixture components in latent space. */
  static final int CLUSTERS = 64;

  /** Standard deviation of the isotropic noise per coordinate; mapped coordinates have std ≈ 1. */
  static final double NOISE = 0.1;

  private final int dim;
  private final int latentDim;
  private final double[][] centers; // [cluster][latent]
  private final double[] spreads; // [cluster]
  private final double[] cumulativeWeights; // [cluster], last = 1
  private final double[][] map; // [dim][latent]

  /** A model for {@code dim}-dimensional vectors, fully determined by {@code seed}. */
  public SyntheticVectors(long seed, int dim) {
    if (dim < 1) {
      throw new IllegalArgumentException("dimension must be positive [dim=" + dim + "]");
    }
    this.dim = dim;
    this.latentDim = Math.min(LATENT_DIM, dim);
    SplittableRandom r = new SplittableRandom(seed);
    centers = new double[CLUSTERS][latentDim];
    spreads = new double[CLUSTERS];
    cumulativeWeights = new double[CLUSTERS];
    double total = 0;
    for (int c = 0; c < CLUSTERS; c++) {
      for (int l = 0; l < latentDim; l++) {
        centers[c][l] = r.nextGaussian();
      }
      spreads[c] = 0.2 + 0.5 * r.nextDouble();
      total += Math.exp(0.8 * r.nextGaussian()); // log-normal sizes: a few big clusters
      cumulativeWeights[c] = total;
    }
    for (int c = 0; c < CLUSTERS; c++) {
      cumulativeWeights[c] /= total;
    }
    cumulativeWeights[CLUSTERS - 1] = 1.0;
    double scale = 1.0 / Math.sqrt(latentDim);
    map = new double[dim][latentDim];
    for (double[] row : map) {
      for (int l = 0; l < latentDim; l++) {
        row[l] = r.nextGaussian() * scale;
      }
    }
  }

  public int dimension() {
    return dim;
  }

  /** Draws {@code n} unit-length vectors from the stream {@code stream} of this model. */
  public float[][] sample(int n, long stream) {
    SplittableRandom r = new SplittableRandom(stream * 0x9E3779B97F4A7C15L + dim);
    float[][] out = new float[n][];
    double[] z = new double[latentDim];
    for (int i = 0; i < n; i++) {
      int c = cluster(r.nextDouble());
      for (int l = 0; l < latentDim; l++) {
        z[l] = centers[c][l] + spreads[c] * r.nextGaussian();
      }
      float[] v = new float[dim];
      double norm2 = 0;
      for (int j = 0; j < dim; j++) {
        double x = NOISE * r.nextGaussian();
        double[] row = map[j];
        for (int l = 0; l < latentDim; l++) {
          x += row[l] * z[l];
        }
        v[j] = (float) x;
        norm2 += x * x;
      }
      float inv = (float) (1.0 / Math.sqrt(norm2));
      for (int j = 0; j < dim; j++) {
        v[j] *= inv;
      }
      out[i] = v;
    }
    return out;
  }

  private int cluster(double u) {
    for (int c = 0; c < CLUSTERS - 1; c++) {
      if (u < cumulativeWeights[c]) {
        return c;
      }
    }
    return CLUSTERS - 1;
  }
}
