package io.flashvec.index;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/** Seeded test vectors, ids, payloads and a brute-force reference shared by index-core tests. */
public final class TestVectors {

  /** A brute-force hit. */
  public record Hit(PointId id, float score) {}

  private TestVectors() {}

  /** Independent standard Gaussian components. */
  public static float[] gaussian(Random r, int dim) {
    float[] v = new float[dim];
    for (int i = 0; i < dim; i++) {
      v[i] = (float) r.nextGaussian();
    }
    return v;
  }

  /** A numeric id (small or near 2^64) or a UUID. */
  public static PointId randomId(Random r) {
    return switch (r.nextInt(3)) {
      case 0 -> PointId.of(r.nextInt(1_000_000));
      case 1 -> PointId.of(r.nextLong());
      default -> PointId.of(new UUID(r.nextLong(), r.nextLong()));
    };
  }

  /** A small JSON payload naming the id and a version. */
  public static byte[] payload(PointId id, int version) {
    return ("{\"id\":\"" + id + "\",\"v\":" + version + "}").getBytes(StandardCharsets.UTF_8);
  }

  /** The best {@code k} of {@code vectors} (prepared) for {@code q}, best first, thresholded. */
  public static List<Hit> bruteForce(
      Map<PointId, float[]> vectors, float[] q, Distance d, int k, Float threshold) {
    List<Hit> all = new ArrayList<>(vectors.size());
    for (Map.Entry<PointId, float[]> e : vectors.entrySet()) {
      float s = d.score(q, e.getValue(), 0);
      if (threshold == null || d.passes(s, threshold)) {
        all.add(new Hit(e.getKey(), s));
      }
    }
    all.sort(
        (a, b) ->
            d.higherIsBetter()
                ? Float.compare(b.score(), a.score())
                : Float.compare(a.score(), b.score()));
    return all.subList(0, Math.min(k, all.size()));
  }

  /** A low-dimensional latent Gaussian mapped linearly to {@code dim}, plus small noise. */
  public static float[][] latent(Random r, int n, int dim) {
    int latent = 8;
    float[][] proj = new float[latent][dim];
    for (float[] row : proj) {
      for (int j = 0; j < dim; j++) {
        row[j] = (float) r.nextGaussian();
      }
    }
    float[][] out = new float[n][dim];
    for (int i = 0; i < n; i++) {
      double[] z = new double[latent];
      for (int l = 0; l < latent; l++) {
        z[l] = r.nextGaussian();
      }
      for (int j = 0; j < dim; j++) {
        double v = 0.05 * r.nextGaussian();
        for (int l = 0; l < latent; l++) {
          v += z[l] * proj[l][j];
        }
        out[i][j] = (float) v;
      }
    }
    return out;
  }
}
