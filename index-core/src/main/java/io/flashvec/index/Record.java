package io.flashvec.index;

import java.util.Map;

/**
 * A stored point as read back: {@code vector} (the primary dense vector) and {@code payload} are
 * {@code null} when not requested or absent, {@code sparse} and {@code dense} are {@code null} when
 * vectors were not requested and else the point's sparse vectors and its other dense vectors by
 * name ({@code dense} may be {@code null} when it has none). {@code score} is meaningful for search
 * results only.
 */
public record Record(
    PointId id,
    float score,
    float[] vector,
    byte[] payload,
    Map<String, SparseVector> sparse,
    Map<String, float[]> dense) {

  /** A record without sparse vectors. */
  public Record(PointId id, float score, float[] vector, byte[] payload) {
    this(id, score, vector, payload, null, null);
  }

  /** A record without other dense vectors. */
  public Record(
      PointId id, float score, float[] vector, byte[] payload, Map<String, SparseVector> sparse) {
    this(id, score, vector, payload, sparse, null);
  }

  /** This record with another score. */
  public Record withScore(float s) {
    return new Record(id, s, vector, payload, sparse, dense);
  }

  /** This record without its payload. */
  public Record withoutPayload() {
    return new Record(id, score, vector, null, sparse, dense);
  }

  /** This record without its vectors. */
  public Record withoutVectors() {
    return new Record(id, score, null, payload, null, null);
  }
}
