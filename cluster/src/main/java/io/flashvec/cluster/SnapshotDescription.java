package io.flashvec.cluster;

/**
 * A snapshot as Qdrant lists it.
 *
 * @param name the file name, unique per collection
 * @param creationTime when it was taken, ISO 8601 without a zone (UTC), as Qdrant writes it
 * @param size bytes
 * @param checksum the SHA-256 of the file, in hex
 */
public record SnapshotDescription(String name, String creationTime, long size, String checksum) {}
