package io.flashvec.index.diskann;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.disk.GraphFile;
import io.flashvec.index.disk.PageOrder;
import io.flashvec.index.disk.PqCodebook;
import io.flashvec.index.disk.PqCodes;
import io.flashvec.index.internal.VectorOps;
import io.flashvec.index.segment.LiveGraph;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.MappedFile;
import io.github.jbellis.jvector.graph.GraphIndexBuilder;
import io.github.jbellis.jvector.graph.ImmutableGraphIndex;
import io.github.jbellis.jvector.graph.ListRandomAccessVectorValues;
import io.github.jbellis.jvector.graph.NodesIterator;
import io.github.jbellis.jvector.graph.similarity.BuildScoreProvider;
import io.github.jbellis.jvector.util.PhysicalCoreExecutor;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import io.github.jbellis.jvector.vector.types.VectorTypeSupport;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ForkJoinPool;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;

/**
 * Builds a segment's graph within a memory budget, as DiskANN's build with a RAM budget does
 * ({@code build_merged_vamana_index}): the points are cut into overlapping partitions, each small
 * enough to build in memory, and the partitions' edges are unioned and pruned into one graph.
 *
 * <ol>
 *   <li><b>Sample.</b> A seeded, stratified sample of at most {@value #SAMPLE} points trains the PQ
 *       codebook ({@link PqTrainer#trainSeeded}) and the partition centroids ({@link KMeans}).
 *   <li><b>Partition.</b> {@code P} k-means centroids, {@code P} grown until the home points (those
 *       whose nearest centroid it is) the sample predicts for the fullest partition fill at most
 *       half of {@link #cap()}, the most points whose in-memory build fits the budget ({@link
 *       #bytesPerPoint}).
 *   <li><b>Assign and spill.</b> One pass over the vectors in ordinal order encodes their PQ codes
 *       and gives each point to its nearest centroid (its home) and to the next nearest with room
 *       beyond the slots reserved for that partition's home points: the cap is hard, and the
 *       assignment deterministic. {@code (ordinal, vector)} is appended to {@code part-p.vec} of
 *       both partitions.
 *   <li><b>Navigation partition.</b> With more than one partition, a stratified sample of {@code
 *       min(cap, N/4)} points spread over all the data is one more partition, built like the
 *       others: the k-means partitions hold only short edges inside their region, and without edges
 *       across the data a greedy search from the entry (chosen among these points) stalls between
 *       regions (recall@10 fell to 0.76 at 8,000 points in 29 partitions). It plays the role of an
 *       upper layer, flattened into the one graph.
 *   <li><b>Build each partition</b> in memory at degree {@code ⌈2R/3⌉}: for {@code Cosine} and
 *       {@code Euclid} with a {@link LiveGraph} (a Vamana insert navigated by int8 codes, one
 *       writer), several partitions at once, one per build thread, each within its share of the
 *       budget ({@link #concurrentPartitions}); for {@code Dot}, one at a time with jvector's
 *       {@link GraphIndexBuilder} on all the build's threads (its inner-product construction). Its
 *       edges, with their exact distances, are written to {@code part-p.adj} in ordinal order and
 *       the partition is dropped.
 *   <li><b>Merge.</b> A k-way merge of the {@code part-*.adj} files gives each point the union of
 *       its partitions' candidates; RobustPrune ({@code alpha} 1, then the index's alpha) cuts it
 *       to {@code R}, with exact point-to-candidate distances and PQ distances between candidates
 *       (FreshDiskANN's {@code occlude_list_pq}), then fills the list up to {@code R} with the
 *       nearest pruned candidates. The same pass reads the vectors in order and streams {@code
 *       graph.fvg}.
 * </ol>
 *
 * Held in memory: one partition, one 64 KiB buffer per partition, the PQ codes and the sample. The
 * scratch files live in a {@code work} directory inside the segment's temporary directory, so a
 * failed build's cleanup, and a crashed one's cleanup at the next open, removes them.
 *
 * <p>Distances in the prune are squared L2 (for {@code Cosine}, whose vectors are unit length, the
 * same order as the score). For {@code Dot} the union is cut to the {@code R} candidates of the
 * best exact score instead: L2 diversity does not hold for inner products, and each partition's
 * lists are already pruned by jvector under the inner product.
 *
 * <p>For {@code Cosine} and {@code Euclid} the output is a function of the input, the seed and the
 * number of partitions built at once (each partition's graph has one writer). For {@code Dot}, with
 * a one-thread pool; with more threads jvector's concurrent inserts make each partition's graph
 * differ from run to run, as any build's. Not thread-safe: one build per instance.
 *
 * <p>Why a {@link LiveGraph} per partition rather than jvector's concurrent builder (ADR 0026): on
 * 200k × 96 points in partitions of 15k it took 0.45 ms of CPU a point against 1.4–1.5 ms, at the
 * same recall, because its construction computes int8 distances over contiguous codes where
 * jvector's computes float distances over scattered arrays. One writer per graph is no loss on many
 * cores: the partitions are independent, so the build runs as many of them at once as it has
 * threads and budget for.
 */
final class PartitionedGraphBuilder {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(PartitionedGraphBuilder.class);

  private static final VectorTypeSupport VTS =
      VectorizationProvider.getInstance().getVectorTypeSupport();

  /** Points sampled for the PQ codebook and the partition centroids, at most. */
  static final int SAMPLE = 50_000;

  /** Points sampled however small the budget: 32 a PQ centroid. */
  static final int MIN_SAMPLE = 8_192;

  /**
   * Floats the codebook training holds per sampled coordinate, at its peak: the sample, the
   * rotation's copy and the rotated training set ({@link PqTrainer#trainSeeded}).
   */
  static final int TRAINING_COPIES = 3;

  /** Points read, assigned and pruned per block (and per cancellation check). */
  static final int BLOCK = 4096;

  /** Bytes buffered per scratch file. */
  static final int IO_BUFFER = 64 * 1024;

  /** Lloyd iterations of the partition k-means. */
  static final int KMEANS_ITERATIONS = 10;

