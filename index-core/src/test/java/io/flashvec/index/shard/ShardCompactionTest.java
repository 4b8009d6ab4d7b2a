package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.diskann.DiskAnnSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The shard contract with background compaction of DiskANN segments, plus compaction's own
 * behaviour: a seeded randomized model test over upserts (overwrites included), deletes, payload
 * updates, flushes, compactions and reopens; deleted ids never return after compaction and restart;
 * a simulated power loss at random points inside a compaction loses nothing and leaves no stray
 * segment directories.
 */
class ShardCompactionTest extends ShardContractTest {

  private final ExecutorService builds =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("test-build").factory());
  private final ExecutorService compactions =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("test-compaction").factory());

  @AfterEach
  void stopBackground() throws InterruptedException {
    builds.shutdown();
    compactions.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).as("builds stopped").isTrue();
    assertThat(compactions.awaitTermination(60, TimeUnit.SECONDS))
        .as("compactions stopped")
        .isTrue();
  }

  @Override
  protected int sealThreshold() {
    return 60;
  }

  @Override
  protected java.util.concurrent.Executor buildExecutor() {
    return builds;
  }

  /** Whether shards opened from now on compact by themselves. */
  private boolean automatic = true;

  /** Segments per tier of shards opened from now on. */
  private int segmentsPerTier = 2;

  @Override
  protected Shard.Compaction compaction() {
    return new Shard.Compaction(
        compactions,
        null,
        0.2,
        segmentsPerTier,
        Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS,
        automatic);
  }

  @Override
  protected SearchParams searchParams() {
    return new SearchParams(0, 0, 0, true);
  }

  @Override
  protected float tolerance(float score) {
    return 1e-4f * Math.max(1f, Math.abs(score));
  }

  @Override
  protected void settle(Shard s) {
    Await.until(
        Duration.ofSeconds(60),
        "index builds and compactions finished",
        () -> {
          assertThat(s.buildFailure()).as("index build failure").isNull();
          assertThat(s.compactionFailure()).as("compaction failure").isNull();
          return !s.indexing() && !s.compacting();
        });
  }

  private static List<String> segmentDirs(Path shardDir) throws IOException {
    Path segs = shardDir.resolve("segments");
    if (!Files.isDirectory(segs)) {
      return List.of();
    }
    try (Stream<Path> st = Files.list(segs)) {
      return st.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** Segment directories on disk are exactly the manifest's (checked with the shard closed). */
  private static void assertNoStrayDirectories(Path shardDir) throws IOException {
    ShardManifest m = ShardManifest.read(FileIO.DEFAULT, shardDir);
    List<String> want = new ArrayList<>();
    for (int id : m.segmentIds()) {
      want.add(String.format(Locale.ROOT, "seg-%010d", id));
    }
    want.sort(null);
    assertThat(segmentDirs(shardDir)).as("segment directories = manifest").isEqualTo(want);
  }

  /** Deletes about a third of the model's ids from the shard and the model; returns them. */
  private static List<PointId> deleteAThird(Random r, Shard s, Model m) throws Exception {
    List<PointId> gone = new ArrayList<>();
    for (PointId id : m.sortedIds()) {
      if (r.nextInt(3) == 0) {
        gone.add(id);
      }
    }
    s.awaitDurable(s.delete(gone));
    m.delete(gone);
    return gone;
  }

  private static int diskSegments(Shard s) {
    int n = 0;
    for (Segment seg : s.snapshot().segments()) {
      if (seg instanceof DiskAnnSegment) {
        n++;
      }
    }
    return n;
  }

  /** Whether every sealed DiskANN segment of {@code s} holds its payloads on the heap. */
  private static List<Boolean> payloadsOnHeap(Shard s) {
    List<Boolean> out = new ArrayList<>();
    for (Segment seg : s.snapshot().segments()) {
      if (seg instanceof DiskAnnSegment d) {
        out.add(d.payloadsOnHeap());
      }
    }
    return out;
  }

  /**
   * Payloads on the heap (Qdrant's {@code on_disk_payload: false}) apply to the segments opened
   * after the switch: sealed, merged, and all of them after a reopen, with the same answers.
   */
  @Test
  void payloadsOnTheHeapApplyToSegmentsSealedMergedOrReopenedAfterTheSwitch() throws Exception {
    Random r = random();
    Distance d = Distance.COSINE;
    Model m = new Model();
    automatic = false;
    try (Shard s = open(d)) {
      fill(r, d, s, m, 100, 0);
      s.flush();
      settle(s);
      assertThat(payloadsOnHeap(s)).isNotEmpty().containsOnly(false);
      s.setPayloadsOnHeap(true);
      assertThat(payloadsOnHeap(s)).as("open segments keep theirs").containsOnly(false);
      fill(r, d, s, m, 100, 0.2);
      s.flush();
      settle(s);
      assertThat(payloadsOnHeap(s)).as("sealed after the switch").contains(true, false);
      assertHolds(s, d, m);
      s.compact(true).get(60, TimeUnit.SECONDS);
      settle(s);
      assertThat(payloadsOnHeap(s)).as("merged after the switch").isNotEmpty().containsOnly(true);
      assertHolds(s, d, m);
      s.setPayloadsOnHeap(false);
    }
    try (Shard s =
        Shard.open(
            tmp.resolve("shard"),
            0,
            DIM,
            d,
            IndexParams.DEFAULT,
            new Shard.Options(
                sealThreshold(),
                Wal.Options.defaults().withSegmentBytes(32 << 10),
                io,
                builds,
                64,
                compaction()),
            true)) {
      assertThat(payloadsOnHeap(s)).as("reopened").isNotEmpty().containsOnly(true);
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 10);
    }
    try (Shard s = open(d)) {
      assertThat(payloadsOnHeap(s)).as("reopened mapped").isNotEmpty().containsOnly(false);
      assertHolds(s, d, m);
    }
  }

  private static List<SealedSegment.GraphBuild> graphBuilds(Shard s) {
    List<SealedSegment.GraphBuild> out = new ArrayList<>();
    for (SealedSegment seg : s.snapshot().sealed()) {
      out.add(seg.graphBuild());
    }
    return out;
  }

  /**
   * A change of the graph settings (a collection update of m and ef_construct) rebuilds in the
   * background every sealed segment built with other ones, segments written before the build file
   * existed included once the settings that built them are recorded; the segments sealed from then
   * on take the new settings, the answers stay, and a reopen with them has nothing to rebuild.
   */
  @Test
  void changedGraphSettingsRebuildTheSealedSegments() throws Exception {
    Random r = random();
    Distance d = Distance.COSINE;
    Model m = new Model();
    segmentsPerTier = 10;
    SealedSegment.GraphBuild old =
        new SealedSegment.GraphBuild(
            IndexParams.DEFAULT.maxDegree(), IndexParams.DEFAULT.buildSearchList());
    try (Shard s = open(d)) {
      for (int i = 0; i < 3; i++) {
        fill(r, d, s, m, 70, 0);
        s.flush();
        settle(s);
      }
      assertThat(graphBuilds(s)).isNotEmpty().containsOnly(old);
    }
    // segments written before their build was recorded: the graph file's degree, list unknown
    try (Stream<Path> dirs = Files.list(tmp.resolve("shard").resolve("segments"))) {
      for (Path dir : dirs.toList()) {
        Files.delete(dir.resolve("graph-build.fvs"));
      }
    }
    IndexParams next = new IndexParams(IndexParams.DISKANN, 24, 40, 1.2f, 0);
    SealedSegment.GraphBuild nextBuild = new SealedSegment.GraphBuild(24, 40);
    try (Shard s = open(d)) {
      settle(s);
      long before = s.compactionsDone();
      assertThat(graphBuilds(s))
          .containsOnly(new SealedSegment.GraphBuild(IndexParams.DEFAULT.maxDegree(), 0));
      s.recordGraphBuilds();
      assertThat(graphBuilds(s)).as("recorded before the change").containsOnly(old);
      int sealed = graphBuilds(s).size();
      s.graphParams(next);
      settle(s);
      assertThat(graphBuilds(s)).as("rebuilt").containsOnly(nextBuild);
      assertThat(s.compactionsDone() - before).as("one rebuild per segment").isEqualTo(sealed);
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 10);
      fill(r, d, s, m, 70, 0.3);
      s.flush();
      settle(s);
      assertThat(graphBuilds(s)).as("sealed after the change").containsOnly(nextBuild);
    }
    try (Shard s =
        Shard.open(
            tmp.resolve("shard"),
            0,
            DIM,
            d,
            next,
            new Shard.Options(
                sealThreshold(),
                Wal.Options.defaults().withSegmentBytes(32 << 10),
                io,
                builds,
                64,
                compaction()))) {
      settle(s);
      assertThat(s.compactionsDone()).as("nothing left to rebuild").isZero();
      assertThat(graphBuilds(s)).containsOnly(nextBuild);
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 10);
    }
  }

  @Test
  void mergesSmallSegmentsAndRewritesDeletedOnes() throws Exception {
    Random r = random();
    Distance d = Distance.EUCLID;
    Model m = new Model();
    Path dir = tmp.resolve("shard");
    try (Shard s = open(d)) {
      for (int i = 0; i < 4; i++) {
        fill(r, d, s, m, 25, 0);
        s.flush(); // four small segments
        settle(s);
      }
      settle(s);
      assertThat(s.compactionsDone()).as("small segments were merged").isGreaterThan(0);
      assertThat(diskSegments(s)).isLessThan(4);
      assertHolds(s, d, m);
      // Delete 40% of one segment's points: the threshold (0.2) triggers a rewrite.
      long before = s.compactionsDone();
      List<PointId> gone = new ArrayList<>();
      for (PointId id : m.sortedIds()) {
        if (r.nextInt(10) < 4) {
          gone.add(id);
        }
      }
      s.awaitDurable(s.delete(gone));
      m.delete(gone);
      settle(s);
      assertThat(s.compactionsDone()).as("rewrite after deletes").isGreaterThan(before);
      for (Segment seg : s.snapshot().segments()) {
        if (seg instanceof DiskAnnSegment) {
          assertThat(seg.size() - seg.liveCount()).as("deleted points dropped").isZero();
        }
      }
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 10);
    }
    assertNoStrayDirectories(dir);
    try (Shard s = open(d)) {
      assertHolds(s, d, m);
    }
  }

  /**
   * What a compaction holds while it runs: its source segments, readable until it ends although a
   * newer snapshot has replaced them, and not the growing or frozen segments of the snapshot it was
   * planned from, which would stay on the heap for the whole merge.
   */
  @Test
  void aCompactionsHoldKeepsItsSourcesAndNoSegmentInMemory() throws Exception {
    Random r = random();
    Distance d = Distance.EUCLID;
    Model m = new Model();
    automatic = false;
    try (Shard s = open(d)) {
      for (int i = 0; i < 3; i++) {
        fill(r, d, s, m, 25, 0);
        s.flush();
        settle(s);
      }
      fill(r, d, s, m, 10, 0); // a growing segment with points
      List<SealedSegment> sources = s.snapshot().sealed();
      assertThat(sources).hasSizeGreaterThan(1);
      assertThat(s.snapshot().memory()).isNotEmpty();
      Snapshot held = s.segmentSet().hold(sources);
      assertThat(held.memory()).isEmpty();
      assertThat(held.segments()).containsExactlyElementsOf(sources);
      s.compact(true).get(60, TimeUnit.SECONDS);
      settle(s);
      assertThat(s.snapshot().sealed()).doesNotContainAnyElementsOf(sources);
      for (SealedSegment old : sources) {
        assertThat(old.directory()).as("held: not deleted").isDirectory();
        assertThat(old.vectorAt(0)).hasSize(DIM);
      }
      held.release();
      for (SealedSegment old : sources) {
        assertThat(old.directory()).as("released: deleted").doesNotExist();
      }
      assertHolds(s, d, m);
    }
  }

  /**
   * Twelve full seals end as a few tiered segments (three a tier here: 60, 180, 540 points), not
   * twelve, and every acknowledged point keeps its vector and payload.
   */
  @Test
  void twelveSealsMergeIntoAFewTieredSegments() throws Exception {
    Random r = random();
    Distance d = Distance.COSINE;
    Model m = new Model();
    segmentsPerTier = 3;
    Path dir = tmp.resolve("shard");
    try (Shard s = open(d)) {
      for (int i = 0; i < 12; i++) {
        fill(r, d, s, m, sealThreshold(), 0);
        settle(s);
      }
      settle(s);
      assertThat(s.compactionsDone()).as("merges ran").isGreaterThan(0);
      assertThat(diskSegments(s)).as("segments after twelve seals").isBetween(1, 7);
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 10);
    }
    assertNoStrayDirectories(dir);
    try (Shard s = open(d)) {
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 5);
    }
  }

  /**
   * A segment target given with the options holds from the open on: the merge a shard may start
   * when it opens keeps the target's segments rather than merging them by tiers.
   */
  @Test
  void aSegmentTargetHoldsFromTheOpenOn() throws Exception {
    Random r = random();
    Distance d = Distance.COSINE;
    Model m = new Model();
    for (int round = 0; round < 2; round++) {
      try (Shard s = openWithTarget(d, 2)) {
        if (round == 0) {
          // small segments the tiers alone would merge into one, as they do without a target
          for (int points : new int[] {30, 20, 10}) {
            fill(r, d, s, m, points, 0);
            s.flush();
            settle(s);
          }
        }
        settle(s);
        assertThat(diskSegments(s)).as("segments, round %d", round).isEqualTo(2);
        assertHolds(s, d, m);
      }
    }
  }

  private Shard openWithTarget(Distance d, int target) {
    return Shard.open(
        tmp.resolve("shard"),
        0,
        DIM,
        d,
        IndexParams.DEFAULT,
        new Shard.Options(
                sealThreshold(), Wal.Options.defaults(), FileIO.DEFAULT, builds, 64, compaction())
            .withTargetSegments(target));
  }

  /** A compaction the last deletes called for before a restart resumes at open, not at a write. */
  @Test
  void aCompactionDueWhenTheShardStoppedRunsWhenItOpens() throws Exception {
    Random r = random();
    Distance d = Distance.DOT;
    Model m = new Model();
    automatic = false;
    try (Shard s = open(d)) {
      fill(r, d, s, m, 50, 0);
      s.flush();
      settle(s);
      deleteAThird(r, s, m); // past the 0.2 threshold, but nothing compacts by itself
      fill(r, d, s, m, 5, 0);
      s.flush(); // a checkpoint after the deletes: the reopen does not replay them
      settle(s);
      assertThat(s.compactionsDone()).isZero();
    }
    automatic = true;
    try (Shard s = open(d)) {
      Await.until(Duration.ofSeconds(60), "a compaction after open", () -> s.compactionsDone() > 0);
      settle(s);
      assertThat(s.compactionsDone()).as("compacted after open, with no write").isPositive();
      for (Segment seg : s.snapshot().segments()) {
        if (seg instanceof DiskAnnSegment) {
          assertThat(seg.size() - seg.liveCount()).as("deleted points dropped").isZero();
        }
      }
      assertHolds(s, d, m);
    }
  }

  @Test
  void aDeletedIdNeverComesBackAfterCompactionAndRestart() throws Exception {
    Random r = random();
    Distance d = Distance.COSINE;
    Model m = new Model();
    Path dir = tmp.resolve("shard");
    Set<PointId> deleted = new HashSet<>();
    for (int round = 0; round < 3; round++) {
      try (Shard s = open(d)) {
        fill(r, d, s, m, 80, 0.2);
        s.flush();
        settle(s);
        deleted.addAll(deleteAThird(r, s, m));
        // Overwrites of surviving ids leave dead old versions in sealed segments too.
        fill(r, d, s, m, 30, 1.0);
        s.wal().syncAll();
        s.compact(true).get(60, TimeUnit.SECONDS);
        settle(s);
        s.compact(true).get(60, TimeUnit.SECONDS);
        for (PointId id : deleted) {
          if (!m.vectors.containsKey(id)) {
            assertThat(s.get(id, true, true)).as("deleted %s after compaction", id).isNull();
          }
        }
        assertHolds(s, d, m);
      }
      assertNoStrayDirectories(dir);
      try (Shard s = open(d)) {
        for (PointId id : deleted) {
          if (!m.vectors.containsKey(id)) {
            assertThat(s.get(id, true, true)).as("deleted %s after restart", id).isNull();
          }
        }
        assertHolds(s, d, m);
        assertSearchMatchesBruteForce(r, s, d, m, 5);
      }
    }
  }

  /**
   * The model test: random operations against the shard and a map, every read compared. Background
   * builds and compactions run at their own pace, so reads race with installs as in production.
   */
  @Test
  void randomOperationsMatchTheModel() throws Exception {
    Random r = random();
    Distance[] graphable = {Distance.COSINE, Distance.DOT, Distance.EUCLID};
    Distance d = graphable[r.nextInt(graphable.length)];
    Model m = new Model();
    int steps = TestSeeds.atLeast(r, 300);
    Shard s = open(d);
    try {
      for (int step = 0; step < steps; step++) {
        int op = r.nextInt(100);
        String what;
        if (op < 40) {
          what = "upsert";
          fill(r, d, s, m, 1 + r.nextInt(40), 0.3);
        } else if (op < 55) {
          what = "delete";
          if (!m.vectors.isEmpty()) {
            List<PointId> gone = new ArrayList<>();
            int n = 1 + r.nextInt(Math.max(1, m.vectors.size() / 4));
            for (int i = 0; i < n; i++) {
              gone.add(m.anyId(r));
            }
            s.delete(gone);
            m.delete(gone);
          }
        } else if (op < 65) {
          what = "payload";
          if (!m.vectors.isEmpty()) {
            List<PointId> ids = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(5); i++) {
              ids.add(m.anyId(r));
            }
            byte[] p = ("{\"step\":" + step + "}").getBytes(StandardCharsets.UTF_8);
            s.updatePayloads(ids, old -> p);
            for (PointId id : ids) {
              m.payloads.put(id, p);
            }
          }
        } else if (op < 75) {
          what = "flush";
          s.flush();
        } else if (op < 85) {
          what = "compact";
          s.compact(r.nextBoolean()).get(60, TimeUnit.SECONDS);
        } else if (op < 92) {
          what = "settle";
          settle(s);
        } else {
          what = "reopen";
          // Background jobs write segment files outside the FileIO seam until they finish; a
          // reopen deletes unlisted directories, so let them finish first (a server restarts as a
          // new process instead).
          settle(s);
          s.close();
          s = open(d);
        }
        assertThat(s.count())
            .as("count after %s at step %d", what, step)
            .isEqualTo(m.vectors.size());
        if (step % 10 == 0 || what.equals("reopen") || what.equals("compact")) {
          assertHolds(s, d, m);
          assertSearchMatchesBruteForce(r, s, d, m, 3);
        }
      }
      settle(s);
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 10);
    } finally {
      s.close();
    }
    assertNoStrayDirectories(tmp.resolve("shard"));
  }

  /**
   * A disk that fills up while a compaction commits (the manifest cannot be replaced): the new
   * segment is already published and serving, so it must stay open and correct; the data stays
   * durable (old manifest + WAL), and after a restart with a working disk nothing is lost and no
   * stray directory is left.
   */
  @Test
  void aFailedCheckpointAfterACompactionKeepsTheInstalledSegmentServing() throws Exception {
    Random r = random();
    Distance d = Distance.EUCLID;
    Model m = new Model();
    FailingManifestFileIO fio = new FailingManifestFileIO();
    try (Shard s = openWith(fio, d)) {
      for (int i = 0; i < 3; i++) {
        fill(r, d, s, m, 30, 0);
        s.flush();
        settle(s);
      }
      deleteAThird(r, s, m);
      long before = s.compactionsDone();
      fio.failManifest = true;
      s.compact(true).get(60, TimeUnit.SECONDS);
      settle(s);
      assertThat(s.compactionsDone()).as("compaction installed").isGreaterThan(before);
      assertThat(s.checkpointFailure()).as("checkpoint failure recorded").contains("disk full");
      // Every read goes through the installed segment: nothing closed under it.
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 5);
      fio.failManifest = false;
    }
    try (Shard s = openWith(fio, d)) {
      assertHolds(s, d, m);
    }
    assertNoStrayDirectories(tmp.resolve("shard"));
  }

  /** Fails every replacement of the shard manifest while {@code failManifest} is set. */
  static final class FailingManifestFileIO extends CrashSimulatingFileIO {
    volatile boolean failManifest;

    @Override
    public void atomicMove(Path source, Path target) throws IOException {
      if (failManifest && target.getFileName().toString().equals(ShardManifest.FILE)) {
        throw new IOException("No space left on device (disk full, simulated)");
      }
      super.atomicMove(source, target);
    }
  }

  /**
   * A {@link CrashSimulatingFileIO} that pauses the compaction thread (or another named one) before
   * its {@code n}-th file operation, so a test can crash at that point; calls from other threads
   * pass.
   */
  static final class PausingFileIO extends CrashSimulatingFileIO {
    final CountDownLatch paused = new CountDownLatch(1);
    final CountDownLatch resume = new CountDownLatch(1);
    final AtomicInteger calls = new AtomicInteger();
    volatile int pauseAt = Integer.MAX_VALUE;
    private final String thread;

    PausingFileIO() {
      this("test-compaction");
    }

    /** Pauses the threads whose name starts with {@code thread}. */
    PausingFileIO(String thread) {
      this.thread = thread;
    }

    private void maybePause() {
      if (!Thread.currentThread().getName().startsWith(thread)) {
        return;
      }
      if (calls.incrementAndGet() == pauseAt) {
        paused.countDown();
        try {
          resume.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public FileChannel open(Path path, OpenOption... options) throws IOException {
      maybePause();
      return super.open(path, options);
    }

    @Override
    public void writeFully(FileChannel channel, ByteBuffer buffer) throws IOException {
      maybePause();
      super.writeFully(channel, buffer);
    }

    @Override
    public void force(FileChannel channel, boolean metadata) throws IOException {
      maybePause();
      super.force(channel, metadata);
    }

    @Override
    public void atomicMove(Path source, Path target) throws IOException {
      maybePause();
      super.atomicMove(source, target);
    }

    @Override
    public void deleteIfExists(Path path) throws IOException {
      maybePause();
      super.deleteIfExists(path);
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
      maybePause();
      super.createDirectories(dir);
    }

    @Override
    public void fsyncDirectory(Path dir) throws IOException {
      maybePause();
      super.fsyncDirectory(dir);
    }
  }

  private Shard openWith(FileIO fileIo, Distance d) {
    return Shard.open(
        tmp.resolve("shard"),
        0,
        DIM,
        d,
        IndexParams.DEFAULT,
        new Shard.Options(
            sealThreshold(),
            Wal.Options.defaults().withSegmentBytes(32 << 10),
            fileIo,
            builds,
            64,
            compaction()));
  }

  /**
   * Power loss at a random file operation of a compaction (build files, rename, deletion bitmaps,
   * manifest, deletion of the replaced segments): after reopening, every acknowledged write is
   * there, deleted ids stay deleted, and the segment directories are exactly the manifest's.
   */
  @Test
  void aCrashAtAnyPointOfACompactionLosesNothing() throws Exception {
    Random r = random();
    Distance d = Distance.EUCLID;
    int rounds = TestSeeds.atLeast(r, 12);
    Model m = new Model();
    int crashed = 0;
    for (int round = 0; round < rounds; round++) {
      PausingFileIO pio = new PausingFileIO();
      Shard s = openWith(pio, d);
      boolean closed = false;
      try {
        // Several small sealed segments with deletions: something to merge and rewrite.
        for (int i = 0; i < 3; i++) {
          fill(r, d, s, m, 20 + r.nextInt(30), 0.2);
          s.flush();
        }
        settle(s);
        List<PointId> gone = new ArrayList<>();
        for (PointId id : m.sortedIds()) {
          if (r.nextInt(5) == 0) {
            gone.add(id);
          }
        }
        s.delete(gone);
        m.delete(gone);
        s.wal().syncAll();
        settle(s);
        // Acknowledged after the last checkpoint: only the WAL has it when the crash comes.
        List<Point> late = batch(r, d, m, 3, 0.5);
        s.awaitDurable(s.upsert(late));
        s.wal().syncAll();
        m.upsert(late);
        pio.calls.set(0);
        pio.pauseAt = 1 + r.nextInt(60);
        CompletableFuture<Integer> f = s.compact(true);
        boolean hit = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!hit && !f.isDone() && System.nanoTime() < deadline) {
          hit = pio.paused.await(5, TimeUnit.MILLISECONDS);
        }
        if (hit) {
          // The compaction thread may hold the shard's write lock here: no writes from this thread.
          pio.crash(r);
          crashed++;
          pio.resume.countDown();
          try {
            f.get(60, TimeUnit.SECONDS);
          } catch (Exception expected) {
            // the dead file system fails the compaction
          }
          try {
            s.close();
          } catch (IOException | RuntimeException expected) {
            // closing over a crashed file system fails
          }
          closed = true;
        } else {
          f.get(60, TimeUnit.SECONDS);
        }
      } finally {
        pio.resume.countDown();
        if (!closed) {
          s.close();
        }
      }
      assertNoStrayDirectoriesAfterOpen(d, m, round);
    }
    System.out.println("[flashvec] compaction crash rounds=" + rounds + " crashed=" + crashed);
    assertThat(crashed).as("some rounds crashed inside a compaction").isGreaterThan(0);
  }

  private void assertNoStrayDirectoriesAfterOpen(Distance d, Model m, int round)
      throws IOException {
    CrashSimulatingFileIO fresh = new CrashSimulatingFileIO();
    io = fresh;
    try (Shard s = openWith(fresh, d)) {
      assertThat(s.count()).as("count after crash round %d", round).isEqualTo(m.vectors.size());
      assertHolds(s, d, m);
    }
    fresh.assertNoOpenChannels();
    assertNoStrayDirectories(tmp.resolve("shard"));
  }
}
