package io.flashvec.index.jvector;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.disk.BeamSearcher;
import io.flashvec.index.disk.GraphFile;
import io.flashvec.index.disk.PqCodes;
import io.flashvec.index.filter.FilterPlanner;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.MappedFile;
import io.flashvec.storage.ThreadIo;
import io.github.jbellis.jvector.graph.GraphIndexBuilder;
import io.github.jbellis.jvector.graph.ImmutableGraphIndex;
import io.github.jbellis.jvector.graph.ListRandomAccessVectorValues;
import io.github.jbellis.jvector.graph.NodesIterator;
import io.github.jbellis.jvector.graph.similarity.BuildScoreProvider;
import io.github.jbellis.jvector.quantization.PQVectors;
import io.github.jbellis.jvector.quantization.ProductQuantization;
import io.github.jbellis.jvector.vector.VectorSimilarityFunction;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.ByteSequence;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import io.github.jbellis.jvector.vector.types.VectorTypeSupport;
import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;

/**
 * A sealed, immutable segment on disk: a Vamana graph built by jvector and written in FlashVec's
 * own page-aligned format with the full vectors inline ({@link GraphFile}, memory-mapped, {@code
 * MADV_RANDOM}), PQ codes in RAM ({@link PqCodes}) guiding FlashVec's beam search ({@link
 * BeamSearcher}), and an exact rescoring of every expanded node from the vector read with it.
 *
 * <h2>Files (one directory per segment, {@code seg-<id>/})</h2>
 *
 * <ul>
 *   <li>{@code graph.fvg} — the graph: a header page, then fixed-size node records {@code vector |
 *       degree | neighbours} that never straddle a 4 KiB page.
 *   <li>{@code pq.fvs} — the PQ codebook and one code per point (checksummed).
 *   <li>{@code meta.fvs} — a {@link ChecksummedFile} ({@code segment-meta} v2): point count,
 *       dimension, metric, length and CRC32C of the two files above (verified at open), then every
 *       ordinal's point id and payload.
 *   <li>{@code deleted.fvs} — optional {@link ChecksummedFile} ({@code segment-deleted} v1): the
 *       deletion bitmap as of the last WAL checkpoint.
 * </ul>
 *
 * Graph ordinal {@code i} is segment ordinal {@code i}.
 *
 * <h2>Threads</h2>
 *
 * Searches are thread-safe: each borrows a {@link BeamSearcher} (scratch sized to the segment, not
 * thread-safe) from a pool. Deletions set atomic bits that searches pass as the accepted-ordinals
 * predicate, so deleted points are traversed but never returned. The segment owns its mapping;
 * {@link #close()} unmaps it (a search still running then fails with an exception, it cannot read
 * freed memory).
 */
public final class DiskAnnSegment implements Segment, Closeable {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(DiskAnnSegment.class);

  static final String META_FORMAT = "segment-meta";
  static final String DELETED_FORMAT = "segment-deleted";
  static final int META_VERSION = 2;
  static final String GRAPH_FILE = "graph.fvg";
  static final String PQ_FILE = "pq.fvs";
  static final String META_FILE = "meta.fvs";
  static final String DELETED_FILE = "deleted.fvs";

  /** When a search prefetches the records of each beam step ({@code flashvec.search.prefetch}). */
  public enum Prefetch {
    /** Never: each record is read by a page fault when touched. */
    OFF,
    /** Always: one {@code madvise(WILLNEED)} per record per step, even when cached. */
    ON,
    /** While the segment's recent searches read from the device (the default). */
    AUTO
  }

  private static volatile Prefetch prefetchMode = Prefetch.AUTO;
  private static volatile int defaultBeamWidth = 0;

  /** Beam width when reads go to the device and the request leaves it to the server. */
  static final int COLD_BEAM_WIDTH = 4;

  /**
   * Sets the process-wide prefetch mode and default beam width (server configuration). Beam width 0
   * means automatic: {@value #COLD_BEAM_WIDTH} while the segment prefetches (its reads go to the
   * device, so reading several records per round trip pays), 1 while it is cached (a wider beam
   * only expands more nodes).
   */
  public static void configureIo(Prefetch mode, int beamWidth) {
    prefetchMode = mode;
    defaultBeamWidth = Math.clamp(beamWidth, 0, 64);
  }

  private static volatile ForkJoinPool defaultBuildPool;

  /**
   * Sets the pool that index builds without their own pool run on ({@code
   * flashvec.index.build-threads}); {@code null} lets jvector use one thread per core. A small pool
   * bounds the CPU a build takes from concurrent queries, at the price of slower builds.
   */
  public static void configureBuildPool(ForkJoinPool pool) {
    defaultBuildPool = pool;
  }

  public static Prefetch prefetchMode() {
    return prefetchMode;
  }

  private static final VectorTypeSupport VTS =
      VectorizationProvider.getInstance().getVectorTypeSupport();

  private static final ValueLayout.OfInt LE_INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private final int id;
  private final Path dir;
  private final int count;
  private final int dim;
  private final Distance distance;

  /** Numeric ids, or the low 64 bits of UUIDs. */
  private final long[] idLo;

  /** High 64 bits of UUID ids, or null when the segment holds numeric ids only. */
  private final long[] idHi;

  /** Which ordinals hold UUIDs; null when none does. */
  private final BitSet uuidOrds;

  /**
   * The metadata file, mapped: payloads are read from it on demand, so they cost page cache, not
   * heap. Null when no point has a payload.
   */
  private final MappedFile metaMap;

  /** File offset of each point's payload length prefix; null when no point has a payload. */
  private final long[] payloadAt;

  private final AtomicLongArray deleted;
  private final AtomicInteger live;
  private final GraphFile graph;
  private final PqCodes pq;
  private final long diskBytes;
  private final int defaultSearchList;
  private final boolean inMemory;
  private final ConcurrentLinkedDeque<BeamSearcher> searchers = new ConcurrentLinkedDeque<>();
  private final IntPredicate liveOrds;

