package io.flashvec.index.segment;

import io.flashvec.index.SearchStats;
import io.flashvec.index.TurboQuant;
import io.flashvec.index.internal.SortedCandidates;
import io.flashvec.index.internal.VectorOps;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;

/**
 * An in-memory Vamana graph over a growing segment's vectors, built one point at a time while the
 * segment takes writes and searched while it is built, so new points are found at once.
 *
 * <h2>Model</h2>
 *
 * Graph node {@code i} is segment ordinal {@code i}; nodes {@code [0, size())} are in the graph,
 * later ordinals are not yet (the segment scans them exactly). A point is inserted as in
 * FreshDiskANN: a greedy search for it with list {@code buildList} from the entry node, a robust
 * prune ({@code alpha}, DiskANN's occlusion factors, passes at 1.0 and {@code alpha}) of the nodes
 * that search expanded down to {@code maxDegree} neighbours, then a back edge from each neighbour;
 * a neighbour list that grows past {@code slack} ({@code 1.3 · maxDegree}, DiskANN's graph slack)
 * is pruned back to {@code maxDegree} with its cached distances. Construction uses squared L2 (for
 * unit vectors, the same order as cosine); searches use the query metric.
 *
 * <p>Distances are computed on int8 codes of the vectors ({@code round(x · scale)}, one scale fixed
 * from the first points, as in Lucene's scalar-quantized HNSW): graph work is bound by memory
 * traffic, and a 768-d code is a quarter of the float vector (measured on 100k random 768-d
 * vectors: 243 ns vs 553 ns per distance; 42 vs 71 ns in cache). A search ranks by codes and
 * rescores its best {@code 2k+10} with the full vectors, so returned scores are exact. The entry
 * node starts at node 0 and moves to the node nearest the mean whenever the graph doubles in size.
 * Deleted points stay in the graph (traversed, filtered out of results), as in sealed segments.
 * From {@value #SIGN_MIN_DIM} dimensions an insert's construction search navigates by estimates
 * from one-bit codes instead ({@link SignCodes}: 104 bytes per 768-d node, not 768), and only the
 * nodes it expanded get int8 distances for the prune.
 *
 * <h2>Layout</h2>
 *
 * <pre>
 * lists[chunk][slot] = int[1 + slack]:  [0] = degree d | neighbours[0..d) | unused
 * codes[chunk]       = byte[CHUNK * dim]: int8 codes, node-major
 * signCodes[chunk]   = long[CHUNK * stride]: sign codes, node-major (writer only; dim &gt;= 512)
 * dists[chunk][slot] = float[slack]:    squared L2 (code units) of each neighbour (writer only)
 * </pre>
 *
 * Chunks of {@value #CHUNK} nodes, like the segment's vectors, so growth never copies lists.
 *
 * <h2>Threads</h2>
 *
 * One writer at a time ({@link #catchUp} holds the graph's lock: the background indexer, or the
 * seal build that completes the graph). Any number of lock-free readers: a new neighbour is written
 * into free room of a list and then published by a release store of the degree; a pruned list is a
 * new array published by a release store of the reference; {@code size} is published (volatile)
 * only after the node's list and its back edges, and readers ignore neighbours at or past the
 * {@code size} they read first. So a reader always sees complete lists of complete nodes.
 *
 * <p>About 900 lines in one class on purpose: the insert, the prune and the search loops are the
 * hot path of every growing segment and share the chunked arrays and the writer's scratch; kept in
 * one unit they inline into each other and touch no indirection.
 */
public final class LiveGraph {

  static final int CHUNK_SHIFT = GrowingSegment.CHUNK_SHIFT;
  static final int CHUNK = 1 << CHUNK_SHIFT;
  static final int MASK = CHUNK - 1;

  /** Below this many nodes a search scans exactly instead (cheaper than a graph search). */
  public static final int MIN_GRAPH_NODES = 1024;

  /**
   * Dimension from which construction searches navigate by {@link SignCodes} estimates instead of
   * int8 distances (where a sign code is an eighth of the int8 code's memory traffic).
   */
  public static final int SIGN_MIN_DIM = 512;

  /**
   * Whether graph work loads scattered memory before it computes on it: a search expanding a node
   * first loads every unvisited neighbour's code, a rescore every cache line of its vectors, an
   * insert every line of the int8 codes it prunes with. Those loads are independent, so the core
   * overlaps their misses instead of waiting on each in turn, as hnswlib prefetches neighbours.
   * Beside a query load the graph's memory is not in cache (the sealed segments' search runs in
   * between); the loads cut the growing segment's search and an insert by about a quarter there
   * (ADR 0011, Measurements).
   */
  static final boolean PREFETCH = true;

  private static final VarHandle LIST = MethodHandles.arrayElementVarHandle(int[][].class);
  private static final VarHandle INT = MethodHandles.arrayElementVarHandle(int[].class);

  /** Vectors by ordinal: {@code array(ord)} holds the vector at {@code offset(ord)}. */
  public interface Vectors {
    float[] array(int ord);

    int offset(int ord);
  }

  /**
   * Construction parameters.
   *
   * @param maxDegree neighbours kept per node after a prune (R)
   * @param buildList search list of the construction search (L)
   * @param alpha robust-prune factor (1.2 keeps long edges)
   */
  public record Params(int maxDegree, int buildList, float alpha) {
    public Params {
      if (maxDegree < 2 || buildList < 1 || !(alpha >= 1f)) {
        throw new IllegalArgumentException(
            "invalid live graph params [maxDegree="
                + maxDegree
                + ", buildList="
                + buildList
                + ", alpha="
                + alpha
                + "]");
      }
    }
  }

