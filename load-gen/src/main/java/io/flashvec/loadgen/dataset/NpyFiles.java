package io.flashvec.loadgen.dataset;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reader (and a small writer, for tests and tools) of NumPy {@code .npy} files holding a 2-D array.
 *
 * <pre>
 * "\x93NUMPY" | major u8 | minor u8 | header_len (u16 LE for v1, u32 LE for v2/v3)
 * | header: ASCII dict {'descr': '&lt;f4', 'fortran_order': False, 'shape': (n, d), } padded
 * | data: n × d elements, C order
 * </pre>
 *
 * Supported element types: {@code <f4} (float32 little endian) and, for ground truth, {@code <i4}
 * and {@code <i8}. Fortran order and big-endian data are rejected with a {@link
 * DatasetFormatException}. Stateless; thread-safe.
 */
public final class NpyFiles {
  private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
  private static final Pattern DESCR = Pattern.compile("'descr'\\s*:\\s*'([^']*)'");
  private static final Pattern FORTRAN = Pattern.compile("'fortran_order'\\s*:\\s*(True|False)");
  private static final Pattern SHAPE = Pattern.compile("'shape'\\s*:\\s*\\(([^)]*)\\)");

  private NpyFiles() {}

  /** The parsed header of a {@code .npy} file. */
  public record Header(String descr, long rows, int cols, long dataOffset) {}

  /** Reads a 2-D float32 array (at most {@code limit} rows). */
  public static float[][] readFloats(Path file, int limit) {
    Header h = header(file);
    if (!h.descr.equals("<f4")) {
      throw unsupported(file, h, "float32", ", expected=<f4");
    }
    float[][] out = new float[(int) Math.min(h.rows, limit)][h.cols];
    return readRows(file, h, out, 4, (r, body) -> body.asFloatBuffer().get(r));
  }

  /** Reads a 2-D int32 or int64 array (ground truth ids) as ints. */
  public static int[][] readInts(Path file, int limit) {
    Header h = header(file);
    int width =
        switch (h.descr) {
          case "<i4" -> 4;
          case "<i8" -> 8;
          default -> throw unsupported(file, h, "int32 or int64", "");
        };
    int[][] out = new int[(int) Math.min(h.rows, limit)][h.cols];
    return readRows(
        file,
        h,
        out,
        width,
        (r, body) -> {
          for (int i = 0; i < r.length; i++) {
            r[i] = width == 4 ? body.getInt(i * 4) : Math.toIntExact(body.getLong(i * 8));
          }
        });
  }

  private static DatasetFormatException unsupported(
      Path file, Header h, String expected, String detail) {
    return new DatasetFormatException(
        "unsupported npy dtype, expected "
            + expected
            + " little endian [file="
            + file
            + ", descr="
            + h.descr
            + detail
            + "]");
  }

