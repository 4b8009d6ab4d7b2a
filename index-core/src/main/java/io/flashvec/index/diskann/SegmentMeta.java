package io.flashvec.index.diskann;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.MappedFile;
import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.Objects;
import java.util.UUID;

/**
 * A segment's metadata file ({@code meta.fvs}): its shape, the lengths and checksums of its graph
 * and PQ files, and each point's id and payload.
 *
 * <p>Version 5 keeps ids and payload offsets in fixed-width columns, so an open segment maps the
 * file and reads an id or a payload where it lies: they cost page cache when read, not heap, and
 * the file is streamed, never held whole, so its size has no 2 GiB limit. Its body (little-endian):
 *
 * <pre>
 *   u32 count, u32 dim, u8 distance, u64 graph length, u32 graph CRC, u64 PQ length, u32 PQ CRC
 *   u8  flags: 1 the segment has its vectors file, 2 an id is a UUID, 4 a point has a payload,
 *              8 no graph (dim 0: no graph or PQ file)
 *   u64 payload bytes (the payloads' lengths summed)
 *   i64 idLo[count]                        numeric ids, or the low 64 bits of UUIDs
 *   i64 idHi[count], u64 uuid[ceil(count/64)]   with flag 2: high bits and which ordinals are UUIDs
 *   i64 payloadAt[count]                   with flag 4: file offset of each point's record
 *   records[count]                         with flag 4: i32 length (-1: none), then the bytes
 * </pre>
 *
 * <p>Versions 2–4 (a variable-width record per id, then a length-prefixed payload per point) are
 * still read; their ids and payload offsets are copied onto the heap (8–24 bytes a point). Payloads
 * the collection keeps in memory ({@code on_disk_payload: false}) are copied onto the heap in
 * either version. Thread-safe once open.
 */
final class SegmentMeta implements Closeable {

  static final String FORMAT = "segment-meta";

  /**
   * Version 2: ids and payloads as records; version 3 adds a byte saying there is a vectors file.
   */
  static final int VERSION_RECORDS = 2;

  static final int VERSION_RECORDS_VECTORS = 3;

  /** Version 3's body with dimension 0 and no graph or PQ file. */
  static final int VERSION_RECORDS_NO_GRAPH = 4;

  /** Fixed-width columns, mapped at open. */
  static final int VERSION_COLUMNS = 5;

  static final int FLAG_VECTORS = 1;
  static final int FLAG_UUIDS = 2;
  static final int FLAG_PAYLOADS = 4;
  static final int FLAG_NO_GRAPH = 8;

  /** count, dim, distance, graph length and CRC, PQ length and CRC. */
  private static final int SHAPE_BYTES = 4 + 4 + 1 + 8 + 4 + 8 + 4;

  private static final ValueLayout.OfInt LE_INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong LE_LONG =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** What the file says about the segment's other files. */
  record Shape(
      int count,
      int dim,
      Distance distance,
      long graphLength,
      int graphCrc,
      long pqLength,
      int pqCrc,
      boolean noGraph,
      boolean vectorsFile) {}

  private final Shape shape;
  private final int version;

  /** The file, mapped; null when nothing is read from it after open. */
  private final MappedFile map;

  // version 5: file offsets of the columns (-1: absent)
  private final long idLoAt;
  private final long idHiAt;
  private final long payloadAtAt;

  // versions 2-4: copies
  private final long[] idLo;
  private final long[] idHi;
  private final long[] payloadAt;

  /** Which ordinals hold UUIDs; null when none does. */
  private final BitSet uuidOrds;

  /** Payloads copied onto the heap (null entries for none), or null. */
  private final byte[][] heapPayloads;

  private final long heapPayloadBytes;
  private final long payloadBytes;
  private final long fileBytes;
  private final boolean anyPayload;

  private SegmentMeta(
      Shape shape,
      int version,
      MappedFile map,
      long idLoAt,
      long idHiAt,
      long payloadAtAt,
      long[] idLo,
      long[] idHi,
      long[] payloadAt,
      BitSet uuidOrds,
      byte[][] heapPayloads,
      long payloadBytes,
      long fileBytes,
      boolean anyPayload) {
    this.shape = shape;
    this.version = version;
    this.map = map;
    this.idLoAt = idLoAt;
    this.idHiAt = idHiAt;
    this.payloadAtAt = payloadAtAt;
    this.idLo = idLo;
    this.idHi = idHi;
    this.payloadAt = payloadAt;
    this.uuidOrds = uuidOrds;
    this.heapPayloads = heapPayloads;
    this.heapPayloadBytes = heapBytes(heapPayloads);
    this.payloadBytes = payloadBytes;
    this.fileBytes = fileBytes;
    this.anyPayload = anyPayload;
  }

