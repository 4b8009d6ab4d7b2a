package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.index.diskann.DiskAnnSegment;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.testing.Await;
import io.flashvec.testing.SuppressForbidden;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Live graphs in a shard (ADR 0011): the indexer keeps the growing segment's graph current beside
 * writes and searches, a seal writes that graph instead of rebuilding it, and everything the shard
 * promised before (read-your-writes, deletes, restart) still holds.
 */
class ShardLiveGraphTest {

  static final int DIM = 24;
  static final int K = 10;

  @TempDir Path tmp;
  final ExecutorService builds = Executors.newSingleThreadExecutor();
  final ExecutorService live = Executors.newSingleThreadExecutor();

  @AfterEach
  void shutdown() {
    builds.shutdownNow();
    live.shutdownNow();
  }

  private Shard open(Path dir, int sealThreshold) {
    return open(dir, sealThreshold, true);
  }

  /** An executor for a lane that runs its tasks on {@link #live} and counts them in {@code c}. */
  private Executor counting(AtomicInteger c) {
    return task -> {
      c.incrementAndGet();
      live.execute(task);
    };
  }

  /** A shard with a seal threshold of 100,000 and the live indexer {@code lanes}. */
  private Shard open(Path dir, LiveIndexer lanes) {
    Shard.Options o =
        new Shard.Options(100_000, Wal.Options.defaults(), FileIO.DEFAULT, builds, 64)
            .withLiveIndexer(lanes);
    return Shard.open(
        dir, 0, DIM, Distance.COSINE, new IndexParams(IndexParams.DISKANN, 24, 64, 1.2f, 0), o);
  }

  private Shard open(Path dir, int sealThreshold, boolean liveGraph) {
    Shard.Options o =
        new Shard.Options(sealThreshold, Wal.Options.defaults(), FileIO.DEFAULT, builds, 64)
            .withLiveIndexer(liveGraph ? live : null);
    return Shard.open(
        dir, 0, DIM, Distance.COSINE, new IndexParams(IndexParams.DISKANN, 24, 64, 1.2f, 0), o);
  }

  private static void awaitLiveIndexed(Shard s) {
    Await.until(
        Duration.ofSeconds(60),
        "the live indexer caught up",
        () -> {
          for (Segment seg : s.snapshot().segments()) {
            if (seg instanceof GrowingSegment g && g.unindexed() > 0) {
              return false;
            }
          }
          return true;
        });
  }

  private static void awaitBuilt(Shard s) {
    Await.until(Duration.ofSeconds(60), "builds finished", () -> !s.indexing());
    assertThat(s.buildFailure()).isNull();
  }

  private static List<Point> points(float[][] data, int from, int to) {
    List<Point> pts = new ArrayList<>();
    for (int i = from; i < to; i++) {
      pts.add(new Point(PointId.of(i), Distance.COSINE.prepare(data[i]), null));
    }
    return pts;
  }

  private static double recall(Shard s, Random r, float[][] data, Set<Integer> deleted) {
    int hits = 0;
    int queries = 40;
    for (int q = 0; q < queries; q++) {
      float[] query = Distance.COSINE.prepare(TestVectors.latent(r, 1, DIM)[0]);
      List<Integer> ids = new ArrayList<>();
      for (int i = 0; i < data.length; i++) {
        if (!deleted.contains(i)) {
          ids.add(i);
        }
      }
      ids.sort(
          (a, b) ->
              Float.compare(
                  Distance.COSINE.score(query, Distance.COSINE.prepare(data[b]), 0),
                  Distance.COSINE.score(query, Distance.COSINE.prepare(data[a]), 0)));
      Set<Integer> truth = new HashSet<>(ids.subList(0, K));
      for (Record rec : Searches.search(s, query, K, SearchParams.DEFAULT, null, false, false)) {
        assertThat(deleted).doesNotContain((int) rec.id().number());
        if (truth.contains((int) rec.id().number())) {
          hits++;
        }
      }
    }
    return hits / (double) (queries * K);
  }