  /** k-means runs tried while growing {@code P} before the hard cap alone keeps the bound. */
  static final int MAX_PARTITION_ATTEMPTS = 6;

  /**
   * The fewest points a partition may be cut down to so that several are built at once: below it,
   * the partitions are built one after another instead. Package-private and mutable for tests only.
   */
  static volatile int concurrentCapFloor = 50_000;

  /** Nearest centroids kept per point; if none of them has room, every centroid is tried. */
  private static final int NEAREST_KEPT = 8;

  private final FileIO io;
  private final Path work;
  private final int dim;
  private final Distance distance;
  private final IndexParams params;
  private final long budget;
  private final ForkJoinPool pool;
  private final BooleanSupplier cancelled;
  private final int segmentId;
  private final long seed;

  // what the last build did, for logs and tests
  private int[] order;
  private int partitions;
  private long orderNanos; // the last build's PageOrder.compute, for its log line
  private int cap;
  private long graphBudget;
  private int concurrent = 1;
  private int[] partitionSizes = new int[0];

  /** Per partition, the slots kept for its home points (those whose nearest centroid it is). */
  private int[] reserved = new int[0];

  // Dot only: the codebook's centre and each point's exact dot product with it
  private float[] centre;
  private float[] centreDot;

  /**
   * @param work the scratch directory (created, and removed when the build returns normally)
   * @param budget bytes of heap the build may use for the graph of one partition
   * @param pool where the build runs ({@code null}: jvector's default pools)
   */
  PartitionedGraphBuilder(
      FileIO io,
      Path work,
      int dim,
      Distance distance,
      IndexParams params,
      long budget,
      ForkJoinPool pool,
      BooleanSupplier cancelled,
      int segmentId,
      long seed) {
    this.io = io;
    this.work = work;
    this.dim = dim;
    this.distance = distance;
    this.params = params;
    this.budget = budget;
    this.pool = pool;
    this.cancelled = cancelled;
    this.segmentId = segmentId;
    this.seed = seed;
  }

  /**
   * Heap bytes one point takes in an in-memory build of degree {@code maxDegree}, the larger of the
   * two builders' needs, plus 10%: its vector, its int8 code ({@link LiveGraph}), its neighbour
   * list and distances up to the slack of 1.3 (jvector: ids and scores with a 1.2 overflow) and
   * per-node overhead.
   */
  static long bytesPerPoint(int dim, int maxDegree) {
    return (long) Math.ceil(1.1 * (5.0 * dim + 10.4 * maxDegree + 96));
  }

  /**
   * How many partitions a build with {@code threads} threads builds at once, when one partition
   * alone could hold {@code pointsInBudget} points: as many as it has threads, as long as each
   * still holds {@link #concurrentCapFloor} points (the budget is shared between them).
   */
  static int concurrentPartitions(int threads, long pointsInBudget) {
    return (int) Math.max(1, Math.min(threads, pointsInBudget / concurrentCapFloor));
  }

  /** Whether a one-shot in-memory build of {@code n} points fits {@code budget} bytes. */
  static boolean fitsInMemory(long n, int dim, int maxDegree, long budget) {
    return n * bytesPerPoint(dim, maxDegree) <= budget;
  }

  /** The out-degree each partition's graph is built with: two thirds of the final degree. */
  static int partitionDegree(int maxDegree) {
    return Math.max(2, (2 * maxDegree + 2) / 3);
  }

  /** Partitions of the last build. */
  int partitions() {
    return partitions;
  }

  /** Points a partition may hold in the last build. */
  int cap() {
    return cap;
  }

  /** Partitions the last build built at once. */
  int concurrent() {
    return concurrent;
  }

  /**
   * Points of each partition of the last build; with more than one k-means partition, the last
   * entry is the navigation partition.
   */
  int[] partitionSizes() {
    return partitionSizes.clone();
  }

  /**
   * Reports to {@code sink} ({@code null}: nowhere) how far the next build is, in points of the
   * build: the sample, the partitioning and the spill to 5%, the partitions' graphs to 75% (by the
   * points they hold, as each is done), the edge merge to 85%, the page-order rewrite to 100% (by
   * the records written). The shares are what the phases took at 10M × 96 under a small budget,
   * where the partitions are most of the build; the figure is for a person watching, not a clock.
   */
  void progress(java.util.concurrent.atomic.AtomicLong sink) {
    this.progress = sink;
  }

  private java.util.concurrent.atomic.AtomicLong progress;
  private long progressPoints;
  private final java.util.concurrent.atomic.AtomicLong partitionPointsBuilt =
      new java.util.concurrent.atomic.AtomicLong();
  private long partitionPointsTotal;

  /** Reports that the build reached {@code fraction} of its work (never backwards). */
  private void reached(double fraction) {
    java.util.concurrent.atomic.AtomicLong sink = progress;
    if (sink != null) {
      long at = Math.min(progressPoints, (long) (fraction * progressPoints));
      sink.accumulateAndGet(at, Math::max);
    }
  }

  /** A partition of {@code points} points has its graph. */
  private void partitionBuilt(int points) {
    long built = partitionPointsBuilt.addAndGet(points);
    reached(0.05 + 0.70 * built / Math.max(1, partitionPointsTotal));
  }

  /**
   * Records the page-order rewrite asks the kernel for ahead of the one it reads: about the queue
   * depth at which an NVMe device reaches most of its random-read rate (ADR 0027's fio runs: 13K
   * reads/s at depth 1, about 70K at 32).
   */
  static final int REWRITE_READS_AHEAD = 64;

  private void checkCancelled() {
    if (cancelled.getAsBoolean()) {
      throw new CancellationException("segment build cancelled [segment=" + segmentId + "]");
    }
  }

  private ForkJoinPool simd() {
    return pool != null ? pool : PhysicalCoreExecutor.pool();
  }

  /** The page-local order the last build wrote its graph in, or {@code null}: the input order. */
  int[] order() {
    return order;
  }

  /**
   * Builds the graph of {@code src}'s points and writes it to {@code graphPath} (not fsynced) in
   * the points' order; returns the PQ codes of the points (codebook trained on the sample, {@code
   * subspaces} bytes per point).
   */
  PqCodes build(VectorSource src, int subspaces, Path graphPath) throws IOException {
    return build(src, subspaces, graphPath, false);
  }

