package io.flashvec.index;

/**
 * A sparse vector field's settings. There are none to choose yet: the field is searched exactly
 * (every point that has it is scored) and sealed segments keep it on the heap. Whether its searches
 * weight the query by IDF can change after creation, so it is a {@link CollectionTuning#sparseIdf}
 * setting, not one of these.
 */
public record SparseVectorParams() {

  /** The only settings there are. */
  public static final SparseVectorParams DEFAULT = new SparseVectorParams();
}
