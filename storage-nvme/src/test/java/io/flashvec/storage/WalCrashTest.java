package io.flashvec.storage;

import static io.flashvec.storage.WalTest.collector;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.WalTest.Rec;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Power loss: every record whose {@link Wal#sync} returned under {@link FsyncPolicy#ALWAYS} must
 * come back after a crash, byte for byte, in sequence order and without gaps. The crash model is
 * the one of {@link CrashSimulatingFileIO}: un-forced bytes are lost or torn, un-fsynced directory
 * entries may be undone.
 */
@ExtendWith(TestSeeds.Reporter.class)
class WalCrashTest {

  @TempDir Path tmp;

  @Test
  void acknowledgedRecordsSurviveCrashesDuringConcurrentAppends() throws Exception {
    Random master = TestSeeds.random("WalCrashTest#acknowledgedRecordsSurvive");
    int scenarios = TestSeeds.atLeast(master, 6);
    for (int i = 0; i < scenarios; i++) {
      long seed = master.nextLong();
      try {
        runScenario(tmp.resolve("scenario-" + i), seed);
      } catch (AssertionError | Exception e) {
        throw new AssertionError(
            "crash scenario failed [scenario=" + i + ", scenarioSeed=" + TestSeeds.hex(seed) + "]",
            e);
      }
    }
  }

  /**
   * A few boots of one log. Each boot recovers and checks the log, maybe truncates it to a
   * checkpoint, lets 2-4 threads append (and mostly sync) until a random number of records was
   * acknowledged, then pulls the plug while they are still running.
   */
  private void runScenario(Path dir, long seed) throws Exception {
    Random r = new Random(seed);
    Wal.Options options = Wal.Options.defaults().withSegmentBytes(4096L << r.nextInt(3));
    Map<Long, Rec> onDisk = new HashMap<>(); // what each sequence number was last written as
    Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
    long checkpoint = 0;
    int boots = 2 + r.nextInt(3);
    for (int boot = 0; boot <= boots; boot++) {
      CrashSimulatingFileIO io = new CrashSimulatingFileIO();
      List<Rec> replayed = new ArrayList<>();
      Wal wal = Wal.open(dir, io, options, checkpoint, collector(replayed));
      long last = wal.lastSeq();
      assertRecovered(replayed, checkpoint, last, onDisk, acknowledged, boot);
      // Records past the recovered end were lost; their sequence numbers get reused.
      onDisk.keySet().removeIf(seq -> seq > last);

      if (boot == boots) {
        wal.close();
        io.assertNoOpenChannels();
        return;
      }
      if (r.nextBoolean() && last > 0) {
        checkpoint = Math.max(checkpoint, 1 + r.nextLong(last + 1));
        wal.truncateBefore(checkpoint);
      }
      appendUntilCrash(wal, io, r, onDisk, acknowledged);
      io.assertNoOpenChannels();
    }
  }

  private static void assertRecovered(
      List<Rec> replayed,
      long checkpoint,
      long last,
      Map<Long, Rec> onDisk,
      Set<Long> acknowledged,
      int boot) {
    String where = "boot " + boot;
    long first = Math.max(checkpoint, 1);
    assertThat(last)
        .as(where + ": log ends before the checkpoint")
        .isGreaterThanOrEqualTo(first - 1);
    List<Long> expectedSeqs = new ArrayList<>();
    for (long s = first; s <= last; s++) {
      expectedSeqs.add(s);
    }
    // In order, no gaps, nothing twice.
    assertThat(replayed).extracting(Rec::seq).as(where).containsExactlyElementsOf(expectedSeqs);
    // Every record is one that was appended, byte for byte: no garbage, no stale generation.
    for (Rec got : replayed) {
      Rec want = onDisk.get(got.seq());
      assertThat(want)
          .as(where + ": replayed a record never appended [seq=%d]", got.seq())
          .isNotNull();
      assertThat(got.op()).as(where + ": op of seq %d", got.seq()).isEqualTo(want.op());
      assertThat(got.body()).as(where + ": body of seq %d", got.seq()).isEqualTo(want.body());
    }
    // Every acknowledged record at or after the checkpoint is there.
    List<Long> lost = acknowledged.stream().filter(s -> s >= first && s > last).sorted().toList();
    assertThat(lost).as(where + ": acknowledged records lost [lastSeq=%d]", last).isEmpty();
  }

  private static void appendUntilCrash(
      Wal wal, CrashSimulatingFileIO io, Random r, Map<Long, Rec> onDisk, Set<Long> acknowledged)
      throws Exception {
    int threads = 2 + r.nextInt(3);
    int perThread = 300;
    int crashAfterAcks = 1 + r.nextInt(120);
    SplittableRandom root = new SplittableRandom(r.nextLong());
    Map<Long, Rec> appended = new ConcurrentHashMap<>();
    AtomicInteger acks = new AtomicInteger();
    AtomicInteger finished = new AtomicInteger();
    CountDownLatch crashPoint = new CountDownLatch(1);
    Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      SplittableRandom rnd = root.split();
      byte op = (byte) t;
      workers.add(
          Thread.ofPlatform()
              .name("wal-crash-appender-" + t)
              .start(
                  () -> {
                    try {
                      for (int i = 0; i < perThread; i++) {
                        byte[] body = new byte[rnd.nextInt(rnd.nextInt(8) == 0 ? 2000 : 200)];
                        rnd.nextBytes(body);
                        long seq = wal.append(op, body);
                        appended.put(seq, new Rec(seq, op, body));
                        if (rnd.nextInt(4) != 0) {
                          wal.sync(seq);
                          acknowledged.add(seq);
                          if (acks.incrementAndGet() == crashAfterAcks) {
                            crashPoint.countDown();
                          }
                        }
                      }
                    } catch (UncheckedIOException | IllegalStateException e) {
                      if (!io.crashed()) {
                        errors.add(e); // the log may only fail because the power went out
                      }
                    } catch (Throwable e) {
                      errors.add(e);
                    } finally {
                      if (finished.incrementAndGet() == threads) {
                        crashPoint.countDown();
                      }
                    }
                  }));
    }
    assertThat(crashPoint.await(60, TimeUnit.SECONDS)).as("appenders stalled").isTrue();
    io.crash(r);
    for (Thread w : workers) {
      w.join(TimeUnit.SECONDS.toMillis(60));
      assertThat(w.isAlive()).as("%s still running after the crash", w.getName()).isFalse();
    }
    assertThat(errors).isEmpty();
    onDisk.putAll(appended);
  }

  @Test
  void logWrittenWithPolicyNeverIsMadeDurableWhenReopenedWithAlways() throws IOException {
    Random r = TestSeeds.random("WalCrashTest#neverThenAlways");
    for (int i = 0; i < 8; i++) {
      Path dir = tmp.resolve("run-" + i);
      CrashSimulatingFileIO io = new CrashSimulatingFileIO();
      Wal.Options never =
          Wal.Options.defaults().withPolicy(FsyncPolicy.NEVER).withSegmentBytes(4096);
      TreeMap<Long, Rec> written = new TreeMap<>();
      // A bulk load: nothing is fsynced, not even the segment files' directory entries.
      try (Wal wal = Wal.open(dir, io, never, 0, (s, o, b) -> {})) {
        appendSome(wal, r, 150, written);
      }
      Wal.Options always = never.withPolicy(FsyncPolicy.ALWAYS);
      try (Wal wal = Wal.open(dir, io, always, 0, (s, o, b) -> {})) {
        long seq = appendSome(wal, r, 5, written);
        wal.sync(seq);
        assertThat(wal.durableSeq()).isEqualTo(seq);
        io.crash(r);
      }
      // Acknowledged on top of the bulk load, so the bulk load must have become durable too.
      assertReplays(dir, always, written);
    }
  }

  @Test
  void recordsReplayedByRecoveryAreDurableWhenOpenReturns() throws IOException {
    Random r = TestSeeds.random("WalCrashTest#replayedAreDurable");
    for (int i = 0; i < 8; i++) {
      Path dir = tmp.resolve("run-" + i);
      CrashSimulatingFileIO os = new CrashSimulatingFileIO();
      Wal.Options options = Wal.Options.defaults().withSegmentBytes(4096);
      TreeMap<Long, Rec> written = new TreeMap<>();
      // The process dies (every fsync fails from now on) with records only in the page cache.
      FaultyFileIO dying = new FaultyFileIO(os);
      Wal first = Wal.open(dir, dying, options, 0, (s, o, b) -> {});
      appendSome(first, r, 80, written);
      dying.failFrom(Op.FORCE, 1);
      assertThatThrownBy(first::close).isInstanceOf(UncheckedIOException.class);
      dying.assertNoOpenChannels();

      // The restarted process replays them and may act on them (apply, checkpoint) ...
      List<Rec> replayed = new ArrayList<>();
      try (Wal wal = Wal.open(dir, os, options, 0, collector(replayed))) {
        assertThat(replayed).hasSize(written.size());
        assertThat(wal.durableSeq()).isEqualTo(wal.lastSeq());
        // ... so a power loss right after open must not take them back.
        os.crash(r);
      }
      assertReplays(dir, options, written);
    }
  }

  private static long appendSome(Wal wal, Random r, int n, Map<Long, Rec> written) {
    long seq = 0;
    for (int i = 0; i < n; i++) {
      byte[] body = new byte[r.nextInt(100)];
      r.nextBytes(body);
      byte op = (byte) r.nextInt(256);
      seq = wal.append(op, body);
      written.put(seq, new Rec(seq, op, body));
    }
    return seq;
  }

  private static void assertReplays(Path dir, Wal.Options options, TreeMap<Long, Rec> written)
      throws IOException {
    CrashSimulatingFileIO fresh = new CrashSimulatingFileIO();
    List<Rec> replayed = new ArrayList<>();
    try (Wal wal = Wal.open(dir, fresh, options, 0, collector(replayed))) {
      WalTest.assertSameRecords(replayed, new ArrayList<>(written.values()));
      assertThat(wal.recovery().discardReason()).isNull();
    }
    fresh.assertNoOpenChannels();
  }
}
