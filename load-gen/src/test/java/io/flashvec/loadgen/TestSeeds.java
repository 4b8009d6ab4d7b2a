package io.flashvec.loadgen;

import java.util.SplittableRandom;

/** Seeded randomness for tests: {@code -Dtests.seed=N} reproduces a run; the seed is printed. */
public final class TestSeeds {
  private TestSeeds() {}

  /** A random source seeded from {@code tests.seed} (default fixed), printing the seed. */
  public static SplittableRandom random(String testName) {
    long seed = Long.getLong("tests.seed", 0x5EED_F1A5L);
    System.out.println(testName + ": seed=" + seed + " (rerun with -Dtests.seed=" + seed + ")");
    return new SplittableRandom(seed ^ testName.hashCode());
  }

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
