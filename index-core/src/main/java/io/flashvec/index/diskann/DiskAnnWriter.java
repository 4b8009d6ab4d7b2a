package io.flashvec.index.diskann;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.disk.GraphFile;
import io.flashvec.index.disk.PageOrder;
import io.flashvec.index.disk.PqCodebook;
import io.flashvec.index.disk.PqCodes;
import io.flashvec.index.segment.BuildSpec;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.LiveGraph;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import io.github.jbellis.jvector.graph.GraphIndexBuilder;
import io.github.jbellis.jvector.graph.ImmutableGraphIndex;
import io.github.jbellis.jvector.graph.ListRandomAccessVectorValues;
import io.github.jbellis.jvector.graph.NodesIterator;
import io.github.jbellis.jvector.graph.similarity.BuildScoreProvider;
import io.github.jbellis.jvector.util.PhysicalCoreExecutor;
import io.github.jbellis.jvector.vector.VectorSimilarityFunction;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import io.github.jbellis.jvector.vector.types.VectorTypeSupport;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ForkJoinPool;
import java.util.function.BooleanSupplier;
import java.util.function.IntFunction;

/**
 * Writes a sealed segment's files (see {@link DiskAnnSegment} for the layout): from live points of
 * other segments, with a graph built by jvector ({@link #write}), or from a frozen growing segment
 * whose live graph becomes the segment's graph ({@link #writeFromGraph}). Either way the nodes are
 * numbered in the graph's {@link PageOrder}, so that a node and its nearest neighbours share a
 * page, and every per-ordinal file (graph, PQ codes, ids, payloads) follows that numbering; the
 * order file maps each ordinal back to its point's position in the input. Files are written into
 * {@code seg-<id>.tmp/}, fsynced, and the directory is renamed into place, so a segment directory
 * is complete or absent.
 *
 * <p>Stateless; the sources must stay open until a write returns.
 */
public final class DiskAnnWriter {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(DiskAnnWriter.class);

  private static final VectorTypeSupport VTS =
      VectorizationProvider.getInstance().getVectorTypeSupport();

  private final FileIO io;
  private final Path dir;
  private final Path tmp;
  private final int segmentId;
  private final int dim;
  private final Distance distance;
  private final IndexParams params;

  /** Where PQ encoding and the graph build run; {@code null}: jvector's default pools. */
  private final ForkJoinPool pool;

  private final BooleanSupplier cancelled;

  /**
   * Whether the nodes are written in {@link PageOrder} (always, but in tests that compare with the
   * order of the input).
   */
  private final boolean pageOrder;

  // what the points have beyond the default dense vector, by input position (set by each build)
  private SegmentVectors.Collector extras;

  // the settings the written graph was built with (DiskAnnFormat.BUILD_FILE); 0: not recorded
  private int builtDegree;
  private int builtList;

  /**
   * The dense fields (beside the points) a write bound to a value keeps; the values of other keys,
   * fields deleted from the collection, are dropped. Unbound: every field is kept. {@link
   * DiskAnnFormat} binds it around the writes of a shard whose fields changed, so that every path
   * (seal, raw seal, merge, compaction) drops them without a parameter through each of them.
   */
  static final ScopedValue<java.util.function.Predicate<String>> KEEP_DENSE =
      ScopedValue.newInstance();

  private final java.util.function.Predicate<String> keepDense;

  /** Where a partitioned build reports how far it is ({@link BuildSpec#progress}); may be null. */
  private java.util.concurrent.atomic.AtomicLong progress;

  private DiskAnnWriter(
      FileIO io,
      Path dir,
      int segmentId,
      int dim,
      Distance distance,
      IndexParams params,
      ForkJoinPool pool,
      BooleanSupplier cancelled,
      boolean pageOrder) {
    this.io = io;
    this.dir = dir;
    this.tmp = dir.resolveSibling(dir.getFileName() + ".tmp");
    this.segmentId = segmentId;
    this.dim = dim;
    this.distance = distance;
    this.params = params;
    this.pool = pool;
    this.cancelled = cancelled == null ? BuildSpec.NEVER_CANCELLED : cancelled;
    this.pageOrder = pageOrder;
    this.keepDense = KEEP_DENSE.isBound() ? KEEP_DENSE.get() : null;
  }

  /**
   * A segment builder that writes in this process, on the build pool of {@code settings} unless a
   * build brings its own pool.
   */
  public static SegmentBuilder builder(DiskAnnSettings settings) {
    return spec ->
        write(
            spec.pool() == null ? spec.withPool(settings.buildPool()) : spec,
            settings.buildMemoryBytes());
  }

  /**
   * Builds a segment from the live ordinals of a frozen growing segment and writes it to {@code
   * dir} (which must not exist), on jvector's default pools. Returns the number of points written.
   */
  public static int write(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment src,
      int[] liveOrds,
      Distance distance,
      IndexParams params)
      throws IOException {
    return write(
        new BuildSpec(
            io,
            dir,
            segmentId,
            List.of(src),
            List.<int[]>of(liveOrds),
            src.dimension(),
            distance,
            params,
            null,
            null));
  }

