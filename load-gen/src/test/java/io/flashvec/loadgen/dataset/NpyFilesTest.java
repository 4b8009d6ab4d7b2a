package io.flashvec.loadgen.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NpyFilesTest {
  @TempDir Path dir;

  /** Writes a .npy v1 file the way numpy.save does (header padded to 64 bytes). */
  static Path npy(Path file, String descr, boolean fortran, String shape, ByteBuffer data)
      throws Exception {
    String dict =
        "{'descr': '"
            + descr
            + "', 'fortran_order': "
            + (fortran ? "True" : "False")
            + ", 'shape': "
            + shape
            + ", }";
    int pad = (64 - (10 + dict.length() + 1) % 64) % 64;
    String header = dict + " ".repeat(pad) + "\n";
    ByteBuffer b =
        ByteBuffer.allocate(10 + header.length() + data.capacity()).order(ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0});
    b.putShort((short) header.length());
    b.put(header.getBytes(StandardCharsets.US_ASCII));
    b.put(data.array());
    Files.write(file, b.array());
    return file;
  }

  @Test
  void readsFloat32CorderArray() throws Exception {
    ByteBuffer d = ByteBuffer.allocate(6 * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : new float[] {1, 2, 3, 4.5f, -5, 6}) {
      d.putFloat(v);
    }
    Path f = npy(dir.resolve("a.npy"), "<f4", false, "(2, 3)", d);

    float[][] v = NpyFiles.readFloats(f, Integer.MAX_VALUE);

    assertThat(v).isDeepEqualTo(new float[][] {{1, 2, 3}, {4.5f, -5, 6}});
    assertThat(NpyFiles.readFloats(f, 1)).isDeepEqualTo(new float[][] {{1, 2, 3}});
  }

  @Test
  void readsInt64GroundTruth() throws Exception {
    ByteBuffer d = ByteBuffer.allocate(4 * 8).order(ByteOrder.LITTLE_ENDIAN);
    for (long v : new long[] {3, 1, 0, 2}) {
      d.putLong(v);
    }
    Path f = npy(dir.resolve("gt.npy"), "<i8", false, "(2, 2)", d);
    assertThat(NpyFiles.readInts(f, 10)).isDeepEqualTo(new int[][] {{3, 1}, {0, 2}});
  }

  @Test
  void writerOutputReadsBack() {
    float[][] v = {{0.5f, 1.5f}, {2, 3}, {4, 5}};
    Path f = dir.resolve("w.npy");
    NpyFiles.writeFloats(f, v);
    assertThat(NpyFiles.header(f).dataOffset() % 64).isZero();
    assertThat(NpyFiles.readFloats(f, 100)).isDeepEqualTo(v);
  }

  @Test
  void rejectsFortranOrderBigEndianAndOneDimensionalArrays() throws Exception {
    ByteBuffer d = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
    Path fortran = npy(dir.resolve("f.npy"), "<f4", true, "(2, 2)", d);
    assertThatThrownBy(() -> NpyFiles.readFloats(fortran, 10))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("Fortran order");
    Path big = npy(dir.resolve("b.npy"), ">f4", false, "(2, 2)", d);
    assertThatThrownBy(() -> NpyFiles.readFloats(big, 10))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("descr=>f4");
    Path oneD = npy(dir.resolve("o.npy"), "<f4", false, "(4,)", d);
    assertThatThrownBy(() -> NpyFiles.readFloats(oneD, 10))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("not 2-D");
  }
}