  @Test
  void growingSegmentIsSearchedThroughItsGraphAndSealedWithoutARebuild() throws Exception {
    Random r = TestSeeds.random("shard-live-graph");
    float[][] data = TestVectors.latent(r, 6000, DIM);
    Path dir = tmp.resolve("shard");
    Set<Integer> deleted = new HashSet<>();
    try (Shard s = open(dir, 100_000)) {
      for (int from = 0; from < 4000; from += 250) {
        s.awaitDurable(s.upsert(points(data, from, from + 250)));
      }
      awaitLiveIndexed(s);
      SearchStats st = new SearchStats();
      Searches.search(
          s, Distance.COSINE.prepare(data[17]), K, SearchParams.DEFAULT, null, false, false, st);
      assertThat(st.expanded).as("the growing segment's graph was walked").isPositive();
      assertThat(st.distanceComputations).isLessThan(4000);
      assertThat(recall(s, r, java.util.Arrays.copyOf(data, 4000), deleted))
          .isGreaterThanOrEqualTo(0.95);

      for (int i = 0; i < 4000; i += 9) {
        deleted.add(i);
      }
      s.delete(deleted.stream().map(i -> PointId.of(i)).toList());
      s.flush();
      awaitBuilt(s);
      DiskAnnSegment first = onlyDisk(s);
      assertThat(first.size()).as("every ordinal kept, deleted ones marked").isEqualTo(4000);
      assertThat(first.liveCount()).isEqualTo(4000 - deleted.size());

      // A second segment is sealed from its graph with the first segment's PQ codebook.
      s.awaitDurable(s.upsert(points(data, 4000, 6000)));
      s.flush();
      awaitBuilt(s);
    }
    // The same data built by jvector from the live points (no live graphs) is the yardstick.
    long seed = r.nextLong();
    double rebuilt;
    try (Shard s = open(tmp.resolve("rebuilt"), 100_000, false)) {
      s.awaitDurable(s.upsert(points(data, 0, 4000)));
      s.delete(deleted.stream().map(i -> PointId.of(i)).toList());
      s.flush();
      awaitBuilt(s);
      s.awaitDurable(s.upsert(points(data, 4000, 6000)));
      s.flush();
      awaitBuilt(s);
      rebuilt = recall(s, new Random(seed), data, deleted);
    }
    try (Shard s = open(dir, 100_000)) {
      assertThat(s.count()).isEqualTo(6000 - deleted.size());
      double sealed = recall(s, new Random(seed), data, deleted);
      System.out.println(
          "[flashvec] recall@10 sealed from live graphs " + sealed + ", rebuilt " + rebuilt);
      // PQ training (both sides) and jvector's parallel build vary between runs: seen 0.92-0.98.
      assertThat(sealed).isGreaterThanOrEqualTo(Math.min(0.92, rebuilt - 0.03));
    }
  }

  /**
   * A segment sealed from its live graph keeps every ordinal, so it holds the older, deleted
   * versions of a point rewritten while it was growing: the shard keeps no map entry for sealed
   * points, and must find the live version among them, in reads, scrolls and after a reopen.
   */
  @Test
  void rewrittenPointsAreFoundInASegmentSealedWithTheirOlderVersions() throws Exception {
    Random r = TestSeeds.random("shard-live-graph-rewritten");
    float[][] data = TestVectors.latent(r, 1150, DIM);
    Path dir = tmp.resolve("shard");
    int ids = 1000;
    try (Shard s = open(dir, 100_000)) {
      // ids 0-999 at data[id]; then 0-99 again at data[1000 + id]; then 0-49 at data[1100 + id]
      // (13% deleted: sealed from the graph, below the compaction threshold)
      int[][] rounds = {{0, 1000, 0}, {0, 100, 1000}, {0, 50, 1100}};
      for (int[] round : rounds) {
        List<Point> pts = new ArrayList<>();
        for (int i = round[0]; i < round[1]; i++) {
          pts.add(new Point(PointId.of(i), data[round[2] + i], null));
        }
        s.awaitDurable(s.upsert(pts));
      }
      awaitLiveIndexed(s);
      s.flush();
      awaitBuilt(s);
      DiskAnnSegment sealed = onlyDisk(s);
      assertThat(sealed.size()).as("every version kept").isEqualTo(1150);
      assertThat(sealed.liveCount()).isEqualTo(ids);
      assertLatest(s, data, ids);
    }
    try (Shard s = open(dir, 100_000)) {
      assertLatest(s, data, ids);
      // one more version of some: the sealed copy is deleted, the new one found in the tables
      s.awaitDurable(s.upsert(List.of(new Point(PointId.of(7), data[0], null))));
      assertThat(s.get(PointId.of(7), false, true).vector()).isEqualTo(data[0]);
      s.awaitDurable(s.delete(List.of(PointId.of(8))));
      assertThat(s.get(PointId.of(8), false, false)).isNull();
      assertThat(s.scrollIds(PointId.of(6), 4))
          .containsExactly(PointId.of(6), PointId.of(7), PointId.of(9), PointId.of(10));
      assertThat(s.count()).isEqualTo(ids - 1);
    }
  }

