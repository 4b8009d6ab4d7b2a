package io.flashvec.storage.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The crash model that the storage crash tests rely on. */
@ExtendWith(TestSeeds.Reporter.class)
class CrashSimulatingFileIOTest {

  @TempDir Path tmp;

  private Random random;
  private byte[] data;

  @BeforeEach
  void setUp(TestInfo info) {
    random =
        TestSeeds.random(
            "CrashSimulatingFileIOTest#" + info.getTestMethod().orElseThrow().getName());
    data = new byte[150];
    random.nextBytes(data);
  }

  @Test
  void forcedBytesSurviveAndUnforcedBytesAreLost() throws IOException {
    CrashSimulatingFileIO io = new CrashSimulatingFileIO().tornWrites(false);
    Path file = tmp.resolve("f");
    writeForceWrite(io, file);
    io.fsyncDirectory(tmp);
    assertThat(io.durableLength(file)).isEqualTo(100);

    CrashSimulatingFileIO.CrashReport report = io.crash(random);
    assertThat(report.filesCut()).isEqualTo(1);
    assertThat(report.bytesDropped()).isEqualTo(50);
    assertThat(Files.readAllBytes(file)).isEqualTo(Arrays.copyOf(data, 100));
  }

  @Test
  void tornWriteKeepsAPrefixOfTheUnforcedBytes() throws IOException {
    boolean sawTorn = false;
    for (int i = 0; i < 64 && !sawTorn; i++) {
      CrashSimulatingFileIO io = new CrashSimulatingFileIO();
      Path file = tmp.resolve("f" + i);
      writeForceWrite(io, file);
      io.fsyncDirectory(tmp);
      io.crash(random);
      byte[] left = Files.readAllBytes(file);
      assertThat(left.length).isBetween(100, 150);
      assertThat(left).isEqualTo(Arrays.copyOf(data, left.length));
      sawTorn = left.length > 100 && left.length < 150;
    }
    assertThat(sawTorn).isTrue();
  }

  @Test
  void creationWithoutDirectoryFsyncMayBeUndone() throws IOException {
    boolean sawKept = false;
    boolean sawUndone = false;
    for (int i = 0; i < 64 && !(sawKept && sawUndone); i++) {
      CrashSimulatingFileIO io = new CrashSimulatingFileIO();
      Path file = tmp.resolve("f" + i);
      writeForceWrite(io, file);
      assertThat(io.pendingDirectoryOps(tmp)).isEqualTo(1);
      io.crash(random);
      if (Files.exists(file)) {
        sawKept = true;
        assertThat(Files.size(file)).isGreaterThanOrEqualTo(100);
      } else {
        sawUndone = true;
      }
    }
    assertThat(sawKept).isTrue();
    assertThat(sawUndone).isTrue();

    CrashSimulatingFileIO strictOff = new CrashSimulatingFileIO().undoDirectoryOps(false);
    Path file = tmp.resolve("kept");
    writeForceWrite(strictOff, file);
    strictOff.crash(random);
    assertThat(file).exists();
  }

  @Test
  void renameAndDeleteWithoutDirectoryFsyncMayBeUndone() throws IOException {
    boolean sawRenamed = false;
    boolean sawRenameUndone = false;
    for (int i = 0; i < 64 && !(sawRenamed && sawRenameUndone); i++) {
      Path dir = Files.createDirectories(tmp.resolve("rename-" + i));
      CrashSimulatingFileIO io = new CrashSimulatingFileIO();
      Path a = dir.resolve("a");
      Path b = dir.resolve("b");
      durableFile(io, a, "new");
      durableFile(io, b, "old");
      io.atomicMove(a, b);
      io.crash(random);
      if (Files.readString(b).equals("new")) {
        sawRenamed = true;
        assertThat(a).doesNotExist();
      } else {
        sawRenameUndone = true;
        assertThat(b).hasContent("old");
        assertThat(a).hasContent("new");
      }
    }
    assertThat(sawRenamed).isTrue();
    assertThat(sawRenameUndone).isTrue();

    boolean sawDeleted = false;
    boolean sawDeleteUndone = false;
    for (int i = 0; i < 64 && !(sawDeleted && sawDeleteUndone); i++) {
      Path dir = Files.createDirectories(tmp.resolve("delete-" + i));
      CrashSimulatingFileIO io = new CrashSimulatingFileIO();
      Path c = dir.resolve("c");
      durableFile(io, c, "durable");
      io.deleteIfExists(c);
      io.crash(random);
      if (Files.exists(c)) {
        sawDeleteUndone = true;
        assertThat(c).hasContent("durable");
      } else {
        sawDeleted = true;
      }
    }
    assertThat(sawDeleted).isTrue();
    assertThat(sawDeleteUndone).isTrue();
  }

  @Test
  void aCrashedInstanceIsDeadAndAFreshOneStartsFromTheDisk() throws IOException {
    CrashSimulatingFileIO io = new CrashSimulatingFileIO();
    Path file = tmp.resolve("f");
    durableFile(io, file, "durable");
    FileChannel open = io.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    io.crash(random);
    assertThat(io.crashed()).isTrue();
    assertThat(open.isOpen()).isFalse();
    io.assertNoOpenChannels();
    assertThatThrownBy(() -> io.open(file, StandardOpenOption.READ))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("simulated power loss");
    assertThatThrownBy(() -> io.fsyncDirectory(tmp)).isInstanceOf(IOException.class);
    assertThatThrownBy(() -> io.crash(random)).isInstanceOf(IllegalStateException.class);

    // Files a new instance did not write count as durable.
    CrashSimulatingFileIO fresh = new CrashSimulatingFileIO();
    try (FileChannel ch = fresh.open(file, StandardOpenOption.READ)) {
      assertThat(ch.size()).isEqualTo(7);
    }
    assertThat(fresh.durableLength(file)).isEqualTo(7);
    fresh.crash(random);
    assertThat(file).hasContent("durable");
  }

  private void writeForceWrite(CrashSimulatingFileIO io, Path file) throws IOException {
    try (FileChannel ch = io.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      io.writeFully(ch, ByteBuffer.wrap(data, 0, 100));
      io.force(ch, false);
      io.writeFully(ch, ByteBuffer.wrap(data, 100, 50));
    }
  }

  private static void durableFile(CrashSimulatingFileIO io, Path file, String content)
      throws IOException {
    try (FileChannel ch = io.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      io.writeFully(ch, ByteBuffer.wrap(content.getBytes(UTF_8)));
      io.force(ch, true);
    }
    io.fsyncDirectory(file.getParent());
  }
}
