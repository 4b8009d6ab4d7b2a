package io.flashvec.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.InjectedIOException;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Atomic replacement of small files: old or new content, never a mix, nothing left behind. */
@ExtendWith(TestSeeds.Reporter.class)
class AtomicFilesTest {

  private static final byte[] OLD = "old manifest, version 1".getBytes(UTF_8);
  private static final byte[] NEW = "new manifest, version 2 with more entries".getBytes(UTF_8);

  @TempDir Path tmp;

  private Random random;
  private FaultyFileIO io;
  private Path target;

  @BeforeEach
  void setUp(TestInfo info) {
    random = TestSeeds.random("AtomicFilesTest#" + info.getTestMethod().orElseThrow().getName());
    io = new FaultyFileIO();
    target = tmp.resolve("meta").resolve("MANIFEST");
  }

  @AfterEach
  void noChannelLeaked() {
    io.assertNoOpenChannels();
  }

  @Test
  void writeCreatesThenReplacesTheContentAndLeavesNoTemporaryFile() throws IOException {
    AtomicFiles.write(io, target, OLD);
    assertThat(Files.readAllBytes(target)).isEqualTo(OLD);
    AtomicFiles.write(io, target, NEW);
    assertThat(Files.readAllBytes(target)).isEqualTo(NEW);
    // Shorter content does not keep a tail of the longer one.
    AtomicFiles.write(io, target, OLD);
    assertThat(Files.readAllBytes(target)).isEqualTo(OLD);
    AtomicFiles.write(io, target, new byte[0]);
    assertThat(Files.readAllBytes(target)).isEmpty();
    assertThat(entries(target.getParent())).containsExactly(target);
    // The data was forced before the rename, and the rename made durable.
    assertThat(io.calls(Op.FORCE)).isEqualTo(4);
    assertThat(io.calls(Op.FSYNC_DIRECTORY)).isEqualTo(4);
  }

  @Test
  void failedAtomicMoveLeavesTheOldContentIntact() throws IOException {
    AtomicFiles.write(io, target, OLD);
    io.failOnce(Op.ATOMIC_MOVE, 1);
    assertThatThrownBy(() -> AtomicFiles.write(io, target, NEW))
        .isInstanceOf(InjectedIOException.class);
    assertThat(Files.readAllBytes(target)).isEqualTo(OLD);
    // The next write reuses the leftover temporary file and cleans up after itself.
    AtomicFiles.write(io, target, NEW);
    assertThat(Files.readAllBytes(target)).isEqualTo(NEW);
    assertThat(entries(target.getParent())).containsExactly(target);
  }

  @Test
  void failedWriteOrFsyncOfTheTemporaryFileLeavesTheOldContentIntact() throws IOException {
    AtomicFiles.write(io, target, OLD);
    for (Op op : new Op[] {Op.OPEN, Op.WRITE, Op.FORCE}) {
      io.partialWrites(true).failOnce(op, 1);
      assertThatThrownBy(() -> AtomicFiles.write(io, target, NEW))
          .as("failing %s", op)
          .isInstanceOf(InjectedIOException.class);
      assertThat(Files.readAllBytes(target)).as("failing %s", op).isEqualTo(OLD);
    }
  }

  @Test
  void leftoverTemporaryFileFromACrashIsOverwritten() throws IOException {
    AtomicFiles.write(io, target, OLD);
    Files.write(target.resolveSibling("MANIFEST.tmp"), new byte[4096]);
    AtomicFiles.write(io, target, NEW);
    assertThat(Files.readAllBytes(target)).isEqualTo(NEW);
    assertThat(entries(target.getParent())).containsExactly(target);
  }

  @Test
  void completedWriteSurvivesACrash() throws IOException {
    for (int i = 0; i < 20; i++) {
      Path file = tmp.resolve("run-" + i).resolve("MANIFEST");
      CrashSimulatingFileIO disk = new CrashSimulatingFileIO();
      AtomicFiles.write(disk, file, OLD);
      AtomicFiles.write(disk, file, NEW);
      assertThat(disk.pendingDirectoryOps(file.getParent())).isZero();
      disk.crash(random);
      assertThat(Files.readAllBytes(file)).isEqualTo(NEW);
    }
  }

  @Test
  void crashAtAnyStepLeavesTheOldOrTheNewContent() throws IOException {
    // Interrupt the second write at each of its file calls, then pull the plug.
    Op[] steps = {Op.OPEN, Op.WRITE, Op.FORCE, Op.ATOMIC_MOVE, Op.FSYNC_DIRECTORY};
    int run = 0;
    for (Op step : steps) {
      for (int i = 0; i < 10; i++) {
        Path file = tmp.resolve("run-" + run++).resolve("MANIFEST");
        CrashSimulatingFileIO disk = new CrashSimulatingFileIO();
        FaultyFileIO faulty = new FaultyFileIO(disk).partialWrites(true);
        AtomicFiles.write(faulty, file, OLD);
        faulty.failOnce(step, 1);
        assertThatThrownBy(() -> AtomicFiles.write(faulty, file, NEW))
            .isInstanceOf(InjectedIOException.class);
        disk.crash(random);
        assertThat(Files.readAllBytes(file)).as("crash after failing %s", step).isIn(OLD, NEW);
        if (step != Op.FSYNC_DIRECTORY) {
          assertThat(Files.readAllBytes(file)).isEqualTo(OLD);
        }
      }
    }
  }

  @Test
  void deleteIsDurable() throws IOException {
    for (int i = 0; i < 10; i++) {
      Path file = tmp.resolve("run-" + i).resolve("MANIFEST");
      CrashSimulatingFileIO disk = new CrashSimulatingFileIO();
      AtomicFiles.write(disk, file, OLD);
      AtomicFiles.delete(disk, file);
      assertThat(file).doesNotExist();
      disk.crash(random);
      assertThat(file).doesNotExist();
    }
    Files.createDirectories(target.getParent());
    AtomicFiles.delete(io, target); // absent: nothing to do
    assertThat(target).doesNotExist();
  }

  private static List<Path> entries(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().toList();
    }
  }
}