  private static void assertLatest(Shard s, float[][] data, int ids) {
    for (int i = 0; i < ids; i++) {
      int latest = i < 50 ? 1100 + i : i < 100 ? 1000 + i : i;
      assertThat(s.get(PointId.of(i), false, true).vector()).as("id %d", i).isEqualTo(data[latest]);
    }
    List<PointId> all = s.scrollIds(null, Integer.MAX_VALUE);
    assertThat(all).hasSize(ids).isSorted();
    assertThat(s.scrollIds(PointId.of(ids - 3), 10))
        .containsExactly(PointId.of(ids - 3), PointId.of(ids - 2), PointId.of(ids - 1));
  }

  /**
   * A graph close behind its writes is indexed on the background lane; one more than {@link
   * Shard#URGENT_BACKLOG} points behind goes to the urgent lane (the server's normal-priority
   * thread) until it is close again, and a background batch that finds itself that far behind hands
   * over at once.
   */
  @Test
  void aGraphFarBehindItsWritesIsIndexedOnTheUrgentLane() throws Exception {
    Random r = TestSeeds.random("shard-live-graph-lanes");
    float[][] data = TestVectors.latent(r, 3000, DIM);
    AtomicInteger background = new AtomicInteger();
    AtomicInteger urgent = new AtomicInteger();
    LiveIndexer lanes = new LiveIndexer(counting(background), counting(urgent));
    try (Shard s = open(tmp.resolve("lanes"), lanes)) {
      // 300 points: past the graph's start, within the urgent backlog
      s.awaitDurable(s.upsert(points(data, 0, 300)));
      awaitLiveIndexed(s);
      assertThat(urgent.get()).isZero();
      assertThat(background.get()).isPositive();
      // 2,000 at once: far behind
      s.awaitDurable(s.upsert(points(data, 300, 2300)));
      awaitLiveIndexed(s);
      assertThat(urgent.get()).as("batches while far behind").isGreaterThanOrEqualTo(3);
      int urgentBefore = urgent.get();
      int backgroundBefore = background.get();
      for (int from = 2300; from < 3000; from += 100) {
        s.awaitDurable(s.upsert(points(data, from, from + 100)));
        awaitLiveIndexed(s);
      }
      assertThat(urgent.get()).as("close behind again").isEqualTo(urgentBefore);
      assertThat(background.get()).isGreaterThan(backgroundBefore);
    }
  }

  private static int unindexed(Shard s) {
    int n = 0;
    for (Segment seg : s.snapshot().segments()) {
      if (seg instanceof GrowingSegment g) {
        n += g.unindexed();
      }
    }
    return n;
  }

