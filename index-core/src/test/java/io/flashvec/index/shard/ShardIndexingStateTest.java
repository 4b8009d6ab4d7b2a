package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.IndexingState;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.TestVectors;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Shard#indexingState()}: which live points an index answers for and what the shard still
 * has to index, for growing segments with and without a live graph, sealed segments and flat
 * shards.
 */
class ShardIndexingStateTest {

  static final int DIM = 16;

  @TempDir Path tmp;
  final ExecutorService builds = Executors.newSingleThreadExecutor();
  final ExecutorService live = Executors.newSingleThreadExecutor();

  /** Live-graph tasks held until {@link #release}. */
  final ConcurrentLinkedQueue<Runnable> held = new ConcurrentLinkedQueue<>();

  volatile boolean open;

  @AfterEach
  void shutdown() {
    builds.shutdownNow();
    live.shutdownNow();
  }

  private final Executor gate =
      task -> {
        if (open) {
          live.execute(task);
        } else {
          held.add(task);
        }
      };

  private void release() {
    open = true;
    for (Runnable r; (r = held.poll()) != null; ) {
      live.execute(r);
    }
  }

  private Shard open(String type, int sealThreshold, boolean liveGraph) {
    Shard.Options o =
        new Shard.Options(sealThreshold, Wal.Options.defaults(), FileIO.DEFAULT, builds, 64)
            .withLiveIndexer(liveGraph ? new LiveIndexer(gate, gate) : null);
    return Shard.open(
        tmp.resolve(type + sealThreshold + liveGraph),
        0,
        DIM,
        Distance.COSINE,
        new IndexParams(type, 16, 48, 1.2f, 0),
        o);
  }

  private static List<Point> points(Random r, int from, int to) {
    List<Point> pts = new ArrayList<>();
    for (int i = from; i < to; i++) {
      pts.add(
          new Point(PointId.of(i), Distance.COSINE.prepare(TestVectors.gaussian(r, DIM)), null));
    }
    return pts;
  }

