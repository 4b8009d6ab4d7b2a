package io.flashvec.index.shard;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Optimizations;
import io.flashvec.index.payload.PayloadIndexes;
import io.flashvec.index.segment.BuildSpec;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.SegmentFormat;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.DiskFullException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable half of a shard: seal → build → install → checkpoint → WAL truncation, and the
 * install of a compaction's result.
 *
 * <ol>
 *   <li><b>Seal</b> ({@link #enqueue}): the writer froze its growing segment at a record boundary;
 *       it waits here, searched exactly or by its live graph, with the WAL sequence it covers.
 *   <li><b>Build</b> (on the build executor): the segment's files are written into {@code
 *       seg-<id>.tmp/} and renamed to {@code seg-<id>/} — from its finished live graph (ADR 0011)
 *       or by the segment builder (in cluster mode on an index node).
 *   <li><b>Install</b> (write lock): deletions made during the build move to the new segment, a
 *       snapshot with it instead of the frozen one is published, point locations move.
 *   <li><b>Checkpoint</b>: deletion bitmaps and the manifest ({@link ShardManifest}) are written;
 *       the manifest is the commit point. Then the WAL is truncated up to the seal.
 * </ol>
 *
 * Recovery ({@link #openSegments}) reads the manifest, opens the segments it lists and removes what
 * an interrupted step left behind; the WAL replays from the checkpoint. ADR 0004 and 0006 give the
 * crash analysis.
 *
 * <p>Threads: {@link #enqueue}, {@link #setDeferBuilds} and the installs run under the shard's
 * write lock; builds run on the build executor; the rest is thread-safe.
 */
final class SealPipeline {

  private static final Logger LOG = LoggerFactory.getLogger(SealPipeline.class);

  /**
   * A frozen segment waiting for its index build, the WAL position it covers, and the room that
   * build needs ({@link #owedBytes}).
   */
  private record Pending(GrowingSegment segment, long sealSeq, long owes) {}

  private final Path dir;
  private final Path segmentsDir;
  private final FileIO io;
  private final Shard.Options options;
  private final Distance distance;
  private final IndexParams index;
  private final ShardParts parts;
  private final SegmentFormat format;
  private final SpaceGuard space;
  private final ReentrantLock writeLock;
  private final SegmentSet segments;
  private final IdLocations locations;
  private final PayloadIndexes payloadIndexes;
  private final BackgroundJobs jobs;
  private final OptimizationTracker tracker;
  private Runnable onInstall = () -> {};

  /** Installs whose {@link #onInstall} has not run yet. */
  private final java.util.concurrent.atomic.AtomicInteger installing =
      new java.util.concurrent.atomic.AtomicInteger();

  private final ArrayDeque<Pending> pending = new ArrayDeque<>(); // guarded by writeLock
  private long checkpointSeq; // guarded by writeLock
  private Wal wal; // set by start, before any build
  private boolean started; // guarded by writeLock
  private volatile boolean deferBuilds;
  private volatile String buildFailure;
  private volatile int buildingSegment = -1; // the frozen segment the running build indexes
  private volatile String checkpointFailure;
  private final Condition sealRoom; // signalled when a frozen segment leaves pending
  private volatile boolean buildsStalled; // a build waits for disk space or failed
  // a collection without a primary vector: a raw seal is a segment's final form
  private final boolean noPrimary;
  private final AtomicLong pendingOwes = new AtomicLong(); // sum of pending's owes
  private volatile long buildingOwes; // owes of the running build, 0 if none

  SealPipeline(ShardParts parts) {
    this.dir = parts.dir();
    this.segmentsDir = dir.resolve("segments");
    this.io = parts.options().io();
    this.options = parts.options();
    this.distance = parts.distance();
    this.noPrimary = parts.dimension() == 0;
    this.index = parts.index();
    this.parts = parts;
    this.format = parts.format();
    this.space = parts.space();
    this.writeLock = parts.writeLock();
    this.sealRoom = writeLock.newCondition();
    this.segments = parts.segments();
    this.locations = parts.locations();
    this.payloadIndexes = parts.payloadIndexes();
    this.jobs = parts.jobs();
    this.tracker = parts.tracker();
  }

  /** Sets what runs after each install, outside the lock (the compactor looks for work). */
  void onInstall(Runnable r) {
    onInstall = r;
  }

  /**
   * Recovery: removes what interrupted writes left ({@code *.tmp} files and directories), reads the
   * manifest, opens its segments (verifying checksums), registers them and their live ids, and
   * removes segment directories the manifest does not list (builds a crash interrupted). Returns
   * the sealed segments; the WAL replays from {@link #checkpointSeq()} + 1.
   */
  List<SealedSegment> openSegments() throws IOException {
    List<SealedSegment> out = new ArrayList<>();
    for (Path t : io.list(dir, "*.tmp")) {
      // A manifest write killed before its rename: the previous manifest is still in place.
      LOG.warn("removing the leftover of an interrupted manifest write [file={}]", t);
      io.deleteTree(t);
    }
    ShardManifest m = ShardManifest.read(io, dir);
    checkpointSeq = m.checkpointSeq();
    segments.startIdsAt(m.nextSegmentId());
    Set<String> keep = new HashSet<>();
    try {
      for (int id : m.segmentIds()) {
        Path p = segmentPath(id);
        keep.add(p.getFileName().toString());
        for (Path t : io.list(p, "*.tmp")) {
          // A checkpoint killed while replacing deleted.fvs (the old file is still in place), or a
          // payload index build killed before its rename (a directory, never empty: Lucene's
          // files): both are rewritten when needed.
          LOG.warn("removing the leftover of an interrupted write [file={}]", t);
          io.deleteTree(t);
        }
        SealedSegment s = format.open(io, p, id);
        out.add(s);
        segments.adopt(s);
        payloadIndexes.register(s, p); // its ids need no entry: it finds them itself
      }
    } catch (IOException | RuntimeException e) {
      segments.closeAdopted();
      throw e;
    }
    for (Path p : io.list(segmentsDir, "seg-*")) {
      if (!keep.contains(p.getFileName().toString())) {
        LOG.warn("removing segment files not in the manifest (interrupted build) [dir={}]", p);
        io.deleteTree(p);
      }
    }
    return out;
  }

  /** The WAL sequence the sealed segments cover (recovery replays the records after it). */
  long checkpointSeq() {
    return checkpointSeq;
  }

  /**
   * Ends recovery (write lock held): the WAL is replayed, so builds may run and checkpoints may
   * truncate it; the segments sealed during the replay are submitted.
   */
  void start(Wal w) {
    this.wal = w;
    started = true;
    for (Pending p : pending) {
      submitBuild(p);
    }
  }

  /** Whether recovery has ended ({@link #start}). */
  boolean started() {
    return started;
  }

  /**
   * Takes a segment the writer just froze (write lock held): it covers the WAL records up to {@code
   * sealSeq}; its build is submitted unless the shard is still recovering or defers builds.
   */
  void enqueue(GrowingSegment sealed, long sealSeq) {
    Pending p = new Pending(sealed, sealSeq, builds() ? sealBytes(sealed) : 0);
    pending.addLast(p);
    pendingOwes.addAndGet(p.owes());
    if (started) {
      submitBuild(p);
    }
  }

  /**
   * The room the builds of the frozen segments still need, each as its build's free-space check
   * estimates it; the running build is not counted: it found its room when it started, and what it
   * wrote is no longer free. Writes leave this free above the reserve (with the merge that segments
   * sealed raw owe, {@link ShardCompactor#owedBytes}), so they cannot take the room of a build of
   * points already acknowledged. Lock-free, so an estimate while builds start and end.
   */
  long owedBytes() {
    return Math.max(0, pendingOwes.get() - buildingOwes);
  }

  /** How many frozen segments wait for their build (write lock held). */
  int pendingCount() {
    return pending.size();
  }

  /**
   * Waits up to {@code nanos} for a frozen segment's install, a change of the bulk-load mode or
   * {@link #wakeWriters}, releasing the write lock meanwhile (write lock held); returns the nanos
   * left.
   */
  long awaitInstall(long nanos) throws InterruptedException {
    return sealRoom.awaitNanos(nanos);
  }

  /** Wakes the writers waiting in {@link #awaitInstall} (write lock held; the shard closes). */
  void wakeWriters() {
    sealRoom.signalAll();
  }

  /**
   * Whether the last build was postponed for lack of disk space or failed: writers then do not wait
   * for it (they would wait for the disk, or for ever), and go on to the free-space check.
   */
  boolean buildsStalled() {
    return buildsStalled;
  }

  /** Marks builds stalled and wakes the writers waiting for an install. */
  private void stalled() {
    writeLock.lock();
    try {
      buildsStalled = true;
      sealRoom.signalAll();
    } finally {
      writeLock.unlock();
    }
  }

  /** The frozen segments waiting for their build, oldest first (write lock held). */
  List<GrowingSegment> frozen() {
    List<GrowingSegment> out = new ArrayList<>(pending.size());
    for (Pending p : pending) {
      out.add(p.segment());
    }
    return out;
  }

  /**
   * Bulk-load mode (write lock held): while {@code defer} is true sealed segments are sealed raw
   * when {@link #rawSeals} allows (their graphs wait for the merge after the load, see {@link
   * ShardCompactor}), else not built at all (they stay in memory, searched exactly, and the WAL is
   * not truncated); setting it back to false submits the deferred builds.
   */
  void setDeferBuilds(boolean defer) {
    deferBuilds = defer;
    sealRoom.signalAll();
    if (!defer && started) {
      for (Pending p : pending) {
        if (p.segment().state() != Segment.State.INDEXING) {
          submitBuild(p);
        }
      }
    }
  }

  /** Whether builds are deferred (bulk load). */
  boolean deferBuilds() {
    return deferBuilds;
  }

  /** Frozen segments waiting for (or in) an index build that will run: 0 when none are built. */
  int buildsPending() {
    writeLock.lock();
    try {
      return builds() ? pending.size() : 0;
    } finally {
      writeLock.unlock();
    }
  }

  /** Sealed segments waiting for a deferred index build. */
  int deferredBuilds() {
    writeLock.lock();
    try {
      if (!builds()) {
        return 0;
      }
      int n = 0;
      for (Pending p : pending) {
        if (p.segment().state() != Segment.State.INDEXING) {
          n++;
        }
      }
      return n;
    } finally {
      writeLock.unlock();
    }
  }

  /** Whether segments wait for (or are in) an index build. */
  boolean indexing() {
    writeLock.lock();
    try {
      if (!builds()) {
        return false;
      }
      if (installing.get() > 0) {
        return true;
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

  /**
   * The frozen segments waiting for an index build that will run (when builds run at all), with
   * their live points, oldest first; segments in {@code busy} (their build runs) are left out.
   */
  List<Optimizations.Queued> queuedBuilds(Set<Integer> busy) {
    writeLock.lock();
    try {
      if (!builds()) {
        return List.of();
      }
      List<Optimizations.Queued> out = new ArrayList<>();
      for (Pending p : pending) {
        GrowingSegment f = p.segment();
        if (!busy.contains(f.id())) {
          out.add(
              new Optimizations.Queued(
                  Optimizations.INDEXING, List.of(tracker.segment(f.id(), f.liveCount()))));
        }
      }
      return out;
    } finally {
      writeLock.unlock();
    }
  }

  /** The last index build failure, or {@code null}. */
  String buildFailure() {
    return buildFailure;
  }

  /** The last checkpoint failure after an install, or {@code null}. */
  String checkpointFailure() {
    return checkpointFailure;
  }

  /** Whether sealed segments are built at all (else they stay in memory, searched exactly). */
  private boolean builds() {
    return options.buildExecutor() != null && !index.type().equals(IndexParams.FLAT);
  }

  private void submitBuild(Pending p) {
    if (!builds()) {
      return; // stays a memory-resident, exactly searched segment; the WAL keeps its records
    }
    if (deferBuilds && !rawSeals()) {
      return; // bulk load (indexing_threshold 0): built when the load ends, see setDeferBuilds
    }
    p.segment().markIndexing(true);
    options.buildExecutor().execute(() -> build(p));
  }

  /** Runs on the build executor: builds the segment's index, then installs and checkpoints. */
  private void build(Pending p) {
    if (!jobs.enter()) {
      p.segment().markIndexing(false); // stopping: built again when the shard next opens
      return;
    }
    try {
      buildJob(p);
    } finally {
      jobs.exit();
    }
  }

  private void buildJob(Pending p) {
    GrowingSegment f = p.segment();
    int[] liveOrds = f.liveOrdinals();
    boolean raw = sealsRaw(f, liveOrds.length);
    boolean fromGraph = !raw && sealFromLiveGraph(f, liveOrds.length);
    long need = buildBytes(f, fromGraph ? null : liveOrds);
    if (!space.fits(need)) {
      postponeBuild(p, need, "not enough free space");
      return;
    }
    int newId = segments.allocateId();
    Path target = segmentPath(newId);
    long t0 = System.nanoTime();
    SealedSegment built = null;
    boolean installed = false;
    buildingSegment = f.id();
    buildingOwes = p.owes();
    OptimizationTracker.Running track =
        tracker.start(
            Optimizations.INDEXING,
            newId,
            new int[] {f.id()},
            new long[] {liveOrds.length},
            fromGraph ? () -> f.graph().size() : null);
    try {
      if (liveOrds.length > 0) {
        io.createDirectories(segmentsDir);
        if (raw) {
          // a bulk load outran the live graph: write the points, a merge builds their graph
          format.writeRaw(io, target, newId, f, liveOrds, newestSealed(), jobs::cancelled);
        } else if (fromGraph) {
          // ADR 0011: the live graph is the segment's graph; finish it here and write it.
          f.indexSome(Integer.MAX_VALUE, jobs::cancelled);
          if (jobs.cancelled()) {
            throw new CancellationException("shard closing");
          }
          format.writeFromGraph(io, target, newId, f, newestSealed(), jobs::cancelled);
          liveOrds = new int[f.size()];
          for (int i = 0; i < liveOrds.length; i++) {
            liveOrds[i] = i;
          }
        } else {
          options
              .segmentBuilder()
              .build(
                  new BuildSpec(
                      io,
                      target,
                      newId,
                      List.of(f),
                      List.<int[]>of(liveOrds),
                      f.dimension(),
                      distance,
                      parts.writeParams(liveOrds.length),
                      null,
                      jobs::cancelled));
        }
        built = format.open(io, target, newId);
        // adopted before anything else can fail, so that a failure discards (closes) it
        segments.adopt(built);
        liveOrds = inBuildOrder(liveOrds, built.buildOrder(io));
        payloadIndexes.openDisk(built, target);
      }
      install(p, built, liveOrds);
      installed = true;
      track.done();
      space.succeeded();
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
          raw ? "none (raw)" : fromGraph ? "live" : "built");
    } catch (Throwable t) {
      if (!installed) {
        if (built != null) {
          discard(built);
        }
        removeUnfinished(target);
      }
      if (t instanceof CancellationException || jobs.cancelled()) {
        track.cancelled("the shard is closing; the build runs again when it opens");
        f.markIndexing(false);
        LOG.info(
            "index build cancelled, its files removed; it runs again from the WAL when the shard opens [dir={}, segment={}, millis={}]",
            dir,
            f.id(),
            (System.nanoTime() - t0) / 1_000_000);
      } else if (DiskFullException.isDiskFull(t)) {
        track.cancelled("the disk filled up; the build runs again when there is room");
        postponeBuild(p, need, "the disk filled up, its files removed");
      } else {
        track.failed(t.toString());
        buildFailure = t.toString();
        stalled();
        f.markIndexing(false);
        LOG.error(
            "index build failed; the segment stays in memory and searched exactly [dir={}, segment={}]",
            dir,
            f.id(),
            t);
      }
    } finally {
      buildingSegment = -1;
      buildingOwes = 0;
    }
  }

  /**
   * The frozen segment's ordinal of each ordinal of the segment built from it: {@code ords} (the
   * build's input) rearranged in the built segment's {@code order} ({@link
   * SealedSegment#buildOrder}; {@code null}: unchanged).
   */
  static int[] inBuildOrder(int[] ords, int[] order) {
    if (order == null) {
      return ords;
    }
    if (order.length != ords.length) {
      throw new IllegalStateException(
          "built segment does not hold its input [input="
              + ords.length
              + ", built="
              + order.length
              + "]");
    }
    int[] out = new int[ords.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = ords[order[i]];
    }
    return out;
  }

  /** Sees one point of a compaction: its new ordinal and where it came from. */
  @FunctionalInterface
  interface BuiltPoint {
    void accept(int builtOrd, int source, int sourceOrd) throws IOException;
  }

  /**
   * Calls {@code each} for every ordinal of a segment built from the concatenated {@code ords} of
   * its sources, its input rearranged in {@code order} ({@link SealedSegment#buildOrder}; {@code
   * null}: ordinal {@code i} is input {@code i}).
   */
  static void forEachBuilt(List<int[]> ords, int[] order, BuiltPoint each) throws IOException {
    int[] starts = new int[ords.size() + 1];
    for (int j = 0; j < ords.size(); j++) {
      starts[j + 1] = starts[j] + ords.get(j).length;
    }
    int n = starts[ords.size()];
    if (order != null && order.length != n) {
      throw new IllegalStateException(
          "built segment does not hold its input [input=" + n + ", built=" + order.length + "]");
    }
    for (int i = 0; i < n; i++) {
      int pos = order == null ? i : order[i];
      int j = java.util.Arrays.binarySearch(starts, pos);
      if (j < 0) {
        j = -j - 2; // the source whose range holds pos
      } else {
        while (starts[j + 1] == pos) {
          j++; // skip sources with no points
        }
      }
      each.accept(i, j, ords.get(j)[pos - starts[j]]);
    }
  }

  /** The frozen segment the running build indexes, or -1. */
  int buildingSegment() {
    return buildingSegment;
  }

  /**
   * What building {@code f} writes, with a margin: its segment files ({@code ords}: the live
   * points; {@code null}: all, from its live graph), its vectors file (sparse vectors; an upper
   * bound) and, with a payload schema, its payload index.
   */
  private long buildBytes(GrowingSegment f, int[] ords) {
    int n = ords == null ? f.size() : ords.length;
    long payload = 0;
    for (int i = 0; i < n; i++) {
      byte[] b = f.payloadAt(ords == null ? i : ords[i]);
      payload += b == null ? 0 : b.length;
    }
    long bytes = format.estimateBytes(n, f.dimension(), payload) + f.vectorsFileBytes();
    if (!payloadIndexes.schema().isEmpty()) {
      bytes += 2 * payload;
    }
    return SpaceGuard.withMargin(bytes);
  }

  /**
   * What building all of {@code f} writes, with a margin, as {@link #buildBytes} estimates it but
   * from the payload bytes the segment counted (no pass over its points: it runs as it freezes).
   */
  private long sealBytes(GrowingSegment f) {
    long payload = f.payloadBytes();
    long bytes = format.estimateBytes(f.size(), f.dimension(), payload) + f.vectorsFileBytes();
    if (!payloadIndexes.schema().isEmpty()) {
      bytes += 2 * payload;
    }
    return SpaceGuard.withMargin(bytes);
  }

  /**
   * Retries a build that found too little free space later (see {@link SpaceGuard}): one log line
   * per attempt, and the segment stays in memory, searched exactly, its records in the WAL. Writes
   * that would take its room above the reserve are refused meanwhile ({@link #owedBytes}).
   */
  private void postponeBuild(Pending p, long need, String why) {
    stalled();
    long delay = space.nextRetryMillis();
    LOG.warn(
        "index build postponed: {}; retrying in {} ms [dir={}, segment={}, neededBytes={}, usableBytes={}, minFreeBytes={}]",
        why,
        delay,
        dir,
        p.segment().id(),
        need,
        space.usableBytes(),
        space.minFreeBytes());
    CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS).execute(() -> retryBuild(p));
  }

  private void retryBuild(Pending p) {
    writeLock.lock();
    try {
      if (jobs.cancelled() || !pending.contains(p)) {
        p.segment().markIndexing(false);
        return;
      }
      if (deferBuilds && !rawSeals()) {
        p.segment().markIndexing(false); // a bulk load began: built when it ends
        return;
      }
      submitBuild(p);
    } catch (RejectedExecutionException e) {
      p.segment().markIndexing(false); // the node is shutting down
    } finally {
      writeLock.unlock();
    }
  }

  /** Removes a build's or compaction's output that was not installed (nothing refers to it). */
  void removeUnfinished(Path target) {
    try {
      io.deleteTree(target.resolveSibling(target.getFileName() + ".tmp"));
      io.deleteTree(target);
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

  /**
   * A frozen segment whose live graph holds less than this share of its points is sealed raw
   * ({@link #sealsRaw}): one that holds (almost) nothing, as after a WAL replay. A graph further
   * along is finished here: its incremental insert costs far less CPU per point than the
   * partitioned build a raw segment's merge runs (measured side by side, 300k × 96: 93 against 795
   * CPU seconds to green), even though writers may wait for it.
   */
  static final double RAW_SEAL_GRAPH_SHARE = 0.1;

  /**
   * Whether segments may be sealed raw: a raw segment's graph is built by a merge, so only when
   * merges run on their own (automatic compaction with an executor); always in a shard without a
   * primary vector, whose every seal writes the same segment (ids, payloads, vectors file).
   */
  boolean rawSeals() {
    Shard.Compaction c = options.compaction();
    // without a primary vector there is no graph for a merge to build: always
    return builds() && (noPrimary || (c.automatic() && c.executor() != null));
  }

  /**
   * Whether a frozen segment is sealed raw ({@link SegmentFormat#writeRaw}) rather than with a
   * graph: during a bulk load (builds deferred), and when its live graph holds less than {@value
   * #RAW_SEAL_GRAPH_SHARE} of its points (the load outran it, or a WAL replay, which inserts into
   * no live graph). Finishing such a graph here and merging it later would build most of its points
   * twice; sealed raw they are written in seconds and built once, by the merge that takes them (ADR
   * 0031). A segment without a live graph at all (live indexing off) is built at its seal, as
   * before.
   */
  private boolean sealsRaw(GrowingSegment f, int live) {
    if (live == 0 || !rawSeals()) {
      return false;
    }
    if (deferBuilds) {
      return true;
    }
    if (f.graph() == null) {
      return false;
    }
    int held = f.graph().closed() ? 0 : f.graph().size();
    return held < RAW_SEAL_GRAPH_SHARE * f.size();
  }

  /** The newest sealed segment (its PQ codebook is reused when a live graph is sealed), or null. */
  private SealedSegment newestSealed() {
    SealedSegment newest = null;
    for (SealedSegment s : segments.current().sealed()) {
      if (newest == null || s.id() > newest.id()) {
        newest = s;
      }
    }
    return newest;
  }

  /**
   * Replaces a frozen segment by its built index and checkpoints the WAL. Under the write lock:
   * deletions that happened during the build move to the new segment; the new snapshot searches the
   * index instead of the frozen segment (kept readable as retired); locations move; then the
   * retired segment is dropped. Finally deletion bitmaps and the manifest are written and the WAL
   * is truncated up to the seal.
   */
  private void install(Pending p, SealedSegment built, int[] liveOrds) throws IOException {
    GrowingSegment f = p.segment();
    boolean counted = false;
    writeLock.lock();
    try {
      if (jobs.closed()) {
        if (built != null) {
          segments.discard(built);
          io.deleteTree(built.directory());
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
      Snapshot snap = segments.current();
      List<SealedSegment> sealed = new ArrayList<>(snap.sealed());
      if (built != null) {
        sealed.add(built);
      }
      List<GrowingSegment> memory = new ArrayList<>(snap.memory());
      memory.remove(f);
      segments.publish(sealed, memory, List.of(f));
      if (built != null) {
        // the built segment finds these ids itself now; entries moved since stay
        locations.dropAll(
            liveOrds.length, i -> f.idAt(liveOrds[i]), i -> IdLocations.pack(f.id(), liveOrds[i]));
      }
      segments.dropRetired();
      payloadIndexes.drop(f);
      // still indexing until the compactor has looked for work (onInstall): a shard that is
      // neither indexing nor compacting in between would be reported green, or settled, early
      installing.incrementAndGet();
      counted = true;
      if (pending.remove(p)) {
        pendingOwes.addAndGet(-p.owes());
      }
      buildsStalled = false;
      sealRoom.signalAll();
      io.crashPoint(CrashPoint.SEGMENT_INSTALLED);
      checkpointAfterInstall(p.sealSeq(), "seal");
    } catch (Throwable t) {
      if (counted) {
        installing.decrementAndGet();
        counted = false;
      }
      throw t;
    } finally {
      writeLock.unlock();
    }
    try {
      onInstall.run();
    } finally {
      if (counted) {
        installing.decrementAndGet();
      }
    }
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
  /**
   * A recode keeps its source's graph but may have started before the source recorded the settings
   * it was built with (a change of the graph settings records them first): the new segment then
   * says nothing, which reads as built with the collection's new settings, and would never be
   * rebuilt. At the install (write lock held, so after any such record) it takes the source's.
   */
  private void carryGraphBuild(SealedSegment source, SealedSegment built) throws IOException {
    SealedSegment.GraphBuild mine = built.graphBuild();
    SealedSegment.GraphBuild theirs = source.graphBuild();
    if (mine != null
        && theirs != null
        && mine.buildSearchList() == 0
        && theirs.buildSearchList() != 0
        && mine.maxDegree() == theirs.maxDegree()) {
      built.recordBuildSearchList(io, theirs.buildSearchList());
    }
  }

  boolean installCompaction(List<SealedSegment> sources, List<int[]> ords, SealedSegment built)
      throws IOException {
    int[] order = built == null ? null : built.buildOrder(io);
    writeLock.lock();
    try {
      if (jobs.closed()) {
        return false;
      }
      if (built != null) {
        forEachBuilt(
            ords,
            order,
            (i, j, ord) -> {
              if (sources.get(j).isDeleted(ord)) {
                built.markDeleted(i);
              }
            });
      }
      Snapshot snap = segments.current();
      List<SealedSegment> sealed = new ArrayList<>(snap.sealed().size());
      boolean placed = false;
      for (SealedSegment s : snap.sealed()) {
        if (sources.contains(s)) {
          if (!placed && built != null) {
            sealed.add(built);
          }
          placed = true;
        } else {
          sealed.add(s);
        }
      }
      if (built != null && sources.size() == 1) {
        carryGraphBuild(sources.getFirst(), built);
      }
      // sealed points have no entries: the new segment finds its ids itself
      segments.publish(sealed, snap.memory(), List.copyOf(sources));
      segments.dropRetired();
      // commit point: the manifest lists the new segment, not the sources
      if (checkpointAfterInstall(checkpointSeq, "compaction")) {
        io.crashPoint(CrashPoint.COMPACTION_COMMITTED);
        for (SealedSegment src : sources) {
          segments.dropMembership(src, true);
        }
      }
      return true;
    } finally {
      writeLock.unlock();
    }
  }

  /** Closes an adopted segment that will not be installed (its files are the caller's). */
  void discard(SealedSegment built) {
    writeLock.lock();
    try {
      segments.discard(built);
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
    for (SealedSegment d : segments.current().sealed()) {
      d.writeDeleted(io);
      ids.add(d.id());
    }
    checkpointSeq = Math.max(checkpointSeq, cp);
    io.crashPoint(CrashPoint.CHECKPOINT_BITMAPS_WRITTEN);
    ShardManifest.write(io, dir, new ShardManifest(checkpointSeq, segments.nextId(), ids));
    io.crashPoint(CrashPoint.CHECKPOINT_MANIFEST_WRITTEN);
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

  /** The directory of segment {@code id}. */
  Path segmentPath(int id) {
    return segmentsDir.resolve(String.format(Locale.ROOT, "seg-%010d", id));
  }

  /** The directory that holds the segment directories. */
  Path segmentsDirectory() {
    return segmentsDir;
  }
}
