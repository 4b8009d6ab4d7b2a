package io.flashvec.index.jvector;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.filter.FilterPlanner;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.ThreadIo;
import io.github.jbellis.jvector.disk.BufferedRandomAccessWriter;
import io.github.jbellis.jvector.disk.ByteBufferReader;
import io.github.jbellis.jvector.disk.RandomAccessReader;
import io.github.jbellis.jvector.disk.ReaderSupplier;
import io.github.jbellis.jvector.disk.ReaderSupplierFactory;
import io.github.jbellis.jvector.graph.GraphIndexBuilder;
import io.github.jbellis.jvector.graph.GraphSearcher;
import io.github.jbellis.jvector.graph.ImmutableGraphIndex;
import io.github.jbellis.jvector.graph.ListRandomAccessVectorValues;
import io.github.jbellis.jvector.graph.SearchResult;
import io.github.jbellis.jvector.graph.disk.OnDiskGraphIndex;
import io.github.jbellis.jvector.graph.disk.OnDiskGraphIndexWriter;
import io.github.jbellis.jvector.graph.disk.OrdinalMapper;
import io.github.jbellis.jvector.graph.disk.feature.Feature;
import io.github.jbellis.jvector.graph.disk.feature.FeatureId;
import io.github.jbellis.jvector.graph.disk.feature.InlineVectors;
import io.github.jbellis.jvector.graph.similarity.BuildScoreProvider;
import io.github.jbellis.jvector.graph.similarity.DefaultSearchScoreProvider;
import io.github.jbellis.jvector.quantization.PQVectors;
import io.github.jbellis.jvector.quantization.ProductQuantization;
import io.github.jbellis.jvector.util.Bits;
import io.github.jbellis.jvector.vector.VectorSimilarityFunction;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import io.github.jbellis.jvector.vector.types.VectorTypeSupport;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
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
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A sealed, immutable segment on disk: a jvector Vamana graph with the full vectors inline
 * (memory-mapped, {@code MADV_RANDOM}), PQ codes in RAM guiding the beam search, and an exact
 * rerank of the best {@code search_list} candidates from the inline vectors.
 *
 * <h2>Files (one directory per segment, {@code seg-<id>/})</h2>
 *
 * <ul>
 *   <li>{@code graph.jvg} — jvector's on-disk graph (format v6: header, fixed-size layer-0 records
 *       {@code ordinal | vector | neighbour count | neighbours}, upper layers, footer).
 *   <li>{@code pq.bin} — jvector's PQ codebook and one code per point.
 *   <li>{@code meta.fvs} — a {@link ChecksummedFile} ({@code segment-meta} v1): point count,
 *       dimension, metric, length and CRC32C of the two files above (verified at open), then every
 *       ordinal's point id and payload.
 *   <li>{@code deleted.fvs} — optional {@link ChecksummedFile} ({@code segment-deleted} v1): the
 *       deletion bitmap as of the last WAL checkpoint.
 * </ul>
 *
 * Graph ordinal {@code i} is segment ordinal {@code i} (identity mapping).
 *
 * <h2>Threads</h2>
 *
 * Searches are thread-safe: each borrows a {@link GraphSearcher} (one reader view and scratch
 * arrays, not thread-safe) from a pool. Deletions set atomic bits that searches pass to jvector as
 * the accepted-ordinals filter, so deleted points are traversed but never returned. The segment
 * owns its mappings; {@link #close()} releases them once no search can use them (the shard closes
 * segments only when they leave every snapshot and the process stops).
 */
public final class DiskAnnSegment implements Segment, Closeable {

  static final String META_FORMAT = "segment-meta";
  static final String DELETED_FORMAT = "segment-deleted";
  static final int META_VERSION = 1;
  static final String GRAPH_FILE = "graph.jvg";
  static final String PQ_FILE = "pq.bin";
  static final String META_FILE = "meta.fvs";
  static final String DELETED_FILE = "deleted.fvs";

  private static final VectorTypeSupport VTS =
      VectorizationProvider.getInstance().getVectorTypeSupport();

