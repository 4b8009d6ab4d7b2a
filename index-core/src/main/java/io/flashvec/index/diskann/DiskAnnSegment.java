package io.flashvec.index.diskann;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.disk.BeamSearcher;
import io.flashvec.index.disk.GraphFile;
import io.flashvec.index.disk.HotNodeCache;
import io.flashvec.index.disk.NodeCacheBudget;
import io.flashvec.index.disk.PqCodes;
import io.flashvec.index.filter.FilterPlanner;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.FieldGraph;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.SearchShare;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.MappedFile;
import io.flashvec.storage.PageReader;
import io.flashvec.storage.ThreadIo;
import io.github.jbellis.jvector.vector.VectorSimilarityFunction;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.VectorTypeSupport;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
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
 *   <li>{@code order.fvs} — optional {@link ChecksummedFile} ({@code segment-order} v1): the input
 *       position of each ordinal's point ({@link #buildOrder}), read once by the install.
 *   <li>{@code field-graph-<hash>.fvs} — optional, one per named dense field with a graph ({@link
 *       FieldGraph}, ADR 0040): derived data written once the graph is built, read at open when it
 *       matches, not listed in {@code meta.fvs}.
 *   <li>{@code graph-build.fvs} — optional {@link ChecksummedFile} ({@code graph-build} v1): the
 *       max degree and construction search list the graph was built with ({@link #graphBuild}),
 *       which a change of the collection's graph settings compares; absent in a raw segment and in
 *       one written before it existed.
 * </ul>
 *
 * Graph ordinal {@code i} is segment ordinal {@code i}; the writer numbers the points in the
 * graph's page-local order ({@link io.flashvec.index.disk.PageOrder}), not in input order.
 *
 * <h2>Raw segments</h2>
 *
 * A segment sealed raw ({@link DiskAnnWriter#writeRaw}) has the same files, but its {@code
 * graph.fvg} holds the vectors without edges ({@link GraphFile#hasEdges()} false), in input order.
 * It is searched by a scan of its PQ codes (in memory) and an exact rerank of the best {@code
 * max(search list, 4k)} candidates read from the file; an exact or selectively filtered search
 * scans exactly, as for a graph. Its points count as not indexed ({@link #indexedLiveCount}) until
 * a merge builds them into a graph. It takes no share of the hot node cache.
 *
 * <h2>Segments without a primary vector</h2>
 *
 * A segment of a collection without a primary dense vector has no {@code graph.fvg}, {@code pq.fvs}
 * or {@code order.fvs}: only {@code meta.fvs} ({@code segment-meta} v4, dimension 0), the vectors
 * file of {@link SegmentVectors} and the deletion bits. It refuses a search of the primary vector
 * (the shard searches its fields exactly) and has nothing a merge could build ({@link #hasGraph}).
 *
 * <h2>Threads</h2>
 *
 * Searches are thread-safe: each borrows a {@link BeamSearcher} (scratch sized to the segment, not
 * thread-safe) from a pool. The segment's {@link HotNodeCache} (its share of the server's {@link
 * NodeCacheBudget}, joined at open and left at close) is replaced whole when the budget is split
 * again; a search reads the one it started with. Deletions set atomic bits that searches pass as
 * the accepted-ordinals predicate, so deleted points are traversed but never returned. The segment
 * owns its mapping; {@link #close()} unmaps it (a search still running then fails with an
 * exception, it cannot read freed memory).
 */
public final class DiskAnnSegment implements SealedSegment, NodeCacheBudget.Member {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(DiskAnnSegment.class);

  /** Beam width when reads go to the device and the request leaves it to the server. */
  static final int COLD_BEAM_WIDTH = 4;

  private static final VectorTypeSupport VTS =
      VectorizationProvider.getInstance().getVectorTypeSupport();

  private static final ValueLayout.OfInt LE_INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private final int id;
  private final Path dir;
  private final int count;
  private final int dim;
  private final Distance distance;

  /** The metadata file: ids and payloads, mapped or (older versions, heap payloads) copied. */
  private final SegmentMeta meta;

  // set once at open, before the segment is published; null: every point has the dense vector only
  private SegmentVectors vectors;

  // the graphs of dense fields other than the primary one, set after open and replaced when the
  // fields' graph settings change (under fieldGraphLock)
  private volatile java.util.Map<String, FieldGraph> fieldGraphs = java.util.Map.of();

  // guards replacing fieldGraphs against closing the segment
  private final Object fieldGraphLock = new Object();
  private boolean fieldGraphsClosed;
  // where the field graphs' files go, from startFieldGraphs (null: nowhere)
  private FieldGraph.Store fieldGraphStore;

  private final AtomicLongArray deleted;
  private final AtomicInteger live;
  private final GraphFile graph;
  private final PqCodes pq;
  private final long diskBytes;
  private final int defaultSearchList;
  private final boolean inMemory;
  private final DiskAnnSettings settings;

  /** Reads the graph for pipelined searches; null for a graph on the heap or without FFM. */
  private final PageReader reader;

  private final ConcurrentLinkedDeque<BeamSearcher> searchers = new ConcurrentLinkedDeque<>();
  private final IntPredicate liveOrds;

  /**
   * Records of the nodes nearest the entry, or null: replaced whole when the server's budget is
   * split again, read once per search.
   */
  private volatile HotNodeCache nodeCache;

  // the settings the graph was built with (DiskAnnFormat.BUILD_FILE); null: not recorded
  private volatile int[] build;

  /** The records {@link #nodeCache} was built to hold; written only under the budget's lock. */
  private int nodeCacheFits;

  /**
   * Searches left to prefetch for since one last read from the device ({@link
   * DiskAnnSettings.Prefetch#AUTO}).
   */
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
      SegmentMeta meta,
      BitSet deletedBits,
      GraphFile graph,
      PqCodes pq,
      long diskBytes,
      int defaultSearchList,
      boolean inMemory,
      DiskAnnSettings settings) {
    this.id = id;
    this.dir = dir;
    this.count = count;
    this.dim = dim;
    this.distance = distance;
    this.meta = meta;
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
    this.settings = settings;
    this.reader = inMemory || graph == null ? null : openReader(graph, settings);
    this.liveOrds = ord -> (deleted.get(ord >>> 6) & (1L << ord)) == 0;
  }

  private static PageReader openReader(GraphFile graph, DiskAnnSettings settings) {
    if (!graph.file().mapped()) {
      return null;
    }
    try {
      return PageReader.open(graph.file().path(), settings.ioThreads());
    } catch (IOException e) {
      // without native access: searches read through the mapping, one page fault at a time
      return null;
    }
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

  /** The PQ codebook of this segment (a growing segment sealed after it may reuse it). */
  @Override
  public io.flashvec.index.disk.PqCodebook codebook() {
    return pq == null ? null : pq.codebook();
  }

  /**
   * Opens a segment written by {@link DiskAnnWriter}, verifying every file's checksum, with the
   * default settings.
   *
   * @throws CorruptFileException if a file is missing, truncated or does not match its checksum
   */
  public static DiskAnnSegment open(FileIO io, Path dir, int segmentId, int defaultSearchList)
      throws IOException {
    return open(io, dir, segmentId, defaultSearchList, false, DiskAnnSettings.DEFAULT);
  }

  /**
   * Opens a segment with its payloads read from the mapped metadata file on demand; see {@link
   * #open(FileIO, Path, int, int, boolean, DiskAnnSettings, boolean)}.
   */
  public static DiskAnnSegment open(
      FileIO io,
      Path dir,
      int segmentId,
      int defaultSearchList,
      boolean inMemory,
      DiskAnnSettings settings)
      throws IOException {
    return open(io, dir, segmentId, defaultSearchList, inMemory, settings, false);
  }

  /** Opens a segment as below, with every other dense field's vectors on the heap. */
  public static DiskAnnSegment open(
      FileIO io,
      Path dir,
      int segmentId,
      int defaultSearchList,
      boolean inMemory,
      DiskAnnSettings settings,
      boolean payloadsOnHeap)
      throws IOException {
    return open(
        io,
        dir,
        segmentId,
        defaultSearchList,
        inMemory,
        settings,
        payloadsOnHeap,
        java.util.Set.of());
  }

  /**
   * Opens a segment; with {@code inMemory} (the {@code hnsw} index type, kept for comparison) the
   * whole graph file, vectors included, is read onto the heap and searched with exact scores
   * instead of being mapped and searched with PQ. With {@code payloadsOnHeap} (Qdrant's {@code
   * on_disk_payload: false}) every payload is copied onto the heap at open and the metadata file is
   * not mapped: payload reads never touch the device, at the price of heap the segment reports in
   * {@link #memoryBytes()}. The vectors of the dense fields {@code denseOnDisk} (other than the
   * primary one) stay in the mapped vectors file.
   */
  public static DiskAnnSegment open(
      FileIO io,
      Path dir,
      int segmentId,
      int defaultSearchList,
      boolean inMemory,
      DiskAnnSettings settings,
      boolean payloadsOnHeap,
      java.util.Set<String> denseOnDisk)
      throws IOException {
    SegmentMeta meta =
        SegmentMeta.open(io, dir.resolve(DiskAnnFormat.META_FILE), segmentId, payloadsOnHeap);
    try {
      return open(io, dir, segmentId, defaultSearchList, inMemory, settings, denseOnDisk, meta);
    } catch (IOException | RuntimeException e) {
      meta.close();
      throw e;
    }
  }

  private static DiskAnnSegment open(
      FileIO io,
      Path dir,
      int segmentId,
      int defaultSearchList,
      boolean inMemory,
      DiskAnnSettings settings,
      java.util.Set<String> denseOnDisk,
      SegmentMeta meta)
      throws IOException {
    SegmentMeta.Shape shape = meta.shape();
    int n = shape.count();
    int dim = shape.dim();
    boolean noGraph = shape.noGraph();
    long graphLen = shape.graphLength();
    long pqLen = shape.pqLength();
    if (!noGraph) {
      verify(io, dir.resolve(DiskAnnFormat.GRAPH_FILE), graphLen, shape.graphCrc());
      verify(io, dir.resolve(DiskAnnFormat.PQ_FILE), pqLen, shape.pqCrc());
    }
    boolean hasVectorsFile = shape.vectorsFile();
    BitSet del = new BitSet(n);
    Path delPath = dir.resolve(DiskAnnFormat.DELETED_FILE);
    if (Files.exists(delPath)) {
      ChecksummedFile.Contents d =
          ChecksummedFile.read(io, delPath, DiskAnnFormat.DELETED_FORMAT, 1, 1);
      long[] words = new long[d.body().remaining() / 8];
      d.body().asLongBuffer().get(words);
      del = BitSet.valueOf(words);
    }
    PqCodes pq = noGraph ? null : PqCodes.read(io, dir.resolve(DiskAnnFormat.PQ_FILE), segmentId);
    SegmentVectors vectors = null;
    long vectorsLen = 0;
    if (hasVectorsFile) {
      try {
        vectors = SegmentVectors.read(io, dir, segmentId, n, denseOnDisk);
        vectorsLen = Files.size(dir.resolve(SegmentVectors.FILE));
      } catch (NoSuchFileException e) {
        throw new CorruptFileException(
            "segment vectors file is missing", dir.resolve(SegmentVectors.FILE), e);
      }
    }
    GraphFile graph = null;
    try {
      if (!noGraph) {
        graph = GraphFile.open(io, dir.resolve(DiskAnnFormat.GRAPH_FILE), inMemory);
      }
    } catch (IOException | RuntimeException e) {
      if (vectors != null) {
        vectors.close();
      }
      throw e;
    }
    try {
      if (graph != null && (graph.count() != n || graph.dimension() != dim || pq.count() != n)) {
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
      DiskAnnSegment segment =
          new DiskAnnSegment(
              segmentId,
              dir,
              n,
              dim,
              shape.distance(),
              meta,
              del,
              graph,
              pq,
              graphLen + pqLen + meta.fileBytes() + vectorsLen,
              defaultSearchList,
              inMemory,
              settings);
      segment.vectors = vectors;
      if (graph != null && graph.hasEdges()) {
        try {
          segment.build = DiskAnnFormat.readBuild(io, dir);
        } catch (IOException | RuntimeException e) {
          // derived data: the segment opens, and counts as built with settings of its own, so the
          // compactor rebuilds it and writes the file anew
          LOG.warn(
              "graph build file unreadable; the segment's graph is rebuilt [dir={}]: {}",
              dir,
              e.toString());
          segment.build = new int[] {graph.maxDegree(), -1};
        }
      }
      if (!inMemory && graph != null && graph.hasEdges()) {
        settings.nodeCache().join(segment);
      }
      return segment;
    } catch (RuntimeException e) {
      if (graph != null) {
        graph.close();
      }
      if (vectors != null) {
        vectors.close();
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
  @Override
  public int[] buildOrder(FileIO io) throws IOException {
    return DiskAnnFormat.readOrder(io, dir, id, count);
  }

  @Override
  public void writeDeleted(FileIO io) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(deleted.length() * 8).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < deleted.length(); i++) {
      b.putLong(deleted.get(i));
    }
    ChecksummedFile.write(
        io,
        dir.resolve(DiskAnnFormat.DELETED_FILE),
        DiskAnnFormat.DELETED_FORMAT,
        1,
        id,
        b.array());
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

  /**
   * {@inheritDoc}
   *
   * <p>An unfiltered cosine or L2 graph search walks a list sized to {@code share} ({@link
   * SearchShare#searchList}), as a growing segment's graph does: beside other segments it needs
   * only about its part of the query's list. Its list is at least {@value
   * SearchShare#MIN_SEALED_LIST} rather than a growing segment's {@value SearchShare#MIN_LIST}: the
   * list is ranked by PQ estimates, and shorter ones lost recall. It still returns its best {@code
   * k}: every node it expands is rescored exactly from the record it read anyway, so fewer results
   * would save nothing. A filtered search (the shard passes share 1) and raw dot products walk the
   * whole list.
   */
  @Override
  public void search(
      PreparedSearch search, AcceptedOrdinals accept, double share, TopK out, int slot) {
    if (graph == null) {
      throw new IllegalStateException("segment has no primary vector [segment=" + id + "]");
    }
    search(search.query(), search.params(), accept, share, out, slot, search.stats(), null);
  }

  /**
   * The search as its only segment, with the plan forced when {@code forced} is not {@code null}
   * (tests compare plans); else {@link FilterPlanner} decides once from the accepted count.
   */
  void search(
      float[] query,
      SearchParams params,
      AcceptedOrdinals accept,
      TopK out,
      int slot,
      SearchStats stats,
      FilterPlanner.Plan forced) {
    search(query, params, accept, 1.0, out, slot, stats, forced);
  }

  private void search(
      float[] query,
      SearchParams params,
      AcceptedOrdinals accept,
      double share,
      TopK out,
      int slot,
      SearchStats stats,
      FilterPlanner.Plan forced) {
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
    if (accept == null && distance != Distance.DOT) {
      // raw inner products walk the L2-built graph less surely: they keep the full list
      searchList =
          SearchShare.searchList(
              searchList, Math.max(k, params.rerankK()), share, SearchShare.MIN_SEALED_LIST);
    }
    int accepted = accept == null ? -1 : accept.count();
    FilterPlanner.Decision plan =
        forced != null
            ? FilterPlanner.force(forced, accepted, count, searchList)
            : FilterPlanner.decide(params.exact(), accepted, count, searchList, pq != null);
    if (!graph.hasEdges()) {
      searchRaw(query, params, accept, plan, out, slot, stats);
      // the rerank's record reads are page faults of this thread, counted as a graph search's are
      long faults1 = ThreadIo.majorFaults();
      if (faults0 >= 0 && faults1 >= faults0) {
        stats.pagesRead += faults1 - faults0;
      }
      return;
    }
    BeamSearcher s = borrow();
    boolean pipelined = false;
    try {
      if (plan.plan() == FilterPlanner.Plan.PQ_SCAN && accept != null && pq != null) {
        s.pqScan(query, k, plan.searchList(), accept::next, liveOrds, stats);
      } else if (plan.plan() != FilterPlanner.Plan.GRAPH) {
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
          ok = ord -> accept.get(ord) && liveOrds.test(ord);
        } else {
          ok = live.get() == count ? null : liveOrds;
        }
        DiskAnnSettings.Prefetch mode = settings.prefetch();
        boolean prefetch =
            !inMemory
                && (mode == DiskAnnSettings.Prefetch.ON
                    || (mode == DiskAnnSettings.Prefetch.AUTO && coldCredit > 0));
        int beamWidth =
            params.beamWidth() > 0
                ? params.beamWidth()
                : settings.beamWidth() > 0 ? settings.beamWidth() : prefetch ? COLD_BEAM_WIDTH : 1;
        HotNodeCache cache = nodeCache;
        if (cache != null && !cache.acquire()) {
          cache = null; // swapped and freed since: the first hops come from the graph file
        }
        try {
          if (prefetch && reader != null) {
            // the thread parks while reads are in flight and other searches run on its carrier:
            // its fault counter no longer measures this search, the reads issued do
            pipelined = true;
            s.searchPipelined(query, k, plan.searchList(), beamWidth, ok, cache, reader, stats);
          } else {
            s.search(query, k, plan.searchList(), beamWidth, prefetch, ok, cache, stats);
          }
        } finally {
          if (cache != null) {
            cache.release();
          }
        }
      }
      for (int i = 0; i < s.resultCount(); i++) {
        out.offer(toScore(distance, s.resultDistance(i)), slot, s.resultOrdinal(i));
      }
    } finally {
      release(s);
      long faults1 = ThreadIo.majorFaults();
      if (!pipelined && faults0 >= 0 && faults1 >= faults0) {
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

  /** Raw candidates reranked exactly per result asked for, at least. */
  static final int RAW_RERANK_PER_RESULT = 4;

  /**
   * Searches a raw segment (no graph): an exact scan when the plan says so (the {@code exact}
   * parameter, a selective filter) or when its vectors are on the heap ({@code hnsw}), else a scan
   * of the accepted live points' PQ codes whose best {@code max(search list, 4k, rerank)} are
   * rescored exactly from their records. The search list is the request's whole list, not a share:
   * a scan's cost does not depend on it, only the rerank's reads do.
   */
  private void searchRaw(
      float[] query,
      SearchParams params,
      AcceptedOrdinals accept,
      FilterPlanner.Decision plan,
      TopK out,
      int slot,
      SearchStats stats) {
    int k = out.capacity();
    BeamSearcher s = borrow();
    try {
      IntPredicate ok = live.get() == count ? null : liveOrds;
      if (inMemory || plan.plan() == FilterPlanner.Plan.EXACT || params.exact()) {
        if (accept == null) {
          s.scan(query, k, ok, stats);
        } else {
          s.scan(query, k, accept::next, liveOrds, stats);
        }
      } else {
        int list = params.searchList() > 0 ? params.searchList() : defaultSearchList;
        int rerank = Math.max(Math.max(list, RAW_RERANK_PER_RESULT * k), params.rerankK());
        java.util.function.IntUnaryOperator next =
            accept == null ? ord -> ord < count ? ord : -1 : accept::next;
        s.pqScan(query, k, rerank, next, ok, stats);
      }
      for (int i = 0; i < s.resultCount(); i++) {
        out.offer(toScore(distance, s.resultDistance(i)), slot, s.resultOrdinal(i));
      }
    } finally {
      release(s);
    }
  }

  /**
   * Whether this segment has a graph; false when it was sealed raw. A segment without a primary
   * vector ({@link SegmentMeta.Shape#noGraph}) has nothing a merge could build and says true: no
   * merge waits for it.
   */
  @Override
  public boolean hasGraph() {
    return graph == null || graph.hasEdges();
  }

  /**
   * As its build file says ({@link DiskAnnFormat#BUILD_FILE}); without one, the graph file's max
   * degree and an unrecorded construction search list.
   */
  @Override
  public GraphBuild graphBuild() {
    if (graph == null || !graph.hasEdges()) {
      return null;
    }
    int[] b = build;
    return b == null ? new GraphBuild(graph.maxDegree(), 0) : new GraphBuild(b[0], b[1]);
  }

  @Override
  public void recordBuildSearchList(FileIO io, int list) throws IOException {
    if (graph == null || !graph.hasEdges() || build != null) {
      return;
    }
    synchronized (this) {
      if (build == null) {
        DiskAnnFormat.writeBuild(io, dir, id, graph.maxDegree(), list);
        build = new int[] {graph.maxDegree(), list};
      }
    }
  }

  /** 0 for a raw segment (its points are in no graph), else -1 as for any sealed segment. */
  @Override
  public int graphPoints() {
    return graph == null || graph.hasEdges() ? -1 : 0;
  }

  /** Whether this segment has the primary vector's files: false for a collection without one. */
  public boolean hasPrimary() {
    return graph != null;
  }

  /**
   * Whether searches of this segment run from memory: its graph is on the heap ({@code hnsw}), or
   * its last {@value #CALM_SEARCHES} searches read no page from the device. A segment just opened
   * or evicted does not, until searches have shown it.
   */
  @Override
  public boolean servedFromMemory() {
    return inMemory || calmSearches >= CALM_SEARCHES;
  }

  /**
   * Drops this segment's graph pages from memory (unmapping them from this process and advising the
   * kernel to drop them from the page cache), for cold-cache measurements. Returns whether the
   * kernel accepted the advice.
   */
  @Override
  public boolean evictFromPageCache() {
    calmSearches = 0;
    if (graph == null) {
      return false;
    }
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
    return meta.idAt(ord);
  }

  @Override
  public int liveOrdinalOf(PointId id) {
    int[] live = {-1};
    meta.ordinalsOf(
        id,
        ord -> {
          if (isDeleted(ord)) {
            return true;
          }
          live[0] = ord;
          return false;
        });
    return live[0];
  }

  @Override
  public void forEachInIdOrder(PointId from, IntPredicate visit) {
    meta.forEachInIdOrder(from, visit);
  }

  /**
   * Whether this segment can be rewritten with other PQ codes around its own graph file ({@link
   * DiskAnnWriter#recode}): it has a graph and no vectors file (named dense or sparse vectors).
   */
  boolean recodable() {
    return graph != null && pq != null && vectors == null;
  }

  /** The segment's directory. */
  Path dir() {
    return dir;
  }

  /** Dimensions of the primary vector. */
  int dimension() {
    return dim;
  }

  @Override
  public float[] vectorAt(int ord) {
    if (graph == null) {
      throw new IllegalStateException(
          "segment has no primary vector [segment=" + id + ", ord=" + ord + "]");
    }
    return graph.vector(ord);
  }

  @Override
  public long payloadBytes() {
    return meta.payloadBytes();
  }

  @Override
  public long payloadFileBytes() {
    return meta.payloadFileBytes();
  }

  /** Whether the payloads are held on the heap rather than read from the mapped file. */
  public boolean payloadsOnHeap() {
    return meta.payloadsOnHeap();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Payloads held on the heap are returned as they are, not copied: callers must not change them
   * (as with a growing segment's).
   */
  @Override
  public byte[] payloadAt(int ord) {
    return meta.payloadAt(ord);
  }

  @Override
  public boolean hasVector(int ord) {
    return vectors == null || vectors.hasVector(ord);
  }

  @Override
  public int withoutVector() {
    return vectors == null ? 0 : vectors.withoutVector();
  }

  @Override
  public boolean hasSparse() {
    return vectors != null && vectors.hasSparse();
  }

  @Override
  public io.flashvec.index.SparseVector sparseAt(int ord, String name) {
    Objects.checkIndex(ord, count);
    return vectors == null ? null : vectors.sparseAt(ord, name);
  }

  @Override
  public java.util.Map<String, io.flashvec.index.SparseVector> sparseAt(int ord) {
    Objects.checkIndex(ord, count);
    return vectors == null ? java.util.Map.of() : vectors.sparseAt(ord);
  }

  /** Heap bytes the vectors file holds (0 without one). */
  public long vectorsHeapBytes() {
    return vectors == null ? 0 : vectors.memoryBytes();
  }

  /** Heap bytes of the dense fields' graphs (their adjacency and int8 codes). */
  private long fieldGraphBytes() {
    long bytes = 0;
    for (FieldGraph g : fieldGraphs.values()) {
      bytes += g.memoryBytes();
    }
    return bytes;
  }

  /**
   * Starts the background builds of the graphs of the dense fields {@code fields} (by name) that
   * this segment holds for at least {@link FieldGraph#MIN_POINTS} points, or reads them from their
   * files in the segment's directory when those match ({@link FieldGraph#open}); searches scan the
   * others, and the nodes not built yet, exactly. Field graph files of other fields (deleted ones,
   * or ones without a graph now) and temp files of interrupted writes are removed. Without {@code
   * io} nothing is read, written or removed. Called once, after open.
   */
  void startFieldGraphs(
      java.util.Map<String, io.flashvec.index.DenseVectorParams> fields,
      io.flashvec.storage.FileIO io,
      java.util.function.LongPredicate room) {
    synchronized (fieldGraphLock) {
      fieldGraphStore = io == null ? null : new FieldGraph.Store(io, dir, id, room);
      replaceFieldGraphs(fields);
    }
  }

  @Override
  public void indexFields(java.util.Map<String, io.flashvec.index.DenseVectorParams> fields) {
    synchronized (fieldGraphLock) {
      if (!fieldGraphsClosed) {
        replaceFieldGraphs(fields);
      }
    }
  }

  /**
   * Makes the field graphs those {@code fields} call for: a graph whose settings are unchanged is
   * kept; one of other settings is stopped and a new one opened (its old file, which no longer
   * matches, is deleted by {@link FieldGraph#open}) and built; fields without a graph now lose
   * theirs and its file. The fieldGraphLock held.
   */
  private void replaceFieldGraphs(
      java.util.Map<String, io.flashvec.index.DenseVectorParams> fields) {
    java.util.Map<String, FieldGraph> now = fieldGraphs;
    java.util.Map<String, FieldGraph> graphs = new java.util.HashMap<>();
    java.util.List<FieldGraph> started = new java.util.ArrayList<>();
    FieldGraph.Store store = fieldGraphStore;
    for (var e :
        vectors == null
            ? java.util.Map.<String, io.flashvec.index.DenseVectorParams>of().entrySet()
            : fields.entrySet()) {
      io.flashvec.index.DenseVectorParams f = e.getValue();
      if (!f.index().graph() || f.multivector()) {
        continue;
      }
      String name = e.getKey();
      FieldGraph.Params params =
          new FieldGraph.Params(
              f.index().m(), f.index().efConstruct(), f.index().quantile(), f.index().turbo());
      FieldGraph old = now.get(name);
      if (old != null && old.params().equals(params)) {
        graphs.put(name, old);
        continue;
      }
      int[] ords = vectors.ordinalsWith(name, f.dimension());
      if (ords == null || ords.length < FieldGraph.MIN_POINTS) {
        continue;
      }
      if (old != null) {
        old.close(); // its build stops and its file is no longer written before it is replaced
      }
      FieldGraph g =
          FieldGraph.open(
              name,
              ords,
              f.dimension(),
              f.distance(),
              params,
              ord -> vectors.denseAt(ord, name),
              store);
      graphs.put(name, g);
      started.add(g);
    }
    for (var e : now.entrySet()) {
      if (graphs.get(e.getKey()) != e.getValue()) {
        e.getValue().close();
      }
    }
    if (store != null) {
      removeOtherFieldGraphFiles(store.io(), graphs.keySet());
    }
    if (!now.isEmpty() && (!started.isEmpty() || !now.keySet().equals(graphs.keySet()))) {
      LOG.info(
          "field graphs changed [segment={}, kept={}, built={}]",
          id,
          graphs.size() - started.size(),
          started.stream().map(FieldGraph::field).toList());
    }
    fieldGraphs = java.util.Map.copyOf(graphs);
    for (FieldGraph g : started) {
      g.startBuild(id);
    }
  }

  /** Removes the field graph files of fields other than {@code keep}, and their temp files. */
  private void removeOtherFieldGraphFiles(
      io.flashvec.storage.FileIO io, java.util.Set<String> keep) {
    java.util.Set<String> names = new java.util.HashSet<>();
    for (String k : keep) {
      names.add(FieldGraph.fileName(k));
    }
    try {
      for (Path p : io.list(dir, FieldGraph.FILE_PREFIX + "*")) {
        if (!names.contains(p.getFileName().toString())) {
          io.deleteIfExists(p);
        }
      }
    } catch (IOException e) {
      LOG.warn("cannot remove stale field graph files [dir={}]", dir, e);
    }
  }

  @Override
  public long[] fieldGraphProgress() {
    long[] out = new long[2];
    for (FieldGraph g : fieldGraphs.values()) {
      out[0] += g.built();
      out[1] += g.nodes();
    }
    return out;
  }

  @Override
  public FieldGraph fieldGraph(String name) {
    return fieldGraphs.get(name);
  }

  @Override
  public boolean hasDense() {
    return vectors != null && vectors.hasDense();
  }

  @Override
  public float[] denseAt(int ord, String name) {
    Objects.checkIndex(ord, count);
    return vectors == null ? null : vectors.denseAt(ord, name);
  }

  @Override
  public float denseScore(String name, int ord, float[] q, io.flashvec.index.Distance d) {
    return vectors == null ? Float.NaN : vectors.score(name, ord, q, d);
  }

  @Override
  public float multiScore(String name, int ord, float[] q, int dim, io.flashvec.index.Distance d) {
    return vectors == null ? Float.NaN : vectors.multiScore(name, ord, q, dim, d);
  }

  @Override
  public java.util.Map<String, float[]> denseAt(int ord) {
    Objects.checkIndex(ord, count);
    return vectors == null ? java.util.Map.of() : vectors.denseAt(ord);
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
    // PQ codes, what the metadata holds on the heap (payloads kept in memory; ids and payload
    // offsets of files older than version 5, whose columns are mapped), the graph if it is on the
    // heap, each pooled searcher's visited bits (or set), and the hot node cache (native).
    HotNodeCache cache = nodeCache;
    return (pq == null ? 0 : pq.memoryBytes())
        + (inMemory && graph != null ? graph.file().size() : 0)
        + meta.heapBytes()
        + searcherBytes()
        + (vectors == null ? 0 : vectors.memoryBytes())
        + fieldGraphBytes()
        + (cache == null ? 0 : cache.memoryBytes());
  }

  /**
   * {@link #memoryBytes} without the hot node cache's records, native memory with its own slice.
   */
  @Override
  public long heapBytes() {
    HotNodeCache cache = nodeCache;
    return memoryBytes() - (cache == null ? 0 : cache.nativeBytes());
  }

  private long searcherBytes() {
    long bytes = 0;
    for (BeamSearcher s : searchers) {
      bytes += s.visitedBytes();
    }
    return bytes;
  }

  /** The segment's files, with its field graphs' files (ADR 0040) as far as they are written. */
  @Override
  public long diskBytes() {
    long bytes = diskBytes;
    for (FieldGraph g : fieldGraphs.values()) {
      bytes += g.fileBytes();
    }
    return bytes;
  }

  @Override
  public Path directory() {
    return dir;
  }

  @Override
  public int nodes() {
    return count;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Walks the graph again from its entry when the number of records that fit changes; the new
   * cache replaces the old one for the searches that start after it.
   */
  @Override
  public void cacheBytes(long bytes) {
    if (graph == null) {
      return;
    }
    int fits = HotNodeCache.capacity(graph, bytes);
    if (fits == nodeCacheFits) {
      return;
    }
    HotNodeCache old = nodeCache;
    nodeCache = fits == 0 ? null : HotNodeCache.build(graph, bytes);
    nodeCacheFits = fits;
    if (old != null) {
      old.release(); // freed at once, or by the last search still reading it
    }
  }

  /** The hot node cache searches read now, or null. */
  HotNodeCache nodeCache() {
    return nodeCache;
  }

  @Override
  public void close() {
    // first: a field graph's build reads the vectors file closed below
    synchronized (fieldGraphLock) {
      fieldGraphsClosed = true;
      for (FieldGraph g : fieldGraphs.values()) {
        g.close();
      }
    }
    settings.nodeCache().leave(this);
    HotNodeCache cache = nodeCache;
    nodeCache = null;
    if (cache != null) {
      cache.release();
    }
    searchers.clear();
    if (reader != null) {
      reader.close();
    }
    if (graph != null) {
      graph.close();
    }
    meta.close();
    if (vectors != null) {
      vectors.close();
    }
  }
}
