package io.flashvec.index.disk;

import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * Product-quantization codes kept in RAM to guide the beam search: a codebook of {@code K}
 * centroids per subspace and one byte per subspace per point, all in flat arrays so that scoring a
 * whole neighbour list is a tight loop over a per-query lookup table (asymmetric distance
 * computation). The codebook is trained by jvector at build time; this class owns the file and the
 * scoring.
 *
 * <h2>File {@code pq.fvs}</h2>
 *
 * A {@link ChecksummedFile} ({@code segment-pq} v1) whose body is, little-endian: {@code int count
 * | int subspaces M | int clusters K | int dim | byte centered | float[dim] centroid (if centered)
 * | int[M] subspace sizes | float[sum over m of K*size_m] codebooks (subspace-major,
 * centroid-major) | byte[count*M] codes (point-major)}.
 *
 * <p>Distances are "lower is better": for L2 the squared distance to the reconstruction, for dot
 * product the negated dot product.
 */
public final class PqCodes {

  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final VectorSpecies<Integer> ISPECIES =
      VectorSpecies.of(int.class, SPECIES.vectorShape());
  private static final VectorSpecies<Byte> BSPECIES =
      VectorSpecies.of(byte.class, VectorShape.forBitSize(SPECIES.vectorBitSize() / 4));

  static final String FORMAT = "segment-pq";
  static final int VERSION = 1;

  private final int count;
  private final int m;
  private final int k;
  private final int dim;
  private final float[] centroid; // null unless centered
  private final int[] sizes;
  private final int[] offsets; // dimension offset of each subspace
  private final float[] codebooks;

  /** Per subspace, dimension-major: {@code [s][i][c]}, so a table row is one SIMD sweep. */
  private final float[] transposed;

  private final int[] codebookOffsets; // float offset of each subspace's K centroids
  private final byte[] codes;
  private final int[] rowBase; // s * K, padded to whole vectors

  public PqCodes(
      int count, int k, int dim, float[] centroid, int[] sizes, float[] codebooks, byte[] codes) {
    this.count = count;
    this.m = sizes.length;
    this.k = k;
    this.dim = dim;
    this.centroid = centroid;
    this.sizes = sizes;
    this.offsets = new int[m];
    this.codebookOffsets = new int[m];
    int d = 0;
    int c = 0;
    for (int i = 0; i < m; i++) {
      offsets[i] = d;
      codebookOffsets[i] = c;
      d += sizes[i];
      c += k * sizes[i];
    }
    if (d != dim || c != codebooks.length || codes.length != (long) count * m || k > 256) {
      throw new IllegalArgumentException(
          "inconsistent PQ [dim="
              + dim
              + ", sum of sizes="
              + d
              + ", codebook floats="
              + codebooks.length
              + ", codes="
              + codes.length
              + ", count="
              + count
              + ", M="
              + m
              + ", K="
              + k
              + "]");
    }
    this.codebooks = codebooks;
    this.codes = codes;
    this.rowBase = new int[m + ISPECIES.length()];
    for (int s = 0; s < rowBase.length; s++) {
      rowBase[s] = s * k;
    }
    this.transposed = new float[codebooks.length];
    for (int s = 0; s < m; s++) {
      int co = codebookOffsets[s];
      for (int cc = 0; cc < k; cc++) {
        for (int i = 0; i < sizes[s]; i++) {
          transposed[co + i * k + cc] = codebooks[co + cc * sizes[s] + i];
        }
      }
    }
  }

  public int count() {
    return count;
  }

  public int subspaces() {
    return m;
  }

  public int clusters() {
    return k;
  }

  /** The per-query lookup table: {@code M*K} partial distances. */
  public float[] newTable() {
    return new float[m * k];
  }

  /**
   * Fills {@code table} for a query: entry {@code s*K + c} is subspace {@code s}'s contribution of
   * centroid {@code c} (squared L2, or the negated dot product).
   */
  public void fillTable(float[] query, boolean euclid, float[] table, float[] scratch) {
    float[] q = query;
    if (centroid != null && euclid) {
      q = scratch;
      for (int i = 0; i < dim; i++) {
        q[i] = query[i] - centroid[i];
      }
    }
    int bound = SPECIES.loopBound(k);
    for (int s = 0; s < m; s++) {
      int t = s * k;
      int qo = offsets[s];
      int co = codebookOffsets[s];
      int size = sizes[s];
      int c = 0;
      for (; c < bound; c += SPECIES.length()) {
        FloatVector acc = FloatVector.zero(SPECIES);
        for (int i = 0; i < size; i++) {
          FloatVector vq = FloatVector.broadcast(SPECIES, q[qo + i]);
          FloatVector b = FloatVector.fromArray(SPECIES, transposed, co + i * k + c);
          if (euclid) {
            FloatVector d = vq.sub(b);
            acc = d.fma(d, acc);
          } else {
            acc = vq.fma(b, acc);
          }
        }
        acc.intoArray(table, t + c);
      }
      for (; c < k; c++) {
        float acc = 0;
        for (int i = 0; i < size; i++) {
          float qi = q[qo + i];
          float b = transposed[co + i * k + c];
          acc += euclid ? (qi - b) * (qi - b) : qi * b;
        }
        table[t + c] = acc;
      }
    }
    if (!euclid) {
      for (int i = 0; i < m * k; i++) {
        table[i] = -table[i];
      }
    }
    if (centroid != null && !euclid) {
      // dot(q, x) = dot(q, centroid) + dot(q, x - centroid): a constant per query, kept so the
      // approximate distances stay on the scale of the exact ones.
      float base = 0;
      for (int i = 0; i < dim; i++) {
        base -= query[i] * centroid[i];
      }
      for (int c = 0; c < k; c++) {
        table[c] += base;
      }
    }
  }

