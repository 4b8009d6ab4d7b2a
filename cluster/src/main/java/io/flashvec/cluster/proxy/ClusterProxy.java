package io.flashvec.cluster.proxy;

import static io.flashvec.cluster.proxy.ShardCalls.ref;

import io.flashvec.cluster.Aliases;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.metadata.ClusterMetadata;
import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.cluster.metadata.Node;
import io.flashvec.cluster.metadata.Placement;
import io.flashvec.cluster.transport.FilterProtos;
import io.flashvec.cluster.transport.GrpcErrors;
import io.flashvec.cluster.transport.Protos;
import io.flashvec.cluster.transport.ShardClients;
import io.flashvec.cluster.transport.grpc.CountRequest;
import io.flashvec.cluster.transport.grpc.CreateShardRequest;
import io.flashvec.cluster.transport.grpc.DeleteRequest;
import io.flashvec.cluster.transport.grpc.FilterMsg;
import io.flashvec.cluster.transport.grpc.GetRequest;
import io.flashvec.cluster.transport.grpc.LaggingReplica;
import io.flashvec.cluster.transport.grpc.MaintainRequest;
import io.flashvec.cluster.transport.grpc.OrderedMsg;
import io.flashvec.cluster.transport.grpc.RecordMsg;
import io.flashvec.cluster.transport.grpc.ShardInfoReply;
import io.flashvec.cluster.transport.grpc.ShardOrderedScrollRequest;
import io.flashvec.cluster.transport.grpc.ShardScrollRequest;
import io.flashvec.cluster.transport.grpc.ShardSearchReply;
import io.flashvec.cluster.transport.grpc.ShardSearchRequest;
import io.flashvec.cluster.transport.grpc.ShardServiceGrpc.ShardServiceBlockingStub;
import io.flashvec.cluster.transport.grpc.ShardTextSearchRequest;
import io.flashvec.cluster.transport.grpc.UpsertRequest;
import io.flashvec.cluster.transport.grpc.WriteReply;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.ConflictException;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.InvalidInputException;
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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy role: the {@link CollectionService} of a cluster. Routing comes from the cluster
 * metadata's cache (so it keeps working from the last known table while the store is unreachable);
 * shards are called over gRPC ({@link ShardCalls}: replica choice, deadline, failover).
 *
 * <ul>
 *   <li>Writes: a point goes to shard {@code hash(id) mod shard_number} ({@link PointId#shard}, the
 *       same hash as standalone {@link Collection}); each shard's part is sent to its primary,
 *       which replicates it before answering.
 *   <li>Search: broadcast to every shard at once, each asked for {@code limit + offset} results
 *       within the search deadline; merged with a bounded heap ({@link TopMerge}). A shard with no
 *       replica that answers makes the result partial: {@link SearchStats#partial} is set, and the
 *       REST layer says so in the body and a header. Counts, gets and scrolls never return partial
 *       results: they fail with 503 naming {@code [collection, shard, node]}.
 * </ul>
 *
 * <p>Thread-safe. Owns its fan-out executor; the metadata and the clients belong to the caller.
 */
public final class ClusterProxy implements CollectionService, Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterProxy.class);

  /** Ids per page when a shard lists the points a filter matches. */
  private static final int ID_PAGE = 10_000;

  private final ClusterMetadata meta;
  private final ShardCalls calls;
  private final Duration searchDeadline;
  private final Duration writeDeadline;
  private final BooleanSupplier joined;
  private final AtomicLong operations = new AtomicLong();

  /**
   * @param joined whether this node has joined the cluster (the proxy is ready once it has, and the
   *     metadata is loaded)
   */
  public ClusterProxy(
      ClusterMetadata meta,
      ShardClients clients,
      Duration searchDeadline,
      Duration writeDeadline,
      BooleanSupplier joined) {
    this.meta = meta;
    this.calls = new ShardCalls(meta, clients, writeDeadline);
    this.searchDeadline = searchDeadline;
    this.writeDeadline = writeDeadline;
    this.joined = joined;
  }

  @Override
  public boolean ready() {
    return meta.loaded() && joined.getAsBoolean();
  }

  private void checkReady() {
    if (!meta.loaded()) {
      throw new UnavailableException(
          "Service is not ready: cluster metadata not loaded from etcd yet");
    }
  }

  @Override
  public CollectionConfig changeVectors(
      String nameOrAlias, java.util.function.UnaryOperator<CollectionConfig> change) {
    // 404 for a collection that does not exist, else the refusal of named vectors
    String name = resolve(nameOrAlias);
    placed(name);
    throw CollectionService.changeVectorsRefused(name);
  }

  private Placement placed(String name) {
    checkReady();
    return meta.placed(name)
        .orElseThrow(
            () -> new NotFoundException("Not found: Collection `" + name + "` doesn't exist!"));
  }

  /** A read of shard {@code s} from one of its replicas within the search deadline. */
  private <T> T read(Placement p, int s, Function<ShardServiceBlockingStub, T> body) {
    return calls.call(p, s, false, searchDeadline, body);
  }

  // ---------------------------------------------------------------- collections

  @Override
  public void createCollection(String name, CollectionConfig config, CollectionTuning tuning) {
    CollectionNames.validate(name);
    if (tuning.walSegmentBytes() > 0) {
      // the shard protocol does not carry it to the replicas: refused rather than ignored
      throw new InvalidInputException(
          "Wrong input: wal_config.wal_capacity_mb is a server setting in cluster mode"
              + " (FLASHVEC_WAL_SEGMENT_BYTES) [wal_config.wal_capacity_mb="
              + (tuning.walSegmentBytes() >> 20)
              + "]");
    }
    if (tuning.optimizationJobs() > 0) {
      // the shard protocol does not carry it to the replicas: refused rather than ignored
      throw new InvalidInputException(
          "Wrong input: optimizers_config.max_optimization_threads is only supported in standalone"
              + " mode; cluster replicas build and merge on the node's threads"
              + " [optimizers_config.max_optimization_threads="
              + tuning.optimizationJobs()
              + "]");
    }
    if (tuning.walRetainClosed() > 0) {
      // the shard protocol does not carry it to the replicas: refused rather than ignored
      throw new InvalidInputException(
          "Wrong input: wal_config.wal_retain_closed is only supported in standalone mode; cluster"
              + " replicas delete closed WAL segments once a checkpoint covers them"
              + " [wal_config.wal_retain_closed="
              + tuning.walRetainClosed()
              + "]");
    }
    if (tuning.segmentNumber() > 0) {
      // the shard protocol does not carry it to the replicas: refused rather than ignored
      throw new InvalidInputException(
          "Wrong input: optimizers_config.default_segment_number is only supported in standalone"
              + " mode; cluster shards keep the segments the tiers choose"
              + " (FLASHVEC_MERGE_SEGMENTS_PER_TIER) [optimizers_config.default_segment_number="
              + tuning.segmentNumber()
              + "]");
    }
    if (!config.hasPrimary()) {
      // the shard protocol carries one dense vector per point and nothing beside it
      throw new InvalidInputException(
          "Wrong input: collections without a dense vector are not supported in cluster mode yet,"
              + " only in standalone mode [sparse_vectors="
              + config.sparseVectors().keySet()
              + "]");
    }
    if (!config.sparseVectors().isEmpty()) {
      // the shard protocol carries one dense vector per point: refused rather than dropped
      throw new InvalidInputException(
          "Wrong input: sparse_vectors are not supported in cluster mode yet, only in standalone"
              + " mode [sparse_vectors="
              + config.sparseVectors().keySet()
              + "]");
    }
    if (!config.vectorName().isEmpty()) {
      // the shards know one unnamed vector, and a named one may be missing from a point
      throw new InvalidInputException(
          "Wrong input: named vectors are not supported in cluster mode yet, only in standalone"
              + " mode [vectors="
              + config.vectorName()
              + "]");
    }
    checkReady();
    if (tuning == null) {
      tuning = CollectionTuning.DEFAULT;
    }
    CollectionMeta m = new CollectionMeta(name, config, System.currentTimeMillis(), tuning);
    if (meta.placed(name).isPresent() || !meta.createIfAbsent(m)) {
      throw new ConflictException("Wrong input: Collection `" + name + "` already exists!");
    }
    Placement p = meta.placed(name).orElseThrow();
    CreateShardRequest.Builder req =
        CreateShardRequest.newBuilder()
            .setConfig(Protos.config(config, tuning, PayloadSchema.EMPTY));
    List<String> failures =
        calls.perShard(
            config.shardNumber(),
            s -> {
              int ok = 0;
              StringBuilder why = new StringBuilder();
              for (String nodeId : p.replicas(s)) {
                try {
                  Node n =
                      meta.node(nodeId)
                          .orElseThrow(() -> new UnavailableException("node not registered"));
                  calls
                      .stub(n, writeDeadline)
                      .createShard(req.clone().setShard(ref(name, s)).build());
                  ok++;
                } catch (RuntimeException e) {
                  why.append(" [shard=").append(s).append(", node=").append(nodeId).append("] ");
                  why.append(e.getMessage());
                  if (p.replicas(s).size() > 1) {
                    meta.markStale(name, s, nodeId); // created at its next start, then resynced
                  }
                }
              }
              return ok == 0 ? why.toString() : null;
            });
    failures.removeIf(Objects::isNull);
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
    Placement p = meta.placed(name).orElse(null);
    if (p == null) {
      return false;
    }
    boolean removed = meta.remove(name);
    // Nodes that are down drop their replicas when they reconcile at their next start.
    calls.perShard(
        p.shards(),
        s -> {
          for (String nodeId : p.replicas(s)) {
            meta.node(nodeId)
                .ifPresent(
                    n -> {
                      try {
                        calls.stub(n, writeDeadline).dropShard(ref(name, s));
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
    for (CollectionMeta m : meta.list()) {
      names.add(m.name());
    }
    return names;
  }

  @Override
  public Peers peers() {
    checkReady();
    List<Peer> out = new ArrayList<>();
    for (Node n : meta.nodes().values()) {
      out.add(new Peer(CollectionService.peerId(n.id()), n.id(), n.httpAddress(), n.roles()));
    }
    out.sort(java.util.Comparator.comparing(Peer::nodeId));
    return new Peers(CollectionService.peerId(meta.nodeId()), out);
  }

  /** Applies alias changes in one compare-and-swap of the aliases in etcd. */
  @Override
  public void updateAliases(List<Aliases.Change> changes) {
    Aliases.validateNames(changes);
    checkReady();
    meta.updateAliases(current -> Aliases.apply(current, changes, n -> meta.placed(n).isPresent()));
    LOG.info("aliases changed [changes={}]", changes);
  }

  @Override
  public Map<String, String> aliases() {
    checkReady();
    return new java.util.TreeMap<>(meta.aliases());
  }

  /** The collection {@code name} (a collection's name or an alias of it) means. */
  private String resolve(String name) {
    String target = meta.aliases().get(name);
    return target == null ? name : target;
  }

  @Override
  public boolean exists(String nameOrAlias) {
    String name = resolve(nameOrAlias);
    checkReady();
    return meta.placed(name).isPresent();
  }

  @Override
  public CollectionConfig config(String nameOrAlias) {
    return placed(resolve(nameOrAlias)).meta().config();
  }

  @Override
  public CollectionDescription describe(String nameOrAlias) {
    String name = resolve(nameOrAlias);
    Placement p = placed(name);
    // Not a search: the info counts the points of every payload index on each shard (a filtered
    // count per key), which on a loaded node can take longer than a search's deadline. It gets
    // the write deadline, still per replica, so a stopped replica fails over as a read does.
    List<ShardInfoReply> infos =
        calls.perShard(
            p.shards(), s -> calls.call(p, s, false, writeDeadline, st -> st.info(ref(name, s))));
    long points = 0;
    int segments = 0;
    long disk = 0;
    long mem = 0;
    boolean indexing = false;
    String failure = null;
    String policy = "";
    Map<String, Long> payloadPoints = new TreeMap<>();
    io.flashvec.index.IndexingState state = io.flashvec.index.IndexingState.EMPTY;
    int deferred = 0;
    for (ShardInfoReply i : infos) {
      state =
          state.plus(
              new io.flashvec.index.IndexingState(
                  i.getIndexedPoints(),
                  i.getBacklogPoints(),
                  i.getFrozenPending(),
                  i.getBuildsRunning(),
                  i.getCompactionsRunning(),
                  i.getMergesPlanned(),
                  i.getBuildsDeferred()));
      deferred += i.getDeferredBuilds();
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
            state.compactionsRunning() > 0,
            0,
            null,
            deferred,
            tuning,
            fsync,
            p.payloadSchema(),
            payloadPoints,
            state);
    return new CollectionDescription(name, p.meta().config(), info);
  }

  @Override
  public ClusterInfo clusterInfo(String nameOrAlias) {
    String name = resolve(nameOrAlias);
    Placement p = placed(name);
    List<RemoteShard> remote = new ArrayList<>();
    for (int s = 0; s < p.shards(); s++) {
      for (String id : p.replicas(s)) {
        String state = !meta.isLive(id) ? "Dead" : meta.isStale(name, s, id) ? "Partial" : "Active";
        remote.add(new RemoteShard(s, CollectionService.peerId(id), state));
      }
    }
    // a proxy holds no shard: every replica is remote to it
    return new ClusterInfo(CollectionService.peerId(meta.nodeId()), p.shards(), List.of(), remote);
  }

  // ---------------------------------------------------------------- writes

  @Override
  public Collection.UpdateResult upsert(
      String collectionOrAlias, List<Point> points, boolean wait) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    CollectionConfig config = p.meta().config();
    List<List<Point>> parts = byShard(p.shards(), points, pt -> pt.id());
    for (Point pt : points) {
      config.checkVector(pt.id(), pt.vector());
      // cluster collections have no sparse fields: a sparse vector is refused, never dropped
      pt.sparse().keySet().forEach(config::checkSparseName);
    }
    return write(
        p,
        parts,
        (s, part) -> {
          UpsertRequest req =
              UpsertRequest.newBuilder()
                  .setShard(ref(collection, s))
                  .setWait(wait)
                  .setReplicate(true)
                  .addAllPoints(Protos.pointMsgs(part))
                  .build();
          return st -> st.upsert(req);
        },
        wait);
  }

  /**
   * Each shard's primary reads the current payloads and writes the new versions under its write
   * lock ({@code UpdateVectors}), so a concurrent payload update of the same points is not lost.
   * The ids are checked to exist first: a missing one is a 404 and nothing is written; a point
   * deleted after the check is skipped by its primary.
   */
  @Override
  public Collection.UpdateResult updateVectors(
      String collection, List<Point> points, boolean wait) {
    Placement p = placed(collection);
    CollectionConfig config = p.meta().config();
    for (Point pt : points) {
      config.checkVector(pt.id(), pt.vector());
      // cluster collections have no sparse fields: a sparse vector is refused, never dropped
      pt.sparse().keySet().forEach(config::checkSparseName);
    }
    List<PointId> ids = new ArrayList<>(points.size());
    points.forEach(pt -> ids.add(pt.id()));
    java.util.Set<PointId> found = new java.util.HashSet<>();
    retrieve(collection, ids, false, false).forEach(r -> found.add(r.id()));
    for (PointId id : ids) {
      if (!found.contains(id)) {
        throw new NotFoundException("Not found: No point with id " + id + " found");
      }
    }
    return write(
        p,
        byShard(p.shards(), points, pt -> pt.id()),
        (s, part) -> {
          UpsertRequest req =
              UpsertRequest.newBuilder()
                  .setShard(ref(collection, s))
                  .setWait(wait)
                  .setReplicate(true)
                  .addAllPoints(Protos.pointMsgs(part))
                  .build();
          return st -> st.updateVectors(req);
        },
        wait);
  }

  @Override
  public Collection.UpdateResult delete(String collectionOrAlias, List<PointId> ids, boolean wait) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    return deleteIds(p, byShard(p.shards(), ids, id -> id), wait);
  }

  private Collection.UpdateResult deleteIds(Placement p, List<List<PointId>> parts, boolean wait) {
    return write(
        p,
        parts,
        (s, part) -> {
          DeleteRequest req =
              DeleteRequest.newBuilder()
                  .setShard(ref(p.name(), s))
                  .addAllIds(Protos.ids(part))
                  .setWait(wait)
                  .setReplicate(true)
                  .build();
          return st -> st.delete(req);
        },
        wait);
  }

  /** The call that writes one shard's part. */
  private interface ShardWrite<T> {
    Function<ShardServiceBlockingStub, WriteReply> call(int shard, List<T> part);
  }

  /**
   * Sends each shard's non-empty part to its primary, all shards at once, and records the stale
   * marks of the replicas that lack the write before the write is acknowledged: the metadata watch
   * may bring them later than this client's next read, which must not be served by one of them.
   */
  private <T> Collection.UpdateResult write(
      Placement p, List<List<T>> parts, ShardWrite<T> write, boolean wait) {
    calls.perShard(
        parts.size(),
        s -> {
          if (parts.get(s).isEmpty()) {
            return null;
          }
          WriteReply reply = calls.call(p, s, true, writeDeadline, write.call(s, parts.get(s)));
          for (LaggingReplica r : reply.getLaggingList()) {
            meta.noteStale(p.name(), s, r.getNode(), r.getRevision());
          }
          return reply;
        });
    return new Collection.UpdateResult(operations.incrementAndGet(), wait);
  }

  private static <T> List<List<T>> byShard(int shards, List<T> items, Function<T, PointId> id) {
    List<List<T>> parts = new ArrayList<>(shards);
    for (int i = 0; i < shards; i++) {
      parts.add(new ArrayList<>());
    }
    for (T t : items) {
      parts.get(id.apply(t).shard(shards)).add(t);
    }
    return parts;
  }

  /**
   * Each shard's primary finds the points that match, then they are deleted by id (replicated as
   * every delete is). A point written between the two steps is not deleted, as in standalone where
   * the filter runs when the delete is logged.
   */
  @Override
  public Collection.UpdateResult deleteByFilter(
      String collectionOrAlias, Filter filter, boolean wait) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    return deleteIds(p, calls.perShard(p.shards(), s -> matchingIds(p, s, filter)), wait);
  }

  /** Ids of the points of one shard that match {@code filter}, read from its primary. */
  private List<PointId> matchingIds(Placement p, int shard, Filter filter) {
    List<PointId> ids = new ArrayList<>();
    ScrollRequest request = new ScrollRequest(null, ID_PAGE, false, false, filter);
    do {
      ShardScrollRequest req = Protos.scroll(ref(p.name(), shard), request);
      ScrollPage page =
          Protos.page(calls.call(p, shard, true, writeDeadline, st -> st.scroll(req)));
      for (Record r : page.points()) {
        ids.add(r.id());
      }
      request = page.nextOffset() == null ? null : request.from(page.nextOffset());
    } while (request != null);
    return ids;
  }

  /**
   * Read-modify-write through the proxy: reads the points, applies {@code update}, writes them
   * back. Unlike standalone this is not atomic against a concurrent write of the same point.
   */
  @Override
  public Collection.UpdateResult updatePayloads(
      String collectionOrAlias, List<PointId> ids, UnaryOperator<byte[]> update, boolean wait) {
    String collection = resolve(collectionOrAlias);
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

  /** {@link #updatePayloads} (read-modify-write through the proxy) of the points that match. */
  @Override
  public Collection.UpdateResult updatePayloadsByFilter(
      String collectionOrAlias, Filter filter, UnaryOperator<byte[]> update, boolean wait) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    List<PointId> ids = new ArrayList<>();
    calls.perShard(p.shards(), s -> matchingIds(p, s, filter)).forEach(ids::addAll);
    return updatePayloads(collection, ids, update, wait);
  }

  // ---------------------------------------------------------------- reads

  @Override
  public List<Record> retrieve(
      String collectionOrAlias, List<PointId> ids, boolean withPayload, boolean withVector) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    List<PointId> unique = new ArrayList<>(new LinkedHashSet<>(ids));
    List<List<PointId>> parts = byShard(p.shards(), unique, id -> id);
    List<List<RecordMsg>> got =
        calls.perShard(
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
              return read(p, s, st -> st.get(req).getRecordsList());
            });
    Map<PointId, Record> byId = new HashMap<>();
    for (List<RecordMsg> l : got) {
      for (Record r : Protos.records(l)) {
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
  public long count(String collectionOrAlias, Filter filter) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    FilterMsg f = FilterProtos.message(filter);
    long n = 0;
    for (long c :
        calls.perShard(
            p.shards(),
            s -> {
              CountRequest req =
                  CountRequest.newBuilder().setShard(ref(collection, s)).setFilter(f).build();
              return read(p, s, st -> st.count(req).getCount());
            })) {
      n += c;
    }
    return n;
  }

  @Override
  public ScrollPage scroll(String collectionOrAlias, ScrollRequest request) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    List<ScrollPage> pages =
        calls.perShard(
            p.shards(),
            s -> {
              ShardScrollRequest req = Protos.scroll(ref(collection, s), request);
              return Protos.page(read(p, s, st -> st.scroll(req)));
            });
    return ScrollPage.merge(pages, request.limit());
  }

  @Override
  public List<Record> search(String collectionOrAlias, SearchRequest req, SearchStats stats) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    CollectionConfig config = p.meta().config();
    config.checkVector(null, req.vector());
    int k = req.limit() + req.offset();
    if (k == 0) {
      return List.of();
    }
    int n = p.shards();
    List<Future<ShardSearchReply>> fs = new ArrayList<>(n);
    for (int s = 0; s < n; s++) {
      ShardSearchRequest shardReq = Protos.search(ref(collection, s), req, k);
      int shard = s;
      fs.add(calls.submit(() -> read(p, shard, st -> st.search(shardReq))));
    }
    TopMerge<Record> top = TopMerge.byScore(config.distance(), k);
    Set<String> failed = new TreeSet<>();
    for (Future<ShardSearchReply> f : fs) {
      ShardSearchReply r;
      try {
        r = ShardCalls.join(f);
      } catch (ShardUnavailableException e) {
        failed.add(e.getMessage());
        continue;
      }
      Protos.addStats(stats, r.getStats());
      top.offerAll(Protos.records(r.getRecordsList()));
    }
    if (!failed.isEmpty()) {
      stats.partial = true;
      LOG.warn("partial search result [collection={}, failed={}]", collection, failed);
    }
    return top.bestFirst(req.offset());
  }

  /**
   * Every shard returns its best {@code limit} by its own BM25 statistics (document frequencies are
   * per shard, as in Elasticsearch's default query-then-fetch); the proxy keeps the best.
   */
  @Override
  public List<Record> textSearch(String collectionOrAlias, TextSearchRequest request) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    p.payloadSchema().textQuery(request.field(), request.text()); // 400 here, not from every shard
    TopMerge<Record> top = TopMerge.byTextScore(request.limit());
    for (List<RecordMsg> l :
        calls.perShard(
            p.shards(),
            s -> {
              ShardTextSearchRequest req = Protos.textSearch(ref(collection, s), request);
              return read(p, s, st -> st.textSearch(req).getRecordsList());
            })) {
      top.offerAll(Protos.records(l));
    }
    return top.bestFirst(0);
  }

  @Override
  public List<Ordered> scrollOrdered(String collectionOrAlias, OrderedScrollRequest request) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    p.payloadSchema().orderField(collection, request.key(), request.limit());
    TopMerge<Ordered> top = TopMerge.byOrderValue(request.ascending(), request.limit());
    for (List<OrderedMsg> l :
        calls.perShard(
            p.shards(),
            s -> {
              ShardOrderedScrollRequest req = Protos.orderedScroll(ref(collection, s), request);
              return read(p, s, st -> st.scrollOrdered(req).getRecordsList());
            })) {
      for (OrderedMsg m : l) {
        top.offer(Protos.ordered(m));
      }
    }
    return top.bestFirst(0);
  }

  // ---------------------------------------------------------------- maintenance

  /**
   * Sends a maintenance request to every live replica of every shard; {@code lenient}: a replica
   * that does not answer is skipped (it catches up from the metadata), else its failure fails the
   * call. Returns the sum of the replies' file counts.
   */
  private int maintainAll(String collection, MaintainRequest.Builder req, boolean lenient) {
    Placement p = placed(collection);
    int files = 0;
    for (int f :
        calls.perShard(
            p.shards(),
            s -> {
              int sum = 0;
              List<Node> nodes = calls.candidates(p, s);
              if (nodes.isEmpty() && !lenient) {
                throw new ShardUnavailableException(
                    "Service unavailable: no live replica for shard [collection="
                        + collection
                        + ", shard="
                        + s
                        + "]",
                    null);
              }
              for (Node node : nodes) {
                try {
                  sum +=
                      calls
                          .stub(node, writeDeadline)
                          .maintain(req.clone().setShard(ref(collection, s)).build())
                          .getFiles();
                } catch (StatusRuntimeException e) {
                  FlashVecException client = GrpcErrors.clientError(e);
                  if (client != null || !lenient) {
                    throw client != null ? client : e;
                  }
                  // Recorded in the metadata: the replica applies it from there within a second
                  // of coming back (or at its next start).
                  LOG.warn(
                      "replica did not apply the change now [collection={}, shard={}, node={}]:"
                          + " {}",
                      collection,
                      s,
                      node.id(),
                      e.getStatus());
                }
              }
              return sum;
            })) {
      files += f;
    }
    return files;
  }

  @Override
  public void flush(String collectionOrAlias) {
    String collection = resolve(collectionOrAlias);
    maintainAll(
        collection, MaintainRequest.newBuilder().setAction(MaintainRequest.Action.FLUSH), false);
  }

  @Override
  public int evictFromPageCache(String collectionOrAlias) {
    String collection = resolve(collectionOrAlias);
    return maintainAll(
        collection, MaintainRequest.newBuilder().setAction(MaintainRequest.Action.EVICT), false);
  }

  @Override
  public void compact(String collectionOrAlias, boolean force) {
    String collection = resolve(collectionOrAlias);
    maintainAll(
        collection,
        MaintainRequest.newBuilder()
            .setAction(
                force ? MaintainRequest.Action.COMPACT_FORCE : MaintainRequest.Action.COMPACT),
        false);
  }

  @Override
  public CollectionTuning updateCollection(
      String collectionOrAlias, java.util.function.UnaryOperator<CollectionTuning> change) {
    String collection = resolve(collectionOrAlias);
    CollectionTuning next = change.apply(placed(collection).meta().tuning());
    meta.updateTuning(collection, next);
    return next;
  }

  @Override
  public Settings settings(String collectionOrAlias) {
    Placement p = placed(resolve(collectionOrAlias));
    return new Settings(p.meta().config(), p.meta().tuning(), p.payloadSchema());
  }

  @Override
  public CollectionTuning updateCollection(
      String collectionOrAlias,
      Integer indexingThreshold,
      FsyncPolicy fsyncPolicy,
      Boolean onDiskPayload) {
    String collection = resolve(collectionOrAlias);
    Placement p = placed(collection);
    CollectionTuning next = p.meta().tuning().merge(indexingThreshold, fsyncPolicy, onDiskPayload);
    meta.updateTuning(collection, next);
    MaintainRequest.Builder tune =
        MaintainRequest.newBuilder()
            .setAction(MaintainRequest.Action.TUNE)
            .setIndexingThreshold(indexingThreshold == null ? -2 : indexingThreshold)
            .setFsyncPolicy(fsyncPolicy == null ? "" : fsyncPolicy.configName());
    if (onDiskPayload != null) {
      tune.setOnDiskPayload(onDiskPayload);
    }
    maintainAll(collection, tune, false);
    return next;
  }

  /**
   * Records the new payload indexes in the metadata, then applies them on every live replica; a
   * replica that is down applies them when its node starts again (reconcile), a stale one with its
   * resync.
   */
  private Collection.UpdateResult changePayloadSchema(
      String collection, UnaryOperator<PayloadSchema> change, boolean wait) {
    Placement p = placed(collection);
    PayloadSchema next = change.apply(p.payloadSchema());
    long revision = p.revision();
    if (!next.equals(p.payloadSchema())) {
      revision = meta.updatePayloadSchema(collection, next);
    }
    maintainAll(
        collection,
        MaintainRequest.newBuilder()
            .setAction(MaintainRequest.Action.PAYLOAD_SCHEMA)
            .setPayloadSchemaJson(next.toJsonString())
            .setRevision(revision)
            .setWait(wait),
        true);
    LOG.info(
        "payload indexes changed [collection={}, revision={}, indexes={}]",
        collection,
        revision,
        next.toJsonString());
    return new Collection.UpdateResult(operations.incrementAndGet(), wait);
  }

  @Override
  public Collection.UpdateResult createPayloadIndex(
      String collectionOrAlias, PayloadFieldSchema field, boolean wait) {
    String collection = resolve(collectionOrAlias);
    return changePayloadSchema(collection, s -> s.with(field), wait);
  }

  @Override
  public Collection.UpdateResult deletePayloadIndex(
      String collectionOrAlias, String field, boolean wait) {
    String collection = resolve(collectionOrAlias);
    return changePayloadSchema(collection, s -> s.without(field), wait);
  }

  @Override
  public void close() {
    calls.close();
  }
}
