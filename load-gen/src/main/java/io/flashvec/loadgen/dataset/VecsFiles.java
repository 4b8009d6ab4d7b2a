package io.flashvec.loadgen.dataset;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.function.BiConsumer;
import java.util.function.ToIntFunction;

/**
 * Readers and writers of the TEXMEX "vecs" formats used by SIFT, GIST and Deep1B.
 *
 * <pre>
 * record := int32 dim (little endian) | dim × element
 * fvecs: element = float32 LE     ivecs: element = int32 LE     bvecs: element = uint8
 * </pre>
 *
 * Every record of a file has the same {@code dim}; the reader checks that and that the file ends on
 * a record boundary. Writers write to a temporary file and rename it, so a reader never sees a
 * half-written file (ground truth is cached next to the data this way). Stateless; thread-safe.
 */
public final class VecsFiles {
  /** Bytes read or written per channel call; a multiple of every record size is not needed. */
  private static final int IO_CHUNK = 1 << 22;

  private VecsFiles() {}

  /** Reads all vectors of an fvecs file. */
  public static float[][] readFvecs(Path file) {
    return readFvecs(file, Integer.MAX_VALUE);
  }

  /** Reads at most {@code limit} vectors of an fvecs file. */
  public static float[][] readFvecs(Path file, int limit) {
    Header h = header(file, 4, limit);
    return readRecords(file, h, new float[h.rows][h.dim], (v, body) -> body.asFloatBuffer().get(v));
  }

  /** Reads all vectors of an ivecs file (ground truth: ids, best first). */
  public static int[][] readIvecs(Path file) {
    return readIvecs(file, Integer.MAX_VALUE);
  }

  /** Reads at most {@code limit} vectors of an ivecs file. */
  public static int[][] readIvecs(Path file, int limit) {
    Header h = header(file, 4, limit);
    return readRecords(file, h, new int[h.rows][h.dim], (v, body) -> body.asIntBuffer().get(v));
  }

  /** Reads at most {@code limit} vectors of a bvecs file (unsigned bytes) as floats. */
  public static float[][] readBvecs(Path file, int limit) {
    Header h = header(file, 1, limit);
    return readRecords(
        file,
        h,
        new float[h.rows][h.dim],
        (v, body) -> {
          for (int i = 0; i < v.length; i++) {
            v[i] = body.get(i) & 0xFF;
          }
        });
  }

  /** Writes {@code vectors} as fvecs, atomically (temporary file + rename). */
  public static void writeFvecs(Path file, float[][] vectors) {
    writeRecords(file, vectors, v -> v.length, 4, (row, v, body) -> body.asFloatBuffer().put(v));
  }

  /** Writes {@code rows} as ivecs, atomically. */
  public static void writeIvecs(Path file, int[][] rows) {
    writeRecords(file, rows, v -> v.length, 4, (row, v, body) -> body.asIntBuffer().put(v));
  }

  /**
   * Writes {@code vectors} as bvecs, atomically; each element must be an integer in [0, 255].
   *
   * @throws IllegalArgumentException if an element does not fit an unsigned byte
   */
  public static void writeBvecs(Path file, float[][] vectors) {
    writeRecords(
        file,
        vectors,
        v -> v.length,
        1,
        (row, r, body) -> {
          for (int i = 0; i < r.length; i++) {
            float v = r[i];
            if (v < 0 || v > 255 || v != Math.rint(v)) {
              throw new IllegalArgumentException(
                  "bvecs element is not an unsigned byte [row="
                      + row
                      + ", col="
                      + i
                      + ", value="
                      + v
                      + "]");
            }
            body.put(i, (byte) (int) v);
          }
        });
  }

  /**
   * Opens a streaming fvecs writer of {@code dim}-dimensional vectors: rows are appended in order
   * through a fixed buffer, so a file of any size is written in bounded memory. The file appears
   * (atomically, by rename) only on {@link FvecsWriter#commit()}.
   */
  public static FvecsWriter openFvecs(Path file, int dim) {
    return new FvecsWriter(file, dim);
  }

  /**
   * Appends fvecs records to a temporary file next to the target and renames it over the target on
   * {@link #commit()}; {@link #close()} without a commit deletes the temporary file, so a failed
   * run leaves no half-written dataset behind. Not thread-safe: one writer per thread.
   */
  public static final class FvecsWriter implements AutoCloseable {
    private final Path file;
    private final int dim;
    private final Path tmp;
    private final FileChannel ch;
    private final ByteBuffer buf;
    private long rows;
    private boolean committed;

    private FvecsWriter(Path file, int dim) {
      if (dim < 1) {
        throw new IllegalArgumentException(
            "dimension must be positive [file=" + file + ", dim=" + dim + "]");
      }
      this.file = file;
      this.dim = dim;
      int record = 4 + 4 * dim;
      this.buf =
          ByteBuffer.allocateDirect(Math.max(1, IO_CHUNK / record) * record)
              .order(ByteOrder.LITTLE_ENDIAN);
      Path t = null;
      try {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        t = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
        this.ch =
            FileChannel.open(t, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        this.tmp = t;
      } catch (IOException e) {
        deleteQuietly(t);
        throw new UncheckedIOException("cannot create vecs file [file=" + file + "]", e);
      }
    }

    /** Appends {@code rows} vectors stored back to back in {@code flat} from index 0. */
    public void append(float[] flat, int rows) {
      if ((long) rows * dim > flat.length) {
        throw new IllegalArgumentException(
            "not enough floats [rows=" + rows + ", dim=" + dim + ", floats=" + flat.length + "]");
      }
      try {
        for (int r = 0; r < rows; r++) {
          if (buf.remaining() < 4 + 4 * dim) {
            drain(ch, buf);
          }
          buf.putInt(dim);
          buf.asFloatBuffer().put(flat, r * dim, dim);
          buf.position(buf.position() + 4 * dim);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write vecs file [file=" + tmp + "]", e);
      }
      this.rows += rows;
    }

    /** The number of vectors appended so far. */
    public long rows() {
      return rows;
    }

    /** Flushes, forces to disk and renames the temporary file over the target. */
    public void commit() {
      try {
        drain(ch, buf);
        ch.force(true);
        ch.close();
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        committed = true;
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write vecs file [file=" + file + "]", e);
      }
    }

    /** Closes the file; without a {@link #commit()} the temporary file is deleted. */
    @Override
    public void close() {
      if (committed) {
        return;
      }
      try {
        ch.close();
      } catch (IOException ignored) {
        // the file is deleted below: its content does not matter
      }
      deleteQuietly(tmp);
    }
  }

  private static void deleteQuietly(Path p) {
    if (p != null) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException ignored) {
        // best effort: the original failure is what matters
      }
    }
  }