  /**
   * {@link #build(VectorSource, int, Path)}; with {@code pageOrder} the graph is written in its
   * {@link PageOrder} ({@link #order()}): merged into a scratch graph file in the points' order,
   * then rewritten from it in the new order. The PQ codes returned stay in the points' order.
   */
  PqCodes build(VectorSource src, int subspaces, Path graphPath, boolean pageOrder)
      throws IOException {
    order = null;
    orderNanos = 0;
    int n = src.size();
    if (src.dimension() != dim) {
      throw new IllegalArgumentException(
          "vector source dimension mismatch [dim=" + src.dimension() + ", expected=" + dim + "]");
    }
    int maxDegree = params.maxDegree();
    int degree = partitionDegree(maxDegree);
    graphBudget = graphBudget(n, subspaces);
    long c = graphBudget / bytesPerPoint(dim, degree);
    int minCap = Math.max(256, 4 * maxDegree);
    if (c < minCap) {
      throw new IllegalArgumentException(
          "build memory budget too small for a partition [budget="
              + budget
              + ", bytesPerPoint="
              + bytesPerPoint(dim, degree)
              + ", minPoints="
              + minCap
              + "]");
    }
    boolean live = distance != Distance.DOT;
    int threads = simd().getParallelism();
    concurrent = live ? concurrentPartitions(threads, c) : 1;
    if (concurrent > 1) {
      // each partition built at once gets its share of the budget; and smaller partitions, down to
      // the floor, so that there are about two per thread (home points fill half a cap): a thread
      // that finishes early takes another, and smaller graphs cost less per insert
      c = Math.min(c / concurrent, Math.max(concurrentCapFloor, (long) n / concurrent));
    }
    cap = (int) Math.min(n, c);
    io.deleteTree(work);
    io.createDirectories(work);

    long t0 = System.nanoTime();
    // 1. Sample and 2. Partition: the sample is garbage once they return
    Trained trained = sampleAndPartition(src, n, subspaces);
    PqCodebook book = trained.book();
    float[] centroids = trained.centroids();
    float[] mean = trained.mean();
    int p = partitions;

    // 3. Assign and spill
    int m = book.subspaces();
    byte[] codes = new byte[Math.multiplyExact(n, m)];
    if (distance == Distance.DOT) {
      centre = book.centre() != null ? book.centre() : new float[dim];
      centreDot = new float[n];
    }
    int[] global =
        p == 1 ? null : sampleOrdinals(n, Math.min(cap, Math.max(1, n / 4)), new Random(~seed));
    int entry = assign(src, n, book, codes, centroids, p, mean, global);
    int parts = partitionSizes.length;
    checkCancelled();
    progressPoints = n;
    partitionPointsBuilt.set(0);
    partitionPointsTotal = Arrays.stream(partitionSizes).asLongStream().sum();
    reached(0.05);
    long t1 = System.nanoTime();

    // 4. Build each partition
    if (live) {
      buildLivePartitions(parts, p == 1 ? maxDegree : degree);
    } else {
      for (int part = 0; part < parts; part++) {
        checkCancelled();
        buildPartition(part, p == 1 ? maxDegree : degree);
        partitionBuilt(partitionSizes[part]);
      }
    }

    long t2 = System.nanoTime();
    // 5. Merge and write
    boolean reorder = pageOrder && n > 1 && GraphFile.recordsPerPage(dim, params.maxDegree()) > 1;
    Path merged = reorder ? work.resolve("merged.fvg") : graphPath;
    merge(src, n, entry, parts, book, codes, merged);
    reached(0.85);
    long t3 = System.nanoTime();
    if (reorder) {
      for (int part = 0; part < parts; part++) {
        io.deleteIfExists(adjFile(part));
      }
      writeInPageOrder(merged, graphPath);
    }
    io.deleteTree(work);
    reached(1.0);
    long t4 = System.nanoTime();
    LOG.info(
        "partitioned graph built [segment={}, points={}, partitions={}, cap={}, atOnce={},"
            + " largest={}, budget={}, graphBudget={}, sample={}, millis: partition={}, build={},"
            + " merge={}, order={}, rewrite={}]",
        segmentId,
        n,
        p,
        cap,
        concurrent,
        Arrays.stream(partitionSizes).max().orElse(0),
        budget,
        graphBudget,
        sampleSize(n, dim, budget),
        (t1 - t0) / 1_000_000,
        (t2 - t1) / 1_000_000,
        (t3 - t2) / 1_000_000,
        orderNanos / 1_000_000,
        (t4 - t3 - orderNanos) / 1_000_000);
    return new PqCodes(book, n, codes);
  }

  /** The codebook, the partition centroids and the sample's mean, from the sample. */
  private record Trained(PqCodebook book, float[] centroids, float[] mean) {}

  /**
   * Steps 1 and 2: reads a sample of {@link #sampleSize} points, trains the codebook on it and
   * chooses the partitions. The sample is held only while this runs, so the partitions' builds have
   * the budget without it.
   */
  private Trained sampleAndPartition(VectorSource src, int n, int subspaces) throws IOException {
    int[] sampleOrds = sampleOrdinals(n, sampleSize(n, dim, budget), new Random(seed));
    int s = sampleOrds.length;
    float[] sample = new float[s * dim];
    float[] one = new float[dim];
    for (int i = 0; i < s; i++) {
      if ((i & 1023) == 0) {
        checkCancelled();
      }
      src.read(sampleOrds[i], 1, one);
      System.arraycopy(one, 0, sample, i * dim, dim);
    }
    checkCancelled();
    PqCodebook book =
        DiskAnnWriter.abandonable(
            () -> PqTrainer.trainSeeded(sample, s, dim, subspaces, seed, pool, cancelled),
            cancelled,
            segmentId);
    checkCancelled();
    float[] centroids = partition(n, sample, s);
    float[] mean = new float[dim];
    for (int i = 0; i < s; i++) {
      for (int d = 0; d < dim; d++) {
        mean[d] += sample[i * dim + d] / s;
      }
    }
    return new Trained(book, centroids, mean);
  }

