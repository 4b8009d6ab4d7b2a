package io.flashvec.index.disk;

import io.flashvec.index.SearchStats;
import io.flashvec.index.internal.SortedCandidates;
import io.flashvec.index.internal.VectorOps;
import io.flashvec.storage.MappedFile;
import io.flashvec.storage.PageReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;

/**
 * FlashVec's own DiskANN beam search over a {@link GraphFile}: the candidate list is ordered by PQ
 * distance (codes in RAM), each step expands the {@code beamWidth} best unexpanded candidates, and
 * every expanded node is scored exactly with the full vector that came in the same page as its
 * neighbour list — the rerank costs no extra reads. Per step:
 *
 * <ol>
 *   <li>the records of the whole beam are prefetched together ({@link MappedFile#prefetch}) when
 *       {@code prefetch} is on, so a cold step waits for one device round trip, not {@code
 *       beamWidth} of them;
 *   <li>the unvisited neighbours of each expanded node are collected and scored as one batch
 *       ({@link PqCodes#distances}), not one at a time through a virtual call per neighbour.
 * </ol>
 *
 * {@link #searchPipelined} is the same search for graphs read from the device: reads issued through
 * a {@link PageReader} stay in flight while arrived records are expanded, and the thread parks
 * between them instead of blocking in page faults.
 *
 * <p>Records of the nodes a {@link HotNodeCache} holds (the first hops from the entry) are read
 * from it instead of the mapping, and neither checked for residency nor prefetched. Without PQ
 * codes (the in-memory {@code hnsw} comparison type) neighbours are scored exactly. Nodes rejected
 * by the {@code accept} predicate (deleted, or filtered out) are traversed but never returned. Not
 * thread-safe: one searcher per thread, reused across queries (its scratch: a visited bit per node
 * while the bits take at most twice the memory of a {@link VisitedSet} sized by what a search
 * visits, else that set).
 */
public final class BeamSearcher {

  private static final ValueLayout.OfInt INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private static final int PAGE = MappedFile.PAGE;

  private final GraphFile g;
  private final PqCodes pq;
  private final boolean euclid;
  private final int dim;
  private final MemorySegment seg;

  /**
   * A hard cap on the graphs that keep a visited bit per node, whatever {@link #bitsFor}'s size
   * rule allows (that rule stops at about 2M nodes at degree 64, 8M at 256, so this cap binds only
   * from a degree of about 512); larger graphs keep a {@link VisitedSet}.
   */
  static final int MAX_BIT_NODES = 1 << 24;

  /** Ordinals a PQ scan scores per batch at least (a neighbour list's worth when larger). */
  static final int SCAN_BLOCK = 256;

  /** A visited bit per node ({@link #bitsFor}), else null. */
  private final long[] bits;

  /** The words of {@link #bits} the current search set, to clear them for the next. */
  private int[] bitWords = new int[0];

  private int bitWordCount;

  /** The visited nodes of larger graphs, else null. */
  private final VisitedSet visitedSet;

  private final float[] table;
  private final float[] centered;
  private final int[] batch;
  private final float[] batchDist;
  private final int[] beam;
  private final int[] beamSlot; // each beam node's slot in the hot node cache, or -1
  private final boolean gather;
  private final int[] gatherIdx;
  private int touched; // sink of PqCodes.touch and of page touches, so their loads stay
  private final MemorySegment pages; // mincore scratch

  private int[] candIds = new int[0];
  private float[] candDist = new float[0];
  private boolean[] candExpanded = new boolean[0];
  private int candSize;

  private int[] resIds;
  private float[] resDist;
  private int resSize;
  private int k;

  private long visitedCount;
  private long expandedCount;

  // The pipelined search's reads: up to 64 slots, each one read's buffer in ioBuf.
  private static final VarHandle DONE;

