package io.flashvec.loadgen.dataset;

import java.nio.file.Path;

/**
 * A loaded dataset: base vectors (ids are row numbers), query vectors, exact ground truth (ids,
 * best first; {@code null} when not loaded) and the metric the ground truth was computed for.
 *
 * <p>The arrays are shared, not copied; treat them as read-only.
 */
public record Dataset(
    String name,
    Path source,
    float[][] base,
    float[][] queries,
    int[][] groundTruth,
    Distance distance) {

  /** The dimension of the vectors (0 for an empty base). */
  public int dim() {
    return base.length > 0 ? base[0].length : queries.length > 0 ? queries[0].length : 0;
  }

  /** The number of base vectors. */
  public int size() {
    return base.length;
  }

  /** The depth of the ground truth, 0 if there is none. */
  public int groundTruthDepth() {
    return groundTruth == null || groundTruth.length == 0 ? 0 : groundTruth[0].length;
  }
}
