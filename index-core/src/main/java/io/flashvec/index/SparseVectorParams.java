package io.flashvec.index;

/**
 * A sparse vector field's settings. There are none to choose yet: the field is searched exactly
 * (every point that has it is scored), sealed segments keep it on the heap, and its weights are
 * used as given (no IDF).
 */
public record SparseVectorParams() {

  /** The only settings there are. */
  public static final SparseVectorParams DEFAULT = new SparseVectorParams();
}
