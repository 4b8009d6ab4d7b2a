package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InsufficientStorageException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.Searches;
import io.flashvec.index.diskann.DiskAnnWriter;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.segment.BuildSpec;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * A shard on a full disk and a shard that is closed while it builds or compacts: writes are refused
 * with an {@link InsufficientStorageException} (HTTP 507) while reads go on and writes resume by
 * themselves; builds and compactions check the free space first, leave no temporary files when the
 * disk fills up under them and run again later; closing cancels them, and the reopened shard does
 * the work again. Nothing acknowledged is lost.
 */
@ExtendWith(TestSeeds.Reporter.class)
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ShardDiskFullTest {

  private static final int DIM = 16;
  private static final int SEAL = 300;

  @TempDir Path tmp;

  private Random random;
  private FaultyFileIO io;
  private ExecutorService builds;
  private ExecutorService compactions;
  private Path dir;
  private final List<float[]> vectors = new ArrayList<>();

  @BeforeEach
  void setUp(TestInfo info) {
    random = TestSeeds.random("ShardDiskFullTest#" + info.getTestMethod().orElseThrow().getName());
    io = new FaultyFileIO();
    builds = Executors.newSingleThreadExecutor(Thread.ofPlatform().name("test-build").factory());
    compactions =
        Executors.newSingleThreadExecutor(Thread.ofPlatform().name("test-compaction").factory());
    dir = tmp.resolve("shard");
  }

  @AfterEach
  void tearDown() {
    builds.shutdownNow();
    compactions.shutdownNow();
  }

  private Shard.Options options(long minFreeBytes) {
    return new Shard.Options(
            SEAL,
            Wal.Options.defaults().withSegmentBytes(32 << 10),
            io,
            builds,
            64,
            new Shard.Compaction(
                compactions, null, 0.2, 8, Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS, false))
        .withDiskSpace(new DiskSpace(io, minFreeBytes));
  }

  private Shard open(Shard.Options options) {
    return Shard.open(dir, 0, DIM, Distance.EUCLID, IndexParams.DEFAULT, options);
  }

  // ---------------------------------------------------------------- writes

  @Test
  void writesBelowTheReserveAreRefusedWhileReadsAndDeletesWorkAndResumeWhenSpaceIsFreed()
      throws IOException {
    try (Shard s = open(options(1000))) {
      s.awaitDurable(s.upsert(points(0, 50)));
      io.spaceLeft(1500);
      assertThatThrownBy(() -> s.upsert(points(50, 10)))
          .isInstanceOf(InsufficientStorageException.class)
          .hasMessage(
              "Insufficient storage: upsert refused, the data directory's disk is full (1.5 KiB"
                  + " free, 1000 B kept in reserve); writes resume once space is freed"
                  + " [usableBytes=1500, minFreeBytes=1000]")
          .satisfies(e -> assertThat(((FlashVecException) e).httpStatus()).isEqualTo(507));
      io.spaceLeft(1010); // a single point's update (~100 bytes) does not fit above 1000 either
      assertThatThrownBy(
              () ->
                  s.updatePayloads(
                      List.of(PointId.of(1)), p -> "{\"x\":1}".getBytes(StandardCharsets.UTF_8)))
          .isInstanceOf(InsufficientStorageException.class)
          .hasMessageStartingWith("Insufficient storage: payload update refused");
      assertThat(s.get(PointId.of(55), false, false)).as("nothing of the refused write").isNull();

      // Reads go on.
      assertThat(s.count()).isEqualTo(50);
      assertThat(s.get(PointId.of(7), false, true).vector()).isEqualTo(vectors.get(7));
      assertThat(Searches.search(s, vectors.get(9), 1, SearchParams.DEFAULT, null, false, false))
          .extracting(Record::id)
          .containsExactly(PointId.of(9));
      // Deletes go on: they are how a user makes room.
      s.awaitDurable(s.delete(List.of(PointId.of(3))));

      io.spaceLeft(FaultyFileIO.UNLIMITED);
      s.awaitDurable(s.upsert(points(50, 10)));
      assertThat(s.count()).isEqualTo(59);
    }
    try (Shard s = open(options(1000))) {
      assertThat(s.count()).isEqualTo(59);
      assertThat(s.get(PointId.of(3), false, false)).isNull();
      assertThat(s.get(PointId.of(59), false, true).vector()).isEqualTo(vectors.get(59));
    }
  }

  @Test
  void aWalAppendThatFindsTheDiskFullIsRefusedAndTheNextWriteGoesThrough() throws IOException {
    try (Shard s = open(options(0))) {
      s.awaitDurable(s.upsert(points(0, 20)));
      // The device fills up between the free-space check and the append (another process).
      io.noSpaceFailures(true).failOnce(Op.WRITE, 1, p -> p.getParent().endsWith("wal"));
      assertThatThrownBy(() -> s.upsert(points(20, 5)))
          .isInstanceOf(InsufficientStorageException.class)
          .hasMessageStartingWith("Insufficient storage: upsert refused");
      assertThat(s.wal().failed()).isFalse();
      assertThat(s.count()).isEqualTo(20);
      s.awaitDurable(s.upsert(points(20, 5)));
      assertThat(s.count()).isEqualTo(25);
    }
    try (Shard s = open(options(0))) {
      assertThat(s.count()).isEqualTo(25);
      assertThat(s.wal().recovery().bytesDiscarded()).isZero();
    }
  }

  // ---------------------------------------------------------------- index builds

  @Test
  void aBuildWithoutRoomIsPostponedAndRunsOnceSpaceIsBack() throws Exception {
    try (Shard s = open(options(0))) {
      s.awaitDurable(s.upsert(points(0, 200)));
      // Room for writes (a few KiB each), not for a segment (estimate plus 1 MiB of margin).
      io.spaceLeft(512 << 10);
      s.awaitDurable(s.upsert(points(200, 200)));
      s.awaitDurable(s.upsert(points(400, 1))); // the growing segment passed the threshold: sealed
      Await.holdsFor(
          Duration.ofMillis(300),
          "the build waits for space",
          () -> s.indexing() && s.buildFailure() == null);
      assertThat(diskSegments(s)).isZero();
      assertThat(tempFiles()).isEmpty();
      assertThat(io.spaceLeft())
          .as("the postponed build wrote nothing")
          .isGreaterThan((512 << 10) - 32 * 1024);

      io.spaceLeft(FaultyFileIO.UNLIMITED);
      awaitIndexed(s);
      assertThat(diskSegments(s)).isEqualTo(1);
      assertThat(s.count()).isEqualTo(401);
    }
    assertReopensWithAll(401);
  }

  /** Where a build (and the checkpoint after it) writes, and how ENOSPC there is injected. */
  record WritePath(String name, Op op, Predicate<Path> target) {}

  static List<WritePath> buildWritePaths() {
    return List.of(
        new WritePath("segment directory", Op.CREATE_DIRECTORIES, named("seg-", ".tmp")),
        new WritePath("graph file", Op.WRITE, named("graph.fvg", "")),
        new WritePath("PQ codes", Op.WRITE, named("pq.fvs", ".tmp")),
        new WritePath("segment metadata", Op.WRITE, named("meta.fvs", ".tmp")),
        new WritePath(
            "segment rename", Op.ATOMIC_MOVE, p -> p.getFileName().toString().matches("seg-\\d+")),
        new WritePath("payload index rename", Op.ATOMIC_MOVE, named("payload-", "")),
        new WritePath("deletion bitmap", Op.WRITE, named("deleted.fvs", ".tmp")),
        new WritePath("manifest", Op.WRITE, named("manifest.fvs", ".tmp")));
  }

  private static Predicate<Path> named(String prefix, String suffix) {
    return p -> {
      String n = p.getFileName().toString();
      return n.startsWith(prefix) && n.endsWith(suffix);
    };
  }

  @Test
  void outOfSpaceAtEveryWriteOfABuildLeavesNoTempFilesAndLosesNothing() throws Exception {
    PayloadSchema schema =
        PayloadSchema.EMPTY.with(
            PayloadFieldSchema.parse("id", JsonNodeFactory.instance.stringNode("integer")));
    int round = 0;
    for (WritePath w : buildWritePaths()) {
      dir = tmp.resolve("shard-" + round++);
      vectors.clear();
      try (Shard s = open(options(0))) {
        s.setPayloadSchema(schema);
        // A first segment on disk, so that later checkpoints write its deletion bitmap too.
        s.awaitDurable(s.upsert(points(0, SEAL + 1)));
        s.flush();
        awaitIndexed(s);
        s.awaitDurable(s.delete(List.of(PointId.of(5))));
        int injected = io.injectedFailures();
        io.noSpaceFailures(true).failOnce(w.op(), 1, w.target());
        s.awaitDurable(s.upsert(points(SEAL + 1, SEAL)));
        s.flush();
        awaitIndexed(s);
        assertThat(io.injectedFailures() - injected).as("ENOSPC at the %s", w.name()).isEqualTo(1);
        assertThat(tempFiles()).as("ENOSPC at the %s", w.name()).isEmpty();
        assertThat(s.count()).as("ENOSPC at the %s", w.name()).isEqualTo(2 * SEAL);
        assertThat(s.buildFailure()).as("ENOSPC at the %s", w.name()).isNull();
        io.disarm();
        io.noSpaceFailures(false);
      }
      assertReopensWithAll(2 * SEAL + 1, PointId.of(5));
      System.out.println("[flashvec] ENOSPC at the " + w.name() + ": nothing lost, no temp files");
    }
  }

  // ---------------------------------------------------------------- compactions

  @Test
  void aCompactionWithoutRoomIsPostponedAndOneThatRunsOutOfSpaceLeavesNoFiles() throws Exception {
    try (Shard s = open(options(0))) {
      for (int i = 0; i < 3; i++) {
        s.awaitDurable(s.upsert(points(i * 100, 100)));
        s.flush();
        awaitIndexed(s);
      }
      assertThat(diskSegments(s)).isEqualTo(3);
      io.spaceLeft(64 << 10);
      assertThat(s.compact(true).get(60, TimeUnit.SECONDS)).isZero();
      assertThat(diskSegments(s)).isEqualTo(3);
      assertThat(tempFiles()).isEmpty();

      io.spaceLeft(FaultyFileIO.UNLIMITED)
          .noSpaceFailures(true)
          .failOnce(Op.WRITE, 1, named("graph.fvg", ""));
      assertThat(s.compact(true).get(60, TimeUnit.SECONDS)).isZero();
      assertThat(io.injectedFailures()).isEqualTo(1);
      assertThat(s.compactionFailure()).as("a full disk is not a failure").isNull();
      assertThat(diskSegments(s)).isEqualTo(3);
      assertThat(tempFiles()).isEmpty();
      assertThat(segmentDirectories()).hasSize(3);

      io.disarm();
      assertThat(s.compact(true).get(60, TimeUnit.SECONDS)).isPositive();
      assertThat(diskSegments(s)).isEqualTo(1);
      assertThat(s.count()).isEqualTo(300);
    }
    assertReopensWithAll(300);
  }

  // ---------------------------------------------------------------- cancellation on close

  /**
   * A build in progress is cancelled by {@link Shard#close}: the build checks for it between its
   * steps and slices (the gate holds it at its fourth check until the shard is closing), stops at
   * the next check, removes its files, and the reopened shard builds the segment again from the
   * WAL.
   */
  @Test
  void closeCancelsARunningBuildWhichRunsAgainAfterReopening() throws Exception {
    Gate gate = new Gate(4);
    try (Shard s = open(options(0).withSegmentBuilder(gate))) {
      // Sealed by the threshold at the next write, so a replay of the WAL seals it again.
      s.awaitDurable(s.upsert(points(0, 2000)));
      s.awaitDurable(s.upsert(points(2000, 1)));
      gate.awaitHeld();
      assertThat(s.compacting()).isFalse();
      closeThroughTheGate(s, gate);
      assertThat(gate.checks.get())
          .as("the build stopped at the first check after the shard closed")
          .isEqualTo(5);
      assertThat(segmentDirectories()).isEmpty();
      assertThat(tempFiles()).isEmpty();
    }
    try (Shard s = open(options(0))) {
      assertThat(s.count()).isEqualTo(2001);
      awaitIndexed(s);
      assertThat(diskSegments(s)).as("the build ran again after reopening").isEqualTo(1);
      assertThat(s.get(PointId.of(1999), false, true).vector()).isEqualTo(vectors.get(1999));
    }
    assertReopensWithAll(2001);
  }

  @Test
  void closeCancelsARunningCompactionWhichCanRunAgainAfterReopening() throws Exception {
    Gate gate = new Gate(4);
    gate.enabled.set(false);
    try (Shard s = open(options(0).withSegmentBuilder(gate))) {
      for (int i = 0; i < 2; i++) {
        s.awaitDurable(s.upsert(points(i * 250, 250)));
        s.flush();
        awaitIndexed(s);
      }
      assertThat(diskSegments(s)).isEqualTo(2);
      gate.enabled.set(true);
      CompletableFuture<Integer> compaction = s.compact(true);
      gate.awaitHeld();
      closeThroughTheGate(s, gate);
      assertThat(compaction.get(30, TimeUnit.SECONDS)).isZero();
      assertThat(gate.checks.get()).isEqualTo(5);
      assertThat(tempFiles()).isEmpty();
      assertThat(segmentDirectories()).hasSize(2);
    }
    try (Shard s = open(options(0))) {
      assertThat(s.count()).isEqualTo(500);
      assertThat(s.compact(true).get(60, TimeUnit.SECONDS)).isPositive();
      assertThat(diskSegments(s)).isEqualTo(1);
    }
    assertReopensWithAll(500);
  }

  /** Closes {@code s} on another thread and lets the gated build go on once it is closing. */
  private static void closeThroughTheGate(Shard s, Gate gate) throws Exception {
    // Its own thread: jvector's builds use the common pool, which close must not occupy.
    CompletableFuture<Void> closing = new CompletableFuture<>();
    Thread.ofPlatform()
        .name("test-close")
        .start(
            () -> {
              try {
                s.close();
                closing.complete(null);
              } catch (Throwable e) {
                closing.completeExceptionally(e);
              }
            });
    Await.until(Duration.ofSeconds(30), "the shard is closing", s::isClosed);
    gate.release.countDown();
    closing.get(30, TimeUnit.SECONDS);
  }

  /**
   * The local builder, holding the build at its {@code holdAt}-th cancellation check until
   * released, and counting the checks.
   */
  private static final class Gate implements SegmentBuilder {
    final int holdAt;
    final AtomicInteger checks = new AtomicInteger();
    final AtomicBoolean enabled = new AtomicBoolean(true);
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    Gate(int holdAt) {
      this.holdAt = holdAt;
    }

    void awaitHeld() throws InterruptedException {
      assertThat(held.await(60, TimeUnit.SECONDS)).as("the build reached the gate").isTrue();
    }

    @Override
    public int build(BuildSpec spec) throws IOException {
      if (!enabled.get()) {
        return DiskAnnWriter.write(spec);
      }
      BooleanSupplier cancelled = spec.cancelled();
      // The held check answers what held before the close, so the build goes on to the next
      // check, which must notice it.
      BooleanSupplier gated =
          () -> {
            boolean answer = cancelled.getAsBoolean();
            if (checks.incrementAndGet() == holdAt) {
              held.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return answer;
          };
      return DiskAnnWriter.write(spec.withCancelled(gated));
    }
  }

  // ---------------------------------------------------------------- helpers

  private List<Point> points(int from, int n) {
    List<Point> out = new ArrayList<>(n);
    for (int id = from; id < from + n; id++) {
      float[] v = new float[DIM];
      for (int j = 0; j < DIM; j++) {
        v[j] = (float) random.nextGaussian();
      }
      while (vectors.size() <= id) {
        vectors.add(null);
      }
      vectors.set(id, v);
      out.add(
          new Point(PointId.of(id), v, ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8)));
    }
    return out;
  }

  private void assertReopensWithAll(int points, PointId... deleted) throws IOException {
    try (Shard s = open(options(0))) {
      List<PointId> gone = List.of(deleted);
      assertThat(s.count()).isEqualTo(points - gone.size());
      for (int id = 0; id < points; id++) {
        Record r = s.get(PointId.of(id), true, true);
        if (gone.contains(PointId.of(id))) {
          assertThat(r).isNull();
          continue;
        }
        assertThat(r).as("point %d", id).isNotNull();
        assertThat(r.vector()).as("vector of %d", id).isEqualTo(vectors.get(id));
        assertThat(new String(r.payload(), StandardCharsets.UTF_8))
            .isEqualTo("{\"id\":" + id + "}");
      }
    }
    assertThat(tempFiles()).as("no temp files after reopening").isEmpty();
  }

  private static long diskSegments(Shard s) {
    return s.snapshot().segments().stream().filter(x -> x.diskBytes() > 0).count();
  }

  private static void awaitIndexed(Shard s) {
    Await.until(Duration.ofSeconds(60), "builds finished", () -> !s.indexing());
  }

  private List<Path> tempFiles() throws IOException {
    if (!Files.exists(dir)) {
      return List.of();
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(p -> p.getFileName().toString().endsWith(".tmp")).toList();
    }
  }

  private List<Path> segmentDirectories() throws IOException {
    Path segs = dir.resolve("segments");
    if (!Files.isDirectory(segs)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(segs)) {
      return s.toList();
    }
  }
}
