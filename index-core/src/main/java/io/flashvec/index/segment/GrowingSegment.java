package io.flashvec.index.segment;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.filter.FilterPlanner;
import io.flashvec.index.query.PreparedSearch;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The in-memory segment that takes a shard's writes. With a {@link LiveGraph} (index types {@code
 * diskann} and {@code hnsw}) a background indexer inserts appended points into the graph and a
 * search walks the graph for the points it holds and scans the rest (the not yet indexed tail)
 * exactly; without one, or while the graph is small, a search scans exactly.
 *
 * <p>Storage is chunked so that appends never move existing data: chunk {@code c} holds ordinals
 * {@code [c*1024, (c+1)*1024)}, its vectors in one flat {@code float[1024 * dim]} array.
 *
 * <p>Threads: one writer (the shard holds its write lock around {@link #append}, {@link
 * #markDeleted} and {@link #freeze}); any number of lock-free readers. The writer fills a slot and
 * then publishes it by a volatile write of {@code size}; readers read {@code size} first, so every
 * ordinal below it is complete. Deletion bits are atomic. Once frozen the segment takes no more
 * appends and reports {@link State#SEALED}.
 *
 * <p>A segment of dimension 0 belongs to a collection without a primary dense vector: it holds no
 * dense array and no placeholders (every point lacks the primary vector), builds no graph, and
 * refuses a search of the primary vector; its points' fields are searched by the shard's exact
 * scan.
 */
public final class GrowingSegment implements Segment {

  static final int CHUNK_SHIFT = 10;
  static final int CHUNK = 1 << CHUNK_SHIFT;
  static final int MASK = CHUNK - 1;

  private static final class Chunk {
    final float[] vectors;
    final PointId[] ids = new PointId[CHUNK];
    final byte[][] payloads = new byte[CHUNK][];
    final AtomicLongArray deleted = new AtomicLongArray(CHUNK / 64);
    // written before the slot is published (volatile size), read after: no further ordering needed
    final long[] noVector = new long[CHUNK / 64];
    java.util.Map<String, io.flashvec.index.SparseVector>[] sparse;
    java.util.Map<String, float[]>[] dense;

    Chunk(int dim) {
      vectors = new float[CHUNK * dim];
    }
  }

  private final int id;
  private final int dim;
  private volatile Chunk[] chunks = new Chunk[4];
  private volatile int size;
  private final AtomicInteger live = new AtomicInteger();
  // set before the first deletion bit: until then a search skips reading them
  private volatile boolean anyDeleted;
  private volatile boolean frozen;
  private volatile boolean indexing;
  private long payloadBytes; // written by the writer only; read racy for stats
  private long sparseBytes; // written by the writer only; read racy for stats
  // the sparse vectors' bytes in a sealed segment's vectors file, and their fields' names
  private long sparseFileBytes;
  private java.util.Set<String> sparseNames;
  private volatile int withoutVector;
  private volatile boolean anySparse;
  private volatile boolean anyDense;
  private long denseBytes; // written by the writer only; read racy for stats
  // the other dense vectors' bytes in a sealed segment's vectors file, and their fields' names
  private long denseFileBytes;
  private java.util.Set<String> denseNames;
  private final LiveGraph graph;
  private final Distance distance;
  private final int defaultSearchList;
  private final java.util.concurrent.atomic.AtomicBoolean indexScheduled =
      new java.util.concurrent.atomic.AtomicBoolean();

  /** A segment without a graph: always searched exactly. */
  public GrowingSegment(int id, int dim) {
    this(id, dim, null, Distance.COSINE, 100);
  }

  /**
   * A segment that builds a live graph with {@code graphParams} ({@code null}: none, searched
   * exactly), searched by {@code distance} with {@code defaultSearchList} when a request gives no
   * search list.
   */
  public GrowingSegment(
      int id, int dim, LiveGraph.Params graphParams, Distance distance, int defaultSearchList) {
    if (dim == 0 && graphParams != null) {
      throw new IllegalArgumentException("a segment without a primary vector has no graph");
    }
    this.id = id;
    this.dim = dim;
    this.distance = distance;
    this.defaultSearchList = defaultSearchList;
    this.graph =
        graphParams == null
            ? null
            : new LiveGraph(
                new LiveGraph.Vectors() {
                  @Override
                  public float[] array(int ord) {
                    return chunks[ord >>> CHUNK_SHIFT].vectors;
                  }

                  @Override
                  public int offset(int ord) {
                    return (ord & MASK) * dim;
                  }
                },
                dim,
                graphParams,
                distance == Distance.EUCLID,
                distance == Distance.COSINE,
                dim >= LiveGraph.SIGN_MIN_DIM);
  }

  /** The live graph, or {@code null}. */
  public LiveGraph graph() {
    return graph;
  }

  @Override
  public int graphPoints() {
    return graph == null ? -1 : graph.size();
  }

  /**
   * Live points in the live graph: live ordinals below its size (0 without a graph). A segment
   * still below {@link #GRAPH_START_POINTS} whose graph has not started counts all its live points:
   * an exact scan of fewer points than that is what its index would do, and the graph does not
   * start before the segment reaches it or freezes.
   */
  @Override
  public int indexedLiveCount() {
    if (graph == null || graph.closed()) {
      return 0;
    }
    int n = graph.size();
    if (n == 0 && !frozen && size < GRAPH_START_POINTS) {
      return liveCount();
    }
    int deleted = 0;
    for (int ord = 0; ord < n; ord++) {
      if (isDeleted(ord)) {
        deleted++;
      }
    }
    return n - deleted;
  }

  /** Appended points not yet in the live graph (0 without one). */
  public int unindexed() {
    return graph == null ? 0 : size - graph.size();
  }

  /**
   * Points the graph waits for before its first insert (unless the segment is frozen), so that the
   * int8 scale it fixes then is taken from a fair sample; until then searches scan anyway.
   */
  static final int GRAPH_START_POINTS = 256;

  /** Whether {@link #indexSome} would insert something now. */
  public boolean indexable() {
    return graph != null
        && !graph.closed()
        && unindexed() > 0
        && (graph.size() > 0 || frozen || size >= GRAPH_START_POINTS);
  }

  /**
   * Inserts up to {@code max} appended points into the live graph (the indexer's unit of work);
   * returns how many. Safe to call from any thread: inserts are serialised by the graph.
   */
  public int indexSome(int max, java.util.function.BooleanSupplier stop) {
    return indexSome(max, stop, false);
  }

  /**
   * As {@link #indexSome(int, java.util.function.BooleanSupplier)}; with {@code hurry} (queries are
   * being served, and each scans the unindexed tail) a growing segment's graph inserts with a
   * shorter construction list ({@link LiveGraph#catchUp(int, int,
   * java.util.function.BooleanSupplier, boolean)}). A frozen segment, being sealed, never hurries.
   */
  public int indexSome(int max, java.util.function.BooleanSupplier stop, boolean hurry) {
    return indexable() ? graph.catchUp(size, max, stop, hurry && !frozen) : 0;
  }

  /** Claims the right to schedule indexing work; see {@link #indexDone()}. */
  public boolean claimIndexing() {
    return graph != null && indexScheduled.compareAndSet(false, true);
  }

  /** Releases the claim of {@link #claimIndexing()}. */
  public void indexDone() {
    indexScheduled.set(false);
  }

  /** Appends a point and returns its ordinal. Writer thread only. */
  public int append(PointId pointId, float[] vector, byte[] payload) {
    return append(pointId, vector, payload, java.util.Map.of());
  }

  /**
   * Appends a point with its sparse vectors by name; see {@link #append(PointId, float[], byte[],
   * java.util.Map, java.util.Map)}.
   */
  public int append(
      PointId pointId,
      float[] vector,
      byte[] payload,
      java.util.Map<String, io.flashvec.index.SparseVector> sparse) {
    return append(pointId, vector, payload, sparse, java.util.Map.of());
  }

  /**
   * Appends a point with its sparse vectors and its other dense vectors by name and returns its
   * ordinal; a {@code null} vector (the point has no primary dense vector) stores {@link
   * #placeholder} in its place. Writer thread only.
   */
  public int append(
      PointId pointId,
      float[] vector,
      byte[] payload,
      java.util.Map<String, io.flashvec.index.SparseVector> sparse,
      java.util.Map<String, float[]> dense) {
    if (frozen) {
      throw new IllegalStateException("segment is sealed [segment=" + id + "]");
    }
    boolean absent = vector == null;
    if (absent && dim > 0) {
      vector = placeholder(dim);
    }
    if (vector != null && (vector.length != dim || dim == 0)) {
      throw new IllegalArgumentException(
          "vector dimension mismatch [expected=" + dim + ", got=" + vector.length + "]");
    }
    int ord = size;
    int ci = ord >>> CHUNK_SHIFT;
    Chunk[] cs = chunks;
    if (ci >= cs.length) {
      cs = Arrays.copyOf(cs, cs.length * 2);
      chunks = cs;
    }
    Chunk c = cs[ci];
    if (c == null) {
      c = new Chunk(dim);
      cs[ci] = c;
    }
    int slot = ord & MASK;
    if (dim > 0) {
      System.arraycopy(vector, 0, c.vectors, slot * dim, dim);
    }
    c.ids[slot] = pointId;
    c.payloads[slot] = payload;
    if (payload != null) {
      payloadBytes += payload.length;
    }
    if (absent) {
      c.noVector[slot >>> 6] |= 1L << slot;
      withoutVector++;
    }
    if (sparse != null && !sparse.isEmpty()) {
      if (c.sparse == null) {
        @SuppressWarnings("unchecked")
        java.util.Map<String, io.flashvec.index.SparseVector>[] m = new java.util.Map[CHUNK];
        c.sparse = m;
      }
      c.sparse[slot] = sparse;
      for (io.flashvec.index.SparseVector v : sparse.values()) {
        sparseBytes += 8L * v.size() + 48;
        sparseFileBytes += 4 + 8L * v.size();
      }
      if (sparseNames == null) {
        sparseNames = new java.util.HashSet<>();
      }
      sparseNames.addAll(sparse.keySet());
      anySparse = true;
    }
    if (dense != null && !dense.isEmpty()) {
      if (c.dense == null) {
        @SuppressWarnings("unchecked")
        java.util.Map<String, float[]>[] m = new java.util.Map[CHUNK];
        c.dense = m;
      }
      c.dense[slot] = dense;
      for (float[] v : dense.values()) {
        denseBytes += 4L * v.length + 48;
        denseFileBytes += 4L * v.length;
      }
      if (denseNames == null) {
        denseNames = new java.util.HashSet<>();
      }
      denseNames.addAll(dense.keySet());
      anyDense = true;
    }
    live.incrementAndGet();
    size = ord + 1;
    return ord;
  }

  /**
   * What a point without the default dense vector holds in its place: a unit vector, so that a
   * Cosine graph keeps normalised vectors; the dense searches never return it ({@link
   * AcceptedOrdinals#withVector}).
   */
  public static float[] placeholder(int dim) {
    float[] v = new float[dim];
    v[0] = 1f;
    return v;
  }

  @Override
  public boolean hasVector(int ord) {
    int slot = ord & MASK;
    return (chunk(ord).noVector[slot >>> 6] & (1L << slot)) == 0;
  }

  @Override
  public int withoutVector() {
    return withoutVector;
  }

  @Override
  public boolean hasSparse() {
    return anySparse;
  }

  @Override
  public io.flashvec.index.SparseVector sparseAt(int ord, String name) {
    var m = chunk(ord).sparse;
    return m == null || m[ord & MASK] == null ? null : m[ord & MASK].get(name);
  }

  @Override
  public java.util.Map<String, io.flashvec.index.SparseVector> sparseAt(int ord) {
    var m = chunk(ord).sparse;
    return m == null || m[ord & MASK] == null ? java.util.Map.of() : m[ord & MASK];
  }

  @Override
  public boolean hasDense() {
    return anyDense;
  }

  @Override
  public float[] denseAt(int ord, String name) {
    var m = chunk(ord).dense;
    return m == null || m[ord & MASK] == null ? null : m[ord & MASK].get(name);
  }

  @Override
  public java.util.Map<String, float[]> denseAt(int ord) {
    var m = chunk(ord).dense;
    return m == null || m[ord & MASK] == null ? java.util.Map.of() : m[ord & MASK];
  }

  /** Stops appends; the segment keeps serving reads and deletes. Writer thread only. */
  public void freeze() {
    frozen = true;
  }

  public boolean frozen() {
    return frozen;
  }

  /** Reports {@link State#INDEXING} while a background build turns this segment into an index. */
  public void markIndexing(boolean on) {
    indexing = on;
  }

  public int dimension() {
    return dim;
  }

  @Override
  public int id() {
    return id;
  }

  @Override
  public State state() {
    return !frozen ? State.GROWING : indexing ? State.INDEXING : State.SEALED;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public int liveCount() {
    return live.get();
  }

  private Chunk chunk(int ord) {
    if (ord < 0 || ord >= size) {
      throw new IndexOutOfBoundsException(
          "ordinal out of range [ord=" + ord + ", size=" + size + "]");
    }
    return chunks[ord >>> CHUNK_SHIFT];
  }

  @Override
  public PointId idAt(int ord) {
    return chunk(ord).ids[ord & MASK];
  }

  @Override
  public float[] vectorAt(int ord) {
    if (dim == 0) {
      throw new IllegalStateException(
          "segment has no primary vector [segment=" + id + ", ord=" + ord + "]");
    }
    int off = (ord & MASK) * dim;
    return Arrays.copyOfRange(chunk(ord).vectors, off, off + dim);
  }

  @Override
  public byte[] payloadAt(int ord) {
    return chunk(ord).payloads[ord & MASK];
  }

  @Override
  public boolean isDeleted(int ord) {
    int slot = ord & MASK;
    return (chunk(ord).deleted.get(slot >>> 6) & (1L << slot)) != 0;
  }

  @Override
  public boolean markDeleted(int ord) {
    int slot = ord & MASK;
    AtomicLongArray bits = chunk(ord).deleted;
    long mask = 1L << slot;
    if (!anyDeleted) {
      anyDeleted = true;
    }
    long prev = bits.getAndUpdate(slot >>> 6, w -> w | mask);
    if ((prev & mask) == 0) {
      live.decrementAndGet();
      return true;
    }
    return false;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The graph's search list and result count are scaled to {@code share} ({@link SearchShare});
   * the points not yet in the graph are scanned exactly for all {@code k}.
   */
  @Override
  public void search(
      PreparedSearch search, AcceptedOrdinals accept, double share, TopK out, int slot) {
    if (dim == 0) {
      throw new IllegalStateException("segment has no primary vector [segment=" + id + "]");
    }
    float[] query = search.query();
    SearchParams params = search.params();
    SearchStats stats = search.stats();
    LiveGraph g = graph;
    int indexed = g == null ? 0 : g.size(); // read before size: [0, indexed) are in the graph
    int n = accept == null ? size : Math.min(size, accept.size());
    stats.segments++;
    int k = out.capacity();
    int searchList =
        Math.max(
            Math.max(k, params.rerankK()),
            params.searchList() > 0 ? params.searchList() : defaultSearchList);
    int graphK = k;
    if (distance != Distance.DOT) {
      // raw inner products walk the L2-built graph less surely: they keep the full list
      searchList = SearchShare.searchList(searchList, Math.max(k, params.rerankK()), share);
      graphK = SearchShare.k(k, share);
    }
    FilterPlanner.Decision plan =
        FilterPlanner.decide(
            params.exact(), accept == null ? -1 : accept.count(), n, searchList, false);
    boolean useGraph =
        g != null
            && plan.plan() == FilterPlanner.Plan.GRAPH
            && k > 0
            && indexed >= Math.max(LiveGraph.MIN_GRAPH_NODES, 8 * searchList);
    searchList = plan.searchList();
    int from = 0;
    if (useGraph) {
      int limit = Math.min(indexed, n);
      Chunk[] cs0 = chunks;
      // no deletion bit set yet (a point written and rewritten in this segment sets one): only
      // the bound, not a miss on the bits per candidate (a deletion from now on is concurrent
      // with this search, which may see it or not, as with the bits)
      java.util.function.IntPredicate ok =
          accept == null && !anyDeleted
              ? ord -> ord < limit
              : ord -> {
                if (ord >= limit) {
                  return false;
                }
                Chunk c = cs0[ord >>> CHUNK_SHIFT];
                int sl = ord & MASK;
                return (c.deleted.get(sl >>> 6) & (1L << sl)) == 0
                    && (accept == null || accept.get(ord));
              };
      boolean euclid = distance == Distance.EUCLID;
      // Not bounded by what earlier segments found (ADR 0011, amended): with new points unlike
      // the sealed ones, the path to them runs through nodes farther than that bound.
      g.search(
          query,
          graphK,
          searchList,
          ok,
          (d, ord) -> out.offer(euclid ? (float) Math.sqrt(Math.max(0f, d)) : -d, slot, ord),
          stats);
      from = limit;
    }
    Chunk[] cs = chunks;
    long scored = 0;
    for (int base = from & ~MASK; base < n; base += CHUNK) {
      Chunk c = cs[base >>> CHUNK_SHIFT];
      int end = Math.min(CHUNK, n - base);
      float[] vectors = c.vectors;
      for (int i = Math.max(0, from - base); i < end; i++) {
        if ((c.deleted.get(i >>> 6) & (1L << i)) != 0
            || (accept != null && !accept.get(base + i))) {
          continue;
        }
        out.offer(distance.score(query, vectors, i * dim), slot, base + i);
        scored++;
      }
    }
    stats.distanceComputations += scored;
  }

  @Override
  public long memoryBytes() {
    int allocated = (size + CHUNK - 1) >>> CHUNK_SHIFT;
    return (long) allocated * (CHUNK * (4L * dim + 8 + 8 + 16))
        + payloadBytes
        + sparseBytes
        + denseBytes
        + (graph == null ? 0 : graph.memoryBytes());
  }

  /**
   * The bytes of the vectors file a build of this segment's points writes (sparse vectors, and
   * which points lack the dense vector; 0 when none needs it), for the free-space checks of its
   * seal: exact for all of its points once frozen, an upper bound for some of them. Writer thread,
   * or once frozen.
   */
  public long vectorsFileBytes() {
    if (withoutVector == 0 && sparseNames == null && denseNames == null) {
      return 0;
    }
    long bytes = 4 + 8L * ((size + 63) >>> 6) + 2 + sparseFileBytes + 4096; // 4096: header
    if (sparseNames != null) {
      for (String name : sparseNames) {
        bytes += 3 + name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 8L * size;
      }
    }
    if (denseNames != null) {
      bytes += denseFileBytes;
      for (String name : denseNames) {
        // a multivector field's table: an offset and a length per point
        bytes += 11 + name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length + 12L * size;
      }
    }
    return bytes;
  }

  /** The bytes of the payloads written to this segment (racy while it grows; exact once frozen). */
  @Override
  public long payloadBytes() {
    return payloadBytes;
  }

  @Override
  public long diskBytes() {
    return 0;
  }
}