  /** Searches left to prefetch for since one last read from the device ({@link Prefetch#AUTO}). */
  private volatile int coldCredit;

  /** Searches in a row that read nothing from the device, up to {@link #CALM_SEARCHES}. */
  private volatile int calmSearches;

  /** Searches in a row without a device read after which {@link #servedFromMemory} holds. */
  static final int CALM_SEARCHES = 32;

  private DiskAnnSegment(
      int id,
      Path dir,
      int count,
      int dim,
      Distance distance,
      long[] idLo,
      long[] idHi,
      BitSet uuidOrds,
      MappedFile metaMap,
      long[] payloadAt,
      BitSet deletedBits,
      GraphFile graph,
      PqCodes pq,
      long diskBytes,
      int defaultSearchList,
      boolean inMemory) {
    this.id = id;
    this.dir = dir;
    this.count = count;
    this.dim = dim;
    this.distance = distance;
    this.idLo = idLo;
    this.idHi = idHi;
    this.uuidOrds = uuidOrds;
    this.metaMap = metaMap;
    this.payloadAt = payloadAt;
    this.deleted = new AtomicLongArray((count + 63) >>> 6);
    int dead = 0;
    for (int i = deletedBits.nextSetBit(0);
        i >= 0 && i < count;
        i = deletedBits.nextSetBit(i + 1)) {
      deleted.set(i >>> 6, deleted.get(i >>> 6) | (1L << i));
      dead++;
    }
    this.live = new AtomicInteger(count - dead);
    this.graph = graph;
    this.pq = pq;
    this.diskBytes = diskBytes;
    this.defaultSearchList = defaultSearchList;
    this.inMemory = inMemory;
    this.liveOrds = ord -> (deleted.get(ord >>> 6) & (1L << ord)) == 0;
  }

  /** Cosine vectors are stored normalised, so cosine and dot both search by dot product. */
  static VectorSimilarityFunction similarity(Distance d) {
    return d == Distance.EUCLID
        ? VectorSimilarityFunction.EUCLIDEAN
        : VectorSimilarityFunction.DOT_PRODUCT;
  }

  /** Converts the searcher's exact distance (lower is better) to our score. */
  static float toScore(Distance d, float distance) {
    return d == Distance.EUCLID ? (float) Math.sqrt(Math.max(0f, distance)) : -distance;
  }

  /**
   * Builds a segment from the live ordinals of a frozen growing segment and writes it to {@code
   * dir} (which must not exist): files are written into {@code dir.tmp}, fsynced, and the directory
   * is renamed into place. Returns the number of points written.
   */
  public static int build(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment src,
      int[] liveOrds,
      Distance distance,
      IndexParams params)
      throws IOException {
    return build(
        io,
        dir,
        segmentId,
        List.of(src),
        List.of(liveOrds),
        src.dimension(),
        distance,
        params,
        null);
  }

  /**
   * Builds one segment from points of any segments (compaction: merging small segments, dropping
   * deleted points): new ordinal {@code i} is the {@code i}-th entry of the concatenated {@code
   * ords}, in order. Written like {@link #build(FileIO, Path, int, GrowingSegment, int[], Distance,
   * IndexParams)}. With a {@code pool}, PQ encoding and the graph build run on it (compaction
   * passes a one-thread, low-priority pool so that it cannot take the CPU from queries); otherwise
   * on jvector's default pools. The sources must stay open until this returns.
   */
  public static int build(
      FileIO io,
      Path dir,
      int segmentId,
      List<? extends Segment> sources,
      List<int[]> ords,
      int dim,
      Distance distance,
      IndexParams params,
      ForkJoinPool pool)
      throws IOException {
    return build(io, dir, segmentId, sources, ords, dim, distance, params, pool, NEVER_CANCELLED);
  }

  private static final BooleanSupplier NEVER_CANCELLED = () -> false;

  /**
   * Graph nodes inserted per build thread between two checks of a build's cancellation: one such
   * slice takes ~0.1–1.3 s of CPU (96-d to 768-d points), so a shutdown waits at most about that
   * long for a graph build, while the barrier between slices costs the build well under 1%.
   */
  static final int GRAPH_SLICE_PER_THREAD = 256;

  /**
   * {@link #build(FileIO, Path, int, List, List, int, Distance, IndexParams, ForkJoinPool)} that
   * checks {@code cancelled} between its steps and between slices of the graph build (jvector's
   * {@code GraphIndexBuilder.build} cannot be stopped, so the nodes are added here in slices of
   * {@link #GRAPH_SLICE_PER_THREAD} per thread) and then throws a {@link CancellationException}.
   * Whenever it throws (cancelled, a full disk, any failure) it removes {@code dir.tmp}, and {@code
   * dir} if the rename had happened: no temporary files are left behind. PQ training, one step of
   * jvector's, runs to its end (seconds, on a sample of at most {@value #ROTATED_PQ_SAMPLE}
   * points).
   */
  public static int build(
      FileIO io,
      Path dir,
      int segmentId,
      List<? extends Segment> sources,
      List<int[]> ords,
      int dim,
      Distance distance,
      IndexParams params,
      ForkJoinPool pool,
      BooleanSupplier cancelled)
      throws IOException {
    Path tmp = dir.resolveSibling(dir.getFileName() + ".tmp");
    boolean done = false;
    try {
      int n =
          buildInto(io, tmp, dir, segmentId, sources, ords, dim, distance, params, pool, cancelled);
      done = true;
      return n;
    } finally {
      if (!done) {
        removeOutput(io, tmp, dir);
      }
    }
  }

  /** Removes what a failed or cancelled build wrote; a failure to do so is logged. */
  private static void removeOutput(FileIO io, Path tmp, Path dir) {
    try {
      io.deleteTree(tmp);
      io.deleteTree(dir);
    } catch (IOException | RuntimeException e) {
      // The next open removes directories that no manifest lists.
      LOG.warn("cannot remove the output of a failed segment build [dir={}]", tmp, e);
    }
  }

