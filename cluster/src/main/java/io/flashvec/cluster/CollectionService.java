package io.flashvec.cluster;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Everything the REST layer can ask of the database. Standalone implements it in-process ({@link
 * io.flashvec.cluster.local.LocalCollectionService}); a cluster proxy implements it with gRPC calls
 * to query nodes ({@link io.flashvec.cluster.proxy.ClusterProxy}). Errors are {@link
 * io.flashvec.index.FlashVecException}s carrying their HTTP status.
 *
 * <p>Every method that takes the name of an existing collection accepts an alias of it as well
 * ({@link Aliases}); {@link #createCollection} and {@link #deleteCollection} take collection names
 * only, as in Qdrant.
 */
public interface CollectionService {

  /** A collection's configuration and current statistics. */
  record CollectionDescription(String name, CollectionConfig config, Collection.Info info) {}

  /**
   * Where a collection's shards are, in the shape of Qdrant's {@code GET
   * /collections/{name}/cluster}: the shards this process holds with their live points, and the
   * replicas other nodes hold, each with its state ({@code Active}; {@code Dead}: its node is not
   * registered; {@code Partial}: a replica that missed writes and is being resynced).
   */
  record ClusterInfo(
      long peerId, int shardCount, List<LocalShard> localShards, List<RemoteShard> remoteShards) {}

  /**
   * A shard held by this process.
   *
   * @param lastOperation the WAL sequence number of its newest applied write (0: none yet)
   * @param pendingWrites writes it received and has not applied yet
   */
  record LocalShard(
      int shardId, long pointsCount, String state, long lastOperation, int pendingWrites) {}

  /** A shard replica held by another node ({@link #peerId(String)} of its id). */
  record RemoteShard(int shardId, long peerId, String state) {}

  /**
   * A node id as a Qdrant peer id (an unsigned 64-bit number there): FNV-1a of the id, cut to 63
   * bits so that every client reads it as a non-negative number. Stable across restarts.
   */
  static long peerId(String nodeId) {
    long h = 0xcbf29ce484222325L;
    for (byte b : nodeId.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xff)) * 0x100000001b3L;
    }
    return h & Long.MAX_VALUE;
  }

  /**
   * A node of the cluster as {@code GET /cluster} lists it: {@code uri} is its REST API's
   * host:port.
   */
  record Peer(long peerId, String nodeId, String uri, List<String> roles) {}

  /** This process's {@link #peerId} and the nodes registered in the cluster. */
  record Peers(long self, List<Peer> peers) {}

  /** The cluster's nodes; {@code null} for a standalone server, which has no cluster. */
  default Peers peers() {
    return null;
  }

  /** Whether recovery finished and requests can be served. */
  boolean ready();

  /**
   * Creates a collection with the default changeable settings; {@link
   * io.flashvec.index.ConflictException} if it exists.
   */
  default void createCollection(String name, CollectionConfig config) {
    createCollection(name, config, CollectionTuning.DEFAULT);
  }

  /** Deletes a collection and its data; returns false if it did not exist. */
  boolean deleteCollection(String name);

  List<String> listCollections();

  /**
   * Applies alias actions ({@code POST /collections/aliases}) all together in one durable change,
   * or none of them ({@link Aliases#apply} says which errors stop them).
   */
  void updateAliases(List<Aliases.Change> changes);

  /** Every alias, alias to collection name, sorted by alias. */
  Map<String, String> aliases();

  boolean exists(String name);

  CollectionDescription describe(String name);

  /** The configuration of collection {@code name} (or alias), without its statistics. */
  default CollectionConfig config(String name) {
    return describe(name).config();
  }

  /** {@link ClusterInfo} of a collection; {@link io.flashvec.index.NotFoundException} if none. */
  ClusterInfo clusterInfo(String name);

  Collection.UpdateResult upsert(String collection, List<Point> points, boolean wait);

  /**
   * {@link #upsert(String, List, boolean)} of the points {@code condition} lets through (Qdrant's
   * {@code update_mode} and {@code update_filter}). Where the service cannot test points against
   * their stored versions atomically it refuses a condition rather than ignoring it.
   */
  default Collection.UpdateResult upsert(
      String collection,
      List<Point> points,
      io.flashvec.index.collection.UpsertCondition condition,
      boolean wait) {
    if (!condition.always()) {
      throw new io.flashvec.index.InvalidInputException(
          "Wrong input: update_mode and update_filter are not supported in cluster mode yet, only"
              + " in standalone mode [update_mode="
              + condition.mode().wire()
              + ", update_filter="
              + (condition.updateFilter() == null ? "none" : "given")
              + "]");
    }
    return upsert(collection, points, wait);
  }

  Collection.UpdateResult delete(String collection, List<PointId> ids, boolean wait);

  /**
   * Qdrant's update_vectors: new vectors for existing points, their current payloads kept (the
   * given points' payloads are not used); {@link io.flashvec.index.NotFoundException} naming an id
   * that does not exist, and nothing changes.
   */
  Collection.UpdateResult updateVectors(String collection, List<Point> points, boolean wait);

  /**
   * {@link #updateVectors(String, List, boolean)} of the points whose stored version matches {@code
   * updateFilter} (Qdrant's {@code update_filter}); refused where the service cannot test them
   * atomically.
   */
  default Collection.UpdateResult updateVectors(
      String collection,
      List<Point> points,
      io.flashvec.index.filter.Filter updateFilter,
      boolean wait) {
    if (updateFilter != null) {
      throw new io.flashvec.index.InvalidInputException(
          "Wrong input: update_filter is not supported in cluster mode yet, only in standalone"
              + " mode [update_filter]");
    }
    return updateVectors(collection, points, wait);
  }

  /**
   * Removes the vectors {@code names} ({@code ""}: the default dense one) from existing points and
   * keeps the rest. Only collections with sparse vectors can hold a point without a dense vector,
   * and those are standalone only for now.
   */
  default Collection.UpdateResult deleteVectors(
      String collection, List<PointId> ids, java.util.Set<String> names, boolean wait) {
    throw new io.flashvec.index.InvalidInputException(
        "Wrong input: deleting vectors is not supported in cluster mode yet; collections with"
            + " sparse vectors are standalone only");
  }

  /** Exact search of a sparse vector field; best first. */
  default List<Record> sparseSearch(
      String collection, io.flashvec.index.query.SparseSearchRequest request) {
    throw new io.flashvec.index.InvalidInputException(
        "Wrong input: Not existing vector name error: " + request.field());
  }

  /** Exact search of a dense vector field other than the primary one; best first. */
  default List<Record> denseSearch(
      String collection, io.flashvec.index.query.DenseSearchRequest request) {
    throw new io.flashvec.index.InvalidInputException(
        "Wrong input: Not existing vector name error: " + request.field());
  }

  /**
   * Deletes the points that match {@code filter}; logged as deletes of the ids that matched when
   * each shard ran it.
   */
  Collection.UpdateResult deleteByFilter(String collection, Filter filter, boolean wait);

  /** {@link #updatePayloads} for the points that match {@code filter}. */
  Collection.UpdateResult updatePayloadsByFilter(
      String collection, Filter filter, UnaryOperator<byte[]> update, boolean wait);

  /** Live points that match {@code filter} ({@code null}: all of them). */
  long count(String collection, Filter filter);

  /** Live points. */
  default long count(String collection) {
    return count(collection, null);
  }

  /** A page of the points that match the request's filter, in id order from its offset on. */
  ScrollPage scroll(String collection, ScrollRequest request);

  /**
   * Rewrites the payloads of existing points with {@code update} (current payload JSON bytes or
   * {@code null} in, new payload out) and keeps their vectors.
   */
  Collection.UpdateResult updatePayloads(
      String collection, List<PointId> ids, UnaryOperator<byte[]> update, boolean wait);

  List<Record> retrieve(
      String collection, List<PointId> ids, boolean withPayload, boolean withVector);

  /** Nearest neighbours, adding what the search cost to {@code stats}. */
  List<Record> search(String collection, SearchRequest request, SearchStats stats);

  /**
   * Whether a search of {@code collection} would be served from this process's memory without
   * blocking: no device reads of late, no remote calls. A hint for picking the thread a search runs
   * on; {@code false} when in doubt (a missing collection, a cluster proxy).
   */
  default boolean searchesServedFromMemory(String collection) {
    return false;
  }

  /** Nearest neighbours without statistics. */
  default List<Record> search(String collection, SearchRequest request) {
    return search(collection, request, new SearchStats());
  }

  /** Seals the growing segments of a collection. */
  void flush(String collection);

  /** Evicts a collection's index files from memory (cold-cache benchmarks); returns the count. */
  int evictFromPageCache(String collection);

  /** Creates a collection with changeable settings (bulk load: fsync override, deferred builds). */
  default void createCollection(
      String name, CollectionConfig config, io.flashvec.index.CollectionTuning tuning) {
    if (tuning != null && !tuning.equals(io.flashvec.index.CollectionTuning.DEFAULT)) {
      throw new UnsupportedOperationException("collection tuning is not supported here");
    }
    createCollection(name, config);
  }

  /**
   * Changes a collection's changeable settings ({@code null} parts stay); persisted before they
   * apply. Returns the settings now in force.
   */
  default io.flashvec.index.CollectionTuning updateCollection(
      String collection, Integer indexingThreshold, io.flashvec.storage.FsyncPolicy fsyncPolicy) {
    return updateCollection(collection, indexingThreshold, fsyncPolicy, null);
  }

  /**
   * As {@link #updateCollection(String, Integer, io.flashvec.storage.FsyncPolicy)}, with Qdrant's
   * {@code on_disk_payload} ({@code null}: unchanged), which applies to the segments the shards
   * open from then on.
   */
  io.flashvec.index.CollectionTuning updateCollection(
      String collection,
      Integer indexingThreshold,
      io.flashvec.storage.FsyncPolicy fsyncPolicy,
      Boolean onDiskPayload);

  /**
   * Adds or deletes a vector field of a collection with {@code change}, which sees the config in
   * force ({@link CollectionConfig#withDenseVector}, {@link CollectionConfig#withoutDenseVector}):
   * changes do not interleave, each is persisted atomically before it applies, and the config now
   * in force is returned. Cluster mode refuses it, as it refuses named vectors.
   */
  default CollectionConfig changeVectors(
      String collection, UnaryOperator<CollectionConfig> change) {
    throw changeVectorsRefused(collection);
  }

  /** Cluster mode's 400 for {@link #changeVectors}. */
  static io.flashvec.index.InvalidInputException changeVectorsRefused(String collection) {
    return new io.flashvec.index.InvalidInputException(
        "Wrong input: named vectors are not supported in cluster mode yet, only in standalone"
            + " mode: vectors cannot be added to or deleted from a collection [collection="
            + collection
            + "]");
  }

  /**
   * Changes a collection's settings with {@code change}, which sees the settings in force: changes
   * do not interleave, and each is persisted before it applies. Returns the settings now in force.
   * The strict mode configuration and the metadata are kept this way ({@link
   * CollectionTuning#strictMode()}, {@link CollectionTuning#metadata()}).
   */
  default CollectionTuning updateCollection(
      String collection, UnaryOperator<CollectionTuning> change) {
    throw new io.flashvec.index.InvalidInputException(
        "Wrong input: strict mode and collection metadata are not supported here");
  }

  /**
   * What a request's checks need of a collection, without its statistics: its configuration, its
   * changeable settings and its payload indexes.
   */
  record Settings(
      CollectionConfig config,
      CollectionTuning tuning,
      io.flashvec.index.payload.PayloadSchema payloadSchema) {}

  /**
   * Bytes of the payloads a collection stores, deleted points' included until a compaction drops
   * them; {@code -1} where it is not known (a cluster proxy, for now).
   */
  default long payloadBytes(String collection) {
    return -1;
  }

  /** {@link Settings} of a collection; {@link io.flashvec.index.NotFoundException} if none. */
  default Settings settings(String collection) {
    CollectionDescription d = describe(collection);
    return new Settings(d.config(), d.info().tuning(), d.info().payloadSchema());
  }

  /** Creates or replaces a payload index ({@code PUT /collections/{c}/index}). */
  Collection.UpdateResult createPayloadIndex(
      String collection, io.flashvec.index.payload.PayloadFieldSchema field, boolean wait);

  /** Drops a payload index ({@code DELETE /collections/{c}/index/{field}}). */
  Collection.UpdateResult deletePayloadIndex(String collection, String field, boolean wait);

  /** BM25 search of a text in a text-indexed payload key; best first. */
  List<Record> textSearch(String collection, TextSearchRequest request);

  /** Scroll ordered by an integer, float or datetime payload index. */
  List<Ordered> scrollOrdered(String collection, OrderedScrollRequest request);

  /** Starts a background compaction of a collection's segments and returns at once. */
  void compact(String collection, boolean force);

  /**
   * What a collection's shards optimize now, have queued and finished, and which segments need
   * nothing ({@code GET /collections/{c}/optimizations}), with at most {@code completedLimit}
   * completed optimizations; {@link io.flashvec.index.NotFoundException} if there is no such
   * collection. A cluster proxy refuses it: the query nodes do not report their optimizations yet.
   */
  default io.flashvec.index.Optimizations optimizations(String collection, int completedLimit) {
    config(collection); // 404 for an unknown collection, as every route of a collection
    throw new io.flashvec.index.InvalidInputException(
        "Wrong input: optimizations are reported by a standalone server only, not in cluster mode"
            + " yet [collection="
            + collection
            + "]");
  }

  /** Takes a snapshot of a collection ({@code POST /collections/{c}/snapshots}). */
  default SnapshotDescription createSnapshot(String collection) {
    throw snapshotsUnsupported();
  }

  /** A collection's snapshots, oldest first. */
  default java.util.List<SnapshotDescription> listSnapshots(String collection) {
    throw snapshotsUnsupported();
  }

  /** The file of a snapshot, to download. */
  default java.nio.file.Path snapshotFile(String collection, String name) {
    throw snapshotsUnsupported();
  }

  /** Deletes a snapshot. */
  default void deleteSnapshot(String collection, String name) {
    throw snapshotsUnsupported();
  }

  /**
   * Replaces (or creates) a collection with a snapshot file, checked against {@code checksum}
   * (SHA-256 in hex) unless it is {@code null}.
   *
   * @param named whether a client named the file by path: it must then be inside the snapshots
   *     directory (403 otherwise)
   */
  default void recoverSnapshot(
      String collection, java.nio.file.Path file, String checksum, boolean named) {
    throw snapshotsUnsupported();
  }

  /** Takes a full snapshot: one collection snapshot per collection ({@code POST /snapshots}). */
  default SnapshotDescription createFullSnapshot() {
    throw snapshotsUnsupported();
  }

  /** The full snapshots, oldest first. */
  default java.util.List<SnapshotDescription> listFullSnapshots() {
    throw snapshotsUnsupported();
  }

  /** The file of a full snapshot, to download. */
  default java.nio.file.Path fullSnapshotFile(String name) {
    throw snapshotsUnsupported();
  }

  /** Deletes a full snapshot. */
  default void deleteFullSnapshot(String name) {
    throw snapshotsUnsupported();
  }

  /**
   * Takes a snapshot of one shard of a collection ({@code POST
   * /collections/{c}/shards/{shard}/snapshots}).
   */
  default SnapshotDescription createShardSnapshot(String collection, int shard) {
    throw snapshotsUnsupported();
  }

  /** A shard's snapshots, oldest first. */
  default java.util.List<SnapshotDescription> listShardSnapshots(String collection, int shard) {
    throw snapshotsUnsupported();
  }

  /** The file of a shard snapshot, to download. */
  default java.nio.file.Path shardSnapshotFile(String collection, int shard, String name) {
    throw snapshotsUnsupported();
  }

  /** Deletes a shard snapshot. */
  default void deleteShardSnapshot(String collection, int shard, String name) {
    throw snapshotsUnsupported();
  }

  /**
   * Replaces one shard of an existing collection with a shard snapshot file, checked against {@code
   * checksum} (SHA-256 in hex) unless it is {@code null}.
   *
   * @param named whether a client named the file by path: it must then be inside the snapshots
   *     directory (403 otherwise)
   */
  default void recoverShardSnapshot(
      String collection, int shard, java.nio.file.Path file, String checksum, boolean named) {
    throw snapshotsUnsupported();
  }

  /**
   * The manifest of a shard for partial snapshots: its sealed segments and a version of each of
   * their files, in Qdrant's shape (segment id to {@code segment_id}, {@code segment_version},
   * {@code file_versions}).
   */
  default tools.jackson.databind.JsonNode partialShardManifest(String collection, int shard) {
    throw snapshotsUnsupported();
  }

  /**
   * Writes into {@code target} a partial snapshot of a shard: a shard snapshot without the segment
   * files {@code manifest} (as {@link #partialShardManifest} gives it, of the shard it is to be
   * recovered onto) names at their current version.
   */
  default void createPartialShardSnapshot(
      String collection,
      int shard,
      tools.jackson.databind.JsonNode manifest,
      java.nio.file.Path target) {
    throw snapshotsUnsupported();
  }

  /**
   * Replaces one shard of an existing collection with a partial snapshot of it, the files it leaves
   * out taken from the shard itself, checked against {@code checksum} unless it is {@code null}.
   */
  default void recoverPartialShardSnapshot(
      String collection, int shard, java.nio.file.Path file, String checksum) {
    throw snapshotsUnsupported();
  }

  private static io.flashvec.index.InvalidInputException snapshotsUnsupported() {
    return new io.flashvec.index.InvalidInputException(
        "Wrong input: snapshots are supported by a standalone server only; in a cluster, back up"
            + " each node's data directory");
  }
}