  /**
   * While queries are served, an upsert that leaves the growing segment more than {@link
   * Shard#WRITE_BACKLOG} points behind its graph waits for the indexer (every query would scan the
   * backlog exactly); without queries it does not.
   */
  @Test
  void anUpsertWaitsForAnIndexerFarBehindWhileQueriesAreServed() throws Exception {
    Random r = TestSeeds.random("shard-live-graph-write-backlog");
    float[][] data = TestVectors.latent(r, 3000, DIM);
    java.util.Queue<Runnable> held = new java.util.concurrent.ConcurrentLinkedQueue<>();
    AtomicBoolean paused = new AtomicBoolean(true);
    Executor lane =
        task -> {
          if (paused.get()) {
            held.add(task);
          } else {
            live.execute(task);
          }
        };
    try (Shard s = open(tmp.resolve("backlog"), new LiveIndexer(lane, lane))) {
      // no queries yet: a write far ahead of the (paused) indexer returns at once
      long t0 = System.nanoTime();
      s.awaitDurable(s.upsert(points(data, 0, 2000)));
      assertThat(System.nanoTime() - t0).isLessThan(LiveIndexScheduler.WRITE_WAIT_NANOS);
      Searches.search(
          s, Distance.COSINE.prepare(data[0]), K, SearchParams.DEFAULT, null, false, false);
      ExecutorService writer = Executors.newSingleThreadExecutor();
      try {
        var write = writer.submit(() -> s.awaitDurable(s.upsert(points(data, 2000, 2100))));
        Await.holdsFor(
            Duration.ofMillis(300), "the write waits for the indexer", () -> !write.isDone());
        paused.set(false);
        Runnable t;
        while ((t = held.poll()) != null) {
          live.execute(t);
        }
        write.get(60, TimeUnit.SECONDS);
        GrowingSegment g = null;
        for (Segment seg : s.snapshot().segments()) {
          if (seg instanceof GrowingSegment gs) {
            g = gs;
          }
        }
        assertThat(g).isNotNull();
        assertThat(g.unindexed()).isLessThanOrEqualTo(LiveIndexScheduler.WRITE_BACKLOG);
      } finally {
        writer.shutdownNow();
      }
      assertThat(s.get(PointId.of(2099), false, true)).isNotNull();
    }
  }

  @Test
  void theIndexerYieldsOnlyToWritesFasterThanItCanInsert() {
    int big = LiveIndexScheduler.LIVE_BACKLOG + 1;
    long noSearch = 5_000_000_000L;
    // a bulk load: 20k points/s against 0.3 ms per insert (6 s of work per second)
    assertThat(LiveIndexScheduler.outrun(big, 1_000_000, 20_000, 300_000, noSearch)).isTrue();
    // the same load while queries are served: they would scan the backlog, so keep indexing
    assertThat(LiveIndexScheduler.outrun(big, 1_000_000, 20_000, 300_000, 10_000_000)).isFalse();
    // a steady stream it can follow, however large the backlog
    assertThat(LiveIndexScheduler.outrun(big * 10, 1_000_000, 1_000, 300_000, noSearch)).isFalse();
    // the load stopped (no write for 200 ms), or the backlog is small, or no cost measured yet
    assertThat(LiveIndexScheduler.outrun(big, 300_000_000, 20_000, 300_000, noSearch)).isFalse();
    assertThat(LiveIndexScheduler.outrun(100, 1_000_000, 20_000, 300_000, noSearch)).isFalse();
    assertThat(LiveIndexScheduler.outrun(big, 1_000_000, 20_000, 0, noSearch)).isFalse();
  }

  @Test
  @SuppressForbidden("the steady stream of writes is paced: a batch every 20 ms")
  void aRecoveredBacklogIsIndexedAfterTheOpenAndBesideASteadyStream() throws Exception {
    Random r = TestSeeds.random("shard-live-graph-recovered");
    int n = LiveIndexScheduler.LIVE_BACKLOG + 4000;
    float[][] data = TestVectors.latent(r, n + 200, DIM);
    Path dir = tmp.resolve("shard");
    try (Shard s = open(dir, 1_000_000, false)) {
      s.awaitDurable(s.upsert(points(data, 0, n)));
    }
    // Reopened with live graphs: recovery replays the WAL without indexing, the open queues the
    // backlog (it may have started already), and a search goes on finding every point meanwhile.
    try (Shard s = open(dir, 1_000_000)) {
      assertThat(s.count()).isEqualTo(n);
      Searches.search(
          s, Distance.COSINE.prepare(data[3]), K, SearchParams.DEFAULT, null, false, false);
      awaitLiveIndexed(s);
    }
    // Again, now with a slow stream of writes beside the backlog: the indexer keeps going.
    try (Shard s = open(dir, 1_000_000)) {
      for (int from = n; from < n + 200; from += 20) {
        s.awaitDurable(s.upsert(points(data, from, from + 20)));
        Thread.sleep(20);
      }
      awaitLiveIndexed(s);
      assertThat(recall(s, r, data, Set.of())).isGreaterThanOrEqualTo(0.95);
    }
  }

