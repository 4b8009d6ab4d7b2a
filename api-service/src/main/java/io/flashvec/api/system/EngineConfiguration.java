package io.flashvec.api.system;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.cluster.LocalCollectionService;
import io.flashvec.index.diskann.DiskAnnSettings;
import io.flashvec.index.shard.LiveIndexer;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.FsyncPolicy;
import io.flashvec.storage.HaltingFileIO;
import io.flashvec.storage.ThreadPriority;
import io.flashvec.storage.Wal;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * Creates the standalone engine (all roles in this JVM) and recovers it in the background once the
 * HTTP server is up, so {@code /healthz} answers at once and {@code /readyz} turns 200 only when
 * every WAL has been replayed.
 */
@Configuration(proxyBeanMethods = false)
public class EngineConfiguration {

  private static final Logger LOG = LoggerFactory.getLogger(EngineConfiguration.class);

  /** Owns the WAL flusher thread; shut down with the context. */
  @Bean(destroyMethod = "shutdownNow")
  ScheduledExecutorService walScheduler() {
    return Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("flashvec-wal-flusher").daemon(true).factory());
  }

  /**
   * Builds segment indexes one at a time, off the request path (jvector parallelises inside a
   * build); owned and shut down with the context.
   */
  @Bean(destroyMethod = "shutdownNow")
  ExecutorService indexBuildExecutor() {
    return Executors.newSingleThreadExecutor(
        Thread.ofPlatform().name("flashvec-index-build").daemon(true).factory());
  }

  /**
   * Inserts new points into the live graphs of growing segments (ADR 0011), on a thread with a
   * lowered CPU priority ({@code flashvec.segment.background-nice}): the inserts take the cycles
   * queries leave. One thread for every shard; owned and shut down with the context.
   */
  @Bean(destroyMethod = "shutdownNow")
  ExecutorService liveIndexExecutor(FlashVecProperties props) {
    return Executors.newSingleThreadExecutor(
        background("flashvec-live-index", props.segment().backgroundNice()));
  }

  /**
   * The live indexer's urgent lane, at normal priority: a graph far behind its writes (every query
   * scans its unindexed points) catches up here even when queries leave no cycles.
   */
  @Bean(destroyMethod = "shutdownNow")
  ExecutorService liveIndexUrgentExecutor() {
    return Executors.newSingleThreadExecutor(
        Thread.ofPlatform().name("flashvec-live-index-urgent").daemon(true).factory());
  }

  /**
   * Runs compactions one at a time for all shards on one low-priority thread (compaction must not
   * starve queries); owned and shut down with the context.
   */
  @Bean(destroyMethod = "shutdownNow")
  ExecutorService compactionExecutor(FlashVecProperties props) {
    return Executors.newSingleThreadExecutor(
        background("flashvec-compaction", props.segment().backgroundNice()));
  }

  /**
   * jvector's build work for compactions: one low-priority worker, so a compaction uses at most one
   * core however many jvector would take (index builds of new data keep jvector's pools).
   */
  @Bean(destroyMethod = "shutdownNow")
  ForkJoinPool compactionBuildPool(FlashVecProperties props) {
    int nice = props.segment().backgroundNice();
    return new ForkJoinPool(
        1,
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

  /**
   * Daemon platform threads named {@code name} that lower their own CPU priority to {@code nice}
   * when they start ({@link Thread#setPriority} does nothing on Linux).
   */
  static ThreadFactory background(String name, int nice) {
    return ThreadPriority.lowering(Thread.ofPlatform().name(name).daemon(true).factory(), nice);
  }

  @Bean(destroyMethod = "close")
  LocalCollectionService collectionService(
      FlashVecProperties props,
      MeterRegistry registry,
      ScheduledExecutorService walScheduler,
      @Qualifier("indexBuildExecutor") ExecutorService indexBuildExecutor,
      @Qualifier("compactionExecutor") ExecutorService compactionExecutor,
      @Qualifier("liveIndexExecutor") ExecutorService liveIndexExecutor,
      @Qualifier("liveIndexUrgentExecutor") ExecutorService liveIndexUrgentExecutor,
      ForkJoinPool compactionBuildPool,
      DiskAnnSettings diskAnnSettings,
      org.springframework.beans.factory.ObjectProvider<io.flashvec.index.segment.SegmentBuilder>
          segmentBuilder) {
    Timer fsync =
        Timer.builder("flashvec.wal.fsync").description("WAL fsync latency").register(registry);
    Counter appended =
        Counter.builder("flashvec.wal.appended.bytes")
            .description("Bytes appended to WALs")
            .baseUnit("bytes")
            .register(registry);
    Wal.Listener listener =
        new Wal.Listener() {
          @Override
          public void onAppend(int recordBytes) {
            appended.increment(recordBytes);
          }

          @Override
          public void onFsync(long nanos) {
            fsync.record(nanos, TimeUnit.NANOSECONDS);
          }
        };
    FsyncPolicy policy = FsyncPolicy.parse(props.wal().fsyncPolicy());
    Wal.Options walOptions =
        Wal.Options.defaults()
            .withPolicy(policy)
            .withSegmentBytes(props.wal().segmentBytes().toBytes())
            .withScheduler(walScheduler, props.wal().fsyncInterval())
            .withListener(listener);
    Shard.Options shardOptions =
        new Shard.Options(
            props.segment().sealThresholdPoints(),
            walOptions,
            fileIo(props.testing()),
            indexBuildExecutor,
            props.search().defaultSearchList(),
            new Shard.Compaction(
                compactionExecutor,
                compactionBuildPool,
                props.compaction().deletedFraction(),
                props.compaction().maxSmallSegments(),
                props.compaction().enabled()));
    shardOptions =
        shardOptions.withDiskSpace(
            new DiskSpace(FileIO.DEFAULT, props.storage().minFreeBytes().toBytes()));
    if (props.segment().liveGraph()) {
      shardOptions =
          shardOptions.withLiveIndexer(
              new LiveIndexer(
                  liveIndexExecutor,
                  liveIndexUrgentExecutor,
                  props.segment().liveIndexAssist() ? LiveIndexer.ASSIST_QUIET : null));
    }
    // Cluster mode sends builds to index nodes (ClusterConfiguration); standalone builds here.
    io.flashvec.index.segment.SegmentBuilder builder = segmentBuilder.getIfAvailable();
    if (builder != null) {
      shardOptions = shardOptions.withSegmentBuilder(builder);
    }
    shardOptions = shardOptions.withDiskAnn(diskAnnSettings);
    LOG.info(
        "starting FlashVec [dataDir={}, bind={}, port={}, roles={}, fsyncPolicy={}, prefetch={},"
            + " beamWidth={}, minFreeBytes={}, shutdownGracePeriod={}]",
        props.dataDir().toAbsolutePath().normalize(),
        props.bind(),
        props.port(),
        String.join(",", props.roles()),
        policy.configName(),
        diskAnnSettings.prefetch().name().toLowerCase(Locale.ROOT),
        props.search().beamWidth(),
        props.storage().minFreeBytes().toBytes(),
        props.shutdown().gracePeriod());
    return new LocalCollectionService(props.dataDir(), shardOptions);
  }

  /**
   * Cancels builds and compactions first when the server stops, and bounds the shutdown by {@code
   * flashvec.shutdown.grace-period}, which must leave room after the web server's drain ({@code
   * spring.lifecycle.timeout-per-shutdown-phase}) for closing the WALs: a grace period that does
   * not is refused at start-up rather than cut short at shutdown.
   */
  @Bean
  EngineShutdown engineShutdown(
      LocalCollectionService service,
      FlashVecProperties props,
      org.springframework.core.env.Environment env) {
    Duration grace = props.shutdown().gracePeriod();
    Duration drain =
        env.getProperty(
            "spring.lifecycle.timeout-per-shutdown-phase", Duration.class, Duration.ofSeconds(30));
    if (drain.compareTo(grace) >= 0) {
      throw new IllegalArgumentException(
          "flashvec.shutdown.grace-period must be longer than"
              + " spring.lifecycle.timeout-per-shutdown-phase, which the web server may spend"
              + " finishing requests before the WALs are closed [grace-period="
              + grace
              + ", timeout-per-shutdown-phase="
              + drain
              + "]");
    }
    return new EngineShutdown(service, grace);
  }

  /**
   * Replays the WALs off the startup thread; readiness follows {@link
   * LocalCollectionService#ready()}.
   */
  @Bean
  RecoveryStarter recoveryStarter(LocalCollectionService service) {
    return new RecoveryStarter(service);
  }

  /** Starts recovery when the application is ready. */
  public static final class RecoveryStarter {
    private final LocalCollectionService service;
    private volatile Throwable failure;

    RecoveryStarter(LocalCollectionService service) {
      this.service = service;
    }

    @EventListener(ApplicationReadyEvent.class)
    public void start() {
      Thread.ofPlatform()
          .name("flashvec-recovery")
          .start(
              () -> {
                try {
                  service.recover();
                } catch (Throwable t) {
                  failure = t;
                  LOG.error("recovery failed; the server stays unready", t);
                }
              });
    }

    /** Why recovery failed, or {@code null}. */
    public Throwable failure() {
      return failure;
    }

    /** Collections that failed to open at recovery, with the reason (see the service). */
    public java.util.Map<String, String> failedCollections() {
      return service.failedCollections();
    }
  }

  /**
   * The file system: the real one, or with {@code flashvec.testing.crash-point} set one that halts
   * the JVM at that point (crash tests of the server process).
   */
  static FileIO fileIo(FlashVecProperties.Testing testing) {
    String point = testing.crashPoint();
    if (point == null || point.isBlank()) {
      return FileIO.DEFAULT;
    }
    CrashPoint p;
    try {
      p = CrashPoint.parse(point);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("flashvec.testing.crash-point: " + e.getMessage(), e);
    }
    if (testing.crashPointHit() < 1) {
      throw new IllegalArgumentException(
          "flashvec.testing.crash-point-hit must be at least 1 [crash-point-hit="
              + testing.crashPointHit()
              + "]");
    }
    LOG.warn(
        "crash testing: the server halts when it reaches a crash point [point={}, hit={}]",
        p,
        testing.crashPointHit());
    return new HaltingFileIO(p, testing.crashPointHit());
  }

  /**
   * How sealed segments read from the device and where index builds run ({@code
   * flashvec.search.prefetch}, {@code flashvec.search.beam-width}, {@code
   * flashvec.segment.build-threads}); shared by the shards, the index role and cluster builds.
   */
  @Bean
  DiskAnnSettings diskAnnSettings(FlashVecProperties props) {
    int buildThreads = props.segment().buildThreads();
    ForkJoinPool buildPool =
        buildThreads > 0
            ? new ForkJoinPool(
                buildThreads,
                pool -> {
                  ForkJoinWorkerThread t =
                      ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
                  t.setName("flashvec-index-build-" + t.getPoolIndex());
                  t.setDaemon(true);
                  return t;
                },
                null,
                false)
            : null;
    return new DiskAnnSettings(
        prefetch(props.search().prefetch()),
        Math.clamp(props.search().beamWidth(), 0, DiskAnnSettings.MAX_BEAM_WIDTH),
        buildPool);
  }

  private static DiskAnnSettings.Prefetch prefetch(String value) {
    try {
      return DiskAnnSettings.Prefetch.valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "flashvec.search.prefetch must be auto, on or off [value=" + value + "]", e);
    }
  }
}