  /**
   * Approximate distances of {@code n} points at once: {@code out[j]} for point {@code ids[j]}. The
   * loop walks each point's {@code M} code bytes in order with four independent sums, so the table
   * lookups pipeline instead of waiting on one accumulator.
   */
  public void distances(float[] table, int[] ids, int n, float[] out) {
    final byte[] c = codes;
    final int mm = m;
    final int kk = k;
    final int m4 = mm & ~3;
    for (int j = 0; j < n; j++) {
      int base = ids[j] * mm;
      float a0 = 0;
      float a1 = 0;
      float a2 = 0;
      float a3 = 0;
      int s = 0;
      int t = 0;
      for (; s < m4; s += 4, t += 4 * kk) {
        a0 += table[t + (c[base + s] & 0xff)];
        a1 += table[t + kk + (c[base + s + 1] & 0xff)];
        a2 += table[t + 2 * kk + (c[base + s + 2] & 0xff)];
        a3 += table[t + 3 * kk + (c[base + s + 3] & 0xff)];
      }
      for (; s < mm; s++, t += kk) {
        a0 += table[t + (c[base + s] & 0xff)];
      }
      out[j] = (a0 + a1) + (a2 + a3);
    }
  }

  /**
   * {@link #distances} with SIMD gathers: per point, the code bytes are widened to table indices
   * ({@code s*K + code}) {@code lanes} at a time and the table entries gathered and summed in
   * vector registers. {@code idx} is scratch of at least {@link #gatherScratchLength()} ints.
   */
  public void distancesGather(float[] table, int[] ids, int n, float[] out, int[] idx) {
    final byte[] c = codes;
    final int mm = m;
    final int lanes = ISPECIES.length();
    final int bound = mm - mm % lanes;
    for (int j = 0; j < n; j++) {
      int base = ids[j] * mm;
      FloatVector acc = FloatVector.zero(SPECIES);
      int s = 0;
      for (; s < bound; s += lanes) {
        IntVector iv =
            (IntVector)
                ByteVector.fromArray(BSPECIES, c, base + s)
                    .convertShape(VectorOperators.ZERO_EXTEND_B2I, ISPECIES, 0);
        iv.add(IntVector.fromArray(ISPECIES, rowBase, s)).intoArray(idx, 0);
        acc = acc.add(FloatVector.fromArray(SPECIES, table, 0, idx, 0));
      }
      float sum = acc.reduceLanes(VectorOperators.ADD);
      for (; s < mm; s++) {
        sum += table[s * k + (c[base + s] & 0xff)];
      }
      out[j] = sum;
    }
  }

  public int gatherScratchLength() {
    return ISPECIES.length();
  }

  /** Heap bytes held. */
  public long memoryBytes() {
    return codes.length + 8L * codebooks.length + (centroid == null ? 0 : 4L * dim) + 64;
  }

  /** Writes the codebook and codes as a checksummed file (fsynced by {@link ChecksummedFile}). */
  public void write(FileIO io, Path path, int segmentId) throws IOException {
    long size =
        4 * 4
            + 1
            + (centroid == null ? 0 : 4L * dim)
            + 4L * m
            + 4L * codebooks.length
            + codes.length;
    if (size > Integer.MAX_VALUE - 64) {
      throw new IllegalStateException("PQ file too large [bytes=" + size + "]");
    }
    ByteBuffer b = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(count).putInt(m).putInt(k).putInt(dim).put((byte) (centroid == null ? 0 : 1));
    if (centroid != null) {
      b.asFloatBuffer().put(centroid);
      b.position(b.position() + 4 * dim);
    }
    for (int s : sizes) {
      b.putInt(s);
    }
    b.asFloatBuffer().put(codebooks);
    b.position(b.position() + 4 * codebooks.length);
    b.put(codes);
    ChecksummedFile.write(io, path, FORMAT, VERSION, segmentId, b.array());
  }

  /** Reads a file written by {@link #write}, verifying its checksum. */
  public static PqCodes read(FileIO io, Path path, int segmentId) throws IOException {
    ChecksummedFile.Contents f = ChecksummedFile.read(io, path, FORMAT, VERSION, VERSION);
    if (f.segmentId() != segmentId) {
      throw new CorruptFileException(
          "PQ file belongs to another segment [expected="
              + segmentId
              + ", got="
              + f.segmentId()
              + "]",
          path);
    }
    ByteBuffer b = f.body().order(ByteOrder.LITTLE_ENDIAN);
    try {
      int count = b.getInt();
      int m = b.getInt();
      int k = b.getInt();
      int dim = b.getInt();
      boolean centered = b.get() != 0;
      if (count < 0 || m <= 0 || m > dim || k <= 0 || k > 256 || dim <= 0) {
        throw new CorruptFileException(
            "PQ header is inconsistent [count=" + count + ", M=" + m + ", K=" + k + "]", path);
      }
      float[] centroid = null;
      if (centered) {
        centroid = new float[dim];
        b.asFloatBuffer().get(centroid);
        b.position(b.position() + 4 * dim);
      }
      int[] sizes = new int[m];
      int total = 0;
      for (int i = 0; i < m; i++) {
        sizes[i] = b.getInt();
        total += sizes[i];
      }
      float[] books = new float[k * total];
      b.asFloatBuffer().get(books);
      b.position(b.position() + 4 * books.length);
      byte[] codes = new byte[Math.multiplyExact(count, m)];
      b.get(codes);
      return new PqCodes(count, k, dim, centroid, sizes, books, codes);
    } catch (RuntimeException e) {
      if (e instanceof CorruptFileException c) {
        throw c;
      }
      throw new CorruptFileException("PQ file is malformed: " + e, path, e);
    }
  }
}
