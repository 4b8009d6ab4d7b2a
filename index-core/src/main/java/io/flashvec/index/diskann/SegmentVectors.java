package io.flashvec.index.diskann;

import io.flashvec.index.SparseVector;
import io.flashvec.index.disk.PageOrder;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The vectors of a sealed segment beyond the default dense one, and which points lack that one: the
 * file {@value #FILE} (format {@value #FORMAT}), written only when some point has a sparse vector
 * or no dense vector (the segment metadata then says so, so the file cannot go missing unnoticed).
 * A point without the dense vector holds a placeholder in the graph that dense searches never
 * return.
 *
 * <pre>
 * body   := u32 n | ceil(n/64) * u64 noVector bits | u16 fields | fields * field
 * field  := u16 nameLen | utf8 name | n * i64 at (-1: the point lacks the field) | data
 * vector := u32 nnz | nnz * u32 index | nnz * f32 value       (at: a vector's offset in the body)
 * </pre>
 *
 * The body stays on the heap: sparse fields are searched by an exact scan of the points having
 * them.
 */
public final class SegmentVectors {

  public static final String FILE = "vectors.fvs";
  static final String FORMAT = "segment-vectors";
  static final int VERSION = 1;

  private final int n;
  private final long[] noVector;
  private final int withoutVector;
  private final Map<String, long[]> fields;
  private final ByteBuffer body;

  private SegmentVectors(
      int n, long[] noVector, int withoutVector, Map<String, long[]> fields, ByteBuffer body) {
    this.n = n;
    this.noVector = noVector;
    this.withoutVector = withoutVector;
    this.fields = fields;
    this.body = body;
  }

  /** Collects, by position in a build's input, what {@link #write} writes. */
  static final class Collector {
    private final int n;
    private final BitSet noVector;
    private Map<String, SparseVector>[] sparse;

    Collector(int n) {
      this.n = n;
      this.noVector = new BitSet(n);
    }

    /** Takes what the point {@code ord} of {@code src} has at input position {@code at}. */
    @SuppressWarnings("unchecked")
    void add(int at, Segment src, int ord) {
      if (!src.hasVector(ord)) {
        noVector.set(at);
      }
      if (src.hasSparse()) {
        Map<String, SparseVector> m = src.sparseAt(ord);
        if (!m.isEmpty()) {
          if (sparse == null) {
            sparse = new Map[n];
          }
          sparse[at] = m;
        }
      }
    }

    /** Whether there is anything to write. */
    boolean any() {
      return sparse != null || !noVector.isEmpty();
    }

    /** Rearranges the points so that position {@code i} holds input position {@code order[i]}. */
    void gather(int[] order) {
      if (sparse != null) {
        PageOrder.gather(order, sparse);
      }
      if (!noVector.isEmpty()) {
        BitSet next = new BitSet(n);
        for (int i = 0; i < n; i++) {
          if (noVector.get(order[i])) {
            next.set(i);
          }
        }
        noVector.clear();
        noVector.or(next);
      }
    }

    /** Writes the file into {@code dir} (fsynced, as every {@link ChecksummedFile}). */
    void write(FileIO io, Path dir, int segmentId) throws IOException {
      TreeSet<String> names = new TreeSet<>();
      long size = 4 + 8L * ((n + 63) >>> 6) + 2;
      if (sparse != null) {
        for (Map<String, SparseVector> m : sparse) {
          if (m != null) {
            names.addAll(m.keySet());
            for (SparseVector v : m.values()) {
              size += 4 + 8L * v.size();
            }
          }
        }
      }
      for (String name : names) {
        size += 2 + name.getBytes(StandardCharsets.UTF_8).length + 8L * n;
      }
      if (size > Integer.MAX_VALUE - 64) {
        throw new IllegalStateException("segment vectors too large [bytes=" + size + "]");
      }
      ByteBuffer b = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
      b.putInt(n);
      long[] words = noVector.toLongArray();
      for (int w = 0; w < (n + 63) >>> 6; w++) {
        b.putLong(w < words.length ? words[w] : 0L);
      }
      b.putShort((short) names.size());
      for (String name : names) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        b.putShort((short) utf8.length).put(utf8);
        int table = b.position();
        b.position(table + 8 * n);
        for (int i = 0; i < n; i++) {
          SparseVector v = sparse[i] == null ? null : sparse[i].get(name);
          if (v == null) {
            b.putLong(table + 8 * i, -1L);
            continue;
          }
          b.putLong(table + 8 * i, b.position());
          b.putInt(v.size());
          for (int x : v.indices()) {
            b.putInt(x);
          }
          for (float x : v.values()) {
            b.putFloat(x);
          }
        }
      }
      ChecksummedFile.write(io, dir.resolve(FILE), FORMAT, VERSION, segmentId, b.array());
    }
  }

  /** Reads and verifies the file of a segment of {@code n} points. */
  static SegmentVectors read(FileIO io, Path dir, int segmentId, int n) throws IOException {
    Path path = dir.resolve(FILE);
    ChecksummedFile.Contents c = ChecksummedFile.read(io, path, FORMAT, VERSION, VERSION);
    if (c.segmentId() != segmentId) {
      throw new io.flashvec.storage.CorruptFileException(
          "segment id mismatch [expected=" + segmentId + ", got=" + c.segmentId() + "]", path);
    }
    ByteBuffer b = c.body().slice().order(ByteOrder.LITTLE_ENDIAN);
    int count = b.getInt();
    if (count != n) {
      throw new io.flashvec.storage.CorruptFileException(
          "segment vectors disagree with the metadata [meta=" + n + ", vectors=" + count + "]",
          path);
    }
    long[] noVector = new long[(n + 63) >>> 6];
    int without = 0;
    for (int w = 0; w < noVector.length; w++) {
      noVector[w] = b.getLong();
      without += Long.bitCount(noVector[w]);
    }
    int fieldCount = Short.toUnsignedInt(b.getShort());
    Map<String, long[]> fields = new TreeMap<>();
    for (int f = 0; f < fieldCount; f++) {
      byte[] name = new byte[Short.toUnsignedInt(b.getShort())];
      b.get(name);
      long[] at = new long[n];
      b.asLongBuffer().get(at);
      b.position(b.position() + 8 * n);
      fields.put(new String(name, StandardCharsets.UTF_8), at);
      // skip the field's vectors: the next field starts after its last one
      int end = b.position();
      for (long a : at) {
        if (a >= 0) {
          end = Math.max(end, (int) a + 4 + 8 * b.getInt((int) a));
        }
      }
      b.position(end);
    }
    return new SegmentVectors(n, noVector, without, fields, b);
  }

  boolean hasVector(int ord) {
    return (noVector[ord >>> 6] & (1L << ord)) == 0;
  }

  int withoutVector() {
    return withoutVector;
  }

  boolean hasSparse() {
    return !fields.isEmpty();
  }

  SparseVector sparseAt(int ord, String name) {
    long[] at = fields.get(name);
    return at == null || at[ord] < 0 ? null : decode((int) at[ord]);
  }

  Map<String, SparseVector> sparseAt(int ord) {
    Map<String, SparseVector> out = null;
    for (Map.Entry<String, long[]> e : fields.entrySet()) {
      long a = e.getValue()[ord];
      if (a >= 0) {
        if (out == null) {
          out = new HashMap<>();
        }
        out.put(e.getKey(), decode((int) a));
      }
    }
    return out == null ? Map.of() : out;
  }

  private SparseVector decode(int at) {
    int nnz = body.getInt(at);
    int[] idx = new int[nnz];
    float[] val = new float[nnz];
    for (int i = 0; i < nnz; i++) {
      idx[i] = body.getInt(at + 4 + 4 * i);
      val[i] = body.getFloat(at + 4 + 4 * nnz + 4 * i);
    }
    return new SparseVector(idx, val);
  }

  /** Heap bytes held. */
  long memoryBytes() {
    return (long) body.capacity() + 8L * noVector.length;
  }

  int size() {
    return n;
  }
}
