package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.IndexingState;
import io.flashvec.index.InsufficientStorageException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.index.disk.GraphFile;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Raw seals (ADR 0031): a frozen segment its live graph fell behind is sealed without a graph, its
 * points unindexed and the shard yellow until a merge builds them; one whose graph caught up keeps
 * its graph; a bulk load seals raw and builds once when it ends; a WAL replay seals raw; a power
 * loss anywhere in a raw seal loses no acknowledged write.
 */
@ExtendWith(TestSeeds.Reporter.class)
class ShardRawSealTest {

  static final int DIM = 16;
  static final int SEAL = 1000;
  static final Distance D = Distance.COSINE;
  static final IndexParams INDEX = new IndexParams(IndexParams.DISKANN, 16, 48, 1.2f, 0);

  @TempDir Path tmp;

  private final List<ExecutorService> executors = new ArrayList<>();

  /** Live-graph inserts, held until {@link #openGate} (else the graph stays behind). */
  private final ConcurrentLinkedQueue<Runnable> held = new ConcurrentLinkedQueue<>();

  private volatile ExecutorService liveLane;

  private final Executor gate =
      task -> {
        ExecutorService lane = liveLane;
        if (lane != null) {
          lane.execute(task);
        } else {
          held.add(task);
        }
      };

  /** The points written so far, by id. */
  private final Map<Long, float[]> model = new LinkedHashMap<>();