  /**
   * Builds the segment {@code spec} describes (see {@link #build}). It checks the spec's
   * cancellation between its steps and between slices of the graph build (jvector's {@code
   * GraphIndexBuilder.build} cannot be stopped, so the nodes are added here in slices of {@link
   * #GRAPH_SLICE_PER_THREAD} per thread) and then throws a {@link CancellationException}. Whenever
   * it throws (cancelled, a full disk, any failure) it removes {@code dir.tmp}, and {@code dir} if
   * the rename had happened: no temporary files are left behind.
   */
  public static int write(BuildSpec spec) throws IOException {
    return write(spec, DiskAnnSettings.defaultBuildMemoryBytes());
  }

  /**
   * {@link #write(BuildSpec)} within {@code memoryBytes} of heap: a build whose points do not fit
   * is built in partitions ({@link PartitionedGraphBuilder}), seeded by the segment id.
   */
  public static int write(BuildSpec spec, long memoryBytes) throws IOException {
    return write(spec, memoryBytes, partitionSeed(spec.segmentId()), null);
  }

  /**
   * Whether a build of {@code points} points of {@code dim} dimensions at degree {@code maxDegree}
   * exceeds {@code memoryBytes} and is therefore built in partitions: an in-memory build holds
   * every point ({@link PartitionedGraphBuilder#bytesPerPoint}) and, while it trains its codebook,
   * the training set twice more ({@link #trainingBytes}).
   */
  public static boolean buildsInPartitions(int points, int dim, int maxDegree, long memoryBytes) {
    return points > 0
        && PartitionedGraphBuilder.bytesPerPoint(dim, maxDegree) * points
                + trainingBytes(points, dim)
            > memoryBytes;
  }

  /**
   * Heap an in-memory build's codebook training takes beside the points: the rotated training set
   * (at most {@value PqTrainer#ROTATED_PQ_SAMPLE} points, one array each) and jvector's copies of
   * its subvectors.
   */
  static long trainingBytes(int points, int dim) {
    return 2L * Math.min(points, PqTrainer.ROTATED_PQ_SAMPLE) * (Float.BYTES * (long) dim + 16);
  }

  /**
   * Whether a build that fits {@code memoryBytes} is still built in partitions, so that it runs on
   * several threads: a {@code Cosine} or {@code Euclid} graph has one writer ({@link #liveGraph}),
   * so above {@code 2 ·} {@link PartitionedGraphBuilder#concurrentCapFloor} points, when the budget
   * lets several partitions be built at once on the build's threads, the partitioned build runs
   * them in parallel (about 1.3× the CPU of one graph, ADR 0026) instead of one graph on one
   * thread.
   */
  static boolean partitionsForThreads(
      int points, int dim, Distance distance, IndexParams params, ForkJoinPool pool, long memory) {
    if (distance == Distance.DOT
        || points < 2L * PartitionedGraphBuilder.concurrentCapFloor
        || params.maxDegree() < 3) {
      return false;
    }
    int threads = (pool != null ? pool : PhysicalCoreExecutor.pool()).getParallelism();
    long perPartition =
        PartitionedGraphBuilder.bytesPerPoint(
            dim, PartitionedGraphBuilder.partitionDegree(params.maxDegree()));
    return PartitionedGraphBuilder.concurrentPartitions(threads, memory / perPartition) > 1;
  }

  /** The seed of a partitioned build of segment {@code segmentId}: the same for every rebuild. */
  static long partitionSeed(int segmentId) {
    return 0x9E3779B97F4A7C15L * (segmentId + 1L);
  }

  /**
   * {@link #write(BuildSpec, long)} with the partitioned build's {@code seed}; {@code built}
   * ({@code null}: none) sees the partitioned builder after a partitioned build.
   */
  static int write(
      BuildSpec spec,
      long memoryBytes,
      long seed,
      java.util.function.Consumer<PartitionedGraphBuilder> built)
      throws IOException {
    return write(spec, memoryBytes, seed, built, true);
  }

  /**
   * {@link #write(BuildSpec, long, long, java.util.function.Consumer)}; without {@code pageOrder}
   * new ordinal {@code i} is the {@code i}-th input point, as segments were written before the
   * page-local order (tests compare the two).
   */
  static int write(
      BuildSpec spec,
      long memoryBytes,
      long seed,
      java.util.function.Consumer<PartitionedGraphBuilder> built,
      boolean pageOrder)
      throws IOException {
    DiskAnnWriter w =
        new DiskAnnWriter(
            spec.io(),
            spec.dir(),
            spec.segmentId(),
            spec.dimension(),
            spec.distance(),
            spec.params(),
            spec.pool(),
            spec.cancelled(),
            pageOrder);
    w.progress = spec.progress();
    int n = spec.points();
    if (w.dim == 0) {
      return w.intoTmp(() -> w.besideOnly(spec.sources(), spec.ords(), n));
    }
    w.built(w.params.maxDegree(), w.params.buildSearchList());
    if (buildsInPartitions(n, w.dim, w.params.maxDegree(), memoryBytes)
        || partitionsForThreads(n, w.dim, w.distance, w.params, spec.pool(), memoryBytes)) {
      return w.intoTmp(
          () -> w.buildPartitioned(spec.sources(), spec.ords(), n, memoryBytes, seed, built));
    }
    return w.intoTmp(() -> w.build(spec.sources(), spec.ords(), n));
  }

