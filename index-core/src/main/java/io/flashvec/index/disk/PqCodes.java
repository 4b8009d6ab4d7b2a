package io.flashvec.index.disk;

import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Product-quantization codes kept in RAM to guide the beam search: a codebook of {@code K}
 * centroids per subspace and one byte per subspace per point, all in flat arrays so that scoring a
 * whole neighbour list is a tight loop over a per-query lookup table (asymmetric distance
 * computation). The codebook ({@link PqCodebook}) is trained by jvector at build time, or taken
 * over from a growing segment that encoded its points with its shard's codebook; this class owns
 * the file and the scoring.
 *
 * <h2>File {@code pq.fvs}</h2>
 *
 * A {@link ChecksummedFile} ({@code segment-pq} v2) whose body is, little-endian: {@code int count
 * | int subspaces M | int clusters K | int dim | byte flags (1: centred, 2: rotated) | float[dim]
 * centroid (if centred) | float[dim*dim] rotation, row-major (if rotated) | int[M] subspace sizes |
 * float[sum over m of K*size_m] codebooks (subspace-major, centroid-major) | byte[count*M] codes
 * (point-major)}. Version 1 files (no rotation, flags 0 or 1) are still read.
 *
 * <p>Distances are "lower is better": for L2 the squared distance to the reconstruction, for dot
 * product the negated dot product.
 */
public final class PqCodes {

  static final String FORMAT = "segment-pq";
  static final int VERSION = 2;
  static final int MIN_VERSION = 1;

  private final int count;
  private final PqCodebook book;
  private final int m;
  private final byte[] codes;

  public PqCodes(
      int count, int k, int dim, float[] centroid, int[] sizes, float[] codebooks, byte[] codes) {
    this(new PqCodebook(k, dim, centroid, sizes, codebooks), count, codes);
  }

  /** {@code count} points' codes ({@code count * M} bytes, point-major) of {@code codebook}. */
  public PqCodes(PqCodebook codebook, int count, byte[] codes) {
    this.book = codebook;
    this.count = count;
    this.m = codebook.subspaces();
    if (codes.length != (long) count * m) {
      throw new IllegalArgumentException(
          "inconsistent PQ [codes=" + codes.length + ", count=" + count + ", M=" + m + "]");
    }
    this.codes = codes;
  }

  public int count() {
    return count;
  }

  /**
   * Rearranges the codes in place so that point {@code i}'s code becomes the one of point {@code
   * order[i]} ({@link PageOrder#gather}): for a writer renumbering its points, before the codes are
   * written or searched.
   */
  public void permute(int[] order) {
    PageOrder.checkPermutation(order, count);
    PageOrder.gather(order, codes, m);
  }

  public PqCodebook codebook() {
    return book;
  }

  public int subspaces() {
    return m;
  }

  public int clusters() {
    return book.clusters();
  }

  /** The per-query lookup table: {@code M*K} partial distances. */
  public float[] newTable() {
    return book.newTable();
  }

  /** See {@link PqCodebook#fillTable}. */
  public void fillTable(float[] query, boolean euclid, float[] table, float[] scratch) {
    book.fillTable(query, euclid, table, scratch);
  }

  /** Approximate distances of {@code n} points at once: {@code out[j]} for point {@code ids[j]}. */
  public void distances(float[] table, int[] ids, int n, float[] out) {
    book.distances(table, codes, ids, n, out);
  }

  /**
   * {@link #distances} with SIMD gathers (see {@link PqCodebook#distanceGather}). {@code idx} is
   * scratch of at least {@link #gatherScratchLength()} ints.
   */
  public void distancesGather(float[] table, int[] ids, int n, float[] out, int[] idx) {
    for (int j = 0; j < n; j++) {
      out[j] = book.distanceGather(table, codes, ids[j] * m, idx);
    }
  }

  /**
   * Loads one byte of every cache line of the codes of {@code ids[0, n)} and returns their sum, so
   * that the caller can keep it where the JIT cannot drop the loads. Scoring a batch right after
   * finds its codes in the cache: the loads here are independent, so their misses overlap, while
   * the scoring loop would take them one code at a time (768-d, 192-byte codes spread over 19 MB:
   * 300 → 233 µs per search at search list 15, one thread; Java has no prefetch instruction).
   */
  public int touch(int[] ids, int n) {
    int x = 0;
    final int mm = m;
    for (int j = 0; j < n; j++) {
      int base = ids[j] * mm;
      for (int o = 0; o < mm; o += 64) {
        x += codes[base + o];
      }
    }
    return x;
  }