  /** Throws if the build was cancelled. */
  private static void checkCancelled(BooleanSupplier cancelled, int segmentId) {
    if (cancelled.getAsBoolean()) {
      throw new CancellationException("segment build cancelled [segment=" + segmentId + "]");
    }
  }

  /**
   * Bytes a segment of {@code points} points will take on disk (graph file with the vectors inline,
   * PQ codes and codebook, metadata with ids and {@code payloadBytes} of payloads, the deletion
   * bitmap), without its payload index: for free-space checks before a build. Rounded up, not
   * exact.
   */
  public static long estimateBytes(int points, int dim, IndexParams params, long payloadBytes) {
    int subspaces = params.pqSubspaces() > 0 ? params.pqSubspaces() : defaultSubspaces(dim);
    subspaces = Math.min(subspaces, dim);
    long graph = GraphFile.fileBytes(points, dim, params.maxDegree());
    long pq = (long) points * subspaces + 256L * dim * 4 + (long) dim * dim * 4 + 4096;
    long meta = (long) points * (17 + 4 + 8) + payloadBytes + 4096;
    long deleted = points / 8 + 4096;
    return graph + pq + meta + deleted;
  }

  private static int buildInto(
      FileIO io,
      Path tmp,
      Path dir,
      int segmentId,
      List<? extends Segment> sources,
      List<int[]> ords,
      int dim,
      Distance distance,
      IndexParams params,
      ForkJoinPool pool,
      BooleanSupplier cancelled)
      throws IOException {
    if (sources.size() != ords.size()) {
      throw new IllegalArgumentException(
          "one ordinal array per source [sources="
              + sources.size()
              + ", ords="
              + ords.size()
              + "]");
    }
    if (pool == null) {
      pool = defaultBuildPool;
    }
    int n = 0;
    for (int[] o : ords) {
      n += o.length;
    }
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    List<VectorFloat<?>> vectors = new ArrayList<>(n);
    float[][] raw = new float[n][];
    PointId[] ids = new PointId[n];
    byte[][] payloads = new byte[n][];
    int at = 0;
    for (int s = 0; s < sources.size(); s++) {
      Segment src = sources.get(s);
      for (int ord : ords.get(s)) {
        raw[at] = src.vectorAt(ord);
        vectors.add(VTS.createFloatVector(raw[at]));
        ids[at] = src.idAt(ord);
        payloads[at] = src.payloadAt(ord);
        at++;
      }
    }
    var ravv = new ListRandomAccessVectorValues(vectors, dim);
    VectorSimilarityFunction vsf = similarity(distance);

    // PQ only guides the beam (every expanded node is rescored exactly), so the code size trades
    // RAM for how many extra nodes the beam expands. Default: see defaultSubspaces.
    int subspaces = params.pqSubspaces() > 0 ? params.pqSubspaces() : defaultSubspaces(dim);
    subspaces = Math.min(subspaces, dim);
    checkCancelled(cancelled, segmentId);
    ForkJoinPool trainOn = pool;
    int m = subspaces;
    int count = n;
    PqCodes codes =
        abandonable(
            () -> trainPq(ravv, count, dim, m, distance == Distance.EUCLID, trainOn),
            cancelled,
            segmentId);

    // One flat Vamana layer (ADR 0013): the file keeps layer 0 only and every search starts at the
    // entry node, so the layer must be navigable from there on its own. jvector's default
    // HNSW-style
    // hierarchy builds layer 0 for searches that arrive from the upper layers, which cost up to 6
    // points of recall@10 here (250k x 96, search_list 40, exact scores). The constructors with
    // explicit flags avoid jvector's process-wide GraphIndexBuilderConfig.
    var bsp = BuildScoreProvider.randomAccessScoreProvider(ravv, vsf);
    boolean addHierarchy = false;
    boolean refine = true;
    try (GraphIndexBuilder builder =
        pool != null
            ? new GraphIndexBuilder(
                bsp,
                dim,
                params.maxDegree(),
                params.buildSearchList(),
                1.2f,
                params.alpha(),
                addHierarchy,
                refine,
                pool,
                pool)
            : new GraphIndexBuilder(
                bsp,
                dim,
                params.maxDegree(),
                params.buildSearchList(),
                1.2f,
                params.alpha(),
                addHierarchy,
                refine)) {
      ImmutableGraphIndex g = buildGraph(builder, ravv, n, pool, cancelled, segmentId);
      try (var view = g.getView()) {
        int entry = n == 0 ? 0 : view.entryNode().node;
        GraphFile.write(
            io,
            tmp.resolve(GRAPH_FILE),
            n,
            dim,
            params.maxDegree(),
            entry,
            new GraphFile.NodeSource() {
              @Override
              public float[] vector(int ord) {
                if ((ord & 4095) == 0) {
                  checkCancelled(cancelled, segmentId);
                }
                return raw[ord];
              }

              @Override
              public int neighbours(int ord, int[] out) {
                NodesIterator it = view.getNeighborsIterator(0, ord);
                int c = 0;
                while (it.hasNext() && c < out.length) {
                  out[c++] = it.nextInt();
                }
                return c;
              }
            });
      }
    }
    checkCancelled(cancelled, segmentId);
    finish(io, tmp, dir, segmentId, n, dim, distance, codes, ids, payloads);
    return n;
  }

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
    ForkJoinPool simd =
        pool != null ? pool : io.github.jbellis.jvector.util.PhysicalCoreExecutor.pool();
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

  /** How often a build waiting for an {@link #abandonable} step checks its cancellation. */
  static final long ABANDON_POLL_MILLIS = 50;

