package io.flashvec.index.shard;

import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary bodies of the shard's WAL records (little-endian).
 *
 * <pre>
 * id      := u8 kind (0 number, 1 uuid) | u64 lo | [u64 hi if uuid]
 * UPSERT  := u32 count | count * (id | u32 dim | dim * f32 | i32 payloadLen (-1: none) | bytes)
 * DELETE  := u32 count | count * id
 * </pre>
 *
 * Operation codes are part of the on-disk format: never renumber them.
 */
public final class WalCodec {

  public static final byte OP_UPSERT = 1;
  public static final byte OP_DELETE = 2;

  private WalCodec() {}

  public static byte[] encodeUpsert(List<Point> points) {
    int size = 4;
    for (Point p : points) {
      size += idBytes(p.id()) + 4 + 4 * p.vector().length + 4;
      if (p.payload() != null) {
        size += p.payload().length;
      }
    }
    ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(points.size());
    for (Point p : points) {
      putId(b, p.id());
      float[] v = p.vector();
      b.putInt(v.length);
      b.asFloatBuffer().put(v);
      b.position(b.position() + 4 * v.length);
      byte[] payload = p.payload();
      if (payload == null) {
        b.putInt(-1);
      } else {
        b.putInt(payload.length).put(payload);
      }
    }
    return b.array();
  }

  public static List<Point> decodeUpsert(ByteBuffer b) {
    int n = b.getInt();
    List<Point> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      PointId id = getId(b);
      float[] v = new float[b.getInt()];
      b.asFloatBuffer().get(v);
      b.position(b.position() + 4 * v.length);
      int len = b.getInt();
      byte[] payload = null;
      if (len >= 0) {
        payload = new byte[len];
        b.get(payload);
      }
      out.add(new Point(id, v, payload));
    }
    return out;
  }

  public static byte[] encodeDelete(List<PointId> ids) {
    int size = 4;
    for (PointId id : ids) {
      size += idBytes(id);
    }
    ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(ids.size());
    for (PointId id : ids) {
      putId(b, id);
    }
    return b.array();
  }

  public static List<PointId> decodeDelete(ByteBuffer b) {
    int n = b.getInt();
    List<PointId> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(getId(b));
    }
    return out;
  }

  private static int idBytes(PointId id) {
    return id.isUuid() ? 17 : 9;
  }

  private static void putId(ByteBuffer b, PointId id) {
    if (id.isUuid()) {
      b.put((byte) 1).putLong(id.loBits()).putLong(id.hiBits());
    } else {
      b.put((byte) 0).putLong(id.loBits());
    }
  }

  private static PointId getId(ByteBuffer b) {
    byte kind = b.get();
    long lo = b.getLong();
    if (kind == 0) {
      return PointId.of(lo);
    }
    if (kind == 1) {
      long hi = b.getLong();
      return PointId.of(new java.util.UUID(hi, lo));
    }
    throw new IllegalArgumentException("unknown point id kind in WAL record [kind=" + kind + "]");
  }
}
