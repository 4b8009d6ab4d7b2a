package io.flashvec.index.query;

import io.flashvec.index.SparseVector;
import io.flashvec.index.filter.Filter;

/**
 * A search of the sparse vector field {@code field} by dot product with {@code vector}.
 *
 * @param filter {@code null}: all points
 * @param scoreThreshold the lowest score returned ({@code null}: any)
 * @param idfCorpus for a field weighted by IDF, the points whose statistics it counts (Qdrant's
 *     {@code params.idf.corpus}); {@code null}: all the collection's points
 */
public record SparseSearchRequest(
    String field,
    SparseVector vector,
    int limit,
    int offset,
    Filter filter,
    Float scoreThreshold,
    boolean withPayload,
    boolean withVector,
    Filter idfCorpus) {

  /** A search whose IDF, if any, counts all the collection's points. */
  public SparseSearchRequest(
      String field,
      SparseVector vector,
      int limit,
      int offset,
      Filter filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    this(field, vector, limit, offset, filter, scoreThreshold, withPayload, withVector, null);
  }
}
