package io.flashvec.cluster.query;

import io.flashvec.cluster.metadata.ClusterMetadata;
import io.flashvec.cluster.metadata.Leader;
import io.flashvec.cluster.metadata.Node;
import io.flashvec.cluster.metadata.NotPrimaryException;
import io.flashvec.cluster.metadata.Placement;
import io.flashvec.cluster.transport.Protos;
import io.flashvec.cluster.transport.ShardClients;
import io.flashvec.cluster.transport.StaleEpochException;
import io.flashvec.cluster.transport.grpc.CreateShardRequest;
import io.flashvec.cluster.transport.grpc.LaggingReplica;
import io.flashvec.cluster.transport.grpc.ShardRef;
import io.flashvec.cluster.transport.grpc.ShardServiceGrpc.ShardServiceBlockingStub;
import io.flashvec.cluster.transport.grpc.UpsertRequest;
import io.flashvec.cluster.transport.grpc.WriteReply;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.query.ScrollRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's part in each shard's primary role (ADR 0019): taking and giving up the role, checking
 * it before a write, forwarding writes to the other replicas, fencing by epochs, and copying the
 * shard to a replica that fell behind.
 *
 * <p>A write with {@code replicate=true} is accepted only by the shard's primary: under the
 * replica's lock ({@link #lock}) it applies the write locally, then forwards it synchronously,
 * stamped with its epoch, to every other replica not marked stale before answering, so replicas see
 * a shard's writes in the primary's order and an acknowledged write is on every replica that is not
 * marked stale. A replica that cannot be reached is marked stale, while this node holds the primary
 * key (it is then neither read nor made primary), and copied from the primary when it is back.
 *
 * <p>Fencing: a replica refuses forwarded writes with an epoch lower than the highest it has
 * accepted (kept on disk, {@link Epochs}), so a primary that was cut off or paused and has been
 * replaced cannot get a write acknowledged, nor put an old value over one its successor
 * acknowledged; its stale marks and clears are refused by the metadata store; only the current
 * primary copies a shard to a stale replica.
 *
 * <p>Thread-safe.
 */
final class PrimaryRole {

  private static final Logger LOG = LoggerFactory.getLogger(PrimaryRole.class);
  private static final int COPY_BATCH = 512;

  private final String nodeId;
  private final ClusterMetadata meta;
  private final ShardClients clients;
  private final Duration writeDeadline;
  private final Epochs epochs;
  private final Map<ReplicaKey, Object> locks = new ConcurrentHashMap<>();

  PrimaryRole(
      String nodeId,
      ClusterMetadata meta,
      ShardClients clients,
      Duration writeDeadline,
      Epochs epochs) {
    this.nodeId = nodeId;
    this.meta = meta;
    this.clients = clients;
    this.writeDeadline = writeDeadline;
    this.epochs = epochs;
  }

  /**
   * The lock that orders a replica's writes, copies and epoch changes; it outlives the replica (a
   * resync drops and creates it under the lock).
   */
  Object lock(ReplicaKey key) {
    return locks.computeIfAbsent(key, k -> new Object());
  }

  /** Forgets a dropped replica's epoch. */
  void forget(ReplicaKey key) {
    epochs.remove(key.dirName());
  }

  /**
   * Takes the primary role of a shard when nobody holds it and this node is the first live,
   * up-to-date replica in placement order (the one proxies prefer). The role is a metadata key
   * under this node's lease: it ends when the node dies, and the next replica takes over. A primary
   * whose own replica is marked stale gives the role up.
   */
  void lead(Placement p, int shard) {
    String coll = p.name();
    Leader leader = meta.leaderOf(coll, shard).orElse(null);
    if (leader != null) {
      if (leader.node().equals(nodeId) && meta.isStale(coll, shard, nodeId)) {
        LOG.warn(
            "giving up the primary role: this replica is marked stale [collection={}, shard={}]",
            coll,
            shard);
        meta.resign(coll, shard, leader.epoch());
      }
      return;
    }
    if (meta.isStale(coll, shard, nodeId)) {
      return;
    }
    for (String r : p.replicas(shard)) {
      if (meta.isLive(r) && !meta.isStale(coll, shard, r)) {
        if (r.equals(nodeId)) {
          takeLead(new ReplicaKey(coll, shard));
        }
        return;
      }
    }
  }

