package io.flashvec.index;

import io.flashvec.storage.FsyncPolicy;

/**
 * A collection's settings that may change after creation ({@code PATCH /collections/{name}}), for
 * bulk loads: Qdrant's {@code optimizers_config.indexing_threshold} and a WAL fsync override.
 *
 * @param indexingThreshold {@code 0}: defer index builds (sealed segments stay in memory, searched
 *     exactly, and the WAL is not truncated) until it is raised; {@code -1}: the server default
 *     (index every sealed segment); any other value: index normally
 * @param fsyncPolicy WAL fsync policy of this collection, or {@code null} for the server's
 */
public record CollectionTuning(int indexingThreshold, FsyncPolicy fsyncPolicy) {

  public static final CollectionTuning DEFAULT = new CollectionTuning(-1, null);

  public CollectionTuning {
    if (indexingThreshold < -1) {
      throw new InvalidInputException(
          "indexing_threshold must not be negative [indexing_threshold=" + indexingThreshold + "]");
    }
  }

  /** Whether index builds wait (bulk load). */
  public boolean deferBuilds() {
    return indexingThreshold == 0;
  }

  /** This tuning with the non-null parts of {@code patch} applied. */
  public CollectionTuning merge(Integer threshold, FsyncPolicy policy) {
    return new CollectionTuning(
        threshold != null ? threshold : indexingThreshold, policy != null ? policy : fsyncPolicy);
  }
}
