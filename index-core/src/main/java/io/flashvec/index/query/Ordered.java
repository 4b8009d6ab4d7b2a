package io.flashvec.index.query;

import io.flashvec.index.Record;

/** A point of a scroll ordered by a payload index ({@code order_by}), with its order value. */
public record Ordered(Record record, double value) {}