  private final Vectors vectors;
  private final int dim;
  private final int maxDegree;
  private final int slack;
  private final int buildList;
  private final float alpha;
  private final boolean euclid;
  private final float quantile; // NaN: the largest sampled magnitude with headroom
  private final ReentrantLock writer = new ReentrantLock();
  private final ConcurrentLinkedDeque<Searcher> searchers = new ConcurrentLinkedDeque<>();

  private volatile int[][][] lists = new int[4][][];
  private volatile byte[][] codes = new byte[4][]; // chunk -> CHUNK * dim int8 codes
  private volatile float scale; // code = round(x * scale), fixed by the first insert
  private final boolean useSigns;
  private final boolean signQueries; // searches navigate by sign codes too (cosine and L2)
  private volatile SignCodes signs; // fixed with the scale (null: navigate by int8 codes)
  private volatile long[][] signCodes = new long[4][]; // chunk -> CHUNK * stride sign codes
  // searches navigate by TurboQuant codes (null: by int8 or sign codes; ADR 0045); construction
  // keeps navigating and pruning by int8 codes, which a sealed graph then drops
  private final TurboQuant turbo;
  private final int turboBytes;
  private volatile byte[][] turboCodes = new byte[4][]; // chunk -> CHUNK * turboBytes codes
  private SignCodes.Query signQuery; // writer scratch
  private float[][][] dists = new float[4][][]; // writer only, in code units
  private volatile int size;
  private volatile int entry;
  private volatile boolean closed;
  // complete and never written again: read from a file ({@link #read}) or sealed ({@link #seal})
  private boolean restored;
  private long edgeBytes; // writer only; read racy for stats

  // writer scratch
  private Searcher builder;
  private int[] poolIds = new int[0];
  private float[] poolDist = new float[0];
  private long[] sortKeys = new long[0];
  private float[] occlusion = new float[0];
  private final int[] pickedIds;
  private final float[] pickedDist;

  /**
   * An empty graph.
   *
   * @param euclid whether searches rank by L2 distance (else by dot product: cosine and dot)
   */
  public LiveGraph(Vectors vectors, int dim, Params params, boolean euclid) {
    this(vectors, dim, params, euclid, false, dim >= SIGN_MIN_DIM);
  }

  /**
   * As the public constructor; {@code unitLength}: the vectors (and queries) have unit length
   * (cosine), so squared L2 ranks like the dot product and searches may navigate by sign codes too;
   * {@code signs}: whether construction navigates by sign codes.
   */
  LiveGraph(
      Vectors vectors, int dim, Params params, boolean euclid, boolean unitLength, boolean signs) {
    this(vectors, dim, params, euclid, unitLength, signs, Float.NaN);
  }

  /**
   * As above; {@code quantile} ({@code NaN}: none) fixes the int8 scale so that this fraction of
   * the sampled values' magnitudes fits the code range unclipped, as Qdrant's scalar quantization's
   * {@code quantile}, instead of the largest magnitude with headroom.
   */
  LiveGraph(
      Vectors vectors,
      int dim,
      Params params,
      boolean euclid,
      boolean unitLength,
      boolean signs,
      float quantile) {
    this(vectors, dim, params, euclid, unitLength, signs, quantile, null);
  }

  /**
   * As above; {@code turbo} ({@code null}: none) codes every node with TurboQuant too, and searches
   * navigate by those codes (ADR 0045): construction still navigates and prunes by int8 codes,
   * which {@link #seal} then drops, so a complete graph holds the TurboQuant codes and its
   * adjacency.
   */
  LiveGraph(
      Vectors vectors,
      int dim,
      Params params,
      boolean euclid,
      boolean unitLength,
      boolean signs,
      float quantile,
      TurboQuant turbo) {
    if (turbo != null && (signs || turbo.dim() != dim)) {
      throw new IllegalArgumentException("turbo codes with sign codes or of another dimension");
    }
    this.turbo = turbo;
    this.turboBytes = turbo == null ? 0 : turbo.codeBytes();
    this.quantile = quantile;
    this.useSigns = signs;
    this.signQueries = signs && (euclid || unitLength);
    this.vectors = vectors;
    this.dim = dim;
    this.maxDegree = params.maxDegree();
    this.slack = Math.max(maxDegree + 1, (int) Math.ceil(maxDegree * 1.3));
    this.buildList = params.buildList();
    this.alpha = params.alpha();
    this.euclid = euclid;
    this.pickedIds = new int[slack + 1];
    this.pickedDist = new float[slack + 1];
  }

  /** Nodes in the graph: ordinals {@code [0, size())}. */
  public int size() {
    return size;
  }

  public int maxDegree() {
    return maxDegree;
  }

  /** The construction search list (L, Qdrant's {@code ef_construct}). */
  public int buildList() {
    return buildList;
  }

  /** The entry node of searches ({@code -1} while empty). */
  public int entry() {
    return size == 0 ? -1 : Math.min(entry, size - 1);
  }

  /** Heap bytes of the adjacency and the codes (estimate, racy). */
  public long memoryBytes() {
    return edgeBytes;
  }

  /** Stops further inserts (the segment was replaced); searches keep working. */
  public void close() {
    closed = true;
  }

  public boolean closed() {
    return closed;
  }

  // ---------------------------------------------------------------- reading

  /** Node {@code u}'s neighbour list as published ({@code [0]} = degree). */
  private int[] list(int u) {
    return (int[]) LIST.getAcquire(lists[u >>> CHUNK_SHIFT], u & MASK);
  }

  /**
   * Copies node {@code u}'s neighbours into {@code out} (at most {@code out.length}) and returns
   * how many; {@code u} must be below {@link #size()}.
   */
  public int neighbours(int u, int[] out) {
    int[] l = list(u);
    int d = Math.min((int) INT.getAcquire(l, 0), out.length);
    System.arraycopy(l, 1, out, 0, d);
    return d;
  }

