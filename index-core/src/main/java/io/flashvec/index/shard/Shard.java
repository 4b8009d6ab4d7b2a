package io.flashvec.index.shard;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.IndexingState;
import io.flashvec.index.Optimizations;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.diskann.DiskAnnFormat;
import io.flashvec.index.diskann.DiskAnnSettings;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.memory.MemoryLimits;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.payload.PayloadIndexes;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.FsyncPolicy;
import io.flashvec.storage.Wal;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard of a collection: a WAL, a growing segment that takes writes, and an immutable list of
 * sealed segments that is swapped atomically. This class wires the stages of a shard's data flow
 * together and is its public face; each stage is a class of its own:
 *
 * <ul>
 *   <li>{@link ShardWriter} — WAL append and replay, applying writes to the growing segment and the
 *       id locations ({@link IdLocations}), sealing the growing segment;
 *   <li>{@link SegmentSet} — the current {@link Snapshot} and the reference counting that keeps
 *       segments open while reads use them;
 *   <li>{@link SealPipeline} — seal → build → install → checkpoint → WAL truncation, recovery of
 *       the segment files, and the install of a compaction;
 *   <li>{@link LiveIndexScheduler} — when a growing segment's live graph gets its inserts;
 *   <li>{@link ShardReader} — get, count, scroll, vector, text and ordered reads;
 *   <li>{@link ShardCompactor} — which sealed segments to rewrite or merge, and the jobs that do.
 * </ul>
 *
 * <p>Threads: writes serialise on one write lock (see {@link ShardWriter}); reads never lock;
 * builds, compactions and live-graph inserts run on the executors of {@link Options}. {@link
 * #close} waits for running builds and compactions.
 *
 * <p>Its ~800 lines are {@link Options} (every setting of a shard with its default and check, ~170
 * lines), the wiring of the stages, and the public methods, most of which hand the call to one
 * stage; the logic is in the stages.
 */
public final class Shard implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(Shard.class);

  /**
   * Tuning of a shard; immutable. The {@code with*} methods return a copy with one setting changed.
   *
   * @param sealThresholdPoints points after which the growing segment is sealed
   * @param wal the WAL's options (fsync policy, segment size)
   * @param io the file system seam (tests inject faults and crashes through it)
   * @param buildExecutor where sealed segments are built ({@code null}: they stay in memory,
   *     searched exactly, and the WAL keeps their records)
   * @param defaultSearchList the search list of a request that gives none (0: 100)
   * @param compaction how sealed segments are compacted ({@code null}: never)
   * @param segmentBuilder where segment builds run ({@code null}: in this process; a cluster's
   *     query node sends them to an index node)
   * @param liveIndexer where live-graph inserts run ({@code null}: growing segments have no live
   *     graph and are searched exactly)
   * @param diskann how sealed segments read from the device and where builds run ({@code null}: the
   *     defaults)
   * @param space the free-space policy of writes and builds ({@code null}: no reserve)
   * @param memory the server's memory limits, which may seal growing segments earlier and bound
   *     merges ({@code null}: none, only {@code sealThresholdPoints} and the compaction's bound)
   */
  public record Options(
      int sealThresholdPoints,
      Wal.Options wal,
      FileIO io,
      Executor buildExecutor,
      int defaultSearchList,
      Compaction compaction,
      SegmentBuilder segmentBuilder,
      LiveIndexer liveIndexer,
      DiskAnnSettings diskann,
      DiskSpace space,
      MemoryLimits memory,
      java.util.Map<String, io.flashvec.index.DenseVectorParams> indexedFields,
      int targetSegments) {
    public Options {
      indexedFields =
          indexedFields == null ? java.util.Map.of() : java.util.Map.copyOf(indexedFields);
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
      if (diskann == null) {
        diskann = DiskAnnSettings.DEFAULT;
      }
      if (space == null) {
        space = new DiskSpace(io, 0);
      }
    }

    /** Options with builds on {@code buildExecutor} and {@code compaction}. */
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
          null,
          null,
          null,
          null,
          null,
          null,
          0);
    }

    /** Options with builds on {@code buildExecutor}, without compaction. */
    public Options(
        int sealThresholdPoints,
        Wal.Options wal,
        FileIO io,
        Executor buildExecutor,
        int defaultSearchList) {
      this(sealThresholdPoints, wal, io, buildExecutor, defaultSearchList, null);
    }

    /** Options without background index builds: sealed segments stay in memory. */
    public Options(int sealThresholdPoints, Wal.Options wal, FileIO io) {
      this(sealThresholdPoints, wal, io, null, 100);
    }

    public static Options defaults() {
      return new Options(100_000, Wal.Options.defaults(), FileIO.DEFAULT);
    }

    /** The same options with index builds on {@code executor}. */
    public Options withBuildExecutor(Executor executor) {
      return with(c -> c.buildExecutor = executor);
    }

    /** The same options with background compaction as given. */
    public Options withCompaction(Compaction compaction) {
      return with(c -> c.compaction = compaction);
    }

    /** The same options with another WAL fsync policy (a collection's bulk-load override). */
    public Options withFsyncPolicy(FsyncPolicy policy) {
      return with(c -> c.wal = wal.withPolicy(policy));
    }

    /**
     * The same options with graphs of the dense fields {@code fields} (other than the primary one,
     * by name) built for sealed segments ({@link io.flashvec.index.FieldIndex}).
     */
    public Options withIndexedFields(
        java.util.Map<String, io.flashvec.index.DenseVectorParams> fields) {
      return with(c -> c.indexedFields = fields);
    }

    /** The same options with WAL segments of {@code bytes}. */
    public Options withWalSegmentBytes(long bytes) {
      return with(c -> c.wal = wal.withSegmentBytes(bytes));
    }

    /**
     * The same options with at most {@code n} of the shard's segment builds and merge passes
     * running at once (Qdrant's {@code optimizers_config.max_optimization_threads}), on the same
     * executors; {@code 0}: no cap of its own. Call once per shard: each call makes new slots.
     */
    public Options withOptimizationJobs(int n) {
      if (n == 0) {
        return this;
      }
      JobSlots slots = new JobSlots(n);
      return with(
          c -> {
            c.buildExecutor = slots.wrap(buildExecutor);
            c.compaction =
                new Compaction(
                    slots.wrap(compaction.executor()),
                    compaction.pool(),
                    compaction.deletedFraction(),
                    compaction.segmentsPerTier(),
                    compaction.maxSegmentPoints(),
                    compaction.automatic(),
                    compaction.rawQuietNanos());
          });
    }

    /** The same options keeping {@code n} closed WAL segments past their checkpoint. */
    public Options withWalRetainClosed(int n) {
      return with(c -> c.wal = wal.withRetainClosed(n));
    }

    /**
     * The same options with segment builds done by {@code builder} (cluster: an index node; {@code
     * null}: in this process, by the shard's segment format).
     */
    public Options withSegmentBuilder(SegmentBuilder builder) {
      return with(c -> c.segmentBuilder = builder);
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
      return with(c -> c.liveIndexer = indexer);
    }

    /** The same options with other DiskANN settings. */
    public Options withDiskAnn(DiskAnnSettings settings) {
      return with(c -> c.diskann = settings);
    }

    /**
     * The same options with {@code space}'s free-space policy: writes are refused (HTTP 507) and
     * index builds and compactions postponed while they would leave less than its reserve free.
     */
    public Options withDiskSpace(DiskSpace space) {
      return with(c -> c.space = space);
    }

    /**
     * The same options with the server's memory limits: growing segments seal at their share of the
     * growing slice when that is below {@code sealThresholdPoints}, and merges stay within the
     * build slice ({@link MemoryLimits}). {@code null}: no limits.
     */
    public Options withMemory(MemoryLimits limits) {
      return with(c -> c.memory = limits);
    }

    /**
     * The same options with a target number of sealed segments (Qdrant's {@code
     * default_segment_number}; 0: the tiers decide), in force from the open on, so that the merge a
     * shard may start when it opens already keeps it.
     */
    public Options withTargetSegments(int target) {
      return with(c -> c.targetSegments = target);
    }

    /**
     * The seal threshold of a growing segment of {@code dim}-dimensional points with a live graph
     * of degree {@code maxDegree} ({@code 0}: none) now: {@link #sealThresholdPoints}, or less
     * under the memory limits.
     */
    public int sealThresholdPoints(int dim, int maxDegree) {
      return memory == null
          ? sealThresholdPoints
          : memory.sealThreshold(sealThresholdPoints, dim, maxDegree);
    }

    private Options with(Consumer<Copy> change) {
      Copy c = new Copy(this);
      change.accept(c);
      return c.build();
    }

    /** A mutable copy of options, for the {@code with*} methods. */
    private static final class Copy {
      int sealThresholdPoints;
      Wal.Options wal;
      FileIO io;
      Executor buildExecutor;
      int defaultSearchList;
      Compaction compaction;
      SegmentBuilder segmentBuilder;
      LiveIndexer liveIndexer;
      DiskAnnSettings diskann;
      DiskSpace space;
      MemoryLimits memory;
      java.util.Map<String, io.flashvec.index.DenseVectorParams> indexedFields;
      int targetSegments;

      Copy(Options o) {
        sealThresholdPoints = o.sealThresholdPoints;
        wal = o.wal;
        io = o.io;
        buildExecutor = o.buildExecutor;
        defaultSearchList = o.defaultSearchList;
        compaction = o.compaction;
        segmentBuilder = o.segmentBuilder;
        liveIndexer = o.liveIndexer;
        diskann = o.diskann;
        space = o.space;
        memory = o.memory;
        indexedFields = o.indexedFields;
        targetSegments = o.targetSegments;
      }

      Options build() {
        return new Options(
            sealThresholdPoints,
            wal,
            io,
            buildExecutor,
            defaultSearchList,
            compaction,
            segmentBuilder,
            liveIndexer,
            diskann,
            space,
            memory,
            indexedFields,
            targetSegments);
      }
    }
  }

  /**
   * How sealed segments are compacted (see {@link ShardCompactor}).
   *
   * @param executor runs compaction jobs ({@code null}: only {@link #compact} on the caller
   *     thread); the server gives one low-priority thread shared by all shards
   * @param pool jvector's build pool for compaction builds ({@code null}: jvector's default pools);
   *     its size bounds a compaction's CPU share, its threads' priority its claim on them
   * @param deletedFraction a segment whose deleted share reaches this is rewritten without its
   *     deleted points
   * @param segmentsPerTier sealed segments allowed per size tier before a merge (at least 2); one
   *     merge takes up to ten, or this many if more
   * @param maxSegmentPoints no merge produces a segment of more live points than this (nor one
   *     whose PQ codes pass 2^31 bytes); merges above the build memory are built in partitions (ADR
   *     0026)
   * @param automatic whether thresholds start compactions by themselves (else only {@link
   *     #compact})
   * @param rawQuietNanos how long without an upsert before segments sealed raw are merged while
   *     they are few ({@link TieredMergePolicy.Hold}); 0: at once, as tests that need a repeatable
   *     order of work use
   */
  public record Compaction(
      Executor executor,
      ForkJoinPool pool,
      double deletedFraction,
      int segmentsPerTier,
      int maxSegmentPoints,
      boolean automatic,
      long rawQuietNanos) {

    /** Default of {@link #rawQuietNanos}: 2 s, well above the gaps between a load's batches. */
    public static final long DEFAULT_RAW_QUIET_NANOS = 2_000_000_000L;

    /** With the default {@link #rawQuietNanos}. */
    public Compaction(
        Executor executor,
        ForkJoinPool pool,
        double deletedFraction,
        int segmentsPerTier,
        int maxSegmentPoints,
        boolean automatic) {
      this(
          executor,
          pool,
          deletedFraction,
          segmentsPerTier,
          maxSegmentPoints,
          automatic,
          DEFAULT_RAW_QUIET_NANOS);
    }

    /** This with raw segments merged after {@code nanos} without an upsert. */
    public Compaction withRawQuietNanos(long nanos) {
      return new Compaction(
          executor, pool, deletedFraction, segmentsPerTier, maxSegmentPoints, automatic, nanos);
    }

    /** Default of {@link #segmentsPerTier}. */
    public static final int DEFAULT_SEGMENTS_PER_TIER = 3;

    /** Default of {@link #maxSegmentPoints}. */
    public static final int DEFAULT_MAX_SEGMENT_POINTS = 20_000_000;

    public static final Compaction DISABLED =
        new Compaction(
            null, null, 0.2, DEFAULT_SEGMENTS_PER_TIER, DEFAULT_MAX_SEGMENT_POINTS, false);

    public Compaction {
      if (!(deletedFraction > 0 && deletedFraction <= 1)) {
        throw new IllegalArgumentException(
            "deleted fraction must be in (0, 1] [deletedFraction=" + deletedFraction + "]");
      }
      if (segmentsPerTier < 2) {
        throw new IllegalArgumentException(
            "segmentsPerTier must be at least 2 [segmentsPerTier=" + segmentsPerTier + "]");
      }
      if (maxSegmentPoints < 1) {
        throw new IllegalArgumentException(
            "maxSegmentPoints must be positive [maxSegmentPoints=" + maxSegmentPoints + "]");
      }
      if (rawQuietNanos < 0) {
        throw new IllegalArgumentException(
            "rawQuietNanos must not be negative [rawQuietNanos=" + rawQuietNanos + "]");
      }
    }
  }

  private final Path dir;
  private final int shardId;
  private final boolean flat;
  private final ReentrantLock writeLock = new ReentrantLock();
  private final PayloadIndexes payloadIndexes;
  private final BackgroundJobs jobs = new BackgroundJobs();
  private final OptimizationTracker tracker;
  private final SegmentSet segments;
  private final IdLocations locations;
  private final SealPipeline pipeline;
  private final LiveIndexScheduler scheduler;
  private final ShardCompactor compactor;
  private final ShardReader reader;
  private final ShardWriter writer;
  private final ShardParts parts;
  private final Wal wal;

  /** Writes received and not yet applied: waiting for the write lock or being applied. */
  private final java.util.concurrent.atomic.AtomicInteger pendingWrites =
      new java.util.concurrent.atomic.AtomicInteger();

  /** The WAL sequence number of the newest applied write, -1 before this run applied one. */
  private final java.util.concurrent.atomic.AtomicLong applied =
      new java.util.concurrent.atomic.AtomicLong(-1);

  private final FileIO io;
  private final DiskAnnFormat format;

  private Shard(
      Path dir,
      int shardId,
      int dim,
      Distance distance,
      IndexParams index,
      Options options,
      boolean payloadsOnHeap,
      java.util.Set<String> denseOnDisk,
      java.util.Map<String, Integer> multivectors)
      throws IOException {
    this.dir = dir;
    this.shardId = shardId;
    this.tracker = new OptimizationTracker(shardId);
    // without a primary vector (dim 0) there is no graph to build: every field is scanned exactly
    this.flat = index.type().equals(IndexParams.FLAT) || dim == 0;
    DiskAnnFormat format =
        new DiskAnnFormat(distance, index, options.defaultSearchList(), options.diskann());
    format.payloadsOnHeap(payloadsOnHeap);
    format.denseOnDisk(denseOnDisk);
    format.indexedFields(options.indexedFields());
    format.fieldGraphSpace(options.space());
    this.format = format;
    if (options.segmentBuilder() == null) {
      options = options.withSegmentBuilder(format.builder());
    }
    FileIO io = options.io();
    this.io = io;
    SpaceGuard space = new SpaceGuard(dir, options.space());
    this.payloadIndexes = new PayloadIndexes(io, PayloadSchema.EMPTY);
    this.segments = new SegmentSet(dir, io, payloadIndexes);
    IdLocations locations = new IdLocations(() -> segments.current().sealed());
    this.locations = locations;
    ShardParts parts =
        new ShardParts(
            dir,
            options,
            dim,
            distance,
            new java.util.concurrent.atomic.AtomicReference<>(index),
            format,
            space,
            writeLock,
            segments,
            locations,
            payloadIndexes,
            jobs,
            tracker);
    if (options.memory() != null) {
      // seals from a live graph or raw take the code size the budget allows now (ADR 0025)
      format.codeBytes(() -> parts.writeParams(0).pqSubspaces());
    }
    this.pipeline = new SealPipeline(parts);
    this.compactor = new ShardCompactor(parts, pipeline);
    compactor.targetAtOpen(options.targetSegments());
    pipeline.onInstall(compactor::maybeSchedule);
    this.scheduler = new LiveIndexScheduler(dir, options.liveIndexer(), segments, jobs);
    compactor.lastWriteFrom(scheduler::lastWriteNanos);
    this.reader = new ShardReader(dim, distance, segments, locations, payloadIndexes, scheduler);
    List<SealedSegment> sealed = pipeline.openSegments();
    this.writer = new ShardWriter(parts, pipeline, scheduler, compactor, reader, multivectors);
    compactor.residentFrom(writer::recordResident);
    this.parts = parts;
    segments.publish(sealed, List.of(writer.growing()), List.of());
    this.wal = writer.openWal(pipeline.checkpointSeq());
    applied.set(wal.lastSeq()); // every record recovered is applied
    writeLock.lock();
    try {
      pipeline.start(wal);
      for (GrowingSegment f : pipeline.frozen()) {
        scheduler.schedule(f);
      }
      scheduler.schedule(writer.growing());
    } finally {
      writeLock.unlock();
    }
    // a compaction a crash or a stop interrupted, or one the last deletes before it called for,
    // resumes now rather than at the next write
    compactor.maybeSchedule();
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
   * int, int, Distance, Options)}. Sealed segments are built on the options' build executor when
   * the index type is {@code diskann} or {@code hnsw} and an executor is given.
   */
  public static Shard open(
      Path dir, int shardId, int dim, Distance distance, IndexParams index, Options options) {
    return open(dir, shardId, dim, distance, index, options, false);
  }

  /**
   * Opens the shard as {@link #open(Path, int, int, Distance, IndexParams, Options)} does; with
   * {@code payloadsOnHeap} its sealed segments hold their payloads on the heap (see {@link
   * #setPayloadsOnHeap}).
   */
  public static Shard open(
      Path dir,
      int shardId,
      int dim,
      Distance distance,
      IndexParams index,
      Options options,
      boolean payloadsOnHeap) {
    return open(dir, shardId, dim, distance, index, options, payloadsOnHeap, java.util.Set.of());
  }

  /**
   * Opens the shard as {@link #open(Path, int, int, Distance, IndexParams, Options, boolean)} does;
   * the sealed vectors of the dense fields {@code denseOnDisk} (other than the primary one) stay in
   * their mapped files instead of the heap.
   */
  public static Shard open(
      Path dir,
      int shardId,
      int dim,
      Distance distance,
      IndexParams index,
      Options options,
      boolean payloadsOnHeap,
      java.util.Set<String> denseOnDisk) {
    return open(
        dir,
        shardId,
        dim,
        distance,
        index,
        options,
        payloadsOnHeap,
        denseOnDisk,
        java.util.Map.of());
  }

  /**
   * Opens the shard as {@link #open(Path, int, int, Distance, IndexParams, Options, boolean,
   * java.util.Set)} does, with the multivector fields {@code multivectors} (name to the size of
   * each of their vectors), whose values its WAL records tag as multivectors.
   */
  public static Shard open(
      Path dir,
      int shardId,
      int dim,
      Distance distance,
      IndexParams index,
      Options options,
      boolean payloadsOnHeap,
      java.util.Set<String> denseOnDisk,
      java.util.Map<String, Integer> multivectors) {
    try {
      options.io().createDirectories(dir);
      Shard s =
          new Shard(
              dir,
              shardId,
              dim,
              distance,
              index,
              options,
              payloadsOnHeap,
              denseOnDisk,
              multivectors);
      Wal.RecoveryReport r = s.wal.recovery();
      LOG.info(
          "shard opened [dir={}, shard={}, points={}, segments={}, walRecords={}, walLastSeq={}, discardedBytes={}]",
          dir,
          shardId,
          s.count(),
          s.segments.current().segments().size(),
          r.recordsReplayed(),
          r.lastSeq(),
          r.bytesDiscarded());
      return s;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot open shard [dir=" + dir + ", shard=" + shardId + "]", e);
    }
  }

  // ------------------------------------------------------------------------------------ writes

  /**
   * Stores points (vectors already validated and prepared for the metric); returns the WAL sequence
   * number to pass to {@link #awaitDurable}.
   */
  public long upsert(List<Point> points) {
    return applying(() -> writer.upsert(points));
  }

  /**
   * Stores the points that {@code mode} and {@code filter} ({@code null}: none) let through, each
   * tested against its stored version under the write lock; returns the WAL sequence number, or 0
   * when none was written.
   */
  public long upsert(
      List<Point> points,
      io.flashvec.index.UpsertMode mode,
      io.flashvec.index.filter.FilterEvaluator filter) {
    return applying(() -> writer.upsert(points, mode, filter));
  }

  /**
   * Replaces the vectors of existing points (validated and prepared for the metric) and keeps their
   * current payloads, read under the write lock; {@link io.flashvec.index.NotFoundException} naming
   * the first id that does not exist, and nothing is written. Returns the WAL sequence number.
   */
  public long updateVectors(List<Point> points) {
    return applying(() -> writer.updateVectors(points));
  }

  /**
   * {@link #updateVectors(List)} of the points whose stored version matches {@code filter}, tested
   * under the write lock; returns 0 when none matched.
   */
  public long updateVectors(List<Point> points, io.flashvec.index.filter.FilterEvaluator filter) {
    return applying(() -> writer.updateVectors(points, filter));
  }

  /** Removes the vectors {@code names} from existing points; see {@link ShardWriter}. */
  public long deleteVectors(List<PointId> ids, Set<String> names) {
    return applying(() -> writer.deleteVectors(ids, names));
  }

  /**
   * The document frequencies of the sparse field {@code field} in this shard for IDF: element 0
   * counts the live points that have the field, element {@code 1 + i} those of them whose vector
   * has {@code indices[i]} (ascending, as a {@link io.flashvec.index.SparseVector}'s); with a
   * {@code corpus} filter ({@code null}: none), only the points that pass it.
   */
  public long[] sparseFrequencies(String field, int[] indices, FilterEvaluator corpus) {
    return reader.sparseFrequencies(field, indices, corpus);
  }

  /** Exact sparse search of one shard; see {@link ShardReader#sparseSearch}. */
  public List<Record> sparseSearch(
      String field,
      io.flashvec.index.SparseVector query,
      int k,
      FilterEvaluator filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    return reader.sparseSearch(field, query, k, filter, scoreThreshold, withPayload, withVector);
  }

  /**
   * Exact search of a dense field other than the primary one; see {@link ShardReader#denseSearch}.
   */
  public List<Record> denseSearch(
      String field,
      float[] query,
      io.flashvec.index.Distance distance,
      int k,
      FilterEvaluator filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    return denseSearch(
        field,
        query,
        distance,
        k,
        new io.flashvec.index.SearchParams(0, 0, 0, true),
        filter,
        scoreThreshold,
        withPayload,
        withVector);
  }

  /**
   * Search of a dense field other than the primary one, through the sealed segments' graphs of the
   * field unless {@code params.exact()}; see {@link ShardReader#denseSearch}.
   */
  public List<Record> denseSearch(
      String field,
      float[] query,
      io.flashvec.index.Distance distance,
      int k,
      io.flashvec.index.SearchParams params,
      FilterEvaluator filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    return reader.denseSearch(
        field, query, distance, k, params, filter, scoreThreshold, withPayload, withVector);
  }

  /**
   * Exact MaxSim search of a multivector field; see {@link ShardReader#multiSearch}. {@code query}
   * holds {@code dim}-sized vectors back to back.
   */
  public List<Record> multiSearch(
      String field,
      float[] query,
      int dim,
      io.flashvec.index.Distance distance,
      int k,
      FilterEvaluator filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    return reader.multiSearch(
        field, query, dim, distance, k, filter, scoreThreshold, withPayload, withVector);
  }

  /** Deletes points by id (absent ids are ignored); returns the WAL sequence number. */
  public long delete(List<PointId> ids) {
    return applying(() -> writer.delete(ids));
  }

  /**
   * Deletes the points that match {@code filter} now, logged as a delete of the ids that matched;
   * returns the WAL sequence number, or 0 when nothing matched.
   */
  public long delete(FilterEvaluator filter) {
    return applying(() -> writer.delete(filter));
  }

  /** {@link #updatePayloads(List, UnaryOperator)} for the points that match {@code filter} now. */
  public long updatePayloads(FilterEvaluator filter, UnaryOperator<byte[]> update) {
    return applying(() -> writer.updatePayloads(filter, update));
  }

  /**
   * Replaces the payloads of existing points with {@code update.apply(current payload)} and keeps
   * their vectors; absent ids are ignored. Returns the WAL sequence number, or 0 when no id exists.
   */
  public long updatePayloads(List<PointId> ids, UnaryOperator<byte[]> update) {
    return applying(() -> writer.updatePayloads(ids, update));
  }

  /** Runs a write, counted in {@link #pendingWrites} until it is applied. */
  private long applying(java.util.function.LongSupplier write) {
    pendingWrites.incrementAndGet();
    try {
      long seq = write.getAsLong();
      applied.accumulateAndGet(seq, Math::max);
      return seq;
    } finally {
      pendingWrites.decrementAndGet();
    }
  }

  /**
   * Writes this shard received and has not applied yet: they wait for the write lock or are being
   * applied. A write is applied (visible to searches) before it is answered, whatever its {@code
   * wait}, so a shard nobody writes to has none.
   */
  public int pendingWrites() {
    return pendingWrites.get();
  }

  /**
   * The WAL sequence number of the newest applied write: 0 for a shard never written to, one more
   * for each write logged (a write by a filter that matched no point logs nothing).
   */
  public long lastAppliedOperation() {
    return applied.get();
  }

  /** Blocks until the record {@code seq} is durable under the WAL's fsync policy. */
  public void awaitDurable(long seq) {
    writer.awaitDurable(seq);
  }

  /** Seals the growing segment if it holds any point. */
  public void flush() {
    writer.flush();
  }

  // ------------------------------------------------------------------------------------- reads

  /** The live version of a point, or {@code null}. */
  public Record get(PointId id, boolean withPayload, boolean withVector) {
    return reader.get(id, withPayload, withVector);
  }

  /** Exact number of live points. */
  public long count() {
    return reader.count();
  }

  /** Live points that match {@code filter} ({@code null}: all). */
  public long count(FilterEvaluator filter) {
    return reader.count(filter);
  }

  /**
   * The smallest live ids that are {@code >= from} (all if null) among the points that match {@code
   * filter} ({@code null}: all), in order, at most {@code limit}.
   */
  public List<PointId> scrollIds(PointId from, int limit, FilterEvaluator filter) {
    return reader.scrollIds(from, limit, filter);
  }

  /** {@link #scrollIds(PointId, int, FilterEvaluator)} over all live points. */
  public List<PointId> scrollIds(PointId from, int limit) {
    return reader.scrollIds(from, limit);
  }

  /**
   * The best {@link PreparedSearch#k()} live points for a search, best first, with payload and
   * vector as its request asks; see {@link ShardReader}.
   */
  public List<Record> search(PreparedSearch search) {
    return reader.search(search);
  }

  /**
   * A page of the live points that match {@code filter} ({@code null}: all) from the request's
   * offset on, in id order; see {@link ShardReader}.
   */
  public ScrollPage scroll(ScrollRequest request, FilterEvaluator filter) {
    return reader.scroll(request, filter);
  }

  /**
   * BM25 search of a request's text, tokenised as {@code tokens}, among the live points that match
   * {@code filter} ({@code null}: all); best first, scores are BM25 scores.
   */
  public List<Record> textSearch(
      TextSearchRequest request, List<String> tokens, FilterEvaluator filter) {
    return reader.textSearch(request, tokens, filter);
  }

  /**
   * The first live points that match {@code filter} ordered by the request's key, whose index is
   * {@code key}, from its start value on; see {@link ShardReader}.
   */
  public List<Ordered> orderedScroll(
      OrderedScrollRequest request, PayloadFieldSchema key, FilterEvaluator filter) {
    return reader.orderedScroll(request, key, filter);
  }

  /**
   * The current snapshot with a reference held: its sealed segments stay open until {@link
   * Snapshot#release}.
   */
  public Snapshot acquire() {
    return segments.acquire();
  }

  /** This shard's segments and their references (tests). */
  SegmentSet segmentSet() {
    return segments;
  }

  /** The current snapshot, without a reference: for statistics, not for reading segment data. */
  public Snapshot snapshot() {
    return segments.current();
  }

  /**
   * Drops this shard's on-disk index pages from memory (this process's mappings and the page
   * cache), so the next searches read from the device: for cold-cache measurements. Returns the
   * number of segment files evicted.
   */
  public int evictFromPageCache() {
    int files = 0;
    // hold the snapshot: a compaction must not unmap a segment while we advise on its pages
    Snapshot snap = acquire();
    try {
      for (SealedSegment seg : snap.sealed()) {
        if (seg.evictFromPageCache()) {
          files++;
        }
      }
    } finally {
      snap.release();
    }
    return files;
  }

  // ---------------------------------------------------------------------- schema and upkeep

  /**
   * Switches the shard to a new payload schema: the index of every sealed segment is rebuilt (or
   * opened, when it exists) before this returns; queries use the old indexes meanwhile.
   */
  public void setPayloadSchema(PayloadSchema schema) {
    buildPayloadIndexes(() -> payloadIndexes.setSchema(schema, pins));
  }

  /**
   * Builds every sealed segment's index for {@code schema} without switching to it (see {@link
   * PayloadIndexes#prepare}); {@link #setPayloadSchema} then opens them.
   */
  public void preparePayloadSchema(PayloadSchema schema) {
    buildPayloadIndexes(() -> payloadIndexes.prepare(schema, pins));
  }

  /** A payload index change that writes files. */
  private interface IndexBuild {
    void run() throws IOException;
  }

  /** Runs {@code build} as a job of the shard, which {@link #close} waits for. */
  private void buildPayloadIndexes(IndexBuild build) {
    if (!jobs.enter()) {
      throw new UnavailableException("shard is closed [dir=" + dir + "]");
    }
    try {
      build.run();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot build payload indexes [dir=" + dir + "]", e);
    } finally {
      jobs.exit(); // close waits for this: no index build writes into a deleted collection
    }
  }

  /** Keeps a segment open while a payload index of it is built. */
  private final PayloadIndexes.Pins pins =
      new PayloadIndexes.Pins() {
        @Override
        public boolean pin(Segment seg) {
          return segments.tryRef(seg);
        }

        @Override
        public void unpin(Segment seg) {
          segments.unref(seg);
        }
      };

  /**
   * Refuses a write of {@code bytes} that would leave less than the free-space reserve ({@link
   * Options#space()}) and the room index builds of points already acknowledged still need, with an
   * {@link io.flashvec.index.InsufficientStorageException} (HTTP 507).
   */
  public void requireSpace(long bytes, String what) {
    writer.requireSpace(bytes, what);
  }

  /**
   * What building the payload indexes of this shard's sealed segments writes (twice their payload
   * bytes), for a free-space check before a schema change.
   */
  public long payloadIndexBytes() {
    long n = 0;
    for (SealedSegment s : segments.current().sealed()) {
      n += 2 * s.payloadFileBytes();
    }
    return n;
  }

  /**
   * Cancels running index builds and compactions and starts no new ones (the server is shutting
   * down). They stop at their next check (at most about a second of graph building), remove their
   * temporary files, and run again when the shard is next opened: a build from the WAL records of
   * its segment, which no checkpoint has covered, a compaction because its thresholds still hold.
   * Writes and reads go on until {@link #close}. Returns what was running, or {@code null}.
   */
  public String stopBackgroundWork() {
    jobs.stop();
    return runningWork();
  }

  /** The running build and compaction, for the log; {@code null} when there is none. */
  private String runningWork() {
    List<String> work = new ArrayList<>();
    int b = pipeline.buildingSegment();
    if (b >= 0) {
      work.add("index build of segment " + b);
    }
    Set<Integer> c = compactor.sourceIds();
    if (!c.isEmpty()) {
      work.add("compaction of segments " + new TreeSet<>(c));
    }
    return work.isEmpty() ? null : String.join(", ", work);
  }

  /** The shard's payload indexes (text search, order_by, statistics). */
  public PayloadIndexes payloadIndexes() {
    return payloadIndexes;
  }

  /**
   * Compacts now, on the compaction executor when there is one (else on this thread): with {@code
   * force} every segment with a deleted point is rewritten and all small segments are merged, else
   * only what the thresholds ask for. Completes with the number of compactions run.
   */
  public CompletableFuture<Integer> compact(boolean force) {
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
   * Bulk-load mode: while {@code defer} is true live graphs take no inserts and sealed segments get
   * no graph: they are sealed raw and wait for the merge that builds them all when the load ends
   * (ADR 0031), or, where segments are not sealed raw (no automatic compaction), stay in memory,
   * searched exactly, the WAL not truncated. Setting it back to false submits the deferred builds
   * and the merge of the raw segments.
   */
  /**
   * Keeps {@code target} sealed segments (Qdrant's {@code default_segment_number}): while there are
   * more, compactions merge the smallest; {@code 0}: the tiers choose ({@link TieredMergePolicy}).
   */
  public void setTargetSegments(int target) {
    compactor.setTargetSegments(target);
  }

  public void setDeferBuilds(boolean defer) {
    writeLock.lock();
    try {
      pipeline.setDeferBuilds(defer);
      scheduler.setPaused(defer);
    } finally {
      writeLock.unlock();
    }
    if (!defer) {
      compactor.maybeSchedule();
    }
  }

  /**
   * Where the sealed segments opened from now on keep their payloads: copied onto the heap ({@code
   * true}, Qdrant's {@code on_disk_payload: false}; the copies count in {@link #memoryBytes}), or
   * read from their mapped metadata files on demand. Segments open already keep theirs until they
   * are merged, compacted or the shard is reopened.
   */
  public void setPayloadsOnHeap(boolean onHeap) {
    format.payloadsOnHeap(onHeap);
  }

  /**
   * Segments waiting for a deferred index build: frozen segments, and during a bulk load the
   * segments sealed raw (their graphs are built when it ends).
   */
  public int deferredBuilds() {
    int n = pipeline.deferredBuilds();
    if (pipeline.deferBuilds()) {
      n += rawSegments();
    }
    return n;
  }

  /** Sealed segments without a graph yet (sealed raw, waiting for the merge that builds them). */
  public int rawSegments() {
    int n = 0;
    for (SealedSegment s : segments.current().sealed()) {
      if (!s.hasGraph()) {
        n++;
      }
    }
    return n;
  }

  /** The shard's {@link IndexingState} now. */
  public IndexingState indexingState() {
    long indexed = 0;
    long backlog = 0;
    int frozen = pipeline.buildsPending();
    long fieldIndexed = 0;
    for (Segment seg : snapshot().segments()) {
      long[] fields = seg.fieldGraphProgress();
      fieldIndexed += fields[0];
      backlog += fields[1] - fields[0];
      int live = seg.liveCount();
      if (flat) {
        indexed += live;
        continue;
      }
      // a growing segment below its graph's start counts as indexed by its exact scan, but not
      // while builds are deferred: Qdrant's indexing_threshold 0 reports no indexed vectors
      int in =
          pipeline.deferBuilds() && seg.state() == Segment.State.GROWING && seg.graphPoints() <= 0
              ? 0
              : seg.indexedLiveCount();
      indexed += in;
      boolean works =
          seg.state() != Segment.State.GROWING
              ? seg.onDisk() ? in < live : frozen > 0 // a raw segment waits for its merge
              : seg instanceof GrowingSegment g && g.graph() != null && !g.graph().closed();
      if (works) {
        backlog += live - in;
      }
    }
    return new IndexingState(
        indexed,
        backlog,
        flat ? 0 : frozen,
        pipeline.indexing() ? 1 : 0,
        compacting() ? 1 : 0,
        compactor.planned() ? 1 : 0,
        pipeline.deferBuilds(),
        fieldIndexed);
  }

  /**
   * What this shard optimizes now, has queued and finished since it opened, and which of its
   * segments need nothing ({@link Optimizations}): running are the index builds and compactions
   * under way; queued the frozen segments waiting for their build and the merge or rewrite the
   * compaction policy would start next; idle every other segment, the growing one included. A shard
   * without index builds (flat, or no build executor) keeps its frozen segments as they are: idle,
   * not queued.
   */
  public Optimizations optimizations() {
    List<Optimizations.Optimization> running = tracker.running();
    Set<Integer> busy = new java.util.HashSet<>(tracker.busySegments());
    List<Optimizations.Queued> queued = new ArrayList<>(pipeline.queuedBuilds(busy));
    queued.addAll(compactor.queued(busy));
    Set<java.util.UUID> taken = new java.util.HashSet<>();
    for (Optimizations.Optimization o : running) {
      o.segments().forEach(r -> taken.add(r.uuid()));
    }
    for (Optimizations.Queued q : queued) {
      q.segments().forEach(r -> taken.add(r.uuid()));
    }
    List<Optimizations.SegmentRef> idle = new ArrayList<>();
    for (Segment seg : segments.current().segments()) {
      Optimizations.SegmentRef ref = tracker.segment(seg.id(), seg.liveCount());
      if (!taken.contains(ref.uuid())) {
        idle.add(ref);
      }
    }
    return new Optimizations(running, queued, tracker.completed(), idle);
  }

  /** Whether segments wait for (or are in) an index build. */
  public boolean indexing() {
    return pipeline.indexing();
  }

  /** The last index build failure, or {@code null}. */
  public String buildFailure() {
    return pipeline.buildFailure();
  }

  /** The last checkpoint failure after an install, or {@code null}. */
  public String checkpointFailure() {
    return pipeline.checkpointFailure();
  }

  // ---------------------------------------------------------------------------- statistics

  /**
   * Whether a search of this shard runs from memory: every sealed segment's recent searches read
   * nothing from the device; segments in memory always do. A hint, for callers that pick a thread.
   */
  public boolean searchesServedFromMemory() {
    for (SealedSegment s : segments.current().sealed()) {
      if (!s.servedFromMemory()) {
        return false;
      }
    }
    return true;
  }

  public int shardId() {
    return shardId;
  }

  /**
   * The dense fields other than the primary one as the collection's config declares them now (a
   * field was added or deleted): the sealed segments opened from now on keep the vectors of {@code
   * onDisk} in their mapped files, WAL records tag the values of {@code multivectors} (name to the
   * size of each vector) as multivectors, and the segments written from now on (seals, merges,
   * compactions) keep the values of the fields {@code keep} only (those of deleted fields are
   * dropped), and the sealed segments opened from now on build the graphs of those that have one
   * (ADR 0040); the open sealed segments rebuild the graphs whose settings changed ({@link
   * SealedSegment#indexFields}).
   */
  public void denseFields(
      java.util.Set<String> onDisk,
      java.util.Map<String, Integer> multivectors,
      java.util.Map<String, io.flashvec.index.DenseVectorParams> keep) {
    format.denseOnDisk(onDisk);
    format.keepDense(keep.keySet());
    format.indexedFields(keep);
    writer.multivectors(multivectors);
    for (SealedSegment s : segments.current().sealed()) {
      s.indexFields(keep);
    }
  }

  /**
   * Before a change of the primary vector's graph settings is persisted: records in each sealed
   * segment with a graph that does not say it yet ({@link SealedSegment#recordBuildSearchList}) the
   * construction search list in force, which built it, so that after the change (and after a
   * restart) every segment built with other settings is found and rebuilt.
   */
  public void recordGraphBuilds() throws java.io.IOException {
    int list = parts.index().buildSearchList();
    Snapshot snap = segments.acquire();
    try {
      for (SealedSegment s : snap.sealed()) {
        s.recordBuildSearchList(io, list);
      }
    } finally {
      snap.release();
    }
  }

  /**
   * The primary vector's graph settings changed (a collection update of {@code m} or {@code
   * ef_construct}, persisted after {@link #recordGraphBuilds}): the segments written from now on
   * (seals, merges) and the live graphs of new growing segments take {@code next}'s max degree and
   * construction search list, and the compactor rebuilds, one at a time in the background, every
   * sealed segment whose graph was built with other ones ({@link Optimizations#CONFIG_MISMATCH}).
   * Searches go on meanwhile; the collection is yellow until the rebuilds are done.
   */
  public void graphParams(IndexParams next) {
    IndexParams now = parts.index();
    IndexParams p =
        new IndexParams(
            now.type(), next.maxDegree(), next.buildSearchList(), now.alpha(), now.pqSubspaces());
    parts.indexRef().set(p);
    format.graphParams(p);
    writer.graphParams(p);
    compactor.maybeSchedule();
  }

  public Wal wal() {
    return wal;
  }

  /** Bytes of the payloads the segments store ({@link Segment#payloadBytes}). */
  public long payloadBytes() {
    long n = 0;
    for (Segment s : segments.current().segments()) {
      n += s.payloadBytes();
    }
    return n;
  }

  /** Bytes on disk: the WAL plus sealed segment files. */
  public long diskBytes() {
    long n = wal.sizeBytes();
    for (Segment s : segments.current().segments()) {
      n += s.diskBytes();
    }
    return n;
  }

  /** Heap bytes of the id map's entries (for tests). */
  long idMapBytes() {
    return locations.memoryBytes();
  }

  public long memoryBytes() {
    long n = locations.memoryBytes(); // the id map's entries (growing and frozen segments)
    List<Segment> current = segments.current().segments();
    for (Segment s : current) {
      n += s.memoryBytes();
    }
    return n - ShardWriter.repeatedCodebookBytes(current); // a shared codebook once
  }

  public Path directory() {
    return dir;
  }

  /**
   * Copies the shard's files as of now into {@code target} (which must not exist), such that a
   * shard opened there holds exactly the writes applied so far ({@link ShardFiles}). Writers wait
   * while the files are linked.
   */
  public void copyFiles(Path target) throws IOException {
    writeLock.lock();
    try {
      if (isClosed()) {
        throw new UnavailableException("shard is closed [dir=" + dir + "]");
      }
      wal.syncAll();
      ShardFiles.copy(io, dir, wal.directory(), target);
    } finally {
      writeLock.unlock();
    }
  }

  /** Whether the shard is closed or closing. */
  boolean isClosed() {
    return jobs.closed();
  }

  /** Points of the growing segment that wait for its live graph (0 without one). */
  int liveBacklog() {
    return scheduler.liveBacklog();
  }

  /**
   * Closes the shard: new jobs are refused, the WAL is synced and closed, running builds and
   * compactions are awaited (they notice the close at their next check and remove their files), and
   * the segments close now or when the last search releases them.
   */
  @Override
  public void close() throws IOException {
    writeLock.lock();
    try {
      if (jobs.closed()) {
        return;
      }
      jobs.close();
      writer.release();
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
      // the shard is closed (their installs check it under the write lock).
      wal.close();
    } finally {
      jobs.awaitIdle();
      if (cancelled != null) {
        LOG.info(
            "shard background work stopped [dir={}, work={}, millis={}]",
            dir,
            cancelled,
            (System.nanoTime() - t0) / 1_000_000);
      }
      payloadIndexes.close();
      writeLock.lock();
      try {
        segments.close();
      } finally {
        writeLock.unlock();
      }
    }
  }
}
