package io.flashvec.storage.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.AtomicFiles;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.HaltingFileIO;
import io.flashvec.testing.TestSeeds;
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

  @Test
  void anArmedCrashPointHaltsAtItsHitAndNothingReachesTheFilesAfterwards() throws IOException {
    CrashSimulatingFileIO io =
        new CrashSimulatingFileIO().tornWrites(false).undoDirectoryOps(false);
    Path target = tmp.resolve("target");
    AtomicFiles.write(io, target, "v1".getBytes(UTF_8));
    assertThat(io.hits(CrashPoint.ATOMIC_WRITE_TEMP_WRITTEN)).isEqualTo(1);
    io.armCrashPoint(CrashPoint.ATOMIC_WRITE_TEMP_WRITTEN, 2);
    AtomicFiles.write(io, target, "v2".getBytes(UTF_8)); // the first hit from now passes
    assertThat(io.haltedAt()).isNull();

    assertThatThrownBy(() -> AtomicFiles.write(io, target, "v3".getBytes(UTF_8)))
        .isInstanceOf(CrashSimulatingFileIO.Halt.class)
        .hasMessage("halted at crash point [point=ATOMIC_WRITE_TEMP_WRITTEN, hit=3]");
    assertThat(io.haltedAt()).isEqualTo(CrashPoint.ATOMIC_WRITE_TEMP_WRITTEN);
    assertThat(io.hits(CrashPoint.ATOMIC_WRITE_TEMP_WRITTEN)).isEqualTo(3);
    assertThat(io.hits(CrashPoint.ATOMIC_WRITE_RENAMED)).isEqualTo(2);
    // The process is dead: nothing after the point happens, reads included.
    assertThatThrownBy(() -> io.atomicMove(tmp.resolve("target.tmp"), target))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("simulated power loss");
    assertThatThrownBy(() -> io.readAllBytes(target)).isInstanceOf(IOException.class);
    io.crash(random);
    assertThat(target).hasContent("v2");
    assertThat(tmp.resolve("target.tmp")).hasContent("v3"); // fsynced before the point
    assertThat(AtomicFiles.removeStaleTemp(new CrashSimulatingFileIO(), target)).isTrue();
  }

  @Test
  void crashPointsPassThroughAFaultyFileIO() {
    CrashSimulatingFileIO io = new CrashSimulatingFileIO();
    FaultyFileIO faulty = new FaultyFileIO(io);
    io.armCrashPoint(CrashPoint.SEAL_FROZEN, 1);
    assertThatThrownBy(() -> faulty.crashPoint(CrashPoint.SEAL_FROZEN))
        .isInstanceOf(CrashSimulatingFileIO.Halt.class);
    assertThat(io.hits(CrashPoint.SEAL_FROZEN)).isEqualTo(1);
  }

  @Test
  void theRealFileSystemIgnoresCrashPointsAndTheHaltingOneOnlyItsArmedHit() {
    for (CrashPoint p : CrashPoint.values()) {
      FileIO.DEFAULT.crashPoint(p);
    }
    HaltingFileIO halting = new HaltingFileIO(CrashPoint.WAL_FSYNCED, 3);
    halting.crashPoint(CrashPoint.WAL_FSYNCED);
    halting.crashPoint(CrashPoint.WAL_FSYNCED);
    halting.crashPoint(CrashPoint.SEAL_FROZEN); // another point: not counted
    assertThatThrownBy(() -> new HaltingFileIO(CrashPoint.WAL_FSYNCED, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the crash point's hit counts from 1 [point=WAL_FSYNCED, hit=0]");
    assertThat(CrashPoint.parse("payload-schema-committed"))
        .isEqualTo(CrashPoint.PAYLOAD_SCHEMA_COMMITTED);
    assertThatThrownBy(() -> CrashPoint.parse("nowhere"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "unknown crash point [value=nowhere, known=[WAL_APPEND_BEFORE_WRITE");
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
