package io.flashvec.cluster.query;

import io.flashvec.cluster.metadata.ClusterMetadata;
import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.cluster.metadata.Placement;
import io.flashvec.cluster.transport.ShardClients;
import io.flashvec.cluster.transport.grpc.ResyncRequest;
import io.flashvec.cluster.transport.grpc.ShardRef;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this node's replicas in line with the cluster metadata: at start, creates the replicas
 * placed here that are missing (marked stale when others hold the shard's data) and drops those no
 * longer placed here ({@link #reconcile()}); then every second takes the primary role where it
 * should, applies payload index changes a replica missed, and asks the primary of each shard whose
 * replica here is stale for a full copy ({@link #tick()}).
 */
final class ReplicaUpkeep {

  private static final Logger LOG = LoggerFactory.getLogger(ReplicaUpkeep.class);

  private final String nodeId;
  private final ClusterMetadata meta;
  private final LocalReplicas replicas;
  private final PrimaryRole primary;
  private final ShardClients clients;

  ReplicaUpkeep(
      String nodeId,
      ClusterMetadata meta,
      LocalReplicas replicas,
      PrimaryRole primary,
      ShardClients clients) {
    this.nodeId = nodeId;
    this.meta = meta;
    this.replicas = replicas;
    this.primary = primary;
    this.clients = clients;
  }

  /** Creates missing replicas placed here and drops others. */
  void reconcile() {
    Set<ReplicaKey> wanted = new HashSet<>();
    for (CollectionMeta m : meta.list()) {
      Placement p = meta.placed(m.name()).orElse(null);
      if (p == null) {
        continue;
      }
      for (int s = 0; s < p.shards(); s++) {
        List<String> nodes = p.replicas(s);
        if (!nodes.contains(nodeId)) {
          continue;
        }
        ReplicaKey key = new ReplicaKey(m.name(), s);
        wanted.add(key);
        if (!replicas.exists(key)) {
          replicas.create(key, m.config(), m.tuning(), p.payloadSchema());
          if (nodes.size() > 1) {
            meta.markStale(m.name(), s, nodeId);
          }
        } else {
          // Payload indexes changed while this node was down.
          replicas.get(key).applyPayloadSchema(p.payloadSchema(), p.revision(), false);
        }
      }
    }
    for (ReplicaKey key : replicas.keys()) {
      if (!wanted.contains(key)) {
        LOG.info("dropping replica that is no longer placed on this node [replica={}]", key);
        replicas.drop(key);
        primary.forget(key);
      }
    }
  }

  /**
   * Takes primary roles, applies payload index changes a replica missed (its node was unreachable
   * when the proxy sent them) and asks each stale replica's primary for a full copy.
   */
  void tick() {
    for (CollectionMeta m : meta.list()) {
      Placement p = meta.placed(m.name()).orElse(null);
      if (p == null) {
        continue;
      }
      for (int s = 0; s < p.shards(); s++) {
        ReplicaKey key = new ReplicaKey(m.name(), s);
        if (!p.replicas(s).contains(nodeId) || !replicas.exists(key)) {
          continue;
        }
        try {
          primary.lead(p, s);
        } catch (RuntimeException e) {
          LOG.warn("cannot take the primary role [replica={}]: {}", key, e.toString());
        }
        if (p.revision() > 0) {
          try {
            replicas.get(key).applyPayloadSchema(p.payloadSchema(), p.revision(), false);
          } catch (RuntimeException e) {
            LOG.warn("cannot apply payload indexes [replica={}]: {}", key, e.toString());
          }
        }
      }
      for (int s = 0; s < p.shards(); s++) {
        if (p.replicas(s).contains(nodeId) && meta.isStale(m.name(), s, nodeId)) {
          resync(m.name(), s);
        }
      }
    }
  }

  /**
   * Asks the shard's primary to copy the shard to this node's replica. Only the primary copies a
   * shard: it holds the shard's write lock meanwhile and clears the mark in its own view before the
   * next write, so no write can miss the copy.
   */
  private void resync(String collection, int shard) {
    String from = meta.leader(collection, shard).filter(meta::isLive).orElse(null);
    if (from == null || from.equals(nodeId)) {
      return; // no primary now; try again later
    }
    try {
      long n =
          clients
              .stub(meta.node(from).orElseThrow().grpcAddress())
              .withDeadlineAfter(10, TimeUnit.MINUTES)
              .resync(
                  ResyncRequest.newBuilder()
                      .setShard(ShardRef.newBuilder().setCollection(collection).setShard(shard))
                      .setNodeId(nodeId)
                      .build())
              .getPoints();
      LOG.info(
          "replica caught up from the primary [collection={}, shard={}, primary={}, points={}]",
          collection,
          shard,
          from,
          n);
    } catch (RuntimeException e) {
      LOG.warn(
          "resync failed; retrying [collection={}, shard={}, primary={}]: {}",
          collection,
          shard,
          from,
          e.toString());
    }
  }
}
