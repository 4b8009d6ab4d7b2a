package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Optimizations;
import io.flashvec.index.Optimizations.Optimization;
import io.flashvec.index.Optimizations.SegmentRef;
import io.flashvec.index.Optimizations.Status;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.TestVectors;
import io.flashvec.index.diskann.DiskAnnFormat;
import io.flashvec.index.diskann.DiskAnnSettings;
import io.flashvec.index.segment.SegmentBuilder;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Shard#optimizations()} follows a shard's real work: a frozen segment is queued while its
 * build waits, running while it builds, then completed, and its built segment idle; a segment with
 * many deletes is queued for a vacuum, which runs and completes; the growing segment is idle.
 */
class ShardOptimizationsTest {

  static final int DIM = 8;
  static final IndexParams INDEX = new IndexParams(IndexParams.DISKANN, 16, 48, 1.2f, 0);

  @TempDir Path tmp;

  /** Index builds held here until a test runs them on {@link #runner}. */
  final ConcurrentLinkedQueue<Runnable> heldBuilds = new ConcurrentLinkedQueue<>();

  /** Compaction passes held here until a test runs them on {@link #runner}. */
  final ConcurrentLinkedQueue<Runnable> heldCompactions = new ConcurrentLinkedQueue<>();

  final ExecutorService runner = Executors.newSingleThreadExecutor();

  /** Segment builds wait for a permit: a test sees them running, then lets them finish. */
  final Semaphore buildPermits = new Semaphore(0);

  final AtomicInteger buildsEntered = new AtomicInteger();

  @AfterEach
  void shutdown() {
    buildPermits.release(1_000);
    runner.shutdownNow();
  }

  private Shard open(String name) {
    SegmentBuilder real =
        new DiskAnnFormat(Distance.COSINE, INDEX, 64, DiskAnnSettings.DEFAULT).builder();
    SegmentBuilder gated =
        spec -> {
          buildsEntered.incrementAndGet();
          buildPermits.acquireUninterruptibly();
          return real.build(spec);
        };
    Shard.Options o =
        new Shard.Options(100_000, Wal.Options.defaults(), FileIO.DEFAULT, heldBuilds::add, 64)
            .withSegmentBuilder(gated)
            .withCompaction(
                new Shard.Compaction(
                        heldCompactions::add,
                        null,
                        0.2,
                        Shard.Compaction.DEFAULT_SEGMENTS_PER_TIER,
                        Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS,
                        true)
                    .withRawQuietNanos(0));
    return Shard.open(tmp.resolve(name), 2, DIM, Distance.COSINE, INDEX, o);
  }

  private static List<Point> points(Random r, int from, int to) {
    List<Point> pts = new ArrayList<>();
    for (int i = from; i < to; i++) {
      pts.add(
          new Point(PointId.of(i), Distance.COSINE.prepare(TestVectors.gaussian(r, DIM)), null));
    }
    return pts;
  }

  private static void runAll(ConcurrentLinkedQueue<Runnable> held, ExecutorService on) {
    for (Runnable t; (t = held.poll()) != null; ) {
      on.execute(t);
    }
  }

  @Test
  void aFreshShardHasOnlyItsGrowingSegmentIdle() throws Exception {
    Random r = TestSeeds.random("ShardOptimizationsTest.fresh");
    try (Shard s = open("fresh")) {
      s.awaitDurable(s.upsert(points(r, 0, 50)));
      Optimizations o = s.optimizations();
      assertThat(o.running()).isEmpty();
      assertThat(o.queued()).isEmpty();
      assertThat(o.completed()).isEmpty();
      int growing = s.snapshot().memory().getLast().id();
      assertThat(o.idle())
          .containsExactly(new SegmentRef(Optimizations.segmentUuid(2, growing), 50));
    }
  }

