package io.flashvec.index;

/**
 * A point to store: id, vector and payload (a JSON object as UTF-8 bytes, or {@code null}).
 *
 * <p>Arrays are owned by the point once constructed; callers must not modify them afterwards.
 */
public record Point(PointId id, float[] vector, byte[] payload) {}
