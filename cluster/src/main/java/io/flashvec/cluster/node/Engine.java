package io.flashvec.cluster.node;

import io.flashvec.index.disk.NodeCacheBudget;
import io.flashvec.index.diskann.DiskAnnSettings;
import io.flashvec.index.memory.MemoryLimits;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.index.shard.LiveIndexer;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.FsyncPolicy;
import io.flashvec.storage.HaltingFileIO;
import io.flashvec.storage.IoThreads;
import io.flashvec.storage.ThreadPriority;
import io.flashvec.storage.Wal;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads a node's local engine runs on and the shard options made from its {@link
 * EngineSettings}: one WAL flusher, one index build thread (jvector parallelises inside a build),
 * one live-graph insert thread at a lowered CPU priority with an urgent lane at normal priority
 * (ADR 0011, 0017), one low-priority compaction thread whose builds use every core at low priority.
 * Owns them: {@link #close()} stops them.
 */
final class Engine implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

  final EngineSettings settings;
  final FileIO io;
  final FsyncPolicy fsyncPolicy;
  final DiskAnnSettings diskAnn;
  private final ScheduledExecutorService walScheduler =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().name("flashvec-wal-flusher").daemon(true).factory());
  private final ExecutorService indexBuilds =
      Executors.newSingleThreadExecutor(
          Thread.ofPlatform().name("flashvec-index-build").daemon(true).factory());
  private final ExecutorService liveIndex;
  private final ExecutorService liveIndexUrgent =
      Executors.newSingleThreadExecutor(
          Thread.ofPlatform().name("flashvec-live-index-urgent").daemon(true).factory());
  private final ExecutorService compactions;
  private final ForkJoinPool compactionBuilds;
  private final MemoryLimits memory;

  Engine(EngineSettings settings) {
    this.settings = settings;
    this.io = fileIo(settings.crashPoint, settings.crashPointHit);
    this.fsyncPolicy = settings.walFsyncPolicy;
    this.diskAnn =
        new DiskAnnSettings(
            settings.prefetch,
            Math.clamp(settings.beamWidth, 0, DiskAnnSettings.MAX_BEAM_WIDTH),
            buildPool(settings.buildThreads),
            new NodeCacheBudget(settings.nodeCacheBytes),
            settings.buildMemoryBytes(),
            new IoThreads(settings.ioThreads));
    this.liveIndex =
        Executors.newSingleThreadExecutor(
            background("flashvec-live-index", settings.backgroundNice));
    this.compactions =
        Executors.newSingleThreadExecutor(
            background("flashvec-compaction", settings.backgroundNice));
    this.compactionBuilds = compactionPool(settings.buildThreads, settings.backgroundNice);
    this.memory = settings.memoryPlan == null ? null : MemoryLimits.of(settings.memoryPlan);
  }

  /**
   * The shard options; with {@code builder} segment builds go there (a cluster's query node sends
   * them to index nodes), else they run in this process.
   */
  Shard.Options shardOptions(SegmentBuilder builder) {
    Wal.Listener listener = Wal.Listener.NONE;
    EngineSettings.WalListener l = settings.walListener;
    if (l != null) {
      listener =
          new Wal.Listener() {
            @Override
            public void onAppend(int recordBytes) {
              l.onAppend(recordBytes);
            }

            @Override
            public void onFsync(long nanos) {
              l.onFsync(nanos);
            }
          };
    }
    Wal.Options wal =
        Wal.Options.defaults()
            .withPolicy(fsyncPolicy)
            .withSegmentBytes(settings.walSegmentBytes)
            .withScheduler(walScheduler, settings.walFsyncInterval)
            .withListener(listener);
    Shard.Options options =
        new Shard.Options(
                settings.sealThresholdPoints,
                wal,
                io,
                indexBuilds,
                settings.defaultSearchList,
                new Shard.Compaction(
                    compactions,
                    compactionBuilds,
                    settings.compactionDeletedFraction,
                    settings.mergeSegmentsPerTier,
                    settings.mergeMaxSegmentPoints,
                    settings.compactionEnabled))
            .withDiskSpace(new DiskSpace(FileIO.DEFAULT, settings.minFreeBytes))
            .withDiskAnn(diskAnn)
            .withMemory(memory);
    if (settings.liveGraph) {
      options = options.withLiveIndexer(new LiveIndexer(liveIndex, liveIndexUrgent));
    }
    return builder == null ? options : options.withSegmentBuilder(builder);
  }

  /** Logs what the engine runs with. */
  void logStart(String roles, String bind, int port) {
    LOG.info(
        "starting FlashVec [dataDir={}, bind={}, port={}, roles={}, fsyncPolicy={}, prefetch={},"
            + " beamWidth={}, ioThreads={}, minFreeBytes={}, buildMemoryBytes={}]",
        settings.dataDir.toAbsolutePath().normalize(),
        bind,
        port,
        roles,
        fsyncPolicy.configName(),
        diskAnn.prefetch().name().toLowerCase(Locale.ROOT),
        settings.beamWidth,
        diskAnn.ioThreads().threads(),
        settings.minFreeBytes,
        diskAnn.buildMemoryBytes());
    if (settings.memoryPlan != null) {
      LOG.info(settings.memoryPlan.describe());
    }
  }

  /**
   * The file system: the real one, or with a crash point one that halts the JVM there (crash tests
   * of the server process).
   */
  static FileIO fileIo(CrashPoint point, int hit) {
    if (point == null) {
      return FileIO.DEFAULT;
    }
    LOG.warn(
        "crash testing: the server halts when it reaches a crash point [point={}, hit={}]",
        point,
        hit);
    return new HaltingFileIO(point, hit);
  }

  /** jvector's pool for index builds with {@code threads} workers (0: jvector's own pools). */
  private static ForkJoinPool buildPool(int threads) {
    if (threads <= 0) {
      return null;
    }
    return new ForkJoinPool(
        threads,
        pool -> {
          ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
          t.setName("flashvec-index-build-" + t.getPoolIndex());
          t.setDaemon(true);
          return t;
        },
        null,
        false);
  }

  /**
   * jvector's build work for merges and compactions: as many workers as an index build gets ({@code
   * flashvec.segment.build-threads}, 0 = one per core), each at the background nice value, so a
   * merge of tens of millions of points uses every idle core and the kernel gives the cores to
   * requests first whenever they want them.
   */
  private static ForkJoinPool compactionPool(int threads, int nice) {
    return new ForkJoinPool(
        threads > 0 ? threads : Runtime.getRuntime().availableProcessors(),
        pool -> {
          ForkJoinWorkerThread t =
              new ForkJoinWorkerThread(null, pool, true) {
                @Override
                protected void onStart() {
                  super.onStart();
                  ThreadPriority.lowerCurrentOrWarn(nice);
                }
              };
          t.setName("flashvec-compaction-build-" + t.getPoolIndex());
          t.setDaemon(true);
          return t;
        },
        null,
        false);
  }

  /** What {@link FlashVecNode#resources()} reports of this engine. */
  FlashVecNode.Resources resources() {
    var io = diskAnn.ioThreads();
    return new FlashVecNode.Resources(
        diskAnn.prefetch().name().toLowerCase(java.util.Locale.ROOT),
        io.threads(),
        io.queued(),
        io.pagesRead(),
        io.bytesRead(),
        settings.memoryPlan,
        memory == null ? 0 : memory.residentTotal(),
        settings.minFreeBytes,
        memory == null ? java.util.Map.of() : memory.codesShrunk(),
        memory == null ? 0 : memory.pointsTotal());
  }

  /**
   * Daemon platform threads named {@code name} that lower their own CPU priority to {@code nice}
   * when they start ({@link Thread#setPriority} does nothing on Linux).
   */
  private static ThreadFactory background(String name, int nice) {
    return ThreadPriority.lowering(Thread.ofPlatform().name(name).daemon(true).factory(), nice);
  }

  @Override
  public void close() {
    for (ExecutorService e :
        List.of(walScheduler, indexBuilds, liveIndex, liveIndexUrgent, compactions)) {
      e.shutdownNow();
    }
    compactionBuilds.shutdownNow();
    if (diskAnn.buildPool() != null) {
      diskAnn.buildPool().shutdownNow();
    }
    diskAnn.ioThreads().close();
  }
}