  @AfterEach
  void stop() throws InterruptedException {
    for (ExecutorService e : executors) {
      e.shutdownNow();
      assertThat(e.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    }
  }

  private ExecutorService thread(String name) {
    ExecutorService e =
        Executors.newSingleThreadExecutor(Thread.ofPlatform().name(name).daemon(true).factory());
    executors.add(e);
    return e;
  }

  private void openGate() {
    liveLane = thread("test-live");
    for (Runnable r; (r = held.poll()) != null; ) {
      liveLane.execute(r);
    }
  }

  private Shard open(Path dir, FileIO io, Executor builds, Executor compactions) {
    return open(dir, io, builds, compactions, null);
  }

  private Shard open(Path dir, FileIO io, Executor builds, Executor compactions, DiskSpace space) {
    Shard.Options o =
        new Shard.Options(SEAL, Wal.Options.defaults(), io, builds, 64)
            .withLiveIndexer(new LiveIndexer(gate, gate))
            .withCompaction(
                new Shard.Compaction(
                    compactions,
                    null,
                    0.2,
                    Shard.Compaction.DEFAULT_SEGMENTS_PER_TIER,
                    Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS,
                    true));
    if (space != null) {
      o = o.withDiskSpace(space);
    }
    return Shard.open(dir, 0, DIM, D, INDEX, o);
  }

  private Shard open(Path dir) {
    return open(dir, FileIO.DEFAULT, thread("test-build"), thread("test-compaction"));
  }

  private List<Point> points(Random r, int from, int to) {
    List<Point> pts = new ArrayList<>();
    for (int i = from; i < to; i++) {
      float[] v = D.prepare(TestVectors.gaussian(r, DIM));
      pts.add(new Point(PointId.of(i), v, null));
      model.put((long) i, v);
    }
    return pts;
  }

  private static List<SealedSegment> sealed(Shard s) {
    return s.snapshot().sealed();
  }

  /** Waits until {@code n} sealed segments are installed and no seal is pending. */
  private static void awaitSealed(Shard s, int n) {
    Await.until(
        Duration.ofSeconds(60),
        n + " sealed segments installed",
        () -> {
          assertThat(s.buildFailure()).isNull();
          return sealed(s).size() == n && s.indexingState().frozenPending() == 0;
        });
  }

  private static void awaitGreen(Shard s) {
    Await.until(
        Duration.ofSeconds(90),
        "every point in a graph, nothing pending",
        () -> {
          assertThat(s.buildFailure()).isNull();
          assertThat(s.compactionFailure()).isNull();
          IndexingState st = s.indexingState();
          return st.caughtUp() && st.indexed() == s.count() && !s.compacting();
        });
  }

  /** Recall@10 of the shard's default search against brute force over {@link #model}. */
  private double recall(Shard s, Random r) {
    int queries = 20;
    int k = 10;
    int hits = 0;
    for (int q = 0; q < queries; q++) {
      float[] query = D.prepare(TestVectors.gaussian(r, DIM));
      List<Long> ids = new ArrayList<>(model.keySet());
      ids.sort(
          Comparator.comparingDouble((Long id) -> -D.score(query, model.get(id), 0))
              .thenComparing(id -> id));
      Set<Long> truth = new HashSet<>(ids.subList(0, k));
      for (Record rec : Searches.search(s, query, k, SearchParams.DEFAULT, null, false, false)) {
        if (truth.contains(rec.id().number())) {
          hits++;
        }
      }
    }
    return hits / (double) (queries * k);
  }

  @Test
  void aSealAheadOfItsLiveGraphIsWrittenRawAndMergedIntoAGraphOnceWritesStop() throws Exception {
    Random r = TestSeeds.random("ShardRawSealTest.ahead");
    try (Shard s = open(tmp.resolve("ahead"))) {
      s.awaitDurable(s.upsert(points(r, 0, SEAL)));
      s.awaitDurable(s.upsert(points(r, SEAL, SEAL + 500))); // seals the first 1,000
      awaitSealed(s, 1);
      SealedSegment seg = sealed(s).get(0);
      assertThat(seg.hasGraph()).as("sealed without a graph").isFalse();
      assertThat(seg.size()).isEqualTo(SEAL);
      assertThat(s.rawSegments()).isEqualTo(1);
      IndexingState st = s.indexingState();
      assertThat(st.indexed()).as("%s", st).isZero();
      assertThat(st.backlog()).as("raw and growing points wait for an index").isEqualTo(1500);
      assertThat(st.caughtUp()).isFalse();
      double before = recall(s, r);
      assertThat(before).as("recall with a raw segment").isGreaterThanOrEqualTo(0.95);

      openGate(); // the growing segment's graph catches up; the raw one waits for its merge
      awaitGreen(s);
      assertThat(sealed(s)).allMatch(SealedSegment::hasGraph);
      assertThat(s.rawSegments()).isZero();
      assertThat(s.compactionsDone()).as("the merge built the raw segment").isEqualTo(1);
      assertThat(s.indexingState().indexed()).isEqualTo(1500);
      double after = recall(s, r);
      System.out.printf(Locale.ROOT, "[flashvec] recall@10 raw %.3f, merged %.3f%n", before, after);
      assertThat(after).isGreaterThanOrEqualTo(0.95);
    }
  }

  @Test
  void aSealWhoseLiveGraphCaughtUpKeepsItsGraph() throws Exception {
    Random r = TestSeeds.random("ShardRawSealTest.caughtUp");
    openGate();
    try (Shard s = open(tmp.resolve("caughtUp"))) {
      s.awaitDurable(s.upsert(points(r, 0, SEAL)));
      Await.until(
          Duration.ofSeconds(60), "live graph caught up", () -> s.indexingState().caughtUp());
      s.awaitDurable(s.upsert(points(r, SEAL, SEAL + 1)));
      awaitSealed(s, 1);
      assertThat(sealed(s).get(0).hasGraph()).as("sealed from its live graph").isTrue();
      assertThat(s.rawSegments()).isZero();
      awaitGreen(s);
      assertThat(s.compactionsDone()).isZero();
    }
  }

  @Test
  void aBulkLoadSealsRawAndBuildsOneGraphWhenItEnds() throws Exception {
    Random r = TestSeeds.random("ShardRawSealTest.bulk");
    openGate();
    try (Shard s = open(tmp.resolve("bulk"))) {
      s.setDeferBuilds(true);
      for (int b = 0; b < 3; b++) {
        s.awaitDurable(s.upsert(points(r, b * SEAL, (b + 1) * SEAL)));
      }
      s.awaitDurable(s.upsert(points(r, 3 * SEAL, 3 * SEAL + 10))); // seals the third
      awaitSealed(s, 3);
      assertThat(sealed(s)).noneMatch(SealedSegment::hasGraph);
      assertThat(s.deferredBuilds()).as("raw segments wait for the load's end").isEqualTo(3);
      // writes have stopped, but the load has not ended: no merge planned or run
      long quiet = System.nanoTime() + ShardCompactor.RAW_WRITES_QUIET_NANOS;
      Await.until(
          Duration.ofSeconds(30),
          "writes quiet past the raw hold",
          () -> System.nanoTime() > quiet);
      assertThat(s.indexingState().mergesPlanned()).isZero();
      assertThat(s.compactionsDone()).isZero();
      assertThat(s.rawSegments()).isEqualTo(3);

      s.setDeferBuilds(false);
      awaitGreen(s);
      assertThat(s.compactionsDone()).as("one build for the whole load").isEqualTo(1);
      assertThat(sealed(s)).hasSize(1);
      assertThat(sealed(s).get(0).hasGraph()).isTrue();
      assertThat(sealed(s).get(0).liveCount()).isEqualTo(3 * SEAL);
      assertThat(recall(s, r)).isGreaterThanOrEqualTo(0.95);
    }
  }

  @Test
  void aWalReplaySealsRaw() throws Exception {
    Random r = TestSeeds.random("ShardRawSealTest.replay");
    Path dir = tmp.resolve("replay");
    ConcurrentLinkedQueue<Runnable> never = new ConcurrentLinkedQueue<>();
    try (Shard s = open(dir, FileIO.DEFAULT, never::add, never::add)) {
      s.awaitDurable(s.upsert(points(r, 0, SEAL)));
      s.awaitDurable(s.upsert(points(r, SEAL, SEAL + 200)));
      s.wal().syncAll();
      assertThat(sealed(s)).as("the seal's build never ran").isEmpty();
    }
    // The gate stays shut: live indexing after the open could fill the frozen segment's graph past
    // a tenth before its build looks, and a graph that far along is sealed with it.
    ConcurrentLinkedQueue<Runnable> compactions = new ConcurrentLinkedQueue<>();
    try (Shard s = open(dir, FileIO.DEFAULT, thread("test-build"), compactions::add)) {
      awaitSealed(s, 1);
      assertThat(sealed(s).get(0).hasGraph()).as("the replayed seal is raw").isFalse();
      assertThat(s.count()).isEqualTo(SEAL + 200);
      for (Map.Entry<Long, float[]> e : model.entrySet()) {
        assertThat(s.get(PointId.of(e.getKey()), false, true).vector())
            .containsExactly(e.getValue());
      }
    }
  }

  /**
   * A raw segment still owes its graph: the merge that builds it writes a whole segment, edges
   * included. Writes leave that much free above the reserve, so they cannot take the room the merge
   * needs, and a disk too full for it refuses them (507) before and after a restart alike, as it
   * did before a WAL replay sealed raw what it now seals with a graph later.
   */
  @Test
  void writesLeaveRoomForTheMergeThatBuildsARawSegment() throws Exception {
    Random r = TestSeeds.random("ShardRawSealTest.owed");
    Path dir = tmp.resolve("owed");
    long reserve = 64 << 10;
    FaultyFileIO io = new FaultyFileIO();
    DiskSpace space = new DiskSpace(io, reserve);
    // Room for a write of a few points above the reserve, not for the merge's graph file alone.
    long tight = reserve + GraphFile.fileBytes(SEAL + 5, DIM, INDEX.maxDegree()) / 2;
    ConcurrentLinkedQueue<Runnable> compactions = new ConcurrentLinkedQueue<>();
    try (Shard s = open(dir, io, thread("test-build"), compactions::add, space)) {
      s.awaitDurable(s.upsert(points(r, 0, SEAL)));
      s.awaitDurable(s.upsert(points(r, SEAL, SEAL + 5))); // seals the first 1,000 raw
      awaitSealed(s, 1);
      assertThat(sealed(s).get(0).hasGraph()).isFalse();
      io.spaceLeft(tight);
      assertRefused(s, r, SEAL + 5);
    }
    // After a restart the raw segment still waits for its merge: writes are still refused.
    try (Shard s = open(dir, io, thread("test-build"), compactions::add, space)) {
      assertThat(s.rawSegments()).isEqualTo(1);
      assertRefused(s, r, SEAL + 5);
      assertThat(s.count()).isEqualTo(SEAL + 5);
    }
    // With room, the merge builds the graph; then the same tight disk takes writes again.
    openGate();
    io.spaceLeft(FaultyFileIO.UNLIMITED);
    try (Shard s = open(dir, io, thread("test-build"), thread("test-compaction"), space)) {
      awaitGreen(s);
      assertThat(s.rawSegments()).isZero();
      io.spaceLeft(tight);
      s.awaitDurable(s.upsert(points(r, SEAL + 5, SEAL + 10)));
      assertThat(s.count()).isEqualTo(SEAL + 10);
    }
  }

  /**
   * The disk fills up at each file operation of a raw seal in turn (its directory, graph file, PQ
   * codes, metadata, rename, the checkpoint's deletion bitmap and manifest): the seal removes what
   * it wrote, runs again once it fits, and no temporary file is left, then or after a restart.
   */
  @Test
  void aRawSealThatRunsOutOfSpaceLeavesNoTemporaryFiles() throws Exception {
    Random r = TestSeeds.random("ShardRawSealTest.noSpace");
    int round = 0;
    for (ShardDiskFullTest.WritePath w : ShardDiskFullTest.buildWritePaths()) {
      model.clear();
      Path dir = tmp.resolve("no-space-" + round++);
      FaultyFileIO io = new FaultyFileIO();
      ConcurrentLinkedQueue<Runnable> compactions = new ConcurrentLinkedQueue<>();
      try (Shard s = open(dir, io, thread("test-build"), compactions::add)) {
        s.awaitDurable(s.upsert(points(r, 0, SEAL)));
        io.noSpaceFailures(true).failOnce(w.op(), 1, w.target());
        s.awaitDurable(s.upsert(points(r, SEAL, SEAL + 5))); // seals the first 1,000 raw
        awaitSealed(s, 1);
        Await.until(Duration.ofSeconds(60), "the seal's checkpoint", () -> !s.indexing());
        if (io.injectedFailures() == 0) {
          continue; // a raw seal does not write there (a payload index)
        }
        assertThat(sealed(s).get(0).hasGraph()).isFalse();
        assertThat(tempFiles(dir)).as("ENOSPC at the %s", w.name()).isEmpty();
        assertThat(s.buildFailure()).as("ENOSPC at the %s", w.name()).isNull();
        io.disarm();
      }
      try (Shard s = open(dir, FileIO.DEFAULT, thread("test-build"), compactions::add)) {
        assertThat(s.count()).as("ENOSPC at the %s", w.name()).isEqualTo(model.size());
        // a seal the WAL replay starts may be writing its seg-N.tmp until the close cancels it
      }
      assertThat(tempFiles(dir)).as("ENOSPC at the %s, reopened", w.name()).isEmpty();
      System.out.println("[flashvec] ENOSPC in a raw seal at the " + w.name() + ": no temp files");
    }
  }

  private static List<Path> tempFiles(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(p -> p.getFileName().toString().endsWith(".tmp")).toList();
    }
  }

