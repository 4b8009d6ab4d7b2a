package io.flashvec.index.query;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.index.filter.Filter;

/**
 * A page of points in id order: Qdrant's scroll, and a query without a vector.
 *
 * @param offset the first id of the page (inclusive; {@code null}: from the start)
 * @param limit points on the page, at least 1
 * @param filter only points that match ({@code null} or empty: all)
 */
public record ScrollRequest(
    PointId offset, int limit, boolean withPayload, boolean withVector, Filter filter) {

  public ScrollRequest {
    if (limit < 1) {
      throw new InvalidInputException("limit must be positive [limit=" + limit + "]");
    }
    if (filter != null && filter.isEmpty()) {
      filter = null;
    }
  }

  /** A page of every point from {@code offset} on. */
  public static ScrollRequest of(
      PointId offset, int limit, boolean withPayload, boolean withVector) {
    return new ScrollRequest(offset, limit, withPayload, withVector, null);
  }

  /** The same request from another offset. */
  public ScrollRequest from(PointId next) {
    return new ScrollRequest(next, limit, withPayload, withVector, filter);
  }
}
