package io.flashvec.index.filter;

import io.flashvec.index.PointId;

/**
 * SipHash-2-4 (Aumasson and Bernstein, 2012), the hash that assigns a point to a {@code slice}:
 * Qdrant defines slice membership as SipHash-2-4 with a zero key over the id's canonical bytes (8
 * little-endian bytes of a numeric id, the 16 RFC 4122 bytes of a UUID), so clients can predict it
 * and it never changes. Stateless and thread-safe.
 */
public final class SipHash {

  private SipHash() {}

  /** The slice hash of a point id: SipHash-2-4, zero key, over its canonical bytes. */
  public static long ofPointId(PointId id) {
    byte[] b;
    if (id.isUuid()) {
      b = new byte[16];
      putBigEndian(b, 0, id.uuid().getMostSignificantBits());
      putBigEndian(b, 8, id.uuid().getLeastSignificantBits());
    } else {
      b = new byte[8];
      long v = id.number();
      for (int i = 0; i < 8; i++) {
        b[i] = (byte) (v >>> (8 * i));
      }
    }
    return hash24(0, 0, b);
  }

  private static void putBigEndian(byte[] b, int at, long v) {
    for (int i = 0; i < 8; i++) {
      b[at + i] = (byte) (v >>> (56 - 8 * i));
    }
  }

  /**
   * SipHash-2-4 of {@code m} with the 128-bit key {@code k0} (bytes 0–7, little-endian), {@code
   * k1}.
   */
  public static long hash24(long k0, long k1, byte[] m) {
    long v0 = k0 ^ 0x736f6d6570736575L;
    long v1 = k1 ^ 0x646f72616e646f6dL;
    long v2 = k0 ^ 0x6c7967656e657261L;
    long v3 = k1 ^ 0x7465646279746573L;
    int full = m.length & ~7;
    for (int off = 0; off <= full; off += 8) {
      long word = 0;
      if (off < full) {
        for (int i = 7; i >= 0; i--) {
          word = word << 8 | (m[off + i] & 0xFF);
        }
      } else {
        // the last word: the remaining bytes and the message length in the top byte
        word = (long) (m.length & 0xFF) << 56;
        for (int i = m.length - full - 1; i >= 0; i--) {
          word |= (long) (m[off + i] & 0xFF) << (8 * i);
        }
      }
      v3 ^= word;
      for (int r = 0; r < 2; r++) {
        v0 += v1;
        v1 = Long.rotateLeft(v1, 13) ^ v0;
        v0 = Long.rotateLeft(v0, 32);
        v2 += v3;
        v3 = Long.rotateLeft(v3, 16) ^ v2;
        v0 += v3;
        v3 = Long.rotateLeft(v3, 21) ^ v0;
        v2 += v1;
        v1 = Long.rotateLeft(v1, 17) ^ v2;
        v2 = Long.rotateLeft(v2, 32);
      }
      v0 ^= word;
    }
    v2 ^= 0xff;
    for (int r = 0; r < 4; r++) {
      v0 += v1;
      v1 = Long.rotateLeft(v1, 13) ^ v0;
      v0 = Long.rotateLeft(v0, 32);
      v2 += v3;
      v3 = Long.rotateLeft(v3, 16) ^ v2;
      v0 += v3;
      v3 = Long.rotateLeft(v3, 21) ^ v0;
      v2 += v1;
      v1 = Long.rotateLeft(v1, 17) ^ v2;
      v2 = Long.rotateLeft(v2, 32);
    }
    return v0 ^ v1 ^ v2 ^ v3;
  }
}