  /**
   * Points sampled for a build of {@code n} points within {@code budget} bytes: at most {@value
   * #SAMPLE}, and no more than half the budget holds with the codebook training's copies ({@value
   * #TRAINING_COPIES} floats a sampled coordinate), but never below {@value #MIN_SAMPLE} (32 points
   * a PQ centroid).
   */
  static int sampleSize(int n, int dim, long budget) {
    long fits = budget / 2 / ((long) TRAINING_COPIES * Float.BYTES * Math.max(1, dim));
    return (int) Math.min(n, Math.min(SAMPLE, Math.max(MIN_SAMPLE, fits)));
  }

  /**
   * Heap a build of {@code n} points with {@code subspaces}-byte codes holds from the assignment to
   * the end, beside the partitions being built: the PQ codes and, for {@code Dot}, each point's
   * product with the codebook's centre.
   */
  static long heldBytes(int n, int subspaces, Distance distance) {
    return (long) n * subspaces + (distance == Distance.DOT ? (long) n * Float.BYTES : 0);
  }

  /**
   * The bytes the partitions' graphs may take: the budget less {@link #heldBytes}, but at least
   * what the smallest partition needs (a budget below it has no smaller build to fall back on).
   */
  private long graphBudget(int n, int subspaces) {
    long floor =
        (long) Math.max(256, 4 * params.maxDegree())
            * bytesPerPoint(dim, partitionDegree(params.maxDegree()));
    long left = budget - heldBytes(n, subspaces, distance);
    if (left < floor && budget >= floor) {
      LOG.warn(
          "a build's codes leave its partitions less than the smallest one needs; it builds at"
              + " that size and exceeds its budget [segment={}, points={}, budget={},"
              + " held={}, partitionBytes={}]",
          segmentId,
          n,
          budget,
          heldBytes(n, subspaces, distance),
          floor);
      return floor;
    }
    return left;
  }

  /**
   * {@code s} distinct ordinals of {@code 0..n-1}, ascending: one drawn from each of {@code s}
   * equal strata, so the sample covers every source segment in proportion.
   */
  static int[] sampleOrdinals(int n, int s, Random rnd) {
    int[] out = new int[s];
    for (int i = 0; i < s; i++) {
      long lo = (long) i * n / s;
      long hi = (long) (i + 1) * n / s;
      out[i] = (int) (lo + rnd.nextInt((int) Math.max(1, hi - lo)));
    }
    return out;
  }

  /**
   * Chooses {@code P} and its centroids, as DiskANN's {@code partition_with_ram_budget} grows its
   * partition count until they fit: from {@code 2.2·N / cap} partitions (room for two copies of
   * every point and some slack), grown while the home points the sample predicts for the fullest
   * partition (the points whose nearest centroid it is) exceed half the cap. The other half takes
   * second copies: a centroid near the middle of the data is the second nearest of many points, and
   * must not fill up with second copies before its own points arrive. Sets {@link #reserved}.
   */
  private float[] partition(int n, float[] sample, int s) {
    if (concurrent == 1 && fitsInMemory(n, dim, params.maxDegree(), graphBudget)) {
      partitions = 1;
      reserved = new int[] {n};
      return Arrays.copyOf(sample, dim);
    }
    int p = (int) Math.max(3, (22L * n + 10L * cap - 1) / (10L * cap));
    double target = cap / 2.0;
    float[] best;
    int[] home;
    for (int attempt = 0; ; attempt++) {
      int k = Math.min(p, s);
      float[] centroids =
          KMeans.cluster(sample, s, dim, k, KMEANS_ITERATIONS, seed ^ k, pool, cancelled);
      checkCancelled();
      int[] counts = new int[k];
      for (int i = 0; i < s; i++) {
        counts[KMeans.nearest(centroids, k, dim, sample, i * dim)]++;
      }
      double largest = Arrays.stream(counts).max().orElse(0) * (double) n / s;
      best = centroids;
      home = counts;
      p = k;
      if (largest <= target || attempt + 1 >= MAX_PARTITION_ATTEMPTS || k == s) {
        LOG.debug(
            "partitions chosen [segment={}, partitions={}, largestHomeEstimated={}, cap={}]",
            segmentId,
            k,
            (long) largest,
            cap);
        break;
      }
      p = (int) Math.min(2L * k, Math.max(k + 2, (long) Math.ceil(k * largest / target)));
    }
    partitions = p;
    reserved = new int[p];
    for (int part = 0; part < p; part++) {
      reserved[part] = (int) Math.min(cap, Math.ceil(1.1 * home[part] * (double) n / s));
    }
    return best;
  }

  private Path vecFile(int part) {
    return work.resolve("part-" + part + ".vec");
  }

  private Path adjFile(int part) {
    return work.resolve("part-" + part + ".adj");
  }

