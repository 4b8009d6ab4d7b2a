package io.flashvec.cluster.metadata;

import io.flashvec.index.payload.PayloadSchema;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The cluster's metadata as every role sees it: collections with their placement and payload
 * indexes, the registered nodes, each shard's primary and the replicas marked stale — read from a
 * cache that keeps working while the store is unreachable — and the changes a role makes to them.
 * Changes that must not race are fenced (ADR 0019): a takeover requires that no primary exists and
 * that the taker is not stale; a primary marks or clears replicas only while it holds the shard's
 * primary key. {@link EtcdMetadataStore} keeps it in etcd.
 *
 * <p>Implementations are thread-safe.
 */
public interface ClusterMetadata extends MetadataStore {

  /** Whether the cache was loaded once (before, nothing can be routed). */
  boolean loaded();

  /** A collection with its placement, from the cache. */
  Optional<Placement> placed(String name);

  /**
   * Replaces a collection's payload indexes and returns the revision of the change, or -1 if the
   * collection does not exist. The last writer wins.
   */
  long updatePayloadSchema(String name, PayloadSchema schema);

  // ---------------------------------------------------------------- aliases

  /** Every collection alias, alias to collection name, from the cache. */
  Map<String, String> aliases();

  /**
   * Replaces the aliases by {@code change} applied to the current ones, in one change that fails if
   * another alias change, or the creation or deletion of a collection the changed aliases name,
   * came first (then {@code change} is applied again to what the store holds, a few times). {@code
   * change} throws to refuse; deleting a collection deletes its aliases with it ({@link #remove}),
   * and creating one fails while an alias has its name.
   */
  void updateAliases(UnaryOperator<Map<String, String>> change);

  // ---------------------------------------------------------------- nodes

  /** Registered nodes (their leases are alive), by id. */
  Map<String, Node> nodes();

  Optional<Node> node(String id);

  boolean isLive(String nodeId);

  /** The id this process registered under ({@code "unregistered"} before {@link #register}). */
  String nodeId();

  /**
   * Registers this node under a lease of {@code ttl} and keeps it alive, registering again after
   * the lease was lost.
   */
  void register(Node self, Duration ttl);

  /** Calls {@code listener} whenever a node (re-)registers. */
  void onNodeRegistered(Consumer<Node> listener);

  // ---------------------------------------------------------------- primaries

  /** The primary of a shard and its epoch, from the cache (empty while none is elected). */
  Optional<Leader> leaderOf(String collection, int shard);

  /** The node that is the primary of a shard (empty while none is elected). */
  default Optional<String> leader(String collection, int shard) {
    return leaderOf(collection, shard).map(Leader::node);
  }

  /**
   * Makes {@code nodeId} the primary of a shard unless another node is, or its replica is marked
   * stale; the role lives as long as this node's registration lease. The replicas' stale marks are
   * read in the same step and replace this process's view of them.
   *
   * @return the epoch of the role, or 0 if another node leads or this replica is stale
   */
  long tryLead(String collection, int shard, String nodeId);

  /** Gives up the primary role of epoch {@code epoch}; no-op if it has passed on already. */
  void resign(String collection, int shard, long epoch);

  // ---------------------------------------------------------------- stale replicas

  boolean isStale(String collection, int shard, String nodeId);

  /** The revision of a replica's stale mark in this process's view, 0 when it is not marked. */
  long staleRevision(String collection, int shard, String nodeId);

  /**
   * Records in this process's view a mark the store holds since {@code revision}, learnt from a
   * primary's write reply before the cache hears of it.
   */
  void noteStale(String collection, int shard, String nodeId, long revision);

  /**
   * Marks a replica as behind: it is not read, nor made primary, until a resync. With {@code
   * primary} set the mark is fenced (taken only while {@code primary} leads the shard); with {@code
   * null} it is unconditional. If the store cannot take it now, this throws and keeps trying in the
   * background.
   *
   * @return the revision of the mark
   * @throws NotPrimaryException if another node leads the shard
   */
  long markStale(String collection, int shard, String nodeId, String primary);

  /** {@link #markStale(String, int, String, String)} without fencing. */
  default long markStale(String collection, int shard, String nodeId) {
    return markStale(collection, shard, nodeId, null);
  }

  /** Marks {@code nodeId}'s replica stale if another node leads the shard; returns whether. */
  boolean markStaleIfSuperseded(String collection, int shard, String nodeId);

  /**
   * Clears a replica's stale mark after {@code primary} copied its shard to it; fenced like {@link
   * #markStale(String, int, String, String)}.
   */
  void clearStale(String collection, int shard, String nodeId, String primary);
}