  /**
   * Searches the graph as it is now for the {@code k} best nodes that {@code accept} takes ({@code
   * null}: all), keeping {@code searchList} candidates, and calls {@code sink} with each result's
   * distance (lower is better: squared L2, or the negated dot product) and ordinal. Adds its cost
   * to {@code stats}. Thread-safe.
   */
  public void search(
      float[] q, int k, int searchList, IntPredicate accept, Sink sink, SearchStats stats) {
    search(q, k, searchList, 0, accept, sink, stats);
  }

  /**
   * As above, rescoring the best {@code rerank} candidates by codes with the full vectors ({@code
   * 0}: {@code 2k + 10} navigating by int8 codes, {@code 4k + 20} by sign codes; at least {@code
   * k}); the candidate list grows to hold them.
   */
  public void search(
      float[] q,
      int k,
      int searchList,
      int rerank,
      IntPredicate accept,
      Sink sink,
      SearchStats stats) {
    int n = size;
    if (n == 0 || k == 0) {
      return;
    }
    Searcher s = searchers.pollFirst();
    if (s == null) {
      s = new Searcher();
    }
    try {
      int wanted = rerank > 0 ? Math.max(k, rerank) : 0;
      int cap = Math.max(Math.max(k, searchList), wanted);
      if (turbo != null) {
        // rank by the query's asymmetric estimate against the TurboQuant codes, rescore the best
        // with the full vectors: 2k+10 at 4 bits, 4k+20 at 2, 8k+40 at 1 (coarser estimates;
        // every scored node is a result candidate, so more than the list may be rescored)
        int best =
            wanted > 0
                ? wanted
                : switch (turbo.bits().bitSize()) {
                  case 4 -> Math.min(cap, 2 * k + 10);
                  case 2 -> 4 * k + 20;
                  default -> 8 * k + 40;
                };
        s.search(null, 0, false, cap, n, accept, best, false, null, turbo.query(q, 0));
        rescore(s, q, sink, stats);
        return;
      }
      SignCodes sg = signQueries ? signs : null;
      if (sg != null) {
        searchBySigns(s, sg, q, k, cap, n, accept, sink, stats, wanted);
        return;
      }
      if (s.query.length < dim) {
        s.query = new byte[dim];
      }
      quantize(q, 0, s.query, 0);
      // rank by codes, rescore the best 2k+10 with the full vectors: the scores are exact
      int best = wanted > 0 ? wanted : Math.min(cap, 2 * k + 10);
      s.search(s.query, 0, false, cap, n, accept, best, false, null, null);
      rescore(s, q, sink, stats);
    } finally {
      if (searchers.size() < 64) {
        searchers.addFirst(s);
      }
    }
  }

  /**
   * {@link #search} navigating by sign-code estimates of the squared L2 distance (cosine queries
   * and vectors have unit length, so it ranks like their dot product): the best {@code 4k+20} by
   * estimate are rescored with the full vectors, so returned scores are exact. 768-d, one thread,
   * 30k points: see {@link SignCodes}.
   */
  private void searchBySigns(
      Searcher s,
      SignCodes sg,
      float[] q,
      int k,
      int cap,
      int n,
      IntPredicate accept,
      Sink sink,
      SearchStats stats,
      int wanted) {
    if (s.signQuery == null || s.signQueryOf != sg) {
      s.signQuery = sg.new Query();
      s.signQueryOf = sg;
    }
    s.signQuery.set(q, 0);
    // the best 4k+20 by estimate, rescored exactly (768-d, 30k points, list 60, one thread:
    // recall@10 0.9988 in 108 us against 0.9994 in 146 us navigating by int8 codes; the best
    // 3k+10 only: 0.9934)
    int pool = wanted > 0 ? wanted : 4 * k + 20;
    s.search(null, 0, true, cap, n, accept, pool, false, s.signQuery, null);
    rescore(s, q, sink, stats);
  }

  /** Hands the searcher's results to {@code sink} with exact scores, and counts the search. */
  private void rescore(Searcher s, float[] q, Sink sink, SearchStats stats) {
    if (PREFETCH) {
      // a load of every cache line of the vectors first: they are scattered, and independent
      // loads overlap where a dot product's would wait on each vector's first miss
      float touch = 0f;
      for (int i = 0; i < s.resSize; i++) {
        int ord = s.resIds[i];
        float[] a = vectors.array(ord);
        int o = vectors.offset(ord);
        for (int j = 0; j < dim; j += 16) {
          touch += a[o + j];
        }
      }
      s.sink += Float.floatToRawIntBits(touch);
    }
    for (int i = 0; i < s.resSize; i++) {
      int ord = s.resIds[i];
      float[] a = vectors.array(ord);
      int o = vectors.offset(ord);
      sink.accept(
          euclid ? VectorOps.squareDistance(q, 0, a, o, dim) : -VectorOps.dot(q, 0, a, o, dim),
          ord);
    }
    stats.visited += s.scored;
    stats.expanded += s.expanded;
    stats.reranked += s.resSize;
    stats.distanceComputations += s.scored + s.resSize;
  }

  /** Receives search results. */
  @FunctionalInterface
  public interface Sink {
    void accept(float distance, int ord);
  }

  // ---------------------------------------------------------------- writing

  /**
   * Inserts nodes until the graph holds {@code target} of them, or {@code stop} says so, or the
   * graph is closed; at most {@code max} nodes per call. Ordinals below {@code target} must have
   * their vectors published. Takes the writer lock. Returns how many were inserted.
   */
  public int catchUp(int target, int max, BooleanSupplier stop) {
    return catchUp(target, max, stop, false);
  }

  /**
   * As {@link #catchUp(int, int, BooleanSupplier)}; with {@code hurry}, inserts made while more
   * than {@link #FAST_BACKLOG} points wait use a construction list of at most {@value #FAST_LIST}
   * and keep at most {@link #HURRY_DEGREE} out-edges (the live indexer beside a query load; a seal
   * finishing the graph takes its time).
   */
  public int catchUp(int target, int max, BooleanSupplier stop, boolean hurry) {
    writer.lock();
    try {
      return catchUpLocked(target, max, stop, hurry);
    } finally {
      writer.unlock();
    }
  }

