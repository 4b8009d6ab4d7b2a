package io.flashvec.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The free-space policy ({@link DiskSpace}), how a full device is recognised ({@link
 * DiskFullException#isDiskFull}), and small-file replacement on a full device.
 */
class DiskSpaceTest {

  @TempDir Path tmp;

  private FaultyFileIO io;

  @BeforeEach
  void setUp() {
    io = new FaultyFileIO();
  }

  @AfterEach
  void noChannelLeaked() {
    io.assertNoOpenChannels();
  }

  @Test
  void requireKeepsTheReserveFreeAndNamesTheFigures() throws IOException {
    DiskSpace space = new DiskSpace(io, 1000);
    io.spaceLeft(1500);
    assertThat(space.hasRoom(tmp, 500)).isTrue();
    assertThat(space.hasRoom(tmp, 501)).isFalse();
    space.require(tmp, 500, "upsert");
    assertThatThrownBy(() -> space.require(tmp, 600, "upsert"))
        .isInstanceOfSatisfying(
            DiskFullException.class,
            e -> {
              assertThat(e.usableBytes()).isEqualTo(1500);
              assertThat(e.neededBytes()).isEqualTo(600);
              assertThat(e.minFreeBytes()).isEqualTo(1000);
              assertThat(e.directory()).isEqualTo(tmp);
            })
        .hasMessage(
            "upsert: not enough free space [dir="
                + tmp
                + ", usableBytes=1500, neededBytes=600, minFreeBytes=1000]");
    // Space comes back: the next check passes without anything being reset.
    io.spaceLeft(10_000);
    space.require(tmp, 600, "upsert");
  }

  @Test
  void rejectsANegativeReserve() {
    assertThatThrownBy(() -> new DiskSpace(io, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minimum free bytes must not be negative [minFreeBytes=-1]");
  }

  @Test
  void usableSpaceOfTheRealFileSystemAsksTheNearestExistingDirectory() throws IOException {
    long here = FileIO.DEFAULT.usableSpace(tmp);
    assertThat(here).isPositive();
    long below = FileIO.DEFAULT.usableSpace(tmp.resolve("not/yet/created"));
    // Same file system; other processes may write meanwhile, so only roughly equal.
    assertThat(below)
        .isPositive()
        .isCloseTo(here, org.assertj.core.data.Percentage.withPercentage(5));
  }

  @Test
  void recognisesTheOperatingSystemsNoSpaceErrorsAndNothingElse() {
    IOException write = new IOException("No space left on device");
    FileSystemException create =
        new FileSystemException("/data/x", null, "No space left on device");
    IOException quota = new IOException("Disk quota exceeded");
    assertThat(DiskFullException.isDiskFull(write)).isTrue();
    assertThat(DiskFullException.isDiskFull(create)).isTrue();
    assertThat(DiskFullException.isDiskFull(quota)).isTrue();
    assertThat(DiskFullException.isDiskFull(new UncheckedIOException("wrapped", write))).isTrue();
    assertThat(DiskFullException.isDiskFull(new RuntimeException(new RuntimeException(create))))
        .isTrue();

    assertThat(DiskFullException.isDiskFull(new IOException("Input/output error"))).isFalse();
    assertThat(DiskFullException.isDiskFull(new AccessDeniedException("/data/x"))).isFalse();
    assertThat(DiskFullException.isDiskFull(new java.nio.channels.ClosedChannelException()))
        .isFalse();
    assertThat(DiskFullException.isDiskFull(new IllegalStateException("No space left on device")))
        .as("only I/O exceptions speak for the device")
        .isFalse();
  }

  @Test
  void classifyMeasuresTheFreeSpaceOnlyForNoSpaceErrors() {
    io.spaceLeft(42);
    DiskFullException full =
        DiskFullException.classify(
            new IOException("No space left on device"), "segment build", io, tmp, 4096);
    assertThat(full).isNotNull();
    assertThat(full.usableBytes()).isEqualTo(42);
    assertThat(full.neededBytes()).isEqualTo(4096);
    assertThat(full.getMessage()).startsWith("segment build: not enough free space [dir=");
    assertThat(DiskFullException.classify(new IOException("EIO"), "x", io, tmp, 1)).isNull();
    assertThat(DiskFullException.classify(full, "y", io, tmp, 1)).isSameAs(full);
  }

  @Test
  void atomicWriteOnAFullDeviceKeepsTheOldContentAndLeavesNoTemporaryFile() throws IOException {
    Path target = tmp.resolve("meta").resolve("MANIFEST");
    byte[] old = "old manifest".getBytes(UTF_8);
    byte[] next = "a new manifest that does not fit".getBytes(UTF_8);
    AtomicFiles.write(io, target, old);
    io.spaceLeft(5);
    assertThatThrownBy(() -> AtomicFiles.write(io, target, next))
        .satisfies(e -> assertThat(DiskFullException.isDiskFull(e)).isTrue());
    assertThat(Files.readAllBytes(target)).isEqualTo(old);
    assertThat(entries(target.getParent())).containsExactly(target);

    // ENOSPC at the rename (a directory that needs a new block) is cleaned up the same way.
    io.spaceLeft(FaultyFileIO.UNLIMITED).noSpaceFailures(true).failOnce(Op.ATOMIC_MOVE, 1);
    assertThatThrownBy(() -> AtomicFiles.write(io, target, next))
        .satisfies(e -> assertThat(DiskFullException.isDiskFull(e)).isTrue());
    assertThat(Files.readAllBytes(target)).isEqualTo(old);
    assertThat(entries(target.getParent())).containsExactly(target);

    AtomicFiles.write(io, target, next);
    assertThat(Files.readAllBytes(target)).isEqualTo(next);
  }

  private static java.util.List<Path> entries(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().toList();
    }
  }
}
