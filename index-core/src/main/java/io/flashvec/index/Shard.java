package io.flashvec.index;

import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.internal.WalCodec;
import io.flashvec.index.jvector.DiskAnnSegment;
import io.flashvec.index.jvector.SegmentBuilder;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.LiveGraph;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.DiskFullException;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard of a collection: a WAL, a growing segment that takes writes, and an immutable list of
 * sealed segments that is swapped atomically.
 *
 * <h2>Writes</h2>
 *
 * Writers serialise on one lock, held only to append the WAL record (to the OS, not fsynced) and
 * apply it in memory; {@link #awaitDurable} then waits for the fsync outside the lock, so
 * concurrent writers share fsyncs (group commit). An upsert of an existing id appends the new
 * version first, repoints the id, then marks the old ordinal deleted, so a reader sees the old or
 * the new version, never neither.
 *
 * <h2>Reads</h2>
 *
 * Readers never lock: they take the current {@link Snapshot} (a volatile read) and search its
 * segments; segments publish appends with a volatile size and deletions with atomic bits.
 *
 * <h2>Sealing</h2>
 *
 * When the growing segment reaches {@link Options#sealThresholdPoints()} (or on {@link #flush}), it
 * is frozen and moved to the sealed list and a new growing segment starts. Sealed segments are
 * still memory-resident here; the on-disk index build and the WAL checkpoint that lets the WAL be
 * truncated plug in at {@link #sealGrowing()}. Until then the WAL keeps every record and recovery
 * replays it whole.
 */
public final class Shard implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(Shard.class);

  /** Tuning of a shard. */
  public record Options(
      int sealThresholdPoints,
      Wal.Options wal,
      FileIO io,
      Executor buildExecutor,
      int defaultSearchList,
      Compaction compaction,
      SegmentBuilder segmentBuilder,
      LiveIndexer liveIndexer,
      DiskSpace space) {
    public Options {
      if (sealThresholdPoints < 1) {
        throw new IllegalArgumentException(
            "seal threshold must be positive [sealThresholdPoints=" + sealThresholdPoints + "]");
      }
      Objects.requireNonNull(wal, "wal");
      Objects.requireNonNull(io, "io");
      if (defaultSearchList < 1) {
        defaultSearchList = 100;
      }
      if (compaction == null) {
        compaction = Compaction.DISABLED;
      }
      if (segmentBuilder == null) {
        segmentBuilder = SegmentBuilder.LOCAL;
      }
      if (space == null) {
        space = new DiskSpace(io, 0);
      }
    }

    /** Options without a free-space reserve (writes stop only at a full disk). */
    public Options(
        int sealThresholdPoints,
        Wal.Options wal,
        FileIO io,
        Executor buildExecutor,
        int defaultSearchList,
        Compaction compaction,
        SegmentBuilder segmentBuilder,
        LiveIndexer liveIndexer) {
      this(
          sealThresholdPoints,
          wal,
          io,
          buildExecutor,
          defaultSearchList,
          compaction,
          segmentBuilder,
          liveIndexer,
          null);
    }

    /** Options without live graphs (growing segments are searched exactly). */
    public Options(
        int sealThresholdPoints,
        Wal.Options wal,
        FileIO io,
        Executor buildExecutor,
        int defaultSearchList,
        Compaction compaction,
        SegmentBuilder segmentBuilder) {
      this(
          sealThresholdPoints,
          wal,
          io,
          buildExecutor,
          defaultSearchList,
          compaction,
          segmentBuilder,
          null);
    }

    /** Options that build segments in this process. */
    public Options(
        int sealThresholdPoints,
        Wal.Options wal,
        FileIO io,
        Executor buildExecutor,
        int defaultSearchList,
        Compaction compaction) {
      this(
          sealThresholdPoints,
          wal,
          io,
          buildExecutor,
          defaultSearchList,
          compaction,
          SegmentBuilder.LOCAL);
    }

    /** Options without background compaction. */
    public Options(
        int sealThresholdPoints,
        Wal.Options wal,
        FileIO io,
        Executor buildExecutor,
        int defaultSearchList) {
      this(sealThresholdPoints, wal, io, buildExecutor, defaultSearchList, Compaction.DISABLED);
    }

    /** Options without background index builds: sealed segments stay in memory. */
    public Options(int sealThresholdPoints, Wal.Options wal, FileIO io) {
      this(sealThresholdPoints, wal, io, null, 100);
    }

    public static Options defaults() {
      return new Options(100_000, Wal.Options.defaults(), FileIO.DEFAULT);
    }

    /**
     * The same options with {@code space}'s free-space policy: writes are refused (HTTP 507) and
     * index builds and compactions postponed while they would leave less than its reserve free.
     */
    public Options withDiskSpace(DiskSpace s) {
      return new Options(
          sealThresholdPoints,
          wal,
          io,
          buildExecutor,
          defaultSearchList,
          compaction,
          segmentBuilder,
          liveIndexer,
          s);
    }

    /** The same options with index builds on {@code executor}. */
    public Options withBuildExecutor(Executor executor) {
      return new Options(
          sealThresholdPoints,
          wal,
          io,
          executor,
          defaultSearchList,
          compaction,
          segmentBuilder,
          liveIndexer,
          space);
    }

    /** The same options with background compaction as given. */
    public Options withCompaction(Compaction c) {
      return new Options(
          sealThresholdPoints,
          wal,
          io,
          buildExecutor,
          defaultSearchList,
          c,
          segmentBuilder,
          liveIndexer,
          space);
    }

    /** The same options with another WAL fsync policy (a collection's bulk-load override). */
    public Options withFsyncPolicy(io.flashvec.storage.FsyncPolicy policy) {
      return new Options(
          sealThresholdPoints,
          wal.withPolicy(policy),
          io,
          buildExecutor,
          defaultSearchList,
          compaction,
          segmentBuilder,
          liveIndexer,
          space);
    }

    /** The same options with segment builds done by {@code builder} (cluster: an index node). */
    public Options withSegmentBuilder(SegmentBuilder builder) {
      return new Options(
          sealThresholdPoints,
          wal,
          io,
          buildExecutor,
          defaultSearchList,
          compaction,
          builder,
          liveIndexer,
          space);
    }

    /**
     * The same options with live graphs for growing segments of {@code diskann} and {@code hnsw}
     * collections, built on {@code executor} (one thread serves every shard: its tasks insert a few
     * hundred points each and requeue), and sealed without a rebuild (ADR 0011). {@code null}: no
     * live graphs.
     */
    public Options withLiveIndexer(Executor executor) {
      return withLiveIndexer(LiveIndexer.of(executor));
    }

    /** As {@link #withLiveIndexer(Executor)}, with a background and an urgent lane. */
    public Options withLiveIndexer(LiveIndexer indexer) {
      return new Options(
          sealThresholdPoints,
          wal,
          io,
          buildExecutor,
          defaultSearchList,
          compaction,
          segmentBuilder,
          indexer,
          space);
    }
  }

  /**
   * How sealed disk segments are compacted (see {@link ShardCompactor}).
   *
   * @param executor runs compaction jobs ({@code null}: only {@link #compact} on the caller
   *     thread); the server gives one low-priority thread shared by all shards
   * @param pool jvector's build pool for compaction builds ({@code null}: jvector's default pools);
   *     a one-thread pool bounds a compaction's CPU share to one core
   * @param deletedFraction a segment whose deleted share reaches this is rewritten without its
   *     deleted points
   * @param maxSmallSegments more sealed segments than this that are smaller than the seal threshold
   *     are merged (two or more whose live points together fit the threshold always are)
   * @param automatic whether thresholds start compactions by themselves (else only {@link
   *     #compact})
   */
  public record Compaction(
      Executor executor,
      java.util.concurrent.ForkJoinPool pool,
      double deletedFraction,
      int maxSmallSegments,
      boolean automatic) {
    public static final Compaction DISABLED = new Compaction(null, null, 0.2, 4, false);

    public Compaction {
      if (!(deletedFraction > 0 && deletedFraction <= 1)) {
        throw new IllegalArgumentException(
            "deleted fraction must be in (0, 1] [deletedFraction=" + deletedFraction + "]");
      }
      if (maxSmallSegments < 1) {
        throw new IllegalArgumentException(
            "maxSmallSegments must be positive [maxSmallSegments=" + maxSmallSegments + "]");
      }
    }
  }

  /** A frozen segment waiting for its index build, and the WAL position it covers. */
  private record Pending(GrowingSegment segment, long sealSeq) {}

  /**
   * An immutable view of the shard's segments; the growing segment is last. {@code retired} holds
   * segments just replaced (by their index or by a compaction), still readable through point
   * locations that a reader fetched before the replacement; they are not searched or counted.
   *
   * <p>Reference counted: the shard holds one reference while the snapshot is current, and a reader
   * that touches mapped segment data (search, get) holds one from {@link Shard#acquire} to {@link
   * #release}. When the count reaches zero the snapshot gives up its references on its disk
   * segments; a segment is closed (and, once a compaction replaced it, its files deleted) when no
   * snapshot and no manifest refers to it, so no search ever runs on an unmapped segment.
   */
  public static final class Snapshot {
    private final List<Segment> segments;
    private final List<Segment> retired;
    private final Shard owner;
    private final java.util.concurrent.atomic.AtomicInteger refs =
        new java.util.concurrent.atomic.AtomicInteger(1);

    private Snapshot(Shard owner, List<Segment> segments, List<Segment> retired) {
      this.owner = owner;
      this.segments = segments;
      this.retired = retired;
    }

    public List<Segment> segments() {
      return segments;
    }

    public List<Segment> retired() {
      return retired;
    }

    boolean tryAcquire() {
      return incrementIfPositive(refs);
    }

    /** Gives back a reference taken by {@link Shard#acquire}. */
    public void release() {
      int r = refs.decrementAndGet();
      assert r >= 0 : "snapshot released too often";
      if (r == 0) {
        for (Segment s : segments) {
          owner.unref(s);
        }
        for (Segment s : retired) {
          owner.unref(s);
        }
      }
    }

    Segment byId(int id) {
      for (Segment s : segments) {
        if (s.id() == id) {
          return s;
        }
      }
      for (Segment s : retired) {
        if (s.id() == id) {
          return s;
        }
      }
      return null;
    }
  }

  /**
   * Lifetime of one open disk segment: one reference while the shard's manifest (or its next
   * checkpoint) lists it, one per snapshot that holds it. At zero the segment is closed, and its
   * directory deleted if a committed compaction replaced it.
   */
  private static final class Lifetime {
    final DiskAnnSegment segment;
    final java.util.concurrent.atomic.AtomicInteger refs =
        new java.util.concurrent.atomic.AtomicInteger(1);
    volatile boolean dropFiles;
    boolean member = true; // the manifest reference is held; guarded by the shard's writeLock

    Lifetime(DiskAnnSegment segment) {
      this.segment = segment;
    }
  }

  private final Path dir;
  private final int shardId;
  private final int dim;
  private final Distance distance;
  private final Options options;
  private final ReentrantLock writeLock = new ReentrantLock();
  private final io.flashvec.index.payload.PayloadIndexes payloadIndexes;

  /** id -> (segment id << 32 | ordinal) of the id's live version. */
  private final io.flashvec.index.internal.IdLocations locations =
      new io.flashvec.index.internal.IdLocations();

  private static final long NO_LOCATION = io.flashvec.index.internal.IdLocations.NONE;

  private volatile Snapshot snapshot;
  private final ConcurrentHashMap<Segment, Lifetime> lifetimes = new ConcurrentHashMap<>();
  private final ShardCompactor compactor;
  private volatile boolean deferBuilds;
  private volatile long lastWriteNanos = System.nanoTime() - WRITES_QUIET_NANOS;
  private volatile long lastSearchNanos = System.nanoTime() - SEARCHES_QUIET_NANOS - 1;
  // Write rate (points/s over windows of >= 250 ms; writer thread) and the live indexer's CPU
  // cost per insert (ns, moving average; indexer thread), compared by outrunByWrites.
  private long rateWindowStart = System.nanoTime();
  private long rateWindowPoints;
  private volatile double writeRate;
  private volatile double insertNanos;
  private final Object jobs = new Object();
  private int runningJobs; // background builds and compactions touching files; guarded by jobs
  private GrowingSegment growing; // guarded by writeLock
  private int nextSegmentId; // guarded by writeLock
  private long checkpointSeq; // guarded by writeLock
  private final ArrayDeque<Pending> pending = new ArrayDeque<>(); // guarded by writeLock
  private final IndexParams index;
  private final Path segmentsDir;
  private final Wal wal;
  private boolean recovering = true; // guarded by writeLock
  private volatile String checkpointFailure;
  private volatile boolean closed;
  // background work cancelled (the server is stopping), see stopBackgroundWork
  private volatile boolean stopping;
  private volatile int buildingSegment = -1; // the frozen segment the running build indexes
  private final java.util.concurrent.atomic.AtomicLong spaceRetryMillis =
      new java.util.concurrent.atomic.AtomicLong();
  private volatile String buildFailure;

  private Shard(
      Path dir, int shardId, int dim, Distance distance, IndexParams index, Options options)
      throws IOException {
    this.dir = dir;
    this.shardId = shardId;
    this.dim = dim;
    this.distance = distance;
    this.index = index;
    this.options = options;
    this.segmentsDir = dir.resolve("segments");
    this.compactor = new ShardCompactor(this, options.compaction());
    this.payloadIndexes =
        new io.flashvec.index.payload.PayloadIndexes(
            options.io(), io.flashvec.index.payload.PayloadSchema.EMPTY);
    List<Segment> sealed = openSegments();
    this.growing = newGrowing(nextSegmentId++);
    List<Segment> segs = new ArrayList<>(sealed);
    segs.add(growing);
    publish(segs, List.of());
    this.wal =
        Wal.open(dir.resolve("wal"), options.io(), options.wal(), checkpointSeq + 1, this::replay);
    writeLock.lock();
    try {
      recovering = false;
      for (Pending p : pending) {
        scheduleIndexing(p.segment());
        submitBuild(p);
      }
      scheduleIndexing(growing);
    } finally {
      writeLock.unlock();
    }
    // a compaction a crash or a stop interrupted, or one the last deletes before it called for,
    // resumes now rather than at the next write
    compactor.maybeSchedule();
  }

  /** Whether growing segments build a live graph (ADR 0011). */
  private boolean liveGraphs() {
    return options.liveIndexer() != null
        && options.buildExecutor() != null
        && !index.type().equals(IndexParams.FLAT);
  }

  private GrowingSegment newGrowing(int id) {
    LiveGraph.Params live =
        liveGraphs()
            ? new LiveGraph.Params(index.maxDegree(), index.buildSearchList(), index.alpha())
            : null;
    return new GrowingSegment(id, dim, live, distance, options.defaultSearchList());
  }

  /**
   * Queues live-graph inserts for {@code s} on the live indexer unless they are queued, there is
   * nothing to insert, or builds are deferred (bulk load). A task inserts up to {@value
   * #INDEX_BATCH} points and requeues itself, so one indexer thread serves all shards in turn; it
   * goes to the urgent lane while more than {@value #URGENT_BACKLOG} points wait, else to the
   * background lane. While searches assist ({@link #assist}) and at most {@value #ASSIST_BACKLOG}
   * points wait, nothing is queued: the searches insert them.
   */
  private void scheduleIndexing(GrowingSegment s) {
    scheduleIndexing(s, false);
  }

  /**
   * {@link #scheduleIndexing(GrowingSegment)}; {@code continuing}: called by a lane's batch that
   * just ended, which goes on down to {@link #ASSIST_LOW_BACKLOG} although searches assist.
   */
  private void scheduleIndexing(GrowingSegment s, boolean continuing) {
    LiveIndexer lanes = options.liveIndexer();
    if (lanes == null || closed || deferBuilds || !s.indexable() || outrunByWrites(s)) {
      return;
    }
    if (assisted(s) && (!continuing || s.unindexed() <= ASSIST_LOW_BACKLOG)) {
      recheckAssisted(s); // the searches insert; the lanes take over if they stop
      return;
    }
    if (!s.claimIndexing()) {
      return;
    }
    boolean urgent = s.unindexed() > URGENT_BACKLOG;
    try {
      (urgent ? lanes.urgent() : lanes.background()).execute(() -> indexSome(s, urgent));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      s.indexDone(); // the node is shutting down
    }
  }

  private static final int INDEX_BATCH = 256;

  /**
   * Unindexed points up to which a growing segment whose searches assist (see {@link #assist}) is
   * left to them: no lane task starts (one that runs goes on down to {@link #ASSIST_LOW_BACKLOG}).
   * One indexer batch; a larger backlog goes to the lanes, which clear it faster than one insert
   * per search.
   */
  static final int ASSIST_BACKLOG = INDEX_BATCH;

  /**
   * Unindexed points down to which a background batch that started (more than {@link
   * #ASSIST_BACKLOG} waited) keeps going although searches assist, so that searches slower than the
   * writes do not leave a standing backlog that every query scans.
   */
  static final int ASSIST_LOW_BACKLOG = 32;

  private volatile long lastAssistNanos = Long.MIN_VALUE / 2; // no assisting search yet
  private final java.util.concurrent.atomic.AtomicBoolean recheckArmed =
      new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Whether {@code s}'s inserts are left to assisting searches: they may assist, one did within the
   * lanes' {@link LiveIndexer#assistQuiet()}, {@code s} takes writes (searches never insert into a
   * segment being sealed), and the backlog is at most {@link #ASSIST_BACKLOG}.
   */
  private boolean assisted(GrowingSegment s) {
    LiveIndexer lanes = options.liveIndexer();
    return lanes != null
        && lanes.searchesAssist()
        && !s.frozen()
        && System.nanoTime() - lastAssistNanos < lanes.assistQuiet().toNanos()
        && s.unindexed() <= ASSIST_BACKLOG;
  }

  /**
   * Schedules {@code s}'s indexing again once the searches may have stopped assisting, so that
   * points left to them are indexed by the lanes if no search comes.
   */
  private void recheckAssisted(GrowingSegment s) {
    if (recheckArmed.compareAndSet(false, true)) {
      java.util.concurrent.CompletableFuture.delayedExecutor(
              options.liveIndexer().assistQuiet().toNanos(),
              java.util.concurrent.TimeUnit.NANOSECONDS,
              Runnable::run)
          .execute(
              () -> {
                recheckArmed.set(false);
                scheduleIndexing(s);
                GrowingSegment now = liveGrowing();
                if (now != null && now != s) {
                  scheduleIndexing(now); // s was sealed meanwhile; one flag serves the shard
                }
              });
    }
  }

  /** Marks this shard's searches as assisting (ADR 0017); see {@link #assisted}. */
  void noteAssisting() {
    long now = System.nanoTime();
    if (now - lastAssistNanos > 1_000_000L) {
      lastAssistNanos = now; // a shared write at most once a millisecond
    }
  }

  /** The growing segment that takes writes, or {@code null}. */
  private GrowingSegment liveGrowing() {
    GrowingSegment g = null;
    for (Segment seg : snapshot.segments()) {
      if (seg instanceof GrowingSegment gs && !gs.frozen()) {
        g = gs;
      }
    }
    return g;
  }

  /** Points of the growing segment that wait for its live graph (0 without one). */
  int liveBacklog() {
    GrowingSegment g = liveGrowing();
    return g == null ? 0 : g.unindexed();
  }

  /**
   * One live-graph insert into this shard's growing segment, if one is due, on the thread of a
   * search whose response has been sent ({@link IndexAssist#runPending}, ADR 0017). Then, like a
   * lane's batch, hands what still waits on: to the next assisting searches, or to the lanes when
   * the searches do not count as assisting (a backlog above {@link #ASSIST_BACKLOG}).
   */
  void assist() {
    GrowingSegment g = liveGrowing();
    if (g == null
        || closed
        || deferBuilds
        || !g.indexable()
        || outrunByWrites(g)
        || !g.claimIndexing()) {
      return;
    }
    try {
      // never waits: a seal may be finishing this graph under its lock
      if (g.tryIndexSome(1, () -> closed || deferBuilds, true) > 0) {
        IndexAssist.inserted();
      }
    } catch (RuntimeException | Error e) {
      LOG.error(
          "live graph insert failed; the segment's unindexed points are scanned exactly [dir={}, segment={}]",
          dir,
          g.id(),
          e);
      g.graph().close();
    } finally {
      g.indexDone();
    }
    scheduleIndexing(g); // a write that found the claim taken queued nothing
  }

  /**
   * Unindexed points beyond which inserts go to the urgent lane: two batches, so a query scans at
   * most a few hundred points exactly (768-d: ~0.1 ms) when the background lane starves.
   */
  static final int URGENT_BACKLOG = 2 * INDEX_BATCH;

  /** Unindexed points beyond which the live indexer yields to writes that keep coming. */
  static final int LIVE_BACKLOG = 8192;

  /**
   * Searches this recent mean queries are being served: the indexer does not yield then, since
   * every query would scan the growing backlog exactly (measured beside 1,000 inserts/s: with the
   * indexer yielded, the tail scan took 70% of the query threads' time within 15 s).
   */
  private static final long SEARCHES_QUIET_NANOS = 1_000_000_000L;

  /** Writes this recent count as "still coming". */
  private static final long WRITES_QUIET_NANOS = 200_000_000L;

  /**
   * Whether writes outrun the live indexer: its backlog passed {@link #LIVE_BACKLOG}, writes are
   * still coming (one in the last 200 ms) and they arrive faster than one thread can insert them
   * (write rate × cost per insert > 0.9 s/s), and no search came in the last second. A bulk load
   * then gets the CPU instead of a graph that would fall ever further behind (the seal finishes
   * it); unindexed points are scanned exactly meanwhile. A steady stream the indexer can follow
   * never yields, however large the backlog (after a restart, say), and neither does an indexer
   * behind writes while queries are served: each of them would scan the backlog. The next write or
   * search after the load resumes indexing.
   */
  private boolean outrunByWrites(GrowingSegment s) {
    return s.graph() != null
        && outrun(
            s.unindexed(),
            System.nanoTime() - lastWriteNanos,
            writeRate,
            insertNanos,
            System.nanoTime() - lastSearchNanos);
  }

  /** The rule of {@link #outrunByWrites}, on its inputs. */
  static boolean outrun(
      int unindexed,
      long nanosSinceWrite,
      double writesPerSecond,
      double nanosPerInsert,
      long nanosSinceSearch) {
    return unindexed > LIVE_BACKLOG
        && nanosSinceWrite < WRITES_QUIET_NANOS
        && nanosSinceSearch > SEARCHES_QUIET_NANOS
        && writesPerSecond * nanosPerInsert > 0.9e9;
  }

  /** Called by the writer for every applied upsert of {@code points} points. */
  private void noteWrite(int points) {
    long now = System.nanoTime();
    if (now - lastWriteNanos > WRITES_QUIET_NANOS) {
      rateWindowStart = now; // a new burst: the last window's rate is stale
      rateWindowPoints = 0;
      writeRate = 0;
    }
    lastWriteNanos = now;
    rateWindowPoints += points;
    long window = now - rateWindowStart;
    if (window >= 250_000_000L) {
      writeRate = rateWindowPoints * 1e9 / window;
      rateWindowStart = now;
      rateWindowPoints = 0;
    }
  }

  /**
   * One batch of live-graph inserts for {@code s}, then requeues itself. A batch on the background
   * lane stops once more than {@link #URGENT_BACKLOG} points wait, so the rest goes to the urgent
   * lane at once, and once searches assist with at most {@link #ASSIST_LOW_BACKLOG} waiting.
   */
  private void indexSome(GrowingSegment s, boolean urgent) {
    boolean yielded = false;
    try {
      if (outrunByWrites(s)) {
        yielded = true;
      } else {
        // CPU time, not wall time: an indexer slowed by busy cores is behind, not outrun.
        var threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long t0 = threads.getCurrentThreadCpuTime();
        boolean queried = System.nanoTime() - lastSearchNanos < SEARCHES_QUIET_NANOS;
        int done =
            s.indexSome(
                INDEX_BATCH,
                () ->
                    closed
                        || deferBuilds
                        || outrunByWrites(s)
                        || (!urgent
                            && (s.unindexed() > URGENT_BACKLOG
                                || (s.unindexed() <= ASSIST_LOW_BACKLOG && assisted(s)))),
                queried);
        if (done > 0 && t0 >= 0) {
          double per = (threads.getCurrentThreadCpuTime() - t0) / (double) done;
          insertNanos = insertNanos == 0 ? per : 0.8 * insertNanos + 0.2 * per;
        }
      }
    } catch (RuntimeException | Error e) {
      LOG.error(
          "live graph insert failed; the segment's unindexed points are scanned exactly [dir={}, segment={}]",
          dir,
          s.id(),
          e);
      s.graph().close();
    } finally {
      s.indexDone();
    }
    if (!yielded && !s.graph().closed()) {
      scheduleIndexing(s, true); // more arrived meanwhile
    }
  }

  /**
   * Removes temp files of interrupted manifest writes, reads the manifest, opens its segments
   * (verifying checksums), indexes their live ids and removes segment directories the manifest does
   * not list (builds a crash interrupted).
   */
  private List<Segment> openSegments() throws IOException {
    List<Segment> out = new ArrayList<>();
    for (Path t : options.io().list(dir, "*.tmp")) {
      // A manifest write killed before its rename: the previous manifest is still in place.
      if (java.nio.file.Files.isRegularFile(t)) {
        LOG.warn("removing temp file of an interrupted manifest write [file={}]", t);
        options.io().deleteIfExists(t);
      }
    }
    ShardManifest m = ShardManifest.read(options.io(), dir);
    checkpointSeq = m.checkpointSeq();
    nextSegmentId = m.nextSegmentId();
    Set<String> keep = new HashSet<>();
    try {
      for (int id : m.segmentIds()) {
        Path p = segmentsDir.resolve(segmentDirName(id));
        keep.add(p.getFileName().toString());
        for (Path t : options.io().list(p, "*.tmp")) {
          // A checkpoint killed while replacing deleted.fvs: the old file is still in place.
          LOG.warn("removing temp file of an interrupted checkpoint [file={}]", t);
          options.io().deleteIfExists(t);
        }
        DiskAnnSegment s =
            DiskAnnSegment.open(options.io(), p, id, options.defaultSearchList(), inMemoryGraph());
        out.add(s);
        lifetimes.put(s, new Lifetime(s));
        payloadIndexes.register(s, p);
        for (int ord = 0; ord < s.size(); ord++) {
          if (!s.isDeleted(ord)) {
            locations.put(s.idAt(ord), pack(id, ord));
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      for (Segment s : out) {
        ((DiskAnnSegment) s).close();
      }
      lifetimes.clear();
      throw e;
    }
    for (Path p : options.io().list(segmentsDir, "seg-*")) {
      if (!keep.contains(p.getFileName().toString())) {
        LOG.warn("removing segment files not in the manifest (interrupted build) [dir={}]", p);
        options.io().deleteTree(p);
      }
    }
    return out;
  }

  /** {@code hnsw} keeps the whole graph and vectors on the heap, for comparison with diskann. */
  private boolean inMemoryGraph() {
    return index.type().equals(IndexParams.HNSW);
  }

  private static String segmentDirName(int id) {
    return String.format("seg-%010d", id);
  }

  /**
   * Opens the shard stored in {@code dir}, creating it if absent, and replays its WAL.
   *
   * @throws UncheckedIOException if the WAL cannot be read or recovered
   */
  public static Shard open(Path dir, int shardId, int dim, Distance distance, Options options) {
    return open(dir, shardId, dim, distance, IndexParams.DEFAULT, options);
  }

  /**
   * Opens the shard stored in {@code dir} with the given index settings; see {@link #open(Path,
   * int, int, Distance, Options)}. Sealed segments are built into DiskANN segments on the options'
   * build executor when the index type is {@code diskann} and an executor is given.
   */
  public static Shard open(
      Path dir, int shardId, int dim, Distance distance, IndexParams index, Options options) {
    try {
      options.io().createDirectories(dir);
      Shard s = new Shard(dir, shardId, dim, distance, index, options);
      Wal.RecoveryReport r = s.wal.recovery();
      LOG.info(
          "shard opened [dir={}, shard={}, points={}, segments={}, walRecords={}, walLastSeq={}, discardedBytes={}]",
          dir,
          shardId,
          s.count(),
          s.snapshot.segments().size(),
          r.recordsReplayed(),
          r.lastSeq(),
          r.bytesDiscarded());
      return s;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot open shard [dir=" + dir + ", shard=" + shardId + "]", e);
    }
  }

  private void replay(long seq, byte op, java.nio.ByteBuffer body) {
    switch (op) {
      case WalCodec.OP_UPSERT -> applyUpsert(WalCodec.decodeUpsert(body), seq);
      case WalCodec.OP_DELETE -> applyDelete(WalCodec.decodeDelete(body));
      default ->
          throw new IllegalStateException(
              "unknown WAL operation [op=" + op + ", seq=" + seq + ", dir=" + dir + "]");
    }
  }

  /**
   * Stores points (vectors already validated and prepared for the metric); returns the WAL sequence
   * number to pass to {@link #awaitDurable}.
   */
  public long upsert(List<Point> points) {
    for (Point p : points) {
      if (p.vector().length != dim) {
        throw new InvalidInputException(
            "Wrong input: Vector dimension error: expected dim: "
                + dim
                + ", got "
                + p.vector().length);
      }
    }
    byte[] body = WalCodec.encodeUpsert(points);
    requireSpace(body.length, "upsert");
    long seq;
    GrowingSegment g;
    writeLock.lock();
    try {
      seq = appendWal(WalCodec.OP_UPSERT, body, "upsert");
      applyUpsert(points, seq);
      g = growing;
    } finally {
      writeLock.unlock();
    }
    awaitIndexer(g);
    return seq;
  }

  /**
   * Unindexed points of a growing segment beyond which an upsert, while queries are being served,
   * waits for the live indexer before it returns: every query scans those points exactly (768-d:
   * ~0.2 ms per 1,000), so a write stream faster than the graph can take (1,000 random 768-d
   * vectors/s beside 2 query clients on 2 cores: the backlog reached 10,000 points in 24 s and
   * queries/s fell to a third) is slowed to the indexer's pace instead, as Lucene's writers build
   * their graphs as they add documents. Bulk loads (deferred builds) and writes without queries are
   * not slowed.
   */
  static final int WRITE_BACKLOG = 1024;

  /** Longest an upsert waits for the live indexer, so a large batch still returns in time. */
  static final long WRITE_WAIT_NANOS = 2_000_000_000L;

  /** Waits while {@code g}'s backlog is above {@link #WRITE_BACKLOG} (see there). */
  private void awaitIndexer(GrowingSegment g) {
    if (g == null || g.unindexed() <= WRITE_BACKLOG) {
      return;
    }
    long start = System.nanoTime();
    while (g.unindexed() > WRITE_BACKLOG
        && !closed
        && !deferBuilds
        && !g.frozen()
        && !g.graph().closed()
        && System.nanoTime() - lastSearchNanos < SEARCHES_QUIET_NANOS
        && System.nanoTime() - start < WRITE_WAIT_NANOS) {
      scheduleIndexing(g); // a no-op while the indexer has it
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
    }
  }

  /** Deletes points by id (absent ids are ignored); returns the WAL sequence number. */
  public long delete(List<PointId> ids) {
    byte[] body = WalCodec.encodeDelete(ids);
    writeLock.lock();
    try {
      // No reserve check: deleting (then compacting) is how a user frees space on a full disk.
      long seq = appendWal(WalCodec.OP_DELETE, body, "delete");
      applyDelete(ids);
      return seq;
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Deletes the points that match {@code filter} now: under the write lock, so no write
   * interleaves, the matching ids are collected and logged as one ordinary delete record of those
   * concrete ids, which replays deterministically whatever the payloads become later. Returns the
   * WAL sequence number, or 0 when nothing matched (nothing is logged).
   */
  public long delete(FilterEvaluator filter) {
    writeLock.lock();
    try {
      List<PointId> ids = matchingIds(filter);
      return ids.isEmpty() ? 0 : delete(ids);
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * {@link #updatePayloads(List, UnaryOperator)} for the points that match {@code filter} now (ids
   * collected under the write lock).
   */
  public long updatePayloads(FilterEvaluator filter, UnaryOperator<byte[]> update) {
    writeLock.lock();
    try {
      return updatePayloads(matchingIds(filter), update);
    } finally {
      writeLock.unlock();
    }
  }

  /** Ids of the live points that match; deduplicated (an upsert can briefly show two versions). */
  private List<PointId> matchingIds(FilterEvaluator filter) {
    Set<PointId> out = new HashSet<>();
    Snapshot snap = acquire();
    try {
      for (Segment seg : snap.segments()) {
        AcceptedOrdinals a = payloadIndexes.accepted(seg, filter);
        for (int ord = a.next(0); ord >= 0; ord = a.next(ord + 1)) {
          out.add(seg.idAt(ord));
        }
      }
    } finally {
      snap.release();
    }
    return new ArrayList<>(out);
  }

  /**
   * Replaces the payloads of existing points with {@code update.apply(current payload)} and keeps
   * their vectors; absent ids are ignored. Written as one upsert record of the points' new
   * versions, under the write lock so no concurrent write to the same ids is lost. Returns the WAL
   * sequence number, or 0 when no id exists.
   */
  public long updatePayloads(List<PointId> ids, UnaryOperator<byte[]> update) {
    writeLock.lock();
    try {
      List<Point> points = new ArrayList<>(ids.size());
      for (PointId id : ids) {
        Record r = get(id, true, true);
        if (r != null) {
          points.add(new Point(id, r.vector(), update.apply(r.payload())));
        }
      }
      if (points.isEmpty()) {
        return 0;
      }
      byte[] body = WalCodec.encodeUpsert(points);
      requireSpace(body.length, "payload update");
      long seq = appendWal(WalCodec.OP_UPSERT, body, "payload update");
      applyUpsert(points, seq);
      return seq;
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Refuses a write of {@code bytes} that would leave less than the reserve free ({@link
   * Options#space()}) with an {@link InsufficientStorageException} (HTTP 507).
   */
  void requireSpace(long bytes, String what) {
    try {
      options.space().require(dir, bytes, what);
    } catch (DiskFullException e) {
      throw new InsufficientStorageException(what, e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the free space [dir=" + dir + "]", e);
    }
  }

  /**
   * Appends a record (write lock held). The WAL stays usable when the disk is full; that failure is
   * an {@link InsufficientStorageException} (HTTP 507), and nothing was appended.
   */
  private long appendWal(byte op, byte[] body, String what) {
    if (closed) {
      throw new UnavailableException(
          "Service unavailable: shard is closed [shard=" + shardId + "]");
    }
    try {
      return wal.append(op, body);
    } catch (UncheckedIOException e) {
      DiskFullException full = DiskFullException.find(e);
      if (full != null) {
        throw new InsufficientStorageException(what, full);
      }
      throw e;
    }
  }

  /** Blocks until the record {@code seq} is durable under the WAL's fsync policy. */
  public void awaitDurable(long seq) {
    wal.sync(seq);
  }

  // Called with writeLock held, or during recovery before the shard is published.
  private void applyUpsert(List<Point> points, long seq) {
    if (!recovering) {
      noteWrite(points.size());
    }
    // Seal only at record boundaries, so the sealed segment covers exactly the records < seq.
    if (growing.size() >= options.sealThresholdPoints()) {
      sealGrowing(seq - 1);
    }
    for (Point p : points) {
      int ord = growing.append(p.id(), p.vector(), p.payload());
      long old = locations.put(p.id(), pack(growing.id(), ord));
      if (old != NO_LOCATION) {
        deleteAt(old);
      }
    }
    if (!recovering) {
      scheduleIndexing(growing);
    }
  }

  private void applyDelete(List<PointId> ids) {
    for (PointId id : ids) {
      long old = locations.remove(id);
      if (old != NO_LOCATION) {
        deleteAt(old);
      }
    }
  }

  private void deleteAt(long loc) {
    Segment s = snapshot.byId((int) (loc >>> 32));
    if (s != null && s.markDeleted((int) loc) && s instanceof DiskAnnSegment) {
      compactor.onDelete(s);
    }
  }

  /** Seals the growing segment if it holds any point. */
  public void flush() {
    writeLock.lock();
    try {
      if (growing.size() > 0) {
        sealGrowing(wal.lastSeq());
      }
    } finally {
      writeLock.unlock();
    }
  }

  private void sealGrowing(long sealSeq) {
    GrowingSegment sealed = growing;
    sealed.freeze();
    Pending p = new Pending(sealed, sealSeq);
    pending.addLast(p);
    if (!recovering) {
      submitBuild(p);
    }
    GrowingSegment next = newGrowing(nextSegmentId++);
    List<Segment> segs = new ArrayList<>(snapshot.segments().size() + 1);
    for (Segment s : snapshot.segments()) {
      // Empty memory segments go at once; an empty disk segment stays listed until a compaction
      // drops it and its files after a manifest without it is committed.
      if (s.liveCount() > 0 || s == sealed || s instanceof DiskAnnSegment) {
        segs.add(s);
      }
    }
    segs.add(next);
    growing = next;
    publish(segs, List.of());
  }

  /**
   * Makes a new snapshot current (writer lock held, or in the constructor): it takes a reference on
   * each of its disk segments, then the previous snapshot loses the shard's reference.
   */
  private void publish(List<Segment> segs, List<Segment> retired) {
    for (Segment s : segs) {
      ref(s);
    }
    for (Segment s : retired) {
      ref(s);
    }
    Snapshot old = snapshot;
    snapshot =
        new Snapshot(
            this, Collections.unmodifiableList(new ArrayList<>(segs)), List.copyOf(retired));
    if (old != null) {
      old.release();
    }
  }

  private void ref(Segment s) {
    Lifetime lt = lifetimes.get(s);
    if (lt != null) {
      int r = lt.refs.getAndIncrement();
      assert r > 0 : "segment revived after close [segment=" + s.id() + "]";
    }
  }

  /**
   * Takes a reference on a disk segment unless its last one is gone (it is closed or closing);
   * release with {@link #unref}.
   */
  private boolean tryRef(Segment s) {
    Lifetime lt = lifetimes.get(s);
    return lt != null && incrementIfPositive(lt.refs);
  }

  /** Takes one more reference on a count that has not dropped to zero (never revives it). */
  private static boolean incrementIfPositive(java.util.concurrent.atomic.AtomicInteger refs) {
    int r;
    do {
      r = refs.get();
      if (r <= 0) {
        return false;
      }
    } while (!refs.compareAndSet(r, r + 1));
    return true;
  }

  /** Drops the manifest's reference on a disk segment (writer lock held). */
  private void dropMembership(Segment s, boolean dropFiles) {
    Lifetime lt = lifetimes.get(s);
    if (lt != null && lt.member) {
      lt.member = false;
      lt.dropFiles = dropFiles;
      unref(s);
    }
  }

  /** Drops one reference on a disk segment; the last one closes it (and deletes dropped files). */
  void unref(Segment s) {
    Lifetime lt = lifetimes.get(s);
    if (lt == null || lt.refs.decrementAndGet() > 0) {
      return;
    }
    lifetimes.remove(s);
    payloadIndexes.drop(lt.segment);
    try {
      lt.segment.close();
    } catch (RuntimeException e) {
      LOG.warn("error closing segment [dir={}]", lt.segment.directory(), e);
    }
    if (lt.dropFiles) {
      try {
        options.io().deleteTree(lt.segment.directory());
        LOG.info("segment files deleted [dir={}]", lt.segment.directory());
      } catch (IOException e) {
        // Not in the manifest any more: the next open removes the directory.
        LOG.warn("cannot delete replaced segment [dir={}]", lt.segment.directory(), e);
      }
    }
  }

  /**
   * The current snapshot with a reference held: its disk segments stay open until {@link
   * Snapshot#release}. Lock-free; retries only when it raced with a swap.
   */
  public Snapshot acquire() {
    while (true) {
      Snapshot s = snapshot;
      if (s.tryAcquire()) {
        return s;
      }
      if (closed && s == snapshot) {
        throw new UnavailableException("Service unavailable: shard is closed [dir=" + dir + "]");
      }
      Thread.onSpinWait();
    }
  }

  private void submitBuild(Pending p) {
    Executor ex = options.buildExecutor();
    if (ex == null || index.type().equals(IndexParams.FLAT)) {
      return; // stays a memory-resident, exactly searched segment; the WAL keeps its records
    }
    if (deferBuilds) {
      return; // bulk load (indexing_threshold 0): built when the load ends, see setDeferBuilds
    }
    p.segment().markIndexing(true);
    ex.execute(() -> build(p));
  }

  /** Runs on the build executor: builds the segment's index, then installs and checkpoints. */
  private void build(Pending p) {
    if (!enterJob()) {
      return;
    }
    try {
      buildJob(p);
    } finally {
      exitJob();
    }
  }

  /**
   * Registers a background job that writes segment files; false once the shard is closed. {@link
   * #close} waits for registered jobs, so no job writes into a directory that is being reopened or
   * deleted.
   */
  boolean enterJob() {
    synchronized (jobs) {
      if (closed || stopping) {
        return false;
      }
      runningJobs++;
      return true;
    }
  }

  void exitJob() {
    synchronized (jobs) {
      runningJobs--;
      jobs.notifyAll();
    }
  }

  private void buildJob(Pending p) {
    GrowingSegment f = p.segment();
    int[] liveOrds = liveOrdinals(f);
    boolean fromGraph = sealFromLiveGraph(f, liveOrds.length);
    long need = buildBytes(f, fromGraph ? null : liveOrds);
    long usable = usableBytes();
    if (usable >= 0 && usable - need < options.space().minFreeBytes()) {
      postponeBuild(p, need, usable, "not enough free space");
      return;
    }
    int newId;
    writeLock.lock();
    try {
      newId = nextSegmentId++;
    } finally {
      writeLock.unlock();
    }
    Path target = segmentsDir.resolve(segmentDirName(newId));
    long t0 = System.nanoTime();
    DiskAnnSegment built = null;
    boolean installed = false;
    buildingSegment = f.id();
    try {
      if (liveOrds.length > 0) {
        options.io().createDirectories(segmentsDir);
        if (fromGraph) {
          // ADR 0011: the live graph is the segment's graph; finish it here and write it.
          f.indexSome(Integer.MAX_VALUE, this::backgroundCancelled);
          if (backgroundCancelled()) {
            throw new java.util.concurrent.CancellationException("shard closing");
          }
          DiskAnnSegment.buildFromGraph(
              options.io(),
              target,
              newId,
              f,
              distance,
              index,
              newestCodebook(),
              null,
              this::backgroundCancelled);
          liveOrds = new int[f.size()];
          for (int i = 0; i < liveOrds.length; i++) {
            liveOrds[i] = i;
          }
        } else {
          options
              .segmentBuilder()
              .build(
                  options.io(),
                  target,
                  newId,
                  List.of(f),
                  List.of(liveOrds),
                  f.dimension(),
                  distance,
                  index,
                  null,
                  this::backgroundCancelled);
        }
        built =
            DiskAnnSegment.open(
                options.io(), target, newId, options.defaultSearchList(), inMemoryGraph());
        adopt(built);
        payloadIndexes.openDisk(built, target);
      }
      install(p, built, liveOrds);
      installed = true;
      spaceRetryMillis.set(0);
      if (f.graph() != null) {
        f.graph().close(); // replaced: the indexer stops, the graph goes with the last reader
      }
      LOG.info(
          "segment indexed [dir={}, segment={}, from={}, points={}, millis={}, checkpointSeq={}, graph={}]",
          dir,
          newId,
          f.id(),
          liveOrds.length,
          (System.nanoTime() - t0) / 1_000_000,
          p.sealSeq(),
          fromGraph ? "live" : "built");
    } catch (Throwable t) {
      if (!installed) {
        if (built != null) {
          discard(built);
        }
        removeUnfinished(target);
      }
      if (t instanceof java.util.concurrent.CancellationException || backgroundCancelled()) {
        f.markIndexing(false);
        LOG.info(
            "index build cancelled, its files removed; it runs again from the WAL when the shard opens [dir={}, segment={}, millis={}]",
            dir,
            f.id(),
            (System.nanoTime() - t0) / 1_000_000);
      } else if (DiskFullException.isDiskFull(t)) {
        postponeBuild(p, need, usableBytes(), "the disk filled up, its files removed");
      } else {
        buildFailure = t.toString();
        f.markIndexing(false);
        LOG.error(
            "index build failed; the segment stays in memory and searched exactly [dir={}, segment={}]",
            dir,
            f.id(),
            t);
      }
    } finally {
      buildingSegment = -1;
    }
  }

  /** Whether background builds and compactions must stop: closing, or stopping the server. */
  boolean backgroundCancelled() {
    return closed || stopping;
  }

  /**
   * Cancels running index builds and compactions and starts no new ones (the server is shutting
   * down). They stop at their next check (at most about a second of graph building), remove their
   * temporary files, and run again when the shard is next opened: a build from the WAL records of
   * its segment, which no checkpoint has covered, a compaction because its thresholds still hold.
   * Writes and reads go on until {@link #close}. Returns what was running, or {@code null}.
   */
  public String stopBackgroundWork() {
    stopping = true;
    return runningWork();
  }

  /** The running build and compaction, for the log; {@code null} when there is none. */
  private String runningWork() {
    List<String> work = new ArrayList<>();
    int b = buildingSegment;
    if (b >= 0) {
      work.add("index build of segment " + b);
    }
    Set<Integer> c = compactor.sourceIds();
    if (!c.isEmpty()) {
      work.add("compaction of segments " + new TreeSet<>(c));
    }
    return work.isEmpty() ? null : String.join(", ", work);
  }

  /** Free bytes of the data directory's device; -1 if the file system cannot tell. */
  long usableBytes() {
    try {
      return options.space().usableBytes(dir);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * What building {@code f} writes, with a margin: its segment files ({@code ords}: the live
   * points; {@code null}: all, from its live graph) and, with a payload schema, its payload index.
   */
  private long buildBytes(GrowingSegment f, int[] ords) {
    int n = ords == null ? f.size() : ords.length;
    long payload = 0;
    for (int i = 0; i < n; i++) {
      byte[] b = f.payloadAt(ords == null ? i : ords[i]);
      payload += b == null ? 0 : b.length;
    }
    long bytes = DiskAnnSegment.estimateBytes(n, dim, index, payload);
    if (!payloadIndexes.schema().isEmpty()) {
      bytes += 2 * payload;
    }
    return withMargin(bytes);
  }

  /** An estimate of written bytes plus a quarter and 1 MiB (file system metadata, rounding). */
  static long withMargin(long bytes) {
    return bytes + bytes / 4 + (1 << 20);
  }

  /**
   * Retries a build that found too little free space later (1 s, doubling up to {@link
   * #SPACE_RETRY_MAX_MILLIS}): one log line per attempt, and the segment stays in memory, searched
   * exactly, its records in the WAL. Writes are refused meanwhile only when the reserve is reached.
   */
  private void postponeBuild(Pending p, long need, long usable, String why) {
    long delay = nextSpaceRetry();
    LOG.warn(
        "index build postponed: {}; retrying in {} ms [dir={}, segment={}, neededBytes={}, usableBytes={}, minFreeBytes={}]",
        why,
        delay,
        dir,
        p.segment().id(),
        need,
        usable,
        options.space().minFreeBytes());
    java.util.concurrent.CompletableFuture.delayedExecutor(
            delay, java.util.concurrent.TimeUnit.MILLISECONDS)
        .execute(() -> retryBuild(p));
  }

  /** The next wait before a retry for lack of space (shared by builds and compactions). */
  long nextSpaceRetry() {
    return spaceRetryMillis.updateAndGet(
        d -> d == 0 ? SPACE_RETRY_MIN_MILLIS : Math.min(2 * d, SPACE_RETRY_MAX_MILLIS));
  }

  /** Notes that a build or compaction went through: the next retry for lack of space is quick. */
  void spaceRetryDone() {
    spaceRetryMillis.set(0);
  }

  static final long SPACE_RETRY_MIN_MILLIS = 1_000;
  static final long SPACE_RETRY_MAX_MILLIS = 30_000;

  private void retryBuild(Pending p) {
    writeLock.lock();
    try {
      if (backgroundCancelled() || !pending.contains(p)) {
        p.segment().markIndexing(false);
        return;
      }
      if (deferBuilds) {
        p.segment().markIndexing(false); // a bulk load began: built when it ends
        return;
      }
      submitBuild(p);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      p.segment().markIndexing(false); // the node is shutting down
    } finally {
      writeLock.unlock();
    }
  }

  /** Removes a build's or compaction's output that was not installed (nothing refers to it). */
  void removeUnfinished(Path target) {
    try {
      options.io().deleteTree(target.resolveSibling(target.getFileName() + ".tmp"));
      options.io().deleteTree(target);
    } catch (IOException | RuntimeException e) {
      // Not in the manifest: the next open removes it.
      LOG.warn("cannot remove an unfinished segment [dir={}]", target, e);
    }
  }

  /**
   * Whether a frozen segment is sealed from its live graph rather than rebuilt from its live
   * points: when it has one and at most the compaction threshold of it is deleted (a segment of
   * mostly replaced versions is smaller and better rebuilt from what is left). A graph that is far
   * behind (a bulk load) is still finished rather than rebuilt: one thread inserting int8 codes
   * costs about 0.3 ms per 768-d point, jvector's build about 5 ms of CPU (measured side by side).
   */
  private boolean sealFromLiveGraph(GrowingSegment f, int live) {
    if (f.graph() == null || f.graph().closed() || live == 0) {
      return false;
    }
    int dead = f.size() - live;
    return dead < options.compaction().deletedFraction() * f.size();
  }

  /** The PQ codebook of the newest disk segment, reused when a live graph is sealed; or null. */
  private io.flashvec.index.disk.PqCodebook newestCodebook() {
    DiskAnnSegment newest = null;
    for (Segment s : snapshot.segments()) {
      if (s instanceof DiskAnnSegment d && (newest == null || d.id() > newest.id())) {
        newest = d;
      }
    }
    return newest == null ? null : newest.codebook();
  }

  private static int[] liveOrdinals(Segment f) {
    int n = f.size();
    int[] out = new int[n];
    int c = 0;
    for (int ord = 0; ord < n; ord++) {
      if (!f.isDeleted(ord)) {
        out[c++] = ord;
      }
    }
    return java.util.Arrays.copyOf(out, c);
  }

  /**
   * Replaces a frozen segment by its built index and checkpoints the WAL. Under the write lock:
   * deletions that happened during the build move to the new segment; the new snapshot searches the
   * index instead of the frozen segment (kept readable as retired); locations move; then the
   * retired segment is dropped. Finally deletion bitmaps and the manifest are written and the WAL
   * is truncated up to the seal.
   */
  private void install(Pending p, DiskAnnSegment built, int[] liveOrds) throws IOException {
    GrowingSegment f = p.segment();
    writeLock.lock();
    try {
      if (closed) {
        if (built != null) {
          dropMembership(built, false);
          options.io().deleteTree(built.directory());
        }
        return;
      }
      if (built != null) {
        for (int i = 0; i < liveOrds.length; i++) {
          if (f.isDeleted(liveOrds[i])) {
            built.markDeleted(i);
          }
        }
      }
      List<Segment> segs = new ArrayList<>(snapshot.segments().size());
      for (Segment s : snapshot.segments()) {
        if (s == f) {
          if (built != null) {
            segs.add(built);
          }
        } else {
          segs.add(s);
        }
      }
      publish(segs, List.of(f));
      if (built != null) {
        for (int i = 0; i < liveOrds.length; i++) {
          PointId pid = f.idAt(liveOrds[i]);
          locations.replace(pid, pack(f.id(), liveOrds[i]), pack(built.id(), i));
        }
      }
      publish(snapshot.segments(), List.of());
      payloadIndexes.drop(f);
      pending.remove(p);
      checkpointAfterInstall(p.sealSeq(), "seal");
    } finally {
      writeLock.unlock();
    }
    compactor.maybeSchedule();
  }

  /**
   * Installs a compaction's result (writer thread of the compaction, not holding the lock): under
   * the write lock, deletions that hit the sources during the build are applied to the new segment,
   * a snapshot with the new segment instead of the sources is published (the sources stay readable
   * as retired for readers holding old locations), locations move, and the manifest without the
   * sources is written: that is the commit point. Only then do the sources lose their manifest
   * reference; their files are deleted when the last snapshot holding them is released.
   *
   * @param built the new segment, or {@code null} when no source had a live point left
   * @return false if the shard was closed meanwhile (the new segment is then discarded)
   */
  boolean installCompaction(List<DiskAnnSegment> sources, List<int[]> ords, DiskAnnSegment built)
      throws IOException {
    writeLock.lock();
    try {
      if (closed) {
        return false;
      }
      if (built != null) {
        int i = 0;
        for (int j = 0; j < sources.size(); j++) {
          DiskAnnSegment src = sources.get(j);
          for (int ord : ords.get(j)) {
            if (src.isDeleted(ord)) {
              built.markDeleted(i);
            }
            i++;
          }
        }
      }
      List<Segment> segs = new ArrayList<>(snapshot.segments().size());
      boolean placed = false;
      for (Segment s : snapshot.segments()) {
        if (sources.contains(s)) {
          if (!placed && built != null) {
            segs.add(built);
          }
          placed = true;
        } else {
          segs.add(s);
        }
      }
      publish(segs, List.copyOf(sources));
      if (built != null) {
        int i = 0;
        for (int j = 0; j < sources.size(); j++) {
          DiskAnnSegment src = sources.get(j);
          for (int ord : ords.get(j)) {
            PointId pid = src.idAt(ord);
            locations.replace(pid, pack(src.id(), ord), pack(built.id(), i));
            i++;
          }
        }
      }
      publish(segs, List.of());
      // commit point: the manifest lists the new segment, not the sources
      if (checkpointAfterInstall(checkpointSeq, "compaction")) {
        for (DiskAnnSegment src : sources) {
          dropMembership(src, true);
        }
      }
      return true;
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Switches the shard to a new payload schema: the index of every disk segment is rebuilt (or
   * opened, when it exists) before this returns; queries use the old indexes meanwhile.
   */
  public void setPayloadSchema(io.flashvec.index.payload.PayloadSchema schema) {
    if (!enterJob()) {
      throw new UnavailableException("shard is closed [dir=" + dir + "]");
    }
    try {
      payloadIndexes.setSchema(
          schema,
          new io.flashvec.index.payload.PayloadIndexes.Pins() {
            @Override
            public boolean pin(Segment seg) {
              return tryRef(seg);
            }

            @Override
            public void unpin(Segment seg) {
              unref(seg);
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot build payload indexes [dir=" + dir + "]", e);
    } finally {
      exitJob(); // close waits for this: no index build writes into a deleted collection
    }
  }

  /**
   * What building the payload indexes of this shard's disk segments writes (twice their payload
   * bytes), for a free-space check before a schema change.
   */
  long payloadIndexBytes() {
    long n = 0;
    for (Segment s : snapshot.segments()) {
      if (s instanceof DiskAnnSegment d) {
        n += 2 * d.payloadFileBytes();
      }
    }
    return n;
  }

  /** The shard's payload indexes (text search, order_by, statistics). */
  public io.flashvec.index.payload.PayloadIndexes payloadIndexes() {
    return payloadIndexes;
  }

  /** Allocates a segment id (writer lock taken here). */
  int allocateSegmentId() {
    writeLock.lock();
    try {
      return nextSegmentId++;
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Under the write lock, calls {@code planner} with the current disk segments (in snapshot order);
   * when it returns sources, captures their live ordinals (consistent with the locations) and a
   * snapshot reference that keeps them open, and returns them. {@code null} if the shard is closed
   * or there is nothing to do.
   */
  ShardCompactor.Job planCompaction(
      java.util.function.Function<List<DiskAnnSegment>, ShardCompactor.Plan> planner) {
    writeLock.lock();
    try {
      if (closed || recovering) {
        return null;
      }
      List<DiskAnnSegment> disk = new ArrayList<>();
      for (Segment s : snapshot.segments()) {
        if (s instanceof DiskAnnSegment d) {
          disk.add(d);
        }
      }
      ShardCompactor.Plan plan = planner.apply(disk);
      if (plan == null || plan.sources().isEmpty()) {
        return null;
      }
      List<int[]> ords = new ArrayList<>(plan.sources().size());
      for (DiskAnnSegment d : plan.sources()) {
        ords.add(liveOrdinals(d));
      }
      return new ShardCompactor.Job(plan, ords, acquire(), nextSegmentId++);
    } finally {
      writeLock.unlock();
    }
  }

  Path segmentPath(int id) {
    return segmentsDir.resolve(segmentDirName(id));
  }

  Path segmentsDirectory() {
    return segmentsDir;
  }

  int dimension() {
    return dim;
  }

  Distance distance() {
    return distance;
  }

  IndexParams indexParams() {
    return index;
  }

  Options options() {
    return options;
  }

  boolean inMemoryGraphSegments() {
    return inMemoryGraph();
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * Compacts now, on the compaction executor when there is one (else on this thread): with {@code
   * force} every segment with a deleted point is rewritten and all small segments are merged, else
   * only what the thresholds ask for. Completes with the number of compactions run.
   */
  public java.util.concurrent.CompletableFuture<Integer> compact(boolean force) {
    return compactor.request(force);
  }

  /** Whether a compaction is running or queued. */
  public boolean compacting() {
    return compactor.busy();
  }

  /** Ids of the segments the running compaction reads. */
  public Set<Integer> compactingSegments() {
    return compactor.sourceIds();
  }

  /** Compactions completed since the shard opened. */
  public long compactionsDone() {
    return compactor.done();
  }

  /** The last compaction failure, or {@code null}. */
  public String compactionFailure() {
    return compactor.failure();
  }

  /**
   * Bulk-load mode: while {@code defer} is true sealed segments are not indexed (they stay in
   * memory, searched exactly, and the WAL is not truncated); setting it back to false submits the
   * deferred builds.
   */
  public void setDeferBuilds(boolean defer) {
    writeLock.lock();
    try {
      deferBuilds = defer;
      if (!defer && !recovering) {
        for (Pending p : pending) {
          if (p.segment().state() != Segment.State.INDEXING) {
            submitBuild(p);
          }
        }
        scheduleIndexing(growing);
      }
    } finally {
      writeLock.unlock();
    }
  }

  /** Sealed segments waiting for a deferred index build. */
  public int deferredBuilds() {
    writeLock.lock();
    try {
      int n = 0;
      for (Pending p : pending) {
        if (p.segment().state() != Segment.State.INDEXING) {
          n++;
        }
      }
      return options.buildExecutor() == null || index.type().equals(IndexParams.FLAT) ? 0 : n;
    } finally {
      writeLock.unlock();
    }
  }

  /** Persists what the WAL up to {@code seq} described, then truncates the WAL. */
  private void checkpoint(long seq) throws IOException {
    // An older segment whose build failed still needs its records: keep the checkpoint below it.
    // Listing newer segments with a lower checkpoint is safe: replaying their records again
    // re-applies the same operations and the newest version of every id wins.
    long cp = !pending.isEmpty() && pending.peekFirst().sealSeq() < seq ? checkpointSeq : seq;
    // The deletion bitmaps written below include deletions (and the delete half of replacements)
    // by records after `seq`. Make those records durable first, or a crash could keep their
    // deletions and lose their WAL records: a replaced point would vanish, old and new version.
    wal.syncAll();
    List<Integer> ids = new ArrayList<>();
    for (Segment s : snapshot.segments()) {
      if (s instanceof DiskAnnSegment d) {
        d.writeDeleted(options.io());
        ids.add(d.id());
      }
    }
    checkpointSeq = Math.max(checkpointSeq, cp);
    ShardManifest.write(options.io(), dir, new ShardManifest(checkpointSeq, nextSegmentId, ids));
    wal.truncateBefore(checkpointSeq + 1);
  }

  /**
   * Checkpoints after an install has published its segment. A failure (disk full, a failed WAL)
   * must not undo the install: the new segment is already being searched and holds the moved
   * locations. So it is logged and the files stay as they are: the previous manifest and the
   * untruncated WAL still describe all data, and the next checkpoint (or the open, which removes
   * directories the manifest does not list) settles it. Returns whether the checkpoint was written.
   */
  private boolean checkpointAfterInstall(long seq, String what) {
    try {
      checkpoint(seq);
      return true;
    } catch (IOException | RuntimeException e) {
      checkpointFailure = e.toString();
      LOG.error(
          "checkpoint after a {} failed; the segment is in use, the WAL keeps the data [dir={}]",
          what,
          dir,
          e);
      return false;
    }
  }

  /**
   * Registers a segment a build or compaction just opened, before it is published, so that it can
   * be pinned (a payload schema change rebuilds its index meanwhile); {@link #discard} if it is
   * never installed.
   */
  void adopt(DiskAnnSegment built) {
    lifetimes.put(built, new Lifetime(built));
  }

  /** Closes an adopted segment that will not be installed (its files are the caller's). */
  void discard(DiskAnnSegment built) {
    writeLock.lock();
    try {
      dropMembership(built, false);
    } finally {
      writeLock.unlock();
    }
  }

  /** The last checkpoint failure after an install, or {@code null}. */
  public String checkpointFailure() {
    return checkpointFailure;
  }

  /** The live version of a point, or {@code null}. */
  public Record get(PointId id, boolean withPayload, boolean withVector) {
    Snapshot snap = acquire();
    try {
      long loc;
      Segment s;
      while (true) {
        // Location first, then the snapshot it must be in: an install between the two publishes
        // the new segment before it moves locations, so a miss means "read both again".
        loc = locations.get(id);
        if (loc == NO_LOCATION) {
          return null;
        }
        s = snap.byId((int) (loc >>> 32));
        if (s != null) {
          break;
        }
        Snapshot next = acquire();
        snap.release();
        snap = next;
      }
      int ord = (int) loc;
      if (s == null || s.isDeleted(ord)) {
        return null;
      }
      return new Record(
          id, 0f, withVector ? s.vectorAt(ord) : null, withPayload ? s.payloadAt(ord) : null);
    } finally {
      snap.release();
    }
  }

  /** Exact number of live points. */
  public long count() {
    long n = 0;
    for (Segment s : snapshot.segments()) {
      n += s.liveCount();
    }
    return n;
  }

  /** Live points that match {@code filter} ({@code null}: all). */
  public long count(FilterEvaluator filter) {
    if (filter == null || filter.matchesAll()) {
      return count();
    }
    long n = 0;
    Snapshot snap = acquire();
    try {
      for (Segment seg : snap.segments()) {
        n += payloadIndexes.accepted(seg, filter).count();
      }
    } finally {
      snap.release();
    }
    return n;
  }

  /**
   * {@link #scrollIds(PointId, int)} over the live points that match {@code filter} ({@code null}:
   * all). The filter is evaluated only for ids that would enter the page.
   */
  public List<PointId> scrollIds(PointId from, int limit, FilterEvaluator filter) {
    if (filter == null || filter.matchesAll()) {
      return scrollIds(from, limit);
    }
    TreeSet<PointId> page = new TreeSet<>();
    if (limit <= 0) {
      return List.of();
    }
    Snapshot snap = acquire();
    try {
      for (Segment seg : snap.segments()) {
        AcceptedOrdinals a = payloadIndexes.accepted(seg, filter);
        for (int ord = a.next(0); ord >= 0; ord = a.next(ord + 1)) {
          PointId id = seg.idAt(ord);
          if ((from != null && id.compareTo(from) < 0)
              || (page.size() >= limit && id.compareTo(page.last()) >= 0)) {
            continue;
          }
          page.add(id);
          if (page.size() > limit) {
            page.pollLast();
          }
        }
      }
    } finally {
      snap.release();
    }
    return new ArrayList<>(page);
  }

  /**
   * Returns, in order, the smallest live ids that are {@code >= from} (all if null), at most {@code
   * limit}.
   */
  public List<PointId> scrollIds(PointId from, int limit) {
    PriorityQueue<PointId> heap = new PriorityQueue<>(Collections.reverseOrder());
    locations.forEachId(
        id -> {
          if (from != null && id.compareTo(from) < 0) {
            return;
          }
          if (heap.size() < limit) {
            heap.add(id);
          } else if (limit > 0 && id.compareTo(heap.peek()) < 0) {
            heap.poll();
            heap.add(id);
          }
        });
    List<PointId> out = new ArrayList<>(heap);
    Collections.sort(out);
    return out;
  }

  /**
   * The best {@code k} live points for a prepared query, best first, with payload and vector as
   * asked. Results below {@code threshold} (above, for distances) are dropped.
   */
  public List<Record> search(
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector) {
    return search(query, k, params, threshold, withPayload, withVector, new SearchStats());
  }

  /**
   * {@link #search(float[], int, SearchParams, Float, boolean, boolean)}, adding its costs to
   * {@code stats}.
   */
  public List<Record> search(
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector,
      SearchStats stats) {
    return search(query, k, params, threshold, withPayload, withVector, null, stats);
  }

  /**
   * {@link #search(float[], int, SearchParams, Float, boolean, boolean, SearchStats)} among the
   * points that match {@code filter} ({@code null}: all). Each segment's matching ordinals are
   * evaluated first (their count is the planner's cardinality); see {@link
   * io.flashvec.index.filter.FilterPlanner}.
   */
  public List<Record> search(
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector,
      FilterEvaluator filter,
      SearchStats stats) {
    if (query.length != dim) {
      throw new InvalidInputException(
          "Wrong input: Vector dimension error: expected dim: " + dim + ", got " + query.length);
    }
    long now = System.nanoTime();
    if (now - lastSearchNanos > SEARCHES_QUIET_NANOS / 10) {
      lastSearchNanos = now; // a shared write at most ten times a window, not once per query
    }
    Snapshot snap = acquire();
    try {
      for (Segment seg : snap.segments()) {
        if (seg instanceof GrowingSegment g && !g.frozen()) {
          scheduleIndexing(g); // resumes a live graph that yielded to a load (a CAS when idle)
        }
      }
      LiveIndexer lanes = options.liveIndexer();
      if (lanes != null && lanes.searchesAssist()) {
        IndexAssist.offer(this);
      }
      return search(
          snap.segments(), query, k, params, threshold, withPayload, withVector, filter, stats);
    } finally {
      snap.release();
    }
  }

  private List<Record> search(
      List<Segment> segs,
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector,
      FilterEvaluator filter,
      SearchStats stats) {
    TopK top = new TopK(distance, k);
    boolean filtered = filter != null && !filter.matchesAll();
    long total = 0;
    for (Segment seg : segs) {
      total += seg.size();
    }
    for (int i = 0; i < segs.size(); i++) {
      Segment seg = segs.get(i);
      AcceptedOrdinals accept = filtered ? payloadIndexes.accepted(seg, filter) : null;
      if (seg instanceof GrowingSegment g && total > 0 && !filtered) {
        // a growing segment's graph search is sized to its share of the points (Lucene does so);
        // not with a filter, which may select mostly new points
        g.search(query, distance, params, accept, top, i, stats, (double) g.size() / total);
      } else {
        seg.search(query, distance, params, accept, top, i, stats);
      }
    }
    int n = top.size();
    float[] scores = new float[n];
    int[] slots = new int[n];
    int[] ords = new int[n];
    top.drainBestFirst(scores, slots, ords);
    List<Record> out = new ArrayList<>(n);
    Set<PointId> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      if (threshold != null && !distance.passes(scores[i], threshold)) {
        break;
      }
      Segment s = segs.get(slots[i]);
      PointId id = s.idAt(ords[i]);
      // An upsert racing with this search can expose two versions of one id for an instant.
      if (!seen.add(id)) {
        continue;
      }
      out.add(
          new Record(
              id,
              scores[i],
              withVector ? s.vectorAt(ords[i]) : null,
              withPayload ? s.payloadAt(ords[i]) : null));
    }
    return out;
  }

  /** A point and its {@code order_by} value. */
  public record Ordered(Record record, double value) {}

  /**
   * BM25 search for {@code tokens} in text field {@code field} among the live points that match
   * {@code filter} ({@code null}: all); best first, scores are BM25 scores.
   */
  public List<Record> textSearch(
      String field,
      List<String> tokens,
      int k,
      FilterEvaluator filter,
      boolean withPayload,
      boolean withVector) {
    Snapshot snap = acquire();
    try {
      List<Segment> segs = snap.segments();
      boolean filtered = filter != null && !filter.matchesAll();
      List<io.flashvec.index.payload.PayloadIndexes.Hit> hits =
          payloadIndexes.textSearch(
              segs,
              field,
              tokens,
              k,
              filtered ? slot -> payloadIndexes.accepted(segs.get(slot), filter) : null);
      List<Record> out = new ArrayList<>(hits.size());
      Set<PointId> seen = new HashSet<>();
      for (var h : hits) {
        Segment seg = segs.get(h.slot());
        PointId id = seg.idAt(h.ord());
        if (seen.add(id)) {
          out.add(
              new Record(
                  id,
                  (float) h.score(),
                  withVector ? seg.vectorAt(h.ord()) : null,
                  withPayload ? seg.payloadAt(h.ord()) : null));
        }
      }
      return out;
    } finally {
      snap.release();
    }
  }

  /**
   * The first {@code limit} live points that match {@code filter} ({@code null}: all) ordered by
   * the value of an indexed numeric or datetime key (smallest value of each point ascending,
   * largest descending; ties by id), starting at {@code startFrom} (inclusive; {@code null}: the
   * start). Points without a value are left out.
   */
  public List<Ordered> orderedScroll(
      io.flashvec.index.payload.PayloadFieldSchema key,
      boolean ascending,
      Double startFrom,
      int limit,
      FilterEvaluator filter,
      boolean withPayload,
      boolean withVector) {
    record Cand(Segment seg, int ord, PointId id, double value) {}
    Comparator<Cand> order =
        Comparator.comparingDouble((Cand c) -> ascending ? c.value() : -c.value())
            .thenComparing(Cand::id);
    PriorityQueue<Cand> heap = new PriorityQueue<>(order.reversed());
    Snapshot snap = acquire();
    try {
      for (Segment seg : snap.segments()) {
        AcceptedOrdinals acc =
            filter != null && !filter.matchesAll()
                ? payloadIndexes.accepted(seg, filter)
                : AcceptedOrdinals.evaluate(seg, (id, p) -> true);
        payloadIndexes.orderValues(
            seg,
            key,
            ascending,
            acc,
            (v, ord) -> {
              if (startFrom != null && (ascending ? v < startFrom : v > startFrom)) {
                return;
              }
              Cand c = new Cand(seg, ord, seg.idAt(ord), v);
              if (heap.size() < limit) {
                heap.add(c);
              } else if (limit > 0 && order.compare(c, heap.peek()) < 0) {
                heap.poll();
                heap.add(c);
              }
            });
      }
      List<Cand> sorted = new ArrayList<>(heap);
      sorted.sort(order);
      List<Ordered> out = new ArrayList<>(sorted.size());
      Set<PointId> seen = new HashSet<>();
      for (Cand c : sorted) {
        if (seen.add(c.id())) {
          out.add(
              new Ordered(
                  new Record(
                      c.id(),
                      0f,
                      withVector ? c.seg().vectorAt(c.ord()) : null,
                      withPayload ? c.seg().payloadAt(c.ord()) : null),
                  c.value()));
        }
      }
      return out;
    } finally {
      snap.release();
    }
  }

  private static long pack(int segmentId, int ord) {
    return ((long) segmentId << 32) | (ord & 0xFFFFFFFFL);
  }

  public Snapshot snapshot() {
    return snapshot;
  }

  /**
   * Whether a search of this shard runs from memory: every disk segment's recent searches read
   * nothing from the device ({@link DiskAnnSegment#servedFromMemory}); growing segments always do.
   * A hint (the page cache can change its mind at any time), for callers that pick a thread.
   */
  public boolean searchesServedFromMemory() {
    for (Segment s : snapshot.segments()) {
      if (s instanceof DiskAnnSegment d && !d.servedFromMemory()) {
        return false;
      }
    }
    return true;
  }

  public int shardId() {
    return shardId;
  }

  public Wal wal() {
    return wal;
  }

  /** Bytes on disk: the WAL plus sealed segment files. */
  public long diskBytes() {
    long n = wal.sizeBytes();
    for (Segment s : snapshot.segments()) {
      n += s.diskBytes();
    }
    return n;
  }

  public long memoryBytes() {
    long n = 0;
    for (Segment s : snapshot.segments()) {
      n += s.memoryBytes();
    }
    return n;
  }

  public Path directory() {
    return dir;
  }

  /** Whether segments wait for (or are in) an index build. */
  public boolean indexing() {
    writeLock.lock();
    try {
      if (options.buildExecutor() == null || index.type().equals(IndexParams.FLAT)) {
        return false;
      }
      for (Pending p : pending) {
        if (p.segment().state() == Segment.State.INDEXING) {
          return true;
        }
      }
      return false;
    } finally {
      writeLock.unlock();
    }
  }

  /** The last index build failure, or {@code null}. */
  public String buildFailure() {
    return buildFailure;
  }

  @Override
  public void close() throws IOException {
    writeLock.lock();
    try {
      if (closed) {
        return;
      }
      synchronized (jobs) {
        closed = true;
      }
    } finally {
      writeLock.unlock();
    }
    long t0 = System.nanoTime();
    String cancelled = runningWork();
    if (cancelled != null) {
      LOG.info("shard closing, cancelling background work [dir={}, work={}]", dir, cancelled);
    }
    try {
      // First: no write can come any more, and running jobs neither append nor checkpoint once
      // `closed` is set (their installs check it under the write lock).
      wal.close();
    } finally {
      // Running jobs notice `closed` at their next check and remove their files.
      synchronized (jobs) {
        boolean interrupted = false;
        while (runningJobs > 0) {
          try {
            jobs.wait();
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      if (cancelled != null) {
        LOG.info(
            "shard background work stopped [dir={}, work={}, millis={}]",
            dir,
            cancelled,
            (System.nanoTime() - t0) / 1_000_000);
      }
      payloadIndexes.close();
      // Drop the shard's references: segments close now, or when the last search (or a running
      // compaction) releases its snapshot.
      Snapshot last;
      writeLock.lock();
      try {
        last = snapshot;
        for (Segment s : List.copyOf(lifetimes.keySet())) {
          dropMembership(s, false);
        }
      } finally {
        writeLock.unlock();
      }
      last.release();
    }
  }
}