  /**
   * Runs a jvector step that cannot be stopped (PQ training's k-means, the graph's final cleanup
   * pass: seconds to tens of seconds for large segments) on a thread of its own and waits for it,
   * checking {@code cancelled} every {@value #ABANDON_POLL_MILLIS} ms. When cancelled, the build
   * gives the step up and throws at once; the step finishes in the background on heap copies of the
   * data and its result is dropped. So a shutdown never waits for it.
   */
  static <T> T abandonable(
      java.util.function.Supplier<T> step, BooleanSupplier cancelled, int segmentId) {
    if (cancelled == NEVER_CANCELLED) {
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
   * Writes the PQ file and the metadata next to a written graph file in {@code tmp}, fsyncs them
   * and renames {@code tmp} to {@code dir}.
   */
  private static void finish(
      FileIO io,
      Path tmp,
      Path dir,
      int segmentId,
      int n,
      int dim,
      Distance distance,
      PqCodes codes,
      PointId[] ids,
      byte[][] payloads)
      throws IOException {
    Path pqPath = tmp.resolve(PQ_FILE);
    codes.write(io, pqPath, segmentId);
    fsync(io, tmp.resolve(GRAPH_FILE));
    long[] graphCrc = ChecksummedFile.crcAndLength(io, tmp.resolve(GRAPH_FILE));
    long[] pqCrc = ChecksummedFile.crcAndLength(io, pqPath);
    ChecksummedFile.write(
        io,
        tmp.resolve(META_FILE),
        META_FORMAT,
        META_VERSION,
        segmentId,
        encodeMeta(n, dim, distance, graphCrc, pqCrc, ids, payloads));
    io.fsyncDirectory(tmp);
    io.atomicMove(tmp, dir);
    io.fsyncDirectory(dir.getParent());
  }

  /**
   * PQ bytes per vector when the collection does not set {@code pq_subspaces}: {@code dim / 8} from
   * {@value #EIGHTH_FROM_DIM} dimensions, else {@code dim / 4} but at least 32 (at most {@code dim
   * / 2}), so that small vectors keep codes fine enough to rank near neighbours (1M × 96: 32 bytes
   * give recall@10 0.96 at search_list 100 where 24 give 0.94). With rotated PQ (ADR 0013) larger
   * vectors do better per CPU with the shorter code: one thread, 100k points, at recall@10 0.95
   * 768-d needs search list ~17 with 96 bytes (~133 µs per search) against 15 with 192 (170 µs), at
   * 0.99 40 (184 µs) against 30–40 (221–241 µs); 384-d at 0.95 L=20 with 48 bytes (75 µs) against
   * ~17 with 96 (~80 µs), at 0.988 108 against ~120 µs — and the codes take half the RAM.
   */
  public static int defaultSubspaces(int dim) {
    if (dim >= EIGHTH_FROM_DIM) {
      return dim / 8;
    }
    return Math.max(1, Math.max(dim / 4, Math.min(dim / 2, 32)));
  }

  /** Dimension from which the default PQ code is {@code dim / 8} bytes. */
  static final int EIGHTH_FROM_DIM = 384;

  /** Points PQ is trained on when a codebook is trained from a live graph's segment. */
  static final int PQ_TRAINING_SAMPLE = 25_000;

  /**
   * Writes segment {@code segmentId} from a frozen growing segment whose {@link
   * io.flashvec.index.segment.LiveGraph} holds every ordinal (ADR 0011): that graph, its lists
   * pruned to {@code maxDegree}, is the segment's graph, so nothing is rebuilt; every ordinal is
   * kept (the caller marks the deleted ones) and ordinal {@code i} stays ordinal {@code i}. PQ
   * codes are encoded with {@code codebook} (the shard's newest, so sealing needs no training) when
   * it fits the dimension and the subspace count, else with a codebook trained on an evenly spaced
   * sample of at most {@value #PQ_TRAINING_SAMPLE} points. Encoding runs on {@code pool} ({@code
   * null}: the common pool). Written like {@link #build}.
   */
  public static int buildFromGraph(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment src,
      Distance distance,
      IndexParams params,
      io.flashvec.index.disk.PqCodebook codebook,
      ForkJoinPool pool)
      throws IOException {
    return buildFromGraph(
        io, dir, segmentId, src, distance, params, codebook, pool, NEVER_CANCELLED);
  }

  /**
   * {@link #buildFromGraph(FileIO, Path, int, GrowingSegment, Distance, IndexParams,
   * io.flashvec.index.disk.PqCodebook, ForkJoinPool)}, cancellable and leaving nothing behind when
   * it fails, like {@link #build(FileIO, Path, int, List, List, int, Distance, IndexParams,
   * ForkJoinPool, BooleanSupplier)}.
   */
  public static int buildFromGraph(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment src,
      Distance distance,
      IndexParams params,
      io.flashvec.index.disk.PqCodebook codebook,
      ForkJoinPool pool,
      BooleanSupplier cancelled)
      throws IOException {
    Path tmp = dir.resolveSibling(dir.getFileName() + ".tmp");
    boolean done = false;
    try {
      int n =
          buildFromGraphInto(
              io, tmp, dir, segmentId, src, distance, params, codebook, pool, cancelled);
      done = true;
      return n;
    } finally {
      if (!done) {
        removeOutput(io, tmp, dir);
      }
    }
  }

  private static int buildFromGraphInto(
      FileIO io,
      Path tmp,
      Path dir,
      int segmentId,
      GrowingSegment src,
      Distance distance,
      IndexParams params,
      io.flashvec.index.disk.PqCodebook codebook,
      ForkJoinPool pool,
      BooleanSupplier cancelled)
      throws IOException {
    if (pool == null) {
      pool = defaultBuildPool;
    }
    io.flashvec.index.segment.LiveGraph g = src.graph();
    int n = src.size();
    int dim = src.dimension();
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
    g.trimToMaxDegree();
    GraphFile.write(
        io,
        tmp.resolve(GRAPH_FILE),
        n,
        dim,
        g.maxDegree(),
        g.entry(),
        new GraphFile.NodeSource() {
          @Override
          public float[] vector(int ord) {
            if ((ord & 4095) == 0) {
              checkCancelled(cancelled, segmentId);
            }
            return src.vectorAt(ord);
          }

          @Override
          public int neighbours(int ord, int[] out) {
            return g.neighbours(ord, out);
          }
        });
    int subspaces = params.pqSubspaces() > 0 ? params.pqSubspaces() : defaultSubspaces(dim);
    subspaces = Math.min(subspaces, dim);
    if (codebook == null
        || codebook.dimension() != dim
        || codebook.subspaces() != subspaces
        || n == 0) {
      int sample = Math.min(n, PQ_TRAINING_SAMPLE);
      List<VectorFloat<?>> vs = new ArrayList<>(sample);
      for (int i = 0; i < sample; i++) {
        vs.add(VTS.createFloatVector(src.vectorAt((int) ((long) i * n / sample))));
      }
      ForkJoinPool trainOn = pool;
      int m = subspaces;
      codebook =
          abandonable(
                  () ->
                      trainPq(
                          new ListRandomAccessVectorValues(vs, dim),
                          sample,
                          dim,
                          m,
                          distance == Distance.EUCLID,
                          trainOn),
                  cancelled,
                  segmentId)
              .codebook();
    }
    io.flashvec.index.disk.PqCodebook book = codebook;
    ForkJoinPool encodeOn = pool;
    byte[] codes =
        abandonable(() -> encodeAll(book, n, src::vectorAt, encodeOn), cancelled, segmentId);
    checkCancelled(cancelled, segmentId);
    PointId[] ids = new PointId[n];
    byte[][] payloads = new byte[n][];
    for (int i = 0; i < n; i++) {
      ids[i] = src.idAt(i);
      payloads[i] = src.payloadAt(i);
    }
    finish(
        io,
        tmp,
        dir,
        segmentId,
        n,
        dim,
        distance,
        new io.flashvec.index.disk.PqCodes(codebook, n, codes),
        ids,
        payloads);
    return n;
  }

  /** The PQ codebook of this segment (a growing segment sealed after it may reuse it). */
  public io.flashvec.index.disk.PqCodebook codebook() {
    return pq.codebook();
  }

  /**
   * Whether PQ codebooks quantize in rotated principal axes (ADR 0013). On by default; {@code
   * -Dflashvec.pq.rotate=false} trains plain codebooks, for comparisons only.
   */
  static final boolean ROTATE_PQ = !"false".equals(System.getProperty("flashvec.pq.rotate"));

  /** Points whose covariance gives the rotation, and points the rotated codebook is trained on. */
  static final int ROTATION_SAMPLE = 20_000;

  static final int ROTATED_PQ_SAMPLE = 50_000;

  /**
   * Trains a product quantizer for {@code ravv}'s {@code n} vectors and encodes them: in rotated
   * principal axes ({@link io.flashvec.index.disk.PqRotation}) unless turned off, with jvector's
   * k-means for the codebooks either way.
   */
  public static PqCodes trainPq(
      ListRandomAccessVectorValues ravv,
      int n,
      int dim,
      int subspaces,
      boolean euclid,
      ForkJoinPool pool) {
    return trainPq(ravv, n, dim, subspaces, euclid, pool, ROTATE_PQ);
  }

  static PqCodes trainPq(
      ListRandomAccessVectorValues ravv,
      int n,
      int dim,
      int subspaces,
      boolean euclid,
      ForkJoinPool pool,
      boolean rotate) {
    if (n == 0) {
      return new PqCodes(
          0, 1, dim, null, subspaceSizes(dim, subspaces), new float[dim], new byte[0]);
    }
    if (rotate && n >= 2 && dim >= 2) {
      return trainRotatedPq(ravv, n, dim, subspaces, pool);
    }
    return trainPlainPq(ravv, n, dim, subspaces, euclid, pool);
  }

  /** jvector's split of {@code dim} coordinates into {@code subspaces} consecutive groups. */
  private static int[] subspaceSizes(int dim, int subspaces) {
    int[] sizes = new int[subspaces];
    for (int s = 0; s < subspaces; s++) {
      sizes[s] = dim / subspaces + (s < dim % subspaces ? 1 : 0);
    }
    return sizes;
  }

  private static float[] toArray(VectorFloat<?> v, int dim) {
    float[] a = new float[dim];
    for (int i = 0; i < dim; i++) {
      a[i] = v.get(i);
    }
    return a;
  }

  private static PqCodes trainRotatedPq(
      ListRandomAccessVectorValues ravv, int n, int dim, int subspaces, ForkJoinPool pool) {
    int[] sizes = subspaceSizes(dim, subspaces);
    int rs = Math.min(n, ROTATION_SAMPLE);
    float[][] sample = new float[rs][];
    for (int i = 0; i < rs; i++) {
      sample[i] = toArray(ravv.getVector((int) ((long) i * n / rs)), dim);
    }
    io.flashvec.index.disk.PqRotation.Trained t =
        io.flashvec.index.disk.PqRotation.train(sample, dim, sizes);
    float[] mean = t.mean();
    float[] rotation = t.rotation();
    int ts = Math.min(n, ROTATED_PQ_SAMPLE);
    List<VectorFloat<?>> rotated = new ArrayList<>(ts);
    float[] x = new float[dim];
    for (int i = 0; i < ts; i++) {
      VectorFloat<?> v = ravv.getVector((int) ((long) i * n / ts));
      for (int d = 0; d < dim; d++) {
        x[d] = v.get(d) - mean[d];
      }
      float[] y = new float[dim];
      io.flashvec.index.disk.PqRotation.rotate(rotation, dim, x, y, 0);
      rotated.add(VTS.createFloatVector(y));
    }
    var rravv = new ListRandomAccessVectorValues(rotated, dim);
    int clusters = Math.min(256, ts);
    // k-means in the rotated, already centred space: no second centring
    ProductQuantization pq =
        pool != null
            ? ProductQuantization.compute(rravv, subspaces, clusters, false, -1f, pool, pool)
            : ProductQuantization.compute(rravv, subspaces, clusters, false);
    int m = pq.getSubspaceCount();
    for (int s = 0; s < m; s++) {
      if (m != sizes.length || pq.getSubvectorSize(s) != sizes[s]) {
        throw new IllegalStateException(
            "jvector split the subspaces differently [subspace="
                + s
                + ", jvector="
                + pq.getSubvectorSize(s)
                + ", expected="
                + (s < sizes.length ? sizes[s] : -1)
                + "]");
      }
    }
    io.flashvec.index.disk.PqCodebook book =
        new io.flashvec.index.disk.PqCodebook(
            clusters, dim, mean, sizes, codebookFloats(pq, clusters, sizes), rotation);
    byte[] codes = encodeAll(book, n, i -> toArray(ravv.getVector(i), dim), pool);
    return new PqCodes(book, n, codes);
  }

  /**
   * PQ codes of {@code n} vectors ({@code vector.apply(i)}), encoded in blocks of 1,024 in parallel
   * on {@code pool} ({@code null}: the common pool).
   */
  private static byte[] encodeAll(
      io.flashvec.index.disk.PqCodebook book,
      int n,
      java.util.function.IntFunction<float[]> vector,
      ForkJoinPool pool) {
    int m = book.subspaces();
    byte[] codes = new byte[Math.multiplyExact(n, m)];
    Runnable encode =
        () ->
            java.util.stream.IntStream.range(0, (n + 1023) / 1024)
                .parallel()
                .forEach(
                    block -> {
                      float[] scratch = new float[book.scratchLength()];
                      for (int i = block * 1024; i < Math.min(n, block * 1024 + 1024); i++) {
                        book.encode(vector.apply(i), 0, codes, i * m, scratch);
                      }
                    });
    (pool != null ? pool : ForkJoinPool.commonPool()).submit(encode).join();
    return codes;
  }

  /** jvector's codebooks of {@code sizes} subspaces, subspace-major and centroid-major. */
  private static float[] codebookFloats(ProductQuantization pq, int clusters, int[] sizes) {
    int total = 0;
    for (int size : sizes) {
      total += size;
    }
    float[] books = new float[clusters * total];
    int at = 0;
    for (int s = 0; s < sizes.length; s++) {
      VectorFloat<?> cb = pq.getCodebookVector(s);
      for (int i = 0; i < clusters * sizes[s]; i++) {
        books[at++] = cb.get(i);
      }
    }
    return books;
  }

  /** jvector's product quantizer in the original coordinates, copied into {@link PqCodes}. */
  private static PqCodes trainPlainPq(
      ListRandomAccessVectorValues ravv,
      int n,
      int dim,
      int subspaces,
      boolean euclid,
      ForkJoinPool pool) {
    int clusters = Math.min(256, n);
    ProductQuantization pq =
        pool != null
            ? ProductQuantization.compute(ravv, subspaces, clusters, euclid, -1f, pool, pool)
            : ProductQuantization.compute(ravv, subspaces, clusters, euclid);
    PQVectors encoded =
        (PQVectors) pq.encodeAll(ravv, pool != null ? pool : ForkJoinPool.commonPool());
    int m = pq.getSubspaceCount();
    int[] sizes = new int[m];
    for (int s = 0; s < m; s++) {
      sizes[s] = pq.getSubvectorSize(s);
    }
    float[] books = codebookFloats(pq, clusters, sizes);
    float[] centroid = null;
    VectorFloat<?> gc = pq.getGlobalCentroid();
    if (gc != null) {
      boolean zero = true;
      centroid = new float[dim];
      for (int i = 0; i < dim; i++) {
        centroid[i] = gc.get(i);
        zero &= centroid[i] == 0f;
      }
      if (zero) {
        centroid = null;
      }
    }
    byte[] codes = new byte[Math.multiplyExact(n, m)];
    for (int i = 0; i < n; i++) {
      ByteSequence<?> c = encoded.get(i);
      for (int s = 0; s < m; s++) {
        codes[i * m + s] = c.get(s);
      }
    }
    return new PqCodes(n, clusters, dim, centroid, sizes, books, codes);
  }

  private static void fsync(FileIO io, Path p) throws IOException {
    try (FileChannel ch = io.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      io.force(ch, true);
    }
  }

  private static byte[] encodeMeta(
      int n,
      int dim,
      Distance distance,
      long[] graphCrc,
      long[] pqCrc,
      PointId[] ids,
      byte[][] payloads) {
    long size = 4 + 4 + 1 + 8 + 4 + 8 + 4;
    for (int i = 0; i < n; i++) {
      size += (ids[i].isUuid() ? 17 : 9) + 4 + (payloads[i] == null ? 0 : payloads[i].length);
    }
    if (size > Integer.MAX_VALUE - 64) {
      throw new IllegalStateException("segment metadata too large [bytes=" + size + "]");
    }
    ByteBuffer b = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(n).putInt(dim).put((byte) distance.ordinal());
    b.putLong(graphCrc[1]).putInt((int) graphCrc[0]).putLong(pqCrc[1]).putInt((int) pqCrc[0]);
    for (int i = 0; i < n; i++) {
      PointId id = ids[i];
      if (id.isUuid()) {
        b.put((byte) 1).putLong(id.loBits()).putLong(id.hiBits());
      } else {
        b.put((byte) 0).putLong(id.loBits());
      }
    }
    for (int i = 0; i < n; i++) {
      if (payloads[i] == null) {
        b.putInt(-1);
      } else {
        b.putInt(payloads[i].length).put(payloads[i]);
      }
    }
    return b.array();
  }

  /**
   * Opens a segment written by {@link #build}, verifying every file's checksum.
   *
   * @throws CorruptFileException if a file is missing, truncated or does not match its checksum
   */
  public static DiskAnnSegment open(FileIO io, Path dir, int segmentId, int defaultSearchList)
      throws IOException {
    return open(io, dir, segmentId, defaultSearchList, false);
  }

  /**
   * Opens a segment; with {@code inMemory} (the {@code hnsw} index type, kept for comparison) the
   * whole graph file, vectors included, is read onto the heap and searched with exact scores
   * instead of being mapped and searched with PQ.
   */
  public static DiskAnnSegment open(
      FileIO io, Path dir, int segmentId, int defaultSearchList, boolean inMemory)
      throws IOException {
    ChecksummedFile.Contents meta;
    try {
      meta =
          ChecksummedFile.read(io, dir.resolve(META_FILE), META_FORMAT, META_VERSION, META_VERSION);
    } catch (NoSuchFileException e) {
      throw new CorruptFileException("segment metadata is missing", dir.resolve(META_FILE), e);
    }
    if (meta.segmentId() != segmentId) {
      throw new CorruptFileException(
          "segment id mismatch [expected=" + segmentId + ", got=" + meta.segmentId() + "]",
          dir.resolve(META_FILE));
    }
    ByteBuffer b = meta.body();
    int n = b.getInt();
    int dim = b.getInt();
    Distance distance = Distance.values()[b.get()];
    long graphLen = b.getLong();
    int graphCrc = b.getInt();
    long pqLen = b.getLong();
    int pqCrc = b.getInt();
    verify(io, dir.resolve(GRAPH_FILE), graphLen, graphCrc);
    verify(io, dir.resolve(PQ_FILE), pqLen, pqCrc);
    long[] idLo = new long[n];
    long[] idHi = null;
    BitSet uuidOrds = null;
    for (int i = 0; i < n; i++) {
      byte kind = b.get();
      idLo[i] = b.getLong();
      if (kind != 0) {
        if (idHi == null) {
          idHi = new long[n];
          uuidOrds = new BitSet(n);
        }
        idHi[i] = b.getLong();
        uuidOrds.set(i);
      }
    }
    // The body is a slice of the whole file's bytes: its array offset is its offset in the file.
    long bodyInFile = b.arrayOffset();
    long[] payloadAt = null;
    for (int i = 0; i < n; i++) {
      int at = b.position();
      int len = b.getInt();
      if (len >= 0) {
        if (payloadAt == null) {
          payloadAt = new long[n];
          java.util.Arrays.fill(payloadAt, 0, i, -1);
        }
        payloadAt[i] = bodyInFile + at;
        b.position(b.position() + len);
      } else if (payloadAt != null) {
        payloadAt[i] = -1;
      }
    }
    meta = null; // the file's bytes: only offsets into the mapped file are kept
    b = null;
    BitSet del = new BitSet(n);
    Path delPath = dir.resolve(DELETED_FILE);
    if (Files.exists(delPath)) {
      ChecksummedFile.Contents d = ChecksummedFile.read(io, delPath, DELETED_FORMAT, 1, 1);
      long[] words = new long[d.body().remaining() / 8];
      d.body().asLongBuffer().get(words);
      del = BitSet.valueOf(words);
    }
    PqCodes pq = PqCodes.read(io, dir.resolve(PQ_FILE), segmentId);
    MappedFile metaMap = payloadAt == null ? null : MappedFile.open(io, dir.resolve(META_FILE));
    GraphFile graph;
    try {
      graph = GraphFile.open(io, dir.resolve(GRAPH_FILE), inMemory);
    } catch (IOException | RuntimeException e) {
      if (metaMap != null) {
        metaMap.close();
      }
      throw e;
    }
    try {
      if (graph.count() != n || graph.dimension() != dim || pq.count() != n) {
        throw new CorruptFileException(
            "segment files disagree [meta="
                + n
                + "x"
                + dim
                + ", graph="
                + graph.count()
                + "x"
                + graph.dimension()
                + ", pq="
                + pq.count()
                + "]",
            dir);
      }
      return new DiskAnnSegment(
          segmentId,
          dir,
          n,
          dim,
          distance,
          idLo,
          idHi,
          uuidOrds,
          metaMap,
          payloadAt,
          del,
          graph,
          pq,
          graphLen + pqLen + Files.size(dir.resolve(META_FILE)),
          defaultSearchList,
          inMemory);
    } catch (RuntimeException e) {
      graph.close();
      if (metaMap != null) {
        metaMap.close();
      }
      throw e;
    }
  }

  private static void verify(FileIO io, Path p, long len, int crc) throws IOException {
    if (!Files.exists(p)) {
      throw new CorruptFileException("segment file is missing", p);
    }
    long[] actual = ChecksummedFile.crcAndLength(io, p);
    if (actual[1] != len) {
      throw new CorruptFileException(
          "segment file has the wrong length [expected=" + len + ", actual=" + actual[1] + "]", p);
    }
    if ((int) actual[0] != crc) {
      throw new CorruptFileException(
          "segment file checksum mismatch [expected="
              + Integer.toHexString(crc)
              + ", actual="
              + Long.toHexString(actual[0])
              + "]",
          p);
    }
  }

  /** Durably writes the current deletion bitmap (at a WAL checkpoint). */
  public void writeDeleted(FileIO io) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(deleted.length() * 8).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < deleted.length(); i++) {
      b.putLong(deleted.get(i));
    }
    ChecksummedFile.write(io, dir.resolve(DELETED_FILE), DELETED_FORMAT, 1, id, b.array());
  }

