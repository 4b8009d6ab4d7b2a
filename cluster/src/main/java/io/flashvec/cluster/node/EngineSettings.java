package io.flashvec.cluster.node;

import io.flashvec.index.diskann.DiskAnnSettings;
import io.flashvec.index.memory.MemoryPlan;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FsyncPolicy;
import io.flashvec.storage.IoThreads;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * How a node's local engine runs: where its data lives and the settings of its WALs, segments,
 * searches, compactions and free-space reserve. Built with {@link #builder}; every setting has the
 * server's default. Immutable.
 */
public final class EngineSettings {

  /** Told of WAL appends and fsyncs (metrics); both may be called from any thread. */
  public interface WalListener {
    void onAppend(int recordBytes);

    void onFsync(long nanos);
  }

  final Path dataDir;
  final int sealThresholdPoints;
  final FsyncPolicy walFsyncPolicy;
  final long walSegmentBytes;
  final Duration walFsyncInterval;
  final WalListener walListener;
  final int defaultSearchList;
  final int beamWidth;
  final int ioThreads;
  final DiskAnnSettings.Prefetch prefetch;
  final long nodeCacheBytes;
  final boolean compactionEnabled;
  final double compactionDeletedFraction;
  final int mergeSegmentsPerTier;
  final int mergeMaxSegmentPoints;
  final long minFreeBytes;
  final boolean liveGraph;
  final int backgroundNice;
  final int buildThreads;
  final long buildMemoryBytes;
  final CrashPoint crashPoint;
  final int crashPointHit;
  final MemoryPlan memoryPlan;

  /** The hot node caches' bytes unless set: 64 MiB. */
  public static final long DEFAULT_NODE_CACHE_BYTES = 64L << 20;

  private EngineSettings(Builder b) {
    this.dataDir = b.dataDir;
    this.sealThresholdPoints = b.sealThresholdPoints;
    this.walFsyncPolicy = b.walFsyncPolicy;
    this.walSegmentBytes = b.walSegmentBytes;
    this.walFsyncInterval = b.walFsyncInterval;
    this.walListener = b.walListener;
    this.defaultSearchList = b.defaultSearchList;
    this.beamWidth = b.beamWidth;
    this.ioThreads = b.ioThreads;
    this.prefetch = b.prefetch;
    this.nodeCacheBytes = b.nodeCacheBytes;
    this.compactionEnabled = b.compactionEnabled;
    this.compactionDeletedFraction = b.compactionDeletedFraction;
    this.mergeSegmentsPerTier = b.mergeSegmentsPerTier;
    this.mergeMaxSegmentPoints = b.mergeMaxSegmentPoints;
    this.minFreeBytes = b.minFreeBytes;
    this.liveGraph = b.liveGraph;
    this.backgroundNice = b.backgroundNice;
    this.buildThreads = b.buildThreads;
    this.buildMemoryBytes = b.buildMemoryBytes;
    this.crashPoint = b.crashPoint;
    this.crashPointHit = b.crashPointHit;
    this.memoryPlan = b.memoryPlan;
  }

  /** The memory plan the engine lives within, or {@code null} (none: no memory limits). */
  public MemoryPlan memoryPlan() {
    return memoryPlan;
  }

  /**
   * Heap bytes one index build or merge may use: the memory plan's build slice, or without a plan
   * the same share ({@value #BUILD_HEAP_SHARE}) of the JVM's maximum heap.
   */
  public long buildMemoryBytes() {
    if (buildMemoryBytes > 0) {
      return buildMemoryBytes;
    }
    return memoryPlan != null
        ? memoryPlan.build()
        : (long) (Runtime.getRuntime().maxMemory() * BUILD_HEAP_SHARE);
  }

  /** The build slice's share of the heap when no memory plan is given. */
  static final double BUILD_HEAP_SHARE = 0.30;

  /** Settings with the server's defaults for the engine whose data lives in {@code dataDir}. */
  public static Builder builder(Path dataDir) {
    return new Builder(dataDir);
  }

  /** Sets one setting at a time; {@link #build()} makes the settings. Not thread-safe. */
  public static final class Builder {
    private final Path dataDir;
    private int sealThresholdPoints = 100_000;
    private FsyncPolicy walFsyncPolicy = FsyncPolicy.ALWAYS;
    private long walSegmentBytes = 64L << 20;
    private Duration walFsyncInterval = Duration.ofSeconds(1);
    private WalListener walListener;
    private int defaultSearchList = 100;
    private int beamWidth;
    private int ioThreads = IoThreads.DEFAULT_THREADS;
    private DiskAnnSettings.Prefetch prefetch = DiskAnnSettings.Prefetch.AUTO;
    private long nodeCacheBytes = DEFAULT_NODE_CACHE_BYTES;
    private boolean compactionEnabled = true;
    private double compactionDeletedFraction = 0.2;
    private int mergeSegmentsPerTier = Shard.Compaction.DEFAULT_SEGMENTS_PER_TIER;
    private int mergeMaxSegmentPoints = Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS;
    private long minFreeBytes;
    private boolean liveGraph = true;
    private int backgroundNice;
    private int buildThreads;
    private long buildMemoryBytes; // 0: the memory plan's build slice
    private CrashPoint crashPoint;
    private int crashPointHit = 1;
    private MemoryPlan memoryPlan;

    private Builder(Path dataDir) {
      this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
    }

    /** Points after which a growing segment is sealed and indexed. */
    public Builder sealThresholdPoints(int n) {
      this.sealThresholdPoints = n;
      return this;
    }

    /**
     * {@code always}, {@code interval} or {@code never}.
     *
     * @throws IllegalArgumentException naming the value for another one
     */
    public Builder walFsyncPolicy(String policy) {
      this.walFsyncPolicy = FsyncPolicy.parse(policy);
      return this;
    }

    public Builder walSegmentBytes(long bytes) {
      this.walSegmentBytes = bytes;
      return this;
    }

    /** How often the {@code interval} policy fsyncs. */
    public Builder walFsyncInterval(Duration interval) {
      this.walFsyncInterval = interval;
      return this;
    }

    public Builder walListener(WalListener listener) {
      this.walListener = listener;
      return this;
    }

    /** The search list of a request that sets none. */
    public Builder defaultSearchList(int n) {
      this.defaultSearchList = n;
      return this;
    }

    /** Records read together per beam step when a request sets none (0: the index's default). */
    public Builder beamWidth(int n) {
      this.beamWidth = n;
      return this;
    }

    /**
     * Threads that issue the reads of sealed graphs for all searches: the queue depth the device
     * sees from searches.
     *
     * @throws IllegalArgumentException naming the value when it is outside 1..{@value
     *     IoThreads#MAX_THREADS}
     */
    public Builder ioThreads(int n) {
      if (n < 1 || n > IoThreads.MAX_THREADS) {
        throw new IllegalArgumentException(
            "io-threads must be in 1.." + IoThreads.MAX_THREADS + " [io-threads=" + n + "]");
      }
      this.ioThreads = n;
      return this;
    }

    /**
     * {@code auto}, {@code on} or {@code off}: whether searches prefetch a step's records.
     *
     * @throws IllegalArgumentException "prefetch must be auto, on or off" naming the value
     */
    public Builder prefetch(String mode) {
      try {
        this.prefetch = DiskAnnSettings.Prefetch.valueOf(mode.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException | NullPointerException e) {
        throw new IllegalArgumentException(
            "prefetch must be auto, on or off [value=" + mode + "]", e);
      }
      return this;
    }

    /**
     * Native bytes for the sealed graphs' hot node caches, split over the open segments (0: no
     * caches).
     *
     * @throws IllegalArgumentException "node-cache-bytes must be at least 0" naming the value
     */
    public Builder nodeCacheBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException(
            "node-cache-bytes must be at least 0 [node-cache-bytes=" + bytes + "]");
      }
      this.nodeCacheBytes = bytes;
      return this;
    }

    /** Whether compactions start by themselves (an explicit compaction works either way). */
    public Builder compactionEnabled(boolean enabled) {
      this.compactionEnabled = enabled;
      return this;
    }

    /** A segment is rewritten once this share of its points is deleted. */
    public Builder compactionDeletedFraction(double fraction) {
      this.compactionDeletedFraction = fraction;
      return this;
    }

    /** Sealed segments allowed per size tier before a merge (and the most one merge takes). */
    public Builder mergeSegmentsPerTier(int n) {
      this.mergeSegmentsPerTier = n;
      return this;
    }

    /** No merge produces a segment of more live points than this. */
    public Builder mergeMaxSegmentPoints(int n) {
      this.mergeMaxSegmentPoints = n;
      return this;
    }

    /** Free space kept on the data directory's disk; writes that would take it answer 507. */
    public Builder minFreeBytes(long bytes) {
      this.minFreeBytes = bytes;
      return this;
    }

    /** Whether growing segments of graph indexes get a live graph. */
    public Builder liveGraph(boolean on) {
      this.liveGraph = on;
      return this;
    }

    /** The CPU priority (nice, 0..19) of background work: live-graph inserts, compactions. */
    public Builder backgroundNice(int nice) {
      this.backgroundNice = nice;
      return this;
    }

    /** Threads of an index build (0: one per core). */
    public Builder buildThreads(int n) {
      this.buildThreads = n;
      return this;
    }

    /**
     * Heap one segment build or merge may use (default: the memory plan's build slice); a larger
     * one is built in partitions that fit it.
     *
     * @throws IllegalArgumentException naming the value below {@link
     *     DiskAnnSettings#MIN_BUILD_MEMORY_BYTES}
     */
    public Builder buildMemoryBytes(long bytes) {
      if (bytes < DiskAnnSettings.MIN_BUILD_MEMORY_BYTES) {
        throw new IllegalArgumentException(
            "build memory must be at least "
                + DiskAnnSettings.MIN_BUILD_MEMORY_BYTES
                + " bytes [buildMemoryBytes="
                + bytes
                + "]");
      }
      this.buildMemoryBytes = bytes;
      return this;
    }

    /**
     * Crash testing: the file system halts the JVM the {@code hit}-th time it reaches the crash
     * point {@code name} ({@code null} or blank: never).
     *
     * @throws IllegalArgumentException for an unknown point (naming the known ones) or a hit below
     *     1
     */
    public Builder crashPoint(String name, int hit) {
      if (name == null || name.isBlank()) {
        this.crashPoint = null;
        return this;
      }
      CrashPoint p = CrashPoint.parse(name);
      if (hit < 1) {
        throw new IllegalArgumentException("crash point hit must be at least 1 [hit=" + hit + "]");
      }
      this.crashPoint = p;
      this.crashPointHit = hit;
      return this;
    }

    /**
     * The memory plan to live within: growing segments seal at their share of its growing slice,
     * merges stay within its build slice ({@code null}: no limits).
     */
    public Builder memoryPlan(MemoryPlan plan) {
      this.memoryPlan = plan;
      return this;
    }

    public EngineSettings build() {
      return new EngineSettings(this);
    }
  }
}