  /** The work of {@link #catchUp}; the caller holds the writer lock. */
  private int catchUpLocked(int target, int max, BooleanSupplier stop, boolean hurry) {
    if (restored) {
      return 0;
    }
    if (size == 0 && target > 0 && scale == 0f) {
      fixScale(target);
    }
    int done = 0;
    while (size < target && done < max && !closed && !stop.getAsBoolean()) {
      // Beside queries: a shorter construction list leaves them the CPU and keeps the unindexed
      // tail every query scans exactly short. 768-d, 100k points, R=64: L=48 costs 243 us of CPU
      // per insert against 577 us at L=100, and searches at L=60 reach recall@10 0.997 against
      // 0.9975; L=32 (with HURRY_DEGREE): see FAST_LIST.
      boolean hurried = hurry && target - size > FAST_BACKLOG;
      insert(
          size,
          hurried ? Math.min(buildList, FAST_LIST) : buildList,
          hurried ? Math.min(maxDegree, HURRY_DEGREE) : maxDegree);
      done++;
    }
    return done;
  }

  /**
   * Prunes every neighbour list longer than {@code maxDegree} (lists run up to the slack between
   * prunes) back to {@code maxDegree}, so the graph fits a sealed segment's records. Takes the
   * writer lock; searches may run meanwhile.
   */
  public void trimToMaxDegree() {
    writer.lock();
    try {
      if (restored) {
        return; // written trimmed, and without the distances a prune needs
      }
      int n = size;
      for (int u = 0; u < n; u++) {
        int c = u >>> CHUNK_SHIFT;
        int s = u & MASK;
        int[] l = lists[c][s];
        int deg = l[0];
        if (deg <= maxDegree) {
          continue;
        }
        ensurePool(deg);
        System.arraycopy(l, 1, poolIds, 0, deg);
        System.arraycopy(dists[c][s], 0, poolDist, 0, deg);
        publishPruned(u, prune(poolIds, poolDist, deg, u));
      }
    } finally {
      writer.unlock();
    }
  }

  /**
   * Ends the graph's construction: every neighbour list is cut to its neighbours (no room for back
   * edges) and the construction distances are dropped, so a complete graph that takes no more
   * inserts (a sealed segment's field graph) holds its adjacency only, as one read from its file
   * does. Call after {@link #trimToMaxDegree}; searches may run meanwhile (each list is replaced by
   * a release store, as a prune's).
   */
  public void seal() {
    writer.lock();
    try {
      if (restored) {
        return;
      }
      int n = size;
      long bytes = 0;
      int chunks = (n + CHUNK - 1) >>> CHUNK_SHIFT;
      for (int c = 0; c < chunks; c++) {
        bytes += turbo != null ? (long) CHUNK * turboBytes : (long) CHUNK * dim;
        if (signs != null) {
          bytes += 8L * CHUNK * signs.stride();
        }
      }
      if (turbo != null) {
        codes = new byte[codes.length][]; // searches navigate by the TurboQuant codes only
      }
      for (int u = 0; u < n; u++) {
        int[] l = lists[u >>> CHUNK_SHIFT][u & MASK];
        int d = l[0];
        if (l.length > 1 + d) {
          LIST.setRelease(lists[u >>> CHUNK_SHIFT], u & MASK, Arrays.copyOf(l, 1 + d));
        }
        bytes += 16 + 4L * (1 + d);
      }
      dists = new float[dists.length][][];
      builder = null;
      edgeBytes = bytes;
      restored = true;
    } finally {
      writer.unlock();
    }
  }

  /** Publishes {@code kept} picks of {@link #prune} as node {@code u}'s new list. */
  private void publishPruned(int u, int kept) {
    int[] nl = new int[1 + slack];
    float[] nd = new float[slack];
    for (int i = 0; i < kept; i++) {
      nl[1 + i] = pickedIds[i];
      nd[i] = pickedDist[i];
    }
    nl[0] = kept;
    dists[u >>> CHUNK_SHIFT][u & MASK] = nd;
    LIST.setRelease(lists[u >>> CHUNK_SHIFT], u & MASK, nl);
  }

  /**
   * Fixes the int8 scale from the points there are ({@code n}, at most the first {@value
   * #SCALE_SAMPLE}): the largest magnitude maps to 127 with 10% headroom; later larger values
   * clamp. One scale for all dimensions: embeddings spread their energy evenly over them.
   */
  private void fixScale(int n) {
    float max = 0f;
    int sampled = Math.min(n, SCALE_SAMPLE);
    float[] magnitudes = Float.isNaN(quantile) ? null : new float[sampled * dim];
    for (int i = 0; i < sampled; i++) {
      float[] a = vectors.array(i);
      int o = vectors.offset(i);
      for (int j = 0; j < dim; j++) {
        max = Math.max(max, Math.abs(a[o + j]));
        if (magnitudes != null) {
          magnitudes[i * dim + j] = Math.abs(a[o + j]);
        }
      }
    }
    if (magnitudes != null) {
      // the quantile's magnitude maps to 127; larger values clamp
      Arrays.sort(magnitudes);
      float q = magnitudes[Math.min(magnitudes.length - 1, (int) (quantile * magnitudes.length))];
      scale = q > 0f && Float.isFinite(q) ? 127f / q : 1f;
    } else {
      scale = max > 0f && Float.isFinite(max) ? 127f / (max * 1.1f) : 1f;
    }
    if (useSigns) {
      int m = Math.min(n, SCALE_SAMPLE);
      float[] center = new float[dim];
      for (int i = 0; i < m; i++) {
        float[] a = vectors.array(i);
        int o = vectors.offset(i);
        for (int j = 0; j < dim; j++) {
          center[j] += a[o + j];
        }
      }
      for (int j = 0; j < dim; j++) {
        center[j] /= m;
      }
      signs = new SignCodes(center);
      signQuery = signs.new Query();
    }
  }

