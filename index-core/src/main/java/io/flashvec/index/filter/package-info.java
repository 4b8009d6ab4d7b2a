/**
 * Payload filters in Qdrant's language: an immutable {@link io.flashvec.index.filter.Filter} tree
 * parsed from JSON by {@link io.flashvec.index.filter.FilterParser}, evaluated against a point's id
 * and payload bytes by {@link io.flashvec.index.filter.FilterEvaluator}, turned into per-segment
 * {@link io.flashvec.index.segment.AcceptedOrdinals}, and planned (exact scan or filtered graph
 * search) by {@link io.flashvec.index.filter.FilterPlanner}. {@link
 * io.flashvec.index.filter.StoredPayloads} makes a stored payload readable before anything parses
 * it. The package is below {@code payload}, {@code segment} and {@code query}, which use it.
 */
package io.flashvec.index.filter;
