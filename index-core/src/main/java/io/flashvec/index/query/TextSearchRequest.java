package io.flashvec.index.query;

import io.flashvec.index.filter.Filter;

/**
 * A BM25 full-text query of one text-indexed payload key.
 *
 * @param field the payload key (it must have a text index)
 * @param text the query text, tokenised as the index tokenises
 * @param limit hits to return, best first
 * @param filter only points that match ({@code null} or empty: all)
 */
public record TextSearchRequest(
    String field, String text, int limit, Filter filter, boolean withPayload, boolean withVector) {

  public TextSearchRequest {
    if (filter != null && filter.isEmpty()) {
      filter = null;
    }
  }
}
