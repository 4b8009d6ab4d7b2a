package io.flashvec.loadgen.dataset;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * A vector file mapped into memory: the base set of a dataset read in place, so that a set larger
 * than the heap (tens of millions of vectors) is scanned through the page cache instead of being
 * copied into a {@code float[n][]}. Two layouts, told apart by the file name:
 *
 * <pre>
 * .fvecs (TEXMEX):          record r at r × (4 + 4·dim):  int32 dim (LE) | dim × float32 (LE)
 * .fbin (big-ann-benchmarks): int32 n (LE) | int32 dim (LE) | n × dim × float32 (LE)
 * </pre>
 *
 * <p>{@link #open} checks the header and that the size matches it (fvecs: ends on a record
 * boundary; fbin: exactly {@code 8 + 4·n·dim} bytes). Every read of an fvecs record checks its
 * dimension, so a damaged record fails with a {@link DatasetFormatException} naming the row instead
 * of returning garbage.
 *
 * <p>Single rows are read from the mapping as it is; a bulk read ({@link #get(int, int, float[])},
 * the step of a sequential scan such as ground truth) releases the pages it read from the mapping
 * afterwards, so that scanning tens of gigabytes leaves the resident set of the process alone.
 *
 * <p>This object owns the mapping (a shared arena): reads are safe from any thread while it is
 * open; {@link #close} unmaps it and must come after the last read. Closing twice is harmless.
 */
public final class VectorFile implements Vectors, AutoCloseable {
  private static final ValueLayout.OfInt LE_INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfFloat LE_FLOAT =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** The largest dimension accepted (as for vecs files). */
  private static final int MAX_DIM = 1_000_000;

  private final Path file;
  private final int dim;
  private final int size;

  /** Bytes before the first record (fbin: the 8-byte header). */
  private final long start;

  /** Bytes before each row's floats (fvecs: its int32 dim). */
  private final int rowPrefix;

  private final long recordBytes;
  private final Arena arena;
  private final MemorySegment data;

  private VectorFile(
      Path file, int dim, int size, long start, int rowPrefix, Arena arena, MemorySegment data) {
    this.file = file;
    this.dim = dim;
    this.size = size;
    this.start = start;
    this.rowPrefix = rowPrefix;
    this.recordBytes = rowPrefix + 4L * dim;
    this.arena = arena;
    this.data = data;
  }

  /**
   * True if {@code file} is named like a file {@link #open} maps ({@code .fvecs}, {@code .fbin}).
   */
  public static boolean supports(Path file) {
    String n = file.getFileName().toString().toLowerCase(Locale.ROOT);
    return n.endsWith(".fvecs") || n.endsWith(".fbin");
  }

  /**
   * Maps the {@code .fvecs} or {@code .fbin} file {@code file}.
   *
   * @throws DatasetFormatException if the header is bad, the size does not match it or the file
   *     holds more than {@code Integer.MAX_VALUE - 8} vectors
   * @throws IllegalArgumentException if the file is named neither {@code .fvecs} nor {@code .fbin}
   */
  public static VectorFile open(Path file) {
    if (!supports(file)) {
      throw new IllegalArgumentException(
          "not a vector file to map [file=" + file + ", expected=.fvecs or .fbin]");
    }
    boolean fbin = file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".fbin");
    Arena arena = Arena.ofShared();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long fileSize = ch.size();
      int dim;
      int rows;
      long start;
      int prefix;
      if (fbin) {
        ByteBuffer h = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        while (fileSize >= 8 && h.hasRemaining()) {
          ch.read(h, h.position());
        }
        long n = fileSize < 8 ? -1 : Integer.toUnsignedLong(h.getInt(0));
        long d = fileSize < 8 ? -1 : Integer.toUnsignedLong(h.getInt(4));
        if (n < 0 || d < 1 || d > MAX_DIM || fileSize != 8 + 4 * n * d) {
          throw new DatasetFormatException(
              "bad fbin header or size [file="
                  + file
                  + ", n="
                  + n
                  + ", dim="
                  + d
                  + ", size="
                  + fileSize
                  + ", expected 8 + 4 * n * dim bytes]");
        }
        if (n > Integer.MAX_VALUE - 8) {
          throw new DatasetFormatException(
              "vector file has too many rows [file=" + file + ", rows=" + n + "]");
        }
        dim = (int) d;
        rows = (int) n;
        start = 8;
        prefix = 0;
      } else {
        VecsFiles.Header h = VecsFiles.header(file, 4, Integer.MAX_VALUE);
        if (h.fileRows() != h.rows()) {
          throw new DatasetFormatException(
              "vector file has too many rows [file=" + file + ", rows=" + h.fileRows() + "]");
        }
        dim = h.dim();
        rows = h.rows();
        start = 0;
        prefix = 4;
      }
      MemorySegment data =
          rows == 0
              ? MemorySegment.NULL
              : ch.map(FileChannel.MapMode.READ_ONLY, 0, start + rows * (prefix + 4L * dim), arena);
      return new VectorFile(file, dim, rows, start, prefix, arena, data);
    } catch (IOException e) {
      arena.close();
      throw new UncheckedIOException("cannot map vector file [file=" + file + "]", e);
    } catch (RuntimeException | Error e) {
      arena.close();
      throw e;
    }
  }

  /** The mapped file. */
  public Path file() {
    return file;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public int dim() {
    return dim;
  }

  @Override
  public void get(int row, float[] dst, int off) {
    long at = recordOffset(row);
    MemorySegment.copy(data, LE_FLOAT, at + rowPrefix, dst, off, dim);
  }

  @Override
  public void get(int from, int to, float[] dst) {
    if (from < 0 || to > size || from > to) {
      throw new IndexOutOfBoundsException(
          "rows out of range [rows=" + from + ":" + to + ", size=" + size + "]");
    }
    for (int r = from; r < to; r++) {
      get(r, dst, (r - from) * dim);
    }
    if (to > from) {
      // a bulk read is a step of a sequential scan: drop the pages from this mapping (they stay
      // in the page cache), so a scan of a file larger than memory does not grow the RSS
      data.asSlice(start + from * recordBytes, (to - from) * recordBytes).unload();
    }
  }

  private long recordOffset(int row) {
    if (row < 0 || row >= size) {
      throw new IndexOutOfBoundsException(
          "row out of range [file=" + file + ", row=" + row + ", size=" + size + "]");
    }
    long at = start + row * recordBytes;
    if (rowPrefix == 0) {
      return at;
    }
    int d = data.get(LE_INT, at);
    if (d != dim) {
      throw new DatasetFormatException(
          "vecs record has a different dimension [file="
              + file
              + ", row="
              + row
              + ", dim="
              + d
              + ", expected="
              + dim
              + "]");
    }
    return at;
  }

  @Override
  public void close() {
    if (arena.scope().isAlive()) {
      arena.close();
    }
  }

  @Override
  public String toString() {
    return "VectorFile[file=" + file + ", size=" + size + ", dim=" + dim + "]";
  }
}
