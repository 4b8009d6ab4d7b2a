package io.flashvec.loadgen.dataset;

import java.nio.file.Path;

/**
 * A loaded dataset: base vectors (ids are row numbers), query vectors, exact ground truth (ids,
 * best first; {@code null} when not loaded) and the metric the ground truth was computed for.
 *
 * <p>The base is read in place when it can be (a {@link VectorFile} over {@code base.fvecs}), so a
 * dataset larger than the heap loads; the queries, a sample, are on the heap. The arrays are
 * shared, not copied; treat them as read-only. The dataset owns the base: {@link #close()} releases
 * its mapping, after which it must not be read.
 */
public record Dataset(
    String name,
    Path source,
    Vectors base,
    float[][] queries,
    int[][] groundTruth,
    Distance distance)
    implements AutoCloseable {

  /** The dimension of the vectors (0 for an empty base and no queries). */
  public int dim() {
    return base.size() > 0 ? base.dim() : queries.length > 0 ? queries[0].length : 0;
  }

  /** The number of base vectors. */
  public int size() {
    return base.size();
  }

  /** The depth of the ground truth, 0 if there is none. */
  public int groundTruthDepth() {
    return groundTruth == null || groundTruth.length == 0 ? 0 : groundTruth[0].length;
  }

  /** Releases the base's mapping, if it has one. */
  @Override
  public void close() {
    if (base instanceof VectorFile f) {
      f.close();
    }
  }
}
