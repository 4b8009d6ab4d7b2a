package io.flashvec.cluster.node;

import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.local.LocalCollectionService;
import io.flashvec.cluster.local.LocalData;
import io.flashvec.index.SearchStats;
import java.io.Closeable;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One FlashVec process: its local engine and, in a cluster, its roles — what the REST layer builds
 * and serves from. Standalone, the engine holds the collections and {@link #service()} is the
 * in-process {@link LocalCollectionService}; in a cluster it holds this node's shard replicas and
 * {@link #service()} is the proxy (or, on a node without the proxy role, a service that answers
 * 503).
 *
 * <p>Life cycle: {@link #standalone} or {@link #cluster} (settings checked, data directory locked),
 * then {@link #start()} (recovery, and joining the cluster, in the background), then {@link
 * #stopBackgroundWork()} and {@link #close()} at shutdown. Thread-safe.
 */
public final class FlashVecNode implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(FlashVecNode.class);

  /** A local collection's (or replica's) figures for metrics. */
  public record LocalStats(
      long points,
      int segments,
      long walBytes,
      long diskBytes,
      long memoryBytes,
      io.flashvec.index.IndexingState indexing) {}

  /**
   * What this node's engine uses and enforces, for telemetry.
   *
   * @param prefetch the pipelined search setting ({@code auto}, {@code on}, {@code off})
   * @param ioThreads threads issuing the pipelined searches' page reads
   * @param ioQueued page reads queued and not yet issued
   * @param ioPagesRead pages read by those threads since the start
   * @param ioBytesRead bytes read by those threads since the start
   * @param memoryPlan the memory budget's slices, {@code null} without a budget
   * @param residentIndexBytes the sealed segments' resident index, all shards together
   * @param minFreeBytes disk space kept free: writes that would take it get 507 (0: none)
   */
  public record Resources(
      String prefetch,
      int ioThreads,
      int ioQueued,
      long ioPagesRead,
      long ioBytesRead,
      io.flashvec.index.memory.MemoryPlan memoryPlan,
      long residentIndexBytes,
      long minFreeBytes,
      java.util.Map<Integer, Integer> pqBytesShrunk,
      long pointsHeld) {}

  private final Engine engine;
  private final LocalData local;
  private final CollectionService service;
  private final ClusterRoles cluster;
  private volatile Throwable failure;

  private FlashVecNode(Engine engine, LocalData local, CollectionService service, ClusterRoles c) {
    this.engine = engine;
    this.local = local;
    this.service = service;
    this.cluster = c;
  }

  /** A standalone node: every collection in this process. */
  public static FlashVecNode standalone(EngineSettings settings) {
    Engine engine = new Engine(settings);
    try {
      LocalCollectionService local =
          new LocalCollectionService(settings.dataDir, engine.shardOptions(null));
      return new FlashVecNode(engine, local, local, null);
    } catch (RuntimeException e) {
      engine.close();
      throw e;
    }
  }

  /** A cluster node with the roles and the metadata store {@code cluster} names. */
  public static FlashVecNode cluster(EngineSettings settings, ClusterSettings cluster) {
    Engine engine = new Engine(settings);
    try {
      ClusterRoles roles = new ClusterRoles(engine, cluster);
      return new FlashVecNode(engine, roles.replicas(), roles.service(), roles);
    } catch (RuntimeException e) {
      engine.close();
      throw e;
    }
  }

  /** What the REST layer calls. */
  public CollectionService service() {
    return service;
  }

  /**
   * Recovers the local data (WAL replay) and, in a cluster, joins it, on background threads: {@link
   * CollectionService#ready()} turns true when done.
   */
  public void start() {
    Thread.ofPlatform()
        .name("flashvec-recovery")
        .start(
            () -> {
              try {
                local.recover();
              } catch (Throwable t) {
                failure = t;
                LOG.error("recovery failed; the server stays unready", t);
              }
            });
    if (cluster != null) {
      Thread.ofPlatform()
          .name("flashvec-cluster-join")
          .daemon(true)
          .start(
              () -> {
                try {
                  cluster.join();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                  LOG.error("cannot join the cluster; this node stays unready", e);
                }
              });
    }
  }

  /** The settings this node's engine runs with. */
  public EngineSettings engineSettings() {
    return engine.settings;
  }

  /** Logs what the engine runs with (at start-up). */
  public void logSettings(String roles, String bind, int port) {
    engine.logStart(roles, bind, port);
  }

  /** What this node's engine uses and enforces ({@link Resources}). */
  public Resources resources() {
    return engine.resources();
  }

  /** Why recovery failed, or {@code null}. */
  public Throwable failure() {
    return failure;
  }

  /** Whether the local data has recovered (WAL replay finished). */
  public boolean localReady() {
    return local.ready();
  }

  /**
   * Local collections (or replicas) whose files could not be opened at recovery, by name, with the
   * reason; they answer 503 until deleted.
   */
  public Map<String, String> failedCollections() {
    return local.failed();
  }

  /**
   * Cancels running index builds and compactions and starts no new ones (the server is shutting
   * down); reads and writes go on until {@link #close}. Returns what was running, for the log.
   */
  public List<String> stopBackgroundWork() {
    return local.stopBackgroundWork();
  }

  /** Names of the local collections (standalone) or shard replicas (cluster). */
  public List<String> localNames() {
    return local.names();
  }

  /** A local collection's (or replica's) figures, or {@code null} once it is gone. */
  public LocalStats localStats(String name) {
    LocalData.Stats s = local.stats(name);
    return s == null
        ? null
        : new LocalStats(
            s.points(), s.segments(), s.walBytes(), s.diskBytes(), s.memoryBytes(), s.indexing());
  }

  /**
   * Tells {@code observer} the costs of every shard search this node runs for a proxy (cluster
   * query role; the work is counted where it runs).
   */
  public void onShardSearch(Consumer<SearchStats> observer) {
    if (cluster != null) {
      cluster.shardServer().onShardSearch(observer);
    }
  }

  /**
   * Leaves the cluster (gRPC server stopped, lease revoked), closes the local data (WALs synced)
   * and stops the engine's threads.
   */
  @Override
  public void close() {
    try {
      if (cluster != null) {
        cluster.close();
      } else {
        local.close();
      }
    } finally {
      engine.close();
    }
  }
}
