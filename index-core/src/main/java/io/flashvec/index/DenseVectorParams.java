package io.flashvec.index;

import java.util.Objects;

/**
 * A dense vector field other than the collection's primary one: its size, metric and placement.
 * Such a field is stored beside the segment's points. Sealed segments index it by a graph of its
 * own ({@link FieldIndex}); growing segments, and fields without a graph, are searched by an exact
 * scan of the points that have it, filtered, with the same vector kernels as the graph's rescoring.
 *
 * @param dimension vector size, 1..{@value CollectionConfig#MAX_DIMENSION}
 * @param distance the metric (Cosine vectors are normalised when stored, as the primary field's)
 * @param onDisk where sealed segments keep the vectors: {@code false} on the heap, {@code true} in
 *     their mapped vectors file, read on demand through the page cache (growing segments keep them
 *     on the heap either way)
 * @param index how sealed segments index the field ({@link FieldIndex}; multivectors and Manhattan
 *     have none)
 * @param multivector whether a point holds several vectors of {@code dimension} in this field (a
 *     multivector, at least one) compared by MaxSim, Qdrant's {@code multivector_config:
 *     {comparator: max_sim}}: for each query vector the best similarity over the point's vectors,
 *     summed. Inside FlashVec a multivector is one array of its vectors back to back ({@link
 *     #vectorCount}).
 * @param datatype Qdrant's {@code datatype}: what every value written or queried is converted to
 *     ({@link VectorDatatype#convert}); {@code uint8} not with Cosine, whose vectors are stored
 *     normalised
 */
public record DenseVectorParams(
    int dimension,
    Distance distance,
    boolean onDisk,
    boolean multivector,
    FieldIndex index,
    VectorDatatype datatype) {

  /** A field of {@code float32} values. */
  public DenseVectorParams(
      int dimension, Distance distance, boolean onDisk, boolean multivector, FieldIndex index) {
    this(dimension, distance, onDisk, multivector, index, VectorDatatype.FLOAT32);
  }

  /**
   * A field with the default index for its kind: {@link FieldIndex#DEFAULT} for a single vector of
   * a metric graphs index, none for a multivector or Manhattan.
   */
  public DenseVectorParams(int dimension, Distance distance, boolean onDisk, boolean multivector) {
    this(dimension, distance, onDisk, multivector, defaultIndex(distance, multivector));
  }

  /** The index a field of this kind gets when its settings say nothing. */
  public static FieldIndex defaultIndex(Distance distance, boolean multivector) {
    return multivector || distance == null || !distance.graphable()
        ? FieldIndex.NONE
        : FieldIndex.DEFAULT;
  }

  /** A field kept on the heap. */
  public DenseVectorParams(int dimension, Distance distance) {
    this(dimension, distance, false);
  }

  /** A field of one vector per point. */
  public DenseVectorParams(int dimension, Distance distance, boolean onDisk) {
    this(dimension, distance, onDisk, false);
  }

  /**
   * The number of vectors in {@code flat}, a value of this field: 1 for a plain field, the number
   * of {@link #dimension}-sized vectors back to back for a multivector.
   */
  public int vectorCount(float[] flat) {
    return multivector ? flat.length / dimension : 1;
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
    Objects.requireNonNull(index, "index");
    Objects.requireNonNull(datatype, "datatype");
    if (datatype == VectorDatatype.UINT8 && distance == Distance.COSINE) {
      throw new InvalidInputException(
          "Wrong input: datatype uint8 is not supported with Cosine: FlashVec stores Cosine vectors"
              + " normalised, which uint8 values cannot hold");
    }
    if (index.graph() && (multivector || !distance.graphable())) {
      throw new InvalidInputException(
          "a graph indexes single vectors of Cosine, Dot or Euclid only [distance="
              + distance.apiName()
              + ", multivector="
              + multivector
              + "]");
    }
  }
}