  private BeamSearcher borrow() {
    BeamSearcher s = searchers.pollFirst();
    return s != null
        ? s
        : new BeamSearcher(graph, inMemory ? null : pq, distance == Distance.EUCLID);
  }

  private void release(BeamSearcher s) {
    if (searchers.size() < 64) {
      searchers.addFirst(s);
    }
  }

  @Override
  public void search(
      float[] query,
      Distance d,
      SearchParams params,
      AcceptedOrdinals accept,
      TopK out,
      int slot,
      SearchStats stats) {
    search(query, params, accept, out, slot, stats, null);
  }

  /** How a filtered search runs; {@code null} lets {@link FilterPlanner} decide. Tests force it. */
  enum Plan {
    EXACT,
    PQ_SCAN,
    GRAPH
  }

  void search(
      float[] query,
      SearchParams params,
      AcceptedOrdinals accept,
      TopK out,
      int slot,
      SearchStats stats,
      Plan plan) {
    int k = out.capacity();
    if (k == 0 || live.get() == 0 || (accept != null && accept.count() == 0)) {
      return;
    }
    stats.segments++;
    long pages0 = stats.pagesRead;
    long faults0 = ThreadIo.majorFaults();
    int searchList =
        Math.max(
            Math.max(k, params.rerankK()),
            params.searchList() > 0 ? params.searchList() : defaultSearchList);
    if (plan == null && accept != null && !params.exact() && pq != null) {
      plan =
          switch (FilterPlanner.choose(accept.count(), count, searchList, true)) {
            case EXACT -> Plan.EXACT;
            case PQ_SCAN -> Plan.PQ_SCAN;
            case GRAPH -> Plan.GRAPH;
          };
    }
    boolean exact =
        plan != null
            ? plan == Plan.EXACT
            : params.exact()
                || (accept != null && FilterPlanner.exact(accept.count(), count, searchList));
    BeamSearcher s = borrow();
    try {
      if (plan == Plan.PQ_SCAN && accept != null && pq != null) {
        s.pqScan(query, k, searchList, accept::next, liveOrds, stats);
      } else if (exact) {
        // Exact: every live point, or only the accepted ones (the planner's choice for selective
        // filters), in increasing ordinal order so the records are read front to back.
        if (accept == null) {
          s.scan(query, k, live.get() == count ? null : liveOrds, stats);
        } else {
          s.scan(query, k, accept::next, liveOrds, stats);
        }
      } else {
        IntPredicate ok;
        if (accept != null) {
          searchList = FilterPlanner.searchList(searchList, accept.count(), count);
          ok = ord -> accept.get(ord) && liveOrds.test(ord);
        } else {
          ok = live.get() == count ? null : liveOrds;
        }
        Prefetch mode = prefetchMode;
        boolean prefetch =
            !inMemory && (mode == Prefetch.ON || (mode == Prefetch.AUTO && coldCredit > 0));
        int beamWidth =
            params.beamWidth() > 0
                ? params.beamWidth()
                : defaultBeamWidth > 0 ? defaultBeamWidth : prefetch ? COLD_BEAM_WIDTH : 1;
        s.search(query, k, searchList, beamWidth, prefetch, ok, stats);
      }
      for (int i = 0; i < s.resultCount(); i++) {
        out.offer(toScore(distance, s.resultDistance(i)), slot, s.resultOrdinal(i));
      }
    } finally {
      release(s);
      long faults1 = ThreadIo.majorFaults();
      if (faults0 >= 0 && faults1 >= faults0) {
        stats.pagesRead += faults1 - faults0;
      }
      if (stats.pagesRead > pages0) {
        coldCredit = 64;
        calmSearches = 0;
      } else {
        if (coldCredit > 0) {
          coldCredit--;
        }
        if (calmSearches < CALM_SEARCHES) {
          calmSearches++; // racy increments only delay the verdict
        }
      }
    }
  }

