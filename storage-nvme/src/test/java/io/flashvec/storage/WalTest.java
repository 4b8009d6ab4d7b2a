package io.flashvec.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.InjectedIOException;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The write-ahead log's format, recovery, failure handling and group commit, on the real file
 * system. Every file call goes through a {@link FaultyFileIO}, which injects failures where a test
 * arms it and otherwise checks that no channel is left open. Crash consistency under power loss is
 * in {@link WalCrashTest}.
 */
@ExtendWith(TestSeeds.Reporter.class)
class WalTest {

  private static final long SMALL_SEGMENT = 4096;
  private static final Wal.RecordConsumer NO_RECORDS_EXPECTED =
      (seq, op, body) -> {
        throw new AssertionError("an empty log replayed a record [seq=" + seq + "]");
      };

  @TempDir Path tmp;

  private Random random;
  private FaultyFileIO io;

  @BeforeEach
  void setUp(TestInfo info) {
    random = TestSeeds.random("WalTest#" + info.getTestMethod().orElseThrow().getName());
    io = new FaultyFileIO();
  }

  @AfterEach
  void noChannelLeaked() {
    io.assertNoOpenChannels();
  }

  // ---------------------------------------------------------------- round trips and numbering

  @Test
  void appendAndReplayRoundTripAcrossSegmentRolls() throws IOException {
    Path dir = tmp.resolve("wal");
    Wal.Options options = small();
    int n = TestSeeds.atLeast(random, 200);
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, options, 0, NO_RECORDS_EXPECTED)) {
      for (int i = 0; i < n; i++) {
        written.add(append(wal, random.nextInt(200)));
      }
      assertThat(wal.lastSeq()).isEqualTo(n);
      assertThat(wal.segmentCount()).isGreaterThan(3).isEqualTo(segments(dir).size());
      assertThat(wal.sizeBytes()).isEqualTo(totalSize(dir));
    }
    // Each segment is named after its first record and stays within segmentBytes.
    for (Path seg : segments(dir)) {
      assertThat(Files.size(seg)).isLessThanOrEqualTo(SMALL_SEGMENT);
      assertThat(written.stream().anyMatch(r -> r.seq() == firstSeq(seg))).isTrue();
    }

    Opened reopened = open(dir, options, 0);
    try (Wal wal = reopened.wal()) {
      assertSameRecords(reopened.records(), written);
      Wal.RecoveryReport report = wal.recovery();
      assertThat(report.segments()).isEqualTo(segments(dir).size());
      assertThat(report.recordsScanned()).isEqualTo(n);
      assertThat(report.recordsReplayed()).isEqualTo(n);
      assertThat(report.lastSeq()).isEqualTo(n);
      assertThat(report.bytesDiscarded()).isZero();
      assertThat(report.discardReason()).isNull();
      assertThat(wal.lastSeq()).isEqualTo(n);
      assertThat(wal.durableSeq()).isEqualTo(n);
      assertThat(wal.sizeBytes()).isEqualTo(totalSize(dir));
    }
  }

  @Test
  void replayFromSequenceSkipsEarlierRecords() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = writeLog(dir, small(), TestSeeds.atLeast(random, 100), 120);
    int n = written.size();
    long from = 1 + random.nextInt(n);

    Opened reopened = open(dir, small(), from);
    try (Wal wal = reopened.wal()) {
      assertSameRecords(reopened.records(), written.subList((int) from - 1, n));
      assertThat(wal.recovery().recordsScanned()).isEqualTo(n);
      assertThat(wal.recovery().recordsReplayed()).isEqualTo(n - from + 1);
    }

    // A checkpoint past the end replays nothing and numbering still continues after the log.
    Opened past = open(dir, small(), n + 1);
    try (Wal wal = past.wal()) {
      assertThat(past.records()).isEmpty();
      assertThat(wal.append((byte) 0, new byte[] {1})).isEqualTo(n + 1);
    }
  }

  @Test
  void reopenContinuesNumbering() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    for (int cycle = 0; cycle < 3; cycle++) {
      Opened reopened = open(dir, small(), 0);
      try (Wal wal = reopened.wal()) {
        assertSameRecords(reopened.records(), written);
        assertThat(wal.lastSeq()).isEqualTo(written.size());
        for (int i = 0; i < 5; i++) {
          Rec r = append(wal, random.nextInt(50));
          assertThat(r.seq()).isEqualTo(written.size() + 1);
          written.add(r);
        }
      }
    }
    Opened last = open(dir, small(), 0);
    try (Wal wal = last.wal()) {
      assertSameRecords(last.records(), written);
      assertThat(wal.lastSeq()).isEqualTo(written.getLast().seq());
    }
  }

  @Test
  void emptyLogStartsAfterTheCallersCheckpoint() throws IOException {
    try (Wal wal = Wal.open(tmp.resolve("a"), io, small(), 0, NO_RECORDS_EXPECTED)) {
      assertThat(wal.lastSeq()).isZero();
      assertThat(wal.recovery().segments()).isZero();
      assertThat(wal.append((byte) 1, new byte[0])).isEqualTo(1);
    }
    Path dir = tmp.resolve("b");
    try (Wal wal = Wal.open(dir, io, small(), 42, NO_RECORDS_EXPECTED)) {
      assertThat(wal.lastSeq()).isEqualTo(41);
      assertThat(wal.append((byte) 1, new byte[] {7})).isEqualTo(42);
    }
    Opened reopened = open(dir, small(), 42);
    try (Wal wal = reopened.wal()) {
      assertThat(reopened.records()).extracting(Rec::seq).containsExactly(42L);
      assertThat(wal.lastSeq()).isEqualTo(42);
    }
  }

  @Test
  void zeroByteAndLargeRecordsRoundTrip() throws IOException {
    Path dir = tmp.resolve("wal");
    int[] lengths = {0, 0, 1, 70_000, 0, 1 << 20, 3, (64 << 10) - 17, (64 << 10) + 1, 0};
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, NO_RECORDS_EXPECTED)) {
      for (int len : lengths) {
        written.add(append(wal, len));
      }
      // The slice overload writes exactly the slice.
      byte[] big = bytes(5000);
      long seq = wal.append((byte) 9, big, 123, 1000);
      byte[] slice = new byte[1000];
      System.arraycopy(big, 123, slice, 0, 1000);
      written.add(new Rec(seq, (byte) 9, slice));
      // A record larger than a segment gets a segment of its own.
      assertThat(wal.segmentCount()).isGreaterThanOrEqualTo(5);
    }
    Opened reopened = open(dir, small(), 0);
    try (Wal wal = reopened.wal()) {
      assertSameRecords(reopened.records(), written);
      assertThat(wal.recovery().discardReason()).isNull();
    }
  }

  @Test
  void rejectsInvalidArgumentsWithTheOffendingValues() throws IOException {
    assertThatThrownBy(() -> Wal.Options.defaults().withSegmentBytes(100))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("segmentBytes too small [segmentBytes=100]");
    try (Wal wal = Wal.open(tmp.resolve("wal"), io, small(), 0, NO_RECORDS_EXPECTED)) {
      assertThatThrownBy(() -> wal.append((byte) 0, new byte[1], 0, Wal.MAX_BODY_BYTES + 1))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("WAL record too large [bytes=1073741825, max=1073741824]");
      assertThat(wal.lastSeq()).isZero();
      assertThat(wal.failed()).isFalse();
    }
  }

  @Test
  void closeIsIdempotentAndAClosedLogRefusesAppends() throws IOException {
    Wal wal = Wal.open(tmp.resolve("wal"), io, small(), 0, NO_RECORDS_EXPECTED);
    append(wal, 10);
    wal.close();
    wal.close();
    assertThatThrownBy(() -> wal.append((byte) 0, new byte[1]))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("WAL is closed [dir=");
  }

  // ---------------------------------------------------------------- torn tails

  @Test
  void tornTailAtEveryLengthOfTheLastRecordKeepsTheCompleteRecords() throws IOException {
    Path template = tmp.resolve("template");
    List<Rec> written = writeLog(template, Wal.Options.defaults(), 4, 60);
    try (Wal wal = Wal.open(template, io, Wal.Options.defaults(), 0, (s, o, b) -> {})) {
      written.add(append(wal, 40));
    }
    Path seg = segments(template).getFirst();
    long full = Files.size(seg);
    int last = Wal.RECORD_HEADER_BYTES + 40;
    List<Rec> complete = written.subList(0, written.size() - 1);

    for (int kept = 0; kept < last; kept++) {
      Path dir = copyOf(template, "torn-" + kept);
      truncate(dir.resolve(seg.getFileName()), full - last + kept);

      Opened opened = open(dir, Wal.Options.defaults(), 0);
      List<Rec> expected = new ArrayList<>(complete);
      try (Wal wal = opened.wal()) {
        assertSameRecords(opened.records(), complete);
        Wal.RecoveryReport report = wal.recovery();
        assertThat(report.lastSeq()).as("kept=%d", kept).isEqualTo(complete.size());
        if (kept == 0) {
          assertThat(report.discardReason()).isNull();
          assertThat(report.bytesDiscarded()).isZero();
        } else {
          assertThat(report.discardReason())
              .as("kept=%d", kept)
              .containsAnyOf("torn record header", "torn record body");
          assertThat(report.bytesDiscarded()).isEqualTo(kept);
        }
        assertThat(Files.size(dir.resolve(seg.getFileName()))).isEqualTo(full - last);
        expected.add(append(wal, random.nextInt(30)));
        expected.add(append(wal, random.nextInt(30)));
      }
      Opened again = open(dir, Wal.Options.defaults(), 0);
      try (Wal wal = again.wal()) {
        assertSameRecords(again.records(), expected);
        assertThat(wal.recovery().discardReason()).isNull();
      }
    }
  }

  @Test
  void tornSegmentHeaderAtTheTailDropsTheNewSegment() throws IOException {
    Path template = tmp.resolve("template");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(template, io, small(), 0, NO_RECORDS_EXPECTED)) {
      while (wal.segmentCount() < 2) {
        written.add(append(wal, 100));
      }
    }
    Path tail = segments(template).getLast();
    List<Rec> complete = written.subList(0, written.size() - 1);

    for (int kept = 0; kept <= Wal.HEADER_BYTES; kept++) {
      Path dir = copyOf(template, "torn-header-" + kept);
      truncate(dir.resolve(tail.getFileName()), kept);

      Opened opened = open(dir, small(), 0);
      List<Rec> expected = new ArrayList<>(complete);
      try (Wal wal = opened.wal()) {
        assertSameRecords(opened.records(), complete);
        if (kept < Wal.HEADER_BYTES) {
          assertThat(wal.recovery().discardReason()).contains("segment header incomplete");
          assertThat(wal.recovery().bytesDiscarded()).isEqualTo(kept);
          assertThat(segments(dir)).hasSize(1);
        } else {
          // A complete header with no record after it is a valid, empty segment.
          assertThat(wal.recovery().discardReason()).isNull();
          assertThat(segments(dir)).hasSize(2);
        }
        // The next record re-creates the segment that recovery deleted.
        expected.add(append(wal, 100));
        expected.add(append(wal, 10));
      }
      Opened again = open(dir, small(), 0);
      try (Wal wal = again.wal()) {
        assertSameRecords(again.records(), expected);
        assertThat(wal.recovery().discardReason()).isNull();
      }
    }
  }

  // ---------------------------------------------------------------- corruption

  @Test
  void flippedBitInARecordBodyStopsReplayThere() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = writeLog(dir, Wal.Options.defaults(), 12, 100);
    Path seg = segments(dir).getFirst();
    long full = Files.size(seg);
    Rec victim = pickWithBody(written);
    long at = offsetOf(written, 1, victim.seq());
    flipBit(seg, at + Wal.RECORD_HEADER_BYTES + random.nextInt(victim.body().length));

    List<Rec> kept = written.subList(0, (int) victim.seq() - 1);
    Opened opened = open(dir, Wal.Options.defaults(), 0);
    List<Rec> expected = new ArrayList<>(kept);
    try (Wal wal = opened.wal()) {
      assertSameRecords(opened.records(), kept);
      assertThat(wal.recovery().discardReason())
          .contains("record checksum mismatch at offset " + at);
      assertThat(wal.recovery().bytesDiscarded()).isEqualTo(full - at);
      assertThat(Files.size(seg)).isEqualTo(at);
      expected.add(append(wal, 20));
      assertThat(expected.getLast().seq()).isEqualTo(victim.seq());
    }
    Opened again = open(dir, Wal.Options.defaults(), 0);
    try (Wal wal = again.wal()) {
      assertSameRecords(again.records(), expected);
      assertThat(wal.lastSeq()).isEqualTo(expected.getLast().seq());
    }
  }

  @Test
  void flippedBitInARecordHeaderStopsReplayThere() throws IOException {
    Path template = tmp.resolve("template");
    List<Rec> written = writeLog(template, Wal.Options.defaults(), 12, 100);
    Path seg = segments(template).getFirst();
    long full = Files.size(seg);
    Rec victim = written.get(1 + random.nextInt(written.size() - 2));
    long at = offsetOf(written, 1, victim.seq());
    List<Rec> kept = written.subList(0, (int) victim.seq() - 1);

    // Every header byte: length, checksum, sequence number and op code.
    for (int b = 0; b < Wal.RECORD_HEADER_BYTES; b++) {
      Path dir = copyOf(template, "header-byte-" + b);
      flipBit(dir.resolve(seg.getFileName()), at + b);
      Opened opened = open(dir, Wal.Options.defaults(), 0);
      try (Wal wal = opened.wal()) {
        assertSameRecords(opened.records(), kept);
        assertThat(wal.recovery().discardReason()).as("header byte %d", b).isNotNull();
        assertThat(wal.recovery().bytesDiscarded()).as("header byte %d", b).isEqualTo(full - at);
        assertThat(wal.lastSeq()).isEqualTo(kept.size());
      }
    }
  }

  @Test
  void flippedBitInASegmentHeaderDiscardsThatSegmentAndLaterOnes() throws IOException {
    Path template = tmp.resolve("template");
    List<Rec> written = writeSegments(template, 3, 100);
    List<Path> segs = segments(template);

    for (int victim : new int[] {0, 1}) {
      long laterBytes = 0;
      for (int i = victim; i < segs.size(); i++) {
        laterBytes += Files.size(segs.get(i));
      }
      long firstLost = firstSeq(segs.get(victim));
      List<Rec> kept = written.subList(0, (int) firstLost - 1);
      for (int b = 0; b < Wal.HEADER_BYTES; b++) {
        Path dir = copyOf(template, "segment-" + victim + "-byte-" + b);
        flipBit(dir.resolve(segs.get(victim).getFileName()), b);
        Opened opened = open(dir, small(), 0);
        try (Wal wal = opened.wal()) {
          assertSameRecords(opened.records(), kept);
          assertThat(wal.recovery().discardReason())
              .as("segment %d byte %d", victim, b)
              .contains("segment header corrupt");
          assertThat(wal.recovery().bytesDiscarded()).isEqualTo(laterBytes);
          assertThat(wal.lastSeq()).isEqualTo(kept.size());
          assertThat(wal.append((byte) 0, new byte[] {1})).isEqualTo(kept.size() + 1);
        }
      }
    }
  }

  @Test
  void unsupportedFormatVersionIsCorruptionNotATornTail() throws IOException {
    Path dir = tmp.resolve("wal");
    writeLog(dir, Wal.Options.defaults(), 3, 10);
    Path seg = segments(dir).getFirst();
    // A well-formed header of a future version: magic and checksum are fine.
    ByteBuffer h = ByteBuffer.allocate(Wal.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    h.putInt(Wal.MAGIC).putShort((short) 2).putShort((short) 0).putLong(1);
    CRC32C c = new CRC32C();
    c.update(h.array(), 0, 16);
    h.putInt((int) c.getValue()).flip();
    try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.WRITE)) {
      ch.write(h, 0);
    }
    long size = Files.size(seg);

    assertThatThrownBy(() -> Wal.open(dir, io, Wal.Options.defaults(), 0, (s, o, b) -> {}))
        .isInstanceOfSatisfying(
            CorruptFileException.class, e -> assertThat(e.file()).isEqualTo(seg))
        .hasMessageStartingWith("unsupported WAL format version [version=2, supported=1]");
    // Refusing to open must not destroy the newer log.
    assertThat(Files.size(seg)).isEqualTo(size);
  }

  @Test
  void corruptionInAMiddleSegmentDeletesLaterSegments() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = writeSegments(dir, 4, 100);
    List<Path> segs = segments(dir);
    Path middle = segs.get(1);
    long first = firstSeq(middle);
    long next = firstSeq(segs.get(2));
    Rec victim = pickWithBody(written.subList((int) first - 1, (int) next - 1));
    long at = offsetOf(written, first, victim.seq());
    flipBit(middle, at + Wal.RECORD_HEADER_BYTES + random.nextInt(victim.body().length));
    long discarded = Files.size(middle) - at;
    for (int i = 2; i < segs.size(); i++) {
      discarded += Files.size(segs.get(i));
    }

    List<Rec> kept = written.subList(0, (int) victim.seq() - 1);
    List<Rec> expected = new ArrayList<>(kept);
    Opened opened = open(dir, small(), 0);
    try (Wal wal = opened.wal()) {
      assertSameRecords(opened.records(), kept);
      assertThat(wal.recovery().discardReason()).contains("record checksum mismatch");
      assertThat(wal.recovery().bytesDiscarded()).isEqualTo(discarded);
      assertThat(segments(dir)).containsExactly(segs.get(0), middle);
      assertThat(wal.segmentCount()).isEqualTo(2);
      assertThat(wal.sizeBytes()).isEqualTo(totalSize(dir));
      for (int i = 0; i < 60; i++) {
        expected.add(append(wal, random.nextInt(100)));
      }
      assertThat(expected.get(kept.size()).seq()).isEqualTo(victim.seq());
    }
    Opened again = open(dir, small(), 0);
    try (Wal wal = again.wal()) {
      assertSameRecords(again.records(), expected);
      assertThat(wal.recovery().discardReason()).isNull();
    }
  }

  // ---------------------------------------------------------------- truncation

  @Test
  void truncateBeforeDeletesOnlyFullyCoveredSegments() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, NO_RECORDS_EXPECTED)) {
      while (wal.segmentCount() < 5) {
        written.add(append(wal, random.nextInt(150)));
      }
      List<Path> segs = segments(dir);
      long f1 = firstSeq(segs.get(1));
      long f2 = firstSeq(segs.get(2));

      wal.truncateBefore(0);
      assertThat(segments(dir)).isEqualTo(segs);
      // Segment 1 still holds f2 - 1, so only segment 0 is fully covered.
      wal.truncateBefore(f2 - 1);
      assertThat(segments(dir)).isEqualTo(segs.subList(1, segs.size()));
      wal.truncateBefore(f1);
      assertThat(segments(dir)).isEqualTo(segs.subList(1, segs.size()));
      wal.truncateBefore(f2);
      assertThat(segments(dir)).isEqualTo(segs.subList(2, segs.size()));
      assertThat(wal.segmentCount()).isEqualTo(segs.size() - 2);
      assertThat(wal.sizeBytes()).isEqualTo(totalSize(dir));

      // The segment being written is never deleted, however far the checkpoint is.
      wal.truncateBefore(Long.MAX_VALUE);
      assertThat(segments(dir)).containsExactly(segs.getLast());
      assertThat(wal.sizeBytes()).isEqualTo(totalSize(dir));
      written.add(append(wal, 10));
    }
    long tailFirst = firstSeq(segments(dir).getFirst());
    Opened opened = open(dir, small(), tailFirst);
    try (Wal wal = opened.wal()) {
      assertSameRecords(opened.records(), written.subList((int) tailFirst - 1, written.size()));
      assertThat(wal.recovery().segments()).isEqualTo(1);
      assertThat(wal.lastSeq()).isEqualTo(written.size());
    }
  }

  @Test
  void truncationKeepsTheNewestClosedSegmentsItIsToldToRetain() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small().withRetainClosed(2), 0, NO_RECORDS_EXPECTED)) {
      while (wal.segmentCount() < 6) {
        written.add(append(wal, random.nextInt(150)));
      }
      List<Path> segs = segments(dir);
      long f3 = firstSeq(segs.get(3));
      long f4 = firstSeq(segs.get(4));

      // segments 0-2 are covered: the newest two of them stay
      wal.truncateBefore(f3);
      assertThat(segments(dir)).isEqualTo(segs.subList(1, segs.size()));
      wal.truncateBefore(f4);
      assertThat(segments(dir)).isEqualTo(segs.subList(2, segs.size()));
      // however far the checkpoint is, two closed segments stay beside the one being written
      wal.truncateBefore(Long.MAX_VALUE);
      assertThat(segments(dir)).isEqualTo(segs.subList(segs.size() - 3, segs.size()));
      assertThat(wal.sizeBytes()).isEqualTo(totalSize(dir));
      written.add(append(wal, 10));
    }
    // recovery replays from the checkpoint, never the kept records before it
    long tailFirst = firstSeq(segments(dir).getLast());
    Opened opened = open(dir, small().withRetainClosed(2), tailFirst);
    try (Wal wal = opened.wal()) {
      assertSameRecords(opened.records(), written.subList((int) tailFirst - 1, written.size()));
      assertThat(wal.recovery().segments()).isEqualTo(3);
      assertThat(wal.lastSeq()).isEqualTo(written.size());
    }
  }

  // ---------------------------------------------------------------- I/O failures

  @Test
  void writeFailureFailsTheLogUntilReopened() throws IOException {
    assertWriteFailureFailsTheLog(false);
  }

  @Test
  void partialWriteFailureLeavesATornRecordThatRecoveryDiscards() throws IOException {
    assertWriteFailureFailsTheLog(true);
  }

  private void assertWriteFailureFailsTheLog(boolean partial) throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, NO_RECORDS_EXPECTED)) {
      for (int i = 0; i < 3; i++) {
        written.add(append(wal, 50));
      }
      io.partialWrites(partial).failOnce(Op.WRITE, 1);
      assertThatThrownBy(() -> append(wal, 50))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageStartingWith("WAL append failed [dir=" + dir + ", seq=4]")
          .hasCauseInstanceOf(InjectedIOException.class);
      assertThat(wal.failed()).isTrue();
      assertThat(wal.lastSeq()).isEqualTo(3);
      // The device works again, but the log stays failed: it does not half-continue.
      assertThatThrownBy(() -> append(wal, 5))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith("WAL failed after an I/O error and must be reopened [dir=")
          .hasCauseInstanceOf(InjectedIOException.class);
      assertThatThrownBy(() -> wal.sync(3)).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> wal.truncateBefore(1)).isInstanceOf(IllegalStateException.class);
      assertThat(wal.durableSeq()).isLessThan(3);
    }
    Opened opened = open(dir, small(), 0);
    try (Wal wal = opened.wal()) {
      assertSameRecords(opened.records(), written);
      if (partial) {
        assertThat(wal.recovery().discardReason()).isNotNull();
        assertThat(wal.recovery().bytesDiscarded()).isPositive();
      }
      assertThat(wal.append((byte) 0, new byte[0])).isEqualTo(4);
    }
  }

  @Test
  void fsyncFailureFailsTheLogUntilReopened() throws IOException {
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, NO_RECORDS_EXPECTED)) {
      for (int i = 0; i < 3; i++) {
        written.add(append(wal, 50));
      }
      wal.sync(2);
      assertThat(wal.durableSeq()).isEqualTo(3);
      written.add(append(wal, 50));
      io.failOnce(Op.FORCE, 1);
      assertThatThrownBy(() -> wal.sync(4))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageStartingWith("WAL fsync failed [dir=" + dir + ", seq=4]")
          .hasCauseInstanceOf(InjectedIOException.class);
      assertThat(wal.failed()).isTrue();
      assertThat(wal.durableSeq()).isEqualTo(3);
      // Records that were durable before the failure stay acknowledged; nothing new is.
      wal.sync(3);
      assertThatThrownBy(() -> wal.sync(4)).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> append(wal, 5)).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(wal::syncAll).isInstanceOf(IllegalStateException.class);
    }
    Opened opened = open(dir, small(), 0);
    try (Wal wal = opened.wal()) {
      assertSameRecords(opened.records(), written);
      assertThat(wal.lastSeq()).isEqualTo(written.getLast().seq());
    }
  }

  @Test
  void segmentRollFailureFailsTheLog() throws IOException {
    for (Op op : new Op[] {Op.OPEN, Op.WRITE, Op.FORCE, Op.FSYNC_DIRECTORY}) {
      Path dir = tmp.resolve("wal-" + op);
      List<Rec> written = new ArrayList<>();
      try (Wal wal = Wal.open(dir, io, small(), 0, NO_RECORDS_EXPECTED)) {
        written.add(append(wal, 1200));
        written.add(append(wal, 1200));
        written.add(append(wal, 1200));
        assertThat(wal.segmentCount()).isEqualTo(1);
        // The next record does not fit: appending it rolls.
        io.failOnce(op, 1);
        assertThatThrownBy(() -> append(wal, 1200))
            .as("failing %s", op)
            .isInstanceOf(UncheckedIOException.class)
            .hasRootCauseInstanceOf(InjectedIOException.class);
        assertThat(wal.failed()).isTrue();
        assertThatThrownBy(() -> append(wal, 10)).isInstanceOf(IllegalStateException.class);
      }
      Opened opened = open(dir, small(), 0);
      try (Wal wal = opened.wal()) {
        assertSameRecords(opened.records(), written);
        assertThat(wal.append((byte) 0, new byte[10])).isEqualTo(4);
      }
    }
  }

  @Test
  void failedRecoveryLeaksNeitherChannelsNorTheFlusher() throws IOException {
    Path dir = tmp.resolve("wal");
    writeLog(dir, small(), 40, 200);
    int segs = segments(dir).size();
    try (ManualScheduler scheduler = new ManualScheduler()) {
      Wal.Options options =
          small().withPolicy(FsyncPolicy.INTERVAL).withScheduler(scheduler, Duration.ofMillis(5));
      // Recovery opens each segment once; the next open is the tail for appending.
      io.failOnce(Op.OPEN, segs + 1);
      assertThatThrownBy(() -> Wal.open(dir, io, options, 0, (s, o, b) -> {}))
          .isInstanceOf(InjectedIOException.class);
      assertThat(scheduler.futures).allMatch(ScheduledFuture::isCancelled);

      io.failOnce(Op.LIST, 1);
      assertThatThrownBy(() -> Wal.open(dir, io, options, 0, (s, o, b) -> {}))
          .isInstanceOf(InjectedIOException.class);
    }
  }

  // ---------------------------------------------------------------- fsync policies

  @Test
  void intervalPolicySyncReturnsAtOnceAndTheFlusherForces() throws IOException {
    try (ManualScheduler scheduler = new ManualScheduler()) {
      Wal.Options options =
          small().withPolicy(FsyncPolicy.INTERVAL).withScheduler(scheduler, Duration.ofMillis(5));
      Path dir = tmp.resolve("wal");
      List<Rec> written = new ArrayList<>();
      try (Wal wal = Wal.open(dir, io, options, 0, NO_RECORDS_EXPECTED)) {
        assertThat(wal.policy()).isEqualTo(FsyncPolicy.INTERVAL);
        assertThat(scheduler.tasks).hasSize(1);
        for (int i = 0; i < 3; i++) {
          written.add(append(wal, 30));
        }
        int forces = io.calls(Op.FORCE);
        wal.sync(3);
        assertThat(io.calls(Op.FORCE)).isEqualTo(forces);
        assertThat(wal.durableSeq()).isZero();

        scheduler.runAll();
        assertThat(io.calls(Op.FORCE)).isEqualTo(forces + 1);
        assertThat(wal.durableSeq()).isEqualTo(3);
        scheduler.runAll(); // nothing new: no fsync
        assertThat(io.calls(Op.FORCE)).isEqualTo(forces + 1);
      }
      assertThat(scheduler.futures).allMatch(ScheduledFuture::isCancelled);
      Opened opened = open(dir, small(), 0);
      try (Wal wal = opened.wal()) {
        assertSameRecords(opened.records(), written);
        assertThat(wal.lastSeq()).isEqualTo(written.getLast().seq());
      }
    }
  }

  @Test
  void neverPolicyNeverFsyncs() throws IOException {
    Wal.Options options = small().withPolicy(FsyncPolicy.NEVER);
    Path dir = tmp.resolve("wal");
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, options, 0, NO_RECORDS_EXPECTED)) {
      for (int i = 0; i < 50; i++) {
        written.add(append(wal, 200));
        wal.sync(written.getLast().seq());
      }
      assertThat(wal.segmentCount()).isGreaterThan(1);
      assertThat(wal.durableSeq()).isZero();
    }
    Opened opened = open(dir, options, 0);
    try (Wal wal = opened.wal()) {
      assertSameRecords(opened.records(), written);
      assertThat(wal.lastSeq()).isEqualTo(written.getLast().seq());
    }
    assertThat(io.calls(Op.FORCE)).isZero();
    assertThat(io.calls(Op.FSYNC_DIRECTORY)).isZero();
  }

  @Test
  void listenerSeesEveryAppendAndFsync() throws IOException {
    AtomicInteger appendedBytes = new AtomicInteger();
    AtomicInteger fsyncs = new AtomicInteger();
    Wal.Listener listener =
        new Wal.Listener() {
          @Override
          public void onAppend(int recordBytes) {
            appendedBytes.addAndGet(recordBytes);
          }

          @Override
          public void onFsync(long nanos) {
            assertThat(nanos).isNotNegative();
            fsyncs.incrementAndGet();
          }
        };
    try (Wal wal =
        Wal.open(tmp.resolve("wal"), io, small().withListener(listener), 0, NO_RECORDS_EXPECTED)) {
      append(wal, 10);
      append(wal, 0);
      wal.sync(2);
      assertThat(appendedBytes.get()).isEqualTo(2 * Wal.RECORD_HEADER_BYTES + 10);
      assertThat(fsyncs.get()).isEqualTo(1);
      wal.sync(2);
      assertThat(fsyncs.get()).isEqualTo(1);
    }
  }

  // ---------------------------------------------------------------- group commit

  @Test
  void concurrentAppendersWithGroupCommitReplayEverySequenceOnce() throws Exception {
    Path dir = tmp.resolve("wal");
    int threads = 4;
    int perThread = TestSeeds.atLeast(random, 150);
    SplittableRandom root = new SplittableRandom(random.nextLong());
    ConcurrentHashMap<Long, Rec> bySeq = new ConcurrentHashMap<>();
    Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, NO_RECORDS_EXPECTED)) {
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        byte op = (byte) t;
        SplittableRandom rnd = root.split();
        workers.add(
            Thread.ofPlatform()
                .name("wal-appender-" + t)
                .start(
                    () -> {
                      try {
                        for (int i = 0; i < perThread; i++) {
                          byte[] body = new byte[rnd.nextInt(120)];
                          rnd.nextBytes(body);
                          long seq = wal.append(op, body);
                          Rec prev = bySeq.putIfAbsent(seq, new Rec(seq, op, body));
                          if (prev != null) {
                            throw new AssertionError("sequence handed out twice [seq=" + seq + "]");
                          }
                          if (rnd.nextInt(4) != 0) {
                            wal.sync(seq);
                            if (wal.durableSeq() < seq) {
                              throw new AssertionError("sync returned early [seq=" + seq + "]");
                            }
                          }
                        }
                      } catch (Throwable e) {
                        errors.add(e);
                      }
                    }));
      }
      for (Thread w : workers) {
        w.join();
      }
      assertThat(errors).isEmpty();
      assertThat(wal.lastSeq()).isEqualTo((long) threads * perThread);
      assertThat(wal.segmentCount()).isGreaterThan(3);
    }
    List<Rec> expected = new ArrayList<>(bySeq.values());
    expected.sort((a, b) -> Long.compare(a.seq(), b.seq()));
    assertThat(expected).extracting(Rec::seq).startsWith(1L).endsWith((long) expected.size());

    Opened opened = open(dir, small(), 0);
    try (Wal wal = opened.wal()) {
      assertSameRecords(opened.records(), expected);
      assertThat(wal.lastSeq()).isEqualTo(expected.getLast().seq());
    }
  }

  // ---------------------------------------------------------------- helpers

  record Rec(long seq, byte op, byte[] body) {}

  record Opened(Wal wal, List<Rec> records) {}

  private static Wal.Options small() {
    return Wal.Options.defaults().withSegmentBytes(SMALL_SEGMENT);
  }

  private Opened open(Path dir, Wal.Options options, long fromSeq) throws IOException {
    List<Rec> out = new ArrayList<>();
    Wal wal = Wal.open(dir, io, options, fromSeq, collector(out));
    return new Opened(wal, out);
  }

  /** Collects replayed records, copying the body, which is only valid during the call. */
  static Wal.RecordConsumer collector(List<Rec> out) {
    return (seq, op, body) -> {
      assertThat(body.position()).isZero();
      byte[] b = new byte[body.remaining()];
      body.get(b);
      out.add(new Rec(seq, op, b));
    };
  }

  private List<Rec> writeLog(Path dir, Wal.Options options, int n, int maxBody) throws IOException {
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, options, 0, NO_RECORDS_EXPECTED)) {
      for (int i = 0; i < n; i++) {
        written.add(append(wal, random.nextInt(maxBody)));
      }
    }
    return written;
  }

  /** Writes records until the log has {@code segments} segments, the last one partly filled. */
  private List<Rec> writeSegments(Path dir, int segments, int maxBody) throws IOException {
    List<Rec> written = new ArrayList<>();
    try (Wal wal = Wal.open(dir, io, small(), 0, NO_RECORDS_EXPECTED)) {
      while (wal.segmentCount() < segments) {
        written.add(append(wal, random.nextInt(maxBody)));
      }
      for (int i = random.nextInt(10); i >= 0; i--) {
        written.add(append(wal, random.nextInt(maxBody)));
      }
      assertThat(wal.segmentCount()).isEqualTo(segments);
    }
    return written;
  }

  private Rec append(Wal wal, int len) {
    byte op = (byte) random.nextInt(256);
    byte[] body = bytes(len);
    long seq = wal.append(op, body);
    return new Rec(seq, op, body);
  }

  private byte[] bytes(int len) {
    byte[] b = new byte[len];
    random.nextBytes(b);
    return b;
  }

  private Rec pickWithBody(List<Rec> recs) {
    List<Rec> candidates = recs.stream().filter(r -> r.body().length > 0).toList();
    assertThat(candidates).isNotEmpty();
    return candidates.get(random.nextInt(candidates.size()));
  }

  static void assertSameRecords(List<Rec> actual, List<Rec> expected) {
    assertThat(actual).extracting(Rec::seq).containsExactlyElementsOf(seqs(expected));
    for (int i = 0; i < expected.size(); i++) {
      Rec a = actual.get(i);
      Rec e = expected.get(i);
      assertThat(a.op()).as("op of seq %d", e.seq()).isEqualTo(e.op());
      assertThat(a.body()).as("body of seq %d", e.seq()).isEqualTo(e.body());
    }
  }

  private static List<Long> seqs(List<Rec> recs) {
    return recs.stream().map(Rec::seq).toList();
  }

  /** Byte offset of record {@code seq} in the segment whose first record is {@code firstSeq}. */
  private static long offsetOf(List<Rec> written, long firstSeq, long seq) {
    long off = Wal.HEADER_BYTES;
    for (Rec r : written) {
      if (r.seq() >= firstSeq && r.seq() < seq) {
        off += Wal.RECORD_HEADER_BYTES + r.body().length;
      }
    }
    return off;
  }

  static List<Path> segments(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().matches("wal-\\d{20}\\.log"))
          .sorted()
          .toList();
    }
  }

  static long firstSeq(Path segment) {
    String name = segment.getFileName().toString();
    return Long.parseLong(name.substring(4, name.length() - 4));
  }

  private static long totalSize(Path dir) throws IOException {
    long total = 0;
    for (Path p : segments(dir)) {
      total += Files.size(p);
    }
    return total;
  }

  private Path copyOf(Path template, String name) throws IOException {
    Path dir = Files.createDirectories(tmp.resolve(name));
    for (Path p : segments(template)) {
      Files.copy(p, dir.resolve(p.getFileName()));
    }
    return dir;
  }

  private static void truncate(Path file, long size) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }
  }

  private void flipBit(Path file, long offset) throws IOException {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      assertThat(ch.read(one, offset)).isEqualTo(1);
      one.put(0, (byte) (one.get(0) ^ (1 << random.nextInt(8)))).rewind();
      ch.write(one, offset);
    }
  }

  /**
   * A scheduler whose periodic tasks run only when the test says so: no sleeping, no clock. The
   * tasks are also scheduled for real, a day out, so the returned futures behave normally.
   */
  static final class ManualScheduler extends ScheduledThreadPoolExecutor implements AutoCloseable {
    final List<Runnable> tasks = new ArrayList<>();
    final List<ScheduledFuture<?>> futures = new ArrayList<>();

    ManualScheduler() {
      super(1, Thread.ofPlatform().name("wal-test-scheduler-", 0).factory());
      setRemoveOnCancelPolicy(true);
    }

    @Override
    public synchronized ScheduledFuture<?> scheduleWithFixedDelay(
        Runnable command, long initialDelay, long delay, TimeUnit unit) {
      tasks.add(command);
      ScheduledFuture<?> f = super.scheduleWithFixedDelay(command, 1, 1, TimeUnit.DAYS);
      futures.add(f);
      return f;
    }

    synchronized void runAll() {
      for (int i = 0; i < tasks.size(); i++) {
        if (!futures.get(i).isCancelled()) {
          tasks.get(i).run();
        }
      }
    }

    @Override
    public void close() {
      shutdownNow();
    }
  }
}
