package io.flashvec.loadgen.dataset;

/**
 * A read-only, random-access sequence of vectors of one dimension, addressed by row number: the
 * base set of a dataset. A large base is a {@link VectorFile} (mapped, never copied onto the heap
 * as a whole); small or converted sets are {@link #onHeap on-heap} rows.
 *
 * <p>Implementations are safe for concurrent reads.
 */
public interface Vectors {
  /** The number of vectors. */
  int size();

  /** The dimension (0 when there are no vectors and the dimension is unknown). */
  int dim();

  /** Copies row {@code row} into {@code dst[off, off + dim)}. */
  void get(int row, float[] dst, int off);

  /** Row {@code row} as a new array. */
  default float[] get(int row) {
    float[] v = new float[dim()];
    get(row, v, 0);
    return v;
  }

  /**
   * Copies rows {@code [from, to)} into {@code dst} back to back ({@code dim} floats each),
   * starting at index 0.
   */
  default void get(int from, int to, float[] dst) {
    int d = dim();
    for (int r = from; r < to; r++) {
      get(r, dst, (r - from) * d);
    }
  }

  /** The rows of {@code rows}, shared, not copied; every row must have the same length. */
  static Vectors onHeap(float[][] rows) {
    return new OnHeap(rows);
  }

  /** Vectors held as {@code float[][]} rows. */
  record OnHeap(float[][] rows) implements Vectors {
    /** Checks that every row has the first row's length. */
    public OnHeap {
      for (int i = 1; i < rows.length; i++) {
        if (rows[i].length != rows[0].length) {
          throw new IllegalArgumentException(
              "rows differ in dimension [row="
                  + i
                  + ", dim="
                  + rows[i].length
                  + ", expected="
                  + rows[0].length
                  + "]");
        }
      }
    }

    @Override
    public int size() {
      return rows.length;
    }

    @Override
    public int dim() {
      return rows.length == 0 ? 0 : rows[0].length;
    }

    @Override
    public void get(int row, float[] dst, int off) {
      float[] v = rows[row];
      System.arraycopy(v, 0, dst, off, v.length);
    }
  }
}