  /** Writes the segment into {@code tmp} and renames it to {@code dir}. */
  private interface Output {
    int write() throws IOException;
  }

  /**
   * Runs {@code output}; whenever it throws (cancelled, a full disk, any failure) removes {@code
   * tmp}, and {@code dir} if the rename had happened, so no temporary files are left behind.
   */
  private int intoTmp(Output output) throws IOException {
    boolean done = false;
    try {
      int n = output.write();
      done = true;
      return n;
    } finally {
      if (!done) {
        removeOutput();
      }
    }
  }

  /**
   * Graph nodes inserted per build thread between two checks of a build's cancellation: one such
   * slice takes ~0.1–1.3 s of CPU (96-d to 768-d points), so a shutdown waits at most about that
   * long for a graph build, while the barrier between slices costs the build well under 1%.
   */
  static final int GRAPH_SLICE_PER_THREAD = 256;

  /** How often a build waiting for an {@link #abandonable} step checks its cancellation. */
  static final long ABANDON_POLL_MILLIS = 50;

  /** Removes what a failed or cancelled build wrote; a failure to do so is logged. */
  private void removeOutput() {
    try {
      io.deleteTree(tmp);
      io.deleteTree(dir);
    } catch (IOException | RuntimeException e) {
      // The next open removes directories that no manifest lists.
      LOG.warn("cannot remove the output of a failed segment build [dir={}]", tmp, e);
    }
  }

  /**
   * PQ subspaces of the segment's codes: the index's setting, else the default for the dimension.
   */
  private int subspaces() {
    int m = params.pqSubspaces() > 0 ? params.pqSubspaces() : PqTrainer.defaultSubspaces(dim);
    return Math.min(m, dim);
  }

  /** Runs a step that cannot be stopped, see {@link #abandonable}. */
  private <T> T step(java.util.function.Supplier<T> step) {
    return abandonable(step, cancelled, segmentId);
  }

  /**
   * Trains a codebook on the first {@code count} vectors of {@code sample} and encodes them. PQ
   * only guides the beam (every expanded node is rescored exactly), so the code size trades RAM for
   * how many extra nodes the beam expands.
   */
  private PqCodes trainPq(ListRandomAccessVectorValues sample, int count) {
    int m = subspaces();
    return step(() -> PqTrainer.train(sample, count, dim, m, distance == Distance.EUCLID, pool));
  }

  /**
   * A graph file's nodes from {@code vectors} and {@code adj}, running {@code check} (the build's
   * cancellation check) every 4,096 nodes written.
   */
  static GraphFile.NodeSource checkedSource(
      IntFunction<float[]> vectors, PageOrder.Adjacency adj, Runnable check) {
    return new GraphFile.NodeSource() {
      int written;

      @Override
      public float[] vector(int ord) {
        if ((written++ & 4095) == 0) {
          check.run();
        }
        return vectors.apply(ord);
      }

      @Override
      public int neighbours(int ord, int[] out) {
        return adj.neighbours(ord, out);
      }
    };
  }

  /** Throws if the build was cancelled. */
  private void checkCancelled() {
    checkCancelled(cancelled, segmentId);
  }

  /** Throws if the build was cancelled. */
  private static void checkCancelled(BooleanSupplier cancelled, int segmentId) {
    if (cancelled.getAsBoolean()) {
      throw new CancellationException("segment build cancelled [segment=" + segmentId + "]");
    }
  }