  /**
   * Encodes every point's PQ code, assigns it to its (at most) two nearest centroids with room and
   * appends it to their spill files; returns the point nearest the sample mean (the entry).
   */
  private int assign(
      VectorSource src,
      int n,
      PqCodebook book,
      byte[] codes,
      float[] centroids,
      int p,
      float[] mean,
      int[] global)
      throws IOException {
    int m = book.subspaces();
    int parts = global == null ? p : p + 1;
    int g = 0;
    int copies = Math.min(2, p);
    int kept = Math.min(NEAREST_KEPT, p);
    int[] sizes = new int[parts];
    int[] homes = new int[p];
    float[] block = new float[BLOCK * dim];
    int[] order = new int[BLOCK * kept];
    float[] toMean = new float[BLOCK];
    int entry = 0;
    float entryDist = Float.MAX_VALUE;
    List<SpillWriter> writers = new ArrayList<>(p);
    try {
      for (int part = 0; part < parts; part++) {
        writers.add(new SpillWriter(io, vecFile(part)));
      }
      for (int from = 0; from < n; from += BLOCK) {
        checkCancelled();
        int count = Math.min(BLOCK, n - from);
        int start = from;
        src.read(from, count, block);
        KMeans.run(
            pool,
            () ->
                IntStream.range(0, (count + 255) / 256)
                    .parallel()
                    .forEach(
                        b -> {
                          float[] scratch = new float[book.scratchLength()];
                          float[] dists = new float[kept];
                          for (int i = b * 256; i < Math.min(count, b * 256 + 256); i++) {
                            book.encode(block, i * dim, codes, (start + i) * m, scratch);
                            toMean[i] = VectorOps.squareDistance(mean, 0, block, i * dim, dim);
                            if (centreDot != null) {
                              centreDot[start + i] = VectorOps.dot(centre, 0, block, i * dim, dim);
                            }
                            nearestCentroids(
                                centroids, p, block, i * dim, kept, dists, order, i * kept);
                          }
                        }));
        for (int i = 0; i < count; i++) {
          int ord = from + i;
          boolean inGlobal = global != null && g < global.length && global[g] == ord;
          if ((global == null || inGlobal) && toMean[i] < entryDist) {
            entryDist = toMean[i];
            entry = ord;
          }
          if (inGlobal) {
            sizes[p]++;
            writers.get(p).append(ord, block, i * dim, dim);
            g++;
          }
          int first = -1;
          for (int c = 0; c < copies; c++) {
            int part =
                withRoom(order, i * kept, kept, sizes, homes, first, centroids, p, block, i * dim);
            if (part < 0) {
              break; // no room for a second copy anywhere: this point is in one partition only
            }
            sizes[part]++;
            if (c == 0) {
              homes[part]++;
            }
            writers.get(part).append(ord, block, i * dim, dim);
            first = part;
          }
        }
      }
    } finally {
      IOException failure = null;
      for (SpillWriter w : writers) {
        try {
          w.close();
        } catch (IOException e) {
          failure = failure == null ? e : failure;
        }
      }
      if (failure != null) {
        throw failure;
      }
    }
    partitionSizes = sizes;
    return entry;
  }

  /**
   * Writes the {@code kept} centroids nearest to {@code v[off..]}, nearest first (ties: the lower
   * index), into {@code out[at..]}; {@code dists} is scratch of {@code kept} floats.
   */
  private void nearestCentroids(
      float[] centroids, int p, float[] v, int off, int kept, float[] dists, int[] out, int at) {
    int filled = 0;
    for (int c = 0; c < p; c++) {
      float d = VectorOps.squareDistance(centroids, c * dim, v, off, dim);
      if (filled == kept && d >= dists[kept - 1]) {
        continue;
      }
      int i = filled < kept ? filled++ : kept - 1;
      while (i > 0 && dists[i - 1] > d) {
        dists[i] = dists[i - 1];
        out[at + i] = out[at + i - 1];
        i--;
      }
      dists[i] = d;
      out[at + i] = c;
    }
  }

  /**
   * The partition of a point's next copy. Its home ({@code exclude < 0}): the nearest centroid with
   * room below the cap. A second copy: the nearest other centroid with room beyond the slots still
   * reserved for that partition's home points, else the nearest other with any room, else -1. Among
   * the {@code kept} nearest first, then all centroids. A home always has room: {@code P·cap > 2N}.
   */
  private int withRoom(
      int[] order,
      int at,
      int kept,
      int[] sizes,
      int[] homes,
      int exclude,
      float[] centroids,
      int p,
      float[] v,
      int off) {
    boolean home = exclude < 0;
    for (int i = 0; i < kept; i++) {
      int part = order[at + i];
      if (part != exclude && sizes[part] + (home ? 0 : owed(part, homes)) < cap) {
        return part;
      }
    }
    for (int pass = home ? 1 : 0; pass < 2; pass++) {
      int best = -1;
      float bestD = Float.MAX_VALUE;
      for (int part = 0; part < p; part++) {
        if (part != exclude && sizes[part] + (pass == 0 ? owed(part, homes) : 0) < cap) {
          float d = VectorOps.squareDistance(centroids, part * dim, v, off, dim);
          if (d < bestD) {
            bestD = d;
            best = part;
          }
        }
      }
      if (best >= 0) {
        return best;
      }
    }
    if (home) {
      throw new IllegalStateException(
          "no partition has room [partitions=" + p + ", cap=" + cap + "]");
    }
    return -1;
  }

  /** Slots of partition {@code part} still reserved for home points to come. */
  private int owed(int part, int[] homes) {
    return Math.max(0, reserved[part] - homes[part]);
  }

  /**
   * Builds partition {@code part}'s graph in memory from its spill file and writes its edges, with
   * exact distances, to its adjacency file: {@code int ordinal | int degree | (int neighbour, float
   * distance)*} per point, in ordinal order.
   */
  /**
   * Builds partitions {@code 0..parts-1} with a {@link LiveGraph} each, {@link #concurrent} at once
   * on the build's pool, each taking the next partition not yet built. The first failure
   * (cancellation included) stops the others at their next partition and is thrown.
   */
  private void buildLivePartitions(int parts, int degree) throws IOException {
    java.util.concurrent.atomic.AtomicInteger next =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<Throwable> failed =
        new java.util.concurrent.atomic.AtomicReference<>();
    Runnable worker =
        () -> {
          for (int part = next.getAndIncrement();
              part < parts && failed.get() == null;
              part = next.getAndIncrement()) {
            try {
              checkCancelled();
              buildLivePartition(part, degree);
              partitionBuilt(partitionSizes[part]);
            } catch (Throwable t) {
              failed.compareAndSet(null, t);
            }
          }
        };
    if (concurrent == 1) {
      worker.run();
    } else {
      simd()
          .submit(() -> IntStream.range(0, concurrent).parallel().forEach(w -> worker.run()))
          .join();
    }
    Throwable t = failed.get();
    if (t instanceof IOException e) {
      throw e;
    } else if (t instanceof RuntimeException e) {
      throw e;
    } else if (t instanceof Error e) {
      throw e;
    } else if (t != null) {
      throw new IllegalStateException(t);
    }
  }