  /** Points the int8 scale is taken from. */
  public static final int SCALE_SAMPLE = 256;

  /** Writes the int8 code of {@code v[off, off+dim)}. */
  private void quantize(float[] v, int off, byte[] out, int outOff) {
    float sc = scale;
    for (int j = 0; j < dim; j++) {
      out[outOff + j] = (byte) Math.max(-127, Math.min(127, Math.round(v[off + j] * sc)));
    }
  }

  /**
   * Waiting points beyond which a hurried graph (queries are being served) inserts with {@link
   * #FAST_LIST}: none, so a graph beside a query load always does, which leaves the queries more
   * CPU at the same recall (ADR 0014).
   */
  static final int FAST_BACKLOG = 0;

  /**
   * Construction list of hurried inserts (capped by the configured one). 32 instead of 48: more
   * query throughput beside inserts, and recall within a point of full effort ({@code
   * LiveGraphTest.hurriedInserts…}; ADR 0011, Measurements).
   */
  static final int FAST_LIST = 32;

  /**
   * Out-edges a hurried insert keeps (at most the configured degree; back edges from later inserts
   * still fill a list up to it): fewer back edges to add and shorter lists for every search to
   * score, as an in-memory HNSW keeps 2M = 32 on its base layer (ADR 0011, Measurements). {@code
   * LiveGraphTest.hurriedInserts…}: the same recall as full effort within 0.5 point.
   */
  static final int HURRY_DEGREE = 32;

  /**
   * Inserts node {@code p} (= {@link #size()}) with construction list {@code list}, keeping at most
   * {@code degree} out-edges.
   */
  private void insert(int p, int list, int degree) {
    ensureChunk(p);
    byte[] code = codes[p >>> CHUNK_SHIFT];
    int codeOff = (p & MASK) * dim;
    float[] pv = vectors.array(p);
    int po = vectors.offset(p);
    quantize(pv, po, code, codeOff);
    if (turbo != null) {
      turbo.encode(pv, po, turboCodes[p >>> CHUNK_SHIFT], (p & MASK) * turboBytes);
    }
    if (signs != null) {
      signs.encode(pv, po, signCodes[p >>> CHUNK_SHIFT], (p & MASK) * signs.stride());
      signQuery.set(pv, po);
    }
    int[] l = new int[1 + slack];
    float[] d = new float[slack];
    if (p > 0) {
      if (builder == null) {
        builder = new Searcher();
      }
      // construction search in squared L2 (on sign estimates or int8 codes); the expanded nodes
      // are prune candidates, with int8 distances
      builder.search(code, codeOff, true, list, p, null, 0, true, signQuery, null);
      int m = builder.poolSize;
      if (signs != null) {
        if (PREFETCH) {
          // every cache line of the expanded nodes' codes first (see rescore)
          int touch = 0;
          byte[][] cs = codes;
          for (int i = 0; i < m; i++) {
            int v = builder.poolIds[i];
            byte[] c = cs[v >>> CHUNK_SHIFT];
            int o = (v & MASK) * dim;
            for (int j = 0; j < dim; j += 64) {
              touch += c[o + j];
            }
          }
          builder.sink += touch;
        }
        for (int i = 0; i < m; i++) {
          int v = builder.poolIds[i];
          builder.poolDist[i] =
              VectorOps.squareDistance(
                  code, codeOff, codes[v >>> CHUNK_SHIFT], (v & MASK) * dim, dim);
        }
      }
      int deg = prune(builder.poolIds, builder.poolDist, m, -1, degree);
      for (int i = 0; i < deg; i++) {
        l[1 + i] = pickedIds[i];
        d[i] = pickedDist[i];
      }
      l[0] = deg;
    }
    dists[p >>> CHUNK_SHIFT][p & MASK] = d;
    LIST.setRelease(lists[p >>> CHUNK_SHIFT], p & MASK, l);
    edgeBytes += 16 + 4L * l.length + 16 + 4L * d.length;
    for (int i = 0; i < l[0]; i++) {
      addBackEdge(l[1 + i], p, d[i]);
    }
    size = p + 1;
    int n = p + 1;
    if (n >= 64 && Integer.bitCount(n) == 1) {
      moveEntryToMedoid(n);
    }
  }

  private void ensureChunk(int p) {
    int c = p >>> CHUNK_SHIFT;
    int[][][] ls = lists;
    if (c >= ls.length) {
      ls = Arrays.copyOf(ls, ls.length * 2);
      dists = Arrays.copyOf(dists, ls.length);
      codes = Arrays.copyOf(codes, ls.length);
      signCodes = Arrays.copyOf(signCodes, ls.length);
      turboCodes = Arrays.copyOf(turboCodes, ls.length);
      lists = ls;
    }
    if (ls[c] == null) {
      dists[c] = new float[CHUNK][];
      codes[c] = new byte[CHUNK * dim];
      edgeBytes += (long) CHUNK * dim;
      if (signs != null) {
        signCodes[c] = new long[CHUNK * signs.stride()];
        edgeBytes += 8L * CHUNK * signs.stride();
      }
      if (turbo != null) {
        turboCodes[c] = new byte[CHUNK * turboBytes];
        edgeBytes += (long) CHUNK * turboBytes;
      }
      ls[c] = new int[CHUNK][];
      lists = ls; // republish: readers of size p+1 must see the new chunk
    }
  }