  static {
    try {
      DONE = MethodHandles.lookup().findVarHandle(BeamSearcher.class, "done", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Bytes one read brings: the page of a small record, or all pages of a large one. */
  private final int unitBytes;

  private MemorySegment ioBuf = MemorySegment.NULL;
  private final int[] slotOrd = new int[64];
  private final long[] slotPage = new long[64];
  private final IOException[] slotError = new IOException[64];

  /** Slots whose read completed and that the search has not taken yet; set by I/O threads. */
  @SuppressWarnings("unused") // through DONE
  private volatile long done;

  /** The thread of the running pipelined search, unparked by completions. */
  private volatile Thread waiter;

  private final PageReader.Completion onRead = this::completed;

  /** Expansions of records that shared a page with the one a read was issued for. */
  private long samePageCount;

  /** Tests: treat every record outside the hot node cache as not resident, so each is read. */
  private boolean readAll;

  /** What the last search found: ordinals and exact distances, best first. */
  public int resultCount() {
    return resSize;
  }

  public int resultOrdinal(int i) {
    return resIds[i];
  }

  /** Exact distance, lower is better: squared L2, or the negated dot product. */
  public float resultDistance(int i) {
    return resDist[i];
  }

  public BeamSearcher(GraphFile g, PqCodes pq, boolean euclid) {
    this(g, pq, euclid, MAX_BIT_NODES);
  }

  /** As above; graphs of more than {@code maxBitNodes} nodes use a {@link VisitedSet}. */
  BeamSearcher(GraphFile g, PqCodes pq, boolean euclid, int maxBitNodes) {
    this.g = g;
    this.pq = pq;
    this.euclid = euclid;
    this.dim = g.dimension();
    this.seg = g.segment();
    // a search at the default list of 100 visits at most about 100 × maxDegree nodes
    int visits = 100 * g.maxDegree();
    boolean bitted = bitsFor(g.count(), visits, maxBitNodes);
    this.bits = bitted ? new long[(g.count() + 63) >>> 6] : null;
    this.visitedSet = bitted ? null : new VisitedSet(visits);
    this.table = pq == null ? null : pq.newTable();
    this.centered = new float[pq == null ? dim : pq.codebook().scratchLength()];
    // a neighbour list, or a block of a PQ scan (raw files have no neighbours)
    this.batch = new int[Math.max(g.maxDegree(), SCAN_BLOCK)];
    this.batchDist = new float[batch.length];
    this.beam = new int[64];
    this.beamSlot = new int[64];
    // SIMD gathers win once a point has at least one vector of codes (JMH PqScoringBenchmark)
    this.gather = pq != null && pq.subspaces() >= pq.gatherScratchLength();
    this.gatherIdx = new int[pq == null ? 0 : pq.gatherScratchLength()];
    this.pages = Arena.ofAuto().allocate(64);
    int rb = g.recordBytes();
    this.unitBytes = rb <= PAGE ? PAGE : (rb + PAGE - 1) / PAGE * PAGE;
    this.resIds = new int[16];
    this.resDist = new float[16];
  }

  /**
   * Whether a searcher of a graph of {@code nodes} keeps a bit per node rather than a set of the
   * about {@code visits} nodes a search visits: while the bits take at most twice the set's memory
   * (2M nodes at degree 64). A segment pools a searcher for each concurrent search, so what a
   * searcher holds for its graph is multiplied by the cores: a stamp per node (an int) made 32
   * concurrent searches of a 1M-point segment hold 128 MiB beside its 16–32 MB of codes; bits hold
   * 4 MiB, and the set's table does not grow with the graph. Per search (one thread, warm, 96-d):
   * the bits as fast as the stamps were, the set 5–11% slower (ADR 0024's amendment).
   */
  static boolean bitsFor(int nodes, int visits, int maxBitNodes) {
    return nodes <= maxBitNodes && ((nodes + 63L) >>> 6) * 8 <= 2 * VisitedSet.bytesFor(visits);
  }

  private void startResults(int k) {
    if (resIds.length < k) {
      resIds = new int[k];
      resDist = new float[k];
    }
    this.k = k;
    resSize = 0;
  }

  private void ensureCandidates(int cap) {
    if (candIds.length < cap + 1) {
      candIds = new int[cap + 1];
      candDist = new float[cap + 1];
      candExpanded = new boolean[cap + 1];
    }
  }

  private float exact(float[] q, long off) {
    return exact(q, seg, off);
  }

  private float exact(float[] q, MemorySegment src, long off) {
    return euclid ? VectorOps.squareDistance(q, src, off, dim) : -VectorOps.dot(q, src, off, dim);
  }

  /**
   * Searches for the {@code k} nearest accepted nodes.
   *
   * @param q the prepared query (normalised for cosine)
   * @param searchList candidate list size L
   * @param beamWidth nodes expanded per step (1..64)
   * @param prefetch issue each step's reads together with {@code madvise(WILLNEED)}
   * @param accept which ordinals may be returned, or null for all
   */
  public void search(
      float[] q,
      int k,
      int searchList,
      int beamWidth,
      boolean prefetch,
      IntPredicate accept,
      SearchStats stats) {
    search(q, k, searchList, beamWidth, prefetch, accept, null, stats);
  }

  /**
   * As above, reading the records {@code cache} holds from it instead of the graph file (no
   * residency check, no prefetch, no page touched); {@code null}: every record from the file. The
   * records read from the cache are counted in {@link SearchStats#nodeCacheHits}.
   */
  public void search(
      float[] q,
      int k,
      int searchList,
      int beamWidth,
      boolean prefetch,
      IntPredicate accept,
      HotNodeCache cache,
      SearchStats stats) {
    int cap = start(q, k, searchList, stats);
    if (cap < 0) {
      return;
    }
    int w = Math.clamp(beamWidth, 1, beam.length);
    int cur = 0; // first unexpanded candidate
    boolean mapped = prefetch && g.file().mapped();
    visitedCount = 1;
    expandedCount = 0;
    long pagesRead = 0;
    long cacheHits = 0;
    while (cur < candSize) {
      // pick the beam: the best unexpanded candidates
      int nb = 0;
      for (int i = cur; i < candSize && nb < w; i++) {
        if (!candExpanded[i]) {
          candExpanded[i] = true;
          beam[nb++] = candIds[i];
        }
      }
      if (nb == 0) {
        break;
      }
      if (cache != null) {
        for (int i = 0; i < nb; i++) {
          int slot = cache.slot(beam[i]);
          beamSlot[i] = slot;
          if (slot >= 0) {
            cacheHits++;
          }
        }
      }
      if (mapped) {
        int rb = g.recordBytes();
        for (int i = 0; i < nb; i++) {
          if (cache != null && beamSlot[i] >= 0) {
            continue;
          }
          long off = g.recordOffset(beam[i]);
          int resident = g.file().residentPages(off, rb, pages);
          if (resident >= 0) {
            pagesRead += MappedFile.pagesSpanned(off, rb) - resident;
          }
          g.file().prefetch(off, rb);
        }
      }
      int lowest = Integer.MAX_VALUE; // lowest list position touched this step
      for (int i = 0; i < nb; i++) {
        int u = beam[i];
        int at;
        if (cache != null && beamSlot[i] >= 0) {
          at = expand(q, u, cache.records(), cache.offset(beamSlot[i]), cap, accept);
        } else {
          at = expand(q, u, seg, g.recordOffset(u), cap, accept);
        }
        lowest = Math.min(lowest, at);
      }
      // advance to the first unexpanded candidate (inserts may have put one before cur)
      cur = Math.min(cur, lowest);
      while (cur < candSize && candExpanded[cur]) {
        cur++;
      }
    }
    finish(stats, pagesRead, cacheHits);
  }

  private void finish(SearchStats stats, long pagesRead, long cacheHits) {
    stats.visited += visitedCount - 1;
    stats.expanded += expandedCount;
    stats.reranked += expandedCount;
    stats.distanceComputations += visitedCount + expandedCount;
    stats.pagesRead += pagesRead;
    stats.nodeCacheHits += cacheHits;
  }

  /**
   * Expands node {@code u} from its record at {@code off} in {@code src}: offers it as a result
   * with its exact distance, moves it to that distance in the list, and scores and inserts its
   * unvisited neighbours. Returns the lowest list position that changed ({@link Integer#MAX_VALUE}
   * when none did).
   */
  private int expand(float[] q, int u, MemorySegment src, long off, int cap, IntPredicate accept) {
    int lowest = Integer.MAX_VALUE;
    int n = g.count();
    expandedCount++;
    float exactDist = exact(q, src, off);
    if (accept == null || accept.test(u)) {
      offerResult(u, exactDist);
    }
    if (pq != null) {
      int at = reposition(u, exactDist);
      if (at >= 0) {
        lowest = at;
      }
    }
    long at = off + 4L * dim;
    int deg = Math.min(src.get(INT, at), g.maxDegree());
    int fresh = 0;
    for (int j = 0; j < deg; j++) {
      int v = src.get(INT, at + 4 + 4L * j);
      if (v >= 0 && v < n && firstVisit(v)) {
        batch[fresh++] = v;
      }
    }
    visitedCount += fresh;
    scoreBatch(q, fresh);
    for (int j = 0; j < fresh; j++) {
      int pos = insert(batch[j], batchDist[j], cap);
      if (pos >= 0 && pos < lowest) {
        lowest = pos;
      }
    }
    return lowest;
  }

  /**
   * The pipelined search (PipeANN): up to {@code beamWidth} reads stay in flight, and whichever
   * completes first is expanded at once, its neighbours scored and inserted, and the in-flight
   * reads topped up from the best unexpanded candidates; compute on arrived records overlaps the
   * reads of others. The best unexpanded candidate is expanded without a read when its record is in
   * {@code cache} or its pages are resident ({@code mincore}); otherwise its page is read by {@code
   * reader} into this searcher's buffer, and when it arrives every other unexpanded candidate on
   * the same page is expanded from it too. While reads are outstanding the thread parks ({@link
   * LockSupport}), so a virtual thread frees its carrier for other searches. Ends when no candidate
   * in the list is unexpanded and nothing is in flight.
   *
   * <p>{@link SearchStats#pagesRead} counts the pages of the reads issued that were not resident
   * when issued: every page this search brings from the device. A failed read fails the search with
   * an {@link UncheckedIOException} once the reads still in flight have completed.
   *
   * @param beamWidth reads in flight (1..64)
   */
  public void searchPipelined(
      float[] q,
      int k,
      int searchList,
      int beamWidth,
      IntPredicate accept,
      HotNodeCache cache,
      PageReader reader,
      SearchStats stats) {
    int cap = start(q, k, searchList, stats);
    if (cap < 0) {
      return;
    }
    int w = Math.clamp(beamWidth, 1, slotOrd.length);
    if (ioBuf.byteSize() < (long) w * unitBytes) {
      ioBuf = Arena.ofAuto().allocate((long) w * unitBytes, PAGE);
    }
    visitedCount = 1;
    expandedCount = 0;
    samePageCount = 0;
    long pagesRead = 0;
    long cacheHits = 0;
    int rb = g.recordBytes();
    MappedFile file = g.file();
    long free = w == 64 ? -1L : (1L << w) - 1; // slots without a read
    int inFlight = 0;
    IOException failure = null;
    waiter = Thread.currentThread();
    DONE.setVolatile(this, 0L);
    int cur = 0; // no unexpanded candidate before this position
    try {
      while (true) {
        // expand what needs no read, issue reads for the rest while slots are free
        while (failure == null) {
          while (cur < candSize && candExpanded[cur]) {
            cur++;
          }
          if (cur == candSize) {
            break;
          }
          int u = candIds[cur];
          int slot = cache == null ? -1 : cache.slot(u);
          if (slot >= 0) {
            cacheHits++;
            candExpanded[cur] = true;
            cur = Math.min(cur, expand(q, u, cache.records(), cache.offset(slot), cap, accept));
            continue;
          }
          long off = g.recordOffset(u);
          int spanned = MappedFile.pagesSpanned(off, rb);
          int resident = readAll ? 0 : file.residentPages(off, rb, pages);
          if (resident == spanned) {
            candExpanded[cur] = true;
            cur = Math.min(cur, expand(q, u, seg, off, cap, accept));
            continue;
          }
          if (free == 0) {
            break;
          }
          int s = Long.numberOfTrailingZeros(free);
          free &= ~(1L << s);
          candExpanded[cur] = true;
          long page = off & -PAGE;
          slotOrd[s] = u;
          slotPage[s] = page;
          slotError[s] = null;
          pagesRead += resident < 0 ? spanned : spanned - resident;
          reader.read(page, ioBuf.asSlice((long) s * unitBytes, unitBytes), s, onRead);
          inFlight++; // a read that threw was never submitted: nothing to wait for
        }
        if (inFlight == 0) {
          break;
        }
        long arrived = awaitCompletions();
        while (arrived != 0) {
          int s = Long.numberOfTrailingZeros(arrived);
          arrived &= arrived - 1;
          free |= 1L << s;
          inFlight--;
          if (slotError[s] != null) {
            if (failure == null) {
              failure = slotError[s];
            }
            continue;
          }
          if (failure == null) {
            cur = Math.min(cur, expandArrived(q, s, cap, accept));
          }
        }
      }
    } finally {
      while (inFlight > 0) {
        inFlight -= Long.bitCount(awaitCompletions());
      }
      waiter = null;
    }
    if (failure != null) {
      throw new UncheckedIOException(
          "graph read failed [path=" + file.path() + "]: " + failure.getMessage(), failure);
    }
    finish(stats, pagesRead, cacheHits);
  }

  /** Expands the node of read slot {@code s}, then every other unexpanded candidate on its page. */
  private int expandArrived(float[] q, int s, int cap, IntPredicate accept) {
    int u = slotOrd[s];
    long base = (long) s * unitBytes;
    long page = slotPage[s];
    // Map the page that just arrived in the page cache (a minor fault): the kernel's reclaim drops
    // a page read only by pread at its first scan but gives a mapped, referenced one a second
    // round, so without this the pages of hot nodes would be evicted sooner than when faulted in.
    for (long p = page; p < page + unitBytes; p += PAGE) {
      touched += seg.get(ValueLayout.JAVA_BYTE, p);
    }
    int lowest = expand(q, u, ioBuf, base + g.recordOffset(u) - page, cap, accept);
    if (unitBytes == PAGE) {
      // small records share the page: expand the candidates on it that wait for a read
      for (int i = 0; i < candSize; i++) {
        if (candExpanded[i]) {
          continue;
        }
        int v = candIds[i];
        long off = g.recordOffset(v);
        if ((off & -PAGE) == page) {
          candExpanded[i] = true;
          samePageCount++;
          lowest = Math.min(lowest, expand(q, v, ioBuf, base + off - page, cap, accept));
          i = -1; // the list moved: look again from the start
        }
      }
    }
    return lowest;
  }

  private long awaitCompletions() {
    long m;
    while ((m = (long) DONE.getAndSet(this, 0L)) == 0) {
      LockSupport.park(this);
    }
    return m;
  }

  /** Runs on an I/O thread when slot {@code tag}'s read is done. */
  private void completed(int tag, IOException error) {
    slotError[tag] = error; // published by the volatile update below
    DONE.getAndBitwiseOr(this, 1L << tag);
    LockSupport.unpark(waiter);
  }

  /** Tests: with {@code true} the pipelined search reads every record it expands. */
  void readAll(boolean on) {
    readAll = on;
  }

  /** Expansions of the last pipelined search that came free with another record's page. */
  public long samePageExpansions() {
    return samePageCount;
  }

  /**
   * Starts a graph search: clears the results, the candidate list and the visited nodes, fills the
   * PQ table for {@code q} and seeds the list with the entry. Returns the list's capacity, or -1
   * when there is nothing to search.
   */
  private int start(float[] q, int k, int searchList, SearchStats stats) {
    startResults(k);
    int n = g.count();
    if (n == 0 || k == 0) {
      return -1;
    }
    int cap = Math.max(searchList, k);
    ensureCandidates(cap);
    if (bits == null) {
      visitedSet.clear();
    } else {
      clearBits();
    }
    if (pq != null) {
      pq.fillTable(q, euclid, table, centered);
    }
    candSize = 0;
    int entry = g.entry();
    firstVisit(entry);
    batch[0] = entry;
    scoreBatch(q, 1);
    insert(entry, batchDist[0], cap);
    stats.visited++;
    return cap;
  }

  /** Clears the words of {@link #bits} the last search set (all of them when it set many). */
  private void clearBits() {
    if (bitWordCount > bits.length >>> 3) {
      Arrays.fill(bits, 0L);
    } else {
      for (int i = 0; i < bitWordCount; i++) {
        bits[bitWords[i]] = 0L;
      }
    }
    bitWordCount = 0;
  }

  /** Marks {@code v} visited; returns whether it was not yet. */
  private boolean firstVisit(int v) {
    if (bits == null) {
      return visitedSet.add(v);
    }
    int w = v >>> 6;
    long word = bits[w];
    long bit = 1L << v;
    if ((word & bit) != 0) {
      return false;
    }
    if (word == 0) {
      if (bitWordCount == bitWords.length) {
        bitWords =
            Arrays.copyOf(bitWords, Math.min(bits.length, Math.max(64, 2 * bitWords.length)));
      }
      bitWords[bitWordCount++] = w;
    }
    bits[w] = word | bit;
    return true;
  }

  /**
   * Bytes of this searcher's visited nodes (bits or the set) and of its read buffers, for memory
   * accounting.
   */
  public long visitedBytes() {
    return (bits == null ? visitedSet.memoryBytes() : 8L * bits.length + 4L * bitWords.length)
        + ioBuf.byteSize();
  }

  private void scoreBatch(float[] q, int count) {
    if (count == 0) {
      return;
    }
    if (pq != null) {
      touched += pq.touch(batch, count);
      if (gather) {
        pq.distancesGather(table, batch, count, batchDist, gatherIdx);
      } else {
        pq.distances(table, batch, count, batchDist);
      }
    } else {
      for (int j = 0; j < count; j++) {
        batchDist[j] = exact(q, g.recordOffset(batch[j]));
      }
    }
  }

  /**
   * Moves expanded candidate {@code id} to the place of its exact distance: the list then ranks
   * what was read from disk by the truth rather than by its code. Returns the lowest position whose
   * entry changed, or -1 if {@code id} is no longer in the list.
   */
  private int reposition(int id, float dist) {
    int i = 0;
    while (i < candSize && candIds[i] != id) {
      i++;
    }
    if (i == candSize) {
      return -1;
    }
    int tail = candSize - i - 1;
    if (tail > 0) {
      System.arraycopy(candIds, i + 1, candIds, i, tail);
      System.arraycopy(candDist, i + 1, candDist, i, tail);
      System.arraycopy(candExpanded, i + 1, candExpanded, i, tail);
    }
    candSize--;
    int pos =
        SortedCandidates.insert(
            candIds, candDist, candExpanded, candSize, id, dist, candIds.length - 1);
    candSize++;
    candExpanded[pos] = true;
    return Math.min(i, pos);
  }

  /** Inserts into the sorted candidate list; returns its position or -1 if it did not fit. */
  private int insert(int id, float dist, int cap) {
    int pos = SortedCandidates.insert(candIds, candDist, candExpanded, candSize, id, dist, cap);
    if (pos >= 0 && candSize < cap) {
      candSize++;
    }
    return pos;
  }

  private void offerResult(int id, float dist) {
    resSize = SortedCandidates.offer(resIds, resDist, resSize, k, id, dist);
  }

  /**
   * Scores the ordinals produced by {@code next} that {@code live} accepts with their PQ codes (in
   * memory, batched like a neighbour list), keeps the best {@code rerank} by PQ distance, and
   * rescores those exactly from their records: the filtered plan for too many matches to score
   * exactly and too few for a graph search (see {@code FilterPlanner}).
   */
  public void pqScan(
      float[] q,
      int k,
      int rerank,
      java.util.function.IntUnaryOperator next,
      IntPredicate live,
      SearchStats stats) {
    startResults(k);
    if (k == 0) {
      return;
    }
    int r = Math.max(k, rerank);
    ensureCandidates(r);
    pq.fillTable(q, euclid, table, centered);
    int n = g.count();
    int heap = 0; // max-heap on candDist of the best r so far
    long scored = 0;
    int ord = next.applyAsInt(0);
    while (ord >= 0 && ord < n) {
      int cnt = 0;
      while (ord >= 0 && ord < n && cnt < batch.length) {
        if (live == null || live.test(ord)) {
          batch[cnt++] = ord;
        }
        ord = next.applyAsInt(ord + 1);
      }
      if (cnt == 0) {
        break;
      }
      if (gather) {
        pq.distancesGather(table, batch, cnt, batchDist, gatherIdx);
      } else {
        pq.distances(table, batch, cnt, batchDist);
      }
      scored += cnt;
      for (int i = 0; i < cnt; i++) {
        float d = batchDist[i];
        if (heap < r) {
          int j = heap++;
          while (j > 0 && candDist[(j - 1) >>> 1] < d) {
            candDist[j] = candDist[(j - 1) >>> 1];
            candIds[j] = candIds[(j - 1) >>> 1];
            j = (j - 1) >>> 1;
          }
          candDist[j] = d;
          candIds[j] = batch[i];
        } else if (d < candDist[0]) {
          int j = 0;
          while (true) {
            int c = 2 * j + 1;
            if (c >= heap) {
              break;
            }
            if (c + 1 < heap && candDist[c + 1] > candDist[c]) {
              c++;
            }
            if (candDist[c] <= d) {
              break;
            }
            candDist[j] = candDist[c];
            candIds[j] = candIds[c];
            j = c;
          }
          candDist[j] = d;
          candIds[j] = batch[i];
        }
      }
    }
    // Rescore in ordinal order, so the records are read front to back.
    Arrays.sort(candIds, 0, heap);
    for (int i = 0; i < heap; i++) {
      offerResult(candIds[i], exact(q, g.recordOffset(candIds[i])));
    }
    stats.visited += scored;
    stats.reranked += heap;
    stats.distanceComputations += scored + heap;
  }

  /**
   * Scans the ordinals produced by {@code next} ({@code next(from)}: the first candidate at or
   * after {@code from}, or -1) that {@code live} accepts, exactly.
   */
  public void scan(
      float[] q,
      int k,
      java.util.function.IntUnaryOperator next,
      IntPredicate live,
      SearchStats stats) {
    startResults(k);
    if (k == 0) {
      return;
    }
    int n = g.count();
    for (int ord = next.applyAsInt(0); ord >= 0 && ord < n; ord = next.applyAsInt(ord + 1)) {
      if (live == null || live.test(ord)) {
        offerResult(ord, exact(q, g.recordOffset(ord)));
        stats.distanceComputations++;
      }
    }
  }

  /** Scans every accepted node exactly (the {@code exact} search parameter). */
  public void scan(float[] q, int k, IntPredicate accept, SearchStats stats) {
    startResults(k);
    if (k == 0) {
      return;
    }
    int n = g.count();
    for (int ord = 0; ord < n; ord++) {
      if (accept == null || accept.test(ord)) {
        offerResult(ord, exact(q, g.recordOffset(ord)));
        stats.distanceComputations++;
      }
    }
  }
}