  /**
   * Whether searches of this segment run from memory: its graph is on the heap ({@code hnsw}), or
   * its last {@value #CALM_SEARCHES} searches read no page from the device. A segment just opened
   * or evicted does not, until searches have shown it.
   */
  public boolean servedFromMemory() {
    return inMemory || calmSearches >= CALM_SEARCHES;
  }

  /**
   * Drops this segment's graph pages from memory (unmapping them from this process and advising the
   * kernel to drop them from the page cache), for cold-cache measurements. Returns whether the
   * kernel accepted the advice.
   */
  public boolean evictFromPageCache() {
    calmSearches = 0;
    graph.file().dropMappedPages();
    return MappedFile.evictFromPageCache(graph.file().path());
  }

  @Override
  public int id() {
    return id;
  }

  @Override
  public State state() {
    return State.SEALED;
  }

  @Override
  public int size() {
    return count;
  }

  @Override
  public int liveCount() {
    return live.get();
  }

  @Override
  public PointId idAt(int ord) {
    return uuidOrds != null && uuidOrds.get(ord)
        ? PointId.of(new UUID(idHi[ord], idLo[ord]))
        : PointId.of(idLo[ord]);
  }

  @Override
  public float[] vectorAt(int ord) {
    return graph.vector(ord);
  }