  /**
   * Builds one segment from points of any segments (compaction: merging small segments, dropping
   * deleted points) into {@code tmp}, then renames it to {@code dir}: new ordinal {@code i} holds
   * the {@code order[i]}-th entry of the concatenated {@code ords}, {@code order} being the graph's
   * {@link PageOrder} (written to the segment's order file). With a {@code pool}, PQ encoding and
   * the graph build run on it (compaction passes a one-thread, low-priority pool so that it cannot
   * take the CPU from queries); otherwise on jvector's default pools. The sources must stay open
   * until this returns.
   */
  private int build(List<? extends Segment> sources, List<int[]> ords, int n) throws IOException {
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    List<VectorFloat<?>> vectors = new ArrayList<>(n);
    float[][] raw = new float[n][];
    PointId[] ids = new PointId[n];
    byte[][] payloads = new byte[n][];
    extras = new SegmentVectors.Collector(n, keepDense);
    int at = 0;
    for (int s = 0; s < sources.size(); s++) {
      Segment src = sources.get(s);
      for (int ord : ords.get(s)) {
        raw[at] = src.vectorAt(ord);
        vectors.add(VTS.createFloatVector(raw[at]));
        ids[at] = src.idAt(ord);
        payloads[at] = src.payloadAt(ord);
        extras.add(at, src, ord);
        at++;
      }
    }
    var ravv = new ListRandomAccessVectorValues(vectors, dim);
    VectorSimilarityFunction vsf = DiskAnnSegment.similarity(distance);

    checkCancelled();
    PqCodes codes = trainPq(ravv, n);

    // One flat Vamana layer (ADR 0013): the file keeps layer 0 only and every search starts at the
    // entry node, so the layer must be navigable from there on its own. jvector's default
    // HNSW-style
    // hierarchy builds layer 0 for searches that arrive from the upper layers, which cost up to 6
    // points of recall@10 here (250k x 96, search_list 40, exact scores). The constructors with
    // explicit flags avoid jvector's process-wide GraphIndexBuilderConfig.
    if (distance != Distance.DOT) {
      LiveGraph g = liveGraph(raw, dim, params.maxDegree(), params, cancelled, segmentId);
      int[] order = writeGraph(raw, n == 0 ? 0 : g.entry(), g::neighbours);
      checkCancelled();
      finish(n, codes, ids, payloads, order);
      return n;
    }
    var bsp = BuildScoreProvider.randomAccessScoreProvider(ravv, vsf);
    boolean addHierarchy = false;
    boolean refine = true;
    // without a pool of the build's own: jvector's defaults (its no-pool constructor does the same)
    ForkJoinPool simd = pool != null ? pool : PhysicalCoreExecutor.pool();
    ForkJoinPool parallel = pool != null ? pool : ForkJoinPool.commonPool();
    int[] order;
    try (GraphIndexBuilder builder =
        new GraphIndexBuilder(
            bsp,
            dim,
            params.maxDegree(),
            params.buildSearchList(),
            1.2f,
            params.alpha(),
            addHierarchy,
            refine,
            simd,
            parallel)) {
      ImmutableGraphIndex g = buildGraph(builder, ravv, n, pool, cancelled, segmentId);
      try (var view = g.getView()) {
        order =
            writeGraph(
                raw,
                n == 0 ? 0 : view.entryNode().node,
                (ord, out) -> {
                  NodesIterator it = view.getNeighborsIterator(0, ord);
                  int c = 0;
                  while (it.hasNext() && c < out.length) {
                    out[c++] = it.nextInt();
                  }
                  return c;
                });
      }
    }
    checkCancelled();
    finish(n, codes, ids, payloads, order);
    return n;
  }

  /** Neighbours of a node of a graph in memory: copied into {@code out}, how many returned. */
  private interface Neighbours {
    int of(int ord, int[] out);
  }

  /**
   * Writes the graph of {@code raw} (entry {@code entry}, lists from {@code neighbours}) to {@code
   * tmp/graph.fvg} in its page-local order and returns that order.
   */
  private int[] writeGraph(float[][] raw, int entry, Neighbours neighbours) throws IOException {
    int n = raw.length;
    int[] order = pageOrder(n, entry, params.maxDegree(), neighbours::of);
    GraphFile.write(
        io,
        tmp.resolve(DiskAnnFormat.GRAPH_FILE),
        n,
        dim,
        params.maxDegree(),
        entry,
        checkedSource(ord -> raw[ord], neighbours::of, this::checkCancelled),
        order);
    return order;
  }

  /**
   * Points a {@link LiveGraph} build inserts between two checks of the build's cancellation (a few
   * tens of milliseconds at 96-d, about a second at 768-d).
   */
  static final int LIVE_SLICE = 1024;

  /**
   * The graph of {@code rows} at out-degree {@code degree} for {@code Cosine} and {@code Euclid}: a
   * {@link LiveGraph} (Vamana inserts navigated by int8 codes, squared L2, slack 1.3, RobustPrune
   * at the index's alpha) built on the calling thread, its lists trimmed to {@code degree}. On 200k
   * × 96 points it takes about a third of the CPU of jvector's concurrent builder at the same
   * recall (ADR 0026); one writer per graph, so builds use more cores by building several graphs at
   * once (partitions, segments).
   */
  static LiveGraph liveGraph(
      float[][] rows,
      int dim,
      int degree,
      IndexParams params,
      BooleanSupplier cancelled,
      int segmentId) {
    LiveGraph g =
        new LiveGraph(
            new LiveGraph.Vectors() {
              @Override
              public float[] array(int ord) {
                return rows[ord];
              }

              @Override
              public int offset(int ord) {
                return 0;
              }
            },
            dim,
            new LiveGraph.Params(degree, params.buildSearchList(), Math.max(1f, params.alpha())),
            true);
    while (g.size() < rows.length) {
      checkCancelled(cancelled, segmentId);
      // the cancellation is checked between slices only: one check per slice, as jvector's builds
      g.catchUp(rows.length, LIVE_SLICE, () -> false);
    }
    checkCancelled(cancelled, segmentId);
    g.trimToMaxDegree();
    return g;
  }