  private static List<PointId> ids(int from, int to) {
    List<PointId> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(PointId.of(i));
    }
    return out;
  }

  @Test
  void aLiveGraphsBacklogIsUnindexedUntilTheIndexerCatchesUp() throws Exception {
    Random r = TestSeeds.random("ShardIndexingStateTest.backlog");
    try (Shard s = open(IndexParams.DISKANN, 100_000, true)) {
      s.awaitDurable(s.upsert(points(r, 0, 2000)));
      IndexingState before = s.indexingState();
      assertThat(before.indexed()).isZero();
      assertThat(before.backlog()).isEqualTo(2000);
      assertThat(before.caughtUp()).isFalse();

      release();
      Await.until(
          Duration.ofSeconds(60), "live graph caught up", () -> s.indexingState().caughtUp());
      assertThat(s.indexingState().indexed()).isEqualTo(2000);

      s.delete(ids(0, 300));
      IndexingState after = s.indexingState();
      assertThat(after.indexed()).as("deleted points are not indexed points").isEqualTo(1700);
      assertThat(after.backlog()).isZero();
    }
  }

  @Test
  void aSegmentSealedWithItsLiveGraphBehindCountsAsIndexedOnceItsGraphIsBuilt() throws Exception {
    Random r = TestSeeds.random("ShardIndexingStateTest.sealBehind");
    ConcurrentLinkedQueue<Runnable> heldBuilds = new ConcurrentLinkedQueue<>();
    Shard.Options o =
        new Shard.Options(1000, Wal.Options.defaults(), FileIO.DEFAULT, heldBuilds::add, 64)
            .withLiveIndexer(new LiveIndexer(gate, gate));
    try (Shard s =
        Shard.open(
            tmp.resolve("sealBehind"),
            0,
            DIM,
            Distance.COSINE,
            new IndexParams(IndexParams.DISKANN, 16, 48, 1.2f, 0),
            o)) {
      s.awaitDurable(s.upsert(points(r, 0, 1000)));
      s.awaitDurable(s.upsert(points(r, 1000, 1500))); // seals the first 1,000 before it
      IndexingState frozen = s.indexingState();
      assertThat(frozen.frozenPending()).as("%s", frozen).isEqualTo(1);
      assertThat(frozen.indexed()).as("no graph has a point yet").isZero();
      assertThat(frozen.backlog()).isEqualTo(1500);
      assertThat(frozen.caughtUp()).isFalse();

      for (Runnable b; (b = heldBuilds.poll()) != null; ) {
        builds.execute(b); // the seal finishes the frozen segment's graph and installs it
      }
      Await.until(
          Duration.ofSeconds(60),
          "the frozen segment sealed",
          () -> s.indexingState().frozenPending() == 0 && !s.indexing());
      assertThat(s.buildFailure()).isNull();
      IndexingState sealed = s.indexingState();
      assertThat(sealed.indexed()).as("the sealed graph holds all 1,000").isEqualTo(1000);
      assertThat(sealed.backlog()).as("the growing segment's live graph is held").isEqualTo(500);
      assertThat(sealed.caughtUp()).isFalse();

      release();
      Await.until(
          Duration.ofSeconds(60), "live graph caught up", () -> s.indexingState().caughtUp());
      assertThat(s.indexingState().indexed()).isEqualTo(1500);
    }
  }

  @Test
  void aSegmentBelowTheGraphStartIsIndexedByItsExactScan() throws Exception {
    Random r = TestSeeds.random("ShardIndexingStateTest.tiny");
    try (Shard s = open(IndexParams.DISKANN, 100_000, true)) {
      s.awaitDurable(s.upsert(points(r, 0, 100)));
      IndexingState st = s.indexingState();
      assertThat(held).as("no graph insert is queued below the start size").isEmpty();
      assertThat(st.indexed()).isEqualTo(100);
      assertThat(st.caughtUp()).isTrue();
    }
  }

  @Test
  void deferredBuildsCountASmallGrowingSegmentAsUnindexed() throws Exception {
    Random r = TestSeeds.random("ShardIndexingStateTest.deferredTiny");
    try (Shard s = open(IndexParams.DISKANN, 100_000, true)) {
      s.setDeferBuilds(true); // indexing_threshold 0
      s.awaitDurable(s.upsert(points(r, 0, 100)));
      assertThat(s.indexingState().indexed()).isZero();
      s.setDeferBuilds(false);
      assertThat(s.indexingState().indexed()).isEqualTo(100);
    }
  }

  @Test
  void withoutALiveGraphGrowingPointsAreNeitherIndexedNorBacklogAndSealedOnesAreIndexed()
      throws Exception {
    Random r = TestSeeds.random("ShardIndexingStateTest.sealed");
    try (Shard s = open(IndexParams.DISKANN, 1000, false)) {
      for (int from = 0; from < 1500; from += 250) {
        s.awaitDurable(s.upsert(points(r, from, from + 250))); // a batch seals at its end
      }
      Await.until(
          Duration.ofSeconds(60),
          "the sealed segments built",
          () ->
              s.snapshot().segments().stream().anyMatch(Segment::onDisk)
                  && s.indexingState().frozenPending() == 0
                  && !s.indexing());
      assertThat(s.buildFailure()).isNull();
      IndexingState st = s.indexingState();
      long sealedLive = 0;
      for (Segment seg : s.snapshot().segments()) {
        if (seg.onDisk()) {
          sealedLive += seg.liveCount();
        }
      }
      assertThat(sealedLive).isPositive().isLessThan(1500);
      assertThat(st.indexed()).isEqualTo(sealedLive);
      assertThat(st.backlog()).as("the growing points wait for the seal threshold").isZero();
      assertThat(st.caughtUp()).isTrue();
    }
  }

  @Test
  void everyPointOfAFlatShardIsIndexed() throws Exception {
    Random r = TestSeeds.random("ShardIndexingStateTest.flat");
    try (Shard s = open(IndexParams.FLAT, 100_000, true)) {
      s.awaitDurable(s.upsert(points(r, 0, 700)));
      IndexingState st = s.indexingState();
      assertThat(st.indexed()).isEqualTo(700);
      assertThat(st.caughtUp()).isTrue();
    }
  }

  /** Compaction passes held until {@link #releaseCompactions}. */
  final ConcurrentLinkedQueue<Runnable> heldCompactions = new ConcurrentLinkedQueue<>();

  final ExecutorService compactions = Executors.newSingleThreadExecutor();

  volatile boolean compactionsOpen;

  private final Executor compactionGate =
      task -> {
        if (compactionsOpen) {
          compactions.execute(task);
        } else {
          heldCompactions.add(task);
        }
      };

  private void releaseCompactions() {
    compactionsOpen = true;
    for (Runnable r; (r = heldCompactions.poll()) != null; ) {
      compactions.execute(r);
    }
  }

  @AfterEach
  void stopCompactions() {
    compactions.shutdownNow();
  }

  /** A shard without live graphs that seals every 100 points and merges two per tier. */
  private Shard openMerging(String name, boolean automatic) {
    Shard.Options o =
        new Shard.Options(100, Wal.Options.defaults(), FileIO.DEFAULT, builds, 64)
            .withCompaction(
                new Shard.Compaction(
                    compactionGate,
                    null,
                    0.2,
                    2,
                    Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS,
                    automatic));
    return Shard.open(tmp.resolve(name), 0, DIM, Distance.COSINE, IndexParams.DEFAULT, o);
  }

  /** Seals five 100-point segments and waits for their builds. */
  private static void sealFive(Shard s, Random r) throws Exception {
    for (int from = 0; from < 500; from += 100) {
      s.awaitDurable(s.upsert(points(r, from, from + 100)));
    }
    s.flush();
    Await.until(
        Duration.ofSeconds(60),
        "the sealed segments built",
        () -> s.indexingState().frozenPending() == 0 && !s.indexing());
    assertThat(s.buildFailure()).isNull();
  }

  @Test
  void aShardIsNotCaughtUpWhileAMergeIsPlannedOrRunningAndIsOnceItIsInstalled() throws Exception {
    Random r = TestSeeds.random("ShardIndexingStateTest.merge");
    try (Shard s = openMerging("merge", true)) {
      sealFive(s, r);
      IndexingState planned = s.indexingState();
      assertThat(planned.indexed()).as("every point is in a sealed graph").isEqualTo(500);
      assertThat(planned.backlog()).isZero();
      assertThat(planned.mergesPlanned()).as("%s", planned).isEqualTo(1);
      assertThat(planned.caughtUp()).as("a planned merge is pending work").isFalse();

      releaseCompactions();
      Await.until(
          Duration.ofSeconds(60),
          "the merges installed",
          () -> s.compactionsDone() > 0 && s.indexingState().caughtUp());
      assertThat(s.compactionFailure()).isNull();
      IndexingState done = s.indexingState();
      assertThat(done.mergesPlanned()).isZero();
      assertThat(done.compactionsRunning()).isZero();
      assertThat(done.indexed()).isEqualTo(500);
      assertThat(s.snapshot().sealed().size()).as("merged").isLessThan(5);
    }
  }

  @Test
  void aMergeNoPassWillRunIsNotPending() throws Exception {
    Random r = TestSeeds.random("ShardIndexingStateTest.manual");
    try (Shard s = openMerging("manual", false)) {
      sealFive(s, r);
      IndexingState st = s.indexingState();
      assertThat(st.mergesPlanned()).as("compaction is not automatic").isZero();
      assertThat(st.compactionsRunning()).isZero();
      assertThat(st.caughtUp()).isTrue();
    }
  }

  @Test
  void statesSumOverShards() {
    IndexingState a = new IndexingState(5, 2, 1, 0, 1, 0, false);
    IndexingState b = new IndexingState(7, 0, 0, 1, 0, 1, true);
    assertThat(a.plus(b)).isEqualTo(new IndexingState(12, 2, 1, 1, 1, 1, true));
    assertThat(IndexingState.EMPTY.caughtUp()).isTrue();
    assertThat(b.caughtUp()).isFalse();
    assertThat(new IndexingState(3, 0, 0, 0, 0, 1, false).caughtUp())
        .as("a planned merge alone")
        .isFalse();
  }
}