  public int gatherScratchLength() {
    return book.gatherScratchLength();
  }

  /** Heap bytes held. */
  public long memoryBytes() {
    return codes.length + book.memoryBytes();
  }

  /**
   * Writes the codebook and codes as a checksummed file (fsynced by {@link ChecksummedFile}),
   * streamed: the codes are not copied (a merged segment's are hundreds of megabytes, written under
   * the memory budget beside the codes being replaced).
   */
  public void write(FileIO io, Path path, int segmentId) throws IOException {
    float[] centroid = book.centroid;
    float[] rotation = book.rotation;
    float[] codebooks = book.codebooks;
    int dim = book.dim;
    try (ChecksummedFile.Writer w =
        ChecksummedFile.Writer.create(io, path, FORMAT, VERSION, segmentId)) {
      int flags = (centroid == null ? 0 : 1) | (rotation == null ? 0 : 2);
      w.putInt(count).putInt(m).putInt(book.k).putInt(dim).putByte((byte) flags);
      if (centroid != null) {
        w.putFloats(centroid, 0, centroid.length);
      }
      if (rotation != null) {
        w.putFloats(rotation, 0, rotation.length);
      }
      w.putInts(book.sizes, 0, book.sizes.length);
      w.putFloats(codebooks, 0, codebooks.length);
      w.put(codes, 0, codes.length);
      w.commit();
    }
  }

  /** Reads a file written by {@link #write}, verifying its checksum. */
  public static PqCodes read(FileIO io, Path path, int segmentId) throws IOException {
    // streamed, so that the codes are not held twice while they are read (the file's bytes and
    // the array); nothing is trusted before the checksum is verified at the end
    try (ChecksummedFile.Reader r =
        ChecksummedFile.Reader.open(io, path, FORMAT, MIN_VERSION, VERSION)) {
      if (r.segmentId() != segmentId) {
        throw new CorruptFileException(
            "PQ file belongs to another segment [expected="
                + segmentId
                + ", got="
                + r.segmentId()
                + "]",
            path);
      }
      try {
        return read(r, path);
      } catch (RuntimeException e) {
        if (e instanceof CorruptFileException c) {
          throw c;
        }
        throw new CorruptFileException("PQ file is malformed: " + e, path, e);
      }
    }
  }

  /** The body of a PQ file after its header, verified by its checksum before it is returned. */
  private static PqCodes read(ChecksummedFile.Reader r, Path path) throws IOException {
    int count = r.getInt();
    int m = r.getInt();
    int k = r.getInt();
    int dim = r.getInt();
    int flags = r.get();
    long rest = r.remaining();
    if (count < 0
        || m <= 0
        || m > dim
        || k <= 0
        || k > 256
        || dim <= 0
        || (flags & ~3) != 0
        || (r.version() < 2 && flags > 1)
        || 4L * dim > rest
        || 4L * m > rest
        || (long) count * m > rest) {
      throw new CorruptFileException(
          "PQ header is inconsistent [count="
              + count
              + ", M="
              + m
              + ", K="
              + k
              + ", flags="
              + flags
              + "]",
          path);
    }
    float[] centroid = null;
    if ((flags & 1) != 0) {
      centroid = new float[dim];
      r.getFloats(centroid, 0, dim);
    }
    float[] rotation = null;
    if ((flags & 2) != 0) {
      if (4L * dim * dim > r.remaining()) {
        throw new CorruptFileException("PQ rotation is truncated [dim=" + dim + "]", path);
      }
      rotation = new float[dim * dim];
      r.getFloats(rotation, 0, rotation.length);
    }
    int[] sizes = new int[m];
    r.getInts(sizes, 0, m);
    long total = 0;
    for (int size : sizes) {
      if (size <= 0 || size > dim) {
        throw new CorruptFileException(
            "PQ subspace size is out of range [size=" + size + ", dim=" + dim + "]", path);
      }
      total += size;
    }
    if (4L * k * total + (long) count * m > r.remaining()) {
      throw new CorruptFileException(
          "PQ codebooks are truncated [K=" + k + ", dims=" + total + "]", path);
    }
    float[] books = new float[Math.toIntExact(k * total)];
    r.getFloats(books, 0, books.length);
    byte[] codes = new byte[Math.multiplyExact(count, m)];
    r.get(codes, 0, codes.length);
    r.finish();
    return new PqCodes(PqCodebook.shared(k, dim, centroid, sizes, books, rotation), count, codes);
  }
}
