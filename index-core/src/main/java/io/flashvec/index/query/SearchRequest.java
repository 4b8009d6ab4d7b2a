package io.flashvec.index.query;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.SearchParams;
import io.flashvec.index.filter.Filter;

/**
 * A nearest-neighbour query.
 *
 * @param vector the query vector (not yet normalised)
 * @param limit results to return after {@code offset}
 * @param offset results to skip
 * @param scoreThreshold only results at least this similar ({@code null}: no threshold); for
 *     Euclid, at most this distance
 * @param filter only points that match ({@code null} or empty: all)
 */
public record SearchRequest(
    float[] vector,
    int limit,
    int offset,
    Float scoreThreshold,
    SearchParams params,
    boolean withPayload,
    boolean withVector,
    Filter filter) {

  public SearchRequest {
    if (filter != null && filter.isEmpty()) {
      filter = null;
    }
    if (limit < 0) {
      throw new InvalidInputException("limit must not be negative [limit=" + limit + "]");
    }
    if (offset < 0) {
      throw new InvalidInputException("offset must not be negative [offset=" + offset + "]");
    }
    if (params == null) {
      params = SearchParams.DEFAULT;
    }
  }
}
