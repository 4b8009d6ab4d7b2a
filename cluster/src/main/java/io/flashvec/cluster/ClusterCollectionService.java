package io.flashvec.cluster;

import io.flashvec.cluster.EtcdMetadataStore.Node;
import io.flashvec.cluster.EtcdMetadataStore.Placed;
import io.flashvec.cluster.grpc.CountRequest;
import io.flashvec.cluster.grpc.CreateShardRequest;
import io.flashvec.cluster.grpc.DeleteRequest;
import io.flashvec.cluster.grpc.GetRequest;
import io.flashvec.cluster.grpc.LaggingReplica;
import io.flashvec.cluster.grpc.MaintainRequest;
import io.flashvec.cluster.grpc.OrderedMsg;
import io.flashvec.cluster.grpc.RecordMsg;
import io.flashvec.cluster.grpc.ShardInfoReply;
import io.flashvec.cluster.grpc.ShardOrderedScrollRequest;
import io.flashvec.cluster.grpc.ShardRef;
import io.flashvec.cluster.grpc.ShardScrollRequest;
import io.flashvec.cluster.grpc.ShardSearchReply;
import io.flashvec.cluster.grpc.ShardSearchRequest;
import io.flashvec.cluster.grpc.ShardServiceGrpc.ShardServiceBlockingStub;
import io.flashvec.cluster.grpc.ShardTextSearchRequest;
import io.flashvec.cluster.grpc.UpsertRequest;
import io.flashvec.cluster.grpc.WriteReply;
import io.flashvec.cluster.internal.FilterProtos;
import io.flashvec.cluster.internal.GrpcErrors;
import io.flashvec.cluster.internal.Protos;
import io.flashvec.cluster.internal.ShardClients;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.ConflictException;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.index.query.TopMerge;
import io.flashvec.storage.FsyncPolicy;
import io.grpc.StatusRuntimeException;
import java.io.Closeable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy role: the {@link CollectionService} of a cluster. Routing comes from the {@link
 * EtcdMetadataStore} cache (so it keeps working from the last known table while etcd is
 * unreachable); shards are called over gRPC.
 *
 * <ul>
 *   <li>Writes: a point goes to shard {@code hash(id) mod shard_number} ({@link PointId#shard}, the
 *       same hash as standalone {@link Collection}); each shard's part is sent to its primary — the
 *       first live, non-stale replica in placement order — which replicates it before answering. If
 *       the primary fails, the next replica is promoted for that call.
 *   <li>Reads: one replica per shard, round-robin over the live non-stale ones; a failed call
 *       (error, dead node, deadline) is retried on the next replica.
 *   <li>Search: broadcast to every shard at once, each asked for {@code limit + offset} results
 *       within the search deadline; merged with a bounded heap. A shard with no replica that
 *       answers makes the result partial: {@link SearchStats#partial} is set, and the REST layer
 *       says so in the body and a header. Counts, gets and scrolls never return partial results:
 *       they fail with 503 naming {@code [collection, shard, node]}.
 * </ul>
 *
 * <p>Thread-safe. Owns its fan-out executor (virtual threads); the store and the clients belong to
 * the caller.
 */
public final class ClusterCollectionService implements CollectionService, Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterCollectionService.class);

  /** A shard none of whose replicas answered; the message carries collection, shard and nodes. */
  public static final class ShardUnavailableException extends UnavailableException {
    public ShardUnavailableException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final EtcdMetadataStore meta;
  private final ShardClients clients;
  private final Duration searchDeadline;
  private final Duration writeDeadline;
  private final ExecutorService fanOut =
      Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("flashvec-fanout-", 0).factory());
  private final AtomicLong operations = new AtomicLong();
  private final AtomicInteger roundRobin = new AtomicInteger();

  /** Ids per page when a shard lists the points a filter matches. */
  private static final int ID_PAGE = 10_000;

  public ClusterCollectionService(
      EtcdMetadataStore meta,
      ShardClients clients,
      Duration searchDeadline,
      Duration writeDeadline) {
    this.meta = meta;
    this.clients = clients;
    this.searchDeadline = searchDeadline;
    this.writeDeadline = writeDeadline;
  }

  @Override
  public boolean ready() {
    return meta.loaded();
  }

  private void checkReady() {
    if (!meta.loaded()) {
      throw new UnavailableException(
          "Service is not ready: cluster metadata not loaded from etcd yet");
    }
  }

  private Placed placed(String name) {
    checkReady();
    return meta.placed(name)
        .orElseThrow(
            () -> new NotFoundException("Not found: Collection `" + name + "` doesn't exist!"));
  }

  private static ShardRef ref(String collection, int shard) {
    return ShardRef.newBuilder().setCollection(collection).setShard(shard).build();
  }

  // ---------------------------------------------------------------- shard calls

  /**
   * Replicas that may serve a shard now: live and not stale, the elected primary first, then
   * placement order.
   */
  private List<Node> candidates(Placed p, int shard) {
    List<Node> out = new ArrayList<>();
    String leader = meta.leader(p.meta().name(), shard).orElse(null);
    for (String id : p.replicas().get(shard)) {
      if (meta.isStale(p.meta().name(), shard, id)) {
        continue;
      }
      meta.node(id)
          .ifPresent(
              n -> {
                if (n.id().equals(leader)) {
                  out.addFirst(n);
                } else {
                  out.add(n);
                }
              });
    }
    return out;
  }

  /**
   * {@link #callOnce}; a write whose shard has no primary that answers (it died, and its lease has
   * not expired yet, or the next one is being elected) is retried every 250 ms until the write
   * deadline.
   */
  private <T> T call(
      Placed p,
      int shard,
      boolean write,
      Duration deadline,
      Function<ShardServiceBlockingStub, T> body) {
    long end = System.nanoTime() + writeDeadline.toNanos();
    while (true) {
      try {
        return callOnce(p, shard, write, deadline, body);
      } catch (ShardUnavailableException e) {
        if (!write || System.nanoTime() + 250_000_000L > end) {
          throw e;
        }
        LOG.info(
            "no primary answered; retrying the write [collection={}, shard={}]: {}",
            p.meta().name(),
            shard,
            e.getMessage());
        try {
          Thread.sleep(250);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
        p = meta.placed(p.meta().name()).orElse(p);
      }
    }
  }

  /**
   * Calls one replica of a shard, then the next ones while the call fails in a way another replica
   * may not: primary-first for writes, round-robin for reads.
   */
  private <T> T callOnce(
      Placed p,
      int shard,
      boolean write,
      Duration deadline,
      Function<ShardServiceBlockingStub, T> body) {
    String coll = p.meta().name();
    List<Node> nodes = candidates(p, shard);
    if (nodes.isEmpty()) {
      throw new ShardUnavailableException(
          "Service unavailable: no live replica for shard [collection="
              + coll
              + ", shard="
              + shard
              + ", node="
              + String.join("|", p.replicas().get(shard))
              + "]",
          null);
    }
    int start = write ? 0 : Math.floorMod(roundRobin.getAndIncrement(), nodes.size());
    StatusRuntimeException last = null;
    Node lastNode = null;
    for (int i = 0; i < nodes.size(); i++) {
      Node n = nodes.get((start + i) % nodes.size());
      try {
        return body.apply(
            clients
                .stub(n.grpcAddress())
                .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS));
      } catch (StatusRuntimeException e) {
        if (!GrpcErrors.retryable(e)) {
          FlashVecException f = GrpcErrors.clientError(e);
          throw f != null ? f : e;
        }
        LOG.warn(
            "shard call failed; trying another replica [collection={}, shard={}, node={}]: {}",
            coll,
            shard,
            n.id(),
            e.getStatus());
        last = e;
        lastNode = n;
      }
    }
    throw new ShardUnavailableException(
        "Service unavailable: shard call failed on every replica [collection="
            + coll
            + ", shard="
            + shard
            + ", node="
            + lastNode.id()
            + ", cause="
            + last.getStatus().getCode()
            + ": "
            + last.getStatus().getDescription()
            + "]",
        last);
  }

  /** Runs one task per shard on the fan-out executor and returns their results in shard order. */
  private <T> List<T> perShard(int shards, java.util.function.IntFunction<T> task) {
    List<Future<T>> fs = new ArrayList<>(shards);
    for (int s = 0; s < shards; s++) {
      int shard = s;
      fs.add(fanOut.submit(() -> task.apply(shard)));
    }
    List<T> out = new ArrayList<>(shards);
    for (Future<T> f : fs) {
      out.add(join(f));
    }
    return out;
  }

  private static <T> T join(Future<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnavailableException("Service unavailable: interrupted", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  // ---------------------------------------------------------------- collections

  @Override
  public void createCollection(String name, CollectionConfig config) {
    createCollection(name, config, CollectionTuning.DEFAULT);
  }

  @Override
  public void createCollection(String name, CollectionConfig config, CollectionTuning tuning) {
    CollectionNames.validate(name);
    checkReady();
    if (tuning == null) {
      tuning = CollectionTuning.DEFAULT;
    }
    MetadataStore.CollectionMeta m =
        new MetadataStore.CollectionMeta(name, config, System.currentTimeMillis(), tuning);
    if (meta.placed(name).isPresent() || !meta.createIfAbsent(m)) {
      throw new ConflictException("Wrong input: Collection `" + name + "` already exists!");
    }
    Placed p = meta.placed(name).orElseThrow();
    var cfg = Protos.config(config, tuning, PayloadSchema.EMPTY);
    List<String> failures =
        perShard(
            config.shardNumber(),
            s -> {
              int ok = 0;
              StringBuilder why = new StringBuilder();
              for (String nodeId : p.replicas().get(s)) {
                try {
                  Node n =
                      meta.node(nodeId)
                          .orElseThrow(() -> new UnavailableException("node not registered"));
                  clients
                      .stub(n.grpcAddress())
                      .withDeadlineAfter(writeDeadline.toMillis(), TimeUnit.MILLISECONDS)
                      .createShard(
                          CreateShardRequest.newBuilder()
                              .setShard(ref(name, s))
                              .setConfig(cfg)
                              .build());
                  ok++;
                } catch (RuntimeException e) {
                  why.append(" [shard=").append(s).append(", node=").append(nodeId).append("] ");
                  why.append(e.getMessage());
                  if (p.replicas().get(s).size() > 1) {
                    meta.markStale(name, s, nodeId); // created at its next start, then resynced
                  }
                }
              }
              return ok == 0 ? why.toString() : null;
            });
    failures.removeIf(java.util.Objects::isNull);
    if (!failures.isEmpty()) {
      deleteCollection(name);
      throw new UnavailableException(
          "Service unavailable: cannot create a shard on any of its nodes [collection="
              + name
              + "]"
              + String.join(";", failures));
    }
    LOG.info("collection created [name={}, config={}, placement={}]", name, config, p.replicas());
  }

  @Override
  public boolean deleteCollection(String name) {
    CollectionNames.validate(name);
    checkReady();
    Placed p = meta.placed(name).orElse(null);
    if (p == null) {
      return false;
    }
    boolean removed = meta.remove(name);
    // Nodes that are down drop their replicas when they reconcile at their next start.
    perShard(
        p.replicas().size(),
        s -> {
          for (String nodeId : p.replicas().get(s)) {
            meta.node(nodeId)
                .ifPresent(
                    n -> {
                      try {
                        clients
                            .stub(n.grpcAddress())
                            .withDeadlineAfter(writeDeadline.toMillis(), TimeUnit.MILLISECONDS)
                            .dropShard(ref(name, s));
                      } catch (RuntimeException e) {
                        LOG.warn(
                            "cannot drop replica; the node drops it at its next start"
                                + " [collection={}, shard={}, node={}]: {}",
                            name,
                            s,
                            nodeId,
                            e.toString());
                      }
                    });
          }
          return null;
        });
    LOG.info("collection deleted [name={}]", name);
    return removed;
  }

  @Override
  public List<String> listCollections() {
    checkReady();
    List<String> names = new ArrayList<>();
    for (MetadataStore.CollectionMeta m : meta.list()) {
      names.add(m.name());
    }
    return names;
  }

  @Override
  public boolean exists(String name) {
    checkReady();
    return meta.placed(name).isPresent();
  }

  @Override
  public CollectionDescription describe(String name) {
    Placed p = placed(name);
    List<ShardInfoReply> infos =
        perShard(
            p.replicas().size(),
            s -> call(p, s, false, searchDeadline, st -> st.info(ref(name, s))));
    long points = 0;
    int segments = 0;
    long disk = 0;
    long mem = 0;
    boolean indexing = false;
    String failure = null;
    String policy = "";
    Map<String, Long> payloadPoints = new java.util.TreeMap<>();
    for (ShardInfoReply i : infos) {
      i.getPayloadPointsMap().forEach((k, v) -> payloadPoints.merge(k, v, Long::sum));
      points += i.getPoints();
      segments += i.getSegments();
      disk += i.getDiskBytes();
      mem += i.getMemoryBytes();
      indexing |= i.getIndexing();
      if (!i.getBuildFailure().isEmpty()) {
        failure = i.getBuildFailure();
      }
      policy = i.getFsyncPolicy();
    }
    CollectionTuning tuning = p.meta().tuning();
    FsyncPolicy fsync =
        !policy.isEmpty()
            ? FsyncPolicy.parse(policy)
            : tuning.fsyncPolicy() != null ? tuning.fsyncPolicy() : FsyncPolicy.ALWAYS;
    Collection.Info info =
        new Collection.Info(
            points,
            segments,
            disk,
            mem,
            List.of(),
            indexing,
            failure,
            false,
            0,
            null,
            0,
            tuning,
            fsync,
            p.payloadSchema(),
            payloadPoints);
    return new CollectionDescription(name, p.meta().config(), info);
  }

  // ---------------------------------------------------------------- writes

  private static float[] validate(CollectionConfig c, PointId id, float[] v) {
    c.checkVector(id, v);
    return v;
  }

  @Override
  public Collection.UpdateResult upsert(String collection, List<Point> points, boolean wait) {
    Placed p = placed(collection);
    int n = p.replicas().size();
    List<List<Point>> parts = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      parts.add(new ArrayList<>());
    }
    for (Point pt : points) {
      validate(p.meta().config(), pt.id(), pt.vector());
      parts.get(pt.id().shard(n)).add(pt);
    }
    perShard(
        n,
        s -> {
          if (parts.get(s).isEmpty()) {
            return null;
          }
          UpsertRequest.Builder b =
              UpsertRequest.newBuilder()
                  .setShard(ref(collection, s))
                  .setWait(wait)
                  .setReplicate(true);
          for (Point pt : parts.get(s)) {
            b.addPoints(Protos.point(pt));
          }
          UpsertRequest req = b.build();
          return noteLagging(collection, s, call(p, s, true, writeDeadline, st -> st.upsert(req)));
        });
    return new Collection.UpdateResult(operations.incrementAndGet(), wait);
  }

  @Override
  public Collection.UpdateResult delete(String collection, List<PointId> ids, boolean wait) {
    Placed p = placed(collection);
    List<List<PointId>> parts = byShard(p, ids);
    perShard(
        parts.size(),
        s -> {
          if (parts.get(s).isEmpty()) {
            return null;
          }
          DeleteRequest req =
              DeleteRequest.newBuilder()
                  .setShard(ref(collection, s))
                  .addAllIds(Protos.ids(parts.get(s)))
                  .setWait(wait)
                  .setReplicate(true)
                  .build();
          return noteLagging(collection, s, call(p, s, true, writeDeadline, st -> st.delete(req)));
        });
    return new Collection.UpdateResult(operations.incrementAndGet(), wait);
  }

  /**
   * Records the stale marks of the replicas that lack an acknowledged write before the write is
   * acknowledged: the watch may bring them later than this client's next read, which must not be
   * served by one of them.
   */
  private WriteReply noteLagging(String collection, int shard, WriteReply reply) {
    for (LaggingReplica r : reply.getLaggingList()) {
      meta.noteStale(collection, shard, r.getNode(), r.getRevision());
    }
    return reply;
  }

  private static List<List<PointId>> byShard(Placed p, List<PointId> ids) {
    int n = p.replicas().size();
    List<List<PointId>> parts = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      parts.add(new ArrayList<>());
    }
    for (PointId id : ids) {
      parts.get(id.shard(n)).add(id);
    }
    return parts;
  }

  /**
   * Read-modify-write through the proxy: reads the points, applies {@code update}, writes them
   * back. Unlike standalone this is not atomic against a concurrent write of the same point.
   */
  @Override
  public Collection.UpdateResult updatePayloads(
      String collection, List<PointId> ids, UnaryOperator<byte[]> update, boolean wait) {
    List<Record> current = retrieve(collection, ids, true, true);
    List<Point> next = new ArrayList<>(current.size());
    for (Record r : current) {
      next.add(new Point(r.id(), r.vector(), update.apply(r.payload())));
    }
    if (next.isEmpty()) {
      return new Collection.UpdateResult(operations.incrementAndGet(), wait);
    }
    return upsert(collection, next, wait);
  }

  // ---------------------------------------------------------------- reads

  @Override
  public List<Record> retrieve(
      String collection, List<PointId> ids, boolean withPayload, boolean withVector) {
    Placed p = placed(collection);
    List<PointId> unique = new ArrayList<>(new java.util.LinkedHashSet<>(ids));
    List<List<PointId>> parts = byShard(p, unique);
    List<List<RecordMsg>> got =
        perShard(
            parts.size(),
            s -> {
              if (parts.get(s).isEmpty()) {
                return List.of();
              }
              GetRequest req =
                  GetRequest.newBuilder()
                      .setShard(ref(collection, s))
                      .addAllIds(Protos.ids(parts.get(s)))
                      .setWithPayload(withPayload)
                      .setWithVector(withVector)
                      .build();
              return call(p, s, false, searchDeadline, st -> st.get(req).getRecordsList());
            });
    Map<PointId, Record> byId = new HashMap<>();
    for (List<RecordMsg> l : got) {
      for (RecordMsg m : l) {
        Record r = Protos.record(m);
        byId.put(r.id(), r);
      }
    }
    List<Record> out = new ArrayList<>();
    for (PointId id : unique) {
      Record r = byId.get(id);
      if (r != null) {
        out.add(r);
      }
    }
    return out;
  }

  @Override
  public long count(String collection, Filter filter) {
    Placed p = placed(collection);
    CountRequest.Builder b = CountRequest.newBuilder().setFilter(FilterProtos.message(filter));
    long n = 0;
    for (long c :
        perShard(
            p.replicas().size(),
            s -> {
              CountRequest req = b.clone().setShard(ref(collection, s)).build();
              return call(p, s, false, searchDeadline, st -> st.count(req).getCount());
            })) {
      n += c;
    }
    return n;
  }

  @Override
  public ScrollPage scroll(String collection, ScrollRequest request) {
    Placed p = placed(collection);
    List<ScrollPage> pages =
        perShard(
            p.replicas().size(),
            s -> {
              ShardScrollRequest req = Protos.scroll(ref(collection, s), request);
              return Protos.page(call(p, s, false, searchDeadline, st -> st.scroll(req)));
            });
    return ScrollPage.merge(pages, request.limit());
  }

  @Override
  public List<Record> search(String collection, SearchRequest req, SearchStats stats) {
    Placed p = placed(collection);
    CollectionConfig config = p.meta().config();
    validate(config, null, req.vector());
    int k = req.limit() + req.offset();
    if (k == 0) {
      return List.of();
    }
    int n = p.replicas().size();
    List<Future<ShardSearchReply>> fs = new ArrayList<>(n);
    for (int s = 0; s < n; s++) {
      ShardSearchRequest shardReq = Protos.search(ref(collection, s), req, k);
      int shard = s;
      fs.add(fanOut.submit(() -> call(p, shard, false, searchDeadline, st -> st.search(shardReq))));
    }
    TopMerge<Record> top = TopMerge.byScore(config.distance(), k);
    Set<String> failed = new HashSet<>();
    for (int s = 0; s < n; s++) {
      ShardSearchReply r;
      try {
        r = join(fs.get(s));
      } catch (ShardUnavailableException e) {
        failed.add(e.getMessage());
        continue;
      }
      Protos.addStats(stats, r.getStats());
      for (RecordMsg m : r.getRecordsList()) {
        top.offer(Protos.record(m));
      }
    }
    if (!failed.isEmpty()) {
      stats.partial = true;
      LOG.warn("partial search result [collection={}, failed={}]", collection, failed);
    }
    return top.bestFirst(req.offset());
  }

  // ---------------------------------------------------------------- maintenance

  /** Runs a maintenance action on every live replica of every shard. */
  private int maintainAll(String collection, MaintainRequest.Builder req) {
    Placed p = placed(collection);
    int files = 0;
    for (int f :
        perShard(
            p.replicas().size(),
            s -> {
              int sum = 0;
              boolean any = false;
              for (Node node : candidates(p, s)) {
                sum +=
                    clients
                        .stub(node.grpcAddress())
                        .withDeadlineAfter(writeDeadline.toMillis(), TimeUnit.MILLISECONDS)
                        .maintain(req.clone().setShard(ref(collection, s)).build())
                        .getFiles();
                any = true;
              }
              if (!any) {
                throw new ShardUnavailableException(
                    "Service unavailable: no live replica for shard [collection="
                        + collection
                        + ", shard="
                        + s
                        + "]",
                    null);
              }
              return sum;
            })) {
      files += f;
    }
    return files;
  }

  @Override
  public void flush(String collection) {
    maintainAll(collection, MaintainRequest.newBuilder().setAction(MaintainRequest.Action.FLUSH));
  }

  @Override
  public int evictFromPageCache(String collection) {
    return maintainAll(
        collection, MaintainRequest.newBuilder().setAction(MaintainRequest.Action.EVICT));
  }

  @Override
  public CollectionTuning updateCollection(
      String collection, Integer indexingThreshold, FsyncPolicy fsyncPolicy) {
    Placed p = placed(collection);
    CollectionTuning next = p.meta().tuning().merge(indexingThreshold, fsyncPolicy);
    meta.updateTuning(collection, next);
    maintainAll(
        collection,
        MaintainRequest.newBuilder()
            .setAction(MaintainRequest.Action.TUNE)
            .setIndexingThreshold(indexingThreshold == null ? -2 : indexingThreshold)
            .setFsyncPolicy(fsyncPolicy == null ? "" : fsyncPolicy.configName()));
    return next;
  }

  @Override
  public void compact(String collection, boolean force) {
    maintainAll(
        collection,
        MaintainRequest.newBuilder()
            .setAction(
                force ? MaintainRequest.Action.COMPACT_FORCE : MaintainRequest.Action.COMPACT));
  }

  @Override
  public ClusterInfo clusterInfo(String name) {
    Placed p = placed(name);
    List<RemoteShard> remote = new ArrayList<>();
    for (int s = 0; s < p.replicas().size(); s++) {
      for (String id : p.replicas().get(s)) {
        String state = !meta.isLive(id) ? "Dead" : meta.isStale(name, s, id) ? "Partial" : "Active";
        remote.add(new RemoteShard(s, CollectionService.peerId(id), state));
      }
    }
    // a proxy holds no shard: every replica is remote to it
    return new ClusterInfo(
        CollectionService.peerId(meta.nodeId()), p.replicas().size(), List.of(), remote);
  }

  @Override
  public void close() {
    fanOut.shutdownNow();
  }

  /** Ids of the points of one shard that match {@code filter}, read from its primary. */
  private List<PointId> matchingIds(Placed p, int shard, Filter filter) {
    String collection = p.meta().name();
    List<PointId> ids = new ArrayList<>();
    ScrollRequest request = new ScrollRequest(null, ID_PAGE, false, false, filter);
    do {
      ShardScrollRequest req = Protos.scroll(ref(collection, shard), request);
      ScrollPage page = Protos.page(call(p, shard, true, writeDeadline, st -> st.scroll(req)));
      for (Record r : page.points()) {
        ids.add(r.id());
      }
      request = page.nextOffset() == null ? null : request.from(page.nextOffset());
    } while (request != null);
    return ids;
  }

  /**
   * Each shard's primary finds the points that match, then they are deleted by id (replicated as
   * every delete is). A point written between the two steps is not deleted, as in standalone where
   * the filter runs when the delete is logged.
   */
  @Override
  public Collection.UpdateResult deleteByFilter(String collection, Filter filter, boolean wait) {
    Placed p = placed(collection);
    perShard(
        p.replicas().size(),
        s -> {
          List<PointId> ids = matchingIds(p, s, filter);
          if (ids.isEmpty()) {
            return null;
          }
          DeleteRequest req =
              DeleteRequest.newBuilder()
                  .setShard(ref(collection, s))
                  .addAllIds(Protos.ids(ids))
                  .setWait(wait)
                  .setReplicate(true)
                  .build();
          return noteLagging(collection, s, call(p, s, true, writeDeadline, st -> st.delete(req)));
        });
    return new Collection.UpdateResult(operations.incrementAndGet(), wait);
  }

  /** {@link #updatePayloads} (read-modify-write through the proxy) of the points that match. */
  @Override
  public Collection.UpdateResult updatePayloadsByFilter(
      String collection, Filter filter, UnaryOperator<byte[]> update, boolean wait) {
    Placed p = placed(collection);
    List<PointId> ids = new ArrayList<>();
    perShard(p.replicas().size(), s -> matchingIds(p, s, filter)).forEach(ids::addAll);
    return updatePayloads(collection, ids, update, wait);
  }

  /**
   * Records the new payload indexes in etcd, then applies them on every live replica; a replica
   * that is down applies them when its node starts again (reconcile), a stale one with its resync.
   */
  private Collection.UpdateResult changePayloadSchema(
      String collection, UnaryOperator<PayloadSchema> change, boolean wait) {
    Placed p = placed(collection);
    PayloadSchema next = change.apply(p.payloadSchema());
    long revision = p.revision();
    if (!next.equals(p.payloadSchema())) {
      revision = meta.updatePayloadSchema(collection, next);
    }
    MaintainRequest.Builder req =
        MaintainRequest.newBuilder()
            .setAction(MaintainRequest.Action.PAYLOAD_SCHEMA)
            .setPayloadSchemaJson(next.toJsonString())
            .setRevision(revision)
            .setWait(wait);
    perShard(
        p.replicas().size(),
        s -> {
          for (Node node : candidates(p, s)) {
            try {
              clients
                  .stub(node.grpcAddress())
                  .withDeadlineAfter(writeDeadline.toMillis(), TimeUnit.MILLISECONDS)
                  .maintain(req.clone().setShard(ref(collection, s)).build());
            } catch (StatusRuntimeException e) {
              FlashVecException f = GrpcErrors.clientError(e);
              if (f != null) {
                throw f;
              }
              // Recorded in etcd: the replica applies it from there within a second of coming
              // back (or at its next start).
              LOG.warn(
                  "replica did not apply the payload indexes now [collection={}, shard={},"
                      + " node={}]: {}",
                  collection,
                  s,
                  node.id(),
                  e.getStatus());
            }
          }
          return null;
        });
    return new Collection.UpdateResult(operations.incrementAndGet(), wait);
  }

  @Override
  public Collection.UpdateResult createPayloadIndex(
      String collection, PayloadFieldSchema field, boolean wait) {
    Collection.UpdateResult r = changePayloadSchema(collection, s -> s.with(field), wait);
    LOG.info(
        "payload index created [collection={}, field={}, type={}]",
        collection,
        field.field(),
        field.type().apiName());
    return r;
  }

  @Override
  public Collection.UpdateResult deletePayloadIndex(String collection, String field, boolean wait) {
    Collection.UpdateResult r = changePayloadSchema(collection, s -> s.without(field), wait);
    LOG.info("payload index dropped [collection={}, field={}]", collection, field);
    return r;
  }

  /**
   * Every shard returns its best {@code limit} by its own BM25 statistics (document frequencies are
   * per shard, as in Elasticsearch's default query-then-fetch); the proxy keeps the best.
   */
  @Override
  public List<Record> textSearch(String collection, TextSearchRequest request) {
    Placed p = placed(collection);
    p.payloadSchema().textQuery(request.field(), request.text()); // 400 here, not from every shard
    TopMerge<Record> top = TopMerge.byTextScore(request.limit());
    for (List<RecordMsg> l :
        perShard(
            p.replicas().size(),
            s -> {
              ShardTextSearchRequest req = Protos.textSearch(ref(collection, s), request);
              return call(p, s, false, searchDeadline, st -> st.textSearch(req).getRecordsList());
            })) {
      top.offerAll(Protos.records(l));
    }
    return top.bestFirst(0);
  }

  @Override
  public List<Ordered> scrollOrdered(String collection, OrderedScrollRequest request) {
    Placed p = placed(collection);
    p.payloadSchema().orderField(collection, request.key(), request.limit());
    TopMerge<Ordered> top = TopMerge.byOrderValue(request.ascending(), request.limit());
    for (List<OrderedMsg> l :
        perShard(
            p.replicas().size(),
            s -> {
              ShardOrderedScrollRequest req = Protos.orderedScroll(ref(collection, s), request);
              return call(
                  p, s, false, searchDeadline, st -> st.scrollOrdered(req).getRecordsList());
            })) {
      for (OrderedMsg m : l) {
        top.offer(Protos.ordered(m));
      }
    }
    return top.bestFirst(0);
  }
}