  /** Parses the header of a {@code .npy} file. */
  public static Header header(Path file) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer pre = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
      read(ch, pre, 0, file);
      for (int i = 0; i < MAGIC.length; i++) {
        if (pre.get(i) != MAGIC[i]) {
          throw new DatasetFormatException("not a npy file, bad magic [file=" + file + "]");
        }
      }
      int major = pre.get(6) & 0xFF;
      long headerLen;
      int headerStart;
      if (major == 1) {
        headerLen = pre.getShort(8) & 0xFFFF;
        headerStart = 10;
      } else if (major == 2 || major == 3) {
        headerLen = pre.getInt(8) & 0xFFFFFFFFL;
        headerStart = 12;
      } else {
        throw new DatasetFormatException(
            "unsupported npy version [file=" + file + ", major=" + major + "]");
      }
      if (headerLen > 1 << 20) {
        throw new DatasetFormatException(
            "npy header too long [file=" + file + ", headerLen=" + headerLen + "]");
      }
      ByteBuffer hb = ByteBuffer.allocate((int) headerLen);
      read(ch, hb, headerStart, file);
      String dict = new String(hb.array(), StandardCharsets.ISO_8859_1);
      String descr = group(DESCR, dict, file, "descr");
      if (group(FORTRAN, dict, file, "fortran_order").equals("True")) {
        throw new DatasetFormatException(
            "npy file is in Fortran order, only C order is supported [file=" + file + "]");
      }
      String[] dims = group(SHAPE, dict, file, "shape").split(",");
      long rows;
      int cols;
      String d0 = dims.length > 0 ? dims[0].trim() : "";
      String d1 = dims.length > 1 ? dims[1].trim() : "";
      if (d0.isEmpty() || d1.isEmpty() || (dims.length > 2 && !dims[2].isBlank())) {
        throw new DatasetFormatException(
            "npy array is not 2-D [file=" + file + ", shape=(" + String.join(",", dims) + ")]");
      }
      rows = Long.parseLong(d0);
      cols = Integer.parseInt(d1);
      long dataOffset = headerStart + headerLen;
      int width = descr.length() > 2 ? Integer.parseInt(descr.substring(2)) : 0;
      long need = dataOffset + rows * cols * width;
      if (ch.size() < need) {
        throw new DatasetFormatException(
            "npy file is truncated [file=" + file + ", size=" + ch.size() + ", need=" + need + "]");
      }
      return new Header(descr, rows, cols, dataOffset);
    } catch (NumberFormatException e) {
      throw new DatasetFormatException(
          "bad npy header [file=" + file + ", error=" + e.getMessage() + "]");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read npy file [file=" + file + "]", e);
    }
  }

  /** Writes a 2-D float32 array as a version 1.0 {@code .npy} file. */
  public static void writeFloats(Path file, float[][] rows) {
    int cols = rows.length == 0 ? 0 : rows[0].length;
    String dict =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (" + rows.length + ", " + cols + "), }";
    // header (magic + version + len + dict + '\n') is padded to a multiple of 64 bytes
    int unpadded = 10 + dict.length() + 1;
    int pad = (64 - unpadded % 64) % 64;
    String header = dict + " ".repeat(pad) + "\n";
    ByteBuffer buf =
        ByteBuffer.allocate(10 + header.length() + rows.length * cols * 4)
            .order(ByteOrder.LITTLE_ENDIAN);
    buf.put(MAGIC).put((byte) 1).put((byte) 0).putShort((short) header.length());
    buf.put(header.getBytes(StandardCharsets.ISO_8859_1));
    for (float[] r : rows) {
      for (float v : r) {
        buf.putFloat(v);
      }
    }
    try {
      Files.write(file, buf.array());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write npy file [file=" + file + "]", e);
    }
  }

  /**
   * Reads the first {@code out.length} rows of elements {@code width} bytes wide into {@code out}.
   */
  private static <T> T[] readRows(
      Path file, Header h, T[] out, int width, BiConsumer<T, ByteBuffer> reader) {
    int rows = out.length;
    long rowBytes = (long) h.cols * width;
    int perChunk = (int) Math.max(1, (1 << 22) / Math.max(1, rowBytes));
    ByteBuffer buf =
        ByteBuffer.allocateDirect((int) (perChunk * rowBytes)).order(ByteOrder.LITTLE_ENDIAN);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      int row = 0;
      while (row < rows) {
        int n = Math.min(perChunk, rows - row);
        buf.clear().limit((int) (n * rowBytes));
        read(ch, buf, h.dataOffset + row * rowBytes, file);
        for (int i = 0; i < n; i++) {
          reader.accept(
              out[row + i],
              buf.slice((int) (i * rowBytes), (int) rowBytes).order(ByteOrder.LITTLE_ENDIAN));
        }
        row += n;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read npy file [file=" + file + "]", e);
    }
    return out;
  }

  private static void read(FileChannel ch, ByteBuffer buf, long pos, Path file) throws IOException {
    while (buf.hasRemaining()) {
      int r = ch.read(buf, pos);
      if (r < 0) {
        throw new DatasetFormatException("npy file is truncated [file=" + file + "]");
      }
      pos += r;
    }
  }

  private static String group(Pattern p, String dict, Path file, String key) {
    Matcher m = p.matcher(dict);
    if (!m.find()) {
      throw new DatasetFormatException(
          "npy header lacks a key [file="
              + file
              + ", key="
              + key
              + ", header="
              + dict.trim()
              + "]");
    }
    return m.group(1);
  }
}
