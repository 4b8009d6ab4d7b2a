package io.flashvec.index.query;

import io.flashvec.index.filter.Filter;

/**
 * An exact search of the dense vector field {@code field}, one other than the collection's primary
 * vector, by its metric with {@code vector} (checked and prepared by the collection).
 *
 * @param filter {@code null}: all points
 * @param scoreThreshold the worst score returned ({@code null}: any)
 */
public record DenseSearchRequest(
    String field,
    float[] vector,
    int limit,
    int offset,
    Filter filter,
    Float scoreThreshold,
    boolean withPayload,
    boolean withVector) {}
