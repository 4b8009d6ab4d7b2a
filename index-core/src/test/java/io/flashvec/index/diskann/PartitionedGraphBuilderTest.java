package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.index.segment.BuildSpec;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A build larger than its memory budget is cut into overlapping partitions: the graph it writes
 * searches as well as a one-shot build's, no partition exceeds its cap, the output is a function of
 * the input and the seed, deleted points are absent, and a cancelled build leaves no files.
 */
@ExtendWith(TestSeeds.Reporter.class)
class PartitionedGraphBuilderTest {

  private static final IndexParams PARAMS = new IndexParams("diskann", 32, 64, 1.2f, 0);

  /** A budget no test build reaches: the one-shot build. */
  private static final long UNBOUNDED = 1L << 40;

  @TempDir Path tmp;

  private final List<ForkJoinPool> pools = new ArrayList<>();

  @AfterEach
  void tearDown() {
    pools.forEach(ForkJoinPool::shutdownNow);
  }

  private ForkJoinPool pool(int threads) {
    ForkJoinPool p = new ForkJoinPool(threads);
    pools.add(p);
    return p;
  }

  /**
   * A budget whose partitions hold {@code cap} points in a build of {@code n} points: their graphs
   * and what the build holds beside them (the PQ codes, for Dot each point's centre product).
   */
  private static long budgetForCap(int dim, int cap, int n, Distance d) {
    return cap
            * PartitionedGraphBuilder.bytesPerPoint(
                dim, PartitionedGraphBuilder.partitionDegree(PARAMS.maxDegree()))
        + PartitionedGraphBuilder.heldBytes(n, Math.min(dim, PqTrainer.defaultSubspaces(dim)), d);
  }

