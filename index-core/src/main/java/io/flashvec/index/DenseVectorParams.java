package io.flashvec.index;

import java.util.Objects;

/**
 * A dense vector field other than the collection's primary one: its size, metric and placement.
 * Such a field is stored beside the segment's points and searched by an exact scan of the points
 * that have it, filtered, with the same vector kernels as the graph's rescoring.
 *
 * @param dimension vector size, 1..{@value CollectionConfig#MAX_DIMENSION}
 * @param distance the metric (Cosine vectors are normalised when stored, as the primary field's)
 * @param onDisk where sealed segments keep the vectors: {@code false} on the heap, {@code true} in
 *     their mapped vectors file, read on demand through the page cache (growing segments keep them
 *     on the heap either way)
 */
public record DenseVectorParams(int dimension, Distance distance, boolean onDisk) {

  /** A field kept on the heap. */
  public DenseVectorParams(int dimension, Distance distance) {
    this(dimension, distance, false);
  }

  public DenseVectorParams {
    if (dimension < 1 || dimension > CollectionConfig.MAX_DIMENSION) {
      throw new InvalidInputException(
          "vector size out of range [size="
              + dimension
              + ", allowed=1.."
              + CollectionConfig.MAX_DIMENSION
              + "]");
    }
    Objects.requireNonNull(distance, "distance");
  }
}
