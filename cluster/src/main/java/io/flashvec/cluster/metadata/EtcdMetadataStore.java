package io.flashvec.cluster.metadata;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.payload.PayloadSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ClusterMetadata} in etcd (jetcd): collections with their config and shard placement, the
 * node registry (one key per node, attached to a lease the node keeps alive, {@link
 * NodeRegistration}), each shard's primary and the replicas that fell behind ("stale"). Every
 * process keeps a cache of the whole prefix, loaded at {@link #start()} and kept current by one
 * prefix watch, so routing reads never wait for etcd and keep working from the cached table while
 * etcd is unreachable; changes go to etcd first (transactions where they must not race, {@link
 * ShardFencing}) and reach every cache through the watch.
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
 * aliases                           {"alias": "collection", ...}: every collection alias, one key so
 *                                   that a change of several is one compare-and-swap; collection
 *                                   creates and deletes compare its revision too
 * </pre>
 *
 * <p>Thread-safe. Owns the jetcd client, the watch and the lease keep-alive; {@link #close()}
 * releases them (and so deregisters this node at once).
 */
public final class EtcdMetadataStore implements ClusterMetadata {

  private static final Logger LOG = LoggerFactory.getLogger(EtcdMetadataStore.class);

  private final Etcd etcd;
  private final Map<String, Placement> collections = new ConcurrentHashMap<>();

  /**
   * The aliases key's value, its mod revision (0: no key, as etcd compares a missing key) and the
   * store revision it was read at, which orders what the watch and the replies teach the cache.
   */
  private record AliasTable(Map<String, String> aliases, long revision, long seenAt) {}

  private static final String ALIASES = "aliases";

  /** How often a change that lost a race with another is applied again before a 503. */
  private static final int CAS_ATTEMPTS = 8;

  private volatile AliasTable aliasTable = new AliasTable(Map.of(), 0, 0);
  private final Map<String, Node> nodes = new ConcurrentHashMap<>();
  private final StaleMarks stale = new StaleMarks();
  private final Leaders leaders = new Leaders();
  private final List<Consumer<Node>> nodeListeners = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService scheduler;
  private final ShardFencing fencing;
  private volatile Watch.Watcher watcher;
  private volatile boolean loaded;
  private volatile boolean closed;
  private volatile NodeRegistration registration;

  public EtcdMetadataStore(List<String> endpoints, String prefix) {
    this.etcd = new Etcd(endpoints, prefix);
    ScheduledThreadPoolExecutor s =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().name("flashvec-etcd").daemon(true).factory());
    s.setRemoveOnCancelPolicy(true);
    this.scheduler = s;
    this.fencing =
        new ShardFencing(
            etcd,
            stale,
            leaders,
            scheduler,
            () -> {
              NodeRegistration r = registration;
              return r == null ? 0 : r.leaseId();
            },
            () -> closed);
  }

  // ---------------------------------------------------------------- cache: load and watch

  /** Loads the whole prefix and starts the watch; retries until etcd answers. */
  public void start() {
    while (!closed) {
      try {
        reload();
        return;
      } catch (RuntimeException e) {
        LOG.warn(
            "cannot load cluster metadata from etcd; retrying [prefix={}]: {}", etcd.prefix, e);
        try {
          Thread.sleep(500);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  private synchronized void reload() {
    GetResponse r =
        Etcd.await(
            etcd.client
                .getKVClient()
                .get(etcd.key(""), GetOption.builder().isPrefix(true).build()));
    long rev = r.getHeader().getRevision();
    Map<String, Placement> c = new HashMap<>();
    Map<String, Node> n = new HashMap<>();
    Map<String, Long> marks = new HashMap<>();
    Map<String, Leader> l = new HashMap<>();
    AliasTable aliasesNow = null;
    for (KeyValue kv : r.getKvs()) {
      String k = etcd.keyOf(kv);
      if (k.startsWith("stale/")) {
        marks.put(k.substring("stale/".length()), kv.getModRevision());
      } else if (k.equals(ALIASES)) {
        aliasesNow = readAliases(kv);
      } else {
        apply(kv, false, c, n, l);
      }
    }
    collections.keySet().retainAll(c.keySet());
    collections.putAll(c);
    learnAliases(aliasesNow == null ? new AliasTable(Map.of(), 0, rev) : aliasesNow);
    nodes.keySet().retainAll(n.keySet());
    nodes.putAll(n);
    // marks and takeovers learnt after this snapshot (from a write reply, say) stay
    stale.replace("", marks, rev);
    leaders.replace(l, rev);
    loaded = true;
    Watch.Watcher old = watcher;
    if (old != null) {
      old.close();
    }
    watcher =
        etcd.client
            .getWatchClient()
            .watch(
                etcd.key(""),
                WatchOption.builder().isPrefix(true).withRevision(rev + 1).build(),
                Watch.listener(this::onWatch, this::onWatchError));
    LOG.info(
        "cluster metadata loaded [prefix={}, collections={}, nodes={}, revision={}]",
        etcd.prefix,
        collections.size(),
        nodes.size(),
        rev);
  }

  private void onWatch(WatchResponse resp) {
    for (WatchEvent e : resp.getEvents()) {
      KeyValue kv = e.getKeyValue();
      boolean deleted = e.getEventType() == WatchEvent.EventType.DELETE;
      String k = etcd.keyOf(kv);
      if (k.startsWith("stale/")) {
        String rest = k.substring("stale/".length());
        if (deleted) {
          stale.delete(rest, kv.getModRevision());
        } else {
          stale.put(rest, kv.getModRevision());
        }
      } else if (k.equals(ALIASES)) {
        learnAliases(deleted ? new AliasTable(Map.of(), 0, kv.getModRevision()) : readAliases(kv));
      } else if (k.startsWith("leaders/") && deleted) {
        // a takeover this process made after the deletion stays
        leaders.deleted(k.substring("leaders/".length()), kv.getModRevision());
      } else if (k.startsWith("leaders/")) {
        String rest = k.substring("leaders/".length());
        // the winner of a takeover knows its epoch before the watch tells it
        leaders.learn(rest, new Leader(Etcd.text(kv.getValue()), kv.getCreateRevision()));
      } else {
        apply(kv, deleted, collections, nodes, null);
      }
    }
  }

  private void onWatchError(Throwable t) {
    if (closed) {
      return;
    }
    // The cache stays as it was (reads keep working); reload and re-watch once etcd answers.
    LOG.warn(
        "etcd watch failed; reloading the metadata [prefix={}]: {}", etcd.prefix, t.toString());
    scheduler.schedule(this::start, 500, TimeUnit.MILLISECONDS);
  }

  /** Applies a collection, node or (with {@code l}: a snapshot's) primary key. */
  private void apply(
      KeyValue kv,
      boolean deleted,
      Map<String, Placement> c,
      Map<String, Node> n,
      Map<String, Leader> l) {
    String k = etcd.keyOf(kv);
    try {
      if (k.startsWith("collections/")) {
        String name = k.substring("collections/".length());
        if (deleted) {
          c.remove(name);
        } else {
          Placement next =
              EtcdJson.decodeCollection(kv.getValue().getBytes()).withRevision(kv.getModRevision());
          // A write of this process may have put a newer revision already.
          c.merge(name, next, Placement::later);
        }
      } else if (k.startsWith("nodes/")) {
        String id = k.substring("nodes/".length());
        if (deleted) {
          n.remove(id);
        } else {
          Node node = EtcdJson.decodeNode(kv.getValue().getBytes());
          n.put(id, node);
          nodeListeners.forEach(listener -> listener.accept(node));
        }
      } else if (k.startsWith("leaders/") && l != null) {
        l.put(
            k.substring("leaders/".length()),
            new Leader(Etcd.text(kv.getValue()), kv.getCreateRevision()));
      }
    } catch (RuntimeException e) {
      LOG.error("ignoring unreadable metadata entry [key={}]", k, e);
    }
  }

  @Override
  public boolean loaded() {
    return loaded;
  }

  // ---------------------------------------------------------------- collections

  @Override
  public List<CollectionMeta> list() {
    List<CollectionMeta> out = new ArrayList<>();
    for (Placement p : collections.values()) {
      out.add(p.meta());
    }
    out.sort((a, b) -> a.name().compareTo(b.name()));
    return out;
  }

  @Override
  public Optional<CollectionMeta> get(String name) {
    return placed(name).map(Placement::meta);
  }

  @Override
  public Optional<Placement> placed(String name) {
    return Optional.ofNullable(collections.get(name));
  }

  /**
   * Records a new collection and places its shards on the live query nodes: replica {@code r} of
   * shard {@code s} goes to node {@code (s + r) mod n} of the nodes sorted by id, so replicas of a
   * shard are on distinct nodes and primaries spread evenly.
   *
   * @throws UnavailableException if fewer query nodes are live than {@code replication_factor}
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
    return createIfAbsent(new Placement(meta, placement));
  }

  /**
   * Records a collection with a given placement; false if the name exists, a 400 if an alias has
   * it.
   */
  public boolean createIfAbsent(Placement placed) {
    ByteSequence k = etcd.key("collections/" + placed.name());
    ByteSequence a = etcd.key(ALIASES);
    for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      AliasTable table = aliasTable;
      if (table.aliases().containsKey(placed.name())) {
        throw io.flashvec.cluster.Aliases.aliasExists(placed.name());
      }
      TxnResponse r =
          Etcd.await(
              etcd.txn()
                  .If(
                      new Cmp(k, Cmp.Op.EQUAL, CmpTarget.version(0)),
                      new Cmp(a, Cmp.Op.EQUAL, CmpTarget.modRevision(table.revision())))
                  .Then(Op.put(k, Etcd.bytes(EtcdJson.encodeCollection(placed)), PutOption.DEFAULT))
                  .Else(Op.get(k, GetOption.DEFAULT), Op.get(a, GetOption.DEFAULT))
                  .commit());
      if (r.isSucceeded()) {
        collections.put(placed.name(), placed); // read-your-writes before the watch arrives
        return true;
      }
      if (!r.getGetResponses().get(0).getKvs().isEmpty()) {
        return false;
      }
      learnAliases(aliasTableOf(r.getGetResponses().get(1), r.getHeader().getRevision()));
    }
    throw raced("collection creation");
  }

  // ---------------------------------------------------------------- aliases

  @Override
  public Map<String, String> aliases() {
    return aliasTable.aliases();
  }

  @Override
  public void updateAliases(UnaryOperator<Map<String, String>> change) {
    ByteSequence a = etcd.key(ALIASES);
    for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      AliasTable table = aliasTable;
      Map<String, String> next = Map.copyOf(change.apply(table.aliases()));
      List<Cmp> fence = new ArrayList<>();
      fence.add(new Cmp(a, Cmp.Op.EQUAL, CmpTarget.modRevision(table.revision())));
      next.forEach(
          (alias, target) -> {
            if (!target.equals(table.aliases().get(alias))) {
              // the collection is still there, and no collection took the alias's name
              fence.add(
                  new Cmp(etcd.key("collections/" + target), Cmp.Op.GREATER, CmpTarget.version(0)));
              fence.add(
                  new Cmp(etcd.key("collections/" + alias), Cmp.Op.EQUAL, CmpTarget.version(0)));
            }
          });
      TxnResponse r =
          Etcd.await(
              etcd.txn()
                  .If(fence.toArray(new Cmp[0]))
                  .Then(Op.put(a, Etcd.bytes(EtcdJson.encodeAliases(next)), PutOption.DEFAULT))
                  .Else(Op.get(a, GetOption.DEFAULT))
                  .commit());
      if (r.isSucceeded()) {
        long rev = r.getHeader().getRevision();
        learnAliases(new AliasTable(next, rev, rev));
        return;
      }
      AliasTable now = aliasTableOf(r.getGetResponses().get(0), r.getHeader().getRevision());
      if (now.revision() == table.revision()) {
        // the aliases are as they were: a collection they name was created or deleted meanwhile
        throw new io.flashvec.index.ConflictException(
            "Wrong input: a collection the aliases name was created or deleted meanwhile; retry");
      }
      learnAliases(now);
    }
    throw raced("alias update");
  }

  private static UnavailableException raced(String what) {
    return new UnavailableException(
        "Service unavailable: "
            + what
            + " kept losing races with concurrent alias changes; retry [attempts="
            + CAS_ATTEMPTS
            + "]");
  }

  private static AliasTable readAliases(KeyValue kv) {
    return new AliasTable(
        EtcdJson.decodeAliases(kv.getValue().getBytes()), kv.getModRevision(), kv.getModRevision());
  }

  /** The table a get of the aliases key read at store revision {@code revision}. */
  private static AliasTable aliasTableOf(GetResponse g, long revision) {
    if (g.getKvs().isEmpty()) {
      return new AliasTable(Map.of(), 0, revision);
    }
    KeyValue kv = g.getKvs().getFirst();
    return new AliasTable(
        EtcdJson.decodeAliases(kv.getValue().getBytes()), kv.getModRevision(), revision);
  }

  /** Keeps {@code next} unless the cache already holds a later table. */
  private synchronized void learnAliases(AliasTable next) {
    if (next.seenAt() >= aliasTable.seenAt()) {
      aliasTable = next;
    }
  }

  @Override
  public boolean updateTuning(String name, CollectionTuning tuning) {
    Placement old = collections.get(name);
    if (old == null) {
      return false;
    }
    CollectionMeta m = old.meta();
    put(
        new Placement(
            new CollectionMeta(m.name(), m.config(), m.createdAtMillis(), tuning),
            old.replicas(),
            old.payloadSchema(),
            old.revision()));
    return true;
  }

  @Override
  public long updatePayloadSchema(String name, PayloadSchema schema) {
    Placement old = collections.get(name);
    if (old == null) {
      return -1;
    }
    return put(new Placement(old.meta(), old.replicas(), schema, 0));
  }

  /** Replaces a collection's key (the last writer wins); returns the revision of the change. */
  private long put(Placement next) {
    long rev =
        Etcd.await(
                etcd.client
                    .getKVClient()
                    .put(
                        etcd.key("collections/" + next.name()),
                        Etcd.bytes(EtcdJson.encodeCollection(next))))
            .getHeader()
            .getRevision();
    collections.merge(next.name(), next.withRevision(rev), Placement::later);
    return rev;
  }

  /** Deletes a collection's key and, in the same transaction, its aliases. */
  @Override
  public boolean remove(String name) {
    ByteSequence k = etcd.key("collections/" + name);
    ByteSequence a = etcd.key(ALIASES);
    long deleted = -1;
    for (int attempt = 0; attempt < CAS_ATTEMPTS && deleted < 0; attempt++) {
      AliasTable table = aliasTable;
      Map<String, String> next = new java.util.TreeMap<>(table.aliases());
      next.values().removeIf(name::equals);
      List<Op> ops = new ArrayList<>();
      ops.add(Op.delete(k, DeleteOption.DEFAULT));
      if (next.size() != table.aliases().size()) {
        ops.add(Op.put(a, Etcd.bytes(EtcdJson.encodeAliases(next)), PutOption.DEFAULT));
      }
      TxnResponse r =
          Etcd.await(
              etcd.txn()
                  .If(new Cmp(a, Cmp.Op.EQUAL, CmpTarget.modRevision(table.revision())))
                  .Then(ops.toArray(new Op[0]))
                  .Else(Op.get(a, GetOption.DEFAULT))
                  .commit());
      if (r.isSucceeded()) {
        deleted = r.getDeleteResponses().getFirst().getDeleted();
        if (ops.size() > 1) {
          long rev = r.getHeader().getRevision();
          learnAliases(new AliasTable(Map.copyOf(next), rev, rev));
        }
      } else {
        learnAliases(aliasTableOf(r.getGetResponses().getFirst(), r.getHeader().getRevision()));
      }
    }
    if (deleted < 0) {
      throw raced("collection deletion");
    }
    for (String under : List.of("stale/", "leaders/")) {
      Etcd.await(
          etcd.client
              .getKVClient()
              .delete(etcd.key(under + name + "/"), DeleteOption.builder().isPrefix(true).build()));
    }
    collections.remove(name);
    return deleted > 0;
  }

  // ---------------------------------------------------------------- nodes

  @Override
  public Map<String, Node> nodes() {
    return Map.copyOf(nodes);
  }

  @Override
  public Optional<Node> node(String id) {
    return Optional.ofNullable(nodes.get(id));
  }

  @Override
  public String nodeId() {
    NodeRegistration r = registration;
    return r == null ? "unregistered" : r.node.id();
  }

  @Override
  public boolean isLive(String nodeId) {
    return nodes.containsKey(nodeId);
  }

  /**
   * Calls {@code listener} whenever a node (re-)registers, e.g. to reconnect to it at once instead
   * of after a connection back-off.
   */
  @Override
  public void onNodeRegistered(Consumer<Node> listener) {
    nodeListeners.add(listener);
  }

  @Override
  public synchronized void register(Node node, Duration ttl) {
    NodeRegistration[] self = new NodeRegistration[1];
    self[0] =
        new NodeRegistration(
            node,
            Math.max(1, ttl.toSeconds()),
            etcd,
            () -> !closed && registration == self[0],
            n -> nodes.put(n.id(), n));
    NodeRegistration previous = registration;
    registration = self[0];
    if (previous != null) {
      previous.close(); // its loop stops and its lease goes: one registration per process
    }
    self[0].start();
  }

  // ---------------------------------------------------------------- primaries and stale marks

  @Override
  public Optional<Leader> leaderOf(String collection, int shard) {
    return Optional.ofNullable(leaders.get(collection + "/" + shard));
  }

  @Override
  public long tryLead(String collection, int shard, String nodeId) {
    return fencing.tryLead(collection, shard, nodeId);
  }

  @Override
  public void resign(String collection, int shard, long epoch) {
    fencing.resign(collection, shard, epoch);
  }

  @Override
  public boolean isStale(String collection, int shard, String nodeId) {
    return stale.contains(collection + "/" + shard + "/" + nodeId);
  }

  @Override
  public long staleRevision(String collection, int shard, String nodeId) {
    return stale.revision(collection + "/" + shard + "/" + nodeId);
  }

  @Override
  public void noteStale(String collection, int shard, String nodeId, long revision) {
    stale.put(collection + "/" + shard + "/" + nodeId, revision);
  }

  @Override
  public long markStale(String collection, int shard, String nodeId, String primary) {
    return fencing.markStale(collection, shard, nodeId, primary);
  }

  @Override
  public boolean markStaleIfSuperseded(String collection, int shard, String nodeId) {
    return fencing.markStaleIfSuperseded(collection, shard, nodeId);
  }

  @Override
  public void clearStale(String collection, int shard, String nodeId, String primary) {
    fencing.clearStale(collection, shard, nodeId, primary);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    NodeRegistration r = registration;
    registration = null;
    if (r != null) {
      r.close();
    }
    Watch.Watcher w = watcher;
    if (w != null) {
      w.close();
    }
    scheduler.shutdownNow();
    etcd.close();
  }
}