  /** Adds edge {@code u → p} (distance {@code dp}); prunes {@code u}'s list when it is full. */
  private void addBackEdge(int u, int p, float dp) {
    int c = u >>> CHUNK_SHIFT;
    int s = u & MASK;
    int[] l = lists[c][s];
    float[] d = dists[c][s];
    int deg = l[0];
    for (int i = 1; i <= deg; i++) {
      if (l[i] == p) {
        return;
      }
    }
    if (deg < slack) {
      l[1 + deg] = p;
      d[deg] = dp;
      INT.setRelease(l, 0, deg + 1);
      return;
    }
    // full: robust prune of the current neighbours plus p, into a new list
    ensurePool(deg + 1);
    System.arraycopy(l, 1, poolIds, 0, deg);
    System.arraycopy(d, 0, poolDist, 0, deg);
    poolIds[deg] = p;
    poolDist[deg] = dp;
    publishPruned(u, prune(poolIds, poolDist, deg + 1, u));
  }

  private void ensurePool(int m) {
    if (poolIds.length < m) {
      poolIds = new int[m];
      poolDist = new float[m];
    }
  }

  /** {@link #prune(int[], float[], int, int, int)} down to the graph's {@code maxDegree}. */
  private int prune(int[] ids, float[] dist, int m, int self) {
    return prune(ids, dist, m, self, maxDegree);
  }

  /**
   * DiskANN's robust prune: candidates sorted by distance to the node, a candidate is picked unless
   * an already picked one occludes it ({@code d(node, c) > a · d(picked, c)}), with {@code a} = 1
   * then {@code alpha} while fewer than {@code degree} are picked. Leaves the picks in {@code
   * pickedIds/pickedDist}; returns their count. {@code self} (or -1) is skipped.
   */
  private int prune(int[] ids, float[] dist, int m, int self, int degree) {
    if (sortKeys.length < m) {
      sortKeys = new long[m];
      occlusion = new float[m];
    }
    int cnt = 0;
    for (int i = 0; i < m; i++) {
      if (ids[i] != self) {
        // non-negative floats order like their bits
        sortKeys[cnt++] = ((long) Float.floatToRawIntBits(Math.max(0f, dist[i])) << 32) | ids[i];
      }
    }
    Arrays.sort(sortKeys, 0, cnt);
    // reuse ids/dist as the sorted candidate arrays
    int u = 0;
    int last = -1;
    for (int i = 0; i < cnt; i++) {
      int id = (int) sortKeys[i];
      if (id == last) {
        continue;
      }
      last = id;
      ids[u] = id;
      dist[u] = Float.intBitsToFloat((int) (sortKeys[i] >>> 32));
      occlusion[u] = 0f;
      u++;
    }
    int picked = 0;
    for (float a = 1f; a <= alpha * 1.0001f && picked < degree; a *= 1.2f) {
      for (int i = 0; i < u && picked < degree; i++) {
        if (occlusion[i] > a) {
          continue;
        }
        occlusion[i] = Float.MAX_VALUE;
        pickedIds[picked] = ids[i];
        pickedDist[picked] = dist[i];
        picked++;
        byte[][] cs = codes;
        byte[] ai = cs[ids[i] >>> CHUNK_SHIFT];
        int oi = (ids[i] & MASK) * dim;
        for (int j = i + 1; j < u; j++) {
          if (occlusion[j] > alpha) {
            continue;
          }
          int vj = ids[j];
          float djk =
              VectorOps.squareDistance(ai, oi, cs[vj >>> CHUNK_SHIFT], (vj & MASK) * dim, dim);
          occlusion[j] = djk == 0f ? Float.MAX_VALUE : Math.max(occlusion[j], dist[j] / djk);
        }
      }
      if (alpha <= 1f) {
        break;
      }
    }
    return picked;
  }

  /** Moves the entry node to the node nearest the mean of the first {@code n} vectors. */
  private void moveEntryToMedoid(int n) {
    float[] mean = new float[dim];
    for (int i = 0; i < n; i++) {
      float[] a = vectors.array(i);
      int o = vectors.offset(i);
      for (int j = 0; j < dim; j++) {
        mean[j] += a[o + j];
      }
    }
    for (int j = 0; j < dim; j++) {
      mean[j] /= n;
    }
    byte[] q = new byte[dim];
    quantize(mean, 0, q, 0);
    builder.search(q, 0, true, Math.min(buildList, 32), n, null, 1, false, null, null);
    if (builder.resSize > 0) {
      entry = builder.resIds[0];
    }
  }

  // ---------------------------------------------------------------- persistence

  /**
   * Writes the graph as it is (its writer lock held, so no insert runs meanwhile):
   *
   * <pre>
   * u32 size | u32 entry | f32 scale | u8 signs (1: sign codes follow)
   * [signs: dim * f32 center]
   * size * dim * i8 codes                  (node-major; without turbo)
   * [turbo: size * codeBytes TurboQuant codes, node-major]
   * [signs: size * stride * i64 sign codes]
   * size * u32 degree | sum(degree) * u32 neighbours
   * </pre>
   *
   * {@code stop} is asked between chunks; when it says so the write ends with an {@link
   * java.io.InterruptedIOException} (the caller drops the file).
   */
  void write(io.flashvec.storage.ChecksummedFile.Writer w, BooleanSupplier stop)
      throws java.io.IOException {
    writer.lock();
    try {
      int n = size;
      SignCodes sg = signs;
      w.putInt(n).putInt(entry()).putFloat(scale).putByte((byte) (sg == null ? 0 : 1));
      if (sg != null) {
        w.putFloats(sg.center(), 0, dim);
      }
      for (int base = 0; base < n && turbo == null; base += CHUNK) {
        checkStop(stop);
        w.put(codes[base >>> CHUNK_SHIFT], 0, Math.min(CHUNK, n - base) * dim);
      }
      for (int base = 0; base < n && turbo != null; base += CHUNK) {
        checkStop(stop);
        w.put(turboCodes[base >>> CHUNK_SHIFT], 0, Math.min(CHUNK, n - base) * turboBytes);
      }
      if (sg != null) {
        for (int base = 0; base < n; base += CHUNK) {
          checkStop(stop);
          w.putLongs(signCodes[base >>> CHUNK_SHIFT], 0, Math.min(CHUNK, n - base) * sg.stride());
        }
      }
      for (int u = 0; u < n; u++) {
        w.putInt(list(u)[0]);
      }
      for (int u = 0; u < n; u++) {
        if ((u & MASK) == 0) {
          checkStop(stop);
        }
        int[] l = list(u);
        w.putInts(l, 1, l[0]);
      }
    } finally {
      writer.unlock();
    }
  }