  /**
   * Writes the metadata of the first {@code n} points of {@code ids} and {@code payloads} (version
   * 5) to {@code path}, streamed: temp file, fsync, rename. {@code graphCrc} and {@code pqCrc} are
   * {@code {crc, length}} pairs ({@code {0, 0}} when {@code dim} is 0).
   */
  static void write(
      FileIO io,
      Path path,
      int segmentId,
      int n,
      int dim,
      Distance distance,
      long[] graphCrc,
      long[] pqCrc,
      PointId[] ids,
      byte[][] payloads,
      boolean vectorsFile)
      throws IOException {
    boolean uuids = false;
    boolean anyPayload = false;
    long payloadBytes = 0;
    for (int i = 0; i < n; i++) {
      uuids |= ids[i].isUuid();
      if (payloads[i] != null) {
        anyPayload = true;
        payloadBytes += payloads[i].length;
      }
    }
    int flags =
        (vectorsFile ? FLAG_VECTORS : 0)
            | (uuids ? FLAG_UUIDS : 0)
            | (anyPayload ? FLAG_PAYLOADS : 0)
            | (dim == 0 ? FLAG_NO_GRAPH : 0);
    try (var w = ChecksummedFile.Writer.create(io, path, FORMAT, VERSION_COLUMNS, segmentId)) {
      w.putInt(n).putInt(dim).putByte((byte) distance.ordinal());
      w.putLong(graphCrc[1]).putInt((int) graphCrc[0]).putLong(pqCrc[1]).putInt((int) pqCrc[0]);
      w.putByte((byte) flags).putLong(payloadBytes);
      for (int i = 0; i < n; i++) {
        w.putLong(ids[i].loBits());
      }
      if (uuids) {
        BitSet bits = new BitSet(n);
        for (int i = 0; i < n; i++) {
          w.putLong(ids[i].isUuid() ? ids[i].hiBits() : 0);
          if (ids[i].isUuid()) {
            bits.set(i);
          }
        }
        long[] words = java.util.Arrays.copyOf(bits.toLongArray(), (n + 63) >>> 6);
        w.putLongs(words, 0, words.length);
      }
      if (anyPayload) {
        long at = w.bodyOffset() + w.bodyBytes() + 8L * n;
        for (int i = 0; i < n; i++) {
          w.putLong(at);
          at += 4 + (payloads[i] == null ? 0 : payloads[i].length);
        }
        for (int i = 0; i < n; i++) {
          byte[] p = payloads[i];
          if (p == null) {
            w.putInt(-1);
          } else {
            w.putInt(p.length).put(p, 0, p.length);
          }
        }
      }
      w.commit();
    }
  }

  /**
   * Opens and verifies {@code path} (its checksum over the whole file, streamed) and maps it when
   * ids or payloads are to be read from it.
   *
   * @throws CorruptFileException if it is damaged or belongs to another segment
   */
  static SegmentMeta open(FileIO io, Path path, int segmentId, boolean payloadsOnHeap)
      throws IOException {
    ChecksummedFile.Reader r;
    try {
      r = ChecksummedFile.Reader.open(io, path, FORMAT, VERSION_RECORDS, VERSION_COLUMNS);
    } catch (NoSuchFileException e) {
      throw new CorruptFileException("segment metadata is missing", path, e);
    }
    try (r) {
      if (r.segmentId() != segmentId) {
        throw new CorruptFileException(
            "segment id mismatch [expected=" + segmentId + ", got=" + r.segmentId() + "]", path);
      }
      long fileBytes = r.bodyOffset() + r.remaining() + 16;
      return r.version() == VERSION_COLUMNS
          ? openColumns(io, path, r, payloadsOnHeap, fileBytes)
          : openRecords(io, path, r, payloadsOnHeap, fileBytes);
    }
  }

