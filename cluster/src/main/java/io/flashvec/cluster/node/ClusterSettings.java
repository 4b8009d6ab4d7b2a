package io.flashvec.cluster.node;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * How a node takes part in a cluster (ADR 0009).
 *
 * @param etcdEndpoints the metadata store's client URLs
 * @param etcdPrefix this cluster's key prefix there
 * @param nodeId this node's id in the registry
 * @param roles {@code proxy}, {@code query} and/or {@code index}
 * @param bind the address the gRPC server binds
 * @param grpcPort its port
 * @param advertiseHost the host other nodes reach this one at
 * @param httpPort the REST port (registered for clients that look nodes up)
 * @param leaseTtl how long the node stays registered after its last heartbeat
 * @param searchDeadline deadline of one shard call of a search or read (collection info uses the
 *     write deadline)
 * @param writeDeadline deadline of one shard write (including its replication) and of a shard's
 *     collection info
 * @param tls TLS of the internal gRPC, {@code null} for plaintext
 */
public record ClusterSettings(
    List<String> etcdEndpoints,
    String etcdPrefix,
    String nodeId,
    Set<String> roles,
    String bind,
    int grpcPort,
    String advertiseHost,
    int httpPort,
    Duration leaseTtl,
    Duration searchDeadline,
    Duration writeDeadline,
    Tls tls) {

  public static final String PROXY = "proxy";
  public static final String QUERY = "query";
  public static final String INDEX = "index";

  public ClusterSettings {
    etcdEndpoints = List.copyOf(etcdEndpoints);
    roles = Set.copyOf(roles);
    Objects.requireNonNull(nodeId, "nodeId");
  }

  /**
   * TLS of the internal gRPC: this node's certificate chain and key (PEM) and the CA that signs
   * every node's.
   *
   * @param clientAuth {@code require}, {@code optional} or {@code none}
   * @param authority the name clients check servers' certificates against (blank: the host dialled)
   * @param reloadInterval how often rotated files are picked up (0: never)
   */
  public record Tls(
      Path cert, Path key, Path ca, String clientAuth, String authority, Duration reloadInterval) {}

  public boolean has(String role) {
    return roles.contains(role);
  }

  /** Where other nodes reach this node's gRPC services. */
  String grpcAddress() {
    return advertiseHost + ":" + grpcPort;
  }
}
