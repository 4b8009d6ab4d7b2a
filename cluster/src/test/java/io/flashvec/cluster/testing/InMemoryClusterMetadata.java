package io.flashvec.cluster.testing;

import io.flashvec.cluster.metadata.ClusterMetadata;
import io.flashvec.cluster.metadata.Leader;
import io.flashvec.cluster.metadata.Node;
import io.flashvec.cluster.metadata.NotPrimaryException;
import io.flashvec.cluster.metadata.Placement;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.payload.PayloadSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * {@link ClusterMetadata} held in memory and shared by every node of an in-process cluster, with
 * the fencing rules of the etcd store: a takeover needs no primary and a replica that is not stale;
 * a fenced stale mark or clear needs its primary to still lead. Every change takes the next
 * revision, as etcd's would, so epochs and mark revisions grow.
 *
 * <p>Placement is whatever the test gives {@link #placeNext}: the next collection created gets
 * those replicas. Nodes are registered by {@link #register}; {@link #expire} drops one as a lapsed
 * lease would.
 *
 * <p>Thread-safe (every method is synchronized).
 */
public final class InMemoryClusterMetadata implements ClusterMetadata {

  private final String self;
  private final Map<String, Placement> collections = new TreeMap<>();
  private final Map<String, Node> nodes = new TreeMap<>();
  private final Map<String, Leader> leaders = new ConcurrentHashMap<>();
  private final Map<String, Long> stale = new TreeMap<>();
  private final List<Consumer<Node>> registered = new CopyOnWriteArrayList<>();
  private final Map<String, String> aliases = new TreeMap<>();
  private long revision;
  private List<List<String>> nextPlacement;

  /** The view of node {@code self} (what {@link #nodeId()} answers). */
  public InMemoryClusterMetadata(String self) {
    this.self = self;
  }

  private static String shardKey(String collection, int shard) {
    return collection + "/" + shard;
  }

  private static String replicaKey(String collection, int shard, String node) {
    return collection + "/" + shard + "/" + node;
  }

  /** The replicas, per shard, of the next collection created. */
  public synchronized void placeNext(List<List<String>> replicas) {
    this.nextPlacement = List.copyOf(replicas);
  }

  /** Drops a node's registration, as when its lease expires; its primary roles end with it. */
  public synchronized void expire(String nodeId) {
    nodes.remove(nodeId);
    leaders.values().removeIf(l -> l.node().equals(nodeId));
  }

  /** Makes {@code nodeId} the primary of a shard, whoever led it; returns the new epoch. */
  public synchronized long forceLeader(String collection, int shard, String nodeId) {
    long epoch = ++revision;
    leaders.put(shardKey(collection, shard), new Leader(nodeId, epoch));
    return epoch;
  }

  // ---------------------------------------------------------------- collections

  @Override
  public synchronized List<CollectionMeta> list() {
    List<CollectionMeta> out = new ArrayList<>();
    collections.values().forEach(p -> out.add(p.meta()));
    return out;
  }

  @Override
  public synchronized Optional<CollectionMeta> get(String name) {
    return placed(name).map(Placement::meta);
  }

  @Override
  public synchronized boolean createIfAbsent(CollectionMeta meta) {
    if (collections.containsKey(meta.name())) {
      return false;
    }
    if (aliases.containsKey(meta.name())) {
      throw io.flashvec.cluster.Aliases.aliasExists(meta.name());
    }
    if (nextPlacement == null || nextPlacement.size() != meta.config().shardNumber()) {
      throw new IllegalStateException(
          "placeNext must give one replica list per shard [shards="
              + meta.config().shardNumber()
              + ", placement="
              + nextPlacement
              + "]");
    }
    collections.put(
        meta.name(), new Placement(meta, nextPlacement, PayloadSchema.EMPTY, ++revision));
    return true;
  }

  @Override
  public synchronized Map<String, String> aliases() {
    return Map.copyOf(aliases);
  }

  @Override
  public synchronized void updateAliases(
      java.util.function.UnaryOperator<Map<String, String>> change) {
    Map<String, String> next = change.apply(Map.copyOf(aliases));
    aliases.clear();
    aliases.putAll(next);
    revision++;
  }

  @Override
  public synchronized boolean updateTuning(String name, CollectionTuning tuning) {
    Placement p = collections.get(name);
    if (p == null) {
      return false;
    }
    CollectionMeta m = p.meta();
    collections.put(
        name,
        new Placement(
            new CollectionMeta(name, m.config(), m.createdAtMillis(), tuning),
            p.replicas(),
            p.payloadSchema(),
            ++revision));
    return true;
  }

  @Override
  public synchronized boolean remove(String name) {
    aliases.values().removeIf(name::equals);
    return collections.remove(name) != null;
  }

  @Override
  public boolean loaded() {
    return true;
  }

  @Override
  public synchronized Optional<Placement> placed(String name) {
    return Optional.ofNullable(collections.get(name));
  }

  @Override
  public synchronized long updatePayloadSchema(String name, PayloadSchema schema) {
    Placement p = collections.get(name);
    if (p == null) {
      return -1;
    }
    long r = ++revision;
    collections.put(name, new Placement(p.meta(), p.replicas(), schema, r));
    return r;
  }

  // ---------------------------------------------------------------- nodes

  @Override
  public synchronized Map<String, Node> nodes() {
    return Map.copyOf(nodes);
  }

  @Override
  public synchronized Optional<Node> node(String id) {
    return Optional.ofNullable(nodes.get(id));
  }

  @Override
  public synchronized boolean isLive(String nodeId) {
    return nodes.containsKey(nodeId);
  }

  @Override
  public String nodeId() {
    return self;
  }

  @Override
  public void register(Node node, Duration ttl) {
    synchronized (this) {
      nodes.put(node.id(), node);
    }
    registered.forEach(l -> l.accept(node));
  }

  @Override
  public void onNodeRegistered(Consumer<Node> listener) {
    registered.add(listener);
  }

  // ---------------------------------------------------------------- primaries

  @Override
  public Optional<Leader> leaderOf(String collection, int shard) {
    return Optional.ofNullable(leaders.get(shardKey(collection, shard)));
  }

  @Override
  public synchronized long tryLead(String collection, int shard, String nodeId) {
    if (leaders.containsKey(shardKey(collection, shard))
        || isStale(collection, shard, nodeId)
        || !nodes.containsKey(nodeId)) {
      return 0;
    }
    return forceLeader(collection, shard, nodeId);
  }

  @Override
  public synchronized void resign(String collection, int shard, long epoch) {
    Leader l = leaders.get(shardKey(collection, shard));
    if (l != null && l.epoch() == epoch) {
      leaders.remove(shardKey(collection, shard));
    }
  }

  // ---------------------------------------------------------------- stale replicas

  @Override
  public synchronized boolean isStale(String collection, int shard, String nodeId) {
    return stale.containsKey(replicaKey(collection, shard, nodeId));
  }

  @Override
  public synchronized long staleRevision(String collection, int shard, String nodeId) {
    return stale.getOrDefault(replicaKey(collection, shard, nodeId), 0L);
  }

  @Override
  public synchronized void noteStale(String collection, int shard, String nodeId, long rev) {
    stale.merge(replicaKey(collection, shard, nodeId), rev, Math::max);
  }

  private void checkLeads(String collection, int shard, String primary) {
    Leader l = leaders.get(shardKey(collection, shard));
    if (primary != null && (l == null || !l.node().equals(primary))) {
      throw new NotPrimaryException(
          "Service unavailable: not the shard's primary [node="
              + primary
              + ", primary="
              + (l == null ? "none" : l.node())
              + "]");
    }
  }

  @Override
  public synchronized long markStale(String collection, int shard, String nodeId, String primary) {
    checkLeads(collection, shard, primary);
    long r = ++revision;
    stale.put(replicaKey(collection, shard, nodeId), r);
    return r;
  }

  @Override
  public synchronized boolean markStaleIfSuperseded(String collection, int shard, String nodeId) {
    Leader l = leaders.get(shardKey(collection, shard));
    if (l == null || l.node().equals(nodeId)) {
      return false;
    }
    markStale(collection, shard, nodeId);
    return true;
  }

  @Override
  public synchronized void clearStale(String collection, int shard, String nodeId, String primary) {
    checkLeads(collection, shard, primary);
    stale.remove(replicaKey(collection, shard, nodeId));
  }

  @Override
  public void close() {}
}
