package io.flashvec.index;

import java.util.UUID;

/**
 * A point id: an unsigned 64-bit integer or a UUID, as in Qdrant.
 *
 * <p>Ids order numbers first (unsigned), then UUIDs (by their 128 bits, unsigned); scroll pages
 * follow this order. Immutable and thread-safe.
 */
public final class PointId implements Comparable<PointId> {

  private final long hi; // UUID most significant bits; 0 for numbers
  private final long lo; // the number, or the UUID's least significant bits
  private final boolean uuid;

  private PointId(long hi, long lo, boolean uuid) {
    this.hi = hi;
    this.lo = lo;
    this.uuid = uuid;
  }

  /** A numeric id; {@code value} is read as unsigned. */
  public static PointId of(long value) {
    return new PointId(0, value, false);
  }

  public static PointId of(UUID value) {
    return new PointId(value.getMostSignificantBits(), value.getLeastSignificantBits(), true);
  }

  /**
   * Parses the string form of an id: a UUID (any case, with dashes, as 32 hex digits, in braces or
   * as {@code urn:uuid:…}) or an unsigned decimal integer below 2^64.
   */
  public static PointId parse(String s) {
    if (s == null || s.isEmpty()) {
      throw new InvalidInputException(
          "point id must be an unsigned integer or a UUID [id=" + s + "]");
    }
    if (s.length() <= 20 && s.chars().allMatch(c -> c >= '0' && c <= '9')) {
      try {
        return of(Long.parseUnsignedLong(s));
      } catch (NumberFormatException e) {
        throw new InvalidInputException(
            "point id out of range for an unsigned 64-bit integer [id=" + s + "]");
      }
    }
    String t = s;
    // the braced and URN forms Qdrant's UUID parser (Rust's uuid) takes too
    if (t.length() == 38 && t.charAt(0) == '{' && t.charAt(37) == '}') {
      t = t.substring(1, 37);
    } else if (t.length() == 45 && t.regionMatches(true, 0, "urn:uuid:", 0, 9)) {
      t = t.substring(9);
    }
    if (t.length() == 32 && t.chars().allMatch(PointId::isAsciiHex)) {
      t =
          t.substring(0, 8)
              + "-"
              + t.substring(8, 12)
              + "-"
              + t.substring(12, 16)
              + "-"
              + t.substring(16, 20)
              + "-"
              + t.substring(20);
    }
    // UUID.fromString alone would accept a sign and non-ASCII digits ("+0000000-...").
    if (t.length() == 36 && isUuidShape(t)) {
      try {
        return of(UUID.fromString(t));
      } catch (IllegalArgumentException e) {
        // fall through
      }
    }
    throw new InvalidInputException(
        "point id must be an unsigned integer or a UUID [id=" + s + "]");
  }

  private static boolean isAsciiHex(int c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  /** 8-4-4-4-12 ASCII hex digits. */
  private static boolean isUuidShape(String t) {
    for (int i = 0; i < 36; i++) {
      char c = t.charAt(i);
      boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash ? c != '-' : !isAsciiHex(c)) {
        return false;
      }
    }
    return true;
  }

  public boolean isUuid() {
    return uuid;
  }

  /** The numeric value (unsigned); only for numeric ids. */
  public long number() {
    if (uuid) {
      throw new IllegalStateException("not a numeric id [id=" + this + "]");
    }
    return lo;
  }

  public UUID uuid() {
    if (!uuid) {
      throw new IllegalStateException("not a UUID id [id=" + this + "]");
    }
    return new UUID(hi, lo);
  }

  public long hiBits() {
    return hi;
  }

  public long loBits() {
    return lo;
  }

  /** A well-mixed 64-bit hash, stable across releases (shard routing depends on it). */
  public long hash64() {
    long h = mix(lo ^ (uuid ? 0x9E3779B97F4A7C15L : 0));
    return uuid ? mix(h ^ hi) : h;
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** The shard this id belongs to among {@code shards}. */
  public int shard(int shards) {
    return (int) Long.remainderUnsigned(hash64(), shards);
  }

  @Override
  public int compareTo(PointId o) {
    if (uuid != o.uuid) {
      return uuid ? 1 : -1;
    }
    int c = Long.compareUnsigned(hi, o.hi);
    return c != 0 ? c : Long.compareUnsigned(lo, o.lo);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PointId p && p.hi == hi && p.lo == lo && p.uuid == uuid;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(hash64());
  }

  /** The unsigned decimal number, or the UUID in its canonical lower-case form. */
  @Override
  public String toString() {
    return uuid ? new UUID(hi, lo).toString() : Long.toUnsignedString(lo);
  }
}
