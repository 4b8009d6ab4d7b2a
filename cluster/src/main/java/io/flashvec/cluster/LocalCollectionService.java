package io.flashvec.cluster;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.ConflictException;
import io.flashvec.index.InsufficientStorageException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.DiskFullException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.FsyncPolicy;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The standalone {@link CollectionService}: every collection's shards live in this process under
 * {@code <data>/collections/<name>}, metadata in a {@link LocalMetadataStore}.
 *
 * <p>Life cycle: construct (locks the data directory against a second server), then {@link
 * #recover()} (opens every collection and replays its WALs; {@link #ready()} turns true when it
 * returns), then serve, then {@link #close()}. Creation writes the metadata before opening the
 * shards, deletion removes the metadata before deleting files, and recovery deletes collection
 * directories without metadata, so a crash at any point leaves no half-created collection.
 */
public final class LocalCollectionService implements CollectionService, Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(LocalCollectionService.class);

  private final Path dataDir;
  private final Path collectionsDir;
  private final Shard.Options shardOptions;
  private final FileIO io;
  private final MetadataStore metadata;
  private final Map<String, Collection> collections = new ConcurrentHashMap<>();

  /** Collections whose files could not be opened at recovery, with the reason. */
  private final Map<String, String> failed = new ConcurrentHashMap<>();

  private final Object ddlLock = new Object();
  private final FileChannel lockChannel;
  private final FileLock lock;

  /**
   * Data directories locked by services of this JVM. The OS lock cannot refuse a second service in
   * the same process: {@code tryLock} throws {@link java.nio.channels.OverlappingFileLockException}
   * there, and closing the second channel would release the first service's POSIX lock, letting
   * another process in. So this process checks here before it opens the lock file.
   */
  private static final Set<Path> LOCKED_IN_THIS_JVM = ConcurrentHashMap.newKeySet();

  private final Path lockKey;
  private volatile boolean ready;
  private volatile boolean closed;

  public LocalCollectionService(Path dataDir, Shard.Options shardOptions) {
    this.dataDir = dataDir.toAbsolutePath();
    this.collectionsDir = this.dataDir.resolve("collections");
    this.shardOptions = shardOptions;
    this.io = shardOptions.io();
    FileChannel ch = null;
    Path key = null;
    try {
      io.createDirectories(collectionsDir);
      Path real = this.dataDir.toRealPath();
      if (!LOCKED_IN_THIS_JVM.add(real)) {
        throw new IllegalStateException(
            "data directory is used by another FlashVec process [dataDir=" + this.dataDir + "]");
      }
      key = real;
      ch =
          FileChannel.open(
              this.dataDir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock l = ch.tryLock();
      if (l == null) {
        throw new IllegalStateException(
            "data directory is used by another FlashVec process [dataDir=" + this.dataDir + "]");
      }
      this.lockChannel = ch;
      this.lock = l;
      this.lockKey = key;
      this.metadata = new LocalMetadataStore(this.dataDir, io);
    } catch (IOException e) {
      closeQuietly(ch);
      unregister(key);
      throw new UncheckedIOException(
          "cannot open data directory [dataDir=" + this.dataDir + "]", e);
    } catch (RuntimeException e) {
      closeQuietly(ch);
      unregister(key);
      throw e;
    }
  }

  /** Opens every collection and replays the WALs; then {@link #ready()} is true. */
  public void recover() {
    long t0 = System.nanoTime();
    List<MetadataStore.CollectionMeta> metas = metadata.list();
    for (MetadataStore.CollectionMeta m : metas) {
      try {
        collections.put(
            m.name(),
            Collection.open(
                m.name(), collectionsDir.resolve(m.name()), m.config(), m.tuning(), shardOptions));
      } catch (RuntimeException e) {
        // One damaged collection must not take the others down: it answers 503 with the reason
        // (never silently wrong results) and can still be deleted.
        failed.put(m.name(), e.getMessage() == null ? e.toString() : e.getMessage());
        LOG.error(
            "collection failed to open; it answers 503 until repaired or deleted [name={}]",
            m.name(),
            e);
      }
    }
    removeOrphans();
    ready = true;
    long points = 0;
    for (Collection c : collections.values()) {
      points += c.count();
    }
    LOG.info(
        "recovery finished [dataDir={}, collections={}, points={}, millis={}]",
        dataDir,
        collections.size(),
        points,
        (System.nanoTime() - t0) / 1_000_000);
  }

  private void removeOrphans() {
    try (var stream = Files.list(collectionsDir)) {
      for (Path p : stream.toList()) {
        String name = p.getFileName().toString();
        if (!collections.containsKey(name) && !failed.containsKey(name)) {
          LOG.warn(
              "removing collection directory without metadata (interrupted create or delete) [dir={}]",
              p);
          deleteRecursively(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list collections [dir=" + collectionsDir + "]", e);
    }
  }

  @Override
  public boolean ready() {
    return ready && !closed;
  }

  /**
   * Collections whose files could not be opened at recovery (a corrupt or missing file), by name,
   * with the reason; they answer 503 until they are deleted. Empty before recovery.
   */
  public Map<String, String> failedCollections() {
    return new java.util.TreeMap<>(failed);
  }

  private void checkReady() {
    if (!ready) {
      throw new UnavailableException("Service is not ready: recovering the write-ahead logs");
    }
    if (closed) {
      throw new UnavailableException("Service is shutting down");
    }
  }

  private Collection collection(String name) {
    checkReady();
    Collection c = collections.get(name);
    if (c == null) {
      String why = failed.get(name);
      if (why != null) {
        throw new UnavailableException(
            "Service unavailable: collection `" + name + "` failed to open [reason=" + why + "]");
      }
      throw new NotFoundException("Not found: Collection `" + name + "` doesn't exist!");
    }
    return c;
  }

  @Override
  public void createCollection(String name, CollectionConfig config) {
    createCollection(name, config, CollectionTuning.DEFAULT);
  }

  @Override
  public void createCollection(String name, CollectionConfig config, CollectionTuning tuning) {
    CollectionNames.validate(name);
    if (tuning == null) {
      tuning = CollectionTuning.DEFAULT;
    }
    checkReady();
    synchronized (ddlLock) {
      if (collections.containsKey(name) || failed.containsKey(name)) {
        throw new ConflictException("Wrong input: Collection `" + name + "` already exists!");
      }
      requireSpace(COLLECTION_BYTES * config.shardNumber(), "collection creation");
      Path dir = collectionsDir.resolve(name);
      try {
        if (!metadata.createIfAbsent(
            new MetadataStore.CollectionMeta(name, config, System.currentTimeMillis(), tuning))) {
          throw new ConflictException("Wrong input: Collection `" + name + "` already exists!");
        }
      } catch (RuntimeException e) {
        throw storageFull(e, "collection creation");
      }
      io.crashPoint(CrashPoint.COLLECTION_CREATE_METADATA_WRITTEN);
      try {
        collections.put(name, Collection.open(name, dir, config, tuning, shardOptions));
      } catch (RuntimeException e) {
        metadata.remove(name);
        deleteQuietly(dir); // a shard that could not start (a full disk) leaves no files
        throw storageFull(e, "collection creation");
      }
      LOG.info("collection created [name={}, config={}]", name, config);
    }
  }

  /** What a new collection writes per shard before any point: WAL header, manifest, metadata. */
  private static final long COLLECTION_BYTES = 64 << 10;

  /** Refuses (HTTP 507) work that would leave less than the reserve free in the data directory. */
  private void requireSpace(long bytes, String what) {
    try {
      shardOptions.space().require(dataDir, bytes, what);
    } catch (DiskFullException e) {
      throw new InsufficientStorageException(what, e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the free space [dataDir=" + dataDir + "]", e);
    }
  }

  /**
   * {@code e} as the 507 a client gets when it says the disk is full (the operating system's ENOSPC
   * somewhere in its causes), else {@code e} unchanged.
   */
  private RuntimeException storageFull(RuntimeException e, String what) {
    if (e instanceof InsufficientStorageException || !DiskFullException.isDiskFull(e)) {
      return e;
    }
    DiskFullException known = DiskFullException.find(e);
    if (known != null) {
      return new InsufficientStorageException(what, known);
    }
    long usable;
    try {
      usable = shardOptions.space().usableBytes(dataDir);
    } catch (IOException | RuntimeException probe) {
      usable = -1;
    }
    LOG.warn("{} failed: the disk is full [dataDir={}]", what, dataDir, e);
    return new InsufficientStorageException(what, usable, shardOptions.space().minFreeBytes(), e);
  }

  private void deleteQuietly(Path dir) {
    try {
      io.deleteTree(dir);
    } catch (IOException e) {
      LOG.warn("cannot remove the files of a collection that failed to start [dir={}]", dir, e);
    }
  }

  /**
   * Cancels the running index builds and compactions of every collection and starts no new ones
   * (the server is shutting down, see {@link io.flashvec.index.shard.Shard#stopBackgroundWork});
   * reads and writes go on until {@link #close}. Returns what was running, for the log.
   */
  public List<String> stopBackgroundWork() {
    List<String> out = new ArrayList<>();
    for (Collection c : collections.values()) {
      for (String w : c.stopBackgroundWork()) {
        out.add("collection " + c.name() + ", " + w);
      }
    }
    return out;
  }

  @Override
  public boolean deleteCollection(String name) {
    CollectionNames.validate(name);
    checkReady();
    synchronized (ddlLock) {
      Collection c = collections.remove(name);
      if (c == null) {
        if (failed.remove(name) != null) {
          metadata.remove(name);
          io.crashPoint(CrashPoint.COLLECTION_DELETE_METADATA_REMOVED);
          deleteRecursively(collectionsDir.resolve(name));
          LOG.info("collection that had failed to open deleted [name={}]", name);
          return true;
        }
        return false;
      }
      metadata.remove(name);
      io.crashPoint(CrashPoint.COLLECTION_DELETE_METADATA_REMOVED);
      try {
        c.close();
      } catch (IOException e) {
        LOG.warn("error closing deleted collection [name={}]", name, e);
      }
      deleteRecursively(c.directory());
      LOG.info("collection deleted [name={}]", name);
      return true;
    }
  }

  @Override
  public List<String> listCollections() {
    checkReady();
    List<String> names = new ArrayList<>(collections.keySet());
    names.addAll(failed.keySet());
    names.sort(null);
    return names;
  }

  @Override
  public boolean exists(String name) {
    checkReady();
    return collections.containsKey(name) || failed.containsKey(name);
  }

  @Override
  public CollectionDescription describe(String name) {
    Collection c = collection(name);
    return new CollectionDescription(name, c.config(), c.info());
  }

  /** The peer id of a standalone server in {@link #clusterInfo}. */
  static final String STANDALONE_NODE = "standalone";

  @Override
  public ClusterInfo clusterInfo(String name) {
    Collection c = collection(name);
    List<LocalShard> local = new ArrayList<>();
    List<Shard> shards = c.shards();
    for (int i = 0; i < shards.size(); i++) {
      local.add(new LocalShard(i, shards.get(i).count(), "Active"));
    }
    return new ClusterInfo(
        CollectionService.peerId(STANDALONE_NODE), shards.size(), local, List.of());
  }

  @Override
  public Collection.UpdateResult upsert(String collection, List<Point> points, boolean wait) {
    return collection(collection).upsert(points, wait);
  }

  @Override
  public Collection.UpdateResult delete(String collection, List<PointId> ids, boolean wait) {
    return collection(collection).delete(ids, wait);
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
  public Collection.UpdateResult createPayloadIndex(
      String collection, io.flashvec.index.payload.PayloadFieldSchema field, boolean wait) {
    Collection.UpdateResult r;
    try {
      r = collection(collection).createPayloadIndex(field, wait);
    } catch (RuntimeException e) {
      throw storageFull(e, "payload index creation");
    }
    LOG.info(
        "payload index created [collection={}, field={}, type={}]",
        collection,
        field.field(),
        field.type().apiName());
    return r;
  }

  /** Replaces a collection's payload indexes (cluster replicas follow the metadata store). */
  public Collection.UpdateResult setPayloadSchema(
      String collection, io.flashvec.index.payload.PayloadSchema schema, boolean wait) {
    Collection c = collection(collection);
    if (c.payloadSchema().equals(schema)) {
      return new Collection.UpdateResult(0, wait);
    }
    LOG.info("payload indexes replaced [collection={}, schema={}]", collection, schema);
    return c.setPayloadSchema(schema, wait);
  }

  /** A collection's payload indexes. */
  public io.flashvec.index.payload.PayloadSchema payloadSchema(String collection) {
    return collection(collection).payloadSchema();
  }

  @Override
  public Collection.UpdateResult deletePayloadIndex(String collection, String field, boolean wait) {
    Collection.UpdateResult r = collection(collection).deletePayloadIndex(field, wait);
    LOG.info("payload index dropped [collection={}, field={}]", collection, field);
    return r;
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
  public ScrollPage scroll(String collection, ScrollRequest request) {
    return collection(collection).scroll(request);
  }

  @Override
  public List<Record> search(String collection, SearchRequest request, SearchStats stats) {
    return collection(collection).search(request, stats);
  }

  @Override
  public boolean searchesServedFromMemory(String collection) {
    Collection c = ready ? collections.get(collection) : null;
    return c != null && c.searchesServedFromMemory();
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
      String collection, Integer indexingThreshold, FsyncPolicy fsyncPolicy) {
    synchronized (ddlLock) {
      Collection c = collection(collection);
      CollectionTuning next = c.tuning().merge(indexingThreshold, fsyncPolicy);
      // Persist first: a crash after this reopens the collection with the new settings anyway.
      try {
        metadata.updateTuning(collection, next);
      } catch (RuntimeException e) {
        throw storageFull(e, "collection update");
      }
      io.crashPoint(CrashPoint.COLLECTION_TUNING_WRITTEN);
      c.retune(next);
      LOG.info("collection settings changed [name={}, tuning={}]", collection, next);
      return next;
    }
  }

  @Override
  public void compact(String collection, boolean force) {
    collection(collection).compact(force);
  }

  /** The open collections, for metrics. */
  public Map<String, Collection> collections() {
    return Map.copyOf(collections);
  }

  public Path dataDir() {
    return dataDir;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    long t0 = System.nanoTime();
    int n = collections.size();
    synchronized (ddlLock) {
      for (Collection c : collections.values()) {
        try {
          c.close();
        } catch (IOException | RuntimeException e) {
          LOG.warn("error closing collection [name={}]", c.name(), e);
        }
      }
      collections.clear();
    }
    try {
      lock.release();
    } catch (IOException e) {
      LOG.warn("cannot release data directory lock [dataDir={}]", dataDir, e);
    }
    closeQuietly(lockChannel);
    unregister(lockKey);
    LOG.info(
        "collections closed, their WALs synced [dataDir={}, collections={}, millis={}]",
        dataDir,
        n,
        (System.nanoTime() - t0) / 1_000_000);
  }

  private static void unregister(Path key) {
    if (key != null) {
      LOCKED_IN_THIS_JVM.remove(key);
    }
  }

  private static void closeQuietly(Closeable c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // nothing more to do
      }
    }
  }

  private void deleteRecursively(Path dir) {
    try {
      io.deleteTree(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete directory [dir=" + dir + "]", e);
    }
  }
}
