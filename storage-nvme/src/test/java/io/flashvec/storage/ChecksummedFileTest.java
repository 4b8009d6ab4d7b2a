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

  /** A streamed body larger than the buffers, of every kind of value. */
  private static void writeStreamed(FileIO io, Path path, int[] ints, long[] longs, byte[] raw)
      throws IOException {
    try (ChecksummedFile.Writer w = ChecksummedFile.Writer.create(io, path, "big", 2, 9)) {
      w.putByte((byte) 7).putShort((short) -3).putInt(ints.length).putFloat(1.5f).putLong(-9L);
      w.putInts(ints, 0, ints.length).putLongs(longs, 0, longs.length).put(raw, 1, raw.length - 1);
      w.putFloats(new float[] {0.25f, -2f}, 0, 2);
      w.commit();
    }
  }

  @Test
  void aStreamedFileReadsBackStreamedAndWhole() throws IOException {
    int[] ints = random.ints(400_000).toArray();
    long[] longs = random.longs(150_001).toArray();
    byte[] raw = new byte[1_500_003];
    random.nextBytes(raw);
    Path big = tmp.resolve("big.fvs");
    writeStreamed(io, big, ints, longs, raw);
    assertThat(tmp.resolve("big.fvs.tmp")).doesNotExist();

    try (ChecksummedFile.Reader r = ChecksummedFile.Reader.open(io, big, "big", 1, 2)) {
      assertThat(r.version()).isEqualTo(2);
      assertThat(r.segmentId()).isEqualTo(9);
      assertThat(r.get()).isEqualTo((byte) 7);
      assertThat(r.getShort()).isEqualTo((short) -3);
      assertThat(r.getInt()).isEqualTo(ints.length);
      assertThat(r.getFloat()).isEqualTo(1.5f);
      assertThat(r.getLong()).isEqualTo(-9L);
      int[] i2 = new int[ints.length];
      r.getInts(i2, 0, i2.length);
      assertThat(i2).isEqualTo(ints);
      long[] l2 = new long[longs.length];
      r.getLongs(l2, 0, l2.length);
      assertThat(l2).isEqualTo(longs);
      byte[] b2 = new byte[raw.length - 1];
      r.get(b2, 0, b2.length);
      assertThat(b2).isEqualTo(Arrays.copyOfRange(raw, 1, raw.length));
      float[] f2 = new float[2];
      r.getFloats(f2, 0, 2);
      assertThat(f2).containsExactly(0.25f, -2f);
      assertThat(r.remaining()).isZero();
      r.finish();
    }
    // the same layout as a file written whole
    assertThat(ChecksummedFile.read(io, big, "big", 2, 2).body().remaining())
        .isEqualTo(1 + 2 + 4 + 4 + 8 + 4L * ints.length + 8L * longs.length + raw.length - 1 + 8);
  }

  @Test
  void aStreamedReadFindsADamagedByteOrATruncationAtItsEnd() throws IOException {
    int[] ints = random.ints(300_000).toArray();
    Path big = tmp.resolve("big.fvs");
    writeStreamed(io, big, ints, new long[0], new byte[2]);
    byte[] all = Files.readAllBytes(big);
    all[all.length / 2] ^= 0x10;
    Files.write(big, all);
    try (ChecksummedFile.Reader r = ChecksummedFile.Reader.open(io, big, "big", 2, 2)) {
      r.get(new byte[1 + 2 + 4 + 4 + 8], 0, 1 + 2 + 4 + 4 + 8);
      r.getInts(new int[300_000], 0, 300_000);
      r.get(new byte[1], 0, 1);
      r.getFloats(new float[2], 0, 2);
      assertThatThrownBy(r::finish)
          .isInstanceOf(CorruptFileException.class)
          .hasMessageContaining("checksum mismatch");
    }
    Files.write(big, Arrays.copyOf(all, all.length - 100));
    try (ChecksummedFile.Reader r = ChecksummedFile.Reader.open(io, big, "big", 2, 2)) {
      assertThatThrownBy(() -> r.getInts(new int[300_010], 0, 300_010))
          .isInstanceOf(CorruptFileException.class);
    }
  }

  @Test
  void anAbandonedStreamedWriteLeavesNothing() throws IOException {
    Path big = tmp.resolve("big.fvs");
    try (ChecksummedFile.Writer w = ChecksummedFile.Writer.create(io, big, "big", 1, 1)) {
      w.putInts(new int[1 << 20], 0, 1 << 20);
      // no commit: a closing segment stops the write
    }
    assertThat(big).doesNotExist();
    assertThat(tmp.resolve("big.fvs.tmp")).doesNotExist();
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }
}
