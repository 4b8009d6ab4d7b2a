package io.flashvec.index.collection;

import io.flashvec.index.UpsertMode;
import io.flashvec.index.filter.Filter;

/**
 * Which points of an upsert are written, decided per point against the stored version under the
 * shard's write lock (Qdrant's {@code update_mode} and {@code update_filter}).
 *
 * @param mode whether new points, existing points or both are written
 * @param updateFilter {@code null}, or the filter an existing point must match to be overwritten;
 *     new points are not tested against it
 */
public record UpsertCondition(UpsertMode mode, Filter updateFilter) {

  /** Every point written, as a plain upsert. */
  public static final UpsertCondition ALWAYS = new UpsertCondition(UpsertMode.UPSERT, null);

  public UpsertCondition {
    if (mode == null) {
      throw new IllegalArgumentException("mode");
    }
  }

  /** Whether every point is written (no test against stored versions is needed). */
  public boolean always() {
    return mode == UpsertMode.UPSERT && updateFilter == null;
  }
}
