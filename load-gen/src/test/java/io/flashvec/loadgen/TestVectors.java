package io.flashvec.loadgen;

import java.util.SplittableRandom;

/** Vectors for the dataset and metrics tests, drawn from a seeded generator. */
public final class TestVectors {
  private TestVectors() {}

  /** {@code n} vectors of {@code dim} standard Gaussian floats. */
  public static float[][] gaussian(SplittableRandom r, int n, int dim) {
    float[][] out = new float[n][dim];
    for (float[] row : out) {
      for (int i = 0; i < dim; i++) {
        row[i] = (float) r.nextGaussian();
      }
    }
    return out;
  }
}