  /**
   * Builds one segment as {@link #build} does, but within {@code budget} bytes of heap for the
   * graph: the vectors are streamed from the sources ({@link VectorSource}) into a {@link
   * PartitionedGraphBuilder}, whose scratch files live in {@code tmp/work}.
   */
  private int buildPartitioned(
      List<? extends Segment> sources,
      List<int[]> ords,
      int n,
      long budget,
      long seed,
      java.util.function.Consumer<PartitionedGraphBuilder> built)
      throws IOException {
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    // ids and payloads stay in the sources until the metadata is written: a merge of millions of
    // points must not hold an object and a payload copy for each
    extras = new SegmentVectors.Collector(n, keepDense);
    int at = 0;
    int[] starts = new int[sources.size() + 1];
    for (int s = 0; s < sources.size(); s++) {
      Segment src = sources.get(s);
      starts[s] = at;
      for (int ord : ords.get(s)) {
        extras.add(at, src, ord);
        at++;
      }
    }
    starts[sources.size()] = at;
    checkCancelled();
    var builder =
        new PartitionedGraphBuilder(
            io,
            tmp.resolve(WORK_DIR),
            dim,
            distance,
            params,
            budget,
            pool,
            cancelled,
            segmentId,
            seed);
    builder.progress(progress);
    PqCodes codes =
        builder.build(
            VectorSource.of(sources, ords, dim),
            subspaces(),
            tmp.resolve(DiskAnnFormat.GRAPH_FILE),
            pageOrder);
    checkCancelled();
    finish(
        n,
        codes,
        i -> {
          int s = sourceOf(starts, i);
          return sources.get(s).idAt(ords.get(s)[i - starts[s]]);
        },
        i -> {
          int s = sourceOf(starts, i);
          return sources.get(s).payloadAt(ords.get(s)[i - starts[s]]);
        },
        builder.order());
    if (built != null) {
      built.accept(builder);
    }
    return n;
  }

  /**
   * The source whose points start at or before input point {@code i} ({@code starts} ascending).
   */
  static int sourceOf(int[] starts, int i) {
    int s = java.util.Arrays.binarySearch(starts, 0, starts.length - 1, i);
    if (s < 0) {
      return -s - 2;
    }
    while (s + 1 < starts.length - 1 && starts[s + 1] == i) {
      s++; // sources without points share a start with the next one
    }
    return s;
  }

  /** The scratch directory of a partitioned build, inside the segment's temporary directory. */
  static final String WORK_DIR = "work";

  /**
   * What jvector's {@code GraphIndexBuilder.build(ravv)} does (add every node on the builder's SIMD
   * pool, then {@code cleanup}), in slices with a cancellation check between them.
   */
  static ImmutableGraphIndex buildGraph(
      GraphIndexBuilder builder,
      ListRandomAccessVectorValues ravv,
      int n,
      ForkJoinPool pool,
      BooleanSupplier cancelled,
      int segmentId) {
    ForkJoinPool simd = pool != null ? pool : PhysicalCoreExecutor.pool();
    var vectors = ravv.threadLocalSupplier();
    int slice = Math.max(64, GRAPH_SLICE_PER_THREAD * simd.getParallelism());
    for (int from = 0; from < n; from += slice) {
      checkCancelled(cancelled, segmentId);
      int start = from;
      int end = Math.min(n, from + slice);
      simd.submit(
              () ->
                  java.util.stream.IntStream.range(start, end)
                      .parallel()
                      .forEach(node -> builder.addGraphNode(node, vectors.get().getVector(node))))
          .join();
    }
    checkCancelled(cancelled, segmentId);
    return abandonable(
        () -> {
          builder.cleanup();
          return builder.getGraph();
        },
        cancelled,
        segmentId);
  }

