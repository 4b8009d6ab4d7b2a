package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.ByteSize;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InsufficientMemoryException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Searches;
import io.flashvec.index.disk.PqCodebook;
import io.flashvec.index.diskann.PqTrainer;
import io.flashvec.index.memory.MemoryLimits;
import io.flashvec.index.memory.MemoryPlan;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Under memory limits a shard seals its growing segment at its share of the growing slice, which
 * shrinks when another shard starts taking writes and grows back when that shard closes, and holds
 * at most one frozen segment waiting for its build.
 */
class ShardMemoryLimitsTest {

  static final int DIM = 16;

  @TempDir Path tmp;

  private static Shard.Options options(MemoryLimits memory) {
    // no build executor: sealed segments stay in memory, so their sizes are the seal sizes
    return new Shard.Options(100_000, Wal.Options.defaults(), FileIO.DEFAULT).withMemory(memory);
  }

  private Shard open(String name, Shard.Options options) {
    return Shard.open(tmp.resolve(name), 0, DIM, Distance.EUCLID, IndexParams.DEFAULT, options);
  }

  private int next;

  private void upsert(Shard s, Random r, int n) {
    upsert(s, r, n, DIM);
  }

  /** Upserts {@code n} random points of {@code dim} dimensions with the next ids; returns them. */
  private List<Point> upsert(Shard s, Random r, int n, int dim) {
    List<Point> pts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      float[] v = new float[dim];
      for (int j = 0; j < dim; j++) {
        v[j] = (float) r.nextGaussian();
      }
      pts.add(new Point(PointId.of(next++), v, null));
    }
    s.awaitDurable(s.upsert(pts));
    return pts;
  }

  /** Sizes of the shard's sealed (frozen) segments, oldest first. */
  private static List<Integer> sealedSizes(Shard s) {
    List<Integer> sizes = new ArrayList<>();
    for (Segment seg : s.snapshot().segments()) {
      if (!(seg instanceof GrowingSegment g) || g.frozen()) {
        sizes.add(seg.size());
      }
    }
    return sizes;
  }

  @Test
  void growingSegmentsSealAtTheirShareOfTheGrowingSlice() throws Exception {
    Random r = TestSeeds.random("shard-memory-limits");
    long perPoint = MemoryPlan.growingBytesPerPoint(DIM, 0);
    MemoryLimits memory = new MemoryLimits(2 * perPoint * 4096, 1L << 30);
    Shard.Options options = options(memory);
    assertThat(options.sealThresholdPoints(DIM, 0)).isEqualTo(4096);
    try (Shard a = open("a", options)) {
      for (int i = 0; i < 16; i++) {
        upsert(a, r, 512);
      }
      assertThat(sealedSizes(a)).containsExactly(4096);
      assertThat(memory.activeGrowing()).isEqualTo(1);
      try (Shard b = open("b", options)) {
        upsert(b, r, 1);
        assertThat(memory.activeGrowing()).isEqualTo(2);
        for (int i = 0; i < 8; i++) {
          upsert(a, r, 512);
        }
        // a's 4096 growing points sealed at once (its share is now 2048), then at 2048
        assertThat(sealedSizes(a)).containsExactly(4096, 4096, 2048);
      }
      assertThat(memory.activeGrowing()).as("a closed shard takes no share").isEqualTo(1);
      for (int i = 0; i < 8; i++) {
        upsert(a, r, 512);
      }
      assertThat(sealedSizes(a)).containsExactly(4096, 4096, 2048, 4096);
      assertThat(a.count()).isEqualTo(16 * 512 + 16 * 512);
    }
    assertThat(memory.activeGrowing()).isZero();
  }

  /**
   * An ingest faster than the index builds: with one frozen segment waiting for its build, a write
   * that would seal a second waits until the build is installed, so frozen segments do not pile up
   * on the heap.
   */
  @Test
  void aWriteThatWouldSealASecondFrozenSegmentWaitsForTheFirstBuild() throws Exception {
    Random r = TestSeeds.random("shard-memory-limits-backpressure");
    long perPoint = MemoryPlan.growingBytesPerPoint(DIM, 0);
    MemoryLimits memory = new MemoryLimits(2 * perPoint * 2048, 1L << 30);
    BlockingQueue<Runnable> builds = new LinkedBlockingQueue<>();
    Shard.Options options =
        new Shard.Options(100_000, Wal.Options.defaults(), FileIO.DEFAULT, builds::add, 64)
            .withMemory(memory);
    ExecutorService writer = Executors.newSingleThreadExecutor();
    try (Shard a = open("backpressure", options)) {
      upsert(a, r, 2048);
      upsert(a, r, 512); // seals the first 2048: one frozen segment, its build queued
      upsert(a, r, 1536); // the growing segment is full again
      assertThat(builds).hasSize(1);
      Future<?> blocked = writer.submit(() -> upsert(a, r, 512));
      assertThatThrownBy(() -> blocked.get(300, TimeUnit.MILLISECONDS))
          .isInstanceOf(TimeoutException.class);
      assertThat(a.count()).as("the waiting write is not applied yet").isEqualTo(4096);
      builds.take().run(); // the first build installs and wakes the writer
      blocked.get(30, TimeUnit.SECONDS);
      assertThat(a.count()).isEqualTo(4608);
      assertThat(builds).as("the second seal's build").hasSize(1);
      builds.take().run();
      assertThat(a.indexing()).isFalse();
    } finally {
      writer.shutdownNow();
    }
  }

  /**
   * Once the sealed segments' resident index (PQ codes, Bloom filters of ids) and the id map
   * outgrow the resident slice, upserts get 507 naming the budget; reads and deletes go on, and
   * nothing was written.
   */
  @Test
  void upsertsAreRefusedOnceTheResidentIndexOutgrowsItsSlice() throws Exception {
    // What one sealed segment of 500 points and an id map of 900 ids take (measured, as the PQ
    // codebook's share depends on the format), then the same load under a slice of exactly that.
    long measured;
    MemoryLimits unlimited = new MemoryLimits(1L << 40, 1L << 40, 1L << 30, 1L << 30);
    try (Shard m = open("measure", residentOptions(unlimited))) {
      Random r = TestSeeds.random("shard-memory-limits-resident");
      upsert(m, r, 500);
      upsert(m, r, 400); // seals and builds the first 500 points in place
      upsert(m, r, 1); // records one segment and the 401 ids of the growing one
      measured = unlimited.residentTotal();
    }
    assertThat(measured).isGreaterThan(400L * IdLocations.ENTRY_BYTES);
    MemoryLimits memory = new MemoryLimits(1L << 30, measured, 1L << 30, 1L << 30);
    next = 0;
    try (Shard a = open("resident", residentOptions(memory))) {
      Random r = TestSeeds.random("shard-memory-limits-resident");
      upsert(a, r, 500);
      upsert(a, r, 400);
      assertThat(a.snapshot().segments().stream().filter(Segment::onDisk).count()).isEqualTo(1);
      upsert(a, r, 1); // exactly the slice: accepted
      assertThat(memory.residentTotal()).isEqualTo(measured);
      assertThatThrownBy(() -> upsert(a, r, 1))
          .isInstanceOf(InsufficientMemoryException.class)
          .hasMessage(
              "Insufficient memory: upsert refused, the resident index ("
                  + ByteSize.human(measured + IdLocations.ENTRY_BYTES)
                  + ") has outgrown its slice of the memory budget ("
                  + ByteSize.human(measured)
                  + " of flashvec.memory.budget=1 GiB); raise the budget, or delete points and"
                  + " compact [residentBytes="
                  + (measured + IdLocations.ENTRY_BYTES)
                  + ", residentSliceBytes="
                  + measured
                  + ", budgetBytes=1073741824]");
      assertThat(a.count()).as("the refused upsert wrote nothing").isEqualTo(901);
      a.awaitDurable(a.delete(List.of(PointId.of(0))));
      assertThat(a.count()).isEqualTo(900);
      assertThat(a.get(PointId.of(1), false, true)).isNotNull();
    }
    assertThat(memory.residentTotal()).as("a closed shard holds nothing").isZero();
  }

  /**
   * Consecutive seals share their codebook: the segments read back from their files hold one
   * object, and the resident index counts it once.
   */
  @Test
  void aCodebookSharedBySealsIsHeldAndCountedOnce() throws Exception {
    MemoryLimits unlimited = new MemoryLimits(1L << 40, 1L << 40, 1L << 30, 1L << 30);
    // live graphs built as points arrive: each seal writes its graph with the newest codebook
    Shard.Options options = residentOptions(unlimited).withLiveIndexer(Runnable::run);
    try (Shard a = open("shared-codebook", options)) {
      Random r = TestSeeds.random("shard-memory-limits-shared-codebook");
      upsert(a, r, 500);
      upsert(a, r, 500);
      upsert(a, r, 1);
      List<Segment> segments = a.snapshot().segments();
      List<SealedSegment> sealed = new ArrayList<>();
      long heap = 0;
      long memory = 0;
      for (Segment s : segments) {
        memory += s.memoryBytes();
        if (s.onDisk()) {
          sealed.add((SealedSegment) s);
          heap += s.heapBytes();
        }
      }
      assertThat(sealed).hasSize(2);
      PqCodebook book = sealed.get(0).codebook();
      assertThat(book).isNotNull();
      assertThat(sealed.get(1).codebook()).isSameAs(book);
      assertThat(ShardWriter.residentBytes(segments)).isEqualTo(heap - book.memoryBytes());
      // what the shard reports (telemetry, collection info) counts it once as well
      assertThat(a.memoryBytes()).isEqualTo(a.idMapBytes() + memory - book.memoryBytes());
    }
  }

  /**
   * Under a budget a segment written while the server holds more points than half the resident
   * slice keeps at the default code size gets smaller PQ codes; once those points are gone the next
   * segment gets the default again.
   */
  @Test
  void segmentsGetSmallerCodesWhenTheServerHoldsMorePointsThanTheSliceFits() throws Exception {
    int dim = 64;
    Random r = TestSeeds.random("shard-memory-limits-codes");
    MemoryLimits memory = new MemoryLimits(1L << 32, 1L << 30, 1L << 30, 1L << 30);
    Object other = new Object();
    // 2^29 bytes for codes over 40M points: 13.4 a point, 11.9 beside the Bloom filter
    memory.points(other, 40_000_000);
    try (Shard a =
        Shard.open(
            tmp.resolve("codes"),
            0,
            dim,
            Distance.EUCLID,
            IndexParams.DEFAULT,
            residentOptions(memory))) {
      for (int batch : new int[] {501, 1, 501, 1}) {
        if (next == 502) {
          memory.points(other, 0); // the first 501 sealed at the write after them
        }
        upsert(a, r, batch, dim);
      }
      List<Integer> codes = new ArrayList<>();
      for (Segment seg : a.snapshot().segments()) {
        if (seg instanceof io.flashvec.index.segment.SealedSegment sealed) {
          codes.add(sealed.codebook().subspaces());
        }
      }
      assertThat(codes).as("32 preferred: 24, 16, 12, then 8 fit").containsExactly(8, 32);
    }
  }

  /**
   * A segment whose codes were chosen when the server held fewer points is rewritten with the
   * smaller codes the budget allows now once the resident index fills 80% of its slice, and not
   * before; its points stay searchable and counted.
   */
  @Test
  void segmentsAreRecodedWhenTheResidentIndexNearsItsSlice() throws Exception {
    Random r = TestSeeds.random("shard-memory-limits-recode");
    MemoryLimits memory = new MemoryLimits(1L << 32, 1L << 30, 1L << 30, 1L << 30);
    Object other = new Object();
    ExecutorService compactions = Executors.newSingleThreadExecutor();
    Shard.Options options =
        recodeOptions(
            memory,
            new Shard.Compaction(
                compactions, null, 0.2, 10, Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS, false));
    float[] first;
    try (Shard a = openRecode("recode", options)) {
      first = sealFirst501(a, r);
      a.awaitDurable(a.delete(List.of(PointId.of(7))));
      assertThat(sealedCodes(a)).containsExactly(32);
      memory.points(other, 40_000_000); // 8 bytes a point fit now
      assertThat(a.compact(false).get(60, TimeUnit.SECONDS))
          .as("the resident index is far below its slice: nothing to do")
          .isZero();
      memory.checkResident(other, 900L << 20, null); // 88% of the slice
      assertThat(a.compact(false).get(60, TimeUnit.SECONDS)).isEqualTo(1);
      assertThat(sealedCodes(a)).containsExactly(8);
      assertThat(sealedSizes(a))
          .as("recoded around its graph: every ordinal kept, the deleted one too")
          .containsExactly(501);
      assertThat(a.compact(false).get(60, TimeUnit.SECONDS)).as("recoded once").isZero();
      assertRecoded(a, first);
    }
    memory.checkResident(other, 0, null);
    try (Shard a = openRecode("recode", options)) {
      assertThat(sealedCodes(a)).as("after a restart").containsExactly(8);
      assertRecoded(a, first);
    } finally {
      compactions.shutdownNow();
    }
  }

  /**
   * Codes shrunk while the server held more points are recoded larger once the shard takes no
   * writes, up to what the points held now allow ({@link MemoryLimits#idlePqBytes}) and only while
   * the resident slice has room for them; every ordinal kept, the points searchable, once.
   */
  @Test
  void codesGrowBackOnceWritesStopAndTheSliceHasRoom() throws Exception {
    Random r = TestSeeds.random("shard-memory-limits-grow");
    long slice = 1L << 30;
    MemoryLimits memory = new MemoryLimits(1L << 32, slice, 1L << 30, 1L << 30);
    Object other = new Object();
    memory.points(other, 40_000_000); // 8 bytes a point fit when the segment is written
    ExecutorService compactions = Executors.newSingleThreadExecutor();
    try (Shard a = openRecode("grow", recodeOptions(memory, quiet(compactions, 0)))) {
      float[] first = sealFirst501(a, r);
      a.awaitDurable(a.delete(List.of(PointId.of(7))));
      assertThat(sealedCodes(a)).containsExactly(8);
      memory.checkResident(other, (long) (MemoryLimits.IDLE_CODE_FILL * slice), null);
      assertThat(a.compact(false).get(60, TimeUnit.SECONDS))
          .as("larger codes fit the points, but the slice has no room for them")
          .isZero();
      assertThat(sealedCodes(a)).containsExactly(8);
      memory.checkResident(other, 0, null);
      assertThat(a.compact(false).get(60, TimeUnit.SECONDS)).isEqualTo(1);
      assertThat(sealedCodes(a))
          .as("40M points in 70% of the slice: 16 bytes, where half of it held 8")
          .containsExactly(16);
      memory.points(other, 0);
      assertThat(a.compact(false).get(60, TimeUnit.SECONDS)).isEqualTo(1);
      assertThat(sealedCodes(a)).as("the other shard's points are gone").containsExactly(32);
      assertThat(sealedSizes(a)).as("recoded around its graph").containsExactly(501);
      assertThat(a.compact(false).get(60, TimeUnit.SECONDS)).as("recoded once").isZero();
      assertRecoded(a, first);
    } finally {
      compactions.shutdownNow();
    }
  }

  /**
   * Without another segment's codebook of the larger size, a recode trains one on the sample that
   * fits the build slice beside the new codes ({@link PqTrainer#trainingSampleWithin}): a slice too
   * small for the full sample still lets codes grow, one too small for the fewest points a codebook
   * is trained on does not.
   */
  @Test
  void codesGrowWithTheTrainingSampleTheBuildSliceHolds() throws Exception {
    long full = PqTrainer.trainingBytes(64);
    long least = PqTrainer.trainingBytes(64, PqTrainer.MIN_TRAINING_SAMPLE);
    for (long build : new long[] {full / 2, least / 2}) {
      Random r = TestSeeds.random("shard-memory-limits-grow-sample");
      MemoryLimits memory = new MemoryLimits(1L << 32, 1L << 30, 1L << 30, build);
      Object other = new Object();
      memory.points(other, 40_000_000);
      ExecutorService compactions = Executors.newSingleThreadExecutor();
      try (Shard a = openRecode("grow-" + build, recodeOptions(memory, quiet(compactions, 0)))) {
        sealFirst501(a, r);
        assertThat(sealedCodes(a)).containsExactly(8);
        memory.points(other, 0);
        boolean fits = build >= least;
        assertThat(a.compact(false).get(60, TimeUnit.SECONDS))
            .as("build slice of %d bytes, the full sample takes %d", build, full)
            .isEqualTo(fits ? 1 : 0);
        assertThat(sealedCodes(a)).containsExactly(fits ? 32 : 8);
      } finally {
        compactions.shutdownNow();
      }
    }
  }

  /**
   * Codes do not grow while writes go on: a pause shorter than the quiet time is part of a load.
   */
  @Test
  void codesDoNotGrowWhileWritesGoOn() throws Exception {
    Random r = TestSeeds.random("shard-memory-limits-grow-writes");
    MemoryLimits memory = new MemoryLimits(1L << 32, 1L << 30, 1L << 30, 1L << 30);
    Object other = new Object();
    memory.points(other, 40_000_000);
    ExecutorService compactions = Executors.newSingleThreadExecutor();
    Shard.Compaction waiting = quiet(compactions, TimeUnit.HOURS.toNanos(1));
    try (Shard a = openRecode("grow-writes", recodeOptions(memory, waiting))) {
      sealFirst501(a, r);
      memory.points(other, 0);
      assertThat(a.compact(false).get(60, TimeUnit.SECONDS)).isZero();
      assertThat(sealedCodes(a)).containsExactly(8);
    } finally {
      compactions.shutdownNow();
    }
  }

  /** Seals at 500 points, builds on the caller's thread, compacts as {@code compaction} says. */
  private static Shard.Options recodeOptions(MemoryLimits memory, Shard.Compaction compaction) {
    return new Shard.Options(
            500, Wal.Options.defaults(), FileIO.DEFAULT, Runnable::run, 64, compaction)
        .withMemory(memory);
  }

  private Shard openRecode(String name, Shard.Options options) {
    return Shard.open(tmp.resolve(name), 0, 64, Distance.EUCLID, IndexParams.DEFAULT, options);
  }

  /** Upserts 501 points of 64 dimensions and one more, which seals them; returns the first. */
  private float[] sealFirst501(Shard a, Random r) {
    float[] first = upsert(a, r, 501, 64).get(0).vector();
    upsert(a, r, 1, 64); // seals the first 501
    return first;
  }

  /** Compactions only on request, raw segments (and growing codes) waiting {@code nanos}. */
  private static Shard.Compaction quiet(ExecutorService compactions, long nanos) {
    return new Shard.Compaction(
            compactions, null, 0.2, 10, Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS, false)
        .withRawQuietNanos(nanos);
  }

  /**
   * A crash at any durable step of a recode loses nothing: the shard reopens with the segment's old
   * codes or its new ones, every point and the deletion in place.
   */
  @ParameterizedTest
  @EnumSource(
      value = CrashPoint.class,
      names = {
        "SEGMENT_BUILD_FILES_WRITTEN",
        "SEGMENT_BUILD_RENAMED",
        "COMPACTION_BUILT",
        "COMPACTION_COMMITTED"
      })
  void aCrashDuringARecodeLosesNothing(CrashPoint point) throws Exception {
    int dim = 64;
    Random r = TestSeeds.random("shard-memory-limits-recode-crash-" + point);
    MemoryLimits memory = new MemoryLimits(1L << 32, 1L << 30, 1L << 30, 1L << 30);
    Object other = new Object();
    CrashSimulatingFileIO io = new CrashSimulatingFileIO();
    Shard.Compaction compaction =
        new Shard.Compaction(
            Runnable::run, null, 0.2, 10, Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS, false);
    Path dir = tmp.resolve("recode-crash");
    Shard a =
        Shard.open(
            dir,
            0,
            dim,
            Distance.EUCLID,
            IndexParams.DEFAULT,
            new Shard.Options(500, Wal.Options.defaults(), io, Runnable::run, 64, compaction)
                .withMemory(memory));
    float[] first = upsert(a, r, 501, dim).get(0).vector();
    upsert(a, r, 1, dim);
    a.awaitDurable(a.delete(List.of(PointId.of(7))));
    a.flush();
    memory.points(other, 40_000_000);
    memory.checkResident(other, 900L << 20, null);
    io.armCrashPoint(point, 1);
    Throwable halted = null;
    try {
      a.compact(false).get(60, TimeUnit.SECONDS);
    } catch (Throwable t) {
      halted = t;
    }
    assertThat(halted).as("the recode stopped at %s", point).isNotNull();
    assertThat(io.haltedAt()).isEqualTo(point);
    io.crash(r);
    try {
      a.close();
    } catch (Exception | Error e) {
      // the process is dead: its close reaches no file
    }
    memory.checkResident(a, 0, null);
    memory.checkResident(other, 0, null);
    try (Shard b =
        Shard.open(
            dir,
            0,
            dim,
            Distance.EUCLID,
            IndexParams.DEFAULT,
            new Shard.Options(500, Wal.Options.defaults(), FileIO.DEFAULT, Runnable::run, 64)
                .withMemory(memory))) {
      // the 501 points sealed first, with their old codes or their new ones (the recovery may seal
      // the growing segment's point beside them)
      List<Integer> codes = new ArrayList<>();
      for (Segment seg : b.snapshot().segments()) {
        if (seg instanceof io.flashvec.index.segment.SealedSegment sealed && seg.size() >= 500) {
          codes.add(sealed.codebook().subspaces());
        }
      }
      assertThat(codes).hasSize(1);
      if (point == CrashPoint.COMPACTION_COMMITTED) {
        assertThat(codes).as("committed before the crash").containsExactly(8);
      } else {
        assertThat(codes.get(0)).isIn(8, 32);
      }
      assertRecoded(b, first);
    }
  }

  private static void assertRecoded(Shard a, float[] first) {
    assertThat(a.count()).isEqualTo(501);
    assertThat(a.get(PointId.of(7), false, true)).as("deleted before the recode").isNull();
    assertThat(a.get(PointId.of(8), false, true)).isNotNull();
    List<io.flashvec.index.Record> hits =
        Searches.search(
            a, first, 1, new io.flashvec.index.SearchParams(0, 0, 0, true), null, false, false);
    assertThat(hits).extracting(io.flashvec.index.Record::id).containsExactly(PointId.of(0));
  }

  private static List<Integer> sealedCodes(Shard s) {
    List<Integer> codes = new ArrayList<>();
    for (Segment seg : s.snapshot().segments()) {
      if (seg instanceof io.flashvec.index.segment.SealedSegment sealed && sealed.hasGraph()) {
        codes.add(sealed.codebook().subspaces());
      }
    }
    return codes;
  }

  private static Shard.Options residentOptions(MemoryLimits memory) {
    return new Shard.Options(500, Wal.Options.defaults(), FileIO.DEFAULT, Runnable::run, 64)
        .withMemory(memory);
  }

  @Test
  void withoutLimitsTheConfiguredThresholdHolds() throws Exception {
    Random r = TestSeeds.random("shard-memory-limits-none");
    Shard.Options options =
        new Shard.Options(3000, Wal.Options.defaults(), FileIO.DEFAULT).withMemory(null);
    try (Shard a = open("none", options)) {
      for (int i = 0; i < 16; i++) {
        upsert(a, r, 512);
      }
      assertThat(sealedSizes(a)).containsExactly(3072, 3072);
    }
  }
}