  private static DiskAnnSegment onlyDisk(Shard s) {
    List<DiskAnnSegment> disk = new ArrayList<>();
    for (Segment seg : s.snapshot().segments()) {
      if (seg instanceof DiskAnnSegment d) {
        disk.add(d);
      }
    }
    assertThat(disk).hasSize(1);
    return disk.get(0);
  }

  @Test
  void aMostlyReplacedSegmentIsRebuiltFromItsLivePoints() throws Exception {
    Random r = TestSeeds.random("shard-live-graph-replaced");
    float[][] data = TestVectors.latent(r, 2000, DIM);
    try (Shard s = open(tmp.resolve("shard"), 100_000)) {
      s.awaitDurable(s.upsert(points(data, 0, 2000)));
      // every point written again: half of the segment's ordinals are dead versions
      s.awaitDurable(s.upsert(points(data, 0, 2000)));
      s.flush();
      awaitBuilt(s);
      DiskAnnSegment d = onlyDisk(s);
      assertThat(d.size()).isEqualTo(2000);
      assertThat(d.liveCount()).isEqualTo(2000);
      assertThat(recall(s, r, data, Set.of())).isGreaterThanOrEqualTo(0.95);
    }
  }

  @Test
  void bulkLoadDefersLiveIndexingUntilItEnds() throws Exception {
    Random r = TestSeeds.random("shard-live-graph-bulk");
    float[][] data = TestVectors.latent(r, 3000, DIM);
    try (Shard s = open(tmp.resolve("shard"), 100_000)) {
      s.setDeferBuilds(true);
      s.awaitDurable(s.upsert(points(data, 0, 3000)));
      GrowingSegment g = (GrowingSegment) s.snapshot().segments().getLast();
      Await.holdsFor(
          Duration.ofMillis(200),
          "no live inserts during a bulk load",
          () -> g.unindexed() == 3000);
      assertThat(recall(s, r, data, Set.of())).as("exact scans meanwhile").isEqualTo(1.0);
      s.setDeferBuilds(false);
      awaitLiveIndexed(s);
      assertThat(recall(s, r, data, Set.of())).isGreaterThanOrEqualTo(0.95);
    }
  }

  @Test
  void writesAreVisibleAtOnceWhileTheIndexerAndSearchesRun() throws Exception {
    Random r = TestSeeds.random("shard-live-graph-concurrent");
    float[][] data = TestVectors.latent(r, 5000, DIM);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    try (Shard s = open(tmp.resolve("shard"), 1500)) {
      Thread reader =
          Thread.ofPlatform()
              .start(
                  () -> {
                    try {
                      while (!stop.get()) {
                        long before = s.count();
                        List<Record> got =
                            Searches.search(
                                s,
                                Distance.COSINE.prepare(data[0]),
                                K,
                                SearchParams.DEFAULT,
                                null,
                                false,
                                false);
                        if (before > 0) {
                          assertThat(got).isNotEmpty();
                        }
                      }
                    } catch (Throwable e) {
                      failure.compareAndSet(null, e);
                    }
                  });
      for (int from = 0; from < 5000; from += 100) {
        s.awaitDurable(s.upsert(points(data, from, from + 100)));
        int probe = from + 57;
        List<Record> got =
            Searches.search(
                s,
                Distance.COSINE.prepare(data[probe]),
                1,
                SearchParams.DEFAULT,
                null,
                false,
                false);
        assertThat(got.get(0).id())
            .as("read-your-writes for point " + probe)
            .isEqualTo(PointId.of(probe));
      }
      stop.set(true);
      reader.join();
      assertThat(failure.get()).isNull();
      awaitBuilt(s);
      assertThat(s.count()).isEqualTo(5000);
      assertThat(recall(s, r, data, Set.of())).isGreaterThanOrEqualTo(0.95);
    }
  }
}
