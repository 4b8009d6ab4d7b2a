package io.flashvec.cluster;

import io.flashvec.cluster.EtcdMetadataStore.Node;
import io.flashvec.cluster.EtcdMetadataStore.Placed;
import io.flashvec.cluster.grpc.CountReply;
import io.flashvec.cluster.grpc.CountRequest;
import io.flashvec.cluster.grpc.CreateShardReply;
import io.flashvec.cluster.grpc.CreateShardRequest;
import io.flashvec.cluster.grpc.DeleteRequest;
import io.flashvec.cluster.grpc.DropShardReply;
import io.flashvec.cluster.grpc.GetRequest;
import io.flashvec.cluster.grpc.HealthReply;
import io.flashvec.cluster.grpc.HealthRequest;
import io.flashvec.cluster.grpc.MaintainReply;
import io.flashvec.cluster.grpc.MaintainRequest;
import io.flashvec.cluster.grpc.OrderedReply;
import io.flashvec.cluster.grpc.RecordsReply;
import io.flashvec.cluster.grpc.ResyncReply;
import io.flashvec.cluster.grpc.ResyncRequest;
import io.flashvec.cluster.grpc.ScrollReply;
import io.flashvec.cluster.grpc.ShardInfoReply;
import io.flashvec.cluster.grpc.ShardOrderedScrollRequest;
import io.flashvec.cluster.grpc.ShardRef;
import io.flashvec.cluster.grpc.ShardScrollRequest;
import io.flashvec.cluster.grpc.ShardSearchReply;
import io.flashvec.cluster.grpc.ShardSearchRequest;
import io.flashvec.cluster.grpc.ShardServiceGrpc;
import io.flashvec.cluster.grpc.ShardTextSearchRequest;
import io.flashvec.cluster.grpc.UpsertRequest;
import io.flashvec.cluster.grpc.WriteReply;
import io.flashvec.cluster.internal.Epochs;
import io.flashvec.cluster.internal.FilterProtos;
import io.flashvec.cluster.internal.GrpcErrors;
import io.flashvec.cluster.internal.Protos;
import io.flashvec.cluster.internal.ShardClients;
import io.flashvec.cluster.internal.StaleEpochException;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.storage.FsyncPolicy;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The query role: serves this node's shard replicas over gRPC ({@code ShardService}).
 *
 * <p>Each replica is a one-shard local collection named {@code <collection>.s<shard>} in a {@link
 * LocalCollectionService} (so WAL, segments, recovery and compaction are exactly the standalone
 * engine's). A write with {@code replicate=true} is accepted only by the shard's primary: under the
 * shard's lock it applies the write locally, then forwards it synchronously, stamped with its
 * epoch, to every other replica not marked stale before answering, so replicas see a shard's writes
 * in the primary's order and an acknowledged write is on every replica that is not marked stale. A
 * replica that cannot be reached is marked stale in etcd, while this node holds the primary key (it
 * is then neither read nor made primary) and copies the whole shard from the primary when it is
 * back ({@link #resyncLoop()}).
 *
 * <p>Fencing (ADR 0019): a replica refuses forwarded writes with an epoch lower than the highest it
 * has accepted (kept on disk, {@link Epochs}), so a primary that was cut off or paused and has been
 * replaced cannot get a write acknowledged, nor put an old value over one its successor
 * acknowledged; its stale marks and clears are refused by etcd; only the current primary copies a
 * shard to a stale replica.
 *
 * <p>Life cycle: {@link #start} (gRPC server up, local replicas reconciled with the placement in
 * etcd, node registered under a lease, stale replicas resynced in the background), then {@link
 * #close()}. Thread-safe.
 */
public final class ShardServer extends ShardServiceGrpc.ShardServiceImplBase implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(ShardServer.class);
  private static final int COPY_BATCH = 512;

  private final String nodeId;
  private final LocalCollectionService local;
  private final EtcdMetadataStore meta;
  private final ShardClients clients;
  private final Duration writeDeadline;
  private final Map<String, Object> shardLocks = new ConcurrentHashMap<>();

  /** Per local replica, the highest primary epoch it accepted (on disk). */
  private final Epochs epochs;

  /** Per local replica, the etcd revision of the payload schema it applied last. */
  private final Map<String, Long> schemaRevisions = new java.util.HashMap<>();

  private final ExecutorService executor =
      Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("flashvec-grpc-", 0).factory());
  private final ScheduledExecutorService resyncScheduler;
  private Server server;
  private volatile boolean closed;

  /** Told the costs of every shard search this node served (metrics); no-op by default. */
  private volatile Consumer<SearchStats> searchObserver = stats -> {};

  public ShardServer(
      String nodeId,
      LocalCollectionService local,
      EtcdMetadataStore meta,
      ShardClients clients,
      Duration writeDeadline) {
    this.nodeId = nodeId;
    this.local = local;
    this.meta = meta;
    this.clients = clients;
    this.writeDeadline = writeDeadline;
    this.epochs = new Epochs(local.dataDir().resolve("cluster-epochs"));
    ScheduledThreadPoolExecutor s =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().name("flashvec-resync").daemon(true).factory());
    s.setRemoveOnCancelPolicy(true);
    this.resyncScheduler = s;
  }

  /** The local collection that holds replica {@code shard} of {@code collection}. */
  public static String localName(String collection, int shard) {
    return collection + ".s" + shard;
  }

  private static String localName(ShardRef ref) {
    return localName(ref.getCollection(), ref.getShard());
  }

  /**
   * Starts serving on {@code bind:port} with {@code tls}'s credentials (this service and {@code
   * more}, e.g. the index role's), reconciles the local replicas with the placement, and registers
   * {@code self} in etcd; the local service must have recovered already.
   */
  public void start(
      String bind,
      int port,
      GrpcTls tls,
      Node self,
      Duration leaseTtl,
      List<io.grpc.BindableService> more) {
    try {
      NettyServerBuilder b =
          tls.serverBuilder(new InetSocketAddress(bind, port))
              .maxInboundMessageSize(ShardClients.MAX_MESSAGE_BYTES)
              .executor(executor)
              .addService(this);
      more.forEach(b::addService);
      server = b.build().start();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot start the gRPC server [bind=" + bind + ", port=" + port + "]", e);
    }
    reconcile();
    meta.register(self, leaseTtl);
    resyncScheduler.scheduleWithFixedDelay(this::resyncLoop, 0, 1, TimeUnit.SECONDS);
    LOG.info(
        "query node serving shards over gRPC [node={}, address={}:{}, tls={}]",
        nodeId,
        bind,
        port,
        tls.enabled());
  }

  /** Creates missing replicas placed here (marked stale when others hold data) and drops others. */
  private void reconcile() {
    Map<String, Boolean> wanted = new ConcurrentHashMap<>();
    for (MetadataStore.CollectionMeta m : meta.list()) {
      Placed p = meta.placed(m.name()).orElse(null);
      if (p == null) {
        continue;
      }
      for (int s = 0; s < p.replicas().size(); s++) {
        List<String> replicas = p.replicas().get(s);
        if (!replicas.contains(nodeId)) {
          continue;
        }
        String name = localName(m.name(), s);
        wanted.put(name, true);
        if (!local.exists(name)) {
          createLocal(name, m.config(), m.tuning(), p.payloadSchema());
          if (replicas.size() > 1) {
            meta.markStale(m.name(), s, nodeId);
          }
        } else {
          // Payload indexes changed while this node was down.
          applyPayloadSchema(name, p.payloadSchema(), p.revision(), false);
        }
      }
    }
    for (String name : local.listCollections()) {
      if (!wanted.containsKey(name)) {
        LOG.info("dropping replica that is no longer placed on this node [replica={}]", name);
        local.deleteCollection(name);
        epochs.remove(name);
      }
    }
  }

  private void createLocal(
      String name, CollectionConfig c, CollectionTuning t, PayloadSchema payloadSchema) {
    local.createCollection(
        name, new CollectionConfig(c.dimension(), c.distance(), 1, 1, c.index()), t);
    if (!payloadSchema.isEmpty()) {
      local.setPayloadSchema(name, payloadSchema, true);
    }
  }

  /**
   * Replaces a replica's payload indexes with the collection's schema as of etcd revision {@code
   * revision}, unless a later one was applied already: changes arrive both from the proxy ({@code
   * Maintain}) and through the etcd watch, in either order.
   */
  private void applyPayloadSchema(String name, PayloadSchema schema, long revision, boolean wait) {
    synchronized (schemaRevisions) {
      if (schemaRevisions.getOrDefault(name, -1L) > revision) {
        return;
      }
      schemaRevisions.put(name, revision);
    }
    local.setPayloadSchema(name, schema, wait);
  }

  /**
   * Every second: applies payload index changes a replica missed (its node was unreachable when the
   * proxy sent them) and asks each stale replica's primary for a full copy.
   */
  private void resyncLoop() {
    if (closed) {
      return;
    }
    for (MetadataStore.CollectionMeta m : meta.list()) {
      Placed p = meta.placed(m.name()).orElse(null);
      if (p == null) {
        continue;
      }
      for (int s = 0; s < p.replicas().size(); s++) {
        String name = localName(m.name(), s);
        if (p.replicas().get(s).contains(nodeId) && local.exists(name)) {
          try {
            lead(p, s);
          } catch (RuntimeException e) {
            LOG.warn("cannot take the primary role [replica={}]: {}", name, e.toString());
          }
        }
        if (p.replicas().get(s).contains(nodeId) && p.revision() > 0 && local.exists(name)) {
          try {
            applyPayloadSchema(name, p.payloadSchema(), p.revision(), false);
          } catch (RuntimeException e) {
            LOG.warn("cannot apply payload indexes [replica={}]: {}", name, e.toString());
          }
        }
      }
      for (int s = 0; s < p.replicas().size(); s++) {
        if (!p.replicas().get(s).contains(nodeId) || !meta.isStale(m.name(), s, nodeId)) {
          continue;
        }
        // only the primary copies a shard: it holds the shard's write lock meanwhile and clears
        // the mark in its own view before the next write, so no write can miss the copy
        String primary = meta.leader(m.name(), s).filter(meta::isLive).orElse(null);
        if (primary == null || primary.equals(nodeId)) {
          continue; // no primary now; try again later
        }
        try {
          long n =
              clients
                  .stub(meta.node(primary).orElseThrow().grpcAddress())
                  .withDeadlineAfter(10, TimeUnit.MINUTES)
                  .resync(
                      ResyncRequest.newBuilder()
                          .setShard(ref(m.name(), s))
                          .setNodeId(nodeId)
                          .build())
                  .getPoints();
          LOG.info(
              "replica caught up from the primary [collection={}, shard={}, primary={}, points={}]",
              m.name(),
              s,
              primary,
              n);
        } catch (RuntimeException e) {
          LOG.warn(
              "resync failed; retrying [collection={}, shard={}, primary={}]: {}",
              m.name(),
              s,
              primary,
              e.toString());
        }
      }
    }
  }

  /**
   * Takes the primary role of a shard when nobody holds it and this node is the first live,
   * up-to-date replica in placement order (the one proxies prefer). The role is an etcd key under
   * this node's lease: it ends when the node dies, and the next replica takes over. A primary whose
   * own replica is marked stale gives the role up.
   */
  private void lead(Placed p, int shard) {
    String coll = p.meta().name();
    EtcdMetadataStore.Leader leader = meta.leaderOf(coll, shard).orElse(null);
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
    for (String r : p.replicas().get(shard)) {
      if (meta.isLive(r) && !meta.isStale(coll, shard, r)) {
        if (r.equals(nodeId)) {
          takeLead(coll, shard);
        }
        return;
      }
    }
  }

  /**
   * Tries to become the primary of a shard (see {@link EtcdMetadataStore#tryLead}); on success the
   * new epoch is on disk before the role is used. Under the shard's lock, so no replicated write of
   * an older primary is applied between the takeover and the epoch's record.
   *
   * @return the epoch, or 0 if another node leads or this replica is stale
   */
  private long takeLead(String coll, int shard) {
    String name = localName(coll, shard);
    synchronized (lock(name)) {
      long epoch = meta.tryLead(coll, shard, nodeId);
      if (epoch > 0) {
        epochs.raise(name, epoch);
        LOG.info(
            "primary of a shard now [collection={}, shard={}, node={}, epoch={}]",
            coll,
            shard,
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
  private long checkPrimary(ShardRef ref) {
    String coll = ref.getCollection();
    int shard = ref.getShard();
    EtcdMetadataStore.Leader leader = meta.leaderOf(coll, shard).orElse(null);
    if (leader != null && nodeId.equals(leader.node())) {
      checkStillPrimary(coll, shard, leader.epoch());
      return leader.epoch();
    }
    if (leader == null && !meta.isStale(coll, shard, nodeId)) {
      long epoch = takeLead(coll, shard);
      if (epoch > 0) {
        return epoch;
      }
    }
    throw new UnavailableException(
        "Service unavailable: this replica is not the shard's primary [primary="
            + meta.leader(coll, shard).orElse("none")
            + "]");
  }

  /**
   * Refuses to act as the primary of epoch {@code epoch} when this replica has accepted writes of a
   * later primary, or is marked stale (it may lack writes: a primary must have every acknowledged
   * one).
   */
  private void checkStillPrimary(String coll, int shard, long epoch) {
    if (epochs.get(localName(coll, shard)) > epoch) {
      throw new UnavailableException(
          "Service unavailable: this node's primary role (epoch "
              + epoch
              + ") has ended; a later primary replicates to it");
    }
    if (meta.isStale(coll, shard, nodeId)) {
      throw new UnavailableException(
          "Service unavailable: this replica is marked stale and cannot be the shard's primary");
    }
  }

  /**
   * Applies a replicated write's epoch under the shard's lock: refused if lower than the highest
   * this replica accepted or the primary's epoch it knows from etcd (the sender was replaced, and
   * applying the write could put an old value over one its successor acknowledged); a higher one is
   * recorded first.
   */
  private void acceptEpoch(ShardRef ref, String name, long epoch) {
    long floor =
        Math.max(
            epochs.get(name),
            meta.leaderOf(ref.getCollection(), ref.getShard())
                .map(EtcdMetadataStore.Leader::epoch)
                .orElse(0L));
    if (epoch < floor) {
      throw new StaleEpochException(
          "Failed precondition: the sender is no longer the shard's primary [epoch="
              + epoch
              + ", current="
              + floor
              + "]");
    }
    epochs.raise(name, epoch);
  }

  /** A write whose caller gave up (deadline passed, cancelled) is not applied any more. */
  private static void checkNotCancelled() {
    if (io.grpc.Context.current().isCancelled()) {
      throw new UnavailableException(
          "Service unavailable: the caller gave up before the write was applied");
    }
  }

  private static ShardRef ref(String collection, int shard) {
    return ShardRef.newBuilder().setCollection(collection).setShard(shard).build();
  }

  private Object lock(String localName) {
    return shardLocks.computeIfAbsent(localName, k -> new Object());
  }

  private <T> void answer(StreamObserver<T> out, ShardRef ref, Supplier<T> body) {
    try {
      out.onNext(body.get());
      out.onCompleted();
    } catch (RuntimeException e) {
      out.onError(
          GrpcErrors.toStatus(
              e,
              "[collection="
                  + ref.getCollection()
                  + ", shard="
                  + ref.getShard()
                  + ", node="
                  + nodeId
                  + "]"));
    }
  }

  // ---------------------------------------------------------------- ShardService

  @Override
  public void createShard(CreateShardRequest req, StreamObserver<CreateShardReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          String name = localName(req.getShard().getCollection(), req.getShard().getShard());
          synchronized (lock(name)) {
            if (req.getReset()) {
              // only the current primary may wipe a replica to copy its shard into it
              acceptEpoch(req.getShard(), name, req.getEpoch());
              local.deleteCollection(name);
              synchronized (schemaRevisions) {
                schemaRevisions.remove(name);
              }
            }
            if (local.exists(name)) {
              return CreateShardReply.newBuilder().setCreated(false).build();
            }
            createLocal(
                name,
                Protos.config(req.getConfig()),
                Protos.tuning(req.getConfig()),
                Protos.payloadSchema(req.getConfig()));
            return CreateShardReply.newBuilder().setCreated(true).build();
          }
        });
  }

  @Override
  public void dropShard(ShardRef req, StreamObserver<DropShardReply> out) {
    answer(
        out,
        req,
        () -> {
          String name = localName(req.getCollection(), req.getShard());
          synchronized (lock(name)) {
            boolean dropped = local.deleteCollection(name);
            epochs.remove(name);
            return DropShardReply.newBuilder().setDropped(dropped).build();
          }
        });
  }

  @Override
  public void upsert(UpsertRequest req, StreamObserver<WriteReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          String name = localName(req.getShard().getCollection(), req.getShard().getShard());
          List<Point> points = new ArrayList<>(req.getPointsCount());
          for (var p : req.getPointsList()) {
            points.add(Protos.point(p));
          }
          if (!req.getReplicate()) {
            synchronized (lock(name)) {
              acceptEpoch(req.getShard(), name, req.getEpoch());
              checkNotCancelled();
              return WriteReply.newBuilder()
                  .setOperationId(local.upsert(name, points, req.getWait()).operationId())
                  .build();
            }
          }
          long epoch = checkPrimary(req.getShard());
          synchronized (lock(name)) {
            checkStillPrimary(req.getShard().getCollection(), req.getShard().getShard(), epoch);
            checkNotCancelled();
            Collection.UpdateResult r = local.upsert(name, points, req.getWait());
            UpsertRequest fwd = req.toBuilder().setReplicate(false).setEpoch(epoch).build();
            return forward(req.getShard(), epoch, s -> s.upsert(fwd))
                .setOperationId(r.operationId())
                .build();
          }
        });
  }

  @Override
  public void delete(DeleteRequest req, StreamObserver<WriteReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          String name = localName(req.getShard().getCollection(), req.getShard().getShard());
          if (!req.getReplicate()) {
            synchronized (lock(name)) {
              acceptEpoch(req.getShard(), name, req.getEpoch());
              checkNotCancelled();
              return WriteReply.newBuilder()
                  .setOperationId(
                      local
                          .delete(name, Protos.pointIds(req.getIdsList()), req.getWait())
                          .operationId())
                  .build();
            }
          }
          long epoch = checkPrimary(req.getShard());
          synchronized (lock(name)) {
            checkStillPrimary(req.getShard().getCollection(), req.getShard().getShard(), epoch);
            checkNotCancelled();
            Collection.UpdateResult r =
                local.delete(name, Protos.pointIds(req.getIdsList()), req.getWait());
            DeleteRequest fwd = req.toBuilder().setReplicate(false).setEpoch(epoch).build();
            return forward(req.getShard(), epoch, s -> s.delete(fwd))
                .setOperationId(r.operationId())
                .build();
          }
        });
  }

  /**
   * Sends a write to the shard's other replicas, in turn, each within the write deadline, stamped
   * with this primary's epoch. A replica that is down or fails is marked stale in etcd (only while
   * this node holds the primary key) before the write is acknowledged; if etcd cannot record that,
   * or this node is no longer the primary (a replica refuses the epoch, or the fenced mark finds
   * another primary), the write fails. Returns the reply with every replica that does not have the
   * write (marked now or before) and its mark's revision. Called under the shard's lock.
   */
  private WriteReply.Builder forward(
      ShardRef ref,
      long epoch,
      java.util.function.Consumer<ShardServiceGrpc.ShardServiceBlockingStub> call) {
    WriteReply.Builder reply = WriteReply.newBuilder();
    String coll = ref.getCollection();
    int shard = ref.getShard();
    Placed p = meta.placed(coll).orElse(null);
    if (p == null || shard >= p.replicas().size()) {
      return reply;
    }
    for (String r : p.replicas().get(shard)) {
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
        call.accept(
            clients
                .stub(n.grpcAddress())
                .withDeadlineAfter(writeDeadline.toMillis(), TimeUnit.MILLISECONDS));
      } catch (RuntimeException e) {
        if (e instanceof io.grpc.StatusRuntimeException s
            && s.getStatus().getCode() == io.grpc.Status.Code.FAILED_PRECONDITION) {
          throw superseded(coll, shard, epoch, r, s.getStatus().getDescription());
        }
        LOG.warn(
            "replica missed a write; marking it stale [collection={}, shard={}, node={}]: {}",
            coll,
            shard,
            r,
            e.toString());
        long rev;
        try {
          // If etcd cannot record this either, the write fails (it is not acknowledged).
          rev = meta.markStale(coll, shard, r, nodeId);
        } catch (EtcdMetadataStore.NotPrimaryException gone) {
          throw superseded(coll, shard, epoch, r, gone.getMessage());
        }
        reply.addStaleReplicas(r).addLagging(lagging(r, rev));
      }
    }
    return reply;
  }

  private static io.flashvec.cluster.grpc.LaggingReplica lagging(String node, long revision) {
    return io.flashvec.cluster.grpc.LaggingReplica.newBuilder()
        .setNode(node)
        .setRevision(revision)
        .build();
  }

  /**
   * This node found, while replicating, that a later primary has replaced it: the write it applied
   * locally is not acknowledged. Its replica may now hold that write while its successor does not,
   * so it marks itself stale if etcd confirms a later primary (the successor then copies the shard
   * back to it); without one it stays as it is, the only replica that may still have every
   * acknowledged write.
   */
  private UnavailableException superseded(
      String coll, int shard, long epoch, String replica, String why) {
    LOG.warn(
        "primary role has ended; write not acknowledged [collection={}, shard={}, epoch={},"
            + " refused by={}]: {}",
        coll,
        shard,
        epoch,
        replica,
        why);
    try {
      if (meta.markStaleIfSuperseded(coll, shard, nodeId)) {
        LOG.info(
            "marked this replica stale: a later primary leads the shard [collection={},"
                + " shard={}]",
            coll,
            shard);
      }
    } catch (RuntimeException e) {
      LOG.warn("cannot mark this replica stale [collection={}, shard={}]: {}", coll, shard, e);
    }
    return new UnavailableException(
        "Service unavailable: this node is no longer the shard's primary [epoch=" + epoch + "]");
  }

  @Override
  public void get(GetRequest req, StreamObserver<RecordsReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          String name = localName(req.getShard().getCollection(), req.getShard().getShard());
          RecordsReply.Builder b = RecordsReply.newBuilder();
          for (Record r :
              local.retrieve(
                  name,
                  Protos.pointIds(req.getIdsList()),
                  req.getWithPayload(),
                  req.getWithVector())) {
            b.addRecords(Protos.record(r));
          }
          return b.build();
        });
  }

  @Override
  public void scroll(ShardScrollRequest req, StreamObserver<ScrollReply> out) {
    answer(
        out,
        req.getShard(),
        () -> Protos.reply(local.scroll(localName(req.getShard()), Protos.scroll(req))));
  }

  @Override
  public void count(CountRequest req, StreamObserver<CountReply> out) {
    answer(
        out,
        req.getShard(),
        () ->
            CountReply.newBuilder()
                .setCount(
                    local.count(localName(req.getShard()), FilterProtos.filter(req.getFilter())))
                .build());
  }

  @Override
  public void textSearch(ShardTextSearchRequest req, StreamObserver<RecordsReply> out) {
    answer(
        out,
        req.getShard(),
        () ->
            RecordsReply.newBuilder()
                .addAllRecords(
                    Protos.recordMsgs(
                        local.textSearch(localName(req.getShard()), Protos.textSearch(req))))
                .build());
  }

  @Override
  public void scrollOrdered(ShardOrderedScrollRequest req, StreamObserver<OrderedReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          OrderedReply.Builder b = OrderedReply.newBuilder();
          for (Ordered o :
              local.scrollOrdered(localName(req.getShard()), Protos.orderedScroll(req))) {
            b.addRecords(Protos.ordered(o));
          }
          return b.build();
        });
  }

  /**
   * Sets what is told the costs of each shard search this node serves, after the search and before
   * the reply (the query role's metrics: in a cluster the search work is counted where it runs).
   */
  public void onShardSearch(Consumer<SearchStats> observer) {
    this.searchObserver = java.util.Objects.requireNonNull(observer, "observer");
  }

  @Override
  public void search(ShardSearchRequest req, StreamObserver<ShardSearchReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          SearchStats stats = new SearchStats();
          List<Record> hits = local.search(localName(req.getShard()), Protos.search(req), stats);
          searchObserver.accept(stats);
          ShardSearchReply.Builder b = ShardSearchReply.newBuilder().setStats(Protos.stats(stats));
          for (Record r : hits) {
            b.addRecords(Protos.record(r));
          }
          return b.build();
        });
  }

  @Override
  public void info(ShardRef req, StreamObserver<ShardInfoReply> out) {
    answer(
        out,
        req,
        () -> {
          Collection.Info i = local.describe(localName(req.getCollection(), req.getShard())).info();
          return ShardInfoReply.newBuilder()
              .setPoints(i.points())
              .setSegments(i.segments())
              .setDiskBytes(i.diskBytes())
              .setMemoryBytes(i.memoryBytes())
              .setIndexing(i.indexing())
              .setBuildFailure(i.buildFailure() == null ? "" : i.buildFailure())
              .setFsyncPolicy(i.fsyncPolicy() == null ? "" : i.fsyncPolicy().configName())
              .putAllPayloadPoints(i.payloadPoints())
              .build();
        });
  }

  @Override
  public void maintain(MaintainRequest req, StreamObserver<MaintainReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          String name = localName(req.getShard().getCollection(), req.getShard().getShard());
          int files = 0;
          switch (req.getAction()) {
            case FLUSH -> local.flush(name);
            case COMPACT -> local.compact(name, false);
            case COMPACT_FORCE -> local.compact(name, true);
            case EVICT -> files = local.evictFromPageCache(name);
            case TUNE ->
                local.updateCollection(
                    name,
                    req.getIndexingThreshold() == -2 ? null : req.getIndexingThreshold(),
                    req.getFsyncPolicy().isEmpty()
                        ? null
                        : FsyncPolicy.parse(req.getFsyncPolicy()));
            case PAYLOAD_SCHEMA ->
                applyPayloadSchema(
                    name,
                    PayloadSchema.fromJsonString(req.getPayloadSchemaJson()),
                    req.getRevision(),
                    req.getWait());
            default -> throw new IllegalArgumentException("unknown action " + req.getAction());
          }
          return MaintainReply.newBuilder().setFiles(files).build();
        });
  }

  /**
   * Copies this primary's replica to {@code node_id}: under the shard lock, so no write
   * interleaves, the target replica is reset and receives every live point; then its stale mark is
   * cleared. Only the shard's current primary does this, and the reset, the copied writes and the
   * clearing all carry its epoch: a replaced primary can neither overwrite a replica with its older
   * copy nor pass one for current.
   */
  @Override
  public void resync(ResyncRequest req, StreamObserver<ResyncReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          String coll = req.getShard().getCollection();
          int shard = req.getShard().getShard();
          String name = localName(coll, shard);
          Placed p =
              meta.placed(coll).orElseThrow(() -> new UnavailableException("collection is gone"));
          Node target =
              meta.node(req.getNodeId())
                  .orElseThrow(() -> new UnavailableException("target node is not registered"));
          EtcdMetadataStore.Leader leader = meta.leaderOf(coll, shard).orElse(null);
          if (leader == null || !leader.node().equals(nodeId)) {
            throw new UnavailableException(
                "Service unavailable: only the shard's primary copies it [primary="
                    + (leader == null ? "none" : leader.node())
                    + "]");
          }
          long epoch = leader.epoch();
          var stub = clients.stub(target.grpcAddress()).withDeadlineAfter(10, TimeUnit.MINUTES);
          long copied = 0;
          synchronized (lock(name)) {
            checkStillPrimary(coll, shard, epoch);
            stub.createShard(
                CreateShardRequest.newBuilder()
                    .setShard(req.getShard())
                    .setConfig(
                        Protos.config(p.meta().config(), p.meta().tuning(), p.payloadSchema()))
                    .setReset(true)
                    .setEpoch(epoch)
                    .build());
            PointId offset = null;
            do {
              ScrollPage page =
                  local.scroll(name, ScrollRequest.of(offset, COPY_BATCH, true, true));
              if (!page.points().isEmpty()) {
                UpsertRequest.Builder b =
                    UpsertRequest.newBuilder()
                        .setShard(req.getShard())
                        .setWait(true)
                        .setEpoch(epoch);
                for (Record r : page.points()) {
                  b.addPoints(Protos.point(new Point(r.id(), r.vector(), r.payload())));
                }
                stub.upsert(b.build());
                copied += page.points().size();
              }
              offset = page.nextOffset();
            } while (offset != null);
            meta.clearStale(coll, shard, req.getNodeId(), nodeId);
          }
          return ResyncReply.newBuilder().setPoints(copied).build();
        });
  }

  @Override
  public void health(HealthRequest req, StreamObserver<HealthReply> out) {
    out.onNext(HealthReply.newBuilder().setNodeId(nodeId).setReady(local.ready()).build());
    out.onCompleted();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    resyncScheduler.shutdownNow();
    if (server != null) {
      server.shutdown();
      try {
        if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
          server.shutdownNow();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        server.shutdownNow();
      }
    }
    executor.shutdownNow();
  }
}
