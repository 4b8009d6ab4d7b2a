package io.flashvec.loadgen.dataset;

import java.util.Locale;

/**
 * The similarity metric of a collection, named as in Qdrant's REST API ({@code Cosine}, {@code
 * Dot}, {@code Euclid}).
 *
 * <p>{@link #similarity} is "higher is closer" for every metric: Euclid returns the negated squared
 * L2 distance, so the same top-k code serves all three.
 */
public enum Distance {
  COSINE("Cosine", "cosine"),
  DOT("Dot", "dot"),
  EUCLID("Euclid", "l2");

  private final String apiName;
  private final String manifestName;

  Distance(String apiName, String manifestName) {
    this.apiName = apiName;
    this.manifestName = manifestName;
  }

  /** The name used in Qdrant-shaped REST bodies: {@code Cosine}, {@code Dot}, {@code Euclid}. */
  public String apiName() {
    return apiName;
  }

  /**
   * The name used in a dataset's {@code manifest.json} ({@code cosine}, {@code dot}, {@code l2}).
   */
  public String manifestName() {
    return manifestName;
  }

  /**
   * Parses a metric name, case-insensitively, accepting the Qdrant names and the usual aliases
   * (ann-benchmarks' {@code angular} and {@code euclidean}, {@code l2}, {@code ip}).
   */
  public static Distance parse(String name) {
    return switch (name.trim().toLowerCase(Locale.ROOT)) {
      case "cosine", "angular", "cos" -> COSINE;
      case "dot", "ip", "inner_product", "innerproduct", "dotproduct", "mips" -> DOT;
      case "euclid", "euclidean", "l2", "l2sq" -> EUCLID;
      default ->
          throw new IllegalArgumentException(
              "unknown distance [distance="
                  + name
                  + ", expected one of Cosine, Dot, Euclid (or angular, ip, l2)]");
    };
  }

  /** Similarity of {@code a} and {@code b} under this metric; larger means closer. */
  public float similarity(float[] a, float[] b) {
    return switch (this) {
      case DOT -> dot(a, b);
      case COSINE -> {
        float na = (float) Math.sqrt(dot(a, a));
        float nb = (float) Math.sqrt(dot(b, b));
        yield na == 0 || nb == 0 ? 0f : dot(a, b) / (na * nb);
      }
      case EUCLID -> -squaredL2(a, b);
    };
  }

  /** Dot product with four independent accumulators (lets the JIT pipeline the adds). */
  public static float dot(float[] a, float[] b) {
    int n = a.length;
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 3 < n; i += 4) {
      s0 += a[i] * b[i];
      s1 += a[i + 1] * b[i + 1];
      s2 += a[i + 2] * b[i + 2];
      s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) {
      s0 += a[i] * b[i];
    }
    return (s0 + s1) + (s2 + s3);
  }

  /** Squared Euclidean distance with four independent accumulators. */
  public static float squaredL2(float[] a, float[] b) {
    int n = a.length;
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 3 < n; i += 4) {
      float d0 = a[i] - b[i];
      float d1 = a[i + 1] - b[i + 1];
      float d2 = a[i + 2] - b[i + 2];
      float d3 = a[i + 3] - b[i + 3];
      s0 += d0 * d0;
      s1 += d1 * d1;
      s2 += d2 * d2;
      s3 += d3 * d3;
    }
    for (; i < n; i++) {
      float d = a[i] - b[i];
      s0 += d * d;
    }
    return (s0 + s1) + (s2 + s3);
  }
}
