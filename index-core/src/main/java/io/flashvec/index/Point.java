package io.flashvec.index;

import java.util.Map;

/**
 * A point to store: id, the primary dense vector ({@code null}: the point has none), payload (a
 * JSON object as UTF-8 bytes, or {@code null}), its sparse vectors by name and its other dense
 * vectors by name (empty: none).
 *
 * <p>Arrays are owned by the point once constructed; callers must not modify them afterwards.
 */
public record Point(
    PointId id,
    float[] vector,
    byte[] payload,
    Map<String, SparseVector> sparse,
    Map<String, float[]> dense) {

  public Point {
    sparse = sparse == null || sparse.isEmpty() ? Map.of() : Map.copyOf(sparse);
    dense = dense == null || dense.isEmpty() ? Map.of() : Map.copyOf(dense);
  }

  /** A point without other dense vectors. */
  public Point(PointId id, float[] vector, byte[] payload, Map<String, SparseVector> sparse) {
    this(id, vector, payload, sparse, Map.of());
  }

  /** A point with only the default dense vector. */
  public Point(PointId id, float[] vector, byte[] payload) {
    this(id, vector, payload, Map.of());
  }

  /** Whether the point has more than (or other than) the default dense vector. */
  public boolean hasExtraVectors() {
    return vector == null || !sparse.isEmpty() || !dense.isEmpty();
  }
}