  private final int id;
  private final Path dir;
  private final int count;
  private final int dim;
  private final Distance distance;
  private final VectorSimilarityFunction vsf;
  private final PointId[] ids;
  private final byte[][] payloads;
  private final long payloadBytes;
  private final AtomicLongArray deleted;
  private final AtomicInteger live;
  private final ReaderSupplier readers;
  private final OnDiskGraphIndex graph;
  private final PQVectors pq;
  private final long diskBytes;
  private final int defaultSearchList;
  private final boolean inMemory;
  private final long heapBytes;
  private final ConcurrentLinkedDeque<GraphSearcher> searchers = new ConcurrentLinkedDeque<>();
  private final Bits liveBits;

  private DiskAnnSegment(
      int id,
      Path dir,
      int count,
      int dim,
      Distance distance,
      PointId[] ids,
      byte[][] payloads,
      long payloadBytes,
      BitSet deletedBits,
      ReaderSupplier readers,
      OnDiskGraphIndex graph,
      PQVectors pq,
      long diskBytes,
      int defaultSearchList,
      boolean inMemory,
      long heapBytes) {
    this.id = id;
    this.dir = dir;
    this.count = count;
    this.dim = dim;
    this.distance = distance;
    this.vsf = similarity(distance);
    this.ids = ids;
    this.payloads = payloads;
    this.payloadBytes = payloadBytes;
    this.deleted = new AtomicLongArray((count + 63) >>> 6);
    int dead = 0;
    for (int i = deletedBits.nextSetBit(0);
        i >= 0 && i < count;
        i = deletedBits.nextSetBit(i + 1)) {
      deleted.set(i >>> 6, deleted.get(i >>> 6) | (1L << i));
      dead++;
    }
    this.live = new AtomicInteger(count - dead);
    this.readers = readers;
    this.graph = graph;
    this.pq = pq;
    this.diskBytes = diskBytes;
    this.defaultSearchList = defaultSearchList;
    this.inMemory = inMemory;
    this.heapBytes = heapBytes;
    this.liveBits = ord -> (deleted.get(ord >>> 6) & (1L << ord)) == 0;
  }

  /** Cosine vectors are stored normalised, so cosine and dot both search by dot product. */
  static VectorSimilarityFunction similarity(Distance d) {
    return d == Distance.EUCLID
        ? VectorSimilarityFunction.EUCLIDEAN
        : VectorSimilarityFunction.DOT_PRODUCT;
  }