  /**
   * Builds partition {@code part} with a {@link LiveGraph} (squared L2 on int8 codes, slack 1.3,
   * RobustPrune at {@code alpha}) on the calling thread and writes its edges with their exact
   * squared L2 distances.
   */
  private void buildLivePartition(int part, int degree) throws IOException {
    int count = partitionSizes[part];
    int[] ords = new int[count];
    float[][] rows = new float[count][];
    try (SpillReader r = new SpillReader(io, vecFile(part))) {
      for (int i = 0; i < count; i++) {
        ords[i] = r.readInt();
        rows[i] = new float[dim];
        r.readFloats(rows[i], 0, dim);
      }
    }
    io.deleteIfExists(vecFile(part));
    LiveGraph g = DiskAnnWriter.liveGraph(rows, dim, degree, params, cancelled, segmentId);
    try (SpillWriter out = new SpillWriter(io, adjFile(part))) {
      int[] nbrs = new int[degree];
      for (int i = 0; i < count; i++) {
        if ((i & 4095) == 0) {
          checkCancelled();
        }
        int d = g.neighbours(i, nbrs);
        out.appendInt(ords[i]);
        out.appendInt(d);
        for (int j = 0; j < d; j++) {
          int nb = nbrs[j];
          out.appendInt(ords[nb]);
          out.appendFloat(VectorOps.squareDistance(rows[i], 0, rows[nb], 0, dim));
        }
      }
    }
  }

  private void buildPartition(int part, int degree) throws IOException {
    Path vec = vecFile(part);
    int count = partitionSizes[part];
    int[] ords = new int[count];
    float[][] rows = new float[count][];
    List<VectorFloat<?>> vectors = new ArrayList<>(count);
    try (SpillReader r = new SpillReader(io, vec)) {
      for (int i = 0; i < count; i++) {
        ords[i] = r.readInt();
        rows[i] = new float[dim];
        r.readFloats(rows[i], 0, dim);
        vectors.add(VTS.createFloatVector(rows[i]));
      }
    }
    io.deleteIfExists(vec);
    var ravv = new ListRandomAccessVectorValues(vectors, dim);
    var bsp =
        BuildScoreProvider.randomAccessScoreProvider(ravv, DiskAnnSegment.similarity(distance));
    ForkJoinPool simd = simd();
    ForkJoinPool parallel = pool != null ? pool : ForkJoinPool.commonPool();
    boolean dot = distance == Distance.DOT;
    try (GraphIndexBuilder builder =
            new GraphIndexBuilder(
                bsp,
                dim,
                degree,
                params.buildSearchList(),
                1.2f,
                params.alpha(),
                false,
                true,
                simd,
                parallel);
        SpillWriter out = new SpillWriter(io, adjFile(part))) {
      ImmutableGraphIndex g =
          DiskAnnWriter.buildGraph(builder, ravv, count, pool, cancelled, segmentId);
      try (var view = g.getView()) {
        int[] nbrs = new int[degree * 2 + 8];
        for (int i = 0; i < count; i++) {
          if ((i & 4095) == 0) {
            checkCancelled();
          }
          NodesIterator it = view.getNeighborsIterator(0, i);
          int d = 0;
          while (it.hasNext()) {
            int nb = it.nextInt();
            if (d == nbrs.length) {
              nbrs = Arrays.copyOf(nbrs, d * 2);
            }
            nbrs[d++] = nb;
          }
          out.appendInt(ords[i]);
          out.appendInt(d);
          for (int j = 0; j < d; j++) {
            int nb = nbrs[j];
            float dist =
                dot
                    ? -VectorOps.dot(rows[i], 0, rows[nb], 0, dim)
                    : VectorOps.squareDistance(rows[i], 0, rows[nb], 0, dim);
            out.appendInt(ords[nb]);
            out.appendFloat(dist);
          }
        }
      }
    }
  }

