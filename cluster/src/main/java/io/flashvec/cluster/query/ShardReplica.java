package io.flashvec.cluster.query;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.collection.SchemaChanges;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.index.shard.Shard;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's replica of one shard of a cluster collection: the shard ({@link Shard}, in {@code
 * <dir>/shards/0}) with the collection's vector settings, its changeable settings and the payload
 * schema the collection's replicas share ({@link SchemaChanges}, committed in {@code dir}). The
 * proxy has routed every point here already; the replica validates vectors, prepares them for the
 * metric and compiles filters as a collection does, then reads and writes its one shard.
 *
 * <p>Thread-safe. Ordering writes against replication is the {@link ShardServer}'s job (it holds
 * the replica's lock).
 */
public final class ShardReplica implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(ShardReplica.class);

  private final ReplicaKey key;
  private final CollectionConfig config;
  private final Shard shard;
  private final SchemaChanges schemas;
  private final AtomicLong operations = new AtomicLong();
  private volatile CollectionTuning tuning;

  /** The etcd revision of the payload schema applied last (-1: none yet); guarded by this. */
  private long schemaRevision = -1;

  private ShardReplica(
      ReplicaKey key,
      CollectionConfig config,
      Shard shard,
      SchemaChanges schemas,
      CollectionTuning tuning) {
    this.key = key;
    this.config = config;
    this.shard = shard;
    this.schemas = schemas;
    this.tuning = tuning;
    operations.set(shard.wal().lastSeq());
  }

  /**
   * Opens (creating if needed) the replica stored in {@code dir} and replays its WAL: an fsync
   * override of {@code tuning} (never null) replaces the options' WAL policy, {@code
   * indexing_threshold 0} defers index builds from the start ({@link Collection#openShard}).
   */
  public static ShardReplica open(
      ReplicaKey key,
      Path dir,
      CollectionConfig config,
      CollectionTuning tuning,
      Shard.Options options) {
    Shard shard =
        Collection.openShard(
            dir.resolve("shards").resolve("0"), key.shard(), config, tuning, options);
    try {
      SchemaChanges schemas = SchemaChanges.open(key.toString(), dir, options.io(), List.of(shard));
      return new ShardReplica(key, config, shard, schemas, tuning);
    } catch (RuntimeException e) {
      try {
        shard.close();
      } catch (IOException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  public ReplicaKey key() {
    return key;
  }

  // ---------------------------------------------------------------- writes

  /** Stores points after checking their vectors; with {@code wait} once durable and visible. */
  public Collection.UpdateResult upsert(List<Point> points, boolean wait) {
    List<Point> prepared = new ArrayList<>(points.size());
    for (Point p : points) {
      prepared.add(new Point(p.id(), config.prepareVector(p.id(), p.vector()), p.payload()));
    }
    return finish(shard.upsert(prepared), wait);
  }

  /**
   * The new versions of an update_vectors: each point that exists with its given vector and the
   * payload it has now (the given payloads are not used); ids that do not exist are skipped. The
   * caller holds the shard's primary write lock from this read until the versions are written.
   */
  public List<Point> withCurrentPayloads(List<Point> points) {
    List<Point> out = new ArrayList<>(points.size());
    for (Point p : points) {
      Record r = shard.get(p.id(), true, false);
      if (r != null) {
        out.add(new Point(p.id(), p.vector(), r.payload()));
      }
    }
    return out;
  }

  /** Deletes points by id; absent ids are ignored. */
  public Collection.UpdateResult delete(List<PointId> ids, boolean wait) {
    return finish(shard.delete(ids), wait);
  }

  private Collection.UpdateResult finish(long seq, boolean wait) {
    if (wait && seq > 0) {
      shard.awaitDurable(seq);
    }
    return new Collection.UpdateResult(operations.incrementAndGet(), wait);
  }

  // ---------------------------------------------------------------- reads

  /** The points of {@code ids} that exist, in request order. */
  public List<Record> retrieve(List<PointId> ids, boolean withPayload, boolean withVector) {
    List<Record> out = new ArrayList<>(ids.size());
    for (PointId id : ids) {
      Record r = shard.get(id, withPayload, withVector);
      if (r != null) {
        out.add(r);
      }
    }
    return out;
  }

  /** Live points that match {@code filter} ({@code null}: all). */
  public long count(Filter filter) {
    return filter == null ? shard.count() : shard.count(evaluator(filter));
  }

  public ScrollPage scroll(ScrollRequest request) {
    return shard.scroll(request, evaluator(request.filter()));
  }

  /** The best {@code limit} (the proxy asked for its limit and offset) of this shard. */
  public List<Record> search(SearchRequest request, SearchStats stats) {
    float[] query = config.prepareVector(null, request.vector());
    if (request.limit() == 0) {
      return List.of();
    }
    return shard.search(new PreparedSearch(request, query, evaluator(request.filter()), stats));
  }

  public List<Record> textSearch(TextSearchRequest request) {
    List<String> tokens = schemas.current().textQuery(request.field(), request.text());
    return shard.textSearch(request, tokens, evaluator(request.filter()));
  }

  public List<Ordered> scrollOrdered(OrderedScrollRequest request) {
    return shard.orderedScroll(
        request,
        schemas.current().orderField(key.collection(), request.key(), request.limit()),
        evaluator(request.filter()));
  }

  private FilterEvaluator evaluator(Filter filter) {
    return filter == null ? null : new FilterEvaluator(filter, schemas.current());
  }

  /** The replica's statistics (its one shard's, as a collection's). */
  public Collection.Info info() {
    return Collection.describe(List.of(shard), tuning, schemas);
  }

  /** Live points. */
  public long points() {
    return shard.count();
  }

  // ---------------------------------------------------------------- upkeep

  public void flush() {
    shard.flush();
  }

  public void compact(boolean force) {
    shard.compact(force);
  }

  public int evictFromPageCache() {
    return shard.evictFromPageCache();
  }

  public CollectionTuning tuning() {
    return tuning;
  }

  /** Applies new changeable settings (persisted by the caller first), as a collection does. */
  public synchronized void retune(CollectionTuning next) {
    if (next.fsyncPolicy() != null) {
      shard.wal().setPolicy(next.fsyncPolicy());
    }
    shard.setDeferBuilds(next.deferBuilds());
    shard.setPayloadsOnHeap(!next.onDiskPayload());
    tuning = next;
  }

  public PayloadSchema payloadSchema() {
    return schemas.current();
  }

  /**
   * Replaces the payload indexes with the collection's schema as of metadata revision {@code
   * revision}, unless a later one was applied already: changes arrive both from the proxy and
   * through the metadata watch, in either order. Revision 0 (a schema the replica was created with)
   * always applies.
   */
  public void applyPayloadSchema(PayloadSchema schema, long revision, boolean wait) {
    synchronized (this) {
      if (schemaRevision > revision) {
        return;
      }
      schemaRevision = revision;
    }
    if (!schemas.current().equals(schema)) {
      LOG.info("payload indexes replaced [collection={}, schema={}]", key.dirName(), schema);
      schemas.change(s -> schema, wait);
    }
  }

  /** Cancels running builds and compactions (shutdown); what was running, or {@code null}. */
  public String stopBackgroundWork() {
    return shard.stopBackgroundWork();
  }

  /** Bytes of the replica's WAL. */
  public long walBytes() {
    return shard.wal().sizeBytes();
  }

  @Override
  public void close() throws IOException {
    shard.close();
  }

  /** Closes without throwing (the replica is being dropped or failed to start). */
  void closeQuietly() {
    try {
      close();
    } catch (IOException | UncheckedIOException e) {
      // already on the way out
    }
  }
}