  @Test
  void aFrozenSegmentIsQueuedThenRunningThenCompletedAndItsBuildIdle() throws Exception {
    Random r = TestSeeds.random("ShardOptimizationsTest.build");
    try (Shard s = open("build")) {
      s.awaitDurable(s.upsert(points(r, 0, 600)));
      int frozen = s.snapshot().memory().getLast().id();
      s.flush();

      // queued: the build is held
      Optimizations queued = s.optimizations();
      assertThat(queued.running()).isEmpty();
      SegmentRef frozenRef = new SegmentRef(Optimizations.segmentUuid(2, frozen), 600);
      assertThat(queued.queued())
          .containsExactly(new Optimizations.Queued(Optimizations.INDEXING, List.of(frozenRef)));
      assertThat(queued.queuedSegments()).isEqualTo(1);
      assertThat(queued.queuedPoints()).isEqualTo(600);
      int growing = s.snapshot().memory().getLast().id();
      assertThat(queued.idle())
          .as("the new growing segment")
          .containsExactly(new SegmentRef(Optimizations.segmentUuid(2, growing), 0));

      // running: the build waits in the segment builder
      runAll(heldBuilds, runner);
      Await.until(Duration.ofSeconds(30), "the build running", () -> buildsEntered.get() == 1);
      Optimizations running = s.optimizations();
      assertThat(running.queued()).isEmpty();
      assertThat(running.running()).hasSize(1);
      Optimization build = running.running().getFirst();
      assertThat(build.optimizer()).isEqualTo(Optimizations.INDEXING);
      assertThat(build.status()).isEqualTo(Status.OPTIMIZING);
      assertThat(build.segments()).containsExactly(frozenRef);
      assertThat(build.total()).isEqualTo(600);
      assertThat(build.finishedAt()).isNull();
      assertThat(running.idle()).extracting(SegmentRef::points).containsExactly(0L);

      // completed: the built segment is named by the optimization and idle
      buildPermits.release();
      Await.until(
          Duration.ofSeconds(60),
          "the build completed",
          () -> !s.optimizations().completed().isEmpty());
      Optimizations after = s.optimizations();
      assertThat(s.buildFailure()).isNull();
      assertThat(after.running()).isEmpty();
      Optimization done = after.completed().getFirst();
      assertThat(done.uuid()).isEqualTo(build.uuid());
      assertThat(done.status()).isEqualTo(Status.DONE);
      assertThat(done.done()).isEqualTo(600);
      assertThat(done.finishedAt()).isAfterOrEqualTo(done.startedAt());
      assertThat(after.idle()).contains(new SegmentRef(done.uuid(), 600));
      assertThat(after.queued()).as("one segment: nothing to merge").isEmpty();
    }
  }

  @Test
  void aSegmentWithManyDeletesIsQueuedForAVacuumWhichRunsAndCompletes() throws Exception {
    Random r = TestSeeds.random("ShardOptimizationsTest.vacuum");
    try (Shard s = open("vacuum")) {
      s.awaitDurable(s.upsert(points(r, 0, 500)));
      s.flush();
      buildPermits.release();
      runAll(heldBuilds, runner);
      Await.until(
          Duration.ofSeconds(60),
          "the build completed",
          () -> !s.optimizations().completed().isEmpty());
      int sealed = s.snapshot().sealed().getFirst().id();

      List<PointId> gone = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        gone.add(PointId.of(i));
      }
      s.awaitDurable(s.delete(gone));
      SegmentRef sealedRef = new SegmentRef(Optimizations.segmentUuid(2, sealed), 300);
      Optimizations queued = s.optimizations();
      assertThat(queued.queued())
          .containsExactly(new Optimizations.Queued(Optimizations.VACUUM, List.of(sealedRef)));
      assertThat(queued.idle()).doesNotContain(sealedRef);

      runAll(heldCompactions, runner);
      Await.until(Duration.ofSeconds(30), "the vacuum running", () -> buildsEntered.get() == 2);
      Optimizations running = s.optimizations();
      assertThat(running.running())
          .singleElement()
          .satisfies(
              o -> {
                assertThat(o.optimizer()).isEqualTo(Optimizations.VACUUM);
                assertThat(o.segments()).containsExactly(sealedRef);
                assertThat(o.done()).as("a compaction's progress is not known").isEqualTo(-1);
              });
      assertThat(running.queued()).as("the running vacuum is not queued again").isEmpty();

      buildPermits.release();
      Await.until(
          Duration.ofSeconds(60),
          "the vacuum completed",
          () -> s.optimizations().completed().size() == 2);
      Optimizations after = s.optimizations();
      assertThat(after.running()).isEmpty();
      assertThat(after.queued()).isEmpty();
      Optimization vacuum = after.completed().getFirst();
      assertThat(vacuum.optimizer()).isEqualTo(Optimizations.VACUUM);
      assertThat(vacuum.status()).isEqualTo(Status.DONE);
      assertThat(after.idle()).contains(new SegmentRef(vacuum.uuid(), 300));
    }
  }
}
