package io.flashvec.api.system;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.metrics.SearchMetrics;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.node.ClusterSettings;
import io.flashvec.cluster.node.EngineSettings;
import io.flashvec.cluster.node.FlashVecNode;
import io.flashvec.index.memory.MemoryPlan;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.util.unit.DataSize;

/**
 * The FlashVec node this server runs ({@link FlashVecNode}): standalone, or — when {@code
 * flashvec.cluster.etcd-endpoints} is set — a cluster node with the roles of {@code
 * flashvec.roles}. Settings are checked here, naming the setting that is wrong, so a bad one stops
 * the start-up; the node recovers (and joins the cluster) in the background once the HTTP server is
 * up, so {@code /healthz} answers at once and {@code /readyz} turns 200 when it is done.
 */
@Configuration(proxyBeanMethods = false)
public class NodeConfiguration {

  private static final Logger LOG = LoggerFactory.getLogger(NodeConfiguration.class);

  @Bean(destroyMethod = "close")
  FlashVecNode flashVecNode(
      FlashVecProperties props, MeterRegistry registry, SearchMetrics searchMetrics) {
    EngineSettings engine = engineSettings(props, walListener(registry));
    FlashVecNode node =
        props.cluster().enabled()
            ? FlashVecNode.cluster(engine, clusterSettings(props))
            : FlashVecNode.standalone(engine);
    // search work is counted on the node that does it (SearchMetrics)
    node.onShardSearch(searchMetrics::recordShardSearch);
    node.logSettings(String.join(",", props.roles()), props.bind(), props.port());
    return node;
  }

  /** What the REST layer calls: the standalone engine, the proxy, or a node that refuses. */
  @Bean
  CollectionService collectionService(FlashVecNode node) {
    return node.service();
  }

  static EngineSettings engineSettings(
      FlashVecProperties props, EngineSettings.WalListener walListener) {
    EngineSettings.Builder b =
        EngineSettings.builder(props.dataDir())
            .sealThresholdPoints(props.segment().sealThresholdPoints())
            .walFsyncPolicy(props.wal().fsyncPolicy())
            .walSegmentBytes(props.wal().segmentBytes().toBytes())
            .walFsyncInterval(props.wal().fsyncInterval())
            .walListener(walListener)
            .defaultSearchList(props.search().defaultSearchList())
            .beamWidth(props.search().beamWidth())
            .ioThreads(props.search().ioThreads())
            .compactionEnabled(props.compaction().enabled())
            .compactionDeletedFraction(props.compaction().deletedFraction())
            .mergeSegmentsPerTier(props.merge().segmentsPerTier())
            .mergeMaxSegmentPoints(props.merge().maxSegmentPoints())
            .minFreeBytes(props.storage().minFreeBytes().toBytes())
            .liveGraph(props.segment().liveGraph())
            .backgroundNice(props.segment().backgroundNice())
            .buildThreads(props.segment().buildThreads());
    try {
      b.prefetch(props.search().prefetch());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("flashvec.search." + e.getMessage(), e);
    }
    crashPoint(b, props.testing());
    MemoryPlan plan =
        memoryPlan(
            props.memory(),
            Runtime.getRuntime().availableProcessors(),
            Runtime.getRuntime().maxMemory());
    b.memoryPlan(plan);
    DataSize nodeCache = props.search().nodeCacheBytes();
    b.nodeCacheBytes(nodeCache != null ? nodeCache.toBytes() : plan.nodeCache());
    return b.build();
  }

