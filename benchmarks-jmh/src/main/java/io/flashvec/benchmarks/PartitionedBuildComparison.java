package io.flashvec.benchmarks;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.diskann.DiskAnnSegment;
import io.flashvec.index.diskann.DiskAnnWriter;
import io.flashvec.index.internal.VectorOps;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.segment.BuildSpec;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One-shot against partitioned segment builds (ADR 0026): builds the same points once with an
 * unbounded build memory and once with a budget of a fraction of what the one-shot build needs,
 * then prints each build's time, the peak heap above the baseline while it ran (sampled every 2 ms,
 * so an upper bound that includes garbage not yet collected), and recall@10 against brute force at
 * several search lists. A main method rather than a JMH benchmark: a build is one long operation,
 * and recall is the figure.
 *
 * <p>Usage: {@code java --add-modules jdk.incubator.vector -cp benchmarks.jar
 * io.flashvec.benchmarks.PartitionedBuildComparison [points] [dim] [budgetFraction] [dir] [builds]}
 * (defaults: 200000, 96, 0.25, a temporary directory, {@code both}; {@code partitioned} or {@code
 * one-shot} runs only that build; {@code floors=50000,20000} runs one partitioned build per floor
 * of the points a partition may be cut to so that several are built at once; {@code codes=4,8,32}
 * one partitioned build per PQ code size, then the graph of the largest size recoded to each
 * smaller one, which separates what codes cost a build from what they cost a search; {@code
 * eval=10,14} only searches segments a run left in {@code dir}, by id; {@code recode=13:12,24}
 * recodes such a segment to each size and searches it). Each build also prints the CPU time of the
 * whole process while it ran. Data: {@link SyntheticVectors} with {@link AbstractBenchmark#SEED},
 * cosine.
 */
public final class PartitionedBuildComparison {

  private static final int K = 10;
  private static final int QUERIES = 500;
  private static final int[] SEARCH_LISTS = {20, 40, 100};
  private static final IndexParams PARAMS = IndexParams.DEFAULT;
  private static final Distance DISTANCE = Distance.COSINE;

  private PartitionedBuildComparison() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int dim = args.length > 1 ? Integer.parseInt(args[1]) : 96;
    double fraction = args.length > 2 ? Double.parseDouble(args[2]) : 0.25;
    Path dir =
        args.length > 3 ? Path.of(args[3]) : Files.createTempDirectory("flashvec-partitioned");
    SyntheticVectors model = new SyntheticVectors(AbstractBenchmark.SEED, dim);
    float[][] data = model.sample(n, 1);
    float[][] queries = model.sample(QUERIES, 2);
    GrowingSegment src = new GrowingSegment(0, dim, null, DISTANCE, 100);
    for (int i = 0; i < n; i++) {
      src.append(PointId.of(i), data[i], null);
    }
    src.freeze();
    int[] ords = new int[n];
    java.util.Arrays.setAll(ords, i -> i);
    int[][] truth = truth(data, queries);
    long oneShotBytes = (long) Math.ceil(1.1 * (4.0 * dim + 9.6 * PARAMS.maxDegree() + 96)) * n;
    long budget = (long) (oneShotBytes * fraction);
    System.out.printf(
        Locale.ROOT,
        "points=%d dim=%d R=%d L_build=%d one-shot estimate=%d MB budget=%d MB (%.2f) threads=%d%n",
        n,
        dim,
        PARAMS.maxDegree(),
        PARAMS.buildSearchList(),
        oneShotBytes >> 20,
        budget >> 20,
        fraction,
        Runtime.getRuntime().availableProcessors());
    String builds = args.length > 4 ? args[4] : "both";
    if (builds.startsWith("eval=")) {
      // searches segments an earlier run of this class left in dir, by id
      for (String i : builds.substring("eval=".length()).split(",")) {
        int id = Integer.parseInt(i);
        System.out.printf(
            Locale.ROOT, "seg-%d:%s%n", id, recalls(dir.resolve("seg-" + id), id, queries, truth));
      }
      return;
    }
    if (builds.startsWith("recode=")) {
      // recode=ID:B,B,...: recodes segment ID a run left in dir (its codes taken as the largest)
      String[] spec = builds.substring("recode=".length()).split(":");
      int graphId = Integer.parseInt(spec[0]);
      int[] sizes =
          java.util.Arrays.stream(spec[1].split(",")).mapToInt(Integer::parseInt).toArray();
      recodeEach(dir, graphId, Integer.MAX_VALUE, sizes, 100 + graphId * 10, queries, truth);
      return;
    }
    if (builds.startsWith("codes=")) {
      codes(builds.substring("codes=".length()), src, ords, dir, budget, queries, truth);
      return;
    }
    if (builds.startsWith("floors=")) {
      // partitioned builds side by side, one per floor of the points a partition may be cut to so
      // that several are built at once (PartitionedGraphBuilder.concurrentCapFloor)
      java.lang.reflect.Field floor =
          Class.forName("io.flashvec.index.diskann.PartitionedGraphBuilder")
              .getDeclaredField("concurrentCapFloor");
      floor.setAccessible(true);
      int id = 2;
      for (String f : builds.substring("floors=".length()).split(",")) {
        floor.setInt(null, Integer.parseInt(f));
        run(
            "partitioned floor=" + f,
            src,
            ords,
            dir.resolve("seg-" + id),
            id,
            budget,
            PARAMS,
            queries,
            truth);
        id++;
      }
      return;
    }
    if (!builds.equals("partitioned")) {
      run(
          "one-shot",
          src,
          ords,
          dir.resolve("seg-1"),
          1,
          Long.MAX_VALUE / 2,
          PARAMS,
          queries,
          truth);
    }
    if (!builds.equals("one-shot")) {
      run("partitioned", src, ords, dir.resolve("seg-2"), 2, budget, PARAMS, queries, truth);
    }
  }

  private static void run(
      String name,
      GrowingSegment src,
      int[] ords,
      Path segDir,
      int id,
      long budget,
      IndexParams params,
      float[][] queries,
      int[][] truth)
      throws IOException, InterruptedException {
    MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
    System.gc();
    Thread.sleep(200);
    long base = mem.getHeapMemoryUsage().getUsed();
    AtomicLong peak = new AtomicLong(base);
    AtomicBoolean done = new AtomicBoolean();
    Thread sampler =
        Thread.ofPlatform()
            .daemon(true)
            .start(
                () -> {
                  while (!done.get()) {
                    peak.accumulateAndGet(mem.getHeapMemoryUsage().getUsed(), Math::max);
                    try {
                      Thread.sleep(2);
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                });
    long t0 = System.nanoTime();
    long cpu0 = processCpuNanos();
    DiskAnnWriter.write(
        new BuildSpec(
            FileIO.DEFAULT,
            segDir,
            id,
            List.of(src),
            List.<int[]>of(ords),
            src.dimension(),
            DISTANCE,
            params,
            null,
            null),
        budget);
    long millis = (System.nanoTime() - t0) / 1_000_000;
    long cpuMillis = (processCpuNanos() - cpu0) / 1_000_000;
    done.set(true);
    sampler.join();
    String recalls = recalls(segDir, id, queries, truth);
    System.out.printf(
        Locale.ROOT,
        "%s: build %d ms, CPU %d ms (%.3f ms a point), peak heap above baseline %d MB,%s%n",
        name,
        millis,
        cpuMillis,
        cpuMillis / (double) ords.length,
        (peak.get() - base) >> 20,
        recalls);
  }

  /**
   * Separates what PQ codes of each size cost a graph's build (its partitions' edges are merged and
   * pruned by code distances) from what they cost its searches (navigated by code distances): one
   * partitioned build per code size, then the graph of the largest size recoded to each smaller one
   * ({@code DiskAnnWriter.recode}: the same graph, other codes), each searched.
   */
  private static void codes(
      String sizes,
      GrowingSegment src,
      int[] ords,
      Path dir,
      long budget,
      float[][] queries,
      int[][] truth)
      throws Exception {
    int[] bytes =
        java.util.Arrays.stream(sizes.split(",")).mapToInt(Integer::parseInt).sorted().toArray();
    int largest = bytes[bytes.length - 1];
    int id = 10;
    int largestId = 0;
    for (int b : bytes) {
      IndexParams p =
          new IndexParams(
              PARAMS.type(), PARAMS.maxDegree(), PARAMS.buildSearchList(), PARAMS.alpha(), b);
      run(
          "partitioned codes=" + b,
          src,
          ords,
          dir.resolve("seg-" + id),
          id,
          budget,
          p,
          queries,
          truth);
      if (b == largest) {
        largestId = id;
      }
      id++;
    }
    recodeEach(dir, largestId, largest, bytes, id, queries, truth);
  }

  /**
   * Recodes segment {@code graphId} (codes of {@code largest} bytes, skipped; {@code
   * Integer.MAX_VALUE}: none is) in {@code dir} to each size of {@code bytes} (as segments {@code
   * firstId}, {@code firstId + 1}, …) and searches each.
   */
  private static void recodeEach(
      Path dir,
      int graphId,
      int largest,
      int[] bytes,
      int firstId,
      float[][] queries,
      int[][] truth)
      throws Exception {
    int id = firstId;
    java.lang.reflect.Method recode =
        Class.forName("io.flashvec.index.diskann.DiskAnnWriter")
            .getDeclaredMethod(
                "recode",
                FileIO.class,
                Path.class,
                int.class,
                DiskAnnSegment.class,
                Distance.class,
                IndexParams.class,
                java.util.concurrent.ForkJoinPool.class,
                java.util.function.BooleanSupplier.class);
    recode.setAccessible(true);
    try (DiskAnnSegment graph =
        DiskAnnSegment.open(FileIO.DEFAULT, dir.resolve("seg-" + graphId), graphId, 100)) {
      for (int b : bytes) {
        if (b == largest) {
          continue;
        }
        IndexParams p =
            new IndexParams(
                PARAMS.type(), PARAMS.maxDegree(), PARAMS.buildSearchList(), PARAMS.alpha(), b);
        Path segDir = dir.resolve("seg-" + id);
        recode.invoke(
            null,
            FileIO.DEFAULT,
            segDir,
            id,
            graph,
            DISTANCE,
            p,
            java.util.concurrent.ForkJoinPool.commonPool(),
            BuildSpec.NEVER_CANCELLED);
        System.out.printf(
            Locale.ROOT,
            "seg-%d recoded to codes=%d:%s%n",
            graphId,
            b,
            recalls(segDir, id, queries, truth));
        id++;
      }
    }
  }

  private static String recalls(Path segDir, int id, float[][] queries, int[][] truth)
      throws IOException {
    StringBuilder recalls = new StringBuilder();
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, segDir, id, 100)) {
      for (int l : SEARCH_LISTS) {
        recalls.append(
            String.format(Locale.ROOT, " recall@10(L=%d)=%.4f", l, recall(seg, queries, truth, l)));
      }
    }
    return recalls.toString();
  }

  /** User and system CPU of this process so far, from {@code /proc/self/stat} (Linux). */
  private static long processCpuNanos() throws IOException {
    String stat = Files.readString(Path.of("/proc/self/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // fields 14 and 15 (utime, stime) counted from 1, in clock ticks of 10 ms
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
  }

  private static int[][] truth(float[][] data, float[][] queries) {
    int[][] out = new int[queries.length][];
    java.util.stream.IntStream.range(0, queries.length)
        .parallel()
        .forEach(
            q -> {
              TopK top = new TopK(DISTANCE, K);
              for (int i = 0; i < data.length; i++) {
                top.offer(VectorOps.dot(queries[q], 0, data[i], 0, data[i].length), 0, i);
              }
              int[] ord = new int[K];
              top.drainBestFirst(new float[K], new int[K], ord);
              out[q] = ord;
            });
    return out;
  }

  private static double recall(DiskAnnSegment seg, float[][] queries, int[][] truth, int l) {
    SearchParams params = new SearchParams(l, 0, 0, false);
    long hits = 0;
    for (int q = 0; q < queries.length; q++) {
      TopK top = new TopK(DISTANCE, K);
      seg.search(
          new PreparedSearch(
              new SearchRequest(queries[q], K, 0, null, params, false, false, null),
              queries[q],
              null,
              new SearchStats()),
          null,
          1.0,
          top,
          0);
      int[] ord = new int[K];
      int got = top.drainBestFirst(new float[K], new int[K], ord);
      for (int i = 0; i < got; i++) {
        // the segment numbers its points in its own (page-local) order: compare ids
        long id = seg.idAt(ord[i]).loBits();
        for (int t : truth[q]) {
          if (t == id) {
            hits++;
            break;
          }
        }
      }
    }
    return hits / (double) (queries.length * K);
  }
}