  /**
   * Tries to become the primary of a shard ({@link ClusterMetadata#tryLead}); on success the new
   * epoch is on disk before the role is used. Under the replica's lock, so no replicated write of
   * an older primary is applied between the takeover and the epoch's record.
   *
   * @return the epoch, or 0 if another node leads or this replica is stale
   */
  private long takeLead(ReplicaKey key) {
    synchronized (lock(key)) {
      long epoch = meta.tryLead(key.collection(), key.shard(), nodeId);
      if (epoch > 0) {
        epochs.raise(key.dirName(), epoch);
        LOG.info(
            "primary of a shard now [collection={}, shard={}, node={}, epoch={}]",
            key.collection(),
            key.shard(),
            nodeId,
            epoch);
      }
      return epoch;
    }
  }

  /**
   * A write with {@code replicate=true} is accepted only by the shard's primary: the elected one,
   * or — while none is — this node if it can take the role. Others answer UNAVAILABLE naming the
   * primary, and the proxy tries elsewhere. Returns the primary's epoch.
   */
  long checkPrimary(ReplicaKey key) {
    Leader leader = meta.leaderOf(key.collection(), key.shard()).orElse(null);
    if (leader != null && nodeId.equals(leader.node())) {
      checkStillPrimary(key, leader.epoch());
      return leader.epoch();
    }
    if (leader == null && !meta.isStale(key.collection(), key.shard(), nodeId)) {
      long epoch = takeLead(key);
      if (epoch > 0) {
        return epoch;
      }
    }
    throw new UnavailableException(
        "Service unavailable: this replica is not the shard's primary [primary="
            + meta.leader(key.collection(), key.shard()).orElse("none")
            + "]");
  }

  /**
   * Refuses to act as the primary of epoch {@code epoch} when this replica has accepted writes of a
   * later primary, or is marked stale (it may lack writes: a primary must have every acknowledged
   * one).
   */
  void checkStillPrimary(ReplicaKey key, long epoch) {
    if (epochs.get(key.dirName()) > epoch) {
      throw new UnavailableException(
          "Service unavailable: this node's primary role (epoch "
              + epoch
              + ") has ended; a later primary replicates to it");
    }
    if (meta.isStale(key.collection(), key.shard(), nodeId)) {
      throw new UnavailableException(
          "Service unavailable: this replica is marked stale and cannot be the shard's primary");
    }
  }

  /**
   * Applies a replicated write's epoch under the replica's lock: refused if lower than the highest
   * this replica accepted or the primary's epoch it knows from the metadata (the sender was
   * replaced, and applying the write could put an old value over one its successor acknowledged); a
   * higher one is recorded first.
   */
  void acceptEpoch(ReplicaKey key, long epoch) {
    long floor =
        Math.max(
            epochs.get(key.dirName()),
            meta.leaderOf(key.collection(), key.shard()).map(Leader::epoch).orElse(0L));
    if (epoch < floor) {
      throw new StaleEpochException(
          "Failed precondition: the sender is no longer the shard's primary [epoch="
              + epoch
              + ", current="
              + floor
              + "]");
    }
    epochs.raise(key.dirName(), epoch);
  }

  /**
   * Sends a write to the shard's other replicas, in turn, each within the write deadline, stamped
   * with this primary's epoch. A replica that is down or fails is marked stale (only while this
   * node holds the primary key) before the write is acknowledged; if the store cannot record that,
   * or this node is no longer the primary (a replica refuses the epoch, or the fenced mark finds
   * another primary), the write fails. Returns the reply with every replica that does not have the
   * write (marked now or before) and its mark's revision. Called under the replica's lock.
   */
  WriteReply.Builder forward(ReplicaKey key, long epoch, Consumer<ShardServiceBlockingStub> call) {
    WriteReply.Builder reply = WriteReply.newBuilder();
    String coll = key.collection();
    int shard = key.shard();
    Placement p = meta.placed(coll).orElse(null);
    if (p == null || shard >= p.shards()) {
      return reply;
    }
    for (String r : p.replicas(shard)) {
      if (r.equals(nodeId)) {
        continue;
      }
      if (meta.isStale(coll, shard, r)) {
        reply.addLagging(lagging(r, meta.staleRevision(coll, shard, r)));
        continue;
      }
      Node n = meta.node(r).orElse(null);
      try {
        if (n == null) {
          throw new UnavailableException("replica node is not registered (lease expired)");
        }
        call.accept(stub(n));
      } catch (RuntimeException e) {
        if (e instanceof StatusRuntimeException s
            && s.getStatus().getCode() == Status.Code.FAILED_PRECONDITION) {
          throw superseded(key, epoch, r, s.getStatus().getDescription());
        }
        LOG.warn(
            "replica missed a write; marking it stale [collection={}, shard={}, node={}]: {}",
            coll,
            shard,
            r,
            e.toString());
        long rev;
        try {
          // If the store cannot record this either, the write fails (it is not acknowledged).
          rev = meta.markStale(coll, shard, r, nodeId);
        } catch (NotPrimaryException gone) {
          throw superseded(key, epoch, r, gone.getMessage());
        }
        reply.addStaleReplicas(r).addLagging(lagging(r, rev));
      }
    }
    return reply;
  }

