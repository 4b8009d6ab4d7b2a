package io.flashvec.cluster.local;

import io.flashvec.cluster.Aliases;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.SnapshotDescription;
import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.FsyncPolicy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The standalone {@link CollectionService}: every collection's shards live in this process, in a
 * {@link DataDirectory} under {@code <data>/collections/<name>}.
 *
 * <p>Life cycle: construct (locks the data directory against a second server), then {@link
 * #recover()} (opens every collection and replays its WALs; {@link #ready()} turns true when it
 * returns), then serve, then {@link #close()}.
 */
public final class LocalCollectionService implements CollectionService, LocalData {

  private static final Logger LOG = LoggerFactory.getLogger(LocalCollectionService.class);

  /** The peer id of a standalone server in {@link #clusterInfo}. */
  static final String STANDALONE_NODE = "standalone";

  private final DataDirectory<Collection> dir;
  private final CollectionSnapshots snapshots;

  public LocalCollectionService(Path dataDir, Shard.Options shardOptions) {
    this.dir =
        new DataDirectory<>(
            dataDir,
            shardOptions.io(),
            shardOptions.space(),
            (m, d) -> {
              CollectionSnapshots.repairShardSwaps(d);
              return Collection.open(m.name(), d, m.config(), m.tuning(), shardOptions);
            });
    this.snapshots = new CollectionSnapshots(dir);
  }

  @Override
  public boolean ready() {
    return dir.ready();
  }

  private void checkReady() {
    dir.checkReady("Service is not ready: recovering the write-ahead logs");
  }

  /** The collection {@code name} (a collection's name or an alias of it) means, for a request. */
  private Collection collection(String name) {
    String target = dir.resolve(name);
    return dir.require(
        target,
        "collection `" + target + "`",
        () -> "Not found: Collection `" + target + "` doesn't exist!");
  }

  @Override
  public void createCollection(String name, CollectionConfig config, CollectionTuning tuning) {
    CollectionNames.validate(name);
    checkReady();
    dir.create(
        new CollectionMeta(name, config, System.currentTimeMillis(), tuning), config.shardNumber());
    LOG.info("collection created [name={}, config={}]", name, config);
  }

  /**
   * Cancels the running index builds and compactions of every collection and starts no new ones
   * (the server is shutting down, see {@link Shard#stopBackgroundWork}); reads and writes go on
   * until {@link #close}. Returns what was running, for the log.
   */
  @Override
  public List<String> stopBackgroundWork() {
    List<String> out = new ArrayList<>();
    dir.units()
        .forEach(
            (name, c) -> {
              for (String w : c.stopBackgroundWork()) {
                out.add("collection " + name + ", " + w);
              }
            });
    return out;
  }

  @Override
  public boolean deleteCollection(String name) {
    CollectionNames.validate(name);
    checkReady();
    boolean deleted = dir.delete(name);
    if (deleted) {
      LOG.info("collection deleted [name={}]", name);
    }
    return deleted;
  }

  @Override
  public List<String> listCollections() {
    checkReady();
    return dir.names();
  }

  @Override
  public void updateAliases(List<Aliases.Change> changes) {
    Aliases.validateNames(changes);
    checkReady();
    dir.updateAliases(changes);
    LOG.info("aliases changed [changes={}, aliases={}]", changes, dir.aliases());
  }

  @Override
  public Map<String, String> aliases() {
    checkReady();
    return new TreeMap<>(dir.aliases());
  }

  @Override
  public boolean exists(String name) {
    checkReady();
    return dir.exists(dir.resolve(name));
  }

  @Override
  public CollectionConfig config(String name) {
    return collection(name).config();
  }

  @Override
  public CollectionDescription describe(String name) {
    Collection c = collection(name);
    return new CollectionDescription(dir.resolve(name), c.config(), c.info());
  }

  @Override
  public ClusterInfo clusterInfo(String name) {
    Collection c = collection(name);
    List<LocalShard> local = new ArrayList<>();
    List<Shard> shards = c.shards();
    for (int i = 0; i < shards.size(); i++) {
      Shard s = shards.get(i);
      local.add(
          new LocalShard(i, s.count(), "Active", s.lastAppliedOperation(), s.pendingWrites()));
    }
    return new ClusterInfo(
        CollectionService.peerId(STANDALONE_NODE), shards.size(), local, List.of());
  }

  @Override
  public Collection.UpdateResult upsert(String collection, List<Point> points, boolean wait) {
    return collection(collection).upsert(points, wait);
  }

  @Override
  public Collection.UpdateResult upsert(
      String collection,
      List<Point> points,
      io.flashvec.index.collection.UpsertCondition condition,
      boolean wait) {
    return collection(collection).upsert(points, condition, wait);
  }

  @Override
  public Collection.UpdateResult delete(String collection, List<PointId> ids, boolean wait) {
    return collection(collection).delete(ids, wait);
  }

  @Override
  public Collection.UpdateResult updateVectors(
      String collection, List<Point> points, boolean wait) {
    return collection(collection).updateVectors(points, wait);
  }

  @Override
  public Collection.UpdateResult updateVectors(
      String collection,
      List<Point> points,
      io.flashvec.index.filter.Filter updateFilter,
      boolean wait) {
    return collection(collection).updateVectors(points, updateFilter, wait);
  }

  @Override
  public Collection.UpdateResult updatePayloads(
      String collection, List<PointId> ids, UnaryOperator<byte[]> update, boolean wait) {
    return collection(collection).updatePayloads(ids, update, wait);
  }

  @Override
  public List<Record> retrieve(
      String collection, List<PointId> ids, boolean withPayload, boolean withVector) {
    return collection(collection).retrieve(ids, withPayload, withVector);
  }

  @Override
  public Collection.UpdateResult deleteByFilter(String collection, Filter filter, boolean wait) {
    return collection(collection).delete(filter, wait);
  }

  @Override
  public Collection.UpdateResult updatePayloadsByFilter(
      String collection, Filter filter, UnaryOperator<byte[]> update, boolean wait) {
    return collection(collection).updatePayloads(filter, update, wait);
  }

  @Override
  public long count(String collection, Filter filter) {
    return collection(collection).count(filter);
  }

  @Override
  public ScrollPage scroll(String collection, ScrollRequest request) {
    return collection(collection).scroll(request);
  }

  @Override
  public List<Record> search(String collection, SearchRequest request, SearchStats stats) {
    return collection(collection).search(request, stats);
  }

  @Override
  public Collection.UpdateResult deleteVectors(
      String collection, List<PointId> ids, java.util.Set<String> names, boolean wait) {
    return collection(collection).deleteVectors(ids, names, wait);
  }

  @Override
  public List<Record> sparseSearch(
      String collection, io.flashvec.index.query.SparseSearchRequest request) {
    return collection(collection).sparseSearch(request);
  }

  @Override
  public List<Record> denseSearch(
      String collection, io.flashvec.index.query.DenseSearchRequest request) {
    return collection(collection).denseSearch(request);
  }

  @Override
  public List<Record> textSearch(String collection, TextSearchRequest request) {
    return collection(collection).textSearch(request);
  }

  @Override
  public List<Ordered> scrollOrdered(String collection, OrderedScrollRequest request) {
    return collection(collection).scrollOrdered(request);
  }

  @Override
  public boolean searchesServedFromMemory(String collection) {
    Collection c = dir.ready() ? dir.get(dir.resolve(collection)) : null;
    return c != null && c.searchesServedFromMemory();
  }

  @Override
  public Collection.UpdateResult createPayloadIndex(
      String collection, PayloadFieldSchema field, boolean wait) {
    Collection.UpdateResult r;
    try {
      r = collection(collection).createPayloadIndex(field, wait);
    } catch (RuntimeException e) {
      throw dir.storageFull(e, "payload index creation");
    }
    LOG.info(
        "payload index created [collection={}, field={}, type={}]",
        collection,
        field.field(),
        field.type().apiName());
    return r;
  }

  @Override
  public Collection.UpdateResult deletePayloadIndex(String collection, String field, boolean wait) {
    Collection.UpdateResult r = collection(collection).deletePayloadIndex(field, wait);
    LOG.info("payload index dropped [collection={}, field={}]", collection, field);
    return r;
  }

  @Override
  public void flush(String collection) {
    collection(collection).flush();
  }

  @Override
  public int evictFromPageCache(String collection) {
    return collection(collection).evictFromPageCache();
  }

  @Override
  public CollectionTuning updateCollection(
      String collection,
      Integer indexingThreshold,
      FsyncPolicy fsyncPolicy,
      Boolean onDiskPayload) {
    Collection c = collection(collection);
    String name = dir.resolve(collection);
    CollectionTuning next =
        dir.retune(name, t -> t.merge(indexingThreshold, fsyncPolicy, onDiskPayload), c::retune);
    LOG.info("collection settings changed [name={}, tuning={}]", name, next);
    return next;
  }

  @Override
  public CollectionTuning updateCollection(
      String collection, java.util.function.UnaryOperator<CollectionTuning> change) {
    Collection c = collection(collection);
    String name = dir.resolve(collection);
    return dir.retune(name, change, c::retune);
  }

  @Override
  public CollectionConfig changeVectors(
      String collection, java.util.function.UnaryOperator<CollectionConfig> change) {
    Collection c = collection(collection);
    String name = dir.resolve(collection);
    CollectionConfig next =
        dir.reconfigure(
            name,
            now -> {
              CollectionConfig n = change.apply(now);
              if (!n.index().equals(now.index())) {
                // before the new graph settings are persisted: the segments say what built them
                c.recordGraphBuilds();
              }
              return n;
            },
            c::reconfigure);
    LOG.info(
        "collection vectors changed [name={}, dense={}, sparse={}, primary={}]",
        name,
        next.denseVectors().keySet().stream().map(CollectionConfig::shownName).toList(),
        next.sparseVectors().keySet(),
        next.primaryRetired() ? "(deleted)" : next.vectorName());
    return next;
  }

  @Override
  public long payloadBytes(String collection) {
    return collection(collection).payloadBytes();
  }

  @Override
  public Settings settings(String collection) {
    Collection c = collection(collection);
    return new Settings(c.config(), c.tuning(), c.payloadSchema());
  }

  @Override
  public io.flashvec.index.Optimizations optimizations(String collection, int completedLimit) {
    return collection(collection).optimizations(completedLimit);
  }

  @Override
  public void compact(String collection, boolean force) {
    collection(collection).compact(force);
  }

  @Override
  public List<String> names() {
    return List.copyOf(dir.units().keySet());
  }

  @Override
  public Stats stats(String name) {
    Collection c = dir.get(name);
    return c == null ? null : Stats.of(c.info(), c.walBytes());
  }

  @Override
  public DataDirectory<Collection> directory() {
    return dir;
  }

  @Override
  public SnapshotDescription createSnapshot(String collection) {
    CollectionNames.validate(collection);
    checkReady();
    SnapshotDescription d = snapshots.create(collection, collection(collection));
    LOG.info("snapshot created [collection={}, name={}, bytes={}]", collection, d.name(), d.size());
    return d;
  }

  @Override
  public List<SnapshotDescription> listSnapshots(String collection) {
    collection(collection);
    return snapshots.list(collection);
  }

  @Override
  public java.nio.file.Path snapshotFile(String collection, String name) {
    return snapshots.file(collection, name);
  }

  @Override
  public void deleteSnapshot(String collection, String name) {
    snapshots.delete(collection, name);
    LOG.info("snapshot deleted [collection={}, name={}]", collection, name);
  }

  @Override
  public void recoverSnapshot(
      String collection, java.nio.file.Path file, String checksum, boolean named) {
    CollectionNames.validate(collection);
    checkReady();
    snapshots.recover(collection, named ? snapshots.named(file) : file, checksum);
    LOG.info("collection recovered from a snapshot [name={}]", collection);
  }

  @Override
  public SnapshotDescription createShardSnapshot(String collection, int shard) {
    CollectionNames.validate(collection);
    checkReady();
    String target = dir.resolve(collection);
    SnapshotDescription d = snapshots.createShard(target, collection(target), shard);
    LOG.info(
        "shard snapshot created [collection={}, shard={}, name={}, bytes={}]",
        target,
        shard,
        d.name(),
        d.size());
    return d;
  }

  @Override
  public List<SnapshotDescription> listShardSnapshots(String collection, int shard) {
    String target = dir.resolve(collection);
    CollectionSnapshots.requireShard(collection(target), shard);
    return snapshots.listShard(target, shard);
  }

  @Override
  public java.nio.file.Path shardSnapshotFile(String collection, int shard, String name) {
    String target = dir.resolve(collection);
    CollectionSnapshots.requireShard(collection(target), shard);
    return snapshots.shardFile(target, shard, name);
  }

  @Override
  public void deleteShardSnapshot(String collection, int shard, String name) {
    String target = dir.resolve(collection);
    CollectionSnapshots.requireShard(collection(target), shard);
    snapshots.deleteShard(target, shard, name);
    LOG.info("shard snapshot deleted [collection={}, shard={}, name={}]", target, shard, name);
  }

  @Override
  public void recoverShardSnapshot(
      String collection, int shard, java.nio.file.Path file, String checksum, boolean named) {
    CollectionNames.validate(collection);
    checkReady();
    String target = dir.resolve(collection);
    CollectionSnapshots.requireShard(collection(target), shard);
    snapshots.recoverShard(target, shard, named ? snapshots.named(file) : file, checksum);
    LOG.info("shard recovered from a snapshot [collection={}, shard={}]", target, shard);
  }

  @Override
  public tools.jackson.databind.JsonNode partialShardManifest(String collection, int shard) {
    String target = dir.resolve(collection);
    return snapshots.partialManifest(collection(target), shard);
  }

  @Override
  public void createPartialShardSnapshot(
      String collection,
      int shard,
      tools.jackson.databind.JsonNode manifest,
      java.nio.file.Path file) {
    CollectionNames.validate(collection);
    checkReady();
    String target = dir.resolve(collection);
    snapshots.createPartialShard(target, collection(target), shard, manifest, file);
    LOG.info("partial shard snapshot created [collection={}, shard={}]", target, shard);
  }

  @Override
  public void recoverPartialShardSnapshot(
      String collection, int shard, java.nio.file.Path file, String checksum) {
    CollectionNames.validate(collection);
    checkReady();
    String target = dir.resolve(collection);
    CollectionSnapshots.requireShard(collection(target), shard);
    snapshots.recoverPartialShard(target, shard, file, checksum);
    LOG.info("shard recovered from a partial snapshot [collection={}, shard={}]", target, shard);
  }

  @Override
  public SnapshotDescription createFullSnapshot() {
    checkReady();
    SnapshotDescription d = snapshots.createFull(dir.units());
    LOG.info("full snapshot created [name={}, bytes={}]", d.name(), d.size());
    return d;
  }

  @Override
  public List<SnapshotDescription> listFullSnapshots() {
    return snapshots.listFull();
  }

  @Override
  public java.nio.file.Path fullSnapshotFile(String name) {
    return snapshots.fullFile(name);
  }

  @Override
  public void deleteFullSnapshot(String name) {
    snapshots.deleteFull(name);
  }
}
