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
import java.util.function.IntFunction;

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
 *   u32 numeric, i64 lo[numeric], i32 ord[numeric]    numeric ids in unsigned order, their ordinals
 *   u32 uuids, i64 hi[uuids], i64 lo[uuids], i32 ord[uuids]   with flag 2: UUIDs in order
 *   i64 payloadAt[count]                   with flag 4: file offset of each point's record
 *   records[count]                         with flag 4: i32 length (-1: none), then the bytes
 * </pre>
 *
 * <p>The sorted ids answer {@link #ordinalsOf} by a binary search of the mapped file, behind a
 * Bloom filter built at open (10 bits, about 1.25 bytes, a point on the heap): the shard keeps no
 * map entry for a point of a sealed segment.
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

  /**
   * Finds an id's ordinal: sorted ids (mapped, or copied for older files) behind a Bloom filter.
   */
  private final Lookup lookup;

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
      Lookup lookup,
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
    this.lookup = lookup;
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
    write(
        io,
        path,
        segmentId,
        n,
        dim,
        distance,
        graphCrc,
        pqCrc,
        i -> ids[i],
        i -> payloads[i],
        vectorsFile);
  }

  /**
   * {@link #write(FileIO, Path, int, int, int, Distance, long[], long[], PointId[], byte[][],
   * boolean)} with point {@code i}'s id and payload from {@code ids} and {@code payloads}, so that
   * a merge need not hold every point's id object and payload: it keeps each id's two halves in
   * primitive arrays (8 bytes a point, 16 with UUIDs) and each payload's length, and asks for each
   * payload twice (its length, then its bytes).
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
      IntFunction<PointId> ids,
      IntFunction<byte[]> payloads,
      boolean vectorsFile)
      throws IOException {
    long[] lo = new long[n];
    long[] hi = null;
    BitSet uuidBits = null;
    int[] lengths = new int[n];
    boolean anyPayload = false;
    long payloadBytes = 0;
    for (int i = 0; i < n; i++) {
      PointId id = ids.apply(i);
      lo[i] = id.loBits();
      if (id.isUuid()) {
        if (hi == null) {
          hi = new long[n];
          uuidBits = new BitSet(n);
        }
        hi[i] = id.hiBits();
        uuidBits.set(i);
      }
      byte[] p = payloads.apply(i);
      lengths[i] = p == null ? -1 : p.length;
      if (p != null) {
        anyPayload = true;
        payloadBytes += p.length;
      }
    }
    boolean uuids = hi != null;
    int flags =
        (vectorsFile ? FLAG_VECTORS : 0)
            | (uuids ? FLAG_UUIDS : 0)
            | (anyPayload ? FLAG_PAYLOADS : 0)
            | (dim == 0 ? FLAG_NO_GRAPH : 0);
    try (var w = ChecksummedFile.Writer.create(io, path, FORMAT, VERSION_COLUMNS, segmentId)) {
      w.putInt(n).putInt(dim).putByte((byte) distance.ordinal());
      w.putLong(graphCrc[1]).putInt((int) graphCrc[0]).putLong(pqCrc[1]).putInt((int) pqCrc[0]);
      w.putByte((byte) flags).putLong(payloadBytes);
      w.putLongs(lo, 0, n);
      if (uuids) {
        w.putLongs(hi, 0, n);
        long[] words = java.util.Arrays.copyOf(uuidBits.toLongArray(), (n + 63) >>> 6);
        w.putLongs(words, 0, words.length);
      }
      Sorted sorted = Sorted.of(lo, hi, uuidBits, n);
      lo = null;
      hi = null;
      w.putInt(sorted.numLo.length);
      w.putLongs(sorted.numLo, 0, sorted.numLo.length);
      w.putInts(sorted.numOrd, 0, sorted.numOrd.length);
      if (uuids) {
        w.putInt(sorted.uuidHi.length);
        w.putLongs(sorted.uuidHi, 0, sorted.uuidHi.length);
        w.putLongs(sorted.uuidLo, 0, sorted.uuidLo.length);
        w.putInts(sorted.uuidOrd, 0, sorted.uuidOrd.length);
      }
      sorted = null;
      if (anyPayload) {
        long at = w.bodyOffset() + w.bodyBytes() + 8L * n;
        for (int i = 0; i < n; i++) {
          w.putLong(at);
          at += 4 + Math.max(0, lengths[i]);
        }
        for (int i = 0; i < n; i++) {
          if (lengths[i] < 0) {
            w.putInt(-1);
            continue;
          }
          byte[] p = payloads.apply(i);
          if (p == null || p.length != lengths[i]) {
            throw new IllegalStateException(
                "a point's payload changed while its segment was written [segment="
                    + segmentId
                    + ", ordinal="
                    + i
                    + ", length="
                    + lengths[i]
                    + ", now="
                    + (p == null ? -1 : p.length)
                    + "]");
          }
          w.putInt(p.length).put(p, 0, p.length);
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
    int numeric = r.getInt();
    if (numeric < 0 || numeric > n) {
      throw new CorruptFileException(
          "segment metadata is damaged [numericIds=" + numeric + "]", path);
    }
    at += 4;
    long numLoAt = at;
    long numOrdAt = at + 8L * numeric;
    r.skip(12L * numeric);
    at += 12L * numeric;
    int uuidCount = 0;
    long uuidHiAt = -1;
    long uuidLoAt = -1;
    long uuidOrdAt = -1;
    if (uuidOrds != null) {
      uuidCount = r.getInt();
      if (uuidCount != n - numeric) {
        throw new CorruptFileException(
            "segment metadata is damaged [uuids=" + uuidCount + ", numeric=" + numeric + "]", path);
      }
      at += 4;
      uuidHiAt = at;
      uuidLoAt = at + 8L * uuidCount;
      uuidOrdAt = at + 16L * uuidCount;
      r.skip(20L * uuidCount);
      at += 20L * uuidCount;
    } else if (numeric != n) {
      throw new CorruptFileException(
          "segment metadata is damaged [numericIds=" + numeric + ", count=" + n + "]", path);
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
    Lookup lookup =
        Lookup.mapped(
            map.segment(), numeric, numLoAt, numOrdAt, uuidCount, uuidHiAt, uuidLoAt, uuidOrdAt);
    return new SegmentMeta(
        lookup,
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
    Lookup lookup = Lookup.onHeap(Sorted.of(idLo, idHi, uuidOrds, n));
    return new SegmentMeta(
        lookup,
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

  /**
   * Calls {@code visit} with each ordinal holding {@code id} (a segment sealed from a growing one
   * may hold several versions, the older ones deleted), until it returns false: a Bloom filter
   * answers most ids the segment lacks, a binary search of the sorted ids the others.
   */
  void ordinalsOf(PointId id, java.util.function.IntPredicate visit) {
    lookup.find(id, visit);
  }

  /** See {@link io.flashvec.index.segment.SealedSegment#forEachInIdOrder}. */
  void forEachInIdOrder(PointId from, java.util.function.IntPredicate visit) {
    lookup.forEachFrom(from, visit);
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
    long bytes = heapPayloadBytes + lookup.heapBytes();
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

  /** Ids sorted for lookup: numeric ones by unsigned value, UUIDs by (high, low) unsigned. */
  private record Sorted(long[] numLo, int[] numOrd, long[] uuidHi, long[] uuidLo, int[] uuidOrd) {

    /**
     * The sorted ids of {@code n} points whose id {@code i} has low half {@code lo[i]} and, when
     * {@code uuid} holds {@code i}, high half {@code hi[i]} ({@code hi} and {@code uuid} are {@code
     * null} without UUIDs).
     */
    static Sorted of(long[] lo, long[] hi, BitSet uuid, int n) {
      int uuids = uuid == null ? 0 : uuid.cardinality();
      long[] keys = new long[n - uuids];
      long[] ords = new long[n - uuids];
      int[] perm = new int[uuids];
      int k = 0;
      int u = 0;
      for (int i = 0; i < n; i++) {
        if (uuid != null && uuid.get(i)) {
          perm[u++] = i;
        } else {
          keys[k] = lo[i] ^ Long.MIN_VALUE; // signed order of flipped = unsigned order
          ords[k++] = i;
        }
      }
      it.unimi.dsi.fastutil.longs.LongArrays.radixSort(keys, ords);
      int[] numOrd = new int[keys.length];
      for (int i = 0; i < keys.length; i++) {
        keys[i] ^= Long.MIN_VALUE;
        numOrd[i] = (int) ords[i];
      }
      long[] uhi = new long[uuids];
      long[] ulo = new long[uuids];
      if (uuids > 0) {
        it.unimi.dsi.fastutil.ints.IntArrays.quickSort(
            perm,
            (a, b) -> {
              int c = Long.compareUnsigned(hi[a], hi[b]);
              return c != 0 ? c : Long.compareUnsigned(lo[a], lo[b]);
            });
        for (int i = 0; i < uuids; i++) {
          uhi[i] = hi[perm[i]];
          ulo[i] = lo[perm[i]];
        }
      }
      return new Sorted(keys, numOrd, uhi, ulo, perm);
    }
  }

  /** Sorted ids, mapped or on the heap, and a Bloom filter over them. */
  private static final class Lookup {
    private final MemorySegment m; // null: the arrays
    private final Sorted heap;
    private final int numeric;
    private final long numLoAt;
    private final long numOrdAt;
    private final int uuids;
    private final long uuidHiAt;
    private final long uuidLoAt;
    private final long uuidOrdAt;
    private final long[] bloom;
    private final long bloomBits;

    private Lookup(
        MemorySegment m,
        Sorted heap,
        int numeric,
        long numLoAt,
        long numOrdAt,
        int uuids,
        long uuidHiAt,
        long uuidLoAt,
        long uuidOrdAt) {
      this.m = m;
      this.heap = heap;
      this.numeric = numeric;
      this.numLoAt = numLoAt;
      this.numOrdAt = numOrdAt;
      this.uuids = uuids;
      this.uuidHiAt = uuidHiAt;
      this.uuidLoAt = uuidLoAt;
      this.uuidOrdAt = uuidOrdAt;
      // 10 bits a point, 5 probes: about 1% false positives
      // (at most 2^32 bits, so that a probe's multiply-shift cannot overflow)
      long bits = Math.min(1L << 32, Math.max(64, (10L * (numeric + uuids) + 63) & ~63L));
      this.bloomBits = bits;
      this.bloom = new long[Math.toIntExact(bits >>> 6)];
      for (int i = 0; i < numeric; i++) {
        add(hash(false, 0, numLo(i)));
      }
      for (int i = 0; i < uuids; i++) {
        add(hash(true, uuidHi(i), uuidLo(i)));
      }
    }

    static Lookup mapped(
        MemorySegment m,
        int numeric,
        long numLoAt,
        long numOrdAt,
        int uuids,
        long uuidHiAt,
        long uuidLoAt,
        long uuidOrdAt) {
      return new Lookup(m, null, numeric, numLoAt, numOrdAt, uuids, uuidHiAt, uuidLoAt, uuidOrdAt);
    }

    static Lookup onHeap(Sorted s) {
      return new Lookup(null, s, s.numLo.length, -1, -1, s.uuidHi.length, -1, -1, -1);
    }

    private long numLo(int i) {
      return m == null ? heap.numLo[i] : m.get(LE_LONG, numLoAt + 8L * i);
    }

    private int numOrd(int i) {
      return m == null ? heap.numOrd[i] : m.get(LE_INT, numOrdAt + 4L * i);
    }

    private long uuidHi(int i) {
      return m == null ? heap.uuidHi[i] : m.get(LE_LONG, uuidHiAt + 8L * i);
    }

    private long uuidLo(int i) {
      return m == null ? heap.uuidLo[i] : m.get(LE_LONG, uuidLoAt + 8L * i);
    }

    private int uuidOrd(int i) {
      return m == null ? heap.uuidOrd[i] : m.get(LE_INT, uuidOrdAt + 4L * i);
    }

    private static long hash(boolean uuid, long hi, long lo) {
      long h =
          lo * 0x9E3779B97F4A7C15L + (uuid ? hi * 0xC2B2AE3D27D4EB4FL + 0x165667B19E3779F9L : 0);
      h ^= h >>> 32;
      h *= 0xD6E8FEB86659FD93L;
      h ^= h >>> 32;
      return h;
    }

    /** Probe {@code i} of hash {@code h}: a bit in {@code [0, bloomBits)} (multiply-shift). */
    private long probe(long h, int i) {
      int x = (int) h + i * ((int) (h >>> 32) | 1);
      return ((x & 0xFFFFFFFFL) * bloomBits) >>> 32;
    }

    private void add(long h) {
      for (int i = 0; i < 5; i++) {
        long bit = probe(h, i);
        bloom[(int) (bit >>> 6)] |= 1L << bit;
      }
    }

    private boolean mightContain(long h) {
      for (int i = 0; i < 5; i++) {
        long bit = probe(h, i);
        if ((bloom[(int) (bit >>> 6)] & (1L << bit)) == 0) {
          return false;
        }
      }
      return true;
    }

    void find(PointId id, java.util.function.IntPredicate visit) {
      if (id.isUuid()) {
        long hi = id.hiBits();
        long lo = id.loBits();
        if (uuids == 0 || !mightContain(hash(true, hi, lo))) {
          return;
        }
        for (int j = lowerBound(uuids, mid -> compareUuid(mid, hi, lo));
            j < uuids && compareUuid(j, hi, lo) == 0;
            j++) {
          if (!visit.test(uuidOrd(j))) {
            return;
          }
        }
        return;
      }
      long lo = id.loBits();
      if (numeric == 0 || !mightContain(hash(false, 0, lo))) {
        return;
      }
      for (int i = lowerBound(numeric, mid -> Long.compareUnsigned(numLo(mid), lo));
          i < numeric && numLo(i) == lo;
          i++) {
        if (!visit.test(numOrd(i))) {
          return;
        }
      }
    }

    private int compareUuid(int i, long hi, long lo) {
      int c = Long.compareUnsigned(uuidHi(i), hi);
      return c != 0 ? c : Long.compareUnsigned(uuidLo(i), lo);
    }

    void forEachFrom(PointId from, java.util.function.IntPredicate visit) {
      int i = 0;
      if (from != null && from.isUuid()) {
        i = numeric; // every numeric id comes before
      } else if (from != null) {
        i = lowerBound(numeric, mid -> Long.compareUnsigned(numLo(mid), from.loBits()));
      }
      for (; i < numeric; i++) {
        if (!visit.test(numOrd(i))) {
          return;
        }
      }
      int j = 0;
      if (from != null && from.isUuid()) {
        long hi = from.hiBits();
        long lo = from.loBits();
        j = lowerBound(uuids, mid -> compareUuid(mid, hi, lo));
      }
      for (; j < uuids; j++) {
        if (!visit.test(uuidOrd(j))) {
          return;
        }
      }
    }

    /** The first index in {@code [0, n)} whose entry is not below the key ({@code n}: none). */
    private static int lowerBound(int n, java.util.function.IntUnaryOperator compareToKey) {
      int a = 0;
      int b = n;
      while (a < b) {
        int mid = (a + b) >>> 1;
        if (compareToKey.applyAsInt(mid) < 0) {
          a = mid + 1;
        } else {
          b = mid;
        }
      }
      return a;
    }

    long heapBytes() {
      long bytes = 8L * bloom.length;
      if (heap != null) {
        bytes += 12L * heap.numLo.length + 20L * heap.uuidHi.length;
      }
      return bytes;
    }
  }
}
