package io.flashvec.index.collection;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.DenseVectorParams;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.SparseVector;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.query.DenseSearchRequest;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.SparseSearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.index.query.TopMerge;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.shard.Shard;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * A named set of points hashed over {@link CollectionConfig#shardNumber()} local shards.
 *
 * <p>Validates vectors (dimension, finite values), prepares them for the metric (cosine vectors are
 * normalised), routes each point to {@code hash(id) mod shards}, and merges per-shard results.
 * Thread-safe; the shards do their own locking. Shard {@code i} lives in {@code dir/shards/i}.
 */
public final class Collection implements Closeable {

  /** Result of a write: a collection-wide operation number and whether it is durable. */
  public record UpdateResult(long operationId, boolean completed) {}

  /** Statistics for {@code GET /collections/{name}}. */
  public record Info(
      long points,
      int segments,
      long diskBytes,
      long memoryBytes,
      List<SegmentInfo> segmentInfos,
      boolean indexing,
      String buildFailure,
      boolean compacting,
      long compactions,
      String compactionFailure,
      int deferredBuilds,
      CollectionTuning tuning,
      io.flashvec.storage.FsyncPolicy fsyncPolicy,
      PayloadSchema payloadSchema,
      java.util.Map<String, Long> payloadPoints,
      io.flashvec.index.IndexingState indexingState) {}

  /**
   * One segment as reported to users; {@code indexed}: it is an ANN index on disk (not a growing or
   * frozen one); {@code graphPoints}: points (live or deleted) in a growing segment's live graph,
   * -1 for other segments (the rest of a growing segment is scanned exactly until the graph catches
   * up); {@code diskBytes}, {@code memoryBytes} and {@code payloadBytes} as {@link
   * Segment#diskBytes()}, {@link Segment#memoryBytes()} and {@link Segment#payloadBytes()}.
   */
  public record SegmentInfo(
      int shard,
      int id,
      Segment.State state,
      int points,
      int deleted,
      boolean indexed,
      int graphPoints,
      long diskBytes,
      long memoryBytes,
      long payloadBytes) {}

  private final String name;
  private final Path dir;
  private volatile CollectionConfig config;
  private final Shard[] shards;
  private final AtomicLong operations = new AtomicLong();
  private volatile CollectionTuning tuning;
  private final SchemaChanges schemas;

  private Collection(
      String name,
      Path dir,
      CollectionConfig config,
      Shard[] shards,
      CollectionTuning tuning,
      SchemaChanges schemas) {
    this.tuning = tuning;
    this.schemas = schemas;
    this.name = name;
    this.dir = dir;
    this.config = config;
    this.shards = shards;
    long ops = 0;
    for (Shard s : shards) {
      ops += s.wal().lastSeq();
    }
    operations.set(ops);
  }

  /** Opens (creating if needed) the collection's shards under {@code dir} and recovers them. */
  public static Collection open(
      String name, Path dir, CollectionConfig config, Shard.Options options) {
    return open(name, dir, config, CollectionTuning.DEFAULT, options);
  }

  /**
   * Opens the collection with its changeable settings: a fsync override replaces the options' WAL
   * policy, and {@code indexing_threshold 0} defers index builds from the start.
   */
  public static Collection open(
      String name,
      Path dir,
      CollectionConfig config,
      CollectionTuning tuning,
      Shard.Options options) {
    if (tuning == null) {
      tuning = CollectionTuning.DEFAULT;
    }
    Shard[] shards = new Shard[config.shardNumber()];
    boolean success = false;
    try {
      for (int i = 0; i < shards.length; i++) {
        shards[i] =
            openShard(
                dir.resolve("shards").resolve(Integer.toString(i)), i, config, tuning, options);
      }
      // opens each segment's index, building missing ones
      SchemaChanges schemas = SchemaChanges.open(name, dir, options.io(), List.of(shards));
      success = true;
      return new Collection(name, dir, config, shards, tuning, schemas);
    } finally {
      if (!success) {
        closeQuietly(shards);
      }
    }
  }

  /**
   * Opens (creating if needed) shard {@code index} of a collection, stored in {@code dir}, with the
   * collection's settings: an fsync override of {@code tuning} replaces the options' WAL policy,
   * its WAL segment size the options' one, and {@code indexing_threshold 0} defers index builds
   * from the start. A cluster node opens the one shard of a replica with it too.
   */
  public static Shard openShard(
      Path dir,
      int index,
      CollectionConfig config,
      CollectionTuning tuning,
      Shard.Options options) {
    if (tuning.fsyncPolicy() != null) {
      options = options.withFsyncPolicy(tuning.fsyncPolicy());
    }
    if (tuning.walSegmentBytes() > 0) {
      options = options.withWalSegmentBytes(tuning.walSegmentBytes());
    }
    if (tuning.walRetainClosed() > 0) {
      options = options.withWalRetainClosed(tuning.walRetainClosed());
    }
    // per shard: each call makes the shard its own slots
    options = options.withOptimizationJobs(tuning.optimizationJobs());
    options =
        options.withIndexedFields(config.denseVectors()).withTargetSegments(tuning.segmentNumber());
    Shard shard =
        Shard.open(
            dir,
            index,
            config.dimension(),
            config.distance(),
            config.index(),
            options,
            !tuning.onDiskPayload(),
            config.denseOnDisk(),
            config.multivectors());
    shard.setDeferBuilds(tuning.deferBuilds());
    if (config.fieldGeneration() > 0) {
      // a field was added or deleted: the segments written from now on drop deleted fields
      shard.denseFields(config.denseOnDisk(), config.multivectors(), config.denseVectors());
    }
    return shard;
  }

  public String name() {
    return name;
  }

  public CollectionConfig config() {
    return config;
  }

  public Path directory() {
    return dir;
  }

  /** The shard that owns an id. */
  public int shardOf(PointId id) {
    return id.shard(shards.length);
  }

  /**
   * Validates a vector for this collection and returns it prepared for the metric (see {@link
   * CollectionConfig#prepareVector}).
   */
  public float[] validateVector(PointId id, float[] v) {
    return config.prepareVector(id, v);
  }

  /**
   * Stores points; with {@code wait} returns once they are durable (per the WAL policy) and
   * visible. Every point is validated before anything is written, so a rejected batch changes
   * nothing.
   */
  public UpdateResult upsert(List<Point> points, boolean wait) {
    return upsert(points, UpsertCondition.ALWAYS, wait);
  }

  /**
   * {@link #upsert(List, boolean)} of the points {@code condition} lets through: each shard tests
   * its points against their stored versions under its write lock (Qdrant's {@code update_mode} and
   * {@code update_filter}). The filter is checked against the collection (vector names) before
   * anything is written.
   */
  public UpdateResult upsert(List<Point> points, UpsertCondition condition, boolean wait) {
    FilterEvaluator filter =
        condition.updateFilter() == null ? null : evaluator(condition.updateFilter());
    List<List<Point>> perShard = new ArrayList<>(shards.length);
    for (int i = 0; i < shards.length; i++) {
      perShard.add(new ArrayList<>());
    }
    for (Point p : points) {
      perShard.get(shardOf(p.id())).add(config.preparePoint(p));
    }
    long[] seqs = new long[shards.length];
    for (int i = 0; i < shards.length; i++) {
      if (!perShard.get(i).isEmpty()) {
        seqs[i] =
            condition.always()
                ? shards[i].upsert(perShard.get(i))
                : shards[i].upsert(perShard.get(i), condition.mode(), filter);
      }
    }
    return finish(seqs, wait);
  }

  /**
   * Qdrant's update_vectors: replaces the vectors of existing points and keeps their payloads (the
   * points' payloads are not used). Each shard reads the payloads and writes the new versions under
   * its write lock, so a concurrent payload update is never lost. Every vector is validated, and
   * every id checked to exist, before anything is written: an id that does not exist is a {@link
   * NotFoundException} naming it and nothing changes (a delete racing with the update can still
   * remove a point after the check; its shard then refuses its part).
   */
  public UpdateResult updateVectors(List<Point> points, boolean wait) {
    return updateVectors(points, null, wait);
  }

  /**
   * {@link #updateVectors(List, boolean)} of the points whose stored version matches {@code
   * updateFilter} ({@code null}: all; Qdrant's {@code update_filter}), tested by each shard under
   * its write lock. Every id must still exist.
   */
  public UpdateResult updateVectors(
      List<Point> points, io.flashvec.index.filter.Filter updateFilter, boolean wait) {
    FilterEvaluator filter = updateFilter == null ? null : evaluator(updateFilter);
    points = mergeById(points);
    List<List<Point>> perShard = new ArrayList<>(shards.length);
    for (int i = 0; i < shards.length; i++) {
      perShard.add(new ArrayList<>());
    }
    for (Point p : points) {
      if (p.vector() == null && p.sparse().isEmpty() && p.dense().isEmpty()) {
        throw new InvalidInputException(
            "Wrong input: a vector update needs at least one vector [id=" + p.id() + "]");
      }
      Point v = config.preparePoint(new Point(p.id(), p.vector(), null, p.sparse(), p.dense()));
      perShard.get(shardOf(p.id())).add(v);
    }
    for (Point p : points) {
      if (get(p.id(), false, false) == null) {
        throw new NotFoundException("Not found: No point with id " + p.id() + " found");
      }
    }
    long[] seqs = new long[shards.length];
    for (int i = 0; i < shards.length; i++) {
      if (!perShard.get(i).isEmpty()) {
        seqs[i] =
            filter == null
                ? shards[i].updateVectors(perShard.get(i))
                : shards[i].updateVectors(perShard.get(i), filter);
      }
    }
    return finish(seqs, wait);
  }

  /**
   * One vector update per id, in the order ids first appear: a later update of the same id adds its
   * vectors to the earlier one's (the later wins for a vector both give), so that each vector of a
   * batch is applied, as in Qdrant.
   */
  private static List<Point> mergeById(List<Point> points) {
    java.util.Map<PointId, Point> byId = new java.util.LinkedHashMap<>();
    for (Point p : points) {
      byId.merge(
          p.id(),
          p,
          (a, b) -> {
            java.util.Map<String, io.flashvec.index.SparseVector> sparse =
                new java.util.HashMap<>(a.sparse());
            sparse.putAll(b.sparse());
            java.util.Map<String, float[]> dense = new java.util.HashMap<>(a.dense());
            dense.putAll(b.dense());
            return new Point(
                a.id(), b.vector() != null ? b.vector() : a.vector(), null, sparse, dense);
          });
    }
    return byId.size() == points.size() ? points : new ArrayList<>(byId.values());
  }

  /**
   * Qdrant's delete_vectors: removes the vectors {@code names} ({@code ""}: the default dense one)
   * from existing points and keeps the rest. Every name is checked to be a vector of the collection
   * and every id to exist before anything is written (as {@link #updateVectors}).
   */
  public UpdateResult deleteVectors(List<PointId> ids, Set<String> names, boolean wait) {
    for (String name : names) {
      if (!name.isEmpty()) {
        config.internalName(name);
      } else if (!config.primaryOptional()) {
        throw new InvalidInputException(
            "Wrong input: the default vector can only be deleted in a collection with sparse or"
                + " named vectors: a point needs a vector");
      }
    }
    List<List<PointId>> perShard = new ArrayList<>(shards.length);
    for (int i = 0; i < shards.length; i++) {
      perShard.add(new ArrayList<>());
    }
    for (PointId id : ids) {
      if (get(id, false, false) == null) {
        throw new NotFoundException("Not found: No point with id " + id + " found");
      }
      perShard.get(shardOf(id)).add(id);
    }
    long[] seqs = new long[shards.length];
    for (int i = 0; i < shards.length; i++) {
      if (!perShard.get(i).isEmpty()) {
        seqs[i] = shards[i].deleteVectors(perShard.get(i), names);
      }
    }
    return finish(seqs, wait);
  }

  /**
   * Exact search of the sparse vector field {@code field} by dot product with {@code query}, over
   * all shards, best first, after {@code offset}; points sharing no index with the query are no
   * results.
   */
  public List<Record> sparseSearch(SparseSearchRequest req) {
    config.checkSparseName(req.field());
    int k = req.limit() + req.offset();
    if (k == 0) {
      return List.of();
    }
    FilterEvaluator f = req.filter() == null ? null : evaluator(req.filter());
    SparseVector query = req.vector();
    if (tuning().sparseIdf().contains(req.field())) {
      FilterEvaluator corpus = req.idfCorpus() == null ? null : evaluator(req.idfCorpus());
      query = idfWeighted(req.field(), query, corpus);
    } else if (req.idfCorpus() != null) {
      throw new InvalidInputException(
          "Wrong input: params.idf applies to a sparse vector with the idf modifier, which "
              + req.field()
              + " has not");
    }
    TopMerge<Record> top = TopMerge.byScore(Distance.DOT, k);
    for (Shard s : shards) {
      top.offerAll(
          s.sparseSearch(
              req.field(), query, k, f, req.scoreThreshold(), req.withPayload(), req.withVector()));
    }
    return top.bestFirst(req.offset());
  }

  /**
   * {@code query} with each weight multiplied by its index's inverse document frequency in the
   * field {@code field} over all shards, as Qdrant's {@code modifier: idf} does: {@code ln((N - df
   * + 0.5) / (df + 0.5) + 1)}, {@code N} the live points that have the field and {@code df} those
   * whose vector has the index; with a {@code corpus} filter, only the points that pass it.
   */
  SparseVector idfWeighted(String field, SparseVector query, FilterEvaluator corpus) {
    long[] sum = new long[1 + query.size()];
    for (Shard s : shards) {
      long[] part = s.sparseFrequencies(field, query.indices(), corpus);
      for (int i = 0; i < sum.length; i++) {
        sum[i] += part[i];
      }
    }
    float n = sum[0];
    float[] weighted = new float[query.size()];
    for (int i = 0; i < weighted.length; i++) {
      float df = sum[1 + i];
      weighted[i] = query.values()[i] * (float) Math.log((n - df + 0.5f) / (df + 0.5f) + 1f);
    }
    return new SparseVector(query.indices(), weighted);
  }

  /**
   * Search of the dense vector field {@code req.field()}, one other than the primary vector, over
   * all shards by the field's metric, best first, after {@code offset}: through the sealed
   * segments' graphs of the field (unless the request is exact), and an exact scan of the rest. For
   * a multivector field the request's vector is a multivector query (its vectors back to back) and
   * the score is MaxSim. A {@code beam_width} is refused (it tunes the primary vector's on-disk
   * search only).
   */
  public List<Record> denseSearch(DenseSearchRequest req) {
    DenseVectorParams field = config.denseField(req.field());
    if (field == null) {
      throw CollectionConfig.notExisting(req.field());
    }
    if (req.params().beamWidth() > 0) {
      // the reads in flight of the primary vector's on-disk graph search: this field's graphs are
      // in memory, so a beam width would change nothing; refused rather than ignored
      throw new io.flashvec.index.InvalidInputException(
          "Wrong input: params.beam_width applies to the search of the primary vector's on-disk"
              + " graph only; vector `"
              + CollectionConfig.shownName(req.field())
              + "` is searched through graphs in memory [beam_width="
              + req.params().beamWidth()
              + "]");
    }
    float[] q = config.prepareVector(null, req.vector(), req.field());
    int k = req.limit() + req.offset();
    if (k == 0) {
      return List.of();
    }
    FilterEvaluator f = req.filter() == null ? null : evaluator(req.filter());
    TopMerge<Record> top = TopMerge.byScore(field.distance(), k);
    for (Shard s : shards) {
      top.offerAll(
          field.multivector()
              ? s.multiSearch(
                  req.field(),
                  q,
                  field.dimension(),
                  field.distance(),
                  k,
                  f,
                  req.scoreThreshold(),
                  req.withPayload(),
                  req.withVector())
              : s.denseSearch(
                  req.field(),
                  q,
                  field.distance(),
                  k,
                  new io.flashvec.index.SearchParams(
                      req.params().searchList() > 0
                          ? req.params().searchList()
                          : field.index().efConstruct(),
                      0,
                      req.params().rerankK(),
                      req.params().exact()),
                  f,
                  req.scoreThreshold(),
                  req.withPayload(),
                  req.withVector()));
    }
    return top.bestFirst(req.offset());
  }

  /** Deletes points by id; ids that do not exist are ignored. */
  public UpdateResult delete(List<PointId> ids, boolean wait) {
    return perShard(ids, Shard::delete, wait);
  }

  /**
   * Deletes the points that match {@code filter}; each shard logs the concrete ids that matched
   * when it ran (see {@link Shard#delete(FilterEvaluator)}).
   */
  public UpdateResult delete(Filter filter, boolean wait) {
    FilterEvaluator f = evaluator(filter);
    long[] seqs = new long[shards.length];
    for (int i = 0; i < shards.length; i++) {
      seqs[i] = shards[i].delete(f);
    }
    return finish(seqs, wait);
  }

  /** {@link #updatePayloads(List, java.util.function.UnaryOperator, boolean)} by filter. */
  public UpdateResult updatePayloads(
      Filter filter, java.util.function.UnaryOperator<byte[]> update, boolean wait) {
    FilterEvaluator f = evaluator(filter);
    long[] seqs = new long[shards.length];
    for (int i = 0; i < shards.length; i++) {
      seqs[i] = shards[i].updatePayloads(f, update);
    }
    return finish(seqs, wait);
  }

  /**
   * Rewrites the payloads of existing points ({@code update} maps the current payload, possibly
   * {@code null}, to the new one) and keeps their vectors; absent ids are ignored.
   */
  public UpdateResult updatePayloads(
      List<PointId> ids, java.util.function.UnaryOperator<byte[]> update, boolean wait) {
    return perShard(ids, (shard, shardIds) -> shard.updatePayloads(shardIds, update), wait);
  }

  /** Splits ids by shard, applies {@code write} to each non-empty part, and finishes. */
  private UpdateResult perShard(
      List<PointId> ids,
      java.util.function.ToLongBiFunction<Shard, List<PointId>> write,
      boolean wait) {
    List<List<PointId>> parts = new ArrayList<>(shards.length);
    for (int i = 0; i < shards.length; i++) {
      parts.add(new ArrayList<>());
    }
    for (PointId id : ids) {
      parts.get(shardOf(id)).add(id);
    }
    long[] seqs = new long[shards.length];
    for (int i = 0; i < shards.length; i++) {
      if (!parts.get(i).isEmpty()) {
        seqs[i] = write.applyAsLong(shards[i], parts.get(i));
      }
    }
    return finish(seqs, wait);
  }

  /**
   * Told, on the thread that writes, the operation id of a write with {@code wait} once it is
   * applied (visible to searches) and before it waits to be durable: a request bounded by a timeout
   * can then answer that its write was accepted and is still being waited for (Qdrant's {@code
   * wait_timeout}) rather than that it timed out.
   */
  public static final ScopedValue<java.util.function.LongConsumer> ON_APPLIED =
      ScopedValue.newInstance();

  private UpdateResult finish(long[] seqs, boolean wait) {
    long op = operations.incrementAndGet();
    if (wait) {
      if (ON_APPLIED.isBound()) {
        ON_APPLIED.get().accept(op);
      }
      for (int i = 0; i < shards.length; i++) {
        if (seqs[i] > 0) {
          shards[i].awaitDurable(seqs[i]);
        }
      }
    }
    return new UpdateResult(op, wait);
  }

  /** The live version of a point or {@code null}. */
  public Record get(PointId id, boolean withPayload, boolean withVector) {
    return shards[shardOf(id)].get(id, withPayload, withVector);
  }

  /** Points for ids that exist, in request order, each at most once. */
  public List<Record> retrieve(List<PointId> ids, boolean withPayload, boolean withVector) {
    List<Record> out = new ArrayList<>(ids.size());
    java.util.Set<PointId> seen = new java.util.HashSet<>();
    for (PointId id : ids) {
      if (!seen.add(id)) {
        continue;
      }
      Record r = get(id, withPayload, withVector);
      if (r != null) {
        out.add(r);
      }
    }
    return out;
  }

  public long count() {
    long n = 0;
    for (Shard s : shards) {
      n += s.count();
    }
    return n;
  }

  /** Live points that match {@code filter} ({@code null}: all). */
  public long count(Filter filter) {
    if (filter == null || filter.isEmpty()) {
      return count();
    }
    FilterEvaluator f = evaluator(filter);
    long n = 0;
    for (Shard s : shards) {
      n += s.count(f);
    }
    return n;
  }

  /**
   * A page of the points that match the request's filter, in id order from its offset on: each
   * shard's page, merged ({@link ScrollPage#merge}).
   */
  public ScrollPage scroll(ScrollRequest req) {
    FilterEvaluator f = req.filter() == null ? null : evaluator(req.filter());
    List<ScrollPage> pages = new ArrayList<>(shards.length);
    for (Shard s : shards) {
      pages.add(s.scroll(req, f));
    }
    return ScrollPage.merge(pages, req.limit());
  }

  /** Nearest neighbours over all shards, best first, after {@code offset}. */
  public List<Record> search(SearchRequest req) {
    return search(req, new SearchStats());
  }

  /** {@link #search(SearchRequest)}, adding what it cost to {@code stats}. */
  public List<Record> search(SearchRequest req, SearchStats stats) {
    float[] q = validateVector(null, req.vector());
    int k = req.limit() + req.offset();
    if (k == 0) {
      return List.of();
    }
    FilterEvaluator filter = req.filter() == null ? null : evaluator(req.filter());
    PreparedSearch search = new PreparedSearch(req, q, filter, stats);
    TopMerge<Record> top = TopMerge.byScore(config.distance(), k);
    for (Shard s : shards) {
      top.offerAll(s.search(search));
    }
    return top.bestFirst(req.offset());
  }

  /**
   * Drops the collection's on-disk index pages from memory (this process's mappings and the page
   * cache), so the next searches read from the device: for cold-cache measurements. Returns the
   * number of segment files evicted.
   */
  public int evictFromPageCache() {
    int files = 0;
    for (Shard s : shards) {
      files += s.evictFromPageCache();
    }
    return files;
  }

  /** Seals every shard's growing segment. */
  public void flush() {
    for (Shard s : shards) {
      s.flush();
    }
  }

  /**
   * Starts a compaction of every shard on the compaction executor and returns at once; with {@code
   * force} every segment with deleted points is rewritten and all small segments are merged.
   */
  public void compact(boolean force) {
    for (Shard s : shards) {
      s.compact(force);
    }
  }

  private FilterEvaluator evaluator(Filter filter) {
    FilterEvaluator f = new FilterEvaluator(filter, schemas.current());
    if (f.needsVectors()) {
      CollectionConfig c = config;
      for (String name : f.vectorNames()) {
        c.internalName(name);
      }
      f.vectorKeys(c::internalName);
    }
    return f;
  }

  /** The payload indexes of this collection. */
  public PayloadSchema payloadSchema() {
    return schemas.current();
  }

  /**
   * Creates (or replaces) the payload index on {@code field.field()}; with {@code wait} it is
   * complete when this returns, else it is built in the background ({@link SchemaChanges}).
   */
  public UpdateResult createPayloadIndex(PayloadFieldSchema field, boolean wait) {
    return changeSchema(s -> s.with(field), wait);
  }

  /** Drops the payload index on {@code key} (nothing happens if there is none); as above. */
  public UpdateResult deletePayloadIndex(String key, boolean wait) {
    return changeSchema(s -> s.without(key), wait);
  }

  /**
   * Replaces all payload indexes with {@code schema} (a cluster replica follows the collection's
   * schema in the metadata store this way).
   */
  public UpdateResult setPayloadSchema(PayloadSchema schema, boolean wait) {
    return changeSchema(s -> schema, wait);
  }

  private UpdateResult changeSchema(UnaryOperator<PayloadSchema> change, boolean wait) {
    boolean done = schemas.change(change, wait);
    return new UpdateResult(operations.incrementAndGet(), done);
  }

  /** Whether a schema change committed without {@code wait} is still building its indexes. */
  boolean schemaBuilding() {
    return schemas.building();
  }

  /** Live points with a non-null value of {@code key} (the {@code points} of a payload index). */
  public long countWithValue(String key) {
    return count(Filter.hasValue(io.flashvec.index.filter.FieldPath.parse(key, "key")));
  }

  /**
   * BM25 full-text search of the request's text in its text-indexed payload key, among the points
   * that match its filter; best first (highest score), at most its limit.
   */
  public List<Record> textSearch(TextSearchRequest req) {
    List<String> tokens = schemas.current().textQuery(req.field(), req.text());
    FilterEvaluator f = req.filter() == null ? null : evaluator(req.filter());
    TopMerge<Record> top = TopMerge.byTextScore(req.limit());
    for (Shard s : shards) {
      top.offerAll(s.textSearch(req, tokens, f));
    }
    return top.bestFirst(0);
  }

  /**
   * Qdrant's scroll with {@code order_by}: points that match the request's filter, ordered by an
   * integer, float or datetime payload index, from its start value on.
   */
  public List<Ordered> scrollOrdered(OrderedScrollRequest req) {
    PayloadFieldSchema key = schemas.current().orderField(name, req.key(), req.limit());
    FilterEvaluator f = req.filter() == null ? null : evaluator(req.filter());
    TopMerge<Ordered> top = TopMerge.byOrderValue(req.ascending(), req.limit());
    for (Shard s : shards) {
      top.offerAll(s.orderedScroll(req, key, f));
    }
    return top.bestFirst(0);
  }

  /** The changeable settings in force. */
  public CollectionTuning tuning() {
    return tuning;
  }

  /**
   * Applies new changeable settings: a new fsync policy applies at once (leaving {@code never}
   * first makes everything written so far durable), and raising {@code indexing_threshold} from 0
   * starts the deferred index builds; {@code on_disk_payload} applies to the segments opened from
   * now on (see {@link Shard#setPayloadsOnHeap}). The caller persists the settings first.
   */
  public synchronized void retune(CollectionTuning next) {
    for (Shard s : shards) {
      if (next.fsyncPolicy() != null) {
        s.wal().setPolicy(next.fsyncPolicy());
      }
      s.setDeferBuilds(next.deferBuilds());
      s.setTargetSegments(next.segmentNumber());
      s.setPayloadsOnHeap(!next.onDiskPayload());
    }
    tuning = next;
  }

  /**
   * Applies a new config with a vector field added or deleted ({@link
   * CollectionConfig#withDenseVector}, {@link CollectionConfig#withoutDenseVector}): requests see
   * it at once, and the shards tag and place the fields it declares from now on. Only the fields
   * beside the points may differ from the config in force. The caller persists it first.
   */
  public synchronized void reconfigure(CollectionConfig next) {
    CollectionConfig now = config;
    if (next.dimension() != now.dimension()
        || next.distance() != now.distance()
        || next.shardNumber() != now.shardNumber()
        || next.fieldGeneration() < now.fieldGeneration()
        || !graphSettingsOnly(now.index(), next.index())) {
      throw new IllegalArgumentException(
          "only the vector fields beside the points and the primary vector's m and ef_construct"
              + " can change [collection="
              + name
              + "]");
    }
    boolean graph = !now.index().equals(next.index());
    for (Shard s : shards) {
      s.denseFields(next.denseOnDisk(), next.multivectors(), next.denseVectors());
      if (graph) {
        s.graphParams(next.index());
      }
    }
    config = next;
  }

  /**
   * Whether {@code next} differs from {@code now} in the graph's max degree and construction search
   * list at most (a collection update of the primary vector's {@code m} and {@code ef_construct}).
   */
  static boolean graphSettingsOnly(IndexParams now, IndexParams next) {
    return now.type().equals(next.type())
        && now.alpha() == next.alpha()
        && now.pqSubspaces() == next.pqSubspaces();
  }

  /**
   * Before a config whose primary graph settings differ from the ones in force is persisted: every
   * shard records in its sealed segments the construction search list that built them ({@link
   * Shard#recordGraphBuilds}), so the rebuilds {@link #reconfigure} starts, and those the next open
   * finds, know which segments were built with other settings.
   */
  public synchronized void recordGraphBuilds() {
    for (Shard s : shards) {
      try {
        s.recordGraphBuilds();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(
            "cannot record the segments' graph settings [collection=" + name + "]", e);
      }
    }
  }

  public Info info() {
    return describe(List.of(shards), tuning, schemas);
  }

  /**
   * The optimizations of every shard as one ({@link io.flashvec.index.Optimizations#merge}), with
   * at most {@code completedLimit} completed ones, newest first.
   */
  public io.flashvec.index.Optimizations optimizations(int completedLimit) {
    List<io.flashvec.index.Optimizations> each = new ArrayList<>(shards.length);
    for (Shard s : shards) {
      each.add(s.optimizations());
    }
    return io.flashvec.index.Optimizations.merge(each, completedLimit);
  }

  /**
   * The statistics of {@code shards}, which share {@code tuning} and {@code schemas}: those of a
   * collection, or of a cluster replica's one shard.
   */
  public static Info describe(List<Shard> shards, CollectionTuning tuning, SchemaChanges schemas) {
    PayloadSchema schema = schemas.current();
    java.util.Map<String, Long> payloadPoints = new java.util.TreeMap<>();
    for (String key : schema.fields().keySet()) {
      FilterEvaluator f =
          new FilterEvaluator(
              Filter.hasValue(io.flashvec.index.filter.FieldPath.parse(key, "key")), schema);
      long n = 0;
      for (Shard s : shards) {
        n += s.count(f);
      }
      payloadPoints.put(key, n);
    }
    long points = 0;
    long disk = 0;
    long mem = 0;
    boolean indexing = false;
    String failure = null;
    boolean compacting = false;
    long compactions = 0;
    String compactionFailure = null;
    int deferred = 0;
    io.flashvec.index.IndexingState state = io.flashvec.index.IndexingState.EMPTY;
    List<SegmentInfo> segs = new ArrayList<>();
    indexing |= schemas.building();
    for (Shard s : shards) {
      indexing |= s.indexing();
      if (s.buildFailure() != null) {
        failure = s.buildFailure();
      }
      if (s.wal().failed()) {
        // writes to this shard fail until a restart reopens the log: the collection is red
        failure =
            "WAL failed after an I/O error; writes are refused until a restart [shard="
                + s.shardId()
                + "]";
      }
      compacting |= s.compacting();
      compactions += s.compactionsDone();
      if (s.compactionFailure() != null) {
        compactionFailure = s.compactionFailure();
      }
      io.flashvec.index.IndexingState st = s.indexingState();
      state = state.plus(st);
      if (st.deferred()) {
        deferred += s.deferredBuilds(); // else they are queued, not deferred
      }
      java.util.Set<Integer> busy = s.compactingSegments();
      for (Segment seg : s.snapshot().segments()) {
        points += seg.liveCount();
        segs.add(
            new SegmentInfo(
                s.shardId(),
                seg.id(),
                busy.contains(seg.id()) ? Segment.State.COMPACTING : seg.state(),
                seg.liveCount(),
                seg.size() - seg.liveCount(),
                seg instanceof io.flashvec.index.segment.SealedSegment d && d.hasGraph(),
                seg.graphPoints(),
                seg.diskBytes(),
                seg.memoryBytes(),
                seg.payloadBytes()));
      }
      disk += s.diskBytes();
      mem += s.memoryBytes();
    }
    return new Info(
        points,
        segs.size(),
        disk,
        mem,
        segs,
        indexing,
        failure,
        compacting,
        compactions,
        compactionFailure,
        deferred,
        tuning,
        shards.getFirst().wal().policy(),
        schema,
        payloadPoints,
        state);
  }

  /** Total bytes of all shards' WALs. */
  /** Bytes of the payloads the collection's segments store ({@link Segment#payloadBytes}). */
  public long payloadBytes() {
    long n = 0;
    for (Shard s : shards) {
      n += s.payloadBytes();
    }
    return n;
  }

  public long walBytes() {
    long n = 0;
    for (Shard s : shards) {
      n += s.wal().sizeBytes();
    }
    return n;
  }

  /** Whether every shard's searches run from memory ({@link Shard#searchesServedFromMemory}). */
  public boolean searchesServedFromMemory() {
    for (Shard s : shards) {
      if (!s.searchesServedFromMemory()) {
        return false;
      }
    }
    return true;
  }

  public List<Shard> shards() {
    return List.of(shards);
  }

  /**
   * Copies the collection's files into {@code target} (which must not exist): its payload schema
   * and each shard as of one WAL position of that shard ({@link Shard#copyFiles}), so that a
   * collection opened there with the same configuration holds the writes applied so far.
   */
  public void copyFiles(Path target) throws IOException {
    java.nio.file.Files.createDirectories(target);
    try (java.util.stream.Stream<Path> top = java.nio.file.Files.list(dir)) {
      for (Path f : top.filter(java.nio.file.Files::isRegularFile).toList()) {
        java.nio.file.Files.copy(f, target.resolve(f.getFileName().toString()));
      }
    }
    for (int i = 0; i < shards.length; i++) {
      shards[i].copyFiles(target.resolve("shards").resolve(Integer.toString(i)));
    }
  }

  /**
   * Cancels the shards' running index builds and compactions and starts no new ones (see {@link
   * Shard#stopBackgroundWork}); returns what was running, per shard, or an empty list.
   */
  public List<String> stopBackgroundWork() {
    List<String> out = new java.util.ArrayList<>();
    for (Shard s : shards) {
      String w = s.stopBackgroundWork();
      if (w != null) {
        out.add("shard " + s.shardId() + ": " + w);
      }
    }
    return out;
  }

  @Override
  public void close() throws IOException {
    IOException first = null;
    for (Shard s : shards) {
      try {
        if (s != null) {
          s.close();
        }
      } catch (IOException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private static void closeQuietly(Shard[] shards) {
    for (Shard s : shards) {
      if (s != null) {
        try {
          s.close();
        } catch (IOException | UncheckedIOException e) {
          // already failing; the original exception is what matters
        }
      }
    }
  }
}