  /**
   * Bytes of the metadata file that holds the payloads (0 when no point has one): about what a
   * payload index of this segment takes, for free-space checks.
   */
  public long payloadFileBytes() {
    return metaMap == null ? 0 : metaMap.size();
  }

  @Override
  public byte[] payloadAt(int ord) {
    if (payloadAt == null) {
      Objects.checkIndex(ord, count);
      return null;
    }
    long at = payloadAt[ord];
    if (at < 0) {
      return null;
    }
    MemorySegment m = metaMap.segment();
    int len = m.get(LE_INT, at);
    byte[] out = new byte[len];
    MemorySegment.copy(m, ValueLayout.JAVA_BYTE, at + 4, out, 0, len);
    return out;
  }

  @Override
  public boolean isDeleted(int ord) {
    return !liveOrds.test(ord);
  }

  @Override
  public boolean markDeleted(int ord) {
    long mask = 1L << ord;
    long prev = deleted.getAndUpdate(ord >>> 6, w -> w | mask);
    if ((prev & mask) == 0) {
      live.decrementAndGet();
      return true;
    }
    return false;
  }

  @Override
  public long memoryBytes() {
    // PQ codes, ids (8 B each, 16 for UUIDs), payload offsets (payloads themselves are mapped),
    // and the graph if it is on the heap; each pooled searcher also holds a visited stamp per node.
    return pq.memoryBytes()
        + (inMemory ? graph.file().size() : 0)
        + (long) count * (idHi == null ? 8 : 16)
        + (payloadAt == null ? 0 : (long) count * 8)
        + (long) searchers.size() * count * 4;
  }

  @Override
  public long diskBytes() {
    return diskBytes;
  }

  public Path directory() {
    return dir;
  }

  @Override
  public void close() {
    searchers.clear();
    graph.close();
    if (metaMap != null) {
      metaMap.close();
    }
  }
}
