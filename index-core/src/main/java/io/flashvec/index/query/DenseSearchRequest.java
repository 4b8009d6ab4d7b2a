package io.flashvec.index.query;

import io.flashvec.index.filter.Filter;

/**
 * A search of the dense vector field {@code field}, one other than the collection's primary vector,
 * by its metric with {@code vector} (checked and prepared by the collection): through the field's
 * graphs where sealed segments have them, else an exact scan.
 *
 * @param filter {@code null}: all points
 * @param scoreThreshold the worst score returned ({@code null}: any)
 * @param params the graph searches' list ({@code 0}: the field's {@code ef_construct}; at least the
 *     limit plus offset), the candidates they rescore with full vectors ({@code rerankK}, {@code
 *     0}: {@code 2k + 10}), and {@code exact}: scan every point that has the field, graphs or not
 */
public record DenseSearchRequest(
    String field,
    float[] vector,
    int limit,
    int offset,
    Filter filter,
    Float scoreThreshold,
    boolean withPayload,
    boolean withVector,
    io.flashvec.index.SearchParams params) {

  public DenseSearchRequest {
    if (params == null) {
      params = io.flashvec.index.SearchParams.DEFAULT;
    }
  }

  /** A search with the default search list, through the graphs. */
  public DenseSearchRequest(
      String field,
      float[] vector,
      int limit,
      int offset,
      Filter filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    this(field, vector, limit, offset, filter, scoreThreshold, withPayload, withVector, null);
  }
}