  /**
   * The plan of {@code flashvec.memory.budget} (or the default budget) for this JVM: a budget too
   * small stops the start-up naming the setting, the budget and the minimum.
   */
  static MemoryPlan memoryPlan(FlashVecProperties.Memory memory, int processors, long maxHeap) {
    long budget = memory.budgetBytes();
    boolean set = budget > 0;
    if (!set) {
      budget = SystemMemory.defaultBudget();
    }
    MemoryPlan plan;
    try {
      plan = MemoryPlan.of(budget, processors, maxHeap);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "flashvec.memory.budget"
              + (set ? "" : " (not set: " + SystemMemory.describeDefault() + ")")
              + ": "
              + e.getMessage(),
          e);
    }
    if (maxHeap < Long.MAX_VALUE && maxHeap > plan.heap() + (64L << 20)) {
      LOG.warn(
          "the JVM's maximum heap is above the memory budget's heap: the process may outgrow the"
              + " budget (let the launcher set -Xmx, or set a smaller one) [maxHeap={},"
              + " budgetHeap={}, budget={}]",
          maxHeap,
          plan.heap(),
          plan.total());
    }
    return plan;
  }

  /** {@code flashvec.memory.slice.bytes{part=…}}: what the memory budget gives to each part. */
  @Bean
  MemoryGauges memoryGauges(FlashVecNode node, MeterRegistry registry) {
    return new MemoryGauges(node.engineSettings().memoryPlan(), registry);
  }

  /** Registers the memory plan's slices as gauges. */
  public static final class MemoryGauges {
    MemoryGauges(MemoryPlan plan, MeterRegistry registry) {
      if (plan == null) {
        return;
      }
      Map<String, Long> parts = new LinkedHashMap<>();
      parts.put("total", plan.total());
      parts.put("jvm_native", plan.jvmNative());
      parts.put("heap", plan.heap());
      parts.put("resident", plan.resident());
      parts.put("growing", plan.growing());
      parts.put("build", plan.build());
      parts.put("working", plan.working());
      parts.put("node_cache", plan.nodeCache());
      parts.put("page_cache", plan.pageCache());
      parts.forEach(
          (part, bytes) ->
              Gauge.builder("flashvec.memory.budget", () -> bytes)
                  .description("What the memory budget gives to each part of the server")
                  .baseUnit("bytes")
                  .tag("part", part)
                  .register(registry));
    }
  }

  /**
   * {@code flashvec.testing.crash-point}: blank is off; a named point halts the server the {@code
   * crash-point-hit}-th time it is reached; an unknown point or a hit below 1 stops the start-up.
   */
  static void crashPoint(EngineSettings.Builder b, FlashVecProperties.Testing testing) {
    String point = testing.crashPoint();
    if (point == null || point.isBlank()) {
      return;
    }
    if (testing.crashPointHit() < 1) {
      throw new IllegalArgumentException(
          "flashvec.testing.crash-point-hit must be at least 1 [crash-point-hit="
              + testing.crashPointHit()
              + "]");
    }
    try {
      b.crashPoint(point, testing.crashPointHit());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("flashvec.testing.crash-point: " + e.getMessage(), e);
    }
  }

  /** WAL fsync latency and appended bytes, recorded where they happen. */
  private static EngineSettings.WalListener walListener(MeterRegistry registry) {
    Timer fsync =
        Timer.builder("flashvec.wal.fsync").description("WAL fsync latency").register(registry);
    Counter appended =
        Counter.builder("flashvec.wal.appended.bytes")
            .description("Bytes appended to WALs")
            .baseUnit("bytes")
            .register(registry);
    return new EngineSettings.WalListener() {
      @Override
      public void onAppend(int recordBytes) {
        appended.increment(recordBytes);
      }

      @Override
      public void onFsync(long nanos) {
        fsync.record(nanos, TimeUnit.NANOSECONDS);
      }
    };
  }

  static ClusterSettings clusterSettings(FlashVecProperties props) {
    FlashVecProperties.Cluster c = props.cluster();
    String advertise = c.advertiseHost().isBlank() ? props.bind() : c.advertiseHost();
    Set<String> roles = new LinkedHashSet<>();
    props.roles().forEach(r -> roles.add(r.trim().toLowerCase(Locale.ROOT)));
    return new ClusterSettings(
        c.endpoints(),
        c.etcdPrefix(),
        c.nodeId().isBlank() ? advertise + ":" + c.grpcPort() : c.nodeId(),
        roles,
        props.bind(),
        c.grpcPort(),
        advertise,
        props.port(),
        c.leaseTtl(),
        c.searchDeadline(),
        c.writeDeadline(),
        tls(c.tls()));
  }

  /**
   * The internal gRPC's transport security: a node with an incomplete TLS setting stops here with
   * the settings named; a bad file stops it when the node starts, with the file named.
   */
  static ClusterSettings.Tls tls(FlashVecProperties.Tls tls) {
    if (tls == null || !tls.enabled()) {
      if (tls != null && (tls.cert() != null || tls.key() != null || tls.ca() != null)) {
        LOG.warn(
            "flashvec.cluster.tls.cert/key/ca are set but flashvec.cluster.tls.enabled is false"
                + " (FLASHVEC_CLUSTER_TLS_ENABLED): the internal gRPC stays plaintext");
      }
      return null;
    }
    List<String> missing = new ArrayList<>();
    if (tls.cert() == null) {
      missing.add("flashvec.cluster.tls.cert (FLASHVEC_CLUSTER_TLS_CERT)");
    }
    if (tls.key() == null) {
      missing.add("flashvec.cluster.tls.key (FLASHVEC_CLUSTER_TLS_KEY)");
    }
    if (tls.ca() == null) {
      missing.add("flashvec.cluster.tls.ca (FLASHVEC_CLUSTER_TLS_CA)");
    }
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(
          "flashvec.cluster.tls.enabled is true but " + String.join(", ", missing) + " not set");
    }
    return new ClusterSettings.Tls(
        tls.cert(), tls.key(), tls.ca(), tls.clientAuth(), tls.authority(), tls.reloadInterval());
  }

  /**
   * Cancels builds and compactions first when the server stops, and bounds the shutdown by {@code
   * flashvec.shutdown.grace-period}, which must leave room after the web server's drain ({@code
   * spring.lifecycle.timeout-per-shutdown-phase}) for closing the WALs: a grace period that does
   * not is refused at start-up rather than cut short at shutdown.
   */
  @Bean
  EngineShutdown engineShutdown(FlashVecNode node, FlashVecProperties props, Environment env) {
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
    return new EngineShutdown(node::stopBackgroundWork, grace);
  }

  /** Starts the node (recovery, and joining the cluster) once the application is ready. */
  @Bean
  NodeStarter nodeStarter(FlashVecNode node) {
    return new NodeStarter(node);
  }

  /** Starts the node when the application is ready. */
  public static final class NodeStarter {
    private final FlashVecNode node;

    NodeStarter(FlashVecNode node) {
      this.node = node;
    }

    @EventListener(ApplicationReadyEvent.class)
    public void start() {
      node.start();
    }
  }
}