  /** The dimension and row count of a vecs file, from its first record and its size. */
  public record Header(int dim, long fileRows, int rows, int elementBytes) {
    long recordBytes() {
      return 4L + (long) dim * elementBytes;
    }
  }

  /** Reads the header of a vecs file whose elements have {@code elementBytes} bytes. */
  public static Header header(Path file, int elementBytes, int limit) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size == 0) {
        return new Header(0, 0, 0, elementBytes);
      }
      ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
      readFully(ch, b, 0, file);
      int dim = b.getInt(0);
      if (dim <= 0 || dim > 1_000_000) {
        throw new DatasetFormatException(
            "bad vecs header [file=" + file + ", dim=" + dim + ", size=" + size + "]");
      }
      long record = 4L + (long) dim * elementBytes;
      if (size % record != 0) {
        throw new DatasetFormatException(
            "vecs file does not end on a record boundary [file="
                + file
                + ", dim="
                + dim
                + ", recordBytes="
                + record
                + ", size="
                + size
                + "]");
      }
      long fileRows = size / record;
      int rows = (int) Math.min(Math.min(fileRows, limit), Integer.MAX_VALUE - 8);
      return new Header(dim, fileRows, rows, elementBytes);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read vecs header [file=" + file + "]", e);
    }
  }

  /** Writes one row's elements into its record body. */
  private interface RowWriter<T> {
    void write(int row, T values, ByteBuffer recordBody);
  }

  /** Reads the records into the rows of {@code out} (one per row, {@code h.rows}); returns it. */
  private static <T> T[] readRecords(
      Path file, Header h, T[] out, BiConsumer<T, ByteBuffer> reader) {
    if (h.rows == 0) {
      return out;
    }
    long record = h.recordBytes();
    int perChunk = (int) Math.max(1, IO_CHUNK / record);
    ByteBuffer buf =
        ByteBuffer.allocateDirect((int) (perChunk * record)).order(ByteOrder.LITTLE_ENDIAN);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      int row = 0;
      while (row < h.rows) {
        int n = Math.min(perChunk, h.rows - row);
        buf.clear().limit((int) (n * record));
        readFully(ch, buf, row * record, file);
        for (int i = 0; i < n; i++) {
          int off = (int) (i * record);
          int dim = buf.getInt(off);
          if (dim != h.dim) {
            throw new DatasetFormatException(
                "vecs record has a different dimension [file="
                    + file
                    + ", row="
                    + (row + i)
                    + ", dim="
                    + dim
                    + ", expected="
                    + h.dim
                    + "]");
          }
          ByteBuffer body = buf.slice(off + 4, (int) (record - 4)).order(ByteOrder.LITTLE_ENDIAN);
          reader.accept(out[row + i], body);
        }
        row += n;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read vecs file [file=" + file + "]", e);
    }
    return out;
  }

  private static void readFully(FileChannel ch, ByteBuffer buf, long pos, Path file)
      throws IOException {
    while (buf.hasRemaining()) {
      int r = ch.read(buf, pos);
      if (r < 0) {
        throw new DatasetFormatException(
            "vecs file is truncated [file=" + file + ", position=" + pos + "]");
      }
      pos += r;
    }
  }

  private static <T> void writeRecords(
      Path file, T[] rows, ToIntFunction<T> dims, int elementBytes, RowWriter<T> writer) {
    Path dir = file.toAbsolutePath().getParent();
    Path tmp = null;
    try {
      Files.createDirectories(dir);
      tmp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
      ByteBuffer buf = ByteBuffer.allocateDirect(IO_CHUNK).order(ByteOrder.LITTLE_ENDIAN);
      try (FileChannel ch =
          FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
        for (int row = 0; row < rows.length; row++) {
          int dim = dims.applyAsInt(rows[row]);
          int record = 4 + dim * elementBytes;
          if (record > buf.remaining()) {
            drain(ch, buf);
            if (record > buf.capacity()) {
              buf = ByteBuffer.allocateDirect(record).order(ByteOrder.LITTLE_ENDIAN);
            }
          }
          buf.putInt(dim);
          ByteBuffer body = buf.slice(buf.position(), record - 4).order(ByteOrder.LITTLE_ENDIAN);
          writer.write(row, rows[row], body);
          buf.position(buf.position() + record - 4);
        }
        drain(ch, buf);
        ch.force(true);
      }
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      tmp = null;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write vecs file [file=" + file + "]", e);
    } finally {
      if (tmp != null) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException ignored) {
          // best effort: the original failure is what matters
        }
      }
    }
  }

  private static void drain(FileChannel ch, ByteBuffer buf) throws IOException {
    buf.flip();
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
    buf.clear();
  }
}
