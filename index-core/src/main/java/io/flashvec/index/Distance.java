package io.flashvec.index;

import io.flashvec.index.internal.VectorOps;

/**
 * Similarity metrics with Qdrant's semantics.
 *
 * <ul>
 *   <li>{@link #COSINE}: vectors are normalised to unit length when stored; the score is their dot
 *       product (higher is better), and stored vectors are returned normalised.
 *   <li>{@link #DOT}: the raw dot product (higher is better).
 *   <li>{@link #EUCLID}: the Euclidean (L2) distance (lower is better).
 *   <li>{@link #MANHATTAN}: the Manhattan (L1) distance (lower is better). No graph is built for
 *       it: a Manhattan vector is searched exactly ({@link #graphable}).
 * </ul>
 */
public enum Distance {
  COSINE("Cosine"),
  DOT("Dot"),
  EUCLID("Euclid"),
  MANHATTAN("Manhattan");

  private final String apiName;

  Distance(String apiName) {
    this.apiName = apiName;
  }

  /** The name used in the REST API ({@code Cosine}, {@code Dot}, {@code Euclid}). */
  public String apiName() {
    return apiName;
  }

  /** Parses an API name, case-insensitively; {@code L2} and {@code Euclidean} are accepted too. */
  public static Distance parse(String name) {
    if (name != null) {
      for (Distance d : values()) {
        if (d.apiName.equalsIgnoreCase(name)) {
          return d;
        }
      }
      if (name.equalsIgnoreCase("L2") || name.equalsIgnoreCase("Euclidean")) {
        return EUCLID;
      }
    }
    throw new InvalidInputException(
        "unknown distance [distance=" + name + ", allowed=Cosine|Dot|Euclid|Manhattan]");
  }

  /** Whether larger scores rank first. */
  public boolean higherIsBetter() {
    return this != EUCLID && this != MANHATTAN;
  }

  /**
   * Whether a graph (and its PQ codes) can index vectors of this metric; a vector of another one is
   * stored beside the points and searched exactly.
   */
  public boolean graphable() {
    return this != MANHATTAN;
  }

  /**
   * Qdrant's similarity of two vectors, higher is better: the dot product, minus the squared L2
   * distance for Euclid, minus the L1 distance for Manhattan.
   */
  public double similarity(float[] a, int ao, float[] b, int bo, int n) {
    return switch (this) {
      case COSINE, DOT -> VectorOps.dot(a, ao, b, bo, n);
      case EUCLID -> -VectorOps.squareDistance(a, ao, b, bo, n);
      case MANHATTAN -> -VectorOps.manhattan(a, ao, b, bo, n);
    };
  }

  /** Prepares a vector for storage or as a query (normalises for cosine); may return its input. */
  public float[] prepare(float[] v) {
    if (this != COSINE) {
      return v;
    }
    double norm = Math.sqrt(VectorOps.dot(v, 0, v, 0, v.length));
    if (norm == 0) {
      return v;
    }
    float[] out = new float[v.length];
    float inv = (float) (1.0 / norm);
    for (int i = 0; i < v.length; i++) {
      out[i] = v[i] * inv;
    }
    return out;
  }

  /** Scores a prepared query against {@code data[off, off+dim)}. */
  public float score(float[] query, float[] data, int off) {
    return switch (this) {
      case COSINE, DOT -> VectorOps.dot(query, 0, data, off, query.length);
      case EUCLID -> (float) Math.sqrt(VectorOps.squareDistance(query, 0, data, off, query.length));
      case MANHATTAN -> VectorOps.manhattan(query, 0, data, off, query.length);
    };
  }

  /** Scores a prepared query against {@code query.length} little-endian floats of {@code m}. */
  public float score(float[] query, java.lang.foreign.MemorySegment m, long off) {
    return switch (this) {
      case COSINE, DOT -> VectorOps.dot(query, m, off, query.length);
      case EUCLID -> (float) Math.sqrt(VectorOps.squareDistance(query, m, off, query.length));
      case MANHATTAN -> VectorOps.manhattan(query, 0, m, off, query.length);
    };
  }

  /**
   * Prepares a multivector, {@code dim}-sized vectors back to back, for storage or as a query: each
   * vector normalised for cosine; may return its input.
   */
  public float[] prepareMulti(float[] flat, int dim) {
    if (this != COSINE) {
      return flat;
    }
    float[] out = new float[flat.length];
    for (int off = 0; off < flat.length; off += dim) {
      float[] one = java.util.Arrays.copyOfRange(flat, off, off + dim);
      System.arraycopy(prepare(one), 0, out, off, dim);
    }
    return out;
  }

  /**
   * Qdrant's MaxSim of a prepared multivector query {@code q} ({@code dim}-sized vectors back to
   * back) against the {@code count} stored vectors at {@code m[off...]}: for each query vector the
   * best similarity over the stored ones, summed. The similarity is the dot product for Cosine
   * (normalised vectors) and Dot, minus the squared distance for Euclid and minus the L1 distance
   * for Manhattan; a Euclid sum is then turned into a distance as Qdrant reports it, the square
   * root of its magnitude, and a Manhattan sum into its magnitude (lower is better), so the ranking
   * is the same as Qdrant's.
   */
  public float maxSim(float[] q, int dim, java.lang.foreign.MemorySegment m, long off, int count) {
    float sum = 0f;
    long stride = 4L * dim;
    for (int qo = 0; qo < q.length; qo += dim) {
      float best = Float.NEGATIVE_INFINITY;
      for (int j = 0; j < count; j++) {
        float sim =
            switch (this) {
              case EUCLID -> -VectorOps.squareDistance(q, qo, m, off + j * stride, dim);
              case MANHATTAN -> -VectorOps.manhattan(q, qo, m, off + j * stride, dim);
              case COSINE, DOT -> VectorOps.dot(q, qo, m, off + j * stride, dim);
            };
        if (sim > best) {
          best = sim;
        }
      }
      sum += best;
    }
    return switch (this) {
      case EUCLID -> (float) Math.sqrt(Math.abs(sum));
      case MANHATTAN -> Math.abs(sum);
      case COSINE, DOT -> sum;
    };
  }

  /** {@link #maxSim(float[], int, java.lang.foreign.MemorySegment, long, int)} over an array. */
  public float maxSim(float[] q, int dim, float[] stored) {
    return maxSim(q, dim, java.lang.foreign.MemorySegment.ofArray(stored), 0L, stored.length / dim);
  }

  /** Whether {@code a} ranks before {@code b}. */
  public boolean better(float a, float b) {
    return higherIsBetter() ? a > b : a < b;
  }

  /** Whether a score passes a threshold (at least it for similarities, at most for distances). */
  public boolean passes(float score, float threshold) {
    return higherIsBetter() ? score >= threshold : score <= threshold;
  }
}