  private static void checkStop(BooleanSupplier stop) throws java.io.InterruptedIOException {
    if (stop.getAsBoolean()) {
      throw new java.io.InterruptedIOException("graph write stopped");
    }
  }

  /**
   * Reads a graph {@link #write} wrote, of {@code n} nodes over {@code vectors}, with the settings
   * it was built with (the caller checked them). The graph is complete and takes no inserts; its
   * lists hold their neighbours only (no room for back edges, no construction distances), so it
   * takes less heap than the graph it was written from.
   *
   * @throws io.flashvec.storage.CorruptFileException if the contents do not fit {@code n} nodes
   */
  static LiveGraph read(
      io.flashvec.storage.ChecksummedFile.Reader r,
      int n,
      Vectors vectors,
      int dim,
      Params params,
      boolean euclid,
      boolean unitLength,
      float quantile,
      TurboQuant turbo)
      throws java.io.IOException {
    int size = r.getInt();
    int entry = r.getInt();
    float scale = r.getFloat();
    boolean hasSigns = r.get() == 1;
    if (size != n || entry < 0 || entry >= Math.max(1, n) || !(scale > 0f)) {
      throw new io.flashvec.storage.CorruptFileException(
          "graph header does not fit [nodes=" + n + ", size=" + size + ", entry=" + entry + "]",
          r.path());
    }
    if (hasSigns && turbo != null) {
      throw new io.flashvec.storage.CorruptFileException(
          "a graph of TurboQuant codes has no sign codes", r.path());
    }
    LiveGraph g =
        new LiveGraph(vectors, dim, params, euclid, unitLength, hasSigns, quantile, turbo);
    int chunks = (n + CHUNK - 1) >>> CHUNK_SHIFT;
    int cap = Math.max(4, Integer.highestOneBit(Math.max(1, chunks - 1)) << 1);
    long bytes = 0;
    SignCodes sg = null;
    if (hasSigns) {
      float[] center = new float[dim];
      r.getFloats(center, 0, dim);
      sg = new SignCodes(center);
    }
    byte[][] cs = new byte[cap][];
    byte[][] ts = new byte[cap][];
    for (int c = 0; c < chunks; c++) {
      if (turbo == null) {
        cs[c] = new byte[CHUNK * dim];
        r.get(cs[c], 0, Math.min(CHUNK, n - (c << CHUNK_SHIFT)) * dim);
        bytes += (long) CHUNK * dim;
      } else {
        ts[c] = new byte[CHUNK * g.turboBytes];
        r.get(ts[c], 0, Math.min(CHUNK, n - (c << CHUNK_SHIFT)) * g.turboBytes);
        bytes += (long) CHUNK * g.turboBytes;
      }
    }
    long[][] ss = new long[cap][];
    if (sg != null) {
      for (int c = 0; c < chunks; c++) {
        ss[c] = new long[CHUNK * sg.stride()];
        r.getLongs(ss[c], 0, Math.min(CHUNK, n - (c << CHUNK_SHIFT)) * sg.stride());
        bytes += 8L * CHUNK * sg.stride();
      }
    }
    int[] degree = new int[n];
    r.getInts(degree, 0, n);
    int[][][] ls = new int[cap][][];
    for (int u = 0; u < n; u++) {
      int c = u >>> CHUNK_SHIFT;
      if (ls[c] == null) {
        ls[c] = new int[CHUNK][];
      }
      int d = degree[u];
      if (d < 0 || d > g.slack) {
        throw new io.flashvec.storage.CorruptFileException(
            "node degree out of range [node=" + u + ", degree=" + d + "]", r.path());
      }
      int[] l = new int[1 + d];
      l[0] = d;
      r.getInts(l, 1, d);
      for (int i = 1; i <= d; i++) {
        if (l[i] < 0 || l[i] >= n) {
          throw new io.flashvec.storage.CorruptFileException(
              "neighbour out of range [node=" + u + ", neighbour=" + l[i] + "]", r.path());
        }
      }
      ls[c][u & MASK] = l;
      bytes += 16 + 4L * l.length;
    }
    g.codes = cs;
    g.turboCodes = ts;
    g.signCodes = ss;
    g.dists = new float[cap][][];
    g.scale = scale;
    g.signs = sg;
    g.edgeBytes = bytes;
    g.entry = entry;
    g.restored = true;
    g.lists = ls;
    g.size = n; // last: publishes the graph
    return g;
  }

  // ---------------------------------------------------------------- search

  /** Scratch of one search; one per thread at a time. */
  private final class Searcher {
    int[] stamp = new int[0];
    int epoch;
    int[] candIds = new int[0];
    float[] candDist = new float[0];
    boolean[] candExpanded = new boolean[0];
    int candSize;
    int[] resIds = new int[16];
    float[] resDist = new float[16];
    int resSize;
    int[] poolIds = new int[0]; // expanded nodes (construction)
    float[] poolDist = new float[0];
    int poolSize;
    long scored;
    long expanded;
    byte[] query = new byte[0];
    SignCodes.Query signQuery; // of signQueryOf
    SignCodes signQueryOf;
    int[] fresh = new int[0]; // the unvisited neighbours of the node being expanded
    long sink; // keeps the touching loads of PREFETCH

