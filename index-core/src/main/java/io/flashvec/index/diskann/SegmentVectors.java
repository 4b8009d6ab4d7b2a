package io.flashvec.index.diskann;

import io.flashvec.index.SparseVector;
import io.flashvec.index.disk.PageOrder;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.MappedFile;
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
 * The vectors of a sealed segment beyond the primary dense one, and which points lack that one: the
 * file {@value #FILE} (format {@value #FORMAT}), written only when some point has a sparse vector,
 * another dense vector or no primary vector (the segment metadata then says so, so the file cannot
 * go missing unnoticed). A point without the primary vector holds a placeholder in the graph that
 * dense searches never return.
 *
 * <pre>
 * body   := u32 n | ceil(n/64) * u64 noVector bits | u16 fields | fields * field
 * field  := u16 nameLen | utf8 name | [u8 kind: 0 sparse, 1 dense, version 2 only] | kind's data
 * sparse := n * i64 at (-1: the point lacks the field) | vectors
 * vector := u32 nnz | nnz * u32 index | nnz * f32 value       (at: a vector's offset in the body)
 * dense  := u32 dim | u32 present | n * i32 slot (-1: the point lacks it) | present * dim * f32
 * multi  := u64 floats | n * i64 offset (in floats; -1: the point lacks it) | n * u32 length
 *           (in floats) | floats * f32
 * </pre>
 *
 * Version 1 has sparse fields only and no kind byte; it is still written when a segment has no
 * other dense vector, so such segments keep their bytes. A field whose values differ in length (a
 * multivector field: each value is its vectors back to back) is written as kind 2, {@code multi},
 * in version 3, which only a file with such a field has (a binary that reads versions 1 and 2 stops
 * at it rather than reading the kind as sparse vectors); one whose values all have one length,
 * whatever the field, as kind 1, {@code dense}. Either way a value reads back as the same floats,
 * and the collection's configuration says how many vectors they hold. The body stays on the heap:
 * these fields are searched by an exact scan of the points having them, dense ones with the SIMD
 * kernels over one array per field.
 */
public final class SegmentVectors {

  public static final String FILE = "vectors.fvs";
  static final String FORMAT = "segment-vectors";
  static final int VERSION = 1;
  static final int VERSION_DENSE = 2;
  static final int VERSION_MULTI = 3;
  private static final byte SPARSE = 0;
  private static final byte DENSE = 1;
  private static final byte MULTI = 2;

  /**
   * A dense field: its values one after another (little-endian floats), on the heap or in the
   * mapped file. Kind {@code dense}: {@code dim} floats each at the ordinal's {@code slot} (-1:
   * absent), {@code offset} and {@code length} null. Kind {@code multi}: {@code length[ord]} floats
   * at float {@code offset[ord]} (-1: absent), {@code dim} 0 and {@code slot} null.
   */
  record DenseField(
      int dim, int[] slot, long[] offset, int[] length, java.lang.foreign.MemorySegment data) {

    /** The byte offset of the value of {@code ord} in {@link #data}, or -1 when it has none. */
    long at(int ord) {
      if (slot != null) {
        return slot[ord] < 0 ? -1 : 4L * dim * slot[ord];
      }
      return offset[ord] < 0 ? -1 : 4L * offset[ord];
    }

    /** The number of floats of the value of {@code ord}, which it has. */
    int length(int ord) {
      return slot != null ? dim : length[ord];
    }

    long heapBytes() {
      long tables = slot != null ? 4L * slot.length : 12L * offset.length;
      return tables + (data.isNative() ? 0 : data.byteSize());
    }
  }

  private final int n;
  private final long[] noVector;
  private final int withoutVector;
  private final Map<String, long[]> fields;
  private final Map<String, DenseField> dense;
  private final ByteBuffer body;
  private final MappedFile mapped;

  private SegmentVectors(
      int n,
      long[] noVector,
      int withoutVector,
      Map<String, long[]> fields,
      Map<String, DenseField> dense,
      ByteBuffer body,
      MappedFile mapped) {
    this.n = n;
    this.noVector = noVector;
    this.withoutVector = withoutVector;
    this.fields = fields;
    this.dense = dense;
    this.body = body;
    this.mapped = mapped;
  }

  /** Collects, by position in a build's input, what {@link #write} writes. */
  static final class Collector {
    private final int n;
    private final BitSet noVector;
    private Map<String, SparseVector>[] sparse;
    private Map<String, float[]>[] dense;

    private final java.util.function.Predicate<String> keepDense;

    Collector(int n) {
      this(n, null);
    }

    /**
     * @param keepDense the dense fields to keep ({@code null}: all); the values of others (fields
     *     deleted from the collection) are dropped
     */
    Collector(int n, java.util.function.Predicate<String> keepDense) {
      this.n = n;
      this.noVector = new BitSet(n);
      this.keepDense = keepDense;
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
      if (src.hasDense()) {
        Map<String, float[]> m = src.denseAt(ord);
        if (keepDense != null && !m.isEmpty()) {
          for (String k : m.keySet()) {
            if (!keepDense.test(k)) {
              m = new java.util.HashMap<>(m);
              m.keySet().removeIf(keepDense.negate());
              break;
            }
          }
        }
        if (!m.isEmpty()) {
          if (dense == null) {
            dense = new Map[n];
          }
          dense[at] = m;
        }
      }
    }

    /** Whether there is anything to write. */
    boolean any() {
      return sparse != null || dense != null || !noVector.isEmpty();
    }

    /** Rearranges the points so that position {@code i} holds input position {@code order[i]}. */
    void gather(int[] order) {
      if (sparse != null) {
        PageOrder.gather(order, sparse);
      }
      if (dense != null) {
        PageOrder.gather(order, dense);
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
      boolean v2 = dense != null;
      for (String name : names) {
        size += 2 + name.getBytes(StandardCharsets.UTF_8).length + 8L * n + (v2 ? 1 : 0);
      }
      // dense fields by name, each with the length of its values, or -1 when they differ (multi)
      TreeMap<String, Integer> denseDims = new TreeMap<>();
      if (dense != null) {
        for (Map<String, float[]> m : dense) {
          if (m != null) {
            for (Map.Entry<String, float[]> e : m.entrySet()) {
              int len = e.getValue().length;
              denseDims.merge(e.getKey(), len, (a, b) -> a.equals(b) ? a : -1);
              size += 4L * len;
            }
          }
        }
        for (Map.Entry<String, Integer> f : denseDims.entrySet()) {
          size += 2 + f.getKey().getBytes(StandardCharsets.UTF_8).length + 1;
          size += f.getValue() < 0 ? 8 + 12L * n : 8 + 4L * n;
        }
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
      b.putShort((short) (names.size() + denseDims.size()));
      for (String name : names) {
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        b.putShort((short) utf8.length).put(utf8);
        if (v2) {
          b.put(SPARSE);
        }
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
      for (Map.Entry<String, Integer> f : denseDims.entrySet()) {
        byte[] utf8 = f.getKey().getBytes(StandardCharsets.UTF_8);
        int dim = f.getValue();
        if (dim < 0) {
          b.putShort((short) utf8.length).put(utf8).put(MULTI);
          writeMulti(b, f.getKey());
          continue;
        }
        b.putShort((short) utf8.length).put(utf8).put(DENSE).putInt(dim);
        int countAt = b.position();
        b.putInt(0);
        int table = b.position();
        b.position(table + 4 * n);
        int present = 0;
        for (int i = 0; i < n; i++) {
          float[] v = dense[i] == null ? null : dense[i].get(f.getKey());
          if (v == null) {
            b.putInt(table + 4 * i, -1);
            continue;
          }
          if (v.length != dim) {
            throw new IllegalStateException(
                "dense vectors of one field differ in size [field="
                    + f.getKey()
                    + ", dim="
                    + dim
                    + ", got="
                    + v.length
                    + "]");
          }
          b.putInt(table + 4 * i, present++);
          b.asFloatBuffer().put(v);
          b.position(b.position() + 4 * dim);
        }
        b.putInt(countAt, present);
      }
      int version = denseDims.containsValue(-1) ? VERSION_MULTI : v2 ? VERSION_DENSE : VERSION;
      ChecksummedFile.write(io, dir.resolve(FILE), FORMAT, version, segmentId, b.array());
    }

    /** The {@code multi} data of the field {@code name}: offsets, lengths, values. */
    private void writeMulti(ByteBuffer b, String name) {
      int totalAt = b.position();
      b.putLong(0L);
      int offsets = b.position();
      int lengths = offsets + 8 * n;
      b.position(lengths + 4 * n);
      long floats = 0;
      for (int i = 0; i < n; i++) {
        float[] v = dense[i] == null ? null : dense[i].get(name);
        if (v == null) {
          b.putLong(offsets + 8 * i, -1L);
          b.putInt(lengths + 4 * i, 0);
          continue;
        }
        b.putLong(offsets + 8 * i, floats);
        b.putInt(lengths + 4 * i, v.length);
        b.asFloatBuffer().put(v);
        b.position(b.position() + 4 * v.length);
        floats += v.length;
      }
      b.putLong(totalAt, floats);
    }
  }

  /** Reads and verifies the file of a segment of {@code n} points, every field on the heap. */
  static SegmentVectors read(FileIO io, Path dir, int segmentId, int n) throws IOException {
    return read(io, dir, segmentId, n, java.util.Set.of());
  }

  /**
   * Reads and verifies the file of a segment of {@code n} points. The vectors of the dense fields
   * {@code onDisk} stay in the file, mapped and read on demand; everything else is held on the heap
   * (the whole file is read once to check its checksum).
   */
  static SegmentVectors read(
      FileIO io, Path dir, int segmentId, int n, java.util.Set<String> onDisk) throws IOException {
    Path path = dir.resolve(FILE);
    ChecksummedFile.Contents c = ChecksummedFile.read(io, path, FORMAT, VERSION, VERSION_MULTI);
    boolean v2 = c.version() >= VERSION_DENSE;
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
    Map<String, DenseField> dense = new TreeMap<>();
    int firstDense = -1; // where the dense fields start: the heap keeps the body up to there
    MappedFile mapped = null;
    long bodyInFile = c.body().arrayOffset();
    try {
      for (int f = 0; f < fieldCount; f++) {
        int start = b.position();
        byte[] name = new byte[Short.toUnsignedInt(b.getShort())];
        b.get(name);
        byte kind = v2 ? b.get() : SPARSE;
        if (kind == MULTI && c.version() < VERSION_MULTI) {
          throw new io.flashvec.storage.CorruptFileException(
              "multivector field in a version " + c.version() + " vectors file", path);
        }
        if (kind == DENSE || kind == MULTI) {
          firstDense = firstDense < 0 ? start : firstDense;
          String field = new String(name, StandardCharsets.UTF_8);
          int dim = 0;
          int[] slot = null;
          long[] offset = null;
          int[] length = null;
          int bytes;
          if (kind == DENSE) {
            dim = b.getInt();
            int present = b.getInt();
            slot = new int[n];
            b.asIntBuffer().get(slot);
            b.position(b.position() + 4 * n);
            bytes = Math.multiplyExact(4 * dim, present);
          } else {
            bytes = Math.toIntExact(Math.multiplyExact(4L, b.getLong()));
            offset = new long[n];
            b.asLongBuffer().get(offset);
            b.position(b.position() + 8 * n);
            length = new int[n];
            b.asIntBuffer().get(length);
            b.position(b.position() + 4 * n);
          }
          java.lang.foreign.MemorySegment data;
          if (onDisk.contains(field)) {
            if (mapped == null) {
              mapped = MappedFile.open(io, path);
            }
            data = mapped.segment().asSlice(bodyInFile + b.position(), bytes);
          } else {
            byte[] copy = new byte[bytes];
            b.get(b.position(), copy);
            data = java.lang.foreign.MemorySegment.ofArray(copy);
          }
          dense.put(field, new DenseField(dim, slot, offset, length, data));
          b.position(Math.addExact(b.position(), bytes));
          continue;
        }
        if (kind != SPARSE) {
          throw new io.flashvec.storage.CorruptFileException(
              "unknown vector field kind [kind=" + kind + "]", path);
        }
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
    } catch (IOException | RuntimeException e) {
      if (mapped != null) {
        mapped.close();
      }
      throw e;
    }
    if (firstDense >= 0) {
      // the dense fields' vectors were copied or mapped: only the part before them stays
      byte[] prefix = new byte[firstDense];
      b.get(0, prefix);
      b = ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN);
    }
    return new SegmentVectors(n, noVector, without, fields, dense, b, mapped);
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

  boolean hasDense() {
    return !dense.isEmpty();
  }

  float[] denseAt(int ord, String name) {
    DenseField f = dense.get(name);
    long at = f == null ? -1 : f.at(ord);
    if (at < 0) {
      return null;
    }
    float[] v = new float[f.length(ord)];
    java.lang.foreign.MemorySegment.copy(f.data, LE_FLOAT, at, v, 0, v.length);
    return v;
  }

  /**
   * The ordinals (ascending) whose point has a single vector of the field {@code name} of {@code
   * dim} floats, or {@code null} when the field is absent or holds multivectors.
   */
  int[] ordinalsWith(String name, int dim) {
    DenseField f = dense.get(name);
    if (f == null || f.slot == null || f.dim != dim) {
      return null;
    }
    int c = 0;
    for (int s : f.slot) {
      c += s >= 0 ? 1 : 0;
    }
    int[] out = new int[c];
    c = 0;
    for (int ord = 0; ord < f.slot.length; ord++) {
      if (f.slot[ord] >= 0) {
        out[c++] = ord;
      }
    }
    return out;
  }

  private static final java.lang.foreign.ValueLayout.OfFloat LE_FLOAT =
      java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /**
   * The MaxSim score of the prepared multivector query {@code q} against the multivector {@code
   * name} of the point at {@code ord}, {@code dim}-sized vectors read in place, or NaN when the
   * point lacks it.
   */
  float multiScore(String name, int ord, float[] q, int dim, io.flashvec.index.Distance d) {
    DenseField f = dense.get(name);
    long at = f == null ? -1 : f.at(ord);
    if (at < 0) {
      return Float.NaN;
    }
    return d.maxSim(q, dim, f.data, at, f.length(ord) / dim);
  }

  /**
   * The score of the prepared query {@code q} against the dense vector {@code name} of the point at
   * {@code ord} by {@code d}, read in place, or NaN when the point lacks it.
   */
  float score(String name, int ord, float[] q, io.flashvec.index.Distance d) {
    DenseField f = dense.get(name);
    long at = f == null ? -1 : f.at(ord);
    if (at < 0) {
      return Float.NaN;
    }
    return d.score(q, f.data, at);
  }

  Map<String, float[]> denseAt(int ord) {
    Map<String, float[]> out = null;
    for (String name : dense.keySet()) {
      float[] v = denseAt(ord, name);
      if (v != null) {
        if (out == null) {
          out = new HashMap<>();
        }
        out.put(name, v);
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
    long bytes = (long) body.capacity() + 8L * noVector.length;
    for (DenseField f : dense.values()) {
      bytes += f.heapBytes();
    }
    return bytes;
  }

  /** Unmaps the file when some field was kept in it. */
  void close() {
    if (mapped != null) {
      mapped.close();
    }
  }

  int size() {
    return n;
  }
}
