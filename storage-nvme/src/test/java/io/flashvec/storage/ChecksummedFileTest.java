package io.flashvec.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Header, body and checksum footer: every damaged byte and every truncation is corruption. */
@ExtendWith(TestSeeds.Reporter.class)
class ChecksummedFileTest {

  @TempDir Path tmp;

  private Random random;
  private FaultyFileIO io;
  private byte[] body;
  private Path file;

  @BeforeEach
  void setUp(TestInfo info) throws IOException {
    random =
        TestSeeds.random("ChecksummedFileTest#" + info.getTestMethod().orElseThrow().getName());
    io = new FaultyFileIO();
    body = new byte[1 + random.nextInt(64)];
    random.nextBytes(body);
    file = tmp.resolve("seg-7.meta");
    ChecksummedFile.write(io, file, "segment-meta", 3, 7, body);
  }

  @AfterEach
  void noChannelLeaked() {
    io.assertNoOpenChannels();
  }

  @Test
  void roundTripsHeaderAndBody() throws IOException {
    ChecksummedFile.Contents c = ChecksummedFile.read(io, file, "segment-meta", 1, 3);
    assertThat(c.format()).isEqualTo("segment-meta");
    assertThat(c.version()).isEqualTo(3);
    assertThat(c.segmentId()).isEqualTo(7);
    assertThat(bytes(c.body())).isEqualTo(body);

    ChecksummedFile.write(io, file, "segment-meta", 3, 7, new byte[0]);
    assertThat(ChecksummedFile.read(io, file, "segment-meta", 3, 3).body().remaining()).isZero();
  }

  @Test
  void everyFlippedBitIsCorruption() throws IOException {
    byte[] good = Files.readAllBytes(file);
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= (byte) (1 << random.nextInt(8));
      Path p = tmp.resolve("flip-" + i);
      Files.write(p, bad);
      int at = i;
      assertThatThrownBy(() -> ChecksummedFile.read(io, p, "segment-meta", 1, 3))
          .as("flipped byte %d of %d", at, good.length)
          .isInstanceOf(CorruptFileException.class)
          .hasMessageEndingWith("[file=" + p + "]");
    }
  }

  @Test
  void everyTruncationIsCorruption() throws IOException {
    byte[] good = Files.readAllBytes(file);
    for (int len = 0; len < good.length; len++) {
      Path p = tmp.resolve("cut-" + len);
      Files.write(p, Arrays.copyOf(good, len));
      int at = len;
      assertThatThrownBy(() -> ChecksummedFile.read(io, p, "segment-meta", 1, 3))
          .as("cut to %d of %d", at, good.length)
          .isInstanceOf(CorruptFileException.class);
    }
  }

  @Test
  void versionSkewIsNotCorruption() {
    assertThatThrownBy(() -> ChecksummedFile.read(io, file, "segment-meta", 4, 5))
        .isInstanceOf(FormatVersionException.class)
        .hasMessage(
            "unsupported segment-meta version [too old, version=3, supported=4..5, file="
                + file
                + "]");
    assertThatThrownBy(() -> ChecksummedFile.read(io, file, "segment-meta", 1, 2))
        .isInstanceOf(FormatVersionException.class)
        .hasMessageContaining("too new");
  }

  @Test
  void anotherFormatOrAMissingFileIsRejected() {
    assertThatThrownBy(() -> ChecksummedFile.read(io, file, "deletes", 1, 3))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageStartingWith("unexpected file format [expected=deletes, got=segment-meta]");
    assertThatThrownBy(() -> ChecksummedFile.read(io, tmp.resolve("absent"), "deletes", 1, 3))
        .isInstanceOf(NoSuchFileException.class);
  }

  @Test
  void crcAndLengthStreamsTheWholeFile() throws IOException {
    byte[] big = new byte[(1 << 20) + 12345];
    random.nextBytes(big);
    Path p = tmp.resolve("big");
    Files.write(p, big);
    CRC32C crc = new CRC32C();
    crc.update(big);
    assertThat(ChecksummedFile.crcAndLength(io, p)).containsExactly(crc.getValue(), big.length);
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }
}