    /**
     * Greedy search of the first {@code n} nodes, every score exact on the int8 codes, or with
     * {@code sq} (then {@code l2} must be set) estimated from the sign codes. {@code l2}: rank by
     * squared L2 (construction), else by the query metric. Collects the {@code k} best accepted
     * nodes in {@code res*} (every scored node is a result candidate), and with {@code pool} every
     * expanded node and its distance in {@code pool*} (the prune candidates of an insert).
     */
    void search(
        byte[] q,
        int qo,
        boolean l2,
        int cap,
        int n,
        IntPredicate accept,
        int k,
        boolean pool,
        SignCodes.Query sq,
        TurboQuant.Query tq) {
      if (stamp.length < n) {
        stamp = new int[Math.max(n, stamp.length * 2)];
        epoch = 0;
      }
      if (++epoch == 0) {
        Arrays.fill(stamp, 0);
        epoch = 1;
      }
      if (candIds.length < cap + 1) {
        candIds = new int[cap + 1];
        candDist = new float[cap + 1];
        candExpanded = new boolean[cap + 1];
      }
      if (resIds.length < k) {
        resIds = new int[k];
        resDist = new float[k];
      }
      candSize = 0;
      resSize = 0;
      poolSize = 0;
      scored = 0;
      expanded = 0;
      boolean metricL2 = l2 || euclid;
      byte[][] cs = codes;
      long[][] ss = signCodes;
      byte[][] ts = turboCodes;
      int stride = sq == null ? 0 : signs.stride();
      int e = Math.min(entry, n - 1);
      stamp[e] = epoch;
      float de =
          sq != null
              ? estimate(sq, ss, stride, e)
              : tq != null ? estimate(tq, ts, e, metricL2) : distance(q, qo, cs, e, metricL2);
      insert(e, de, cap);
      if (k > 0 && (accept == null || accept.test(e))) {
        offer(e, de, k);
      }
      int cur = 0;
      int[][][] ls = lists;
      while (cur < candSize) {
        int u = candIds[cur];
        candExpanded[cur] = true;
        expanded++;
        if (pool) {
          addPool(u, candDist[cur]);
        }
        int[] l = (int[]) LIST.getAcquire(ls[u >>> CHUNK_SHIFT], u & MASK);
        int deg = (int) INT.getAcquire(l, 0);
        int lowest = Integer.MAX_VALUE;
        // first the unvisited neighbours, with a load of each one's code (PREFETCH): independent
        // loads that the core overlaps, so the scoring below finds the codes in cache
        if (fresh.length < deg) {
          fresh = new int[Math.max(deg, 2 * fresh.length)];
        }
        int m = 0;
        long touch = 0;
        for (int j = 1; j <= deg; j++) {
          int v = l[j];
          if (v >= n || stamp[v] == epoch) {
            continue;
          }
          stamp[v] = epoch;
          fresh[m++] = v;
          if (PREFETCH) {
            if (sq != null) {
              long[] c = ss[v >>> CHUNK_SHIFT];
              int o = (v & MASK) * stride;
              touch += c[o] + c[o + stride - 1];
            } else if (tq != null) {
              touch += ts[v >>> CHUNK_SHIFT][(v & MASK) * turboBytes];
            } else {
              touch += cs[v >>> CHUNK_SHIFT][(v & MASK) * dim];
            }
          }
        }
        sink += touch;
        for (int j = 0; j < m; j++) {
          int v = fresh[j];
          float dv =
              sq != null
                  ? estimate(sq, ss, stride, v)
                  : tq != null ? estimate(tq, ts, v, metricL2) : distance(q, qo, cs, v, metricL2);
          int pos = insert(v, dv, cap);
          if (pos >= 0 && pos < lowest) {
            lowest = pos;
          }
          // the filter (deletion bits: another miss) only for nodes that would enter the results
          if (k > 0 && enters(dv, k) && (accept == null || accept.test(v))) {
            offer(v, dv, k);
          }
        }
        cur = Math.min(cur + 1, lowest);
        while (cur < candSize && candExpanded[cur]) {
          cur++;
        }
      }
    }

    private float distance(byte[] q, int qo, byte[][] cs, int v, boolean l2) {
      scored++;
      byte[] c = cs[v >>> CHUNK_SHIFT];
      int o = (v & MASK) * dim;
      return l2 ? VectorOps.squareDistance(q, qo, c, o, dim) : -VectorOps.dot(q, qo, c, o, dim);
    }

    private float estimate(SignCodes.Query sq, long[][] ss, int stride, int v) {
      scored++;
      return sq.estimate(ss[v >>> CHUNK_SHIFT], (v & MASK) * stride);
    }

    private float estimate(TurboQuant.Query tq, byte[][] ts, int v, boolean l2) {
      scored++;
      return tq.estimate(ts[v >>> CHUNK_SHIFT], (v & MASK) * turboBytes, l2);
    }

    private void addPool(int u, float d) {
      if (poolIds.length == poolSize) {
        int c = Math.max(16, poolSize * 2);
        poolIds = Arrays.copyOf(poolIds, c);
        poolDist = Arrays.copyOf(poolDist, c);
      }
      poolIds[poolSize] = u;
      poolDist[poolSize] = d;
      poolSize++;
    }

    private int insert(int id, float dist, int cap) {
      int pos = SortedCandidates.insert(candIds, candDist, candExpanded, candSize, id, dist, cap);
      if (pos >= 0 && candSize < cap) {
        candSize++;
      }
      return pos;
    }

    /** Whether a node at {@code dist} would enter the results (before asking the filter). */
    private boolean enters(float dist, int k) {
      return resSize < k || dist < resDist[k - 1];
    }

    private void offer(int id, float dist, int k) {
      resSize = SortedCandidates.offer(resIds, resDist, resSize, k, id, dist);
    }
  }
}
