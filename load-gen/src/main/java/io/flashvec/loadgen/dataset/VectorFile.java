package io.flashvec.loadgen.dataset;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An fvecs file mapped into memory: the base set of a dataset read in place, so that a set larger
 * than the heap (tens of millions of vectors) is scanned through the page cache instead of being
 * copied into a {@code float[n][]}.
 *
 * <pre>
 * record r at offset r × (4 + 4·dim):  int32 dim (LE) | dim × float32 (LE)
 * </pre>
 *
 * <p>{@link #open} checks the first record's dimension and that the file ends on a record boundary;
 * every read checks its record's dimension, so a damaged record fails with a {@link
 * DatasetFormatException} naming the row instead of returning garbage.
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

  private final Path file;
  private final int dim;
  private final int size;
  private final long recordBytes;
  private final Arena arena;
  private final MemorySegment data;

  private VectorFile(Path file, int dim, int size, Arena arena, MemorySegment data) {
    this.file = file;
    this.dim = dim;
    this.size = size;
    this.recordBytes = 4L + 4L * dim;
    this.arena = arena;
    this.data = data;
  }

  /**
   * Maps the fvecs file {@code file}.
   *
   * @throws DatasetFormatException if the header is bad, the file does not end on a record boundary
   *     or holds more than {@code Integer.MAX_VALUE - 8} vectors
   */
  public static VectorFile open(Path file) {
    VecsFiles.Header h = VecsFiles.header(file, 4, Integer.MAX_VALUE);
    if (h.fileRows() != h.rows()) {
      throw new DatasetFormatException(
          "vecs file has too many rows [file=" + file + ", rows=" + h.fileRows() + "]");
    }
    Arena arena = Arena.ofShared();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      MemorySegment data =
          h.rows() == 0
              ? MemorySegment.NULL
              : ch.map(FileChannel.MapMode.READ_ONLY, 0, h.rows() * h.recordBytes(), arena);
      return new VectorFile(file, h.dim(), h.rows(), arena, data);
    } catch (IOException e) {
      arena.close();
      throw new UncheckedIOException("cannot map vecs file [file=" + file + "]", e);
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
    MemorySegment.copy(data, LE_FLOAT, at + 4, dst, off, dim);
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
      data.asSlice(from * recordBytes, (to - from) * recordBytes).unload();
    }
  }

  private long recordOffset(int row) {
    if (row < 0 || row >= size) {
      throw new IndexOutOfBoundsException(
          "row out of range [file=" + file + ", row=" + row + ", size=" + size + "]");
    }
    long at = row * recordBytes;
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