  /** Converts jvector's similarity back to our score: the dot product or the L2 distance. */
  static float toScore(Distance d, float similarity) {
    if (d == Distance.EUCLID) {
      // jvector: 1 / (1 + d^2)
      return (float) Math.sqrt(Math.max(0.0, 1.0 / similarity - 1.0));
    }
    // jvector: (1 + dot) / 2
    return 2f * similarity - 1f;
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
    int n = liveOrds.length;
    int dim = src.dimension();
    Path tmp = dir.resolveSibling(dir.getFileName() + ".tmp");
    io.deleteTree(tmp);
    io.createDirectories(tmp);
    List<VectorFloat<?>> vectors = new ArrayList<>(n);
    PointId[] ids = new PointId[n];
    byte[][] payloads = new byte[n][];
    for (int i = 0; i < n; i++) {
      vectors.add(VTS.createFloatVector(src.vectorAt(liveOrds[i])));
      ids[i] = src.idAt(liveOrds[i]);
      payloads[i] = src.payloadAt(liveOrds[i]);
    }
    var ravv = new ListRandomAccessVectorValues(vectors, dim);
    VectorSimilarityFunction vsf = similarity(distance);

    // Default dim/4 one-byte codes: at dim/8 the PQ-guided beam loses the true neighbours on
    // clustered embedding-like data (GraphSearchBenchmark, 20k x 128: recall@10 0.77 at
    // search_list 100 with dim/8, 0.92 with dim/4; the exact-score graph reaches 0.995). Still
    // 1/16 of the raw float vectors in RAM.
    int subspaces = params.pqSubspaces() > 0 ? params.pqSubspaces() : Math.max(1, dim / 4);
    subspaces = Math.min(subspaces, dim);
    ProductQuantization pq =
        ProductQuantization.compute(ravv, subspaces, Math.min(256, n), distance == Distance.EUCLID);
    PQVectors codes = (PQVectors) pq.encodeAll(ravv, ForkJoinPool.commonPool());

    ImmutableGraphIndex g;
    try (GraphIndexBuilder builder =
        GraphIndexBuilder.builder(
                BuildScoreProvider.randomAccessScoreProvider(ravv, vsf), dim, params.maxDegree())
            .withBeamWidth(params.buildSearchList())
            .withNeighborOverflow(1.2f)
            .withAlpha(params.alpha())
            .build()) {
      g = builder.build(ravv);
      Path graphPath = tmp.resolve(GRAPH_FILE);
      try (var writer =
          new OnDiskGraphIndexWriter.Builder(g, graphPath)
              .with(new InlineVectors(dim))
              .withMapper(new OrdinalMapper.IdentityMapper(n - 1))
              .build()) {
        writer.write(
            Feature.singleStateFactory(
                FeatureId.INLINE_VECTORS, i -> new InlineVectors.State(ravv.getVector(i))));
      }
    }
    Path pqPath = tmp.resolve(PQ_FILE);
    try (var w = new BufferedRandomAccessWriter(pqPath)) {
      codes.write(w);
    }
    fsync(io, tmp.resolve(GRAPH_FILE));
    fsync(io, pqPath);
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
    return n;
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
    PointId[] ids = new PointId[n];
    for (int i = 0; i < n; i++) {
      byte kind = b.get();
      long lo = b.getLong();
      ids[i] = kind == 0 ? PointId.of(lo) : PointId.of(new UUID(b.getLong(), lo));
    }
    byte[][] payloads = new byte[n][];
    long payloadBytes = 0;
    for (int i = 0; i < n; i++) {
      int len = b.getInt();
      if (len >= 0) {
        payloads[i] = new byte[len];
        b.get(payloads[i]);
        payloadBytes += len;
      }
    }
    BitSet del = new BitSet(n);
    Path delPath = dir.resolve(DELETED_FILE);
    if (Files.exists(delPath)) {
      ChecksummedFile.Contents d = ChecksummedFile.read(io, delPath, DELETED_FORMAT, 1, 1);
      long[] words = new long[d.body().remaining() / 8];
      d.body().asLongBuffer().get(words);
      del = BitSet.valueOf(words);
    }
    PQVectors pq;
    try (ReaderSupplier rs = ReaderSupplierFactory.open(dir.resolve(PQ_FILE));
        RandomAccessReader r = rs.get()) {
      pq = PQVectors.load(r);
    }
    ReaderSupplier readers;
    if (inMemory) {
      ByteBuffer heap = ByteBuffer.wrap(io.readAllBytes(dir.resolve(GRAPH_FILE)));
      readers = () -> new ByteBufferReader(heap.duplicate());
    } else {
      readers = ReaderSupplierFactory.open(dir.resolve(GRAPH_FILE));
    }
    try {
      OnDiskGraphIndex graph = OnDiskGraphIndex.load(readers);
      if (graph.size(0) != n || graph.getDimension() != dim || pq.count() != n) {
        throw new CorruptFileException(
            "segment files disagree [meta="
                + n
                + "x"
                + dim
                + ", graph="
                + graph.size(0)
                + "x"
                + graph.getDimension()
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
          ids,
          payloads,
          payloadBytes,
          del,
          readers,
          graph,
          pq,
          graphLen + pqLen + Files.size(dir.resolve(META_FILE)),
          defaultSearchList,
          inMemory,
          inMemory ? graphLen : 0);
    } catch (IOException | RuntimeException e) {
      readers.close();
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

  private GraphSearcher borrow() {
    GraphSearcher s = searchers.pollFirst();
    return s != null ? s : new GraphSearcher(graph);
  }

  private void release(GraphSearcher s) {
    if (searchers.size() < 64) {
      searchers.addFirst(s);
    } else {
      closeQuietly(s);
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
    long faults0 = ThreadIo.majorFaults();
    try {
      searchGraph(query, params, accept, out, slot, stats, plan);
    } finally {
      long faults1 = ThreadIo.majorFaults();
      if (faults0 >= 0 && faults1 >= faults0) {
        stats.pagesRead += faults1 - faults0;
      }
    }
  }

  private void searchGraph(
      float[] query,
      SearchParams params,
      AcceptedOrdinals accept,
      TopK out,
      int slot,
      SearchStats stats,
      Plan plan) {
    int k = out.capacity();
    VectorFloat<?> q = VTS.createFloatVector(query);
    GraphSearcher s = borrow();
    try {
      var view = (OnDiskGraphIndex.View) s.getView();
      int searchList =
          Math.max(k, params.searchList() > 0 ? params.searchList() : defaultSearchList);
      boolean exact =
          plan != null
              ? plan == Plan.EXACT
              : params.exact()
                  || (accept != null && FilterPlanner.exact(accept.count(), count, searchList));
      if (exact) {
        // Exact: every live point, or only the accepted ones (the planner's choice for selective
        // filters). Ordinals are visited in increasing order, so the inline vectors are read
        // front to back.
        VectorFloat<?> tmp = VTS.createFloatVector(dim);
        int ord = accept == null ? 0 : accept.next(0);
        while (ord >= 0 && ord < count) {
          if (liveBits.get(ord)) {
            view.getVectorInto(ord, tmp, 0);
            out.offer(toScore(distance, vsf.compare(q, tmp)), slot, ord);
            stats.distanceComputations++;
          }
          ord = accept == null ? ord + 1 : accept.next(ord + 1);
        }
        return;
      }
      Bits acceptBits;
      if (accept != null) {
        searchList = FilterPlanner.searchList(searchList, accept.count(), count);
        acceptBits = ord -> accept.get(ord) && liveBits.get(ord);
      } else {
        acceptBits = live.get() == count ? Bits.ALL : liveBits;
      }
      var ssp =
          inMemory
              ? DefaultSearchScoreProvider.exact(q, vsf, view)
              : new DefaultSearchScoreProvider(
                  pq.precomputedScoreFunctionFor(q, vsf), view.rerankerFor(q, vsf));
      SearchResult r = s.search(ssp, k, searchList, 0f, 0f, acceptBits);
      for (SearchResult.NodeScore ns : r.getNodes()) {
        out.offer(toScore(distance, ns.score), slot, ns.node);
      }
      stats.visited += r.getVisitedCount();
      stats.expanded += r.getExpandedCountBaseLayer();
      stats.reranked += r.getRerankedCount();
      stats.distanceComputations += r.getVisitedCount() + r.getRerankedCount();
    } finally {
      release(s);
    }
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
    return ids[ord];
  }

  @Override
  public float[] vectorAt(int ord) {
    GraphSearcher s = borrow();
    try {
      VectorFloat<?> v = ((OnDiskGraphIndex.View) s.getView()).getVector(ord);
      float[] out = new float[dim];
      for (int i = 0; i < dim; i++) {
        out[i] = v.get(i);
      }
      return out;
    } finally {
      release(s);
    }
  }

  @Override
  public byte[] payloadAt(int ord) {
    return payloads[ord];
  }

  @Override
  public boolean isDeleted(int ord) {
    return !liveBits.get(ord);
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
    return pq.ramBytesUsed() + graph.ramBytesUsed() + heapBytes + (long) count * 48 + payloadBytes;
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
    GraphSearcher s;
    while ((s = searchers.pollFirst()) != null) {
      closeQuietly(s);
    }
    try {
      graph.close();
      readers.close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot close segment [dir=" + dir + "]", e);
    }
  }

  private static void closeQuietly(Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // a searcher holds only a view; nothing to recover
    }
  }
}
