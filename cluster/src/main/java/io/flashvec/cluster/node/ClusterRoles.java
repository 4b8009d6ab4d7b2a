package io.flashvec.cluster.node;

import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.index.IndexServer;
import io.flashvec.cluster.index.RemoteSegmentBuilder;
import io.flashvec.cluster.metadata.EtcdMetadataStore;
import io.flashvec.cluster.metadata.Node;
import io.flashvec.cluster.proxy.ClusterProxy;
import io.flashvec.cluster.query.LocalReplicas;
import io.flashvec.cluster.query.ShardServer;
import io.flashvec.cluster.transport.GrpcServer;
import io.flashvec.cluster.transport.GrpcTls;
import io.flashvec.cluster.transport.ShardClients;
import io.flashvec.index.diskann.DiskAnnWriter;
import io.grpc.BindableService;
import java.io.Closeable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cluster node's roles and what they share: the metadata in etcd, the internal gRPC's TLS, the
 * channels to other nodes, the replicas it holds (query role), the segment builds it takes (index
 * role) and the {@link CollectionService} its REST layer serves (the proxy role's {@link
 * ClusterProxy}, or {@link NoProxyRole}).
 *
 * <p>Start-up: the local replicas recover as a standalone engine would; then {@link #join()} loads
 * the metadata, starts the gRPC server, reconciles the replicas with the placement and registers
 * the node under a lease. {@link #close()} runs the other way round: the gRPC server stops, the
 * lease is revoked (other nodes stop routing here at once), then the replicas close.
 */
final class ClusterRoles implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterRoles.class);

  /** How long a query node waits for an index node to build one segment before building itself. */
  private static final Duration BUILD_DEADLINE = Duration.ofHours(1);

  private final ClusterSettings settings;
  private final GrpcTls tls;
  private final EtcdMetadataStore meta;
  private final ShardClients clients;
  private final LocalReplicas replicas;
  private final IndexServer indexServer;
  private final ShardServer shardServer;
  private final CollectionService service;
  private volatile GrpcServer grpc;
  private volatile boolean joined;

  ClusterRoles(Engine engine, ClusterSettings settings) {
    this.settings = settings;
    this.tls = tls(settings.tls());
    this.meta = new EtcdMetadataStore(settings.etcdEndpoints(), settings.etcdPrefix());
    this.clients = new ShardClients(tls);
    // A node that comes back is reachable at once, not after the channel's back-off.
    meta.onNodeRegistered(n -> clients.resetBackoff(n.grpcAddress()));
    RemoteSegmentBuilder builds =
        new RemoteSegmentBuilder(
            settings.nodeId(),
            meta,
            clients,
            BUILD_DEADLINE,
            DiskAnnWriter.builder(engine.diskAnn));
    this.replicas = new LocalReplicas(engine.settings.dataDir, engine.shardOptions(builds));
    this.indexServer =
        new IndexServer(
            engine.settings.dataDir.resolve("index-jobs"), DiskAnnWriter.builder(engine.diskAnn));
    this.shardServer =
        new ShardServer(settings.nodeId(), replicas, meta, clients, settings.writeDeadline());
    this.service =
        settings.has(ClusterSettings.PROXY)
            ? new ClusterProxy(
                meta, clients, settings.searchDeadline(), settings.writeDeadline(), () -> joined)
            : new NoProxyRole(
                String.join(",", new TreeSet<>(settings.roles())),
                () -> replicas.ready() && joined);
  }

  private static GrpcTls tls(ClusterSettings.Tls t) {
    if (t == null) {
      return GrpcTls.plaintext();
    }
    return GrpcTls.fromPem(
        t.cert(),
        t.key(),
        t.ca(),
        GrpcTls.ClientAuth.parse(t.clientAuth()),
        t.authority(),
        t.reloadInterval());
  }

  LocalReplicas replicas() {
    return replicas;
  }

  ShardServer shardServer() {
    return shardServer;
  }

  CollectionService service() {
    return service;
  }

  /**
   * Joins the cluster: loads the metadata, serves the node's gRPC services once its replicas have
   * recovered, and registers it. Blocks until done.
   */
  void join() throws InterruptedException {
    meta.start();
    Node self =
        new Node(
            settings.nodeId(),
            settings.grpcAddress(),
            settings.advertiseHost() + ":" + settings.httpPort(),
            new ArrayList<>(new TreeSet<>(settings.roles())));
    List<BindableService> services = new ArrayList<>();
    if (settings.has(ClusterSettings.INDEX)) {
      indexServer.prepare();
      services.add(indexServer);
    }
    if (settings.has(ClusterSettings.QUERY)) {
      while (!replicas.ready()) {
        Thread.sleep(50);
      }
      services.addFirst(shardServer);
    }
    if (!services.isEmpty()) {
      grpc = GrpcServer.start(settings.bind(), settings.grpcPort(), tls, services);
    }
    if (settings.has(ClusterSettings.QUERY)) {
      shardServer.join(self, settings.leaseTtl());
    } else {
      meta.register(self, settings.leaseTtl());
    }
    joined = true;
    LOG.info("joined the cluster [node={}, roles={}]", settings.nodeId(), self.roles());
  }

  @Override
  public void close() {
    if (service instanceof ClusterProxy proxy) {
      proxy.close();
    }
    shardServer.close();
    GrpcServer g = grpc;
    if (g != null) {
      g.close();
    }
    meta.close();
    clients.close();
    tls.close();
    replicas.close();
  }
}