  /** The fields every version starts with, as read. */
  private record Fields(
      int count, int dim, int distance, long graphLen, int graphCrc, long pqLen, int pqCrc) {

    static Fields read(ChecksummedFile.Reader r) throws IOException {
      return new Fields(
          r.getInt(), r.getInt(), r.get(), r.getLong(), r.getInt(), r.getLong(), r.getInt());
    }

    Shape check(Path path, int version, boolean noGraph, boolean vectorsFile)
        throws CorruptFileException {
      if (count < 0 || dim < 0 || distance < 0 || distance >= Distance.values().length) {
        throw new CorruptFileException(
            "segment metadata is damaged [count="
                + count
                + ", dim="
                + dim
                + ", distance="
                + distance
                + "]",
            path);
      }
      if (noGraph != (dim == 0)) {
        throw new CorruptFileException(
            "segment metadata version and dimension disagree [version="
                + version
                + ", dim="
                + dim
                + "]",
            path);
      }
      return new Shape(
          count,
          dim,
          Distance.values()[distance],
          graphLen,
          graphCrc,
          pqLen,
          pqCrc,
          noGraph,
          vectorsFile);
    }
  }

  private static SegmentMeta openColumns(
      FileIO io, Path path, ChecksummedFile.Reader r, boolean payloadsOnHeap, long fileBytes)
      throws IOException {
    Fields f = Fields.read(r);
    int flags = Byte.toUnsignedInt(r.get());
    long payloadBytes = r.getLong();
    Shape shape =
        f.check(path, VERSION_COLUMNS, (flags & FLAG_NO_GRAPH) != 0, (flags & FLAG_VECTORS) != 0);
    int n = shape.count();
    long at = r.bodyOffset() + SHAPE_BYTES + 1 + 8;
    long idLoAt = at;
    r.skip(8L * n);
    at += 8L * n;
    long idHiAt = -1;
    BitSet uuidOrds = null;
    if ((flags & FLAG_UUIDS) != 0) {
      idHiAt = at;
      r.skip(8L * n);
      long[] words = new long[(n + 63) >>> 6];
      r.getLongs(words, 0, words.length);
      uuidOrds = BitSet.valueOf(words);
      at += 8L * n + 8L * words.length;
    }
    boolean anyPayload = (flags & FLAG_PAYLOADS) != 0;
    long payloadAtAt = -1;
    byte[][] heapPayloads = null;
    if (anyPayload) {
      payloadAtAt = at;
      r.skip(8L * n);
      if (payloadsOnHeap) {
        heapPayloads = new byte[n][];
        for (int i = 0; i < n; i++) {
          int len = r.getInt();
          if (len >= 0) {
            heapPayloads[i] = new byte[len];
            r.get(heapPayloads[i], 0, len);
          }
        }
      } else {
        r.skip(r.remaining());
      }
    }
    r.finish();
    MappedFile map = MappedFile.open(io, path);
    if (map.size() != fileBytes) {
      map.close();
      throw new CorruptFileException(
          "segment metadata changed while opened [bytes=" + map.size() + "]", path);
    }
    return new SegmentMeta(
        shape,
        VERSION_COLUMNS,
        map,
        idLoAt,
        idHiAt,
        heapPayloads == null ? payloadAtAt : -1,
        null,
        null,
        null,
        uuidOrds,
        heapPayloads,
        payloadBytes,
        fileBytes,
        anyPayload);
  }