  /**
   * The final pass: merges the partitions' candidate lists in ordinal order, prunes them to {@code
   * R} a block at a time in parallel, and writes the graph file with the vectors read in order.
   */
  private void merge(
      VectorSource src, int n, int entry, int p, PqCodebook book, byte[] codes, Path graphPath)
      throws IOException {
    int maxDegree = params.maxDegree();
    Pairs pairs =
        distance == Distance.DOT
            ? dotPairs(book, codes, centreDot, VectorOps.dot(centre, 0, centre, 0, dim))
            : l2Pairs(book, codes);
    List<AdjReader> readers = new ArrayList<>(p);
    try {
      for (int part = 0; part < p; part++) {
        readers.add(new AdjReader(io, adjFile(part)));
      }
      int[][] cand = new int[BLOCK][];
      float[][] cdist = new float[BLOCK][];
      int[] ccount = new int[BLOCK];
      int[][] pruned = new int[BLOCK][maxDegree];
      int[] pcount = new int[BLOCK];
      float[] vectors = new float[BLOCK * dim];
      GraphFile.write(
          io,
          graphPath,
          n,
          dim,
          maxDegree,
          entry,
          new GraphFile.NodeSource() {
            int blockStart = -1;

            private void load(int from) throws IOException {
              checkCancelled();
              int count = Math.min(BLOCK, n - from);
              src.read(from, count, vectors);
              for (int i = 0; i < count; i++) {
                int ord = from + i;
                int c = 0;
                for (AdjReader r : readers) {
                  if (r.head() == ord) {
                    c = r.readInto(cand, cdist, i, c);
                  }
                }
                ccount[i] = c;
              }
              KMeans.run(
                  pool,
                  () ->
                      IntStream.range(0, count)
                          .parallel()
                          .forEach(
                              i ->
                                  pcount[i] =
                                      prune(
                                          from + i, cand[i], cdist[i], ccount[i], maxDegree, pairs,
                                          pruned[i])));
              blockStart = from;
            }

            @Override
            public float[] vector(int ord) {
              if (blockStart < 0 || ord >= blockStart + BLOCK) {
                try {
                  load(ord);
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
              }
              int i = ord - blockStart;
              return Arrays.copyOfRange(vectors, i * dim, i * dim + dim);
            }

            @Override
            public int neighbours(int ord, int[] out) {
              int i = ord - blockStart;
              System.arraycopy(pruned[i], 0, out, 0, pcount[i]);
              return pcount[i];
            }
          });
      for (AdjReader r : readers) {
        if (r.head() != Integer.MAX_VALUE) {
          throw new IllegalStateException(
              "partition edges left after the last point [ordinal=" + r.head() + "]");
        }
      }
    } catch (java.io.UncheckedIOException e) {
      throw e.getCause();
    } finally {
      for (AdjReader r : readers) {
        r.close();
      }
    }
  }

  /**
   * {@code g}'s neighbour lists for {@link PageOrder#compute}, asking for the lists it will read
   * next ahead ({@code madvise(WILLNEED)}) unless nine tenths of the file are in the page cache
   * (one {@code mincore} over the mapping): under a memory budget the merged graph is many times
   * the page cache, and the walk faulted one list at a time (118 s of a 925 s merge of 1.09M × 96
   * under 480 MiB, against 1% of a merge with the graph cached); a cached graph skips the advice's
   * system calls.
   */
  static PageOrder.Adjacency aheadWhenNotCached(GraphFile g) {
    GraphFile.NodeSource nodes = g.nodes();
    var file = g.file();
    if (g.count() <= 1) {
      return nodes::neighbours; // nothing to order
    }
    long bytes = g.recordOffset(g.count() - 1) + g.recordBytes();
    long pages = (bytes + MappedFile.PAGE - 1) / MappedFile.PAGE;
    int resident =
        file.mapped()
            ? file.residentPages(0, bytes, java.lang.foreign.Arena.ofAuto().allocate(pages))
            : -1;
    if (resident < 0 || resident >= 0.9 * pages) {
      return nodes::neighbours;
    }
    int recordBytes = g.recordBytes();
    return new PageOrder.Adjacency() {
      @Override
      public int neighbours(int ord, int[] out) {
        return nodes.neighbours(ord, out);
      }

      @Override
      public void willNeed(int ord) {
        file.prefetch(g.recordOffset(ord), recordBytes);
      }
    };
  }

  /**
   * Computes the {@link PageOrder} of the graph file {@code merged} from its neighbour lists (read
   * from the mapping, so the graph is never on the heap) and writes it again to {@code graphPath}
   * in that order: one more pass over the graph, its records read in the new order.
   */
  private void writeInPageOrder(Path merged, Path graphPath) throws IOException {
    checkCancelled();
    try (GraphFile g = GraphFile.open(io, merged, false)) {
      int n = g.count();
      long t0 = System.nanoTime();
      int[] o =
          PageOrder.compute(
              n,
              g.entry(),
              GraphFile.recordsPerPage(dim, g.maxDegree()),
              g.maxDegree(),
              aheadWhenNotCached(g));
      orderNanos = System.nanoTime() - t0;
      checkCancelled();
      // the records are read at random: keep reads in flight rather than fault one at a time
      GraphFile.NodeSource nodes = g.nodesReadInOrder(o, REWRITE_READS_AHEAD);
      GraphFile.write(
          io,
          graphPath,
          n,
          dim,
          g.maxDegree(),
          g.entry(),
          DiskAnnWriter.checkedSource(
              nodes::vector,
              nodes::neighbours,
              new Runnable() {
                private long written; // records, counted at each check (every 4,096)

                @Override
                public void run() {
                  reached(0.85 + 0.15 * Math.min(1.0, written / (double) n));
                  written += 4096;
                  checkCancelled();
                }
              }),
          o);
      order = o;
    }
    io.deleteIfExists(merged);
  }

  /**
   * Cuts node {@code node}'s candidates to at most {@code maxDegree} into {@code out}: duplicates
   * and the node itself dropped, then RobustPrune over the candidates best first, at alpha 1 and
   * then at the index's alpha: a candidate is kept unless a kept one occludes it; then the nearest
   * occluded ones fill the list up to {@code maxDegree}. In squared L2 (DiskANN's {@code
   * occlude_list}) a kept {@code s} occludes {@code c} when {@code d(node, c) > alpha · d(s, c)};
   * for {@code Dot}, as jvector prunes, when {@code sim(s, c) > alpha · sim(node, c)} with {@code
   * sim = (1 + dot) / 2}. Node-to-candidate distances are exact, candidate-to- candidate ones from
   * the PQ codes. Returns how many were kept.
   */
  int prune(int node, int[] cand, float[] dist, int count, int maxDegree, Pairs pairs, int[] out) {
    if (count == 0) {
      return 0;
    }
    // sort by (distance, id), then drop duplicates and the node
    long[] keys = new long[count];
    for (int i = 0; i < count; i++) {
      keys[i] = ((long) sortableBits(dist[i]) << 32) | (cand[i] & 0xFFFFFFFFL);
    }
    Arrays.sort(keys);
    int[] ids = new int[count];
    float[] ds = new float[count];
    int c = 0;
    for (long key : keys) {
      int id = (int) key;
      if (id == node || (c > 0 && ids[c - 1] == id)) {
        continue;
      }
      boolean seen = false;
      for (int j = 0; j < c; j++) {
        if (ids[j] == id) {
          seen = true;
          break;
        }
      }
      if (!seen) {
        ids[c] = id;
        ds[c] = unsortableBits((int) (key >> 32));
        c++;
      }
    }
    if (c <= maxDegree) {
      System.arraycopy(ids, 0, out, 0, c);
      return c;
    }
    boolean[] kept = new boolean[c];
    int[] keptAt = new int[maxDegree];
    int k = 0;
    float alpha = Math.max(1f, params.alpha());
    for (float a = 1f; ; a = alpha) {
      for (int i = 0; i < c && k < maxDegree; i++) {
        if (kept[i]) {
          continue;
        }
        boolean occluded = false;
        for (int j = 0; j < k && !occluded; j++) {
          occluded = pairs.occludes(ids[keptAt[j]], ids[i], ds[i], a);
        }
        if (!occluded) {
          kept[i] = true;
          keptAt[k++] = i;
        }
      }
      if (a >= alpha || k >= maxDegree) {
        break;
      }
    }
    // Fill the list up to R with the nearest occluded candidates (DiskANN's saturate_graph): each
    // partition's lists hold at most ⌈2R/3⌉, so a node whose union is mostly occluded would keep
    // far fewer edges than a one-shot build gives it (jvector's backlinks fill its lists to R).
    for (int i = 0; i < c && k < maxDegree; i++) {
      if (!kept[i]) {
        kept[i] = true;
        keptAt[k++] = i;
      }
    }
    // best first, as the candidates were ordered
    Arrays.sort(keptAt, 0, k);
    for (int j = 0; j < k; j++) {
      out[j] = ids[keptAt[j]];
    }
    return k;
  }

  /** Whether a kept candidate occludes another, from their PQ codes. */
  interface Pairs {
    /**
     * Whether kept candidate {@code s} occludes candidate {@code c} at distance {@code dist} from
     * the node at {@code alpha}.
     */
    boolean occludes(int s, int c, float dist, float alpha);
  }

  /** Occlusion in squared L2: {@code d(node, c) > alpha · d(s, c)}, as DiskANN prunes. */
  static Pairs l2Pairs(PqCodebook book, byte[] codes) {
    float[] table = book.symmetricTable();
    return (s, c, dist, alpha) -> {
      float d = book.symmetric(table, codes, s, c);
      return d == 0 || dist > alpha * d;
    };
  }

  /**
   * Occlusion for inner products, as jvector prunes: {@code sim(s, c) > alpha · sim(node, c)} with
   * {@code sim = (1 + dot) / 2}; {@code dist} is the negated exact dot product, and the dot product
   * of two codes is that of their centred vectors plus the exact {@code centreDot} terms.
   */
  static Pairs dotPairs(PqCodebook book, byte[] codes, float[] centreDot, float centreNorm) {
    float[] table = book.symmetricDotTable();
    return (s, c, dist, alpha) -> {
      float dot = book.symmetric(table, codes, s, c) + centreDot[s] + centreDot[c] - centreNorm;
      return (1 + dot) / 2 > alpha * ((1 - dist) / 2);
    };
  }

  /** Float bits that sort as signed ints in the float's order. */
  private static int sortableBits(float f) {
    int bits = Float.floatToIntBits(f);
    return bits ^ ((bits >> 31) & 0x7FFFFFFF);
  }

  private static float unsortableBits(int bits) {
    return Float.intBitsToFloat(bits ^ ((bits >> 31) & 0x7FFFFFFF));
  }

  /** Appends to a scratch file through a {@value #IO_BUFFER}-byte buffer. */
  private static final class SpillWriter implements Closeable {
    private final FileIO io;
    private final FileChannel ch;
    private final ByteBuffer buf = ByteBuffer.allocate(IO_BUFFER).order(ByteOrder.LITTLE_ENDIAN);

    SpillWriter(FileIO io, Path path) throws IOException {
      this.io = io;
      this.ch = io.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    private void room(int bytes) throws IOException {
      if (buf.remaining() < bytes) {
        buf.flip();
        io.writeFully(ch, buf);
        buf.clear();
      }
    }

    void append(int ord, float[] v, int off, int dim) throws IOException {
      appendInt(ord);
      for (int d = 0; d < dim; d++) {
        appendFloat(v[off + d]);
      }
    }

    void appendInt(int x) throws IOException {
      room(4);
      buf.putInt(x);
    }

    void appendFloat(float x) throws IOException {
      room(4);
      buf.putFloat(x);
    }

    @Override
    public void close() throws IOException {
      try {
        buf.flip();
        io.writeFully(ch, buf);
      } finally {
        ch.close();
      }
    }
  }

  /** Reads a scratch file front to back through a {@value #IO_BUFFER}-byte buffer. */
  private static class SpillReader implements Closeable {
    private final FileIO io;
    private final FileChannel ch;
    private final ByteBuffer buf = ByteBuffer.allocate(IO_BUFFER).order(ByteOrder.LITTLE_ENDIAN);
    private long position;
    private final long size;

    SpillReader(FileIO io, Path path) throws IOException {
      this.io = io;
      this.ch = io.open(path, StandardOpenOption.READ);
      this.size = ch.size();
      buf.limit(0);
    }

    /** Whether bytes are left to read. */
    boolean more() {
      return buf.hasRemaining() || position < size;
    }

    private void need(int bytes) throws IOException {
      if (buf.remaining() >= bytes) {
        return;
      }
      buf.compact();
      int want = (int) Math.min(buf.remaining(), size - position);
      buf.limit(buf.position() + want);
      int read = io.readFully(ch, buf, position);
      position += read;
      buf.flip();
      if (buf.remaining() < bytes) {
        throw new java.io.EOFException("scratch file ends early [position=" + position + "]");
      }
    }

    int readInt() throws IOException {
      need(4);
      return buf.getInt();
    }

    float readFloat() throws IOException {
      need(4);
      return buf.getFloat();
    }

    void readFloats(float[] out, int off, int count) throws IOException {
      for (int i = 0; i < count; i++) {
        out[off + i] = readFloat();
      }
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }

  /** One partition's adjacency file, positioned at its next point's record. */
  private static final class AdjReader extends SpillReader {
    private int head;

    AdjReader(FileIO io, Path path) throws IOException {
      super(io, path);
      advance();
    }

    private void advance() throws IOException {
      head = more() ? readInt() : Integer.MAX_VALUE;
    }

    /** The ordinal of the next record; {@link Integer#MAX_VALUE} at the end. */
    int head() {
      return head;
    }

    /**
     * Appends the current record's edges to {@code cand[i]}/{@code dist[i]} after {@code at}
     * entries (growing them), moves to the next record, and returns the new count.
     */
    int readInto(int[][] cand, float[][] dist, int i, int at) throws IOException {
      int d = readInt();
      if (cand[i] == null || cand[i].length < at + d) {
        int len = Math.max(at + d, 2 * d);
        cand[i] = cand[i] == null ? new int[len] : Arrays.copyOf(cand[i], len);
        dist[i] = dist[i] == null ? new float[len] : Arrays.copyOf(dist[i], len);
      }
      for (int j = 0; j < d; j++) {
        cand[i][at + j] = readInt();
        dist[i][at + j] = readFloat();
      }
      advance();
      return at + d;
    }
  }
}
