package io.flashvec.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.WalTest.Opened;
import io.flashvec.storage.WalTest.Rec;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The write-ahead log on a full device: an append or a segment roll that finds no space is refused
 * without failing the log, leaves no partial record or stray segment behind, and the same append
 * succeeds once space is back; fsync failures and other errors still fail the log (ADR 0020).
 */
@ExtendWith(TestSeeds.Reporter.class)
class WalDiskFullTest {

  private static final long SMALL_SEGMENT = 4096;

  @TempDir Path tmp;

  private Random random;
  private FaultyFileIO io;

  @BeforeEach
  void setUp(TestInfo info) {
    random = TestSeeds.random("WalDiskFullTest#" + info.getTestMethod().orElseThrow().getName());
    io = new FaultyFileIO();
  }

  @AfterEach
  void noChannelLeaked() {
    io.assertNoOpenChannels();
  }

  @Test
  void appendWithoutSpaceIsRefusedAndSucceedsOnceSpaceIsFreed() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, (s, o, b) -> {})) {
      for (int i = 0; i < 3; i++) {
        written.add(append(wal, 50));
      }
      wal.sync(3);
      long size = Files.size(tail(dir));
      // 30 bytes left: the next record (17 + 50 bytes) is written in part, then ENOSPC.
      io.spaceLeft(30);
      for (int attempt = 0; attempt < 3; attempt++) {
        assertThatThrownBy(() -> append(wal, 50))
            .isInstanceOf(UncheckedIOException.class)
            .hasMessageStartingWith("WAL append failed, the disk is full [dir=" + dir + ", seq=4]")
            .cause()
            .isInstanceOf(DiskFullException.class)
            .satisfies(c -> assertThat(((DiskFullException) c).usableBytes()).isZero());
        assertThat(wal.failed()).as("a full disk does not fail the log").isFalse();
        assertThat(wal.lastSeq()).isEqualTo(3);
        assertThat(Files.size(tail(dir))).as("the partial record is cut off").isEqualTo(size);
        assertThat(wal.sizeBytes()).isEqualTo(size);
      }
      // Acknowledged records stay acknowledged, and syncing still works.
      wal.sync(3);
      assertThat(wal.durableSeq()).isEqualTo(3);

      io.spaceLeft(FaultyFileIO.UNLIMITED);
      Rec next = append(wal, 50);
      assertThat(next.seq()).as("the refused sequence number is used again").isEqualTo(4);
      written.add(next);
      wal.sync(4);
      assertThat(wal.durableSeq()).isEqualTo(4);
    }
    Opened opened = open(dir, 0);
    try (Wal wal = opened.wal()) {
      WalTest.assertSameRecords(opened.records(), written);
      assertThat(wal.recovery().discardReason()).isNull();
      assertThat(wal.recovery().bytesDiscarded()).isZero();
    }
  }

  @Test
  void rollWithoutSpaceForTheNewSegmentKeepsTheOldTailAndRetries() throws IOException {
    // Each step of starting a segment: create the file, write its header, fsync it, fsync the
    // directory. ENOSPC at any of them leaves no new file and a usable log.
    for (Op op : new Op[] {Op.OPEN, Op.WRITE, Op.FORCE, Op.FSYNC_DIRECTORY}) {
      Path dir = tmp.resolve("wal-" + op);
      List<Rec> written = new ArrayList<>();
      try (Wal wal = Wal.open(dir, io, small(), 0, (s, o, b) -> {})) {
        for (int i = 0; i < 3; i++) {
          written.add(append(wal, 1200));
        }
        assertThat(wal.segmentCount()).isEqualTo(1);
        Path next = dir.resolve(String.format(Locale.ROOT, "wal-%020d.log", 4));
        Predicate<Path> newSegment = op == Op.FSYNC_DIRECTORY ? dir::equals : next::equals;
        io.noSpaceFailures(true).failOnce(op, 1, newSegment);
        assertThatThrownBy(() -> append(wal, 1200))
            .as("ENOSPC at %s", op)
            .isInstanceOf(UncheckedIOException.class)
            .hasMessageStartingWith("WAL append failed, the disk is full [dir=" + dir + ", seq=4]")
            .hasCauseInstanceOf(DiskFullException.class);
        assertThat(wal.failed()).as("ENOSPC at %s", op).isFalse();
        assertThat(next).as("ENOSPC at %s leaves no new segment", op).doesNotExist();
        assertThat(wal.segmentCount()).isEqualTo(1);
        assertThat(WalTest.segments(dir)).hasSize(1);

        io.disarm();
        io.noSpaceFailures(false);
        written.add(append(wal, 1200));
        assertThat(written.getLast().seq()).isEqualTo(4);
        assertThat(wal.segmentCount()).isEqualTo(2);
        wal.sync(4);
      }
      Opened opened = open(dir, 0);
      try (Wal wal = opened.wal()) {
        WalTest.assertSameRecords(opened.records(), written);
        assertThat(wal.recovery().discardReason()).as("ENOSPC at %s", op).isNull();
      }
    }
  }

  @Test
  void fsyncFailureFailsTheLogEvenWhenItSaysNoSpace() throws IOException {
    // After a failed fsync the kernel may have dropped the dirty pages; retrying could report
    // success for data that never reached the device. Only a reopen (re-reading the log) is safe.
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, (s, o, b) -> {})) {
      written.add(append(wal, 50));
      wal.sync(1);
      append(wal, 50);
      io.noSpaceFailures(true).failOnce(Op.FORCE, 1);
      assertThatThrownBy(() -> wal.sync(2))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageStartingWith("WAL fsync failed [dir=" + dir + ", seq=2]");
      assertThat(wal.failed()).isTrue();
      assertThatThrownBy(() -> append(wal, 5)).isInstanceOf(IllegalStateException.class);
    }
    Opened opened = open(dir, 0);
    try (Wal wal = opened.wal()) {
      assertThat(opened.records()).extracting(Rec::seq).startsWith(1L);
      assertThat(opened.records().getFirst().body()).isEqualTo(written.getFirst().body());
    }
  }

  @Test
  void rollThatCannotForceTheOldTailFailsTheLog() throws IOException {
    Path dir = tmp.resolve("wal");
    try (Wal wal = Wal.open(dir, io, small(), 0, (s, o, b) -> {})) {
      for (int i = 0; i < 3; i++) {
        append(wal, 1200);
      }
      Path first = WalTest.segments(dir).getFirst();
      io.noSpaceFailures(true).failOnce(Op.FORCE, 1, first::equals);
      assertThatThrownBy(() -> append(wal, 1200))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageStartingWith("WAL segment roll failed [dir=" + dir + ", seq=4]");
      assertThat(wal.failed()).isTrue();
    }
  }

  @Test
  void failedTruncationOfAPartialWriteFailsTheLog() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, (s, o, b) -> {})) {
      written.add(append(wal, 50));
      wal.sync(1);
      io.spaceLeft(10).failOnce(Op.TRUNCATE, 1);
      assertThatThrownBy(() -> append(wal, 50))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageStartingWith("WAL append failed [dir=" + dir + ", seq=2]");
      assertThat(wal.failed()).as("the tail's content is unknown").isTrue();
      io.spaceLeft(FaultyFileIO.UNLIMITED);
      assertThatThrownBy(() -> append(wal, 5)).isInstanceOf(IllegalStateException.class);
    }
    Opened opened = open(dir, 0);
    try (Wal wal = opened.wal()) {
      WalTest.assertSameRecords(opened.records(), written);
      assertThat(wal.recovery().bytesDiscarded()).as("the torn record is discarded").isEqualTo(10);
    }
  }

  @Test
  void otherWriteErrorsStillFailTheLog() throws IOException {
    Path dir = tmp.resolve("wal");
    try (Wal wal = Wal.open(dir, io, small(), 0, (s, o, b) -> {})) {
      append(wal, 50);
      io.failOnce(Op.WRITE, 1);
      assertThatThrownBy(() -> append(wal, 50))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageStartingWith("WAL append failed [dir=" + dir + ", seq=2]")
          .hasCauseInstanceOf(FaultyFileIO.InjectedIOException.class);
      assertThat(wal.failed()).isTrue();
    }
  }

  /**
   * Random appends of random sizes across segment rolls while the device fills up and is freed
   * again at random, under the crash simulator: nothing the log acknowledged (appended and synced)
   * is lost by the power loss at the end, the log never fails, and every refused append left
   * nothing behind.
   */
  @Test
  void fullDiskEpisodesThenAPowerLossLoseNothingAcknowledged() throws IOException {
    Path dir = tmp.resolve("wal");
    CrashSimulatingFileIO crashIo = new CrashSimulatingFileIO();
    FaultyFileIO faulty = new FaultyFileIO(crashIo);
    List<Rec> acknowledged = new ArrayList<>();
    int refused = 0;
    int rounds = TestSeeds.atLeast(random, 400);
    Wal wal = Wal.open(dir, faulty, small(), 0, (s, o, b) -> {});
    for (int i = 0; i < rounds; i++) {
      if (random.nextInt(8) == 0) {
        faulty.spaceLeft(
            random.nextBoolean() ? FaultyFileIO.UNLIMITED : random.nextInt(3 * 1024 + 1));
      }
      long before = wal.lastSeq();
      try {
        Rec r = append(wal, random.nextInt(900));
        assertThat(r.seq()).isEqualTo(before + 1);
        wal.sync(r.seq());
        acknowledged.add(r);
      } catch (UncheckedIOException e) {
        assertThat(e).hasCauseInstanceOf(DiskFullException.class);
        assertThat(wal.lastSeq()).isEqualTo(before);
        refused++;
      }
      assertThat(wal.failed()).isFalse();
    }
    assertThat(refused).as("some appends met a full device").isPositive();
    assertThat(acknowledged).as("some appends got through").isNotEmpty();
    crashIo.crash(random);
    Opened opened = openWith(FileIO.DEFAULT, dir);
    try (Wal reopened = opened.wal()) {
      WalTest.assertSameRecords(opened.records(), acknowledged);
      assertThat(reopened.lastSeq()).isEqualTo(acknowledged.getLast().seq());
    }
    System.out.println(
        "[flashvec] WalDiskFullTest: "
            + acknowledged.size()
            + " acknowledged, "
            + refused
            + " refused for lack of space");
  }

  private static Wal.Options small() {
    return Wal.Options.defaults().withSegmentBytes(SMALL_SEGMENT);
  }

  private Opened open(Path dir, long fromSeq) throws IOException {
    List<Rec> out = new ArrayList<>();
    return new Opened(Wal.open(dir, io, small(), fromSeq, WalTest.collector(out)), out);
  }

  private static Opened openWith(FileIO fileIo, Path dir) throws IOException {
    List<Rec> out = new ArrayList<>();
    return new Opened(Wal.open(dir, fileIo, small(), 0, WalTest.collector(out)), out);
  }

  private static Path tail(Path dir) throws IOException {
    return WalTest.segments(dir).getLast();
  }

  private Rec append(Wal wal, int len) {
    byte op = (byte) random.nextInt(256);
    byte[] body = new byte[len];
    random.nextBytes(body);
    long seq = wal.append(op, body);
    return new Rec(seq, op, body);
  }
}