  private static SegmentMeta openRecords(
      FileIO io, Path path, ChecksummedFile.Reader r, boolean payloadsOnHeap, long fileBytes)
      throws IOException {
    Fields first = Fields.read(r);
    int n = first.count();
    long[] idLo = new long[n];
    long[] idHi = null;
    BitSet uuidOrds = null;
    for (int i = 0; i < n; i++) {
      byte kind = r.get();
      idLo[i] = r.getLong();
      if (kind != 0) {
        if (idHi == null) {
          idHi = new long[n];
          uuidOrds = new BitSet(n);
        }
        idHi[i] = r.getLong();
        uuidOrds.set(i);
      }
    }
    long[] payloadAt = null;
    byte[][] heapPayloads = null;
    long payloadBytes = 0;
    boolean anyPayload = false;
    for (int i = 0; i < n; i++) {
      long recordAt = r.position();
      int len = r.getInt();
      if (len >= 0) {
        anyPayload = true;
        payloadBytes += len;
        if (payloadsOnHeap) {
          if (heapPayloads == null) {
            heapPayloads = new byte[n][];
          }
          heapPayloads[i] = new byte[len];
          r.get(heapPayloads[i], 0, len);
          continue;
        }
        if (payloadAt == null) {
          payloadAt = new long[n];
          java.util.Arrays.fill(payloadAt, 0, i, -1);
        }
        payloadAt[i] = recordAt;
        r.skip(len);
      } else if (payloadAt != null) {
        payloadAt[i] = -1;
      }
    }
    boolean vectorsFile = r.version() >= VERSION_RECORDS_VECTORS && r.get() == 1;
    r.finish();
    Shape shape =
        first.check(path, r.version(), r.version() == VERSION_RECORDS_NO_GRAPH, vectorsFile);
    MappedFile map = payloadAt == null ? null : MappedFile.open(io, path);
    return new SegmentMeta(
        shape,
        r.version(),
        map,
        -1,
        -1,
        -1,
        idLo,
        idHi,
        payloadAt,
        uuidOrds,
        heapPayloads,
        payloadBytes,
        fileBytes,
        anyPayload);
  }

  Shape shape() {
    return shape;
  }

  int version() {
    return version;
  }

  /** The id of ordinal {@code ord}. */
  PointId idAt(int ord) {
    Objects.checkIndex(ord, shape.count());
    boolean uuid = uuidOrds != null && uuidOrds.get(ord);
    if (idLo != null) {
      return uuid ? PointId.of(new UUID(idHi[ord], idLo[ord])) : PointId.of(idLo[ord]);
    }
    MemorySegment m = map.segment();
    long lo = m.get(LE_LONG, idLoAt + 8L * ord);
    return uuid ? PointId.of(new UUID(m.get(LE_LONG, idHiAt + 8L * ord), lo)) : PointId.of(lo);
  }

  /** The payload of ordinal {@code ord} (a copy unless held on the heap), or null for none. */
  byte[] payloadAt(int ord) {
    Objects.checkIndex(ord, shape.count());
    if (heapPayloads != null) {
      return heapPayloads[ord];
    }
    long at;
    if (payloadAt != null) {
      at = payloadAt[ord];
    } else if (payloadAtAt >= 0) {
      at = map.segment().get(LE_LONG, payloadAtAt + 8L * ord);
    } else {
      return null;
    }
    if (at < 0) {
      return null;
    }
    MemorySegment m = map.segment();
    int len = m.get(LE_INT, at);
    if (len < 0) {
      return null;
    }
    byte[] out = new byte[len];
    MemorySegment.copy(m, ValueLayout.JAVA_BYTE, at + 4, out, 0, len);
    return out;
  }

  /** Whether payloads are held on the heap rather than read from the mapped file. */
  boolean payloadsOnHeap() {
    return heapPayloads != null;
  }

  /** Bytes of the points' payloads, without their length prefixes. */
  long payloadBytes() {
    return payloadBytes;
  }

  /** Bytes of the file when a point has a payload (what payloads cost on disk), else 0. */
  long payloadFileBytes() {
    return anyPayload ? fileBytes : 0;
  }

  /** Bytes of the file. */
  long fileBytes() {
    return fileBytes;
  }

  /**
   * Heap this holds: copied ids and payload offsets (versions 2–4), the UUID bits and payloads kept
   * on the heap. A version 5 file's columns cost page cache when read, not heap.
   */
  long heapBytes() {
    long bytes = heapPayloadBytes;
    if (idLo != null) {
      bytes += 8L * idLo.length;
    }
    if (idHi != null) {
      bytes += 8L * idHi.length;
    }
    if (payloadAt != null) {
      bytes += 8L * payloadAt.length;
    }
    if (uuidOrds != null) {
      bytes += uuidOrds.size() / 8;
    }
    return bytes;
  }

  /** The heap of payload copies: each array's header and bytes, and a reference per point. */
  private static long heapBytes(byte[][] payloads) {
    if (payloads == null) {
      return 0;
    }
    long bytes = 16 + 4L * payloads.length;
    for (byte[] p : payloads) {
      if (p != null) {
        bytes += (16 + p.length + 7) & ~7L;
      }
    }
    return bytes;
  }

  @Override
  public void close() {
    if (map != null) {
      map.close();
    }
  }
}