  /**
   * Frozen segments waiting for their build (here: a restart's WAL replay, which seals raw) owe
   * that build; writes leave its room free above the reserve, so a disk too full for the build
   * refuses them before and after the restart alike, and the build runs once space is freed.
   */
  @Test
  void writesLeaveRoomForTheBuildsOfFrozenSegments() throws Exception {
    Random r = TestSeeds.random("ShardRawSealTest.owedFrozen");
    Path dir = tmp.resolve("owed-frozen");
    long reserve = 64 << 10;
    FaultyFileIO io = new FaultyFileIO();
    DiskSpace space = new DiskSpace(io, reserve);
    long tight = reserve + GraphFile.fileBytes(SEAL, DIM, INDEX.maxDegree()) / 2;
    ConcurrentLinkedQueue<Runnable> never = new ConcurrentLinkedQueue<>();
    try (Shard s = open(dir, io, never::add, never::add, space)) {
      s.awaitDurable(s.upsert(points(r, 0, SEAL)));
      s.awaitDurable(s.upsert(points(r, SEAL, SEAL + 5))); // freezes the first 1,000
      assertThat(sealed(s)).as("the seal's build never ran").isEmpty();
      io.spaceLeft(tight);
      assertRefused(s, r, SEAL + 5);
      s.wal().syncAll();
    }
    ConcurrentLinkedQueue<Runnable> compactions = new ConcurrentLinkedQueue<>();
    try (Shard s = open(dir, io, thread("test-build"), compactions::add, space)) {
      Await.holdsFor(
          Duration.ofMillis(300),
          "the replay's seal waits for space",
          () -> s.indexing() && sealed(s).isEmpty());
      assertRefused(s, r, SEAL + 5);
      io.spaceLeft(FaultyFileIO.UNLIMITED);
      awaitSealed(s, 1);
      assertThat(s.count()).isEqualTo(SEAL + 5);
    }
  }

