package io.flashvec.cluster.query;

import java.util.Objects;

/**
 * Which replica: shard {@code shard} of collection {@code collection}. On a query node's disk the
 * replica is the directory {@code <data>/collections/<collection>.s<shard>} ({@link #dirName()}).
 */
public record ReplicaKey(String collection, int shard) {

  private static final String SEPARATOR = ".s";

  public ReplicaKey {
    Objects.requireNonNull(collection, "collection");
    if (shard < 0) {
      throw new IllegalArgumentException("shard must not be negative [shard=" + shard + "]");
    }
  }

  /**
   * The name of the replica's directory and metadata entry: one-to-one, since the shard number
   * always ends it ({@code a.s1} shard 0 is {@code a.s1.s0}, {@code a} shard 1 is {@code a.s1}).
   */
  public String dirName() {
    return collection + SEPARATOR + shard;
  }

  /** The key of a directory {@link #dirName()} named. */
  public static ReplicaKey parse(String dirName) {
    int at = dirName.lastIndexOf(SEPARATOR);
    String digits = at < 0 ? "" : dirName.substring(at + SEPARATOR.length());
    if (at <= 0 || digits.isEmpty() || !digits.chars().allMatch(Character::isDigit)) {
      throw new IllegalArgumentException("not a replica directory name [name=" + dirName + "]");
    }
    return new ReplicaKey(dirName.substring(0, at), Integer.parseInt(digits));
  }

  @Override
  public String toString() {
    return collection + "/" + shard;
  }
}
