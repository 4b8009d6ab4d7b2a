package io.flashvec.cluster.query;

import io.flashvec.cluster.metadata.ClusterMetadata;
import io.flashvec.cluster.metadata.Node;
import io.flashvec.cluster.transport.FilterProtos;
import io.flashvec.cluster.transport.GrpcErrors;
import io.flashvec.cluster.transport.Protos;
import io.flashvec.cluster.transport.ShardClients;
import io.flashvec.cluster.transport.grpc.CountReply;
import io.flashvec.cluster.transport.grpc.CountRequest;
import io.flashvec.cluster.transport.grpc.CreateShardReply;
import io.flashvec.cluster.transport.grpc.CreateShardRequest;
import io.flashvec.cluster.transport.grpc.DeleteRequest;
import io.flashvec.cluster.transport.grpc.DropShardReply;
import io.flashvec.cluster.transport.grpc.GetRequest;
import io.flashvec.cluster.transport.grpc.HealthReply;
import io.flashvec.cluster.transport.grpc.HealthRequest;
import io.flashvec.cluster.transport.grpc.MaintainReply;
import io.flashvec.cluster.transport.grpc.MaintainRequest;
import io.flashvec.cluster.transport.grpc.OrderedReply;
import io.flashvec.cluster.transport.grpc.PointMsg;
import io.flashvec.cluster.transport.grpc.RecordsReply;
import io.flashvec.cluster.transport.grpc.ResyncReply;
import io.flashvec.cluster.transport.grpc.ResyncRequest;
import io.flashvec.cluster.transport.grpc.ScrollReply;
import io.flashvec.cluster.transport.grpc.ShardInfoReply;
import io.flashvec.cluster.transport.grpc.ShardOrderedScrollRequest;
import io.flashvec.cluster.transport.grpc.ShardRef;
import io.flashvec.cluster.transport.grpc.ShardScrollRequest;
import io.flashvec.cluster.transport.grpc.ShardSearchReply;
import io.flashvec.cluster.transport.grpc.ShardSearchRequest;
import io.flashvec.cluster.transport.grpc.ShardServiceGrpc;
import io.flashvec.cluster.transport.grpc.ShardServiceGrpc.ShardServiceBlockingStub;
import io.flashvec.cluster.transport.grpc.ShardTextSearchRequest;
import io.flashvec.cluster.transport.grpc.UpsertRequest;
import io.flashvec.cluster.transport.grpc.WriteReply;
import io.flashvec.index.Point;
import io.flashvec.index.Record;
import io.flashvec.index.SearchStats;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.storage.FsyncPolicy;
import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import java.io.Closeable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The query role: serves this node's shard replicas ({@link LocalReplicas}) over gRPC ({@code
 * ShardService}). Each call names a replica by collection and shard; reads go to it directly,
 * replicated writes through the shard's primary ({@link PrimaryRole}), and {@link ReplicaUpkeep}
 * keeps the replicas in line with the placement.
 *
 * <p>Life cycle: add this service to a gRPC server, then {@link #join} (local replicas reconciled
 * with the placement, node registered under a lease, upkeep every second), then {@link #close()}.
 * Thread-safe.
 */
public final class ShardServer extends ShardServiceGrpc.ShardServiceImplBase implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(ShardServer.class);

  private final String nodeId;
  private final LocalReplicas replicas;
  private final ClusterMetadata meta;
  private final PrimaryRole primary;
  private final ReplicaUpkeep upkeep;
  private final ScheduledExecutorService scheduler;
  private volatile boolean closed;

  /** Told the costs of every shard search this node served (metrics); no-op by default. */
  private volatile Consumer<SearchStats> searchObserver = stats -> {};

  public ShardServer(
      String nodeId,
      LocalReplicas replicas,
      ClusterMetadata meta,
      ShardClients clients,
      Duration writeDeadline) {
    this.nodeId = nodeId;
    this.replicas = replicas;
    this.meta = meta;
    this.primary =
        new PrimaryRole(
            nodeId,
            meta,
            clients,
            writeDeadline,
            new Epochs(replicas.directory().dataDir().resolve("cluster-epochs")));
    this.upkeep = new ReplicaUpkeep(nodeId, meta, replicas, primary, clients);
    ScheduledThreadPoolExecutor s =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().name("flashvec-resync").daemon(true).factory());
    s.setRemoveOnCancelPolicy(true);
    this.scheduler = s;
  }

  /**
   * Reconciles the local replicas (recovered already) with the placement, registers {@code self}
   * under a lease of {@code leaseTtl}, and starts the upkeep; this service must be served by then.
   */
  public void join(Node self, Duration leaseTtl) {
    upkeep.reconcile();
    meta.register(self, leaseTtl);
    scheduler.scheduleWithFixedDelay(
        () -> {
          if (!closed) {
            upkeep.tick();
          }
        },
        0,
        1,
        TimeUnit.SECONDS);
    LOG.info("query node serving shards [node={}]", nodeId);
  }

  /**
   * Sets what is told the costs of each shard search this node serves, after the search and before
   * the reply (the query role's metrics: in a cluster the search work is counted where it runs).
   */
  public void onShardSearch(Consumer<SearchStats> observer) {
    this.searchObserver = Objects.requireNonNull(observer, "observer");
  }

  private static ReplicaKey key(ShardRef ref) {
    return new ReplicaKey(ref.getCollection(), ref.getShard());
  }

  private ShardReplica replica(ShardRef ref) {
    return replicas.get(key(ref));
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

  // ---------------------------------------------------------------- replicas

  @Override
  public void createShard(CreateShardRequest req, StreamObserver<CreateShardReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          ReplicaKey key = key(req.getShard());
          synchronized (primary.lock(key)) {
            if (req.getReset()) {
              // only the current primary may wipe a replica to copy its shard into it
              primary.acceptEpoch(key, req.getEpoch());
              replicas.drop(key);
            }
            if (replicas.exists(key)) {
              return CreateShardReply.newBuilder().setCreated(false).build();
            }
            replicas.create(
                key,
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
          ReplicaKey key = key(req);
          synchronized (primary.lock(key)) {
            boolean dropped = replicas.drop(key);
            primary.forget(key);
            return DropShardReply.newBuilder().setDropped(dropped).build();
          }
        });
  }

  // ---------------------------------------------------------------- writes

  @Override
  public void upsert(UpsertRequest req, StreamObserver<WriteReply> out) {
    write(
        out,
        req.getShard(),
        req.getReplicate(),
        req.getEpoch(),
        r -> r.upsert(Protos.points(req.getPointsList()), req.getWait()),
        epoch -> s -> s.upsert(req.toBuilder().setReplicate(false).setEpoch(epoch).build()));
  }

  /**
   * update_vectors on the primary: the current payloads are read and the new versions written under
   * the primary's write lock, so no write of the same points lands in between, and the replicas get
   * those versions as an ordinary upsert.
   */
  @Override
  public void updateVectors(UpsertRequest req, StreamObserver<WriteReply> out) {
    List<PointMsg> written = new ArrayList<>();
    write(
        out,
        req.getShard(),
        req.getReplicate(),
        req.getEpoch(),
        r -> {
          List<Point> next = r.withCurrentPayloads(Protos.points(req.getPointsList()));
          written.addAll(Protos.pointMsgs(next));
          return r.upsert(next, req.getWait());
        },
        epoch ->
            s ->
                s.upsert(
                    req.toBuilder()
                        .clearPoints()
                        .addAllPoints(written)
                        .setReplicate(false)
                        .setEpoch(epoch)
                        .build()));
  }

  @Override
  public void delete(DeleteRequest req, StreamObserver<WriteReply> out) {
    write(
        out,
        req.getShard(),
        req.getReplicate(),
        req.getEpoch(),
        r -> r.delete(Protos.pointIds(req.getIdsList()), req.getWait()),
        epoch -> s -> s.delete(req.toBuilder().setReplicate(false).setEpoch(epoch).build()));
  }

  /**
   * Applies a write and answers it: a forwarded one ({@code replicate=false}) once its epoch is
   * accepted, a client one only on the shard's primary, which then forwards it ({@code forward} of
   * its epoch) to the other replicas before it answers. A write whose caller gave up (deadline
   * passed, cancelled) is not applied any more.
   */
  private void write(
      StreamObserver<WriteReply> out,
      ShardRef ref,
      boolean replicate,
      long epoch,
      Function<ShardReplica, Collection.UpdateResult> apply,
      LongFunction<Consumer<ShardServiceBlockingStub>> forward) {
    answer(out, ref, () -> write(key(ref), replicate, epoch, apply, forward));
  }

  private WriteReply write(
      ReplicaKey key,
      boolean replicate,
      long epoch,
      Function<ShardReplica, Collection.UpdateResult> apply,
      LongFunction<Consumer<ShardServiceBlockingStub>> forward) {
    if (!replicate) {
      synchronized (primary.lock(key)) {
        primary.acceptEpoch(key, epoch);
        checkNotCancelled();
        return WriteReply.newBuilder()
            .setOperationId(apply.apply(replicas.get(key)).operationId())
            .build();
      }
    }
    long own = primary.checkPrimary(key);
    synchronized (primary.lock(key)) {
      primary.checkStillPrimary(key, own);
      checkNotCancelled();
      Collection.UpdateResult r = apply.apply(replicas.get(key));
      return primary.forward(key, own, forward.apply(own)).setOperationId(r.operationId()).build();
    }
  }

  private static void checkNotCancelled() {
    if (Context.current().isCancelled()) {
      throw new UnavailableException(
          "Service unavailable: the caller gave up before the write was applied");
    }
  }

  // ---------------------------------------------------------------- reads

  @Override
  public void get(GetRequest req, StreamObserver<RecordsReply> out) {
    answer(
        out,
        req.getShard(),
        () ->
            records(
                replica(req.getShard())
                    .retrieve(
                        Protos.pointIds(req.getIdsList()),
                        req.getWithPayload(),
                        req.getWithVector())));
  }

  @Override
  public void scroll(ShardScrollRequest req, StreamObserver<ScrollReply> out) {
    answer(
        out,
        req.getShard(),
        () -> Protos.reply(replica(req.getShard()).scroll(Protos.scroll(req))));
  }

  @Override
  public void count(CountRequest req, StreamObserver<CountReply> out) {
    answer(
        out,
        req.getShard(),
        () ->
            CountReply.newBuilder()
                .setCount(replica(req.getShard()).count(FilterProtos.filter(req.getFilter())))
                .build());
  }

  @Override
  public void search(ShardSearchRequest req, StreamObserver<ShardSearchReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          SearchStats stats = new SearchStats();
          List<Record> hits = replica(req.getShard()).search(Protos.search(req), stats);
          searchObserver.accept(stats);
          return ShardSearchReply.newBuilder()
              .setStats(Protos.stats(stats))
              .addAllRecords(Protos.recordMsgs(hits))
              .build();
        });
  }

  @Override
  public void textSearch(ShardTextSearchRequest req, StreamObserver<RecordsReply> out) {
    answer(
        out,
        req.getShard(),
        () -> records(replica(req.getShard()).textSearch(Protos.textSearch(req))));
  }

  @Override
  public void scrollOrdered(ShardOrderedScrollRequest req, StreamObserver<OrderedReply> out) {
    answer(
        out,
        req.getShard(),
        () ->
            OrderedReply.newBuilder()
                .addAllRecords(
                    Protos.orderedMsgs(
                        replica(req.getShard()).scrollOrdered(Protos.orderedScroll(req))))
                .build());
  }

  private static RecordsReply records(List<Record> records) {
    return RecordsReply.newBuilder().addAllRecords(Protos.recordMsgs(records)).build();
  }

  @Override
  public void info(ShardRef req, StreamObserver<ShardInfoReply> out) {
    answer(
        out,
        req,
        () -> {
          Collection.Info i = replica(req).info();
          return ShardInfoReply.newBuilder()
              .setPoints(i.points())
              .setSegments(i.segments())
              .setDiskBytes(i.diskBytes())
              .setMemoryBytes(i.memoryBytes())
              .setIndexing(i.indexing())
              .setBuildFailure(i.buildFailure() == null ? "" : i.buildFailure())
              .setFsyncPolicy(i.fsyncPolicy() == null ? "" : i.fsyncPolicy().configName())
              .putAllPayloadPoints(i.payloadPoints())
              .setIndexedPoints(i.indexingState().indexed())
              .setBacklogPoints(i.indexingState().backlog())
              .setFrozenPending(i.indexingState().frozenPending())
              .setBuildsRunning(i.indexingState().buildsRunning())
              .setCompactionsRunning(i.indexingState().compactionsRunning())
              .setMergesPlanned(i.indexingState().mergesPlanned())
              .setBuildsDeferred(i.indexingState().deferred())
              .setDeferredBuilds(i.deferredBuilds())
              .build();
        });
  }

  // ---------------------------------------------------------------- upkeep

  @Override
  public void maintain(MaintainRequest req, StreamObserver<MaintainReply> out) {
    answer(
        out,
        req.getShard(),
        () -> {
          ReplicaKey key = key(req.getShard());
          ShardReplica r = replicas.get(key);
          int files = 0;
          switch (req.getAction()) {
            case FLUSH -> r.flush();
            case COMPACT -> r.compact(false);
            case COMPACT_FORCE -> r.compact(true);
            case EVICT -> files = r.evictFromPageCache();
            case TUNE -> {
              Integer threshold =
                  req.getIndexingThreshold() == -2 ? null : req.getIndexingThreshold();
              FsyncPolicy policy =
                  req.getFsyncPolicy().isEmpty() ? null : FsyncPolicy.parse(req.getFsyncPolicy());
              Boolean onDisk = req.hasOnDiskPayload() ? req.getOnDiskPayload() : null;
              replicas.retune(key, t -> t.merge(threshold, policy, onDisk));
            }
            case PAYLOAD_SCHEMA ->
                r.applyPayloadSchema(
                    PayloadSchema.fromJsonString(req.getPayloadSchemaJson()),
                    req.getRevision(),
                    req.getWait());
            default -> throw new IllegalArgumentException("unknown action " + req.getAction());
          }
          return MaintainReply.newBuilder().setFiles(files).build();
        });
  }

  /** Copies this primary's replica to the node that asks ({@link PrimaryRole#copyTo}). */
  @Override
  public void resync(ResyncRequest req, StreamObserver<ResyncReply> out) {
    answer(
        out,
        req.getShard(),
        () ->
            ResyncReply.newBuilder()
                .setPoints(primary.copyTo(replica(req.getShard()), req.getShard(), req.getNodeId()))
                .build());
  }

  @Override
  public void health(HealthRequest req, StreamObserver<HealthReply> out) {
    out.onNext(HealthReply.newBuilder().setNodeId(nodeId).setReady(replicas.ready()).build());
    out.onCompleted();
  }

  /** Stops the upkeep; the gRPC server and the replicas belong to the caller. */
  @Override
  public void close() {
    closed = true;
    scheduler.shutdownNow();
  }
}