  /**
   * Runs a jvector step that cannot be stopped (PQ training's k-means, the graph's final cleanup
   * pass: seconds to tens of seconds for large segments) on a thread of its own and waits for it,
   * checking {@code cancelled} every {@value #ABANDON_POLL_MILLIS} ms. When cancelled, the build
   * gives the step up and throws at once; the step finishes in the background on heap copies of the
   * data and its result is dropped. So a shutdown never waits for it.
   */
  static <T> T abandonable(
      java.util.function.Supplier<T> step, BooleanSupplier cancelled, int segmentId) {
    if (cancelled == BuildSpec.NEVER_CANCELLED) {
      return step.get();
    }
    java.util.concurrent.CompletableFuture<T> f =
        java.util.concurrent.CompletableFuture.supplyAsync(
            step,
            r ->
                Thread.ofPlatform().name("flashvec-build-step-" + segmentId).daemon(true).start(r));
    while (true) {
      checkCancelled(cancelled, segmentId);
      try {
        return f.get(ABANDON_POLL_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        // not done yet: check the cancellation again
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CancellationException("segment build interrupted [segment=" + segmentId + "]");
      } catch (java.util.concurrent.ExecutionException e) {
        if (e.getCause() instanceof RuntimeException re) {
          throw re;
        }
        if (e.getCause() instanceof Error err) {
          throw err;
        }
        throw new IllegalStateException(e.getCause());
      }
    }
  }

  /**
   * The page-local order of a graph about to be written ({@link PageOrder}), or {@code null} to
   * keep the input order (one record per page, or {@link #pageOrder} off).
   */
  private int[] pageOrder(int n, int entry, int maxDegree, PageOrder.Adjacency adj) {
    if (!pageOrder) {
      return null;
    }
    checkCancelled();
    return PageOrder.compute(
        n, entry, GraphFile.recordsPerPage(dim, maxDegree), Math.max(maxDegree, 1024), adj);
  }

  /** The settings the graph this writer writes was built with, recorded in its build file. */
  private void built(int maxDegree, int buildSearchList) {
    this.builtDegree = maxDegree;
    this.builtList = buildSearchList;
  }

  /**
   * Writes the PQ file and the metadata next to a written graph file in {@code tmp}, fsyncs them
   * and renames {@code tmp} to {@code dir}. With an {@code order} (the graph file's, see {@link
   * PageOrder}) the codes, ids and payloads, given in input order, are rearranged alike in place,
   * and the order is written ({@link DiskAnnFormat#ORDER_FILE}) for the shard to map the input's
   * points to their new ordinals. The build file ({@link DiskAnnFormat#BUILD_FILE}) records the
   * graph's settings when they are known ({@link #built}).
   */
  private void finish(int n, PqCodes codes, PointId[] ids, byte[][] payloads, int[] order)
      throws IOException {
    finish(n, codes, i -> ids[i], i -> payloads[i], order);
  }

  /**
   * {@link #finish(int, PqCodes, PointId[], byte[][], int[])} with input point {@code i}'s id and
   * payload from {@code ids} and {@code payloads}: asked for as the metadata is written, in the
   * output's order, rather than held.
   */
  private void finish(
      int n, PqCodes codes, IntFunction<PointId> ids, IntFunction<byte[]> payloads, int[] order)
      throws IOException {
    IntFunction<PointId> idAt = ids;
    IntFunction<byte[]> payloadAt = payloads;
    if (builtList > 0) {
      DiskAnnFormat.writeBuild(io, tmp, segmentId, builtDegree, builtList);
    }
    if (order != null) {
      codes.permute(order);
      idAt = i -> ids.apply(order[i]);
      payloadAt = i -> payloads.apply(order[i]);
      extras.gather(order);
      DiskAnnFormat.writeOrder(io, tmp.resolve(DiskAnnFormat.ORDER_FILE), segmentId, order);
    }
    Path pqPath = tmp.resolve(DiskAnnFormat.PQ_FILE);
    codes.write(io, pqPath, segmentId);
    fsync(io, tmp.resolve(DiskAnnFormat.GRAPH_FILE));
    long[] graphCrc = ChecksummedFile.crcAndLength(io, tmp.resolve(DiskAnnFormat.GRAPH_FILE));
    long[] pqCrc = ChecksummedFile.crcAndLength(io, pqPath);
    boolean vectors = extras.any();
    if (vectors) {
      extras.write(io, tmp, segmentId);
    }
    SegmentMeta.write(
        io,
        tmp.resolve(DiskAnnFormat.META_FILE),
        segmentId,
        n,
        dim,
        distance,
        graphCrc,
        pqCrc,
        idAt,
        payloadAt,
        vectors);
    io.fsyncDirectory(tmp);
    io.crashPoint(CrashPoint.SEGMENT_BUILD_FILES_WRITTEN);
    io.atomicMove(tmp, dir);
    io.crashPoint(CrashPoint.SEGMENT_BUILD_RENAMED);
    io.fsyncDirectory(dir.getParent());
  }

  /**
   * Writes segment {@code segmentId} as {@code src} with PQ codes of {@code params}' size: the
   * graph file is {@code src}'s, hard-linked (copied where the file system has no links), so
   * nothing is built; {@code codebook} is used when it has {@code params}' size and the dimension
   * ({@code null}: none), else a codebook is trained on an even sample of at most {@code
   * trainingSample} of its vectors; every vector is encoded, and the ids and payloads are written
   * in the same ordinals, deleted ones included (the caller marks them, as after a merge). The new
   * segment has no order file: ordinal {@code i} is {@code src}'s ordinal {@code i}. Written like
   * {@link #write}; {@code src} must be {@link DiskAnnSegment#recodable}. Returns the number of
   * points written.
   */
  static int recode(
      FileIO io,
      Path dir,
      int segmentId,
      DiskAnnSegment src,
      Distance distance,
      IndexParams params,
      PqCodebook codebook,
      int trainingSample,
      ForkJoinPool pool,
      BooleanSupplier cancelled)
      throws IOException {
    if (!src.recodable()) {
      throw new IllegalArgumentException(
          "segment cannot be recoded around its graph [segment=" + src.id() + "]");
    }
    DiskAnnWriter w =
        new DiskAnnWriter(
            io, dir, segmentId, src.dimension(), distance, params, pool, cancelled, false);
    return w.intoTmp(() -> w.recodeFrom(src, codebook, trainingSample));
  }

  private int recodeFrom(DiskAnnSegment src, PqCodebook codebook, int trainingSample)
      throws IOException {
    int n = src.size();
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    Path graph = tmp.resolve(DiskAnnFormat.GRAPH_FILE);
    try {
      Files.createLink(graph, src.dir().resolve(DiskAnnFormat.GRAPH_FILE));
    } catch (UnsupportedOperationException | IOException e) {
      Files.copy(src.dir().resolve(DiskAnnFormat.GRAPH_FILE), graph);
    }
    var b = src.graphBuild();
    if (b != null) {
      built(b.maxDegree(), b.buildSearchList()); // the graph is the source's
    }
    checkCancelled();
    PqCodebook book = fittingOrTrained(codebook, n, src::vectorAt, trainingSample);
    checkCancelled();
    byte[] codes = step(() -> PqTrainer.encodeAll(book, n, src::vectorAt, pool));
    checkCancelled();
    extras = new SegmentVectors.Collector(n, keepDense);
    for (int i = 0; i < n; i++) {
      extras.add(i, src, i);
    }
    // ids and payloads are read from the source as the metadata is written, not held: a recode
    // runs under the memory budget beside the source's codes, at any segment size
    finish(n, new PqCodes(book, n, codes), src::idAt, src::payloadAt, null);
    return n;
  }

  /**
   * Encodes the {@code n} vectors of {@code src} with {@code book}, gathers its ids, payloads and
   * other vectors in its ordinals, and finishes the segment in {@code order} ({@code null}: the
   * ordinals as they are).
   */
  private void encodeAndFinish(Segment src, int n, PqCodebook book, int[] order)
      throws IOException {
    byte[] codes = step(() -> PqTrainer.encodeAll(book, n, src::vectorAt, pool));
    checkCancelled();
    PointId[] ids = new PointId[n];
    byte[][] payloads = new byte[n][];
    extras = new SegmentVectors.Collector(n, keepDense);
    for (int i = 0; i < n; i++) {
      ids[i] = src.idAt(i);
      payloads[i] = src.payloadAt(i);
      extras.add(i, src, i);
    }
    finish(n, new PqCodes(book, n, codes), ids, payloads, order);
  }

  /**
   * Writes segment {@code segmentId} from a frozen growing segment whose {@link LiveGraph} holds
   * every ordinal (ADR 0011): that graph, its lists pruned to {@code maxDegree}, is the segment's
   * graph, so nothing is rebuilt; every ordinal is kept (the caller marks the deleted ones) and the
   * segment's ordinal {@code i} holds the frozen segment's ordinal {@code order[i]}, {@code order}
   * being the graph's {@link PageOrder} (written to the segment's order file). PQ codes are encoded
   * with {@code codebook} (the shard's newest, so sealing needs no training) when it fits the
   * dimension and the subspace count, else with a codebook trained on an evenly spaced sample of at
   * most {@value PqTrainer#TRAINING_SAMPLE} points. Encoding runs on {@code pool} ({@code null}:
   * the common pool). Written like {@link #write}.
   */
  public static int writeFromGraph(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment src,
      Distance distance,
      IndexParams params,
      PqCodebook codebook,
      ForkJoinPool pool,
      BooleanSupplier cancelled)
      throws IOException {
    return writeFromGraph(
        io, dir, segmentId, src, distance, params, codebook, pool, cancelled, true);
  }

  /**
   * {@link #writeFromGraph(FileIO, Path, int, GrowingSegment, Distance, IndexParams, PqCodebook,
   * ForkJoinPool, BooleanSupplier)}; without {@code pageOrder} ordinal {@code i} stays ordinal
   * {@code i}.
   */
  static int writeFromGraph(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment src,
      Distance distance,
      IndexParams params,
      PqCodebook codebook,
      ForkJoinPool pool,
      BooleanSupplier cancelled,
      boolean pageOrder)
      throws IOException {
    DiskAnnWriter w =
        new DiskAnnWriter(
            io, dir, segmentId, src.dimension(), distance, params, pool, cancelled, pageOrder);
    return w.intoTmp(() -> w.fromGraph(src, codebook));
  }

  private int fromGraph(GrowingSegment src, PqCodebook codebook) throws IOException {
    LiveGraph g = src.graph();
    int n = src.size();
    if (g == null || g.size() != n) {
      throw new IllegalStateException(
          "live graph does not hold the segment [segment="
              + src.id()
              + ", size="
              + n
              + ", graph="
              + (g == null ? -1 : g.size())
              + "]");
    }
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    built(g.maxDegree(), g.buildList());
    g.trimToMaxDegree();
    int[] order = pageOrder(n, Math.max(0, g.entry()), g.maxDegree(), g::neighbours);
    GraphFile.write(
        io,
        tmp.resolve(DiskAnnFormat.GRAPH_FILE),
        n,
        dim,
        g.maxDegree(),
        g.entry(),
        checkedSource(src::vectorAt, g::neighbours, this::checkCancelled),
        order);
    PqCodebook book = fittingOrTrained(codebook, n, src::vectorAt);
    encodeAndFinish(src, n, book, order);
    return n;
  }

  /**
   * Writes segment {@code segmentId} <em>raw</em>: the points {@code ords} of {@code src} in that
   * order, their vectors in a graph file without edges ({@link GraphFile#writeRaw}), PQ codes, ids
   * and payloads, and no graph. Nothing is built, so it takes about as long as writing the vectors;
   * a later merge builds the graph (see {@link io.flashvec.index.segment.SegmentFormat#writeRaw}).
   * PQ codes use {@code codebook} when it fits the dimension and subspace count, else a codebook
   * trained on an evenly spaced sample of at most {@value PqTrainer#TRAINING_SAMPLE} points.
   * Ordinal {@code i} holds {@code ords[i]}: no order file, and the {@link SegmentVectors} file
   * (sparse vectors, points without the dense vector) in that order. Written like {@link #write}.
   */
  public static int writeRaw(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment src,
      int[] ords,
      Distance distance,
      IndexParams params,
      PqCodebook codebook,
      ForkJoinPool pool,
      BooleanSupplier cancelled)
      throws IOException {
    DiskAnnWriter w =
        new DiskAnnWriter(
            io, dir, segmentId, src.dimension(), distance, params, pool, cancelled, false);
    if (w.dim == 0) {
      return w.intoTmp(() -> w.besideOnly(List.of(src), List.<int[]>of(ords), ords.length));
    }
    return w.intoTmp(() -> w.raw(src, ords, codebook));
  }

  /**
   * {@code codebook} when it fits this segment (same dimension and subspaces, some points), else
   * one trained on an even sample of the segment's {@code n} vectors.
   */
  private PqCodebook fittingOrTrained(PqCodebook codebook, int n, IntFunction<float[]> vectorAt) {
    return fittingOrTrained(codebook, n, vectorAt, PqTrainer.TRAINING_SAMPLE);
  }

  /** As above, trained on at most {@code maxSample} points (at least one). */
  private PqCodebook fittingOrTrained(
      PqCodebook codebook, int n, IntFunction<float[]> vectorAt, int maxSample) {
    if (codebook != null
        && codebook.dimension() == dim
        && codebook.subspaces() == subspaces()
        && n != 0) {
      return codebook;
    }
    int sample = Math.min(n, Math.clamp(maxSample, 1, PqTrainer.TRAINING_SAMPLE));
    List<VectorFloat<?>> vs = new ArrayList<>(sample);
    for (int i = 0; i < sample; i++) {
      vs.add(VTS.createFloatVector(vectorAt.apply((int) ((long) i * n / sample))));
    }
    return trainPq(new ListRandomAccessVectorValues(vs, dim), sample).codebook();
  }

  private int raw(GrowingSegment src, int[] ords, PqCodebook codebook) throws IOException {
    int n = ords.length;
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    GraphFile.writeRaw(
        io,
        tmp.resolve(DiskAnnFormat.GRAPH_FILE),
        n,
        dim,
        checkedSource(i -> src.vectorAt(ords[i]), (ord, out) -> 0, this::checkCancelled)::vector);
    PqCodebook book = fittingOrTrained(codebook, n, i -> src.vectorAt(ords[i]));
    byte[] codes = step(() -> PqTrainer.encodeAll(book, n, i -> src.vectorAt(ords[i]), pool));
    checkCancelled();
    PointId[] ids = new PointId[n];
    byte[][] payloads = new byte[n][];
    // sparse vectors and the points without the dense vector (placeholders in the file above)
    extras = new SegmentVectors.Collector(n, keepDense);
    for (int i = 0; i < n; i++) {
      ids[i] = src.idAt(ords[i]);
      payloads[i] = src.payloadAt(ords[i]);
      extras.add(i, src, ords[i]);
    }
    finish(n, new PqCodes(book, n, codes), ids, payloads, null);
    return n;
  }

  /**
   * Writes a segment of a collection without a primary dense vector (dimension 0): no graph file,
   * no PQ codes and no order file, only the metadata (ids and payloads, {@link SegmentMeta}, no
   * graph) and the vectors file with every field the points have, in input order. A seal, a raw
   * seal and a merge of such segments all write this, so nothing is ever left to build.
   */
  private int besideOnly(List<? extends Segment> sources, List<int[]> ords, int n)
      throws IOException {
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    PointId[] ids = new PointId[n];
    byte[][] payloads = new byte[n][];
    extras = new SegmentVectors.Collector(n, keepDense);
    int at = 0;
    for (int s = 0; s < sources.size(); s++) {
      Segment src = sources.get(s);
      for (int ord : ords.get(s)) {
        if ((at & 4095) == 0) {
          checkCancelled();
        }
        ids[at] = src.idAt(ord);
        payloads[at] = src.payloadAt(ord);
        extras.add(at, src, ord);
        at++;
      }
    }
    boolean vectors = extras.any();
    if (vectors) {
      extras.write(io, tmp, segmentId);
    }
    SegmentMeta.write(
        io,
        tmp.resolve(DiskAnnFormat.META_FILE),
        segmentId,
        n,
        0,
        distance,
        new long[2],
        new long[2],
        ids,
        payloads,
        vectors);
    io.fsyncDirectory(tmp);
    io.crashPoint(CrashPoint.SEGMENT_BUILD_FILES_WRITTEN);
    io.atomicMove(tmp, dir);
    io.crashPoint(CrashPoint.SEGMENT_BUILD_RENAMED);
    io.fsyncDirectory(dir.getParent());
    return n;
  }

  private static void fsync(FileIO io, Path p) throws IOException {
    try (FileChannel ch = io.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      io.force(ch, true);
    }
  }
}
