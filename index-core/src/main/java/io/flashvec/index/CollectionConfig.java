package io.flashvec.index;

import java.util.Objects;

/**
 * What a collection is created with; immutable afterwards.
 *
 * @param dimension vector size, 1..{@value #MAX_DIMENSION}
 * @param distance the metric
 * @param shardNumber shards the points are hashed over
 * @param replicationFactor copies of each shard (1 in standalone)
 * @param index how sealed segments are indexed
 */
public record CollectionConfig(
    int dimension, Distance distance, int shardNumber, int replicationFactor, IndexParams index) {

  public static final int MAX_DIMENSION = 16_000;
  public static final int MAX_SHARDS = 1024;

  public CollectionConfig {
    if (dimension < 1 || dimension > MAX_DIMENSION) {
      throw new InvalidInputException(
          "vector size out of range [size=" + dimension + ", allowed=1.." + MAX_DIMENSION + "]");
    }
    Objects.requireNonNull(distance, "distance");
    if (shardNumber < 1 || shardNumber > MAX_SHARDS) {
      throw new InvalidInputException(
          "shard_number out of range [shard_number="
              + shardNumber
              + ", allowed=1.."
              + MAX_SHARDS
              + "]");
    }
    if (replicationFactor < 1 || replicationFactor > 16) {
      throw new InvalidInputException(
          "replication_factor out of range [replication_factor="
              + replicationFactor
              + ", allowed=1..16]");
    }
    if (index == null) {
      index = IndexParams.DEFAULT;
    }
  }

  /**
   * Checks a vector against this config: present, {@link #dimension} values, all finite.
   *
   * @param id the point the vector belongs to, for the message ({@code null}: a query)
   * @throws InvalidInputException naming the id, the expected and the actual dimension, or the
   *     first non-finite value
   */
  public void checkVector(PointId id, float[] v) {
    if (v == null) {
      throw new InvalidInputException("Wrong input: point has no vector [id=" + id + "]");
    }
    if (v.length != dimension) {
      throw new InvalidInputException(
          "Wrong input: Vector dimension error: expected dim: "
              + dimension
              + ", got "
              + v.length
              + (id == null ? "" : " [id=" + id + "]"));
    }
    for (int i = 0; i < v.length; i++) {
      if (!Float.isFinite(v[i])) {
        throw new InvalidInputException(
            "Wrong input: vector contains a non-finite value ["
                + (id == null ? "" : "id=" + id + ", ")
                + "index="
                + i
                + ", value="
                + v[i]
                + "]");
      }
    }
  }

  /** {@link #checkVector} and the vector prepared for the metric (cosine: normalised). */
  public float[] prepareVector(PointId id, float[] v) {
    checkVector(id, v);
    return distance.prepare(v);
  }
}
