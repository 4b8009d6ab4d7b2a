package io.flashvec.index.diskann;

import io.flashvec.index.segment.Segment;
import java.util.Arrays;
import java.util.List;

/**
 * The full vectors of a build's points, by build ordinal ({@code 0..size()-1}), read a block at a
 * time in ordinal order, so that a build never needs all of them on the heap. A sealed DiskANN
 * segment reads them from its mapped {@code graph.fvg} (sequentially, since its records are in
 * ordinal order), a growing segment from its heap chunks.
 */
interface VectorSource {

  /** Points the build covers. */
  int size();

  int dimension();

  /**
   * Copies the vectors of build ordinals {@code [from, from+count)} into {@code out}, {@code
   * dimension()} floats each from offset 0.
   */
  void read(int from, int count, float[] out);

  /**
   * The points {@code ords.get(i)} of {@code sources.get(i)}, concatenated in order: build ordinal
   * {@code j} is the {@code j}-th entry, as in a {@link io.flashvec.index.segment.BuildSpec}.
   */
  static VectorSource of(List<? extends Segment> sources, List<int[]> ords, int dim) {
    int[] starts = new int[sources.size() + 1];
    for (int s = 0; s < sources.size(); s++) {
      starts[s + 1] = Math.addExact(starts[s], ords.get(s).length);
    }
    return new VectorSource() {
      @Override
      public int size() {
        return starts[starts.length - 1];
      }

      @Override
      public int dimension() {
        return dim;
      }

      @Override
      public void read(int from, int count, float[] out) {
        if (from < 0 || count < 0 || from + count > size()) {
          throw new IndexOutOfBoundsException(
              "vector range out of bounds [from=" + from + ", count=" + count + "]");
        }
        if (count == 0) {
          return;
        }
        int s = Arrays.binarySearch(starts, from);
        s = s >= 0 ? s : -s - 2;
        for (int i = 0; i < count; i++) {
          int at = from + i;
          while (at >= starts[s + 1]) {
            s++;
          }
          float[] v = sources.get(s).vectorAt(ords.get(s)[at - starts[s]]);
          if (v.length != dim) {
            throw new IllegalStateException(
                "vector dimension mismatch [segment="
                    + sources.get(s).id()
                    + ", dim="
                    + v.length
                    + ", expected="
                    + dim
                    + "]");
          }
          System.arraycopy(v, 0, out, i * dim, dim);
        }
      }
    };
  }
}