  private ShardServiceBlockingStub stub(Node n) {
    return clients
        .stub(n.grpcAddress())
        .withDeadlineAfter(writeDeadline.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static LaggingReplica lagging(String node, long revision) {
    return LaggingReplica.newBuilder().setNode(node).setRevision(revision).build();
  }

  /**
   * This node found, while replicating, that a later primary has replaced it: the write it applied
   * locally is not acknowledged. Its replica may now hold that write while its successor does not,
   * so it marks itself stale if the store confirms a later primary (the successor then copies the
   * shard back to it); without one it stays as it is, the only replica that may still have every
   * acknowledged write.
   */
  private UnavailableException superseded(ReplicaKey key, long epoch, String replica, String why) {
    LOG.warn(
        "primary role has ended; write not acknowledged [collection={}, shard={}, epoch={},"
            + " refused by={}]: {}",
        key.collection(),
        key.shard(),
        epoch,
        replica,
        why);
    try {
      if (meta.markStaleIfSuperseded(key.collection(), key.shard(), nodeId)) {
        LOG.info(
            "marked this replica stale: a later primary leads the shard [collection={},"
                + " shard={}]",
            key.collection(),
            key.shard());
      }
    } catch (RuntimeException e) {
      LOG.warn(
          "cannot mark this replica stale [collection={}, shard={}]: {}",
          key.collection(),
          key.shard(),
          e);
    }
    return new UnavailableException(
        "Service unavailable: this node is no longer the shard's primary [epoch=" + epoch + "]");
  }

  /**
   * Copies this primary's replica to node {@code targetId}: under the replica's lock, so no write
   * interleaves, the target replica is reset and receives every live point; then its stale mark is
   * cleared. Only the shard's current primary does this, and the reset, the copied writes and the
   * clearing all carry its epoch: a replaced primary can neither overwrite a replica with its older
   * copy nor pass one for current. Returns the points copied.
   */
  long copyTo(ShardReplica replica, ShardRef ref, String targetId) {
    ReplicaKey key = replica.key();
    String coll = key.collection();
    int shard = key.shard();
    Placement p =
        meta.placed(coll).orElseThrow(() -> new UnavailableException("collection is gone"));
    Node target =
        meta.node(targetId)
            .orElseThrow(() -> new UnavailableException("target node is not registered"));
    Leader leader = meta.leaderOf(coll, shard).orElse(null);
    if (leader == null || !leader.node().equals(nodeId)) {
      throw new UnavailableException(
          "Service unavailable: only the shard's primary copies it [primary="
              + (leader == null ? "none" : leader.node())
              + "]");
    }
    long epoch = leader.epoch();
    var stub = clients.stub(target.grpcAddress()).withDeadlineAfter(10, TimeUnit.MINUTES);
    long copied = 0;
    synchronized (lock(key)) {
      checkStillPrimary(key, epoch);
      stub.createShard(
          CreateShardRequest.newBuilder()
              .setShard(ref)
              .setConfig(Protos.config(p.meta().config(), p.meta().tuning(), p.payloadSchema()))
              .setReset(true)
              .setEpoch(epoch)
              .build());
      PointId offset = null;
      do {
        ScrollPage page = replica.scroll(ScrollRequest.of(offset, COPY_BATCH, true, true));
        if (!page.points().isEmpty()) {
          UpsertRequest.Builder b =
              UpsertRequest.newBuilder().setShard(ref).setWait(true).setEpoch(epoch);
          for (Record r : page.points()) {
            b.addPoints(Protos.point(new Point(r.id(), r.vector(), r.payload())));
          }
          stub.upsert(b.build());
          copied += page.points().size();
        }
        offset = page.nextOffset();
      } while (offset != null);
      meta.clearStale(coll, shard, targetId, nodeId);
    }
    return copied;
  }
}
