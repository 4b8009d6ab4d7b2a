package io.flashvec.api.system;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.metrics.SearchMetrics;
import io.flashvec.cluster.ClusterCollectionService;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.EtcdMetadataStore;
import io.flashvec.cluster.GrpcTls;
import io.flashvec.cluster.IndexServer;
import io.flashvec.cluster.LocalCollectionService;
import io.flashvec.cluster.RemoteSegmentBuilder;
import io.flashvec.cluster.ShardServer;
import io.flashvec.cluster.internal.ShardClients;
import io.flashvec.index.UnavailableException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.context.event.EventListener;

/**
 * Cluster mode (when {@code flashvec.cluster.etcd-endpoints} is set): metadata in etcd, the query
 * role's gRPC {@link ShardServer} over the local engine, and — with the proxy role — the {@link
 * ClusterCollectionService} that the REST layer then uses instead of the local engine ({@link
 * Primary}). Without etcd endpoints none of this exists and standalone runs exactly as before.
 *
 * <p>Start-up: the local engine recovers as in standalone ({@link EngineConfiguration}); then, on a
 * background thread, the etcd cache is loaded, the gRPC server started, local replicas reconciled
 * with the placement, and the node registered under a lease. Shut-down runs the other way round:
 * the gRPC server stops, the lease is revoked (other nodes stop routing here at once), then the
 * engine closes.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${flashvec.cluster.etcd-endpoints:}' != ''")
public class ClusterConfiguration {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterConfiguration.class);

  /** How long a query node waits for an index node to build one segment before building itself. */
  private static final java.time.Duration BUILD_DEADLINE = java.time.Duration.ofHours(1);

  @Bean(destroyMethod = "close")
  EtcdMetadataStore etcdMetadataStore(FlashVecProperties props) {
    return new EtcdMetadataStore(props.cluster().endpoints(), props.cluster().etcdPrefix());
  }

  /**
   * The internal gRPC's transport security, checked at start: a node with a bad TLS setting stops
   * here with the setting and the file named instead of failing its first handshake.
   */
  @Bean(destroyMethod = "close")
  GrpcTls grpcTls(FlashVecProperties props) {
    return grpcTls(props.cluster().tls());
  }

  static GrpcTls grpcTls(FlashVecProperties.Tls tls) {
    if (tls == null || !tls.enabled()) {
      if (tls != null && (tls.cert() != null || tls.key() != null || tls.ca() != null)) {
        LOG.warn(
            "flashvec.cluster.tls.cert/key/ca are set but flashvec.cluster.tls.enabled is false"
                + " (FLASHVEC_CLUSTER_TLS_ENABLED): the internal gRPC stays plaintext");
      }
      return GrpcTls.plaintext();
    }
    List<String> missing = new java.util.ArrayList<>();
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
    return GrpcTls.fromPem(
        tls.cert(),
        tls.key(),
        tls.ca(),
        GrpcTls.ClientAuth.parse(tls.clientAuth()),
        tls.authority(),
        tls.reloadInterval());
  }

  @Bean(destroyMethod = "close")
  ShardClients shardClients(EtcdMetadataStore meta, GrpcTls tls) {
    ShardClients clients = new ShardClients(tls);
    // A node that comes back is reachable at once, not after the channel's back-off.
    meta.onNodeRegistered(n -> clients.resetBackoff(n.grpcAddress()));
    return clients;
  }

  private static boolean has(FlashVecProperties props, String role) {
    return props.roles().stream().anyMatch(r -> r.trim().equalsIgnoreCase(role));
  }

  private static String nodeId(FlashVecProperties props) {
    return props.cluster().nodeId().isBlank()
        ? advertiseHost(props) + ":" + props.cluster().grpcPort()
        : props.cluster().nodeId();
  }

  private static String advertiseHost(FlashVecProperties props) {
    return props.cluster().advertiseHost().isBlank()
        ? props.bind()
        : props.cluster().advertiseHost();
  }

  /** Query nodes send their segment builds to index nodes (or build locally without one). */
  @Bean
  io.flashvec.index.segment.SegmentBuilder remoteSegmentBuilder(
      FlashVecProperties props,
      EtcdMetadataStore meta,
      ShardClients clients,
      io.flashvec.index.diskann.DiskAnnSettings diskAnn) {
    return new RemoteSegmentBuilder(
        nodeId(props),
        meta,
        clients,
        BUILD_DEADLINE,
        io.flashvec.index.diskann.DiskAnnWriter.builder(diskAnn));
  }

  /** The index role's service; serves only on nodes with that role. */
  @Bean(destroyMethod = "close")
  IndexServer indexServer(
      FlashVecProperties props, io.flashvec.index.diskann.DiskAnnSettings diskAnn) {
    return new IndexServer(
        props.dataDir().resolve("index-jobs"),
        io.flashvec.index.diskann.DiskAnnWriter.builder(diskAnn));
  }

  @Bean(destroyMethod = "close")
  ShardServer shardServer(
      FlashVecProperties props,
      LocalCollectionService local,
      EtcdMetadataStore meta,
      ShardClients clients,
      SearchMetrics metrics) {
    ShardServer server =
        new ShardServer(nodeId(props), local, meta, clients, props.cluster().writeDeadline());
    // search work is counted on the node that does it (SearchMetrics)
    server.onShardSearch(metrics::recordShardSearch);
    return server;
  }

  /**
   * What the REST layer calls: the proxy, or — on a node without the proxy role — a service that
   * answers 503 for every data call and is ready once the node serves its shards.
   */
  @Bean(destroyMethod = "close")
  @Primary
  CollectionService clusterCollectionService(
      FlashVecProperties props,
      EtcdMetadataStore meta,
      ShardClients clients,
      LocalCollectionService local,
      ClusterStarter starter) {
    if (has(props, "proxy")) {
      ClusterCollectionService proxy =
          new ClusterCollectionService(
              meta, clients, props.cluster().searchDeadline(), props.cluster().writeDeadline());
      return (CollectionService)
          Proxy.newProxyInstance(
              CollectionService.class.getClassLoader(),
              new Class<?>[] {CollectionService.class, AutoCloseable.class},
              (self, m, args) -> {
                if (m.getName().equals("ready") && m.getParameterCount() == 0) {
                  return proxy.ready() && starter.started();
                }
                try {
                  return m.invoke(proxy, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
              });
    }
    String roles = String.join(",", props.roles());
    return (CollectionService)
        Proxy.newProxyInstance(
            CollectionService.class.getClassLoader(),
            new Class<?>[] {CollectionService.class, AutoCloseable.class},
            (self, m, args) ->
                switch (m.getName()) {
                  case "ready" -> local.ready() && starter.started();
                  case "close" -> null;
                  case "toString" -> "NoProxyRole[" + roles + "]";
                  case "hashCode" -> System.identityHashCode(self);
                  case "equals" -> self == args[0];
                  default ->
                      throw new UnavailableException(
                          "Service unavailable: this node has no proxy role; send requests to a"
                              + " proxy [roles="
                              + roles
                              + "]");
                });
  }

  @Bean
  ClusterStarter clusterStarter(
      FlashVecProperties props,
      EtcdMetadataStore meta,
      ShardServer shardServer,
      IndexServer indexServer,
      LocalCollectionService local,
      GrpcTls tls) {
    return new ClusterStarter(props, meta, shardServer, indexServer, local, tls);
  }

  /** Joins the cluster once the application and the local engine are up. */
  public static final class ClusterStarter {
    private final FlashVecProperties props;
    private final EtcdMetadataStore meta;
    private final ShardServer shardServer;
    private final IndexServer indexServer;
    private final LocalCollectionService local;
    private final GrpcTls tls;
    private volatile boolean started;

    ClusterStarter(
        FlashVecProperties props,
        EtcdMetadataStore meta,
        ShardServer shardServer,
        IndexServer indexServer,
        LocalCollectionService local,
        GrpcTls tls) {
      this.props = props;
      this.meta = meta;
      this.shardServer = shardServer;
      this.indexServer = indexServer;
      this.local = local;
      this.tls = tls;
    }

    public boolean started() {
      return started;
    }

    @EventListener(ApplicationReadyEvent.class)
    public void start() {
      Thread.ofPlatform()
          .name("flashvec-cluster-join")
          .daemon(true)
          .start(
              () -> {
                try {
                  meta.start();
                  String id = nodeId(props);
                  List<String> roles = props.roles().stream().map(String::trim).toList();
                  EtcdMetadataStore.Node self =
                      new EtcdMetadataStore.Node(
                          id,
                          advertiseHost(props) + ":" + props.cluster().grpcPort(),
                          advertiseHost(props) + ":" + props.port(),
                          roles);
                  List<io.grpc.BindableService> more = new java.util.ArrayList<>();
                  if (has(props, "index")) {
                    indexServer.prepare();
                    more.add(indexServer);
                  }
                  if (has(props, "query")) {
                    while (!local.ready()) {
                      Thread.sleep(50);
                    }
                    shardServer.start(
                        props.bind(),
                        props.cluster().grpcPort(),
                        tls,
                        self,
                        props.cluster().leaseTtl(),
                        more);
                  } else {
                    if (!more.isEmpty()) {
                      indexServer.serve(props.bind(), props.cluster().grpcPort(), tls);
                    }
                    meta.register(self, props.cluster().leaseTtl());
                  }
                  started = true;
                  LOG.info("joined the cluster [node={}, roles={}]", id, roles);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                  LOG.error("cannot join the cluster; this node stays unready", e);
                }
              });
    }
  }
}
