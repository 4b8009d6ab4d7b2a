package io.flashvec.index.shard;

import io.flashvec.index.IndexParams;
import io.flashvec.index.Optimizations;
import io.flashvec.index.disk.PqCodebook;
import io.flashvec.index.diskann.PqTrainer;
import io.flashvec.index.memory.MemoryLimits;
import io.flashvec.index.segment.BuildSpec;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.index.segment.SegmentFormat;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.DiskFullException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Background compaction of one shard's sealed segments.
 *
 * <h2>What is compacted</h2>
 *
 * <ul>
 *   <li><b>Rewrite:</b> a segment whose deleted share reaches {@link
 *       Shard.Compaction#deletedFraction()} is rebuilt from its live points only (a segment with no
 *       live point is simply dropped). Deleted nodes cost graph hops and disk, and PQ/graph quality
 *       of the survivors improves with a rebuild.
 *   <li><b>Merge:</b> sealed segments of similar size are merged in tiers by {@link
 *       TieredMergePolicy}, at most {@link Shard.Compaction#segmentsPerTier()} per tier and up to
 *       {@link Shard.Compaction#maxSegmentPoints()} live points per segment, so a shard of N points
 *       is searched through O(log N) graphs and each point is rebuilt about once per tier.
 *   <li><b>Raw segments</b> (sealed without a graph while a load outran the live graph) are built
 *       into a graph by a merge as soon as writes pause (2 s without an upsert by default), a bulk
 *       load ends, or they hold a tenth of the maximum segment.
 * </ul>
 *
 * <h2>How</h2>
 *
 * {@link #plan} picks the sources under the shard's write lock, and the job captures their live
 * ordinals and a snapshot reference (so the sources stay mapped however long the build takes). The
 * new segment is built outside the lock by the shard's {@link SegmentBuilder} into {@code
 * seg-<new>.tmp/}, renamed to {@code seg-<new>/}, then {@link SealPipeline#installCompaction} swaps
 * it in and commits by writing the manifest. See ADR 0006 for the crash analysis.
 *
 * <h2>Threads and throttling</h2>
 *
 * At most one compaction per shard runs at a time ({@link #lock}); jobs run on the configured
 * executor (the server's single low-priority {@code flashvec-compaction} thread, shared by all
 * shards), and jvector's build work runs on {@link Shard.Compaction#pool()} (the server gives it
 * one low-priority worker per core), so a merge uses the cores queries leave idle.
 */
final class ShardCompactor {

  private static final Logger LOG = LoggerFactory.getLogger(ShardCompactor.class);

  /** Why sources were chosen. */
  enum Reason {
    DELETED,
    MERGE,
    /**
     * Rewrite one segment around its graph with other PQ codes: smaller ones as the resident index
     * nears its slice, larger ones once writes stop and the slice has room for them.
     */
    RECODE,
    /**
     * Build one segment's graph again: it was built with other graph settings ({@code m}, {@code
     * ef_construct}) than the collection's now.
     */
    REBUILD
  }

  /**
   * The segments one compaction replaces, and for a {@link Reason#RECODE} the PQ code size ({@code
   * 0}: what {@link ShardParts#writeParams} gives when it runs) and another segment's codebook of
   * that size to encode with ({@code null}: one is trained).
   */
  record Plan(
      Reason reason,
      List<SealedSegment> sources,
      int codeBytes,
      PqCodebook codebook,
      int trainingSample) {

    Plan(Reason reason, List<SealedSegment> sources) {
      this(reason, sources, 0, null, PqTrainer.TRAINING_SAMPLE);
    }
  }

  /**
   * The codebook of {@code bytes} subspaces of the largest segment among {@code disk} that has one,
   * or {@code null}: a recode to that size encodes with it instead of training its own (as
   * consecutive seals share the newest segment's), so it needs no training sample on the heap.
   */
  static PqCodebook codebookOf(List<SealedSegment> disk, int bytes) {
    PqCodebook found = null;
    int size = -1;
    for (SealedSegment d : disk) {
      PqCodebook book = d.hasGraph() ? d.codebook() : null;
      if (book != null && book.subspaces() == bytes && d.size() > size) {
        found = book;
        size = d.size();
      }
    }
    return found;
  }

  /**
   * A planned compaction: its sources' live ordinals at planning time, a snapshot reference that
   * keeps them open, and the new segment's id.
   */
  record Job(Plan plan, List<int[]> ords, Snapshot held, int newId) {}

  private final ShardParts ctx;
  private final SealPipeline pipeline;
  private final Shard.Compaction config;
  private final TieredMergePolicy policy;
  private final ReentrantLock lock = new ReentrantLock();
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private final AtomicInteger requested = new AtomicInteger();
  private final AtomicInteger passes = new AtomicInteger();
  private final AtomicLong done = new AtomicLong();
  private volatile Set<Integer> running = Set.of();
  private volatile int targetSegments;
  private volatile String failure;

  ShardCompactor(ShardParts ctx, SealPipeline pipeline) {
    this.ctx = ctx;
    this.pipeline = pipeline;
    this.config = ctx.options().compaction();
    int floor = ctx.options().sealThresholdPoints();
    int maxSegment = config.maxSegmentPoints();
    MemoryLimits memory = ctx.options().memory();
    if (memory != null) {
      // Segments are sealed at the shard's share of the growing slice (with one shard writing).
      floor = ctx.options().sealThresholdPoints(ctx.dimension(), ctx.index().maxDegree());
    }
    // A merge larger than the build memory is built in partitions (ADR 0026), so memory does not
    // bound its size; a segment's PQ codes are one array, which does.
    int pqBytes = PqTrainer.subspaces(ctx.index().pqSubspaces(), ctx.dimension());
    int codesFit = Integer.MAX_VALUE / Math.max(1, pqBytes);
    if (codesFit < maxSegment) {
      LOG.info(
          "largest merge from the PQ code size [dir={}, maxSegmentPoints={}, configured={},"
              + " pqBytes={}]",
          ctx.dir(),
          codesFit,
          maxSegment,
          pqBytes);
      maxSegment = codesFit;
    }
    this.policy =
        new TieredMergePolicy(
            new TieredMergePolicy.Settings(
                floor,
                maxSegment,
                config.segmentsPerTier(),
                Math.max(TieredMergePolicy.MAX_MERGE_AT_ONCE, config.segmentsPerTier()),
                config.deletedFraction()));
  }

  /**
   * Sets the number of sealed segments the shard keeps (Qdrant's {@code default_segment_number};
   * {@code 0}: the tiers choose, see {@link TieredMergePolicy#find(List, boolean,
   * TieredMergePolicy.Hold, int)}) and schedules a pass for it.
   */
  void setTargetSegments(int target) {
    boolean changed = target != targetSegments;
    targetAtOpen(target);
    if (changed) {
      maybeSchedule();
    }
  }

  /** Sets the target before the shard opens its segments, without scheduling a pass. */
  void targetAtOpen(int target) {
    if (target < 0) {
      throw new IllegalArgumentException("negative segment target [target=" + target + "]");
    }
    targetSegments = target;
  }

  /** Called by the shard's writer after it deleted a point of a sealed segment. */
  void onDelete(Segment s) {
    int size = s.size();
    if (size > 0 && (size - s.liveCount()) >= config.deletedFraction() * size) {
      maybeSchedule();
    }
  }

  /** Queues a threshold-driven pass on the executor unless one is queued or there is none. */
  void maybeSchedule() {
    Executor ex = config.executor();
    if (ex == null
        || !config.automatic()
        || ctx.jobs().cancelled()
        || !scheduled.compareAndSet(false, true)) {
      return;
    }
    try {
      ex.execute(
          () -> {
            // busy throughout: counted before the scheduled flag drops, so that no moment between
            // the two reads as idle (a newer maybeSchedule may then queue the next pass)
            passes.incrementAndGet();
            try {
              scheduled.set(false);
              runAll(false);
            } finally {
              passes.decrementAndGet();
            }
          });
    } catch (RuntimeException e) {
      scheduled.set(false); // executor shut down: the server is stopping
    }
  }

  /** See {@link Shard#compact(boolean)}. */
  CompletableFuture<Integer> request(boolean force) {
    Executor ex = config.executor();
    if (ex == null) {
      try {
        return CompletableFuture.completedFuture(runAll(force));
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    requested.incrementAndGet(); // busy from the request on, not only once the executor runs it
    try {
      return CompletableFuture.supplyAsync(
          () -> {
            try {
              return runAll(force);
            } finally {
              requested.decrementAndGet();
            }
          },
          ex);
    } catch (RuntimeException e) {
      requested.decrementAndGet();
      throw e;
    }
  }

  boolean busy() {
    return scheduled.get() || passes.get() > 0 || requested.get() > 0 || lock.isLocked();
  }

  /**
   * Whether {@link #plan} finds work among the current sealed segments that an automatic pass will
   * do: compaction is automatic and has an executor, and no failure stopped the last pass (its
   * error is reported instead; the next seal or delete retries it). True from the seal that makes a
   * tier full until the merge is installed, and while a merge postponed for lack of space waits for
   * its retry. Lock-free: the policy sees a snapshot's segments and their racy live counts.
   */
  boolean planned() {
    if (config.executor() == null
        || !config.automatic()
        || failure != null
        || ctx.jobs().cancelled()
        || !pipeline.started()) {
      return false;
    }
    // without codes that may grow: every point is indexed, and no pass may be coming to grow them
    return plan(ctx.segments().current().sealed(), false, rawHold(), false) != null;
  }

  Set<Integer> sourceIds() {
    return running;
  }

  /**
   * The next compaction an automatic pass will run, as Qdrant's queue of pending optimizations
   * shows it: what the policy picks among the current sealed segments, raw segments counted as due
   * even while they wait for writes or a bulk load to stop (they are work waiting), and nothing
   * that takes a segment in {@code busy} (the running compaction would pick its own sources again).
   * Empty when compactions do not run by themselves or the last one failed. An estimate: the
   * segments' live counts are racy, and the pass after this one is not planned.
   */
  List<Optimizations.Queued> queued(Set<Integer> busy) {
    if (config.executor() == null
        || !config.automatic()
        || failure != null
        || ctx.jobs().cancelled()
        || !pipeline.started()) {
      return List.of();
    }
    Plan plan = plan(ctx.segments().current().sealed(), false, TieredMergePolicy.Hold.NONE, false);
    if (plan == null || plan.sources().isEmpty()) {
      return List.of();
    }
    List<Optimizations.SegmentRef> refs = new ArrayList<>();
    for (SealedSegment d : plan.sources()) {
      if (busy.contains(d.id())) {
        return List.of();
      }
      refs.add(ctx.tracker().segment(d.id(), d.liveCount()));
    }
    return List.of(new Optimizations.Queued(optimizer(plan.reason()), refs));
  }

  /** The Qdrant optimizer name of a compaction done for {@code reason}. */
  static String optimizer(Reason reason) {
    return switch (reason) {
      case DELETED -> Optimizations.VACUUM;
      case MERGE -> Optimizations.MERGE;
      case RECODE, REBUILD -> Optimizations.CONFIG_MISMATCH;
    };
  }

  long done() {
    return done.get();
  }

  String failure() {
    return failure;
  }

  /** Runs compactions until the policy finds nothing more to do; returns how many ran. */
  private int runAll(boolean force) {
    if (!ctx.jobs().enter()) {
      return 0;
    }
    boolean more = false;
    lock.lock();
    try {
      int n = 0;
      // Bounded: each pass removes at least one source segment, a forced pass at most once each.
      for (int pass = 0; pass < MAX_PASSES && !ctx.jobs().cancelled(); pass++) {
        Job job = planJob(force);
        if (job == null) {
          break;
        }
        if (!runOne(job)) {
          break;
        }
        n++;
        more = pass == MAX_PASSES - 1;
      }
      return n;
    } finally {
      running = Set.of();
      lock.unlock();
      ctx.jobs().exit();
      if (more) {
        maybeSchedule(); // the bound stopped a run with work left: another pass takes it up
      } else {
        recheckRawLater(); // raw segments held while writes come are built once they stop
      }
    }
  }

  /** Compactions one run does at most before it yields the executor to other shards. */
  private static final int MAX_PASSES = 64;

  /**
   * Under the write lock, asks {@link #plan} about the current sealed segments; when it returns
   * sources, captures their live ordinals (consistent with the locations) and a snapshot reference
   * that keeps them open. {@code null} if the shard is closed or recovering, or there is nothing to
   * do.
   */
  private Job planJob(boolean force) {
    ctx.writeLock().lock();
    try {
      if (ctx.jobs().cancelled() || !pipeline.started()) {
        return null;
      }
      Plan plan = plan(ctx.segments().current().sealed(), force);
      if (plan == null || plan.sources().isEmpty()) {
        return null;
      }
      List<int[]> ords = new ArrayList<>(plan.sources().size());
      for (SealedSegment d : plan.sources()) {
        ords.add(recodesInPlace(plan, d) ? allOrdinals(d.size()) : d.liveOrdinals());
      }
      return new Job(plan, ords, ctx.segments().hold(plan.sources()), ctx.segments().allocateId());
    } finally {
      ctx.writeLock().unlock();
    }
  }

  /**
   * Whether {@code plan} rewrites {@code d} around its own graph ({@link SegmentFormat#recode}),
   * keeping every ordinal, deleted ones included, rather than building it anew from its live ones.
   */
  private boolean recodesInPlace(Plan plan, SealedSegment d) {
    return plan.reason() == Reason.RECODE && ctx.format().canRecode(d);
  }

  private static int[] allOrdinals(int n) {
    int[] all = new int[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    return all;
  }

  /**
   * Writes this recent count as "still coming" for raw segments ({@link TieredMergePolicy.Hold}) by
   * default ({@link Shard.Compaction#rawQuietNanos}): a bulk load's batches arrive well within it,
   * so its raw seals wait for one build at its end.
   */
  static final long RAW_WRITES_QUIET_NANOS = Shard.Compaction.DEFAULT_RAW_QUIET_NANOS;

  /** When the shard last took an upsert ({@link System#nanoTime}). */
  private volatile java.util.function.LongSupplier lastWriteNanos =
      () -> System.nanoTime() - Long.MAX_VALUE / 2;

  private final AtomicBoolean recheckQueued = new AtomicBoolean();

  /** Where the time of the shard's last upsert comes from (set once, before any write). */
  void lastWriteFrom(java.util.function.LongSupplier nanos) {
    this.lastWriteNanos = nanos;
  }

  /** How raw segments wait now: for a bulk load's end, for writes to stop, or not at all. */
  private TieredMergePolicy.Hold rawHold() {
    if (pipeline.deferBuilds()) {
      return TieredMergePolicy.Hold.BULK;
    }
    return System.nanoTime() - lastWriteNanos.getAsLong() < config.rawQuietNanos()
        ? TieredMergePolicy.Hold.WRITES
        : TieredMergePolicy.Hold.NONE;
  }

  /**
   * After a pass: while raw segments wait for writes to stop, looks again once they may have (after
   * {@link Shard.Compaction#rawQuietNanos}), so a load's raw segments are built when it ends, not
   * at the next write; likewise for segments whose codes may grow once writes stop ({@link #grow}).
   * One recheck per shard is queued at most; each requeues itself while the writes go on. A bulk
   * load's end schedules its own pass ({@link Shard#setDeferBuilds}).
   */
  private void recheckRawLater() {
    if (config.executor() == null
        || !config.automatic()
        || ctx.jobs().cancelled()
        || pipeline.deferBuilds()
        || config.rawQuietNanos() == 0
        || !recheckQueued.compareAndSet(false, true)) {
      return;
    }
    List<SealedSegment> sealed = ctx.segments().current().sealed();
    long wait;
    if (hasRaw(sealed)) {
      wait = config.rawQuietNanos();
    } else if (failure == null && grow(sealed, false) != null) {
      // not after a failure: a recode that failed waits for the next seal or delete, as merges do
      wait = GROW_QUIET_FACTOR * config.rawQuietNanos();
    } else {
      recheckQueued.set(false);
      return;
    }
    try {
      CompletableFuture.delayedExecutor(wait + wait / 8, TimeUnit.NANOSECONDS)
          .execute(
              () -> {
                recheckQueued.set(false);
                maybeSchedule();
              });
    } catch (RuntimeException e) {
      recheckQueued.set(false);
    }
  }

  private static boolean hasRaw(List<SealedSegment> sealed) {
    for (SealedSegment s : sealed) {
      if (!s.hasGraph()) {
        return true;
      }
    }
    return false;
  }

  /** The compaction policy ({@link TieredMergePolicy}) over the shard's disk segments. */
  Plan plan(List<SealedSegment> disk, boolean force) {
    return plan(disk, force, rawHold(), true);
  }

  /**
   * {@link #plan(List, boolean)} with raw segments waiting as {@code hold} says, and codes that may
   * grow ({@link #grow}) only when {@code grow}: a pass plans them, the status views do not.
   */
  private Plan plan(
      List<SealedSegment> disk, boolean force, TieredMergePolicy.Hold hold, boolean grow) {
    List<TieredMergePolicy.Seg> segs = new ArrayList<>(disk.size());
    for (SealedSegment d : disk) {
      segs.add(new TieredMergePolicy.Seg(d.size(), d.liveCount(), !d.hasGraph()));
    }
    Plan rebuild = rebuild(disk);
    if (rebuild != null) {
      return rebuild;
    }
    Plan recode = force ? null : recode(disk);
    if (recode != null) {
      return recode;
    }
    TieredMergePolicy.Pick pick = policy.find(segs, force, hold, targetSegments);
    if (pick == null) {
      return force || !grow ? null : grow(disk, true);
    }
    List<SealedSegment> sources = new ArrayList<>();
    pick.sources().forEach(i -> sources.add(disk.get(i)));
    return new Plan(
        pick.kind() == TieredMergePolicy.Kind.DELETED ? Reason.DELETED : Reason.MERGE, sources);
  }

  /**
   * The rebuild of a segment whose graph was built with other settings than the collection's now
   * ({@link SealedSegment.GraphBuild#differsFrom}): the one with the fewest live points first, so
   * the settings reach most segments soonest. {@code null} when every graph matches. A raw segment
   * has no graph yet; its merge builds it with the settings in force.
   */
  Plan rebuild(List<SealedSegment> disk) {
    IndexParams index = ctx.index();
    if (ctx.dimension() == 0 || index.type().equals(IndexParams.FLAT) || pipeline.deferBuilds()) {
      return null; // no graph, or index builds wait for a bulk load's end
    }
    SealedSegment best = null;
    for (SealedSegment d : disk) {
      SealedSegment.GraphBuild b = d.graphBuild();
      if (b != null
          && d.liveCount() > 0
          && b.differsFrom(index.maxDegree(), index.buildSearchList())
          && (best == null || d.liveCount() < best.liveCount())) {
        best = d;
      }
    }
    return best == null ? null : new Plan(Reason.REBUILD, List.of(best));
  }

  /**
   * Share of the resident slice from which a segment whose PQ codes are larger than the budget now
   * allows is rewritten with smaller ones before any merge (ADR 0025).
   */
  static final double RECODE_AT = 0.8;

  /**
   * Under a memory budget whose resident index fills more than {@link #RECODE_AT} of its slice: the
   * rewrite of the segment whose codes the size the budget allows now ({@link
   * ShardParts#writeParams}) would shrink most, or {@code null}. Codes chosen when the server held
   * fewer points stay with their segment until a merge rewrites it; in a shard whose largest
   * segments no longer merge (the top tier) this rewrites them before the slice is full and upserts
   * are refused. Only segments with a graph whose collection sets no code size.
   */
  private Plan recode(List<SealedSegment> disk) {
    MemoryLimits memory = ctx.options().memory();
    if (memory == null
        || ctx.index().pqSubspaces() > 0
        || ctx.dimension() == 0
        || memory.residentTotal() <= RECODE_AT * memory.residentBytes()) {
      return null;
    }
    int allowed = ctx.writeParams(0).pqSubspaces();
    if (allowed == 0) {
      return null; // the default size fits
    }
    SealedSegment best = null;
    long saved = 0;
    for (SealedSegment d : disk) {
      var book = d.hasGraph() ? d.codebook() : null;
      if (book == null || book.subspaces() <= allowed) {
        continue;
      }
      long s = (long) (book.subspaces() - allowed) * d.liveCount();
      if (s > saved) {
        saved = s;
        best = d;
      }
    }
    if (best == null) {
      return null;
    }
    PqCodebook reuse = codebookOf(disk, allowed);
    // a shrink must run whatever room is left: without a codebook to reuse, it trains on the
    // sample that fits beside the new codes in the build slice, however small
    int sample =
        reuse != null
            ? 0
            : Math.max(
                PqTrainer.trainingSampleWithin(
                    ctx.dimension(), memory.buildBytes() - (long) allowed * best.size()),
                PqTrainer.MIN_TRAINING_SAMPLE);
    return new Plan(Reason.RECODE, List.of(best), 0, reuse, sample);
  }

  /**
   * Writes stop for this many times {@link Shard.Compaction#rawQuietNanos} (20 s by default) before
   * codes are recoded larger: a load's pauses are shorter, and a recode of a large segment reads
   * all its vectors.
   */
  static final int GROW_QUIET_FACTOR = 10;

  /** Records the shard's resident index with the memory limits now (set once, at open). */
  private volatile Runnable residentRecorder = () -> {};

  void residentFrom(Runnable recorder) {
    this.residentRecorder = recorder;
  }

  /**
   * Under a memory budget, once the shard has taken no write for {@link #GROW_QUIET_FACTOR} times
   * the raw segments' quiet time ({@code quiet} false: whether or not it has), has no raw or frozen
   * segment waiting and nothing to merge: the rewrite with larger codes ({@link
   * ShardParts#idleCodeBytes}) of the segment that gains the most code bytes among those whose new
   * codes fit both the room left in the resident slice ({@link MemoryLimits#idleRoom}) and the
   * build slice (the new codes are built beside the old ones, and, unless another segment has a
   * codebook of that size to encode with, a codebook is trained: {@link PqTrainer#trainingBytes}),
   * or {@code null}. Codes are sized for the points held when a segment is written, with room for
   * the points still arriving; a shard whose load ended keeps codes smaller than its budget holds,
   * and recall falls with them (ADR 0025).
   */
  private Plan grow(List<SealedSegment> disk, boolean quiet) {
    MemoryLimits memory = ctx.options().memory();
    if (memory == null
        || ctx.index().pqSubspaces() > 0
        || ctx.dimension() == 0
        || pipeline.deferBuilds()
        || pipeline.pendingCount() > 0
        || hasRaw(disk)
        || (quiet
            && System.nanoTime() - lastWriteNanos.getAsLong()
                < GROW_QUIET_FACTOR * config.rawQuietNanos())) {
      return null;
    }
    int bytes = ctx.idleCodeBytes();
    if (bytes == 0) {
      return null;
    }
    PqCodebook reuse = codebookOf(disk, bytes);
    SealedSegment best = null;
    int bestSample = 0;
    long gain = 0;
    long room = -1;
    for (SealedSegment d : disk) {
      var book = d.hasGraph() ? d.codebook() : null;
      if (book == null || book.subspaces() >= bytes || !ctx.format().canRecode(d)) {
        continue;
      }
      if (room < 0) {
        residentRecorder.run(); // earlier recodes changed the segments without a write
        room = memory.idleRoom();
      }
      long more = (long) (bytes - book.subspaces()) * d.size();
      long g = (long) (bytes - book.subspaces()) * d.liveCount();
      // the new codes and the training (without a codebook to reuse) are built on the heap
      long left = memory.buildBytes() - (long) bytes * d.size();
      int sample = reuse != null ? 0 : PqTrainer.trainingSampleWithin(ctx.dimension(), left);
      if (more <= room && left >= 0 && (reuse != null || sample > 0) && g > gain) {
        gain = g;
        best = d;
        bestSample = sample;
      }
    }
    return best == null ? null : new Plan(Reason.RECODE, List.of(best), bytes, reuse, bestSample);
  }

  /** Builds and installs one planned compaction; false if it failed or the shard closed. */
  private boolean runOne(Job job) {
    List<SealedSegment> sources = job.plan().sources();
    List<Integer> ids = new ArrayList<>();
    for (SealedSegment d : sources) {
      ids.add(d.id());
    }
    running = Set.copyOf(ids);
    Path target = pipeline.segmentPath(job.newId());
    SealedSegment built = null;
    boolean installed = false;
    long t0 = System.nanoTime();
    int points = 0;
    long need = 0;
    OptimizationTracker.Running track = null;
    try {
      for (int[] o : job.ords()) {
        points += o.length;
      }
      need = outputBytes(job);
      if (points > 0 && !roomFor(need, ids)) {
        return false;
      }
      long[] live = new long[sources.size()];
      int[] sourceIds = new int[sources.size()];
      for (int i = 0; i < live.length; i++) {
        live[i] = job.ords().get(i).length;
        sourceIds[i] = ids.get(i);
      }
      // -1 until a build reports (partitioned builds do): the view shows no progress till then
      java.util.concurrent.atomic.AtomicLong progress =
          new java.util.concurrent.atomic.AtomicLong(-1);
      track =
          ctx.tracker()
              .start(optimizer(job.plan().reason()), job.newId(), sourceIds, live, progress::get);
      if (points > 0) {
        var io = ctx.options().io();
        io.createDirectories(pipeline.segmentsDirectory());
        if (recodesInPlace(job.plan(), sources.get(0))) {
          int bytes =
              job.plan().codeBytes() > 0
                  ? job.plan().codeBytes()
                  : ctx.writeParams(points).pqSubspaces();
          ctx.format()
              .recode(
                  io,
                  target,
                  job.newId(),
                  sources.get(0),
                  bytes > 0 ? bytes : PqTrainer.subspaces(0, ctx.dimension()),
                  job.plan().codebook(),
                  job.plan().trainingSample(),
                  ctx.jobs()::cancelled);
        } else {
          ctx.options()
              .segmentBuilder()
              .build(
                  new BuildSpec(
                      io,
                      target,
                      job.newId(),
                      sources,
                      job.ords(),
                      ctx.dimension(),
                      ctx.distance(),
                      ctx.writeParams(points),
                      config.pool(),
                      ctx.jobs()::cancelled,
                      progress));
        }
        if (ctx.jobs().cancelled()) {
          throw new CancellationException("shard closing");
        }
        built = ctx.format().open(io, target, job.newId());
        ctx.segments().adopt(built);
        ctx.payloadIndexes().openDisk(built, target);
        io.crashPoint(CrashPoint.COMPACTION_BUILT);
      }
      installed = pipeline.installCompaction(sources, job.ords(), built);
      if (installed) {
        residentRecorder.run(); // other shards size their recodes by it
        track.done();
        done.incrementAndGet();
        failure = null;
        ctx.space().succeeded();
        LOG.info(
            "segments compacted [dir={}, reason={}, from={}, to={}, points={}, millis={}]",
            ctx.dir(),
            job.plan().reason(),
            ids,
            built == null ? "none" : job.newId(),
            points,
            (System.nanoTime() - t0) / 1_000_000);
      }
      return installed;
    } catch (IOException | RuntimeException e) {
      if (track != null) {
        if (e instanceof CancellationException || ctx.jobs().cancelled()) {
          track.cancelled("the shard is closing; the compaction runs again when it opens");
        } else if (DiskFullException.isDiskFull(e)) {
          track.cancelled("the disk filled up; the compaction runs again when there is room");
        } else {
          track.failed(e.toString());
        }
      }
      if (e instanceof CancellationException || ctx.jobs().cancelled()) {
        LOG.info(
            "compaction cancelled, its files removed; the shard plans it again when it opens [dir={}, from={}, millis={}]",
            ctx.dir(),
            ids,
            (System.nanoTime() - t0) / 1_000_000);
      } else if (DiskFullException.isDiskFull(e)) {
        retryForSpace(
            need, ctx.space().usableBytes(), ids, "the disk filled up, its files removed");
      } else {
        failure = e.toString();
        LOG.error(
            "compaction failed; the source segments stay in use [dir={}, from={}]",
            ctx.dir(),
            ids,
            e);
      }
      return false;
    } finally {
      if (track != null) {
        track.cancelled("the shard closed before the compaction was installed"); // if not ended
      }
      job.held().release();
      if (!installed) {
        if (built != null) {
          pipeline.discard(built);
        }
        // Not in any manifest: safe to remove (a crash instead leaves it to the next open).
        pipeline.removeUnfinished(target);
      }
    }
  }

  /**
   * The bytes a compaction writes, with a margin: each source's files in the share of its points
   * that survive (with the graph a source sealed raw does not have yet), and as much again for
   * payload indexes when the shard has a payload schema.
   */
  private long outputBytes(Job job) {
    double bytes = 0;
    List<SealedSegment> sources = job.plan().sources();
    for (int i = 0; i < sources.size(); i++) {
      bytes += outputBytes(sources.get(i), job.ords().get(i).length);
    }
    return withPayloadIndexes(bytes);
  }

  /**
   * What a compaction writes for {@code live} points of {@code d}: its files in their share, and
   * for a segment sealed raw the graph the merge builds.
   */
  private double outputBytes(SealedSegment d, int live) {
    if (d.size() == 0) {
      return 0;
    }
    double bytes = d.diskBytes();
    if (!d.hasGraph()) {
      bytes += ctx.format().graphBytes(d.size(), ctx.dimension());
    }
    return bytes * live / d.size();
  }

  private long withPayloadIndexes(double bytes) {
    if (!ctx.payloadIndexes().schema().isEmpty()) {
      bytes *= 2;
    }
    return SpaceGuard.withMargin((long) bytes);
  }

  /**
   * The room the merge that builds the shard's segments sealed raw needs (what it writes for their
   * live points, with the margin of {@link #outputBytes(Job)}); 0 without such segments. Writes
   * leave it free above the reserve (ADR 0031): a WAL replay or a load seals raw, in fewer bytes
   * than a graph takes and freeing the WAL records it covers, and writes that took that room would
   * leave the merge none, so points on disk would never be indexed. Segments a running merge takes
   * are not counted: it found its room when it started, and what it wrote is no longer free.
   */
  long owedBytes() {
    double bytes = 0;
    Set<Integer> merging = running;
    for (SealedSegment d : ctx.segments().current().sealed()) {
      if (!d.hasGraph() && !merging.contains(d.id())) {
        bytes += outputBytes(d, d.liveCount());
      }
    }
    return bytes == 0 ? 0 : withPayloadIndexes(bytes);
  }

  /** Whether {@code need} bytes fit above the reserve; if not, schedules a retry and says so. */
  private boolean roomFor(long need, List<Integer> ids) {
    if (ctx.space().fits(need)) {
      return true;
    }
    retryForSpace(need, ctx.space().usableBytes(), ids, "not enough free space");
    return false;
  }

  /** Logs a compaction postponed for lack of space and schedules the next threshold pass. */
  private void retryForSpace(long need, long usable, List<Integer> ids, String why) {
    long delay = ctx.space().nextRetryMillis();
    LOG.warn(
        "compaction postponed: {}; retrying in {} ms [dir={}, from={}, neededBytes={}, usableBytes={}, minFreeBytes={}]",
        why,
        delay,
        ctx.dir(),
        ids,
        need,
        usable,
        ctx.space().minFreeBytes());
    CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS).execute(this::maybeSchedule);
  }
}