  /** A write of five points from {@code from} is refused with a 507 that says why. */
  private void assertRefused(Shard s, Random r, int from) {
    List<Point> pts = points(r, from, from + 5);
    pts.forEach(p -> model.remove(p.id().number()));
    assertThatThrownBy(() -> s.upsert(pts))
        .isInstanceOf(InsufficientStorageException.class)
        .hasMessageStartingWith("Insufficient storage: upsert refused")
        .hasMessageContaining("kept for index builds");
    assertThat(s.get(PointId.of(from), false, false)).isNull();
  }

  /**
   * Power loss at a random file operation of a raw seal (its files, the rename, the checkpoint):
   * after reopening, every acknowledged write is there and the segment directories are exactly the
   * manifest's.
   */
  @Test
  void aCrashAtAnyPointOfARawSealLosesNothing() throws Exception {
    Random r = TestSeeds.random("ShardRawSealTest.crash");
    int ops = rawSealFileOps(r);
    int rounds = TestSeeds.atLeast(r, 8);
    for (int round = 0; round < rounds; round++) {
      model.clear();
      Path dir = tmp.resolve("crash-" + round);
      ShardCompactionTest.PausingFileIO pio = new ShardCompactionTest.PausingFileIO("test-build");
      ConcurrentLinkedQueue<Runnable> compactions = new ConcurrentLinkedQueue<>();
      Shard s = open(dir, pio, thread("test-build"), compactions::add);
      int at = 1 + r.nextInt(ops);
      try {
        s.awaitDurable(s.upsert(points(r, 0, SEAL)));
        s.wal().syncAll();
        pio.calls.set(0);
        pio.pauseAt = at;
        s.awaitDurable(s.upsert(points(r, SEAL, SEAL + 5))); // seals raw on the build thread
        s.wal().syncAll();
        assertThat(pio.paused.await(60, TimeUnit.SECONDS))
            .as("the raw seal reached its file operation %d of %d", at, ops)
            .isTrue();
        // the build thread may hold the write lock here: no writes from this thread
        pio.crash(r);
      } finally {
        pio.resume.countDown();
        try {
          s.close();
        } catch (IOException | RuntimeException expected) {
          // closing over a crashed file system fails
        }
      }
      CrashSimulatingFileIO fresh = new CrashSimulatingFileIO();
      try (Shard again = open(dir, fresh, thread("test-build"), compactions::add)) {
        assertThat(again.count()).as("count after crash round %d", round).isEqualTo(model.size());
        for (Map.Entry<Long, float[]> e : model.entrySet()) {
          assertThat(again.get(PointId.of(e.getKey()), false, true).vector())
              .as("point %d after crash round %d", e.getKey(), round)
              .containsExactly(e.getValue());
        }
        awaitSealed(again, 1); // the replay seals raw again what the crash lost
      }
      fresh.assertNoOpenChannels();
      ShardManifest m = ShardManifest.read(FileIO.DEFAULT, dir);
      List<String> want = new ArrayList<>();
      for (int id : m.segmentIds()) {
        want.add(String.format(Locale.ROOT, "seg-%010d", id));
      }
      try (Stream<Path> st = Files.list(dir.resolve("segments"))) {
        assertThat(st.map(p -> p.getFileName().toString()).sorted().toList())
            .as("segment directories = manifest after round %d", round)
            .isEqualTo(want);
      }
    }
    System.out.println("[flashvec] raw seal crash rounds=" + rounds + ", file operations=" + ops);
  }

  /** The file operations of the build thread for one raw seal of {@code SEAL} points. */
  private int rawSealFileOps(Random r) throws Exception {
    ShardCompactionTest.PausingFileIO pio = new ShardCompactionTest.PausingFileIO("test-build");
    ConcurrentLinkedQueue<Runnable> compactions = new ConcurrentLinkedQueue<>();
    try (Shard s = open(tmp.resolve("count"), pio, thread("test-build"), compactions::add)) {
      s.awaitDurable(s.upsert(points(r, 0, SEAL)));
      s.wal().syncAll();
      pio.calls.set(0);
      s.awaitDurable(s.upsert(points(r, SEAL, SEAL + 5)));
      awaitSealed(s, 1);
      Await.until(Duration.ofSeconds(60), "the seal's checkpoint", () -> !s.indexing());
      assertThat(sealed(s).get(0).hasGraph()).isFalse();
      return pio.calls.get();
    }
  }
}
