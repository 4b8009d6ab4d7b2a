package io.flashvec.loadgen.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.loadgen.TestVectors;
import io.flashvec.testing.TestSeeds;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VecsFilesTest {
  @TempDir Path dir;

  @Test
  void readsHandWrittenFvecsBytes() throws Exception {
    ByteBuffer b = ByteBuffer.allocate(2 * (4 + 3 * 4)).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(3).putFloat(1f).putFloat(-2.5f).putFloat(3f);
    b.putInt(3).putFloat(0f).putFloat(0.25f).putFloat(1e-5f);
    Path f = dir.resolve("x.fvecs");
    Files.write(f, b.array());

    float[][] v = VecsFiles.readFvecs(f);

    assertThat(v).hasDimensions(2, 3);
    assertThat(v[0]).containsExactly(1f, -2.5f, 3f);
    assertThat(v[1]).containsExactly(0f, 0.25f, 1e-5f);
    assertThat(VecsFiles.readFvecs(f, 1)).hasDimensions(1, 3);
  }

  @Test
  void fvecsRoundTripsAndWritesTheExpectedBytes() throws Exception {
    SplittableRandom r = TestSeeds.splittableRandom("fvecsRoundTrip");
    float[][] v = TestVectors.gaussian(r, 1000, 17);
    Path f = dir.resolve("base.fvecs");
    VecsFiles.writeFvecs(f, v);

    assertThat(Files.size(f)).isEqualTo(1000L * (4 + 17 * 4));
    ByteBuffer raw = ByteBuffer.wrap(Files.readAllBytes(f)).order(ByteOrder.LITTLE_ENDIAN);
    assertThat(raw.getInt(0)).isEqualTo(17);
    assertThat(raw.getFloat(4)).isEqualTo(v[0][0]);
    assertThat(VecsFiles.readFvecs(f)).isDeepEqualTo(v);
  }

  @Test
  void ivecsRoundTrips() {
    int[][] ids = {{5, 1, 9}, {0, 2, 3}, {7, 7, 7}};
    Path f = dir.resolve("groundtruth.ivecs");
    VecsFiles.writeIvecs(f, ids);
    assertThat(VecsFiles.readIvecs(f)).isDeepEqualTo(ids);
    assertThat(VecsFiles.readIvecs(f, 2)).isDeepEqualTo(new int[][] {{5, 1, 9}, {0, 2, 3}});
  }

  @Test
  void bvecsRoundTripsUnsignedBytes() throws Exception {
    float[][] v = {{0, 1, 255, 128}, {17, 200, 3, 4}};
    Path f = dir.resolve("base.bvecs");
    VecsFiles.writeBvecs(f, v);
    assertThat(Files.size(f)).isEqualTo(2L * (4 + 4));
    assertThat(VecsFiles.readBvecs(f, Integer.MAX_VALUE)).isDeepEqualTo(v);
    assertThatThrownBy(() -> VecsFiles.writeBvecs(dir.resolve("bad.bvecs"), new float[][] {{256}}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("value=256.0");
  }

  @Test
  void rejectsATruncatedFile() throws Exception {
    Path f = dir.resolve("t.fvecs");
    VecsFiles.writeFvecs(f, new float[][] {{1, 2}, {3, 4}});
    byte[] all = Files.readAllBytes(f);
    Files.write(f, java.util.Arrays.copyOf(all, all.length - 1));
    assertThatThrownBy(() -> VecsFiles.readFvecs(f))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("does not end on a record boundary")
        .hasMessageContaining("dim=2");
  }

  @Test
  void rejectsRecordsOfDifferentDimensions() throws Exception {
    ByteBuffer b = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(2).putFloat(1).putFloat(2).putInt(3).putFloat(1).putFloat(2);
    Path f = dir.resolve("mixed.fvecs");
    Files.write(f, b.array());
    assertThatThrownBy(() -> VecsFiles.readFvecs(f))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("row=1, dim=3, expected=2");
  }

  @Test
  void readsAnEmptyFile() throws Exception {
    Path f = dir.resolve("empty.fvecs");
    Files.write(f, new byte[0]);
    assertThat(VecsFiles.readFvecs(f)).isEmpty();
  }
}
