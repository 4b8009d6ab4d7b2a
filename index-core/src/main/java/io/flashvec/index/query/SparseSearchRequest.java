package io.flashvec.index.query;

import io.flashvec.index.SparseVector;
import io.flashvec.index.filter.Filter;

/**
 * A search of the sparse vector field {@code field} by dot product with {@code vector}.
 *
 * @param filter {@code null}: all points
 * @param scoreThreshold the lowest score returned ({@code null}: any)
 */
public record SparseSearchRequest(
    String field,
    SparseVector vector,
    int limit,
    int offset,
    Filter filter,
    Float scoreThreshold,
    boolean withPayload,
    boolean withVector) {}
