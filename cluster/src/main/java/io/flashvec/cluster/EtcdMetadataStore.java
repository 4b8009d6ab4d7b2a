package io.flashvec.cluster;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.flashvec.cluster.internal.StaleMarks;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.payload.PayloadSchema;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Cluster metadata in etcd (jetcd): collections with their config and shard placement, the node
 * registry (one key per node, attached to a lease the node keeps alive) and the replicas that fell
 * behind ("stale"). Every process keeps a cache of the whole prefix, loaded at {@link #start()} and
 * kept current by one prefix watch, so routing reads never wait for etcd and keep working from the
 * cached table while etcd is unreachable; changes go to etcd first (transactions where they must
 * not race) and reach every cache through the watch.
 *
 * <p>Key layout under {@code <prefix>} (default {@code /flashvec/}):
 *
 * <pre>
 * collections/&lt;name&gt;               {"name", "created_at", "config": {...}, "tuning": {...},
 *                                   "payload_schema": {...} (absent: no payload index),
 *                                   "placement": [["node-a","node-b"], ...]}  (one list per shard,
 *                                   the replicas' node ids in primary-preference order)
 * nodes/&lt;node-id&gt;                  {"id", "grpc": "127.0.0.1:7071", "http": "...", "roles": [...]}
 *                                   (leased: disappears when the node stops heart-beating)
 * stale/&lt;name&gt;/&lt;shard&gt;/&lt;node-id&gt;   a replica that missed writes; not read until resynced
 * leaders/&lt;name&gt;/&lt;shard&gt;       the shard's primary (node id), under the primary's lease; the
 *                                   revision that created the key is the primary's epoch
 * </pre>
 *
 * <p>Leadership and stale marks are changed only in transactions that check what they depend on
 * (ADR 0019): a takeover requires that no primary exists and that the taker is not marked stale; a
 * primary marks or clears a replica only while it holds the primary key.
 *
 * <p>Thread-safe. Owns the jetcd client, the watch and the lease keep-alive; {@link #close()}
 * releases them (and so deregisters this node at once).
 */
public final class EtcdMetadataStore implements MetadataStore {

  private static final Logger LOG = LoggerFactory.getLogger(EtcdMetadataStore.class);
  private static final ObjectMapper JSON = JsonMapper.builder().build();
  private static final long TIMEOUT_MS = 5_000;

  /** A registered node. */
  public record Node(String id, String grpcAddress, String httpAddress, List<String> roles) {
    public boolean hasRole(String role) {
      return roles.contains(role);
    }
  }

  /**
   * A collection with its shard placement ({@code replicas.get(shard)} lists node ids) and its
   * payload indexes, which every replica applies.
   *
   * @param revision etcd's modification revision of the collection's key (0 before it was read from
   *     etcd); orders changes that reach a node both directly and through the watch
   */
  public record Placed(
      CollectionMeta meta,
      List<List<String>> replicas,
      PayloadSchema payloadSchema,
      long revision) {
    public Placed {
      if (payloadSchema == null) {
        payloadSchema = PayloadSchema.EMPTY;
      }
    }

    public Placed(CollectionMeta meta, List<List<String>> replicas) {
      this(meta, replicas, PayloadSchema.EMPTY, 0);
    }

    Placed withRevision(long r) {
      return new Placed(meta, replicas, payloadSchema, r);
    }
  }

  private final Client client;
  private final String prefix;
  private final Map<String, Placed> collections = new ConcurrentHashMap<>();
  private final Map<String, Node> nodes = new ConcurrentHashMap<>();
  private final StaleMarks stale = new StaleMarks();

  private final List<java.util.function.Consumer<Node>> nodeListeners =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  /** "collection/shard" → the shard's primary and its epoch. */
  private final Map<String, Leader> leaders = new ConcurrentHashMap<>();

  /**
   * A shard's primary: {@code epoch} is the etcd revision that created its key, so a later primary
   * of the shard always has a higher one (the fencing token of its writes).
   */
  public record Leader(String node, long epoch) {}

  /**
   * A change refused because this node is no longer the shard's primary of that epoch: another
   * primary has been elected, or the key died with this node's lease.
   */
  public static final class NotPrimaryException extends UnavailableException {
    NotPrimaryException(String message) {
      super(message);
    }
  }

  private final ScheduledExecutorService scheduler;
  private volatile Watch.Watcher watcher;
  private volatile boolean loaded;
  private volatile boolean closed;
  private volatile Registration registration;

  public EtcdMetadataStore(List<String> endpoints, String prefix) {
    if (endpoints == null || endpoints.isEmpty()) {
      throw new IllegalArgumentException("etcd endpoints are empty");
    }
    this.prefix = prefix.endsWith("/") ? prefix : prefix + "/";
    this.client =
        Client.builder()
            .endpoints(endpoints.stream().map(EtcdMetadataStore::url).toArray(String[]::new))
            // Fail a call while etcd is unreachable instead of queueing it until the connection
            // is back (jetcd's default): a change that answered 503 after TIMEOUT_MS must not be
            // applied minutes later, when nobody waits for it and the shard copies it needs are
            // never made. jetcd still retries a failed call twice within about 3 s.
            .waitForReady(false)
            .build();
    ScheduledThreadPoolExecutor s =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().name("flashvec-etcd").daemon(true).factory());
    s.setRemoveOnCancelPolicy(true);
    this.scheduler = s;
  }

  private static String url(String endpoint) {
    return endpoint.contains("://") ? endpoint : "http://" + endpoint;
  }

  // ---------------------------------------------------------------- cache: load and watch

  /** Loads the whole prefix and starts the watch; retries until etcd answers. */
  public void start() {
    while (!closed) {
      try {
        reload();
        return;
      } catch (RuntimeException e) {
        LOG.warn("cannot load cluster metadata from etcd; retrying [prefix={}]: {}", prefix, e);
        sleep(500);
      }
    }
  }

  private synchronized void reload() {
    GetResponse r =
        await(client.getKVClient().get(key(""), GetOption.builder().isPrefix(true).build()));
    Map<String, Placed> c = new ConcurrentHashMap<>();
    Map<String, Node> n = new ConcurrentHashMap<>();
    StaleMarks s = new StaleMarks();
    Map<String, Long> marks = new java.util.HashMap<>();
    Map<String, Leader> l = new ConcurrentHashMap<>();
    for (KeyValue kv : r.getKvs()) {
      apply(kv, false, c, n, s, l);
      String k = kv.getKey().toString(StandardCharsets.UTF_8).substring(prefix.length());
      if (k.startsWith("stale/")) {
        marks.put(k.substring("stale/".length()), kv.getModRevision());
      }
    }
    collections.keySet().retainAll(c.keySet());
    collections.putAll(c);
    nodes.keySet().retainAll(n.keySet());
    nodes.putAll(n);
    // marks learnt after this snapshot (from a write reply, say) stay
    stale.replace("", marks, r.getHeader().getRevision());
    long rev = r.getHeader().getRevision();
    l.forEach((k, v) -> leaders.merge(k, v, (old, nw) -> old.epoch() > nw.epoch() ? old : nw));
    leaders.entrySet().removeIf(e -> !l.containsKey(e.getKey()) && e.getValue().epoch() <= rev);
    loaded = true;
    Watch.Watcher old = watcher;
    if (old != null) {
      old.close();
    }
    watcher =
        client
            .getWatchClient()
            .watch(
                key(""),
                WatchOption.builder()
                    .isPrefix(true)
                    .withRevision(r.getHeader().getRevision() + 1)
                    .build(),
                Watch.listener(this::onWatch, this::onWatchError));
    LOG.info(
        "cluster metadata loaded [prefix={}, collections={}, nodes={}, revision={}]",
        prefix,
        collections.size(),
        nodes.size(),
        r.getHeader().getRevision());
  }

  private void onWatch(WatchResponse resp) {
    for (WatchEvent e : resp.getEvents()) {
      apply(
          e.getKeyValue(),
          e.getEventType() == WatchEvent.EventType.DELETE,
          collections,
          nodes,
          stale,
          leaders);
    }
  }

  private void onWatchError(Throwable t) {
    if (closed) {
      return;
    }
    // The cache stays as it was (reads keep working); reload and re-watch once etcd answers.
    LOG.warn("etcd watch failed; reloading the metadata [prefix={}]: {}", prefix, t.toString());
    scheduler.schedule(this::start, 500, TimeUnit.MILLISECONDS);
  }

  private void apply(
      KeyValue kv,
      boolean deleted,
      Map<String, Placed> c,
      Map<String, Node> n,
      StaleMarks s,
      Map<String, Leader> l) {
    String k = kv.getKey().toString(StandardCharsets.UTF_8).substring(prefix.length());
    try {
      if (k.startsWith("collections/")) {
        String name = k.substring("collections/".length());
        if (deleted) {
          c.remove(name);
        } else {
          Placed next =
              decodeCollection(kv.getValue().getBytes()).withRevision(kv.getModRevision());
          // A write of this process may have put a newer revision already.
          c.merge(name, next, (old, nw) -> old.revision() > nw.revision() ? old : nw);
        }
      } else if (k.startsWith("nodes/")) {
        String id = k.substring("nodes/".length());
        if (deleted) {
          n.remove(id);
        } else {
          Node node = decodeNode(kv.getValue().getBytes());
          n.put(id, node);
          for (var listener : nodeListeners) {
            listener.accept(node);
          }
        }
      } else if (k.startsWith("leaders/")) {
        String rest = k.substring("leaders/".length());
        if (deleted) {
          // a takeover this process made after the deletion stays
          l.computeIfPresent(rest, (key, old) -> old.epoch() >= kv.getModRevision() ? old : null);
        } else {
          Leader next =
              new Leader(kv.getValue().toString(StandardCharsets.UTF_8), kv.getCreateRevision());
          // the winner of a takeover knows its epoch before the watch tells it
          l.merge(rest, next, (old, nw) -> old.epoch() > nw.epoch() ? old : nw);
        }
      } else if (k.startsWith("stale/")) {
        String rest = k.substring("stale/".length());
        if (deleted) {
          s.delete(rest, kv.getModRevision());
        } else {
          s.put(rest, kv.getModRevision());
        }
      }
    } catch (RuntimeException e) {
      LOG.error("ignoring unreadable metadata entry [key={}]", k, e);
    }
  }

  /** Whether the cache was loaded once. */
  public boolean loaded() {
    return loaded;
  }

  // ---------------------------------------------------------------- MetadataStore

  @Override
  public List<CollectionMeta> list() {
    List<CollectionMeta> out = new ArrayList<>();
    for (Placed p : collections.values()) {
      out.add(p.meta());
    }
    out.sort((a, b) -> a.name().compareTo(b.name()));
    return out;
  }

  @Override
  public Optional<CollectionMeta> get(String name) {
    return placed(name).map(Placed::meta);
  }

  /** A collection with its placement, from the cache. */
  public Optional<Placed> placed(String name) {
    return Optional.ofNullable(collections.get(name));
  }

  /**
   * Records a new collection and places its shards on the live query nodes: replica {@code r} of
   * shard {@code s} goes to node {@code (s + r) mod n} of the nodes sorted by id, so replicas of a
   * shard are on distinct nodes and primaries spread evenly.
   *
   * @throws InvalidInputException if fewer query nodes are live than {@code replication_factor}
   */
  @Override
  public boolean createIfAbsent(CollectionMeta meta) {
    List<String> live = new ArrayList<>();
    for (Node n : nodes.values()) {
      if (n.hasRole("query")) {
        live.add(n.id());
      }
    }
    live.sort(null);
    int rf = meta.config().replicationFactor();
    if (live.size() < rf) {
      throw new UnavailableException(
          "Service unavailable: not enough live query nodes for the replication factor"
              + " [collection="
              + meta.name()
              + ", replication_factor="
              + rf
              + ", live_query_nodes="
              + live.size()
              + "]");
    }
    List<List<String>> placement = new ArrayList<>();
    for (int s = 0; s < meta.config().shardNumber(); s++) {
      List<String> replicas = new ArrayList<>();
      for (int r = 0; r < rf; r++) {
        replicas.add(live.get((s + r) % live.size()));
      }
      placement.add(replicas);
    }
    return createIfAbsent(new Placed(meta, placement));
  }

  /** Records a collection with a given placement; false if the name exists. */
  public boolean createIfAbsent(Placed placed) {
    ByteSequence k = key("collections/" + placed.meta().name());
    boolean ok =
        await(
                client
                    .getKVClient()
                    .txn()
                    .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.version(0)))
                    .Then(Op.put(k, bytes(encodeCollection(placed)), PutOption.DEFAULT))
                    .commit())
            .isSucceeded();
    if (ok) {
      collections.put(placed.meta().name(), placed); // read-your-writes before the watch arrives
    }
    return ok;
  }

  @Override
  public boolean updateTuning(String name, CollectionTuning tuning) {
    Placed old = collections.get(name);
    if (old == null) {
      return false;
    }
    CollectionMeta m = old.meta();
    Placed next =
        new Placed(
            new CollectionMeta(m.name(), m.config(), m.createdAtMillis(), tuning),
            old.replicas(),
            old.payloadSchema(),
            old.revision());
    long rev =
        await(client.getKVClient().put(key("collections/" + name), bytes(encodeCollection(next))))
            .getHeader()
            .getRevision();
    collections.put(name, next.withRevision(rev));
    return true;
  }

  /**
   * Replaces a collection's payload indexes and returns the etcd revision of the change, or -1 if
   * the collection does not exist. Like {@link #updateTuning}, the last writer wins.
   */
  public long updatePayloadSchema(String name, PayloadSchema schema) {
    Placed old = collections.get(name);
    if (old == null) {
      return -1;
    }
    Placed next = new Placed(old.meta(), old.replicas(), schema, 0);
    long rev =
        await(client.getKVClient().put(key("collections/" + name), bytes(encodeCollection(next))))
            .getHeader()
            .getRevision();
    collections.merge(name, next.withRevision(rev), (o, n) -> o.revision() > n.revision() ? o : n);
    return rev;
  }

  @Override
  public boolean remove(String name) {
    long deleted = await(client.getKVClient().delete(key("collections/" + name))).getDeleted();
    await(
        client
            .getKVClient()
            .delete(key("stale/" + name + "/"), DeleteOption.builder().isPrefix(true).build()));
    await(
        client
            .getKVClient()
            .delete(key("leaders/" + name + "/"), DeleteOption.builder().isPrefix(true).build()));
    collections.remove(name);
    return deleted > 0;
  }

  // ---------------------------------------------------------------- nodes and stale replicas

  /** Registered nodes (their leases are alive), from the cache. */
  public Map<String, Node> nodes() {
    return Map.copyOf(nodes);
  }

  public Optional<Node> node(String id) {
    return Optional.ofNullable(nodes.get(id));
  }

  /** The id this process registered under ({@code "unregistered"} before {@link #register}). */
  public String nodeId() {
    Registration r = registration;
    return r == null ? "unregistered" : r.node.id();
  }

  public boolean isLive(String nodeId) {
    return nodes.containsKey(nodeId);
  }

  public boolean isStale(String collection, int shard, String nodeId) {
    return stale.contains(collection + "/" + shard + "/" + nodeId);
  }

  /**
   * Calls {@code listener} whenever a node (re-)registers, e.g. to reconnect to it at once instead
   * of after a connection back-off.
   */
  public void onNodeRegistered(java.util.function.Consumer<Node> listener) {
    nodeListeners.add(listener);
  }

  /** The node that is the primary of a shard, from the cache (empty while none is elected). */
  public Optional<String> leader(String collection, int shard) {
    return leaderOf(collection, shard).map(Leader::node);
  }

  /** The primary of a shard and its epoch, from the cache (empty while none is elected). */
  public Optional<Leader> leaderOf(String collection, int shard) {
    return Optional.ofNullable(leaders.get(collection + "/" + shard));
  }

  /**
   * The revision of the stale mark of a replica in this process's view, 0 when it is not marked.
   */
  public long staleRevision(String collection, int shard, String nodeId) {
    return stale.revision(collection + "/" + shard + "/" + nodeId);
  }

  /**
   * Records in this process's view a stale mark that etcd holds since {@code revision}, learnt from
   * a primary's write reply before the watch delivers it: a proxy must not read a replica that
   * lacks a write it has just acknowledged.
   */
  public void noteStale(String collection, int shard, String nodeId, long revision) {
    stale.put(collection + "/" + shard + "/" + nodeId, revision);
  }

  /**
   * Makes this node the primary of a shard unless another node is, or this node's replica is marked
   * stale in etcd (checked in the same transaction: a replica that missed acknowledged writes must
   * never lead, whatever this process's cache says). The key {@code leaders/<collection>/<shard>}
   * is created under this node's registration lease, so it vanishes when the node stops
   * heart-beating and another replica can take over. The transaction also reads the shard's stale
   * marks, which replace this process's view of them: from then on only this primary removes marks
   * of the shard, so its view never misses a replica that must get its writes.
   *
   * @return the epoch of this node's primary role (the revision that created the key), or 0 if
   *     another node is the primary or this replica is stale
   */
  public long tryLead(String collection, int shard, String nodeId) {
    Registration r = registration;
    long lease = r == null ? 0 : r.leaseId;
    if (lease == 0) {
      return 0;
    }
    ByteSequence k = key("leaders/" + collection + "/" + shard);
    ByteSequence self = key("stale/" + collection + "/" + shard + "/" + nodeId);
    String marksPrefix = "stale/" + collection + "/" + shard + "/";
    var resp =
        await(
            client
                .getKVClient()
                .txn()
                .If(
                    new Cmp(k, Cmp.Op.EQUAL, CmpTarget.version(0)),
                    new Cmp(self, Cmp.Op.EQUAL, CmpTarget.version(0)))
                .Then(
                    Op.put(k, bytes(nodeId), PutOption.builder().withLeaseId(lease).build()),
                    Op.get(key(marksPrefix), GetOption.builder().isPrefix(true).build()))
                .Else(Op.get(k, GetOption.DEFAULT), Op.get(self, GetOption.DEFAULT))
                .commit());
    String shardKey = collection + "/" + shard;
    if (resp.isSucceeded()) {
      long epoch = resp.getHeader().getRevision();
      Map<String, Long> marks = new java.util.HashMap<>();
      for (KeyValue kv : resp.getGetResponses().getFirst().getKvs()) {
        marks.put(
            kv.getKey().toString(StandardCharsets.UTF_8).substring((prefix + "stale/").length()),
            kv.getModRevision());
      }
      stale.replace(shardKey + "/", marks, epoch);
      leaders.merge(
          shardKey, new Leader(nodeId, epoch), (old, nw) -> old.epoch() > nw.epoch() ? old : nw);
      return epoch;
    }
    List<KeyValue> holder = resp.getGetResponses().get(0).getKvs();
    if (!holder.isEmpty()) {
      KeyValue kv = holder.getFirst();
      leaders.merge(
          shardKey,
          new Leader(kv.getValue().toString(StandardCharsets.UTF_8), kv.getCreateRevision()),
          (old, nw) -> old.epoch() > nw.epoch() ? old : nw);
    }
    List<KeyValue> mark = resp.getGetResponses().get(1).getKvs();
    if (!mark.isEmpty()) {
      stale.put(shardKey + "/" + nodeId, mark.getFirst().getModRevision());
    }
    return 0;
  }

  /**
   * Gives up the primary role of epoch {@code epoch} (a primary that finds its own replica stale);
   * no-op if the role has already passed on.
   */
  public void resign(String collection, int shard, long epoch) {
    ByteSequence k = key("leaders/" + collection + "/" + shard);
    await(
        client
            .getKVClient()
            .txn()
            .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(epoch)))
            .Then(Op.delete(k, DeleteOption.DEFAULT))
            .commit());
    leaders.computeIfPresent(
        collection + "/" + shard, (key, old) -> old.epoch() == epoch ? null : old);
  }

  /**
   * Marks a replica as behind: it is not read, nor made primary, until a resync. With {@code
   * primary} set the mark is fenced: etcd takes it only while {@code primary} holds the shard's
   * primary key, so a primary that has been replaced (cut off, paused) cannot mark its successor
   * stale; with {@code null} it is unconditional (a replica marking itself, a proxy whose shard
   * creation failed: marks that only add caution). The current primary, of whatever epoch, has
   * every acknowledged write, so a mark it puts is always safe.
   *
   * <p>When etcd cannot take the mark now, or the shard has no primary at the moment, this throws
   * (the write that needed it is not acknowledged) and keeps trying in the background every second
   * until etcd takes it, another node leads the shard, or this store closes: the primary has
   * applied that write, so the replica that missed it must not pass for current once etcd is back
   * (or once the primary has taken its role again after its lease ran out during the outage).
   *
   * @return the revision of the mark
   * @throws NotPrimaryException if another node leads the shard
   */
  public long markStale(String collection, int shard, String nodeId, String primary) {
    // not in the local set before etcd has it: a write retried meanwhile must not skip the
    // replica and be acknowledged by the primary alone while etcd does not know the replica is
    // behind (should the primary die, the replica would serve without that write)
    try {
      return putStale(collection, shard, nodeId, primary);
    } catch (NotPrimaryException e) {
      throw e;
    } catch (UnavailableException e) {
      retryStale(collection, shard, nodeId, primary);
      throw e;
    }
  }

  /** {@link #markStale(String, int, String, String)} without fencing. */
  public long markStale(String collection, int shard, String nodeId) {
    return markStale(collection, shard, nodeId, null);
  }

  private long putStale(String collection, int shard, String nodeId, String primary) {
    ByteSequence k = key("stale/" + collection + "/" + shard + "/" + nodeId);
    long rev;
    if (primary == null) {
      rev = await(client.getKVClient().put(k, bytes(""))).getHeader().getRevision();
    } else {
      ByteSequence leader = key("leaders/" + collection + "/" + shard);
      var resp =
          await(
              client
                  .getKVClient()
                  .txn()
                  .If(new Cmp(leader, Cmp.Op.EQUAL, CmpTarget.value(bytes(primary))))
                  .Then(Op.put(k, bytes(""), PutOption.DEFAULT))
                  .Else(Op.get(leader, GetOption.DEFAULT))
                  .commit());
      if (!resp.isSucceeded()) {
        throw notPrimary(collection, shard, primary, resp.getGetResponses().getFirst().getKvs());
      }
      rev = resp.getHeader().getRevision();
    }
    stale.put(collection + "/" + shard + "/" + nodeId, rev);
    return rev;
  }

  /**
   * The refusal of a fenced change: {@link NotPrimaryException} when another node holds the primary
   * key ({@code holder}), a plain {@link UnavailableException} (worth retrying) when none does.
   */
  private UnavailableException notPrimary(
      String collection, int shard, String primary, List<KeyValue> holder) {
    String shardKey = collection + "/" + shard;
    if (holder.isEmpty()) {
      leaders.remove(shardKey);
      return new UnavailableException(
          "Service unavailable: the shard has no primary at the moment [collection="
              + collection
              + ", shard="
              + shard
              + "]");
    }
    KeyValue kv = holder.getFirst();
    String node = kv.getValue().toString(StandardCharsets.UTF_8);
    leaders.merge(
        shardKey,
        new Leader(node, kv.getCreateRevision()),
        (old, nw) -> old.epoch() > nw.epoch() ? old : nw);
    return new NotPrimaryException(
        "Service unavailable: this node is no longer the shard's primary [collection="
            + collection
            + ", shard="
            + shard
            + ", node="
            + primary
            + ", primary="
            + node
            + "]");
  }

  private void retryStale(String collection, int shard, String nodeId, String primary) {
    try {
      scheduler.schedule(
          () -> {
            if (closed) {
              return;
            }
            try {
              putStale(collection, shard, nodeId, primary);
              LOG.info(
                  "replica marked stale after etcd came back [collection={}, shard={}, node={}]",
                  collection,
                  shard,
                  nodeId);
            } catch (NotPrimaryException gone) {
              LOG.info(
                  "not marking a replica stale: another node leads the shard [collection={},"
                      + " shard={}, node={}]: {}",
                  collection,
                  shard,
                  nodeId,
                  gone.getMessage());
            } catch (UnavailableException again) {
              retryStale(collection, shard, nodeId, primary);
            }
          },
          1,
          TimeUnit.SECONDS);
    } catch (java.util.concurrent.RejectedExecutionException stopped) {
      // closing
    }
  }

  /**
   * Marks {@code nodeId}'s replica stale if another node leads the shard (checked by etcd in the
   * same transaction): a replaced primary that applied a write its successor lacks must not pass
   * for current. Returns whether it did.
   */
  public boolean markStaleIfSuperseded(String collection, int shard, String nodeId) {
    ByteSequence k = key("stale/" + collection + "/" + shard + "/" + nodeId);
    ByteSequence leader = key("leaders/" + collection + "/" + shard);
    var resp =
        await(
            client
                .getKVClient()
                .txn()
                .If(
                    new Cmp(leader, Cmp.Op.GREATER, CmpTarget.version(0)),
                    new Cmp(leader, Cmp.Op.NOT_EQUAL, CmpTarget.value(bytes(nodeId))))
                .Then(Op.put(k, bytes(""), PutOption.DEFAULT))
                .commit());
    if (resp.isSucceeded()) {
      stale.put(collection + "/" + shard + "/" + nodeId, resp.getHeader().getRevision());
    }
    return resp.isSucceeded();
  }

  /**
   * Clears a replica's stale mark after {@code primary} copied its shard to it; fenced like {@link
   * #markStale(String, int, String, String)}.
   *
   * @throws UnavailableException if {@code primary} does not lead the shard (any more)
   */
  public void clearStale(String collection, int shard, String nodeId, String primary) {
    ByteSequence k = key("stale/" + collection + "/" + shard + "/" + nodeId);
    ByteSequence leader = key("leaders/" + collection + "/" + shard);
    var resp =
        await(
            client
                .getKVClient()
                .txn()
                .If(new Cmp(leader, Cmp.Op.EQUAL, CmpTarget.value(bytes(primary))))
                .Then(Op.delete(k, DeleteOption.DEFAULT))
                .Else(Op.get(leader, GetOption.DEFAULT))
                .commit());
    if (!resp.isSucceeded()) {
      throw notPrimary(collection, shard, primary, resp.getGetResponses().getFirst().getKvs());
    }
    stale.delete(collection + "/" + shard + "/" + nodeId, resp.getHeader().getRevision());
  }

  /**
   * Registers this node under a lease of {@code ttl} and keeps it alive; if the lease is lost (etcd
   * unreachable longer than the TTL) it registers again once etcd answers.
   */
  public void register(Node node, Duration ttl) {
    Registration r = new Registration(node, Math.max(1, ttl.toSeconds()));
    registration = r;
    r.start();
  }

  /** One node's lease and keep-alive. */
  private final class Registration {
    private final Node node;
    private final long ttlSeconds;
    private volatile CloseableClient keepAlive;
    private volatile long leaseId;

    Registration(Node node, long ttlSeconds) {
      this.node = node;
      this.ttlSeconds = ttlSeconds;
    }

    void start() {
      if (closed || registration != this) {
        return;
      }
      try {
        long id = await(client.getLeaseClient().grant(ttlSeconds)).getID();
        await(
            client
                .getKVClient()
                .put(
                    key("nodes/" + node.id()),
                    bytes(encodeNode(node)),
                    PutOption.builder().withLeaseId(id).build()));
        leaseId = id;
        keepAlive =
            client
                .getLeaseClient()
                .keepAlive(
                    id,
                    new io.grpc.stub.StreamObserver<LeaseKeepAliveResponse>() {
                      @Override
                      public void onNext(LeaseKeepAliveResponse value) {}

                      @Override
                      public void onError(Throwable t) {
                        retry("keep-alive failed: " + t, 1);
                      }

                      @Override
                      public void onCompleted() {
                        // etcd answered that the lease is gone (this process was paused past
                        // its TTL, say): register again at once, the proxies skip it meanwhile
                        retry("lease expired", 0);
                      }
                    });
        nodes.put(node.id(), node);
        LOG.info("node registered [node={}, lease={}, ttlSeconds={}]", node, id, ttlSeconds);
      } catch (RuntimeException e) {
        retry("cannot register: " + e, 1);
      }
    }

    /** Registers again after {@code delaySeconds}, on the store's scheduler. */
    private void retry(String why, long delaySeconds) {
      if (closed || registration != this) {
        return;
      }
      LOG.warn("node registration lost; registering again [node={}, reason={}]", node.id(), why);
      CloseableClient k = keepAlive;
      if (k != null) {
        k.close();
      }
      scheduler.schedule(this::start, delaySeconds, TimeUnit.SECONDS);
    }

    void close() {
      CloseableClient k = keepAlive;
      if (k != null) {
        k.close();
      }
      if (leaseId != 0) {
        try {
          client.getLeaseClient().revoke(leaseId).get(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
          LOG.debug("cannot revoke lease on shutdown [node={}]", node.id(), e);
        }
      }
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Registration r = registration;
    registration = null;
    if (r != null) {
      r.close();
    }
    Watch.Watcher w = watcher;
    if (w != null) {
      w.close();
    }
    scheduler.shutdownNow();
    client.close();
  }

  // ---------------------------------------------------------------- encoding

  private ByteSequence key(String k) {
    return ByteSequence.from(prefix + k, StandardCharsets.UTF_8);
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static <T> T await(java.util.concurrent.CompletableFuture<T> f) {
    try {
      return f.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnavailableException("Service unavailable: interrupted while calling etcd", e);
    } catch (ExecutionException | TimeoutException e) {
      f.cancel(true);
      Throwable c = e instanceof ExecutionException ? e.getCause() : e;
      throw new UnavailableException(
          "Service unavailable: the metadata store (etcd) is unreachable [cause=" + c + "]", c);
    }
  }

  static String encodeCollection(Placed p) {
    ObjectNode c = JSON.createObjectNode();
    CollectionMetaJson.write(p.meta(), c);
    if (!p.payloadSchema().isEmpty()) {
      c.set("payload_schema", p.payloadSchema().toJson());
    }
    ArrayNode pl = c.putArray("placement");
    for (List<String> replicas : p.replicas()) {
      ArrayNode a = pl.addArray();
      replicas.forEach(a::add);
    }
    return JSON.writeValueAsString(c);
  }

  static Placed decodeCollection(byte[] json) {
    JsonNode c = JSON.readTree(json);
    List<List<String>> placement = new ArrayList<>();
    for (JsonNode shard : c.path("placement")) {
      List<String> replicas = new ArrayList<>();
      for (JsonNode n : shard) {
        replicas.add(n.asString());
      }
      placement.add(List.copyOf(replicas));
    }
    return new Placed(
        CollectionMetaJson.read(c),
        List.copyOf(placement),
        c.has("payload_schema")
            ? PayloadSchema.fromJson(c.get("payload_schema"))
            : PayloadSchema.EMPTY,
        0);
  }

  static String encodeNode(Node n) {
    ObjectNode o = JSON.createObjectNode();
    o.put("id", n.id());
    o.put("grpc", n.grpcAddress());
    o.put("http", n.httpAddress());
    ArrayNode r = o.putArray("roles");
    n.roles().forEach(r::add);
    return JSON.writeValueAsString(o);
  }

  static Node decodeNode(byte[] json) {
    JsonNode o = JSON.readTree(json);
    List<String> roles = new ArrayList<>();
    for (JsonNode r : o.path("roles")) {
      roles.add(r.asString());
    }
    return new Node(
        o.path("id").asString(), o.path("grpc").asString(), o.path("http").asString(), roles);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
