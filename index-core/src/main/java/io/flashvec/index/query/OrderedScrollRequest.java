package io.flashvec.index.query;

import io.flashvec.index.filter.Filter;

/**
 * Qdrant's scroll with {@code order_by}: points ordered by the value of an integer, float or
 * datetime payload index. Checked against the collection's payload schema where it is run (the key
 * needs such an index, the limit must be positive).
 *
 * @param key the indexed payload key
 * @param ascending smallest value first (else largest)
 * @param startFrom the first value (inclusive; {@code null}: from the start); datetimes as epoch
 *     nanoseconds
 * @param filter only points that match ({@code null} or empty: all)
 */
public record OrderedScrollRequest(
    String key,
    boolean ascending,
    Double startFrom,
    int limit,
    Filter filter,
    boolean withPayload,
    boolean withVector) {

  public OrderedScrollRequest {
    if (filter != null && filter.isEmpty()) {
      filter = null;
    }
  }
}