  private static GrowingSegment segment(float[][] data, int dim, Distance d) {
    GrowingSegment g = new GrowingSegment(0, dim, null, d, 100);
    for (int i = 0; i < data.length; i++) {
      g.append(
          PointId.of(i),
          d.prepare(data[i]),
          ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8));
    }
    g.freeze();
    return g;
  }

  private static BuildSpec spec(
      Path dir, int id, GrowingSegment src, int[] ords, Distance d, ForkJoinPool pool) {
    return new BuildSpec(
        FileIO.DEFAULT,
        dir,
        id,
        List.of(src),
        List.<int[]>of(ords),
        src.dimension(),
        d,
        PARAMS,
        pool,
        null);
  }

  private static int[] all(int n) {
    int[] a = new int[n];
    Arrays.setAll(a, i -> i);
    return a;
  }

  /**
   * Points around {@code clusters} Gaussian centres with unit noise in every dimension: the full
   * dimension is intrinsic, so a graph's recall at a short search list is well below 1 and
   * differences between graphs show.
   */
  static float[][] clustered(Random r, int n, int dim, int clusters) {
    float[][] centres = new float[clusters][dim];
    for (float[] c : centres) {
      for (int j = 0; j < dim; j++) {
        c[j] = (float) (2 * r.nextGaussian());
      }
    }
    float[][] out = new float[n][dim];
    for (float[] v : out) {
      float[] c = centres[r.nextInt(clusters)];
      for (int j = 0; j < dim; j++) {
        v[j] = c[j] + (float) r.nextGaussian();
      }
    }
    return out;
  }

  /** The ids of the exact best {@code k} points of {@code data} for each query. */
  private static int[][] truth(float[][] data, float[][] queries, Distance d, int k) {
    float[][] prepared = new float[data.length][];
    Arrays.setAll(prepared, i -> d.prepare(data[i]));
    int[][] out = new int[queries.length][];
    for (int q = 0; q < queries.length; q++) {
      float[] query = d.prepare(queries[q]);
      // best k by score, kept sorted worst-first at index 0 (a small insertion list)
      int[] ids = new int[k];
      float[] keys = new float[k];
      int filled = 0;
      for (int i = 0; i < prepared.length; i++) {
        float sc = d.score(query, prepared[i], 0);
        float key = d.higherIsBetter() ? sc : -sc; // higher key is better
        if (filled == k && key <= keys[0]) {
          continue;
        }
        int at;
        if (filled < k) {
          at = filled++;
          while (at > 0 && keys[at - 1] > key) {
            keys[at] = keys[at - 1];
            ids[at] = ids[at - 1];
            at--;
          }
        } else {
          at = 0;
          while (at + 1 < k && keys[at + 1] < key) {
            keys[at] = keys[at + 1];
            ids[at] = ids[at + 1];
            at++;
          }
        }
        keys[at] = key;
        ids[at] = i;
      }
      out[q] = ids;
    }
    return out;
  }

  /** Recall@10 of {@code seg} at search list {@code searchList} against {@code truth}. */
  private static double recall(
      DiskAnnSegment seg, float[][] queries, int[][] truth, Distance d, int searchList) {
    int k = 10;
    int hits = 0;
    for (int q = 0; q < queries.length; q++) {
      Set<Integer> expected = new HashSet<>();
      for (int id : truth[q]) {
        expected.add(id);
      }
      TopK approx = new TopK(d, k);
      Searches.search(
          seg, d.prepare(queries[q]), new SearchParams(searchList, 0, 0, false), approx, 0);
      float[] s = new float[k];
      int[] slot = new int[k];
      int[] ord = new int[k];
      int got = approx.drainBestFirst(s, slot, ord);
      for (int i = 0; i < got; i++) {
        if (expected.contains((int) seg.idAt(ord[i]).loBits())) {
          hits++;
        }
      }
    }
    return hits / (double) (queries.length * k);
  }

  @Test
  void partitionedRecallMatchesOneShotAndNoPartitionExceedsItsCap() throws IOException {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.recall");
    int n = 50_000;
    int dim = 32;
    int nq = 1000;
    float[][] all = clustered(r, n + nq, dim, 64);
    float[][] data = Arrays.copyOf(all, n);
    float[][] queries = Arrays.copyOfRange(all, n, n + nq);
    Distance d = Distance.EUCLID;
    GrowingSegment src = segment(data, dim, d);

    Path oneDir = tmp.resolve("one-shot");
    DiskAnnWriter.write(spec(oneDir, 1, src, all(n), d, null), UNBOUNDED);
    Path partDir = tmp.resolve("partitioned");
    int cap = 11_000;
    AtomicReference<PartitionedGraphBuilder> built = new AtomicReference<>();
    DiskAnnWriter.write(
        spec(partDir, 2, src, all(n), d, null), budgetForCap(dim, cap, n, d), 42, built::set);

    PartitionedGraphBuilder b = built.get();
    assertThat(b).as("the build was partitioned").isNotNull();
    assertThat(b.partitions()).isGreaterThanOrEqualTo(8);
    assertThat(b.cap()).isEqualTo(cap);
    int[] sizes = b.partitionSizes();
    assertThat(sizes).hasSize(b.partitions() + 1);
    assertThat(Arrays.stream(sizes).max().orElseThrow()).isLessThanOrEqualTo(cap);
    assertThat(Arrays.stream(sizes, 0, b.partitions()).sum())
        .as("two copies of every point")
        .isEqualTo(2 * n);
    assertThat(sizes[b.partitions()]).as("navigation partition").isEqualTo(Math.min(cap, n / 4));

    try (DiskAnnSegment one = DiskAnnSegment.open(FileIO.DEFAULT, oneDir, 1, 40);
        DiskAnnSegment part = DiskAnnSegment.open(FileIO.DEFAULT, partDir, 2, 40)) {
      assertThat(part.size()).isEqualTo(n);
      int[] ordOf = DiskAnnSegmentTest.ordinalOf(part);
      for (int i = 0; i < n; i += 997) {
        assertThat(part.idAt(ordOf[i])).isEqualTo(PointId.of(i));
        assertThat(part.vectorAt(ordOf[i])).containsExactly(data[i]);
        assertThat(new String(part.payloadAt(ordOf[i]), StandardCharsets.UTF_8))
            .isEqualTo("{\"i\":" + i + "}");
      }
      int[][] truth = truth(data, queries, d, 10);
      double oneShot = recall(one, queries, truth, d, 40);
      double partitioned = recall(part, queries, truth, d, 40);
      System.out.printf(
          Locale.ROOT,
          "[flashvec] recall@10 L=40 %d x %d: one-shot %.4f, partitioned (P=%d, cap=%d) %.4f%n",
          n,
          dim,
          oneShot,
          b.partitions(),
          cap,
          partitioned);
      assertThat(partitioned).isGreaterThanOrEqualTo(oneShot - 0.005);
    }
    assertThat(tmp.resolve("partitioned.tmp")).doesNotExist();
  }

  @ParameterizedTest
  @EnumSource(
      value = Distance.class,
      names = {"COSINE", "DOT"})
  void otherMetricsSearchAsWellAsOneShot(Distance d) throws IOException {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.metric-" + d);
    int n = 8_000;
    int dim = 16;
    int nq = 300;
    float[][] all = clustered(r, n + nq, dim, 16);
    float[][] data = Arrays.copyOf(all, n);
    float[][] queries = Arrays.copyOfRange(all, n, n + nq);
    GrowingSegment src = segment(data, dim, d);
    Path oneDir = tmp.resolve("one");
    DiskAnnWriter.write(spec(oneDir, 1, src, all(n), d, null), UNBOUNDED);
    Path partDir = tmp.resolve("part");
    AtomicReference<PartitionedGraphBuilder> built = new AtomicReference<>();
    DiskAnnWriter.write(
        spec(partDir, 2, src, all(n), d, null), budgetForCap(dim, 2_000, n, d), 7, built::set);
    assertThat(built.get().partitions()).isGreaterThanOrEqualTo(8);
    int[][] truth = truth(data, queries, d, 10);
    // Graphs compared with exact scores in the beam (the in-memory mode): at 8,000 × 16 with
    // 16-byte codes the PQ-guided beam's recall swings by several points with the codebook's
    // training, which would hide the graphs' difference. The PQ figures are printed beside them.
    double[] exact = new double[2];
    double[] pq = new double[2];
    Path[] dirs = {oneDir, partDir};
    for (int i = 0; i < 2; i++) {
      try (DiskAnnSegment seg =
          DiskAnnSegment.open(FileIO.DEFAULT, dirs[i], i + 1, 40, true, DiskAnnSettings.DEFAULT)) {
        exact[i] = recall(seg, queries, truth, d, 40);
      }
      try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dirs[i], i + 1, 40)) {
        pq[i] = recall(seg, queries, truth, d, 40);
      }
    }
    System.out.printf(
        Locale.ROOT,
        "[flashvec] recall@10 L=40 %s %d x %d: exact beam one-shot %.4f, partitioned %.4f;"
            + " PQ beam one-shot %.4f, partitioned %.4f%n",
        d,
        n,
        dim,
        exact[0],
        exact[1],
        pq[0],
        pq[1]);
    assertThat(exact[1]).isGreaterThanOrEqualTo(exact[0] - 0.01);
  }

  @Test
  void theSampleAndTheCodesComeOutOfTheBudget() {
    // the training's copies of the sample take at most half the budget, within [8,192, 50,000]
    long budget = 58L << 20;
    int s96 = PartitionedGraphBuilder.sampleSize(2_000_000, 96, budget);
    assertThat((long) s96 * 96 * Float.BYTES * PartitionedGraphBuilder.TRAINING_COPIES)
        .isLessThanOrEqualTo(budget / 2);
    assertThat(s96).isBetween(20_000, PartitionedGraphBuilder.SAMPLE);
    assertThat(PartitionedGraphBuilder.sampleSize(2_000_000, 1536, budget))
        .isEqualTo(PartitionedGraphBuilder.MIN_SAMPLE);
    assertThat(PartitionedGraphBuilder.sampleSize(5_000, 96, budget)).isEqualTo(5_000);
    assertThat(PartitionedGraphBuilder.sampleSize(2_000_000, 96, 1L << 40))
        .isEqualTo(PartitionedGraphBuilder.SAMPLE);
    // codes are held through the whole build; Dot also keeps a float a point
    assertThat(PartitionedGraphBuilder.heldBytes(1_000, 12, Distance.COSINE)).isEqualTo(12_000);
    assertThat(PartitionedGraphBuilder.heldBytes(1_000, 12, Distance.DOT)).isEqualTo(16_000);
  }

  @Test
  void aPartitionedMergeOfSeveralSourcesKeepsEachPointsIdPayloadAndVector() throws IOException {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.sources");
    int dim = 16;
    Distance d = Distance.EUCLID;
    // UUIDs with payloads, an empty source, numeric ids with and without payloads
    GrowingSegment a = new GrowingSegment(0, dim, null, d, 100);
    GrowingSegment empty = new GrowingSegment(1, dim, null, d, 100);
    GrowingSegment c = new GrowingSegment(2, dim, null, d, 100);
    java.util.Map<PointId, float[]> vectors = new java.util.HashMap<>();
    java.util.Map<PointId, String> payloads = new java.util.HashMap<>();
    for (int i = 0; i < 2_500; i++) {
      PointId id = PointId.of(new java.util.UUID(r.nextLong(), r.nextLong()));
      float[] v = d.prepare(TestVectors.gaussian(r, dim));
      String p = "{\"a\":" + i + "}";
      a.append(id, v, p.getBytes(StandardCharsets.UTF_8));
      vectors.put(id, v);
      payloads.put(id, p);
    }
    for (int i = 0; i < 3_500; i++) {
      PointId id = PointId.of(1_000_000L + i);
      float[] v = d.prepare(TestVectors.gaussian(r, dim));
      String p = i % 3 == 0 ? null : "{\"c\":" + i + "}";
      c.append(id, v, p == null ? null : p.getBytes(StandardCharsets.UTF_8));
      vectors.put(id, v);
      payloads.put(id, p);
    }
    a.freeze();
    empty.freeze();
    c.freeze();
    int[] fromC = new int[3_000]; // leave 500 out, as a merge drops deleted points
    Arrays.setAll(fromC, i -> i + 500);
    for (int i = 0; i < 500; i++) {
      vectors.remove(c.idAt(i));
    }
    int n = 2_500 + fromC.length;
    Path dir = tmp.resolve("merged");
    AtomicReference<PartitionedGraphBuilder> built = new AtomicReference<>();
    DiskAnnWriter.write(
        new BuildSpec(
            FileIO.DEFAULT,
            dir,
            7,
            List.of(a, empty, c),
            List.of(all(2_500), new int[0], fromC),
            dim,
            d,
            PARAMS,
            null,
            null),
        budgetForCap(dim, 1_500, n, d),
        3,
        built::set);
    assertThat(built.get()).as("the build was partitioned").isNotNull();
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 7, 40)) {
      assertThat(seg.size()).isEqualTo(n);
      java.util.Set<PointId> seen = new HashSet<>();
      for (int o = 0; o < n; o++) {
        PointId id = seg.idAt(o);
        assertThat(vectors).as("ordinal %d", o).containsKey(id);
        assertThat(seen.add(id)).isTrue();
        assertThat(seg.vectorAt(o)).containsExactly(vectors.get(id));
        byte[] p = seg.payloadAt(o);
        assertThat(p == null ? null : new String(p, StandardCharsets.UTF_8))
            .isEqualTo(payloads.get(id));
      }
    }
  }

  @Test
  void eachInputPointIsFoundInItsSource() {
    // sources of 3, 0, 0 and 2 points
    int[] starts = {0, 3, 3, 3, 5};
    int[] expected = {0, 0, 0, 3, 3};
    for (int i = 0; i < expected.length; i++) {
      assertThat(DiskAnnWriter.sourceOf(starts, i)).as("point %d", i).isEqualTo(expected[i]);
    }
    assertThat(DiskAnnWriter.sourceOf(new int[] {0, 0, 4}, 2)).isEqualTo(1);
  }

  @Test
  void theSameSeedWritesTheSameFiles() throws IOException {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.deterministic");
    int n = 6_000;
    int dim = 16;
    GrowingSegment src = segment(TestVectors.latent(r, n, dim), dim, Distance.EUCLID);
    long budget = budgetForCap(dim, 1_500, n, Distance.EUCLID);
    Path a = tmp.resolve("a/seg-3");
    Path b = tmp.resolve("b/seg-3");
    Path c = tmp.resolve("c/seg-3");
    Files.createDirectories(a.getParent());
    Files.createDirectories(b.getParent());
    Files.createDirectories(c.getParent());
    DiskAnnWriter.write(spec(a, 3, src, all(n), Distance.EUCLID, pool(1)), budget, 5, null);
    DiskAnnWriter.write(spec(b, 3, src, all(n), Distance.EUCLID, pool(1)), budget, 5, null);
    DiskAnnWriter.write(spec(c, 3, src, all(n), Distance.EUCLID, pool(1)), budget, 6, null);
    for (String f :
        List.of(DiskAnnFormat.GRAPH_FILE, DiskAnnFormat.PQ_FILE, DiskAnnFormat.META_FILE)) {
      assertThat(Files.readAllBytes(a.resolve(f)))
          .as("%s of the same seed", f)
          .isEqualTo(Files.readAllBytes(b.resolve(f)));
    }
    assertThat(Files.readAllBytes(a.resolve(DiskAnnFormat.GRAPH_FILE)))
        .as("another seed partitions differently")
        .isNotEqualTo(Files.readAllBytes(c.resolve(DiskAnnFormat.GRAPH_FILE)));
  }

  /** The progress a partitioned build reports moves forward through its phases to its points. */
  @Test
  void aPartitionedBuildReportsItsProgressInPoints() throws IOException {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.progress");
    int n = 6_000;
    int dim = 16;
    GrowingSegment src = segment(TestVectors.latent(r, n, dim), dim, Distance.EUCLID);
    java.util.concurrent.atomic.AtomicLong progress =
        new java.util.concurrent.atomic.AtomicLong(-1);
    List<Long> seen = new ArrayList<>();
    // the build polls its cancellation often, in every phase: sample the progress there
    BooleanSupplier sampler =
        () -> {
          synchronized (seen) {
            seen.add(progress.get());
          }
          return false;
        };
    BuildSpec s = spec(tmp.resolve("seg-8"), 8, src, all(n), Distance.EUCLID, pool(1));
    AtomicReference<PartitionedGraphBuilder> built = new AtomicReference<>();
    DiskAnnWriter.write(
        new BuildSpec(
            s.io(),
            s.dir(),
            s.segmentId(),
            s.sources(),
            s.ords(),
            s.dimension(),
            s.distance(),
            s.params(),
            s.pool(),
            sampler,
            progress),
        budgetForCap(dim, 1_500, n, Distance.EUCLID),
        5,
        built::set);
    assertThat(built.get().partitions()).isGreaterThan(1);
    assertThat(progress.get()).as("done: every point").isEqualTo(n);
    List<Long> reported = seen.stream().filter(v -> v >= 0).toList();
    assertThat(seen.getFirst()).as("nothing reported before the partitions").isEqualTo(-1);
    assertThat(reported).as("never backwards").isSorted();
    assertThat(reported.stream().filter(v -> v > 0.05 * n && v < 0.75 * n).count())
        .as("partitions reported as they are built")
        .isPositive();
    assertThat(reported.stream().filter(v -> v > 0.85 * n && v < n).count())
        .as("the page-order rewrite reported as it writes")
        .isPositive();
  }

  @Test
  void partitionsBuiltAtOnceWriteWhatOneAfterAnotherWrites() throws IOException {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.concurrent");
    int n = 8_000;
    int dim = 16;
    GrowingSegment src = segment(TestVectors.latent(r, n, dim), dim, Distance.COSINE);
    int floor = PartitionedGraphBuilder.concurrentCapFloor;
    try {
      // a budget for 4,000 points: two partitions of 2,000 at once on two threads ...
      PartitionedGraphBuilder.concurrentCapFloor = 1_000;
      Path atOnce = tmp.resolve("at-once/seg-6");
      Files.createDirectories(atOnce.getParent());
      AtomicReference<PartitionedGraphBuilder> built = new AtomicReference<>();
      DiskAnnWriter.write(
          spec(atOnce, 6, src, all(n), Distance.COSINE, pool(2)),
          budgetForCap(dim, 4_000, n, Distance.COSINE),
          11,
          built::set);
      assertThat(built.get().concurrent()).isEqualTo(2);
      assertThat(built.get().cap()).isEqualTo(2_000);
      assertThat(Arrays.stream(built.get().partitionSizes()).max().orElseThrow())
          .isLessThanOrEqualTo(2_000);
      // ... against partitions of 2,000 one after another
      PartitionedGraphBuilder.concurrentCapFloor = Integer.MAX_VALUE;
      Path oneByOne = tmp.resolve("one-by-one/seg-6");
      Files.createDirectories(oneByOne.getParent());
      DiskAnnWriter.write(
          spec(oneByOne, 6, src, all(n), Distance.COSINE, pool(2)),
          budgetForCap(dim, 2_000, n, Distance.COSINE),
          11,
          built::set);
      assertThat(built.get().concurrent()).isEqualTo(1);
      for (String f : List.of(DiskAnnFormat.GRAPH_FILE, DiskAnnFormat.PQ_FILE)) {
        assertThat(Files.readAllBytes(atOnce.resolve(f)))
            .as("%s built two partitions at a time", f)
            .isEqualTo(Files.readAllBytes(oneByOne.resolve(f)));
      }
    } finally {
      PartitionedGraphBuilder.concurrentCapFloor = floor;
    }
  }

  @Test
  void concurrencyIsBoundedByThreadsAndByTheBudgetShare() {
    int floor = PartitionedGraphBuilder.concurrentCapFloor;
    assertThat(PartitionedGraphBuilder.concurrentPartitions(32, 10L * floor)).isEqualTo(10);
    assertThat(PartitionedGraphBuilder.concurrentPartitions(32, 100L * floor)).isEqualTo(32);
    assertThat(PartitionedGraphBuilder.concurrentPartitions(2, floor - 1L)).isEqualTo(1);
    assertThat(PartitionedGraphBuilder.concurrentPartitions(1, 100L * floor)).isEqualTo(1);
  }

  @Test
  void aBuildThatFitsIsPartitionedOnlyToUseMoreThreadsForOneWriterGraphs() {
    int n = 4 * PartitionedGraphBuilder.concurrentCapFloor;
    IndexParams p = IndexParams.DEFAULT;
    assertThat(DiskAnnWriter.partitionsForThreads(n, 96, Distance.COSINE, p, pool(2), UNBOUNDED))
        .isTrue();
    assertThat(DiskAnnWriter.partitionsForThreads(n, 96, Distance.EUCLID, p, pool(1), UNBOUNDED))
        .as("one thread")
        .isFalse();
    assertThat(DiskAnnWriter.partitionsForThreads(n, 96, Distance.DOT, p, pool(2), UNBOUNDED))
        .as("Dot builds with jvector's concurrent builder")
        .isFalse();
    assertThat(
            DiskAnnWriter.partitionsForThreads(n / 4, 96, Distance.COSINE, p, pool(2), UNBOUNDED))
        .as("below two partitions' floor")
        .isFalse();
    long onePartition =
        (long) PartitionedGraphBuilder.concurrentCapFloor
            * PartitionedGraphBuilder.bytesPerPoint(
                96, PartitionedGraphBuilder.partitionDegree(p.maxDegree()));
    assertThat(DiskAnnWriter.partitionsForThreads(n, 96, Distance.COSINE, p, pool(2), onePartition))
        .as("a budget for one partition at a time")
        .isFalse();
  }

  @Test
  void deletedOrdinalsAreAbsent() throws IOException {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.deleted");
    int n = 6_000;
    int dim = 16;
    float[][] data = TestVectors.latent(r, n, dim);
    GrowingSegment src = segment(data, dim, Distance.EUCLID);
    Set<Integer> deleted = new HashSet<>();
    for (int i = 0; i < n; i++) {
      if (r.nextInt(5) == 0) {
        src.markDeleted(i);
        deleted.add(i);
      }
    }
    int[] live = src.liveOrdinals();
    Path dir = tmp.resolve("seg");
    AtomicReference<PartitionedGraphBuilder> built = new AtomicReference<>();
    int written =
        DiskAnnWriter.write(
            spec(dir, 4, src, live, Distance.EUCLID, null),
            budgetForCap(dim, 1_500, live.length, Distance.EUCLID),
            9,
            built::set);
    assertThat(built.get()).isNotNull();
    assertThat(written).isEqualTo(n - deleted.size());
    int[] sizes = built.get().partitionSizes();
    assertThat(Arrays.stream(sizes, 0, built.get().partitions()).sum()).isEqualTo(2 * live.length);
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 4, 64)) {
      assertThat(seg.size()).isEqualTo(live.length);
      int[] order = seg.buildOrder(FileIO.DEFAULT);
      for (int ord = 0; ord < seg.size(); ord++) {
        int id = (int) seg.idAt(ord).loBits();
        assertThat(deleted).doesNotContain(id);
        assertThat(id).isEqualTo(live[order == null ? ord : order[ord]]);
      }
      for (int del : deleted.stream().limit(20).toList()) {
        TopK top = new TopK(Distance.EUCLID, 5);
        Searches.search(seg, data[del], SearchParams.DEFAULT, top, 0);
        float[] s = new float[5];
        int[] slot = new int[5];
        int[] ord = new int[5];
        int got = top.drainBestFirst(s, slot, ord);
        assertThat(got).isEqualTo(5);
        for (int i = 0; i < got; i++) {
          assertThat(deleted).doesNotContain((int) seg.idAt(ord[i]).loBits());
        }
      }
    }
  }

  @Test
  void aCancelledBuildLeavesNoFiles() throws IOException {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.cancel");
    int n = 6_000;
    int dim = 16;
    GrowingSegment src = segment(TestVectors.latent(r, n, dim), dim, Distance.EUCLID);
    long budget = budgetForCap(dim, 1_500, n, Distance.EUCLID);
    // cancelled once the scratch files of each stage exist: spilled vectors, partition edges
    for (String stage : List.of("part-0.vec", "part-1.adj", "graph.fvg")) {
      Path dir = tmp.resolve("seg-" + stage);
      Path tmpDir = tmp.resolve("seg-" + stage + ".tmp");
      Path scratch =
          stage.equals("graph.fvg")
              ? tmpDir.resolve(stage)
              : tmpDir.resolve(DiskAnnWriter.WORK_DIR).resolve(stage);
      boolean[] seen = new boolean[1];
      BooleanSupplier cancel =
          () -> {
            seen[0] |= Files.exists(scratch);
            return seen[0];
          };
      BuildSpec s = spec(dir, 5, src, all(n), Distance.EUCLID, null).withCancelled(cancel);
      assertThatThrownBy(() -> DiskAnnWriter.write(s, budget, 1, null))
          .as("cancelled at %s", stage)
          .isInstanceOf(CancellationException.class);
      assertThat(seen[0]).as("the build reached %s", stage).isTrue();
      assertThat(dir).doesNotExist();
      assertThat(tmpDir).doesNotExist();
    }
    try (Stream<Path> left = Files.list(tmp)) {
      assertThat(left).isEmpty();
    }
  }

  @Test
  void aBudgetBelowOnePartitionIsRefusedNamingIt() {
    Random r = TestSeeds.random("PartitionedGraphBuilderTest.tiny");
    int dim = 16;
    GrowingSegment src = segment(TestVectors.latent(r, 2_000, dim), dim, Distance.EUCLID);
    Path dir = tmp.resolve("seg");
    assertThatThrownBy(
            () ->
                DiskAnnWriter.write(
                    spec(dir, 6, src, all(2_000), Distance.EUCLID, null), 10_000, 1, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("budget=10000");
    assertThat(dir).doesNotExist();
    assertThat(tmp.resolve("seg.tmp")).doesNotExist();
  }
}
