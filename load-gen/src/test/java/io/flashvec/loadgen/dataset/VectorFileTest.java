package io.flashvec.loadgen.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.loadgen.TestVectors;
import io.flashvec.testing.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VectorFileTest {
  @TempDir Path dir;

  @Test
  void readsTheSameRowsAsTheHeapReader() {
    SplittableRandom r = TestSeeds.splittableRandom("vectorFile");
    float[][] v = TestVectors.gaussian(r, 301, 13);
    Path f = dir.resolve("base.fvecs");
    VecsFiles.writeFvecs(f, v);
    try (VectorFile file = VectorFile.open(f)) {
      assertThat(file.size()).isEqualTo(301);
      assertThat(file.dim()).isEqualTo(13);
      for (int i = 0; i < v.length; i++) {
        assertThat(file.get(i)).containsExactly(v[i]);
      }
      float[] block = new float[5 * 13];
      file.get(100, 105, block);
      for (int i = 0; i < 5; i++) {
        assertThat(java.util.Arrays.copyOfRange(block, i * 13, (i + 1) * 13))
            .containsExactly(v[100 + i]);
      }
      assertThatThrownBy(() -> file.get(301))
          .isInstanceOf(IndexOutOfBoundsException.class)
          .hasMessageContaining("row=301, size=301");
    }
  }

  @Test
  void streamingWriterWritesWhatTheReaderReads() {
    SplittableRandom r = TestSeeds.splittableRandom("fvecsWriter");
    float[][] v = TestVectors.gaussian(r, 50, 7);
    float[] flat = new float[50 * 7];
    for (int i = 0; i < 50; i++) {
      System.arraycopy(v[i], 0, flat, i * 7, 7);
    }
    Path f = dir.resolve("w.fvecs");
    try (VecsFiles.FvecsWriter w = VecsFiles.openFvecs(f, 7)) {
      w.append(flat, 50);
      assertThat(f).doesNotExist();
      w.commit();
    }
    assertThat(VecsFiles.readFvecs(f)).isDeepEqualTo(v);

    Path abandoned = dir.resolve("abandoned.fvecs");
    try (VecsFiles.FvecsWriter w = VecsFiles.openFvecs(abandoned, 7)) {
      w.append(flat, 3);
    }
    assertThat(abandoned).doesNotExist();
    assertThat(dir.toFile().list()).containsExactly("w.fvecs");
  }

  @Test
  void aRecordWithAnotherDimensionIsReportedWithItsRow() throws Exception {
    Path f = dir.resolve("bad.fvecs");
    VecsFiles.writeFvecs(f, new float[][] {{1, 2}, {3, 4}, {5, 6}});
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 9), 2 * 12);
    }
    try (VectorFile file = VectorFile.open(f)) {
      assertThat(file.get(1)).containsExactly(3, 4);
      assertThatThrownBy(() -> file.get(2))
          .isInstanceOf(DatasetFormatException.class)
          .hasMessage(
              "vecs record has a different dimension [file=" + f + ", row=2, dim=9, expected=2]");
    }
  }

  @Test
  void aFileThatDoesNotEndOnARecordIsRefusedAndAnEmptyOneHasNoRows() throws Exception {
    Path f = dir.resolve("short.fvecs");
    VecsFiles.writeFvecs(f, new float[][] {{1, 2}, {3, 4}});
    Files.write(f, new byte[] {1}, StandardOpenOption.APPEND);
    assertThatThrownBy(() -> VectorFile.open(f))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("does not end on a record boundary");

    Path empty = Files.createFile(dir.resolve("empty.fvecs"));
    VectorFile file = VectorFile.open(empty);
    assertThat(file.size()).isZero();
    file.close();
    file.close();
  }

  static Path writeFbin(Path f, float[][] v) throws Exception {
    int dim = v.length == 0 ? 1 : v[0].length;
    ByteBuffer b = ByteBuffer.allocate(8 + 4 * v.length * dim).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(v.length).putInt(dim);
    for (float[] row : v) {
      for (float x : row) {
        b.putFloat(x);
      }
    }
    return Files.write(f, b.array());
  }

  @Test
  void mapsBigAnnFbinFiles() throws Exception {
    SplittableRandom r = TestSeeds.splittableRandom("fbin");
    float[][] v = TestVectors.gaussian(r, 40, 6);
    Path f = writeFbin(dir.resolve("base.fbin"), v);
    try (VectorFile file = VectorFile.open(f)) {
      assertThat(file.size()).isEqualTo(40);
      assertThat(file.dim()).isEqualTo(6);
      for (int i = 0; i < v.length; i++) {
        assertThat(file.get(i)).containsExactly(v[i]);
      }
      float[] block = new float[3 * 6];
      file.get(37, 40, block);
      assertThat(java.util.Arrays.copyOfRange(block, 12, 18)).containsExactly(v[39]);
    }

    Files.write(f, new byte[] {0}, StandardOpenOption.APPEND);
    assertThatThrownBy(() -> VectorFile.open(f))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessage(
            "bad fbin header or size [file="
                + f
                + ", n=40, dim=6, size=969, expected 8 + 4 * n * dim bytes]");
    Path tiny = Files.write(dir.resolve("tiny.fbin"), new byte[] {1, 0, 0});
    assertThatThrownBy(() -> VectorFile.open(tiny))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("bad fbin header or size");
    assertThatThrownBy(() -> VectorFile.open(dir.resolve("x.npy")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected=.fvecs or .fbin");
  }
}
