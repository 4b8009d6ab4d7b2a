package io.flashvec.index;

import java.util.Arrays;

/**
 * A sparse vector: strictly ascending {@code indices} (each an unsigned 32-bit value, held as the
 * int of the same bits) with one {@code values} entry each. Arrays are owned by the vector once
 * constructed; callers must not modify them afterwards.
 */
public record SparseVector(int[] indices, float[] values) {

  public SparseVector {
    if (indices.length != values.length) {
      throw new IllegalArgumentException(
          "sparse vector arrays differ in length [indices="
              + indices.length
              + ", values="
              + values.length
              + "]");
    }
  }

  /**
   * A validated sparse vector of the given indices and values, sorted by index.
   *
   * @param what the request path of the vector for the messages, e.g. {@code points[0].vector.?}
   * @throws InvalidInputException when the lengths differ, an index repeats or is not a u32, or a
   *     value is not finite
   */
  public static SparseVector of(long[] indices, float[] values, String what) {
    if (indices.length != values.length) {
      throw new InvalidInputException(
          "Validation error in JSON body: ["
              + what
              + ".values: Validation error: must be the same length as indices ]");
    }
    int n = indices.length;
    long[] keyed = new long[n];
    for (int i = 0; i < n; i++) {
      long idx = indices[i];
      if (idx < 0 || idx > 0xFFFF_FFFFL) {
        throw new InvalidInputException(
            "Wrong input: sparse vector index out of range [" + what + ", index=" + idx + "]");
      }
      if (!Float.isFinite(values[i])) {
        throw new InvalidInputException(
            "Wrong input: sparse vector contains a non-finite value ["
                + what
                + ", index="
                + idx
                + ", value="
                + values[i]
                + "]");
      }
      keyed[i] = idx << 32 | i; // sort by index, remember the position
    }
    Arrays.sort(keyed);
    int[] outIdx = new int[n];
    float[] outVal = new float[n];
    for (int i = 0; i < n; i++) {
      long idx = keyed[i] >>> 32;
      if (i > 0 && idx == keyed[i - 1] >>> 32) {
        throw new InvalidInputException(
            "Validation error in JSON body: ["
                + what
                + ".indices: Validation error: must be unique ]");
      }
      outIdx[i] = (int) idx;
      outVal[i] = values[(int) keyed[i]];
    }
    return new SparseVector(outIdx, outVal);
  }

  /** Terms. */
  public int size() {
    return indices.length;
  }

  /** The index at {@code i} as the unsigned value it stands for. */
  public long index(int i) {
    return Integer.toUnsignedLong(indices[i]);
  }

  /** The dot product over the common indices, summed in ascending index order (0 when none). */
  public float dot(SparseVector other) {
    int[] a = indices;
    int[] b = other.indices;
    int i = 0;
    int j = 0;
    float sum = 0f;
    while (i < a.length && j < b.length) {
      int c = Integer.compareUnsigned(a[i], b[j]);
      if (c == 0) {
        sum += values[i] * other.values[j];
        i++;
        j++;
      } else if (c < 0) {
        i++;
      } else {
        j++;
      }
    }
    return sum;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SparseVector s
        && Arrays.equals(indices, s.indices)
        && Arrays.equals(values, s.values);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(indices) + Arrays.hashCode(values);
  }

  @Override
  public String toString() {
    return "SparseVector[indices="
        + Arrays.toString(indices)
        + ", values="
        + Arrays.toString(values)
        + "]";
  }
}
