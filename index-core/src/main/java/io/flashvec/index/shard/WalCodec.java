package io.flashvec.index.shard;

import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.SparseVector;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Binary bodies of the shard's WAL records (little-endian).
 *
 * <pre>
 * id      := u8 kind (0 number, 1 uuid) | u64 lo | [u64 hi if uuid]
 * UPSERT  := u32 count | count * (id | u32 dim | dim * f32 | i32 payloadLen (-1: none) | bytes)
 * DELETE  := u32 count | count * id
 * UPSERT_VECTORS := u32 count | count * (id | u8 hasDense | [u32 dim | dim * f32 if hasDense]
 *                   | u16 sparseCount | sparseCount * (u16 nameLen | utf8 name | u32 nnz
 *                   | nnz * u32 index | nnz * f32 value) | i32 payloadLen | bytes)
 * UPSERT_NAMED := as UPSERT_VECTORS, with after each point's sparse vectors
 *                   u16 denseCount | denseCount * (u16 nameLen | utf8 name | u32 dim | dim * f32)
 * UPSERT_MULTI := as UPSERT_NAMED, each dense vector tagged with its kind:
 *                   u16 nameLen | utf8 name | u8 kind | kind 0: u32 dim | dim * f32
 *                                                     | kind 1: u32 dim | u32 count | count * dim * f32
 * </pre>
 *
 * {@link #OP_UPSERT_VECTORS} is written only for a batch with a point that lacks the primary dense
 * vector or has a sparse one, {@link #OP_UPSERT_NAMED} only for one with a point that has another
 * dense vector, {@link #OP_UPSERT_MULTI} only for one with a point that has a multivector (kind 1:
 * {@code count} vectors of {@code dim}, back to back) ({@link #upsertOp}); other batches keep
 * {@link #OP_UPSERT}. Inside FlashVec a multivector is one array, so each operation decodes to the
 * same points; the tag keeps the record self-describing, and a binary that predates multivectors
 * stops at the unknown operation rather than reading a multivector as one long vector.
 *
 * <p>Operation codes are part of the on-disk format: never renumber them.
 */
public final class WalCodec {

  public static final byte OP_UPSERT = 1;
  public static final byte OP_DELETE = 2;
  public static final byte OP_UPSERT_VECTORS = 3;
  public static final byte OP_UPSERT_NAMED = 4;
  public static final byte OP_UPSERT_MULTI = 5;

  private static final byte ONE_VECTOR = 0;
  private static final byte MULTIVECTOR = 1;

  /** The operation an upsert of {@code points} is written with, in a shard without multivectors. */
  public static byte upsertOp(List<Point> points) {
    return upsertOp(points, Map.of());
  }

  /**
   * The operation an upsert of {@code points} is written with, in a shard whose multivector fields
   * are {@code multivectors} (name to the size of each vector).
   */
  public static byte upsertOp(List<Point> points, Map<String, Integer> multivectors) {
    byte op = OP_UPSERT;
    for (Point p : points) {
      if (!p.dense().isEmpty()) {
        if (!multivectors.isEmpty()) {
          for (String name : p.dense().keySet()) {
            if (multivectors.containsKey(name)) {
              return OP_UPSERT_MULTI;
            }
          }
        }
        op = OP_UPSERT_NAMED;
      } else if (p.hasExtraVectors() && op == OP_UPSERT) {
        op = OP_UPSERT_VECTORS;
      }
    }
    return op;
  }

  /** The body of an upsert of {@code points} for {@link #upsertOp}, without multivectors. */
  public static byte[] encodeUpsertAny(List<Point> points) {
    return encodeUpsertAny(points, Map.of());
  }

  /** The body of an upsert of {@code points} for {@link #upsertOp(List, Map)}. */
  public static byte[] encodeUpsertAny(List<Point> points, Map<String, Integer> multivectors) {
    return switch (upsertOp(points, multivectors)) {
      case OP_UPSERT -> encodeUpsert(points);
      case OP_UPSERT_VECTORS -> encodeUpsertVectors(points, false);
      case OP_UPSERT_NAMED -> encodeUpsertVectors(points, true);
      default -> encodeUpsertVectors(points, true, multivectors);
    };
  }

  /** {@link #OP_UPSERT_VECTORS}'s body. */
  public static byte[] encodeUpsertVectors(List<Point> points) {
    return encodeUpsertVectors(points, false);
  }

  /** {@link #OP_UPSERT_VECTORS}'s body, or with {@code named} {@link #OP_UPSERT_NAMED}'s. */
  static byte[] encodeUpsertVectors(List<Point> points, boolean named) {
    return encodeUpsertVectors(points, named, null);
  }

  /**
   * {@link #OP_UPSERT_VECTORS}'s body, with {@code named} {@link #OP_UPSERT_NAMED}'s, or with
   * {@code multivectors} (not null) {@link #OP_UPSERT_MULTI}'s.
   */
  static byte[] encodeUpsertVectors(
      List<Point> points, boolean named, Map<String, Integer> multivectors) {
    boolean tagged = multivectors != null;
    long size = 4;
    for (Point p : points) {
      size += idBytes(p.id()) + 1 + 2 + 4;
      if (p.vector() != null) {
        size += 4 + 4L * p.vector().length;
      }
      for (var e : p.sparse().entrySet()) {
        size +=
            2 + e.getKey().getBytes(StandardCharsets.UTF_8).length + 4 + 8L * e.getValue().size();
      }
      if (named) {
        size += 2;
        for (var e : p.dense().entrySet()) {
          size +=
              2 + e.getKey().getBytes(StandardCharsets.UTF_8).length + 4 + 4L * e.getValue().length;
          if (tagged) {
            size += multivectors.containsKey(e.getKey()) ? 5 : 1;
          }
        }
      }
      if (p.payload() != null) {
        size += p.payload().length;
      }
    }
    if (size > Integer.MAX_VALUE - 64) {
      throw new IllegalArgumentException("upsert record too large [bytes=" + size + "]");
    }
    ByteBuffer b = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(points.size());
    for (Point p : points) {
      putId(b, p.id());
      float[] v = p.vector();
      if (v == null) {
        b.put((byte) 0);
      } else {
        b.put((byte) 1).putInt(v.length);
        b.asFloatBuffer().put(v);
        b.position(b.position() + 4 * v.length);
      }
      // sorted by name: the same points always encode to the same bytes
      var names = new java.util.TreeMap<>(p.sparse());
      b.putShort((short) names.size());
      for (var e : names.entrySet()) {
        byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
        b.putShort((short) name.length).put(name);
        SparseVector sv = e.getValue();
        b.putInt(sv.size());
        for (int idx : sv.indices()) {
          b.putInt(idx);
        }
        for (float x : sv.values()) {
          b.putFloat(x);
        }
      }
      if (named) {
        var dense = new java.util.TreeMap<>(p.dense());
        b.putShort((short) dense.size());
        for (var e : dense.entrySet()) {
          byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
          b.putShort((short) name.length).put(name);
          float[] dv = e.getValue();
          Integer multiDim = tagged ? multivectors.get(e.getKey()) : null;
          if (multiDim != null) {
            if (dv.length == 0 || dv.length % multiDim != 0) {
              throw new IllegalArgumentException(
                  "multivector not a whole number of vectors [field="
                      + e.getKey()
                      + ", dim="
                      + multiDim
                      + ", values="
                      + dv.length
                      + "]");
            }
            b.put(MULTIVECTOR).putInt(multiDim).putInt(dv.length / multiDim);
          } else {
            if (tagged) {
              b.put(ONE_VECTOR);
            }
            b.putInt(dv.length);
          }
          b.asFloatBuffer().put(dv);
          b.position(b.position() + 4 * dv.length);
        }
      }
      putPayload(b, p.payload());
    }
    return b.array();
  }

  /** Decodes {@link #OP_UPSERT_VECTORS}'s body. */
  public static List<Point> decodeUpsertVectors(ByteBuffer b) {
    return decodeUpsertVectors(b, false);
  }

  /**
   * Decodes {@link #OP_UPSERT_VECTORS}'s body, or with {@code named} {@link #OP_UPSERT_NAMED}'s.
   */
  public static List<Point> decodeUpsertVectors(ByteBuffer b, boolean named) {
    return decodeUpsertVectors(b, named, false);
  }

  /** Decodes {@link #OP_UPSERT_MULTI}'s body: the points with their multivectors as one array. */
  public static List<Point> decodeUpsertMulti(ByteBuffer b) {
    return decodeUpsertVectors(b, true, true);
  }

  private static List<Point> decodeUpsertVectors(ByteBuffer b, boolean named, boolean tagged) {
    int n = b.getInt();
    List<Point> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      PointId id = getId(b);
      float[] v = null;
      if (b.get() != 0) {
        v = new float[b.getInt()];
        b.asFloatBuffer().get(v);
        b.position(b.position() + 4 * v.length);
      }
      int fields = Short.toUnsignedInt(b.getShort());
      Map<String, SparseVector> sparse = fields == 0 ? Map.of() : new HashMap<>();
      for (int f = 0; f < fields; f++) {
        byte[] name = new byte[Short.toUnsignedInt(b.getShort())];
        b.get(name);
        int nnz = b.getInt();
        int[] idx = new int[nnz];
        float[] val = new float[nnz];
        for (int j = 0; j < nnz; j++) {
          idx[j] = b.getInt();
        }
        for (int j = 0; j < nnz; j++) {
          val[j] = b.getFloat();
        }
        sparse.put(new String(name, StandardCharsets.UTF_8), new SparseVector(idx, val));
      }
      Map<String, float[]> dense = Map.of();
      if (named) {
        int count = Short.toUnsignedInt(b.getShort());
        dense = count == 0 ? Map.of() : new HashMap<>();
        for (int f = 0; f < count; f++) {
          byte[] name = new byte[Short.toUnsignedInt(b.getShort())];
          b.get(name);
          int length;
          byte kind = tagged ? b.get() : ONE_VECTOR;
          if (kind == MULTIVECTOR) {
            length = Math.multiplyExact(b.getInt(), b.getInt());
          } else if (kind == ONE_VECTOR) {
            length = b.getInt();
          } else {
            throw new IllegalArgumentException(
                "unknown dense vector kind in WAL record [kind=" + kind + "]");
          }
          float[] dv = new float[length];
          b.asFloatBuffer().get(dv);
          b.position(b.position() + 4 * dv.length);
          dense.put(new String(name, StandardCharsets.UTF_8), dv);
        }
      }
      int len = b.getInt();
      byte[] payload = null;
      if (len >= 0) {
        payload = new byte[len];
        b.get(payload);
      }
      out.add(new Point(id, v, payload, sparse, dense));
    }
    return out;
  }

  private WalCodec() {}

  /** A payload as {@code i32 length | bytes}, or {@code -1} for none. */
  private static void putPayload(ByteBuffer b, byte[] payload) {
    if (payload == null) {
      b.putInt(-1);
    } else {
      b.putInt(payload.length).put(payload);
    }
  }

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
      putPayload(b, p.payload());
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
