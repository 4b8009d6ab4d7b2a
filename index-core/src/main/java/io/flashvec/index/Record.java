package io.flashvec.index;

/**
 * A stored point as read back: {@code vector} and {@code payload} are {@code null} when not
 * requested (or absent). {@code score} is meaningful for search results only.
 */
public record Record(PointId id, float score, float[] vector, byte[] payload) {}
