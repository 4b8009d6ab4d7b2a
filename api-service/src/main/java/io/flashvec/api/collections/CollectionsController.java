package io.flashvec.api.collections;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.api.web.ValidationException;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.DenseVectorParams;
import io.flashvec.index.Distance;
import io.flashvec.index.FieldIndex;
import io.flashvec.index.IndexParams;
import io.flashvec.index.IndexingState;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.SparseVectorParams;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.storage.FsyncPolicy;
import java.util.Locale;
import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.BooleanNode;
import tools.jackson.databind.node.ObjectNode;

/** {@code /collections} in Qdrant's shapes. */
@RestController
public class CollectionsController {

  private final CollectionService service;
  private final Blocking blocking;
  private final FlashVecProperties props;
  private final StrictModeGuard strict;

  CollectionsController(
      CollectionService service,
      Blocking blocking,
      FlashVecProperties props,
      StrictModeGuard strict) {
    this.service = service;
    this.blocking = blocking;
    this.props = props;
    this.strict = strict;
  }

  @GetMapping("/collections")
  Mono<ResponseEntity<byte[]>> list() {
    return blocking.answer(
        () -> {
          ObjectNode r = Json.object();
          ArrayNode arr = r.putArray("collections");
          for (String n : service.listCollections()) {
            arr.addObject().put("name", n);
          }
          return r;
        });
  }

  /**
   * Qdrant's create collection. {@code ?timeout} (seconds, at least 1, as Qdrant checks it) bounds
   * the request as on every collection route ({@link io.flashvec.api.web.ReadParamsFilter}).
   */
  @PutMapping("/collections/{name}")
  Mono<ResponseEntity<byte[]>> create(
      @PathVariable String name,
      @org.springframework.web.bind.annotation.RequestParam(required = false) Integer timeout,
      @RequestBody(required = false) byte[] body) {
    return blocking.answer(
        name,
        body,
        Json::parse,
        json -> {
          if (timeout != null && timeout < 1) {
            throw new ValidationException(
                "query parameters",
                "timeout",
                "value " + timeout + " invalid, must be 1 or larger");
          }
          return create(name, json);
        });
  }

  /** Creates the collection a parsed create body describes. */
  private JsonNode create(String name, JsonNode json) {
    CollectionSettings.quantizationAlias(json, true);
    CollectionConfig config = parseConfig(json);
    CollectionSettings.checkCreate(json, config, server());
    CollectionTuning t = CollectionTuning.DEFAULT;
    Integer threshold = indexingThreshold(json);
    FsyncPolicy fsync = fsyncPolicy(json);
    Boolean onDiskPayload = CollectionSettings.onDiskPayload(json, "");
    if (threshold != null || fsync != null || onDiskPayload != null) {
      t = t.merge(threshold, fsync, onDiskPayload);
    }
    java.util.Set<String> memory = CollectionSettings.memoryGiven(json, config, false);
    if (!memory.isEmpty()) {
      t = t.withMemoryShown(memory);
    }
    JsonNode strictMode = json.get("strict_mode_config");
    if (strictMode != null && !strictMode.isNull()) {
      t = t.withStrictMode(parseStrictMode(strictMode, config).toJson().toString());
    }
    JsonNode metadata = json.get("metadata");
    if (metadata != null && metadata.isObject()) {
      t = t.withMetadata(metadata.toString());
    }
    int segments = CollectionSettings.segmentNumber(json);
    if (segments > 0) {
      t = t.withSegmentNumber(segments);
    }
    String quantization = CollectionSettings.uninheritedQuantization(json, config);
    if (quantization != null) {
      t = t.withQuantizationConfig(quantization);
    }
    Long walMb = CollectionSettings.walCapacityMegabytes(json);
    if (walMb != null && walMb * (1L << 20) != props.wal().segmentBytes().toBytes()) {
      t = t.withWalSegmentBytes(walMb << 20);
    }
    int jobs =
        CollectionSettings.optimizationJobs(
            Requests.member(json, "optimizers_config", "max_optimization_threads"));
    if (jobs > 0) {
      t = t.withOptimizationJobs(jobs);
    }
    int retain = CollectionSettings.walRetainClosed(json);
    if (retain > 0) {
      t = t.withWalRetainClosed(retain);
    }
    java.util.Set<String> idf = new java.util.TreeSet<>();
    CollectionSettings.sparseModifiers(json)
        .forEach(
            (f, on) -> {
              if (on) {
                idf.add(f);
              }
            });
    if (!idf.isEmpty()) {
      t = t.withSparseIdf(idf);
    }
    service.createCollection(name, config, t);
    strict.forget(name);
    return BooleanNode.TRUE;
  }

  /** The WAL segment size of a collection with {@code tuning}, in MiB. */
  private long walMegabytes(CollectionTuning tuning) {
    return walMegabytes(tuning, props);
  }

  private static long walMegabytes(CollectionTuning tuning, FlashVecProperties props) {
    return tuning.walSegmentBytes() > 0
        ? tuning.walSegmentBytes() >> 20
        : props.wal().segmentBytes().toMegabytes();
  }

  @GetMapping("/collections/{name}")
  Mono<ResponseEntity<byte[]>> get(@PathVariable String name) {
    return blocking.answer(
        () -> {
          String n = CollectionNames.validate(name);
          ObjectNode r = describe(service.describe(n));
          putUpdateQueue(r, service.clusterInfo(n));
          return r;
        });
  }

  /**
   * Qdrant's {@code update_queue}: {@code length} counts the writes the collection's shards
   * received and have not applied yet (FlashVec applies a write before answering it, with or
   * without {@code wait}, so only writes still in flight count); null when a shard is held
   * elsewhere (a cluster proxy does not know the queues of its data nodes).
   */
  static void putUpdateQueue(ObjectNode r, CollectionService.ClusterInfo c) {
    if (!c.remoteShards().isEmpty() || c.localShards().size() < c.shardCount()) {
      r.putNull("update_queue");
      return;
    }
    long pending = 0;
    for (CollectionService.LocalShard s : c.localShards()) {
      pending += s.pendingWrites();
    }
    r.putObject("update_queue").put("length", pending);
  }

  /** Qdrant's collection cluster info: where the shards and their replicas are, and their state. */
  @GetMapping("/collections/{name}/cluster")
  Mono<ResponseEntity<byte[]>> cluster(@PathVariable String name) {
    return blocking.answer(
        () -> {
          CollectionService.ClusterInfo c = service.clusterInfo(CollectionNames.validate(name));
          ObjectNode r = Json.object();
          r.put("peer_id", c.peerId());
          r.put("shard_count", c.shardCount());
          ArrayNode local = r.putArray("local_shards");
          for (CollectionService.LocalShard s : c.localShards()) {
            local
                .addObject()
                .put("shard_id", s.shardId())
                .put("points_count", s.pointsCount())
                .put("state", s.state());
          }
          ArrayNode remote = r.putArray("remote_shards");
          for (CollectionService.RemoteShard s : c.remoteShards()) {
            remote
                .addObject()
                .put("shard_id", s.shardId())
                .put("peer_id", s.peerId())
                .put("state", s.state());
          }
          r.putArray("shard_transfers");
          return r;
        });
  }

  @GetMapping("/collections/{name}/exists")
  Mono<ResponseEntity<byte[]>> exists(@PathVariable String name) {
    return blocking.answer(
        () -> {
          ObjectNode r = Json.object();
          r.put("exists", service.exists(CollectionNames.validate(name)));
          return r;
        });
  }

  @DeleteMapping("/collections/{name}")
  Mono<ResponseEntity<byte[]>> delete(@PathVariable String name) {
    return blocking.answer(
        () -> {
          boolean deleted = service.deleteCollection(CollectionNames.validate(name));
          strict.forget(name);
          return BooleanNode.valueOf(deleted);
        });
  }

  /** FlashVec extension: seal the growing segments now (Qdrant has no such call). */
  @PostMapping("/collections/{name}/flush")
  Mono<ResponseEntity<byte[]>> flush(@PathVariable String name) {
    return blocking.answer(
        () -> {
          service.flush(CollectionNames.validate(name));
          return BooleanNode.TRUE;
        });
  }

  /**
   * FlashVec extension for cold-cache benchmarks: drop the collection's index pages from this
   * process's mappings and from the page cache, so the next searches read from the device.
   */
  @PostMapping("/collections/{name}/evict")
  Mono<ResponseEntity<byte[]>> evict(@PathVariable String name) {
    return blocking.answer(
        () -> {
          int files = service.evictFromPageCache(CollectionNames.validate(name));
          ObjectNode o = Json.MAPPER.createObjectNode();
          o.put("evicted_files", files);
          return o;
        });
  }

  /**
   * Qdrant's collection update: {@code optimizers_config.indexing_threshold} (0 defers index builds
   * for a bulk load; raising it starts them) and the FlashVec extension {@code
   * wal_config.fsync_policy} ({@code always | interval | never}), {@code params.on_disk_payload}
   * and {@code params.payload.memory} (for the segments opened from then on: sealed, merged or
   * reopened at a restart), the graph settings ({@code hnsw_config.m}, {@code ef_construct}, scalar
   * {@code quantization_config}) of named vectors other than the primary one, and the primary
   * vector's {@code m} and {@code ef_construct} (top-level or its own {@code hnsw_config}):
   * persisted, and the sealed segments' graphs built with other settings rebuilt in the background
   * (ADR 0040). Other fields are refused unless their value changes nothing ({@link
   * CollectionSettings}).
   */
  @PatchMapping("/collections/{name}")
  Mono<ResponseEntity<byte[]>> update(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return blocking.answer(name, body, Json::parse, json -> update(name, json));
  }

  /** Applies a parsed collection update body. */
  private JsonNode update(String name, JsonNode json) {
    if (!json.isObject()) {
      throw new InvalidInputException("Wrong input: collection update must be a JSON object");
    }
    CollectionSettings.quantizationAlias(json, false);
    Integer threshold = indexingThreshold(json);
    FsyncPolicy fsync = fsyncPolicy(json);
    CollectionSettings.checkUpdate(
        json,
        () -> service.describe(CollectionNames.validate(name)).config(),
        () -> walMegabytes(service.settings(CollectionNames.validate(name)).tuning()),
        server());
    JsonNode threads = Requests.member(json, "optimizers_config", "max_optimization_threads");
    if (threads != null) {
      int current = service.settings(CollectionNames.validate(name)).tuning().optimizationJobs();
      if (CollectionSettings.optimizationJobs(threads) != current) {
        throw CollectionSettings.refused(
            "optimizers_config.max_optimization_threads",
            threads,
            "is set when the collection is created ("
                + (current == 0 ? "auto" : Integer.toString(current))
                + "); it cannot be changed");
      }
    }
    JsonNode retain = Requests.member(json, "wal_config", "wal_retain_closed");
    if (retain != null) {
      int current = service.settings(CollectionNames.validate(name)).tuning().walRetainClosed();
      if (!retain.isIntegralNumber() || retain.longValue() != current) {
        throw CollectionSettings.refused(
            "wal_config.wal_retain_closed",
            retain,
            "is set when the collection is created (" + current + "); it cannot be changed");
      }
    }
    Map<String, FieldIndex> indexes =
        CollectionSettings.fieldIndexUpdates(
            json, service.settings(CollectionNames.validate(name)).config());
    if (!indexes.isEmpty() && service.peers() != null) {
      String field = indexes.keySet().iterator().next();
      throw CollectionSettings.refused(
          "vectors." + field,
          json.get("vectors").get(field),
          "changing a vector's graph settings is not supported in cluster mode yet");
    }
    IndexParams primaryIndex =
        CollectionSettings.primaryIndexUpdate(
            json, service.settings(CollectionNames.validate(name)).config());
    if (primaryIndex != null && service.peers() != null) {
      throw CollectionSettings.refused(
          "hnsw_config",
          json.has("hnsw_config") ? json.get("hnsw_config") : json.get("vectors"),
          "changing the graph settings (m, ef_construct) is not supported in cluster mode yet");
    }
    Integer givenSegments = CollectionSettings.updatedSegmentNumber(json);
    // a change: the shards merge down to it, or stop merging below the tiers (ADR 0043)
    Integer segmentNumber =
        givenSegments == null
                || givenSegments
                    == service.settings(CollectionNames.validate(name)).tuning().segmentNumber()
            ? null
            : givenSegments;
    if (segmentNumber != null && service.peers() != null) {
      throw CollectionSettings.refused(
          "optimizers_config.default_segment_number",
          json.get("optimizers_config").get("default_segment_number"),
          "cannot be changed in cluster mode yet (the shard protocol does not carry it to"
              + " replicas)");
    }
    JsonNode params = json.get("params");
    Boolean onDiskPayload =
        params != null && params.isObject()
            ? CollectionSettings.onDiskPayload(params, "params.")
            : null;
    JsonNode strictMode = json.get("strict_mode_config");
    StrictMode strictDiff =
        strictMode == null || strictMode.isNull()
            ? null
            : parseStrictMode(strictMode, service.settings(name).config());
    JsonNode metadata = json.get("metadata");
    ObjectNode metadataDiff =
        metadata != null && metadata.isObject() ? (ObjectNode) metadata : null;
    Map<String, Boolean> modifiers = CollectionSettings.sparseModifiers(json);
    java.util.Set<String> memory =
        CollectionSettings.memoryGiven(json, service.settings(name).config(), true);
    JsonNode quantization = json.get("quantization_config");
    // "Disabled" (the only collection-level value an update takes) stops showing the collection's
    boolean quantizationDisabled =
        quantization != null
            && quantization.isString()
            && service.settings(name).tuning().quantizationConfig() != null;
    service.updateCollection(name, threshold, fsync, onDiskPayload);
    if (strictDiff != null
        || metadataDiff != null
        || !modifiers.isEmpty()
        || !memory.isEmpty()
        || segmentNumber != null
        || quantizationDisabled) {
      service.updateCollection(
          name,
          t -> {
            CollectionTuning next = t;
            if (quantizationDisabled) {
              next = next.withQuantizationConfig(null);
            }
            if (segmentNumber != null) {
              next = next.withSegmentNumber(segmentNumber);
            }
            if (!memory.isEmpty()) {
              next = next.withMemoryShown(memory);
            }
            if (strictDiff != null) {
              StrictMode now =
                  t.strictMode() == null ? StrictMode.NONE : StrictMode.fromJson(t.strictMode());
              next = next.withStrictMode(now.merge(strictDiff).toJson().toString());
            }
            if (metadataDiff != null) {
              next = next.withMetadata(mergeMetadata(t.metadata(), metadataDiff));
            }
            if (!modifiers.isEmpty()) {
              java.util.Set<String> idf = new java.util.TreeSet<>(t.sparseIdf());
              modifiers.forEach(
                  (f, on) -> {
                    if (on) {
                      idf.add(f);
                    } else {
                      idf.remove(f);
                    }
                  });
              next = next.withSparseIdf(idf);
            }
            return next;
          });
      if (strictDiff != null) {
        strict.forget(name); // its rate limiters start full again, as Qdrant's do
      }
    }
    if (!indexes.isEmpty() || primaryIndex != null) {
      // persisted with the config; open sealed segments rebuild those graphs in the background
      service.changeVectors(
          name,
          c -> {
            // the diff applied to the config as it is now, so that concurrent updates of m and of
            // ef_construct both hold
            IndexParams now =
                primaryIndex == null ? null : CollectionSettings.primaryIndexUpdate(json, c);
            CollectionConfig next = now == null ? c : c.withIndex(now);
            for (Map.Entry<String, FieldIndex> e : indexes.entrySet()) {
              next = next.withDenseIndex(e.getKey(), e.getValue());
            }
            return next;
          });
    }
    return BooleanNode.TRUE;
  }

  /**
   * A request's {@code strict_mode_config}. A payload size limit needs the payload bytes of the
   * collection, which only a standalone server adds up so far.
   */
  private StrictMode parseStrictMode(JsonNode n, CollectionConfig config) {
    java.util.Set<String> multi = new java.util.TreeSet<>();
    config.multivectors().keySet().forEach(f -> multi.add(CollectionConfig.shownName(f)));
    StrictMode m =
        StrictMode.parse(n, "strict_mode_config", config.sparseVectors().keySet(), multi);
    if (m.limit(StrictMode.Field.MAX_COLLECTION_PAYLOAD_SIZE_BYTES) >= 0
        && service.peers() != null) {
      throw new InvalidInputException(
          "Wrong input: strict_mode_config.max_collection_payload_size_bytes: is not supported in"
              + " cluster mode yet (a proxy does not know the shards' payload bytes)");
    }
    return m;
  }

  /**
   * Qdrant's update of a collection's metadata: each key of {@code diff} replaces the stored one,
   * and a key set to {@code null} is removed.
   */
  static String mergeMetadata(String current, ObjectNode diff) {
    ObjectNode merged =
        current == null
            ? Json.object()
            : (ObjectNode) Json.parse(current.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    for (java.util.Map.Entry<String, JsonNode> e : diff.properties()) {
      if (e.getValue().isNull()) {
        merged.remove(e.getKey());
      } else {
        merged.set(e.getKey(), e.getValue());
      }
    }
    return merged.toString();
  }

  /**
   * FlashVec extension: compact the collection's segments now, in the background (merge small
   * segments, drop deleted points). {@code ?force=false} only does what the thresholds ask for.
   */
  @PostMapping("/collections/{name}/compact")
  Mono<ResponseEntity<byte[]>> compact(
      @PathVariable String name,
      @org.springframework.web.bind.annotation.RequestParam(defaultValue = "true") boolean force) {
    return blocking.answer(
        () -> {
          service.compact(CollectionNames.validate(name), force);
          return BooleanNode.TRUE;
        });
  }

  /**
   * Qdrant's create field index: {@code {"field_name": "tenant", "field_schema": "keyword"}} or
   * with a parameter object ({@code {"type": "text", "tokenizer": "word", ...}}). With {@code
   * ?wait=true} it returns once every segment's index is built.
   */
  @PutMapping("/collections/{name}/index")
  Mono<ResponseEntity<byte[]>> createIndex(
      @PathVariable String name,
      @org.springframework.web.bind.annotation.RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return blocking.answer(name, body, Json::parse, json -> createIndex(name, json, wait));
  }

  /** Creates the payload index a parsed create field index body describes. */
  private ObjectNode createIndex(String name, JsonNode json, boolean wait) {
    if (!json.isObject()) {
      throw new InvalidInputException("Wrong input: index request must be a JSON object");
    }
    strict.check(name, StrictModeGuard.Route.CREATE_INDEX, json);
    JsonNode field = json.get("field_name");
    if (field == null || !field.isString()) {
      throw Requests.invalid("field_name must be a string", "field_name", field);
    }
    PayloadFieldSchema f = PayloadFieldSchema.parse(field.asString(), json.get("field_schema"));
    return io.flashvec.api.points.PointsController.update(
        service.createPayloadIndex(name, f, wait));
  }

  /** Qdrant's delete field index. */
  @DeleteMapping("/collections/{name}/index/{field}")
  Mono<ResponseEntity<byte[]>> deleteIndex(
      @PathVariable String name,
      @PathVariable String field,
      @org.springframework.web.bind.annotation.RequestParam(defaultValue = "false") boolean wait) {
    return blocking.answer(
        () ->
            io.flashvec.api.points.PointsController.update(
                service.deletePayloadIndex(CollectionNames.validate(name), field, wait)));
  }

  /**
   * Qdrant's create named vector: {@code {"dense": {"size": N, "distance": ..., ...}}} adds a dense
   * vector to an existing collection, stored beside the points and searched exactly (ADR 0034);
   * points written so far do not have it. The same name with the same size, metric and kind is a
   * no-op, as in Qdrant. Sparse vectors ({@code {"sparse": {...}}}) cannot be added yet (400).
   */
  @PutMapping("/collections/{name}/vectors/{vector}")
  Mono<ResponseEntity<byte[]>> createVector(
      @PathVariable String name,
      @PathVariable String vector,
      @org.springframework.web.bind.annotation.RequestParam(required = false) Boolean wait,
      @RequestBody(required = false) byte[] body) {
    return blocking.answer(name, body, Json::parse, json -> createVector(name, vector, json));
  }

  private ObjectNode createVector(String name, String vector, JsonNode json) {
    if (!json.isObject()) {
      throw new InvalidInputException("Wrong input: vector config must be a JSON object");
    }
    CollectionNames.validate(name);
    CollectionConfig.checkDeclaredName(vector);
    JsonNode dense = json.get("dense");
    JsonNode sparse = json.get("sparse");
    if (dense != null && sparse != null) {
      throw Requests.invalid("give either dense or sparse, not both", "vector config", json);
    }
    if (sparse != null) {
      throw CollectionSettings.refused(
          "sparse",
          sparse,
          "only dense vectors can be added to an existing collection; declare sparse vectors at"
              + " creation");
    }
    for (String f : json.propertyNames()) {
      if (!f.equals("dense")) {
        throw Requests.invalid(
            "unknown field `" + f + "`, expected `dense` or `sparse`", f, json.get(f));
      }
    }
    if (dense == null) {
      throw Requests.invalid(
          "missing `dense` ({\"dense\": {\"size\": N, \"distance\": ...}})", "dense", null);
    }
    DenseVectorParams params = CollectionSettings.addedDenseVector(dense, "dense");
    service.changeVectors(
        name,
        c -> {
          String key = c.hasVectorNamed(vector) ? c.denseKey(vector) : null;
          if (key != null && c.denseField(key).equals(params)) {
            return c; // Qdrant's idempotent create: same name, same config
          }
          return c.withDenseVector(vector, params);
        });
    return io.flashvec.api.points.PointsController.update(new Collection.UpdateResult(0, true));
  }

  /**
   * Qdrant's delete named vector. A vector beside the points leaves the config; the values the
   * segments and the WAL hold under its storage key stay unreachable, also by a vector created
   * later with the same name. The first declared vector (the graph's) is retired: no request
   * reaches it or shows it, and its graph stays for the points that have it.
   */
  @DeleteMapping("/collections/{name}/vectors/{vector}")
  Mono<ResponseEntity<byte[]>> deleteVector(
      @PathVariable String name,
      @PathVariable String vector,
      @org.springframework.web.bind.annotation.RequestParam(required = false) Boolean wait) {
    return blocking.answer(
        () -> {
          service.changeVectors(CollectionNames.validate(name), c -> c.withoutDenseVector(vector));
          return io.flashvec.api.points.PointsController.update(
              new Collection.UpdateResult(0, true));
        });
  }

  /** The server-wide settings some collection fields must equal. */
  private CollectionSettings.Server server() {
    return new CollectionSettings.Server(props.compaction().deletedFraction());
  }

  private static Integer indexingThreshold(JsonNode body) {
    JsonNode t = Requests.member(body, "optimizers_config", "indexing_threshold");
    if (t == null) {
      return null;
    }
    if (!t.isIntegralNumber()
        || !t.canConvertToLong()
        || t.longValue() < 0
        || t.longValue() > Integer.MAX_VALUE) {
      throw Requests.invalid(
          "optimizers_config.indexing_threshold must be a non-negative integer",
          "indexing_threshold",
          t);
    }
    return t.intValue();
  }

  private static FsyncPolicy fsyncPolicy(JsonNode body) {
    JsonNode p = Requests.member(body, "wal_config", "fsync_policy");
    if (p == null) {
      return null;
    }
    try {
      if (!p.isString()) {
        throw new IllegalArgumentException("not a string");
      }
      return FsyncPolicy.parse(p.asString());
    } catch (IllegalArgumentException e) {
      throw Requests.invalid(
          "wal_config.fsync_policy must be always, interval or never", "fsync_policy", p);
    }
  }

  static CollectionConfig parseConfig(JsonNode body) {
    if (!body.isObject()) {
      throw new InvalidInputException("Wrong input: collection config must be a JSON object");
    }
    JsonNode vectors = body.get("vectors");
    Map<String, SparseVectorParams> sparse = CollectionSettings.sparseVectors(body);
    boolean noDense =
        vectors == null || vectors.isNull() || (vectors.isObject() && vectors.isEmpty());
    if (noDense && !sparse.isEmpty()) {
      // Qdrant's sparse-only collection: no primary vector, every field beside the points
      return withoutPrimary(body, sparse, Map.of());
    }
    if (vectors == null || !vectors.isObject()) {
      throw new InvalidInputException(
          "Wrong input: missing field `vectors` ({\"size\": N, \"distance\": \"Cosine|Dot|Euclid\"})");
    }
    String vectorName = "";
    Map<String, DenseVectorParams> others = new java.util.LinkedHashMap<>();
    JsonNode unnamedMulti = vectors.get("multivector_config");
    boolean unnamedMultivector = unnamedMulti != null && !unnamedMulti.isNull();
    if (vectors.has("size")
        && (unnamedMultivector
            || !distance(vectors).graphable()
            || CollectionSettings.scalar(vectors, body)
            || CollectionSettings.converted(vectors))) {
      // Qdrant's unnamed vector as a multivector, of a metric the diskann graph does not index
      // (Manhattan) or with scalar quantization: the collection's one dense field, indexed by a
      // graph of its own or searched exactly, and no primary vector
      if (unnamedMultivector) {
        CollectionSettings.multivectorConfig(unnamedMulti, "vectors.multivector_config");
      }
      JsonNode onDisk = vectors.get("on_disk");
      return withoutPrimary(
          body,
          sparse,
          Map.of(
              CollectionConfig.UNNAMED_EXACT,
              new DenseVectorParams(
                  size(vectors),
                  distance(vectors),
                  onDisk != null && onDisk.isBoolean() && onDisk.asBoolean(),
                  unnamedMultivector,
                  CollectionSettings.fieldIndex(
                      vectors, body, "vectors.", unnamedMultivector, distance(vectors)),
                  CollectionSettings.datatype(vectors, "vectors.", distance(vectors)))));
    }
    if (!vectors.has("size")) {
      // Qdrant's named form: {"name": {"size": N, ...}, ...}; "" is the unnamed vector. The first
      // declared single Cosine, Dot or Euclid vector without scalar quantization or a datatype
      // is the primary one (the diskann graph); the others have graphs of their own in sealed
      // segments, or are searched exactly (multivectors, Manhattan). Without a primary candidate
      // the collection has no primary vector.
      if (vectors.isEmpty()) {
        throw Requests.invalid(
            "vectors must name at least one vector, or the collection declare sparse_vectors",
            "vectors",
            vectors);
      }
      JsonNode primary = null;
      for (Map.Entry<String, JsonNode> e : vectors.properties()) {
        JsonNode v = e.getValue();
        if (e.getKey().equals(CollectionConfig.UNNAMED_EXACT)) {
          throw Requests.invalid("a vector name must not be a NUL character", "vectors", vectors);
        }
        if (!e.getKey().isEmpty()) {
          CollectionConfig.checkDeclaredName(e.getKey());
        }
        if (v == null || !v.isObject()) {
          throw Requests.invalid(
              "vectors." + e.getKey() + " must be an object {\"size\": N, \"distance\": ...}",
              "vectors." + e.getKey(),
              v);
        }
        JsonNode multiConfig = v.get("multivector_config");
        if (primary == null
            && (multiConfig == null || multiConfig.isNull())
            && distance(v).graphable()
            && !CollectionSettings.scalar(v, body)
            && !CollectionSettings.converted(v)) {
          vectorName = e.getKey();
          primary = v;
        } else {
          JsonNode onDisk = v.get("on_disk");
          JsonNode multi = v.get("multivector_config");
          boolean multivector = multi != null && !multi.isNull();
          if (multivector) {
            CollectionSettings.multivectorConfig(
                multi, "vectors." + e.getKey() + ".multivector_config");
          }
          others.put(
              e.getKey(),
              new DenseVectorParams(
                  size(v),
                  distance(v),
                  onDisk != null && onDisk.isBoolean() && onDisk.asBoolean(),
                  multivector,
                  CollectionSettings.fieldIndex(
                      v, body, "vectors." + e.getKey() + ".", multivector, distance(v)),
                  CollectionSettings.datatype(v, "vectors." + e.getKey() + ".", distance(v))));
        }
      }
      if (primary == null) {
        return withoutPrimary(body, sparse, others);
      }
      vectors = primary;
    }
    int size = size(vectors);
    Distance distance = distance(vectors);
    int shards = atLeast(body, "", "shard_number", 1, 1, CollectionConfig.MAX_SHARDS);
    int replicas = atLeast(body, "", "replication_factor", 1, 1, 16);
    // 0 is Qdrant's 422; other values than 1 are refused with the other unhonoured settings
    atLeast(body, "", "write_consistency_factor", 1, 1, 16);
    IndexParams index = IndexParams.DEFAULT;
    // the vector's own hnsw_config overrides the collection's, as in Qdrant
    index = hnsw(Requests.optionalObject(body, "hnsw_config"), index);
    index = hnsw(Requests.optionalObject(vectors, "hnsw_config"), index);
    boolean noGraph = index.type().equals(IndexParams.FLAT);
    JsonNode idx = Requests.optionalObject(body, "index");
    if (idx != null) {
      JsonNode type = idx.get("type");
      if (type != null && !type.isNull() && !type.isString()) {
        throw Requests.invalid("index.type must be a string", "type", type);
      }
      float alpha = index.alpha();
      JsonNode a = idx.get("alpha");
      if (a != null && !a.isNull()) {
        if (!a.isNumber()) {
          throw Requests.invalid("index.alpha must be a number", "alpha", a);
        }
        alpha = (float) a.doubleValue();
      }
      index =
          new IndexParams(
              type == null || type.isNull()
                  ? index.type()
                  : type.asString().toLowerCase(Locale.ROOT),
              Requests.nonNegativeInt(idx, "max_degree", index.maxDegree(), 512),
              Requests.nonNegativeInt(idx, "build_search_list", index.buildSearchList(), 10_000),
              alpha,
              Requests.nonNegativeInt(idx, "pq_subspaces", 0, CollectionConfig.MAX_DIMENSION));
    }
    boolean typeGiven = idx != null && idx.hasNonNull("type");
    if (!typeGiven && index.type().equals(IndexParams.DISKANN) && inMemory(body, vectors)) {
      // Qdrant's vectors or HNSW graph in RAM: the same graph, held in memory (index type hnsw)
      index =
          new IndexParams(
              IndexParams.HNSW,
              index.maxDegree(),
              index.buildSearchList(),
              index.alpha(),
              index.pqSubspaces());
    }
    if (noGraph && !index.type().equals(IndexParams.FLAT)) {
      throw new InvalidInputException(
          "Wrong input: hnsw_config.m 0 (no graph, exact search) conflicts with index.type "
              + index.type()
              + " [m=0]");
    }
    return new CollectionConfig(
        size, distance, shards, replicas, index, sparse, vectorName, others);
  }

  /**
   * Whether a create body asks for the primary vector in memory as Qdrant says it: {@code
   * vectors.on_disk: false}, or {@code hnsw_config.on_disk: false} (the vector's own, else the
   * collection's), which is what {@code GET} of a default Qdrant collection shows and
   * qdrant-client's {@code migrate} sends back.
   */
  private static boolean inMemory(JsonNode body, JsonNode vectors) {
    if (isFalse(vectors.get("on_disk"))) {
      return true;
    }
    JsonNode own = Requests.member(vectors, "hnsw_config", "on_disk");
    if (own != null && !own.isNull()) {
      return isFalse(own);
    }
    return isFalse(Requests.member(body, "hnsw_config", "on_disk"));
  }

  private static boolean isFalse(JsonNode n) {
    return n != null && n.isBoolean() && !n.booleanValue();
  }

  /**
   * A collection without a primary dense vector ({@link CollectionConfig#withoutPrimary}): its
   * sparse fields, searched exactly. Graph settings have nothing to apply to and are refused, as a
   * setting FlashVec would not honour.
   */
  private static CollectionConfig withoutPrimary(
      JsonNode body, Map<String, SparseVectorParams> sparse, Map<String, DenseVectorParams> dense) {
    int shards = atLeast(body, "", "shard_number", 1, 1, CollectionConfig.MAX_SHARDS);
    int replicas = atLeast(body, "", "replication_factor", 1, 1, 16);
    atLeast(body, "", "write_consistency_factor", 1, 1, 16);
    // hnsw_config is validated as for any collection (Qdrant keeps it for dense vectors added
    // later); FlashVec keeps it for the description only
    IndexParams index = hnsw(Requests.optionalObject(body, "hnsw_config"), IndexParams.DEFAULT);
    JsonNode idx = Requests.optionalObject(body, "index");
    if (idx != null && !idx.isEmpty()) {
      throw new InvalidInputException(
          "Wrong input: index settings need a single dense vector; the collection has only"
              + " sparse vectors or multivectors [index="
              + idx
              + "]");
    }
    return CollectionConfig.withoutPrimary(shards, replicas, index, sparse, dense);
  }

  /** A vector's {@code size}, 1 to the maximum dimension. */
  private static int size(JsonNode vectors) {
    JsonNode size = vectors.get("size");
    if (size == null || !size.isIntegralNumber()) {
      throw Requests.invalid("vectors.size must be an integer", "size", size);
    }
    if (size.bigIntegerValue().signum() <= 0
        || size.bigIntegerValue()
                .compareTo(java.math.BigInteger.valueOf(CollectionConfig.MAX_DIMENSION))
            > 0) {
      throw new InvalidInputException(
          "Wrong input: vector size out of range [size="
              + size
              + ", allowed=1.."
              + CollectionConfig.MAX_DIMENSION
              + "]");
    }
    return size.intValue();
  }

  /** A vector's {@code distance}. */
  private static Distance distance(JsonNode vectors) {
    JsonNode dist = vectors.get("distance");
    if (dist == null || !dist.isString()) {
      throw Requests.invalid(
          "vectors.distance must be one of Cosine, Dot, Euclid, Manhattan", "distance", dist);
    }
    return Distance.parse(dist.asString());
  }

  /**
   * An optional integer setting {@code field} of {@code parent} that must be at least {@code min}:
   * {@code dflt} when absent or {@code null}, a 400 when it is not a non-negative integer or above
   * {@code max}, and Qdrant's 422 when it is below {@code min}.
   *
   * @param path where {@code parent} is in the body, e.g. {@code hnsw_config.}, for the 422
   */
  static int atLeast(JsonNode parent, String path, String field, int dflt, int min, int max) {
    int v = Requests.nonNegativeInt(parent, field, dflt, max);
    if (v < min) {
      throw new ValidationException(
          path + field, "value " + v + " invalid, must be " + min + " or larger");
    }
    return v;
  }

  /**
   * Qdrant's HNSW settings translated to {@code index}: {@code m} bounds layer 0 at 2m links, so
   * the max degree is 2m; {@code ef_construct} is the build search list; {@code m} 0 (no graph) is
   * the exact {@code flat} index.
   */
  private static IndexParams hnsw(JsonNode hnsw, IndexParams index) {
    if (hnsw == null) {
      return index;
    }
    int m = Requests.nonNegativeInt(hnsw, "m", -1, 256);
    int ef = atLeast(hnsw, "hnsw_config.", "ef_construct", index.buildSearchList(), 4, 10_000);
    String type = index.type();
    int degree = index.maxDegree();
    if (m == 0) {
      type = IndexParams.FLAT;
    } else if (m > 0) {
      type = type.equals(IndexParams.FLAT) ? IndexParams.DISKANN : type;
      degree = Math.max(2, 2 * m);
    }
    return new IndexParams(type, degree, Math.max(1, ef), index.alpha(), 0);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * A collection's {@code config} as {@code GET /collections/{name}} gives it (Qdrant's {@code
   * params}, {@code hnsw_config}, {@code optimizer_config}, {@code wal_config}, ...); also the
   * {@code config} of a collection in {@code GET /telemetry}.
   */
  public static ObjectNode configJson(
      CollectionConfig c, Collection.Info info, FlashVecProperties props) {
    ObjectNode config = Json.object();
    ObjectNode params = config.putObject("params");
    ObjectNode vectors = params.putObject("vectors");
    ObjectNode named = vectors;
    if (!c.vectorName().isEmpty() && !c.primaryRetired()) {
      vectors = named.putObject(c.vectorName());
    }
    if (c.hasPrimary() && !c.primaryRetired()) {
      vectors.put("size", c.dimension());
      vectors.put("distance", c.distance().apiName());
      vectors.put("on_disk", c.index().type().equals(IndexParams.DISKANN));
      if (info.tuning().memoryShown().contains(CollectionTuning.VECTORS_MEMORY)) {
        // only diskann accepts a memory placement, and it is cold: on disk, read on demand
        vectors.put("memory", "cold");
      }
    }
    String collectionQuantization = null;
    for (Map.Entry<String, DenseVectorParams> e : c.denseVectors().entrySet()) {
      ObjectNode v =
          c.unnamedExact() ? vectors : named.putObject(CollectionConfig.shownName(e.getKey()));
      DenseVectorParams f = e.getValue();
      v.put("size", f.dimension());
      v.put("distance", f.distance().apiName());
      if (f.index().hnswConfig() != null) {
        v.set("hnsw_config", Json.parse(utf8(f.index().hnswConfig())));
      }
      if (f.index().scalar() && !f.index().quantizationInherited()) {
        v.set("quantization_config", Json.parse(utf8(f.index().quantizationConfig())));
      } else if (f.index().scalar() && collectionQuantization == null) {
        collectionQuantization = f.index().quantizationConfig();
      }
      v.put("on_disk", f.onDisk());
      if (f.datatype() != io.flashvec.index.VectorDatatype.FLOAT32) {
        v.put("datatype", f.datatype().apiName());
      }
      if (f.multivector()) {
        v.putObject("multivector_config").put("comparator", "max_sim");
      }
    }
    if (!c.sparseVectors().isEmpty()) {
      ObjectNode sparse = params.putObject("sparse_vectors");
      for (String n : c.sparseVectors().keySet()) {
        ObjectNode f = sparse.putObject(n);
        if (info.tuning().sparseIdf().contains(n)) {
          f.put("modifier", "idf");
        }
      }
    }
    params.put("shard_number", c.shardNumber());
    params.put("replication_factor", c.replicationFactor());
    params.put("write_consistency_factor", 1);
    params.put("on_disk_payload", info.tuning().onDiskPayload());
    if (info.tuning().memoryShown().contains(CollectionTuning.PAYLOAD_MEMORY)) {
      params.putObject("payload").put("memory", info.tuning().onDiskPayload() ? "cold" : "cached");
    }
    ObjectNode hnsw = config.putObject("hnsw_config");
    hnsw.put("m", CollectionSettings.describedM(c.index()));
    hnsw.put("ef_construct", c.index().buildSearchList());
    hnsw.put("full_scan_threshold", CollectionSettings.REPORTED_FULL_SCAN_THRESHOLD);
    hnsw.put("on_disk", c.index().type().equals(IndexParams.DISKANN));
    ObjectNode opt = config.putObject("optimizer_config");
    opt.put("deleted_threshold", props.compaction().deletedFraction());
    opt.put("vacuum_min_vector_number", CollectionSettings.REPORTED_VACUUM_MIN_VECTORS);
    opt.put("default_segment_number", info.tuning().segmentNumber());
    opt.putNull("max_segment_size");
    opt.putNull("memmap_threshold");
    int threshold = info.tuning().indexingThreshold();
    opt.put(
        "indexing_threshold", threshold < 0 ? props.segment().sealThresholdPoints() : threshold);
    opt.put("flush_interval_sec", CollectionSettings.REPORTED_FLUSH_INTERVAL_SEC);
    if (info.tuning().optimizationJobs() > 0) {
      opt.put("max_optimization_threads", info.tuning().optimizationJobs());
    } else {
      opt.putNull("max_optimization_threads");
    }
    ObjectNode wal = config.putObject("wal_config");
    wal.put("wal_capacity_mb", walMegabytes(info.tuning(), props));
    wal.put("wal_segments_ahead", 0);
    wal.put("wal_retain_closed", info.tuning().walRetainClosed());
    if (collectionQuantization == null) {
      collectionQuantization = info.tuning().quantizationConfig();
    }
    if (collectionQuantization != null) {
      config.set("quantization_config", Json.parse(utf8(collectionQuantization)));
    } else {
      config.putNull("quantization_config");
    }
    if (info.tuning().strictMode() != null) {
      config.set("strict_mode_config", StrictMode.fromJson(info.tuning().strictMode()).toJson());
    }
    if (info.tuning().metadata() != null) {
      config.set(
          "metadata",
          Json.parse(info.tuning().metadata().getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }
    return config;
  }

  private ObjectNode describe(CollectionService.CollectionDescription d) {
    CollectionConfig c = d.config();
    Collection.Info info = d.info();
    ObjectNode r = Json.object();
    String failure = info.buildFailure() != null ? info.buildFailure() : info.compactionFailure();
    IndexingState st = info.indexingState();
    r.put("status", CollectionStatus.of(info));
    if (failure != null) {
      r.putObject("optimizer_status").put("error", failure);
    } else {
      r.put("optimizer_status", "ok");
    }
    // As Qdrant: vectors an ANN index answers for (sealed graphs and the growing segments' live
    // graphs of the primary vector, the sealed segments' graphs of the other dense vectors);
    // none for flat, which scans (Qdrant's plain index reports none either)
    r.put(
        "indexed_vectors_count",
        (c.index().type().equals(IndexParams.FLAT) || !c.hasPrimary() ? 0 : st.indexed())
            + st.fieldVectorsIndexed());
    r.put("points_count", info.points());
    r.put("segments_count", info.segments());
    r.set("config", configJson(c, info, props));
    java.util.List<String> warnings = CollectionSettings.warnings(c, info.tuning());
    if (!warnings.isEmpty()) {
      // as Qdrant: only when there are some
      ArrayNode w = r.putArray("warnings");
      warnings.forEach(m -> w.addObject().put("message", m));
    }
    ObjectNode schema = r.putObject("payload_schema");
    for (var f : info.payloadSchema().fields().values()) {
      ObjectNode o = f.toJson();
      o.put("points", info.payloadPoints().getOrDefault(f.field(), 0L));
      schema.set(f.field(), o);
    }
    // FlashVec's own view: index settings, segments and their states, bytes.
    ObjectNode fv = r.putObject("flashvec");
    ObjectNode index = fv.putObject("index");
    index.put("type", c.index().type());
    index.put("max_degree", c.index().maxDegree());
    index.put("build_search_list", c.index().buildSearchList());
    index.put("alpha", c.index().alpha());
    index.put("pq_subspaces", c.index().pqSubspaces());
    ObjectNode optimizer = fv.putObject("optimizer");
    optimizer.put("compacting", info.compacting());
    optimizer.put("compactions", info.compactions());
    optimizer.put("deferred_builds", info.deferredBuilds());
    ObjectNode indexing = fv.putObject("indexing");
    indexing.put("indexed_points", st.indexed());
    indexing.put("backlog_points", st.backlog());
    indexing.put("frozen_pending", st.frozenPending());
    indexing.put("builds_running", st.buildsRunning());
    indexing.put("compactions_running", st.compactionsRunning());
    indexing.put("merges_planned", st.mergesPlanned());
    if (info.compactionFailure() == null) {
      optimizer.putNull("last_compaction_error");
    } else {
      optimizer.put("last_compaction_error", info.compactionFailure());
    }
    fv.put("wal_fsync_policy", info.fsyncPolicy().configName());
    fv.put("disk_bytes", info.diskBytes());
    fv.put("memory_bytes", info.memoryBytes());
    ArrayNode segs = fv.putArray("segments");
    for (Collection.SegmentInfo s : info.segmentInfos()) {
      ObjectNode o = segs.addObject();
      o.put("shard", s.shard());
      o.put("id", s.id());
      o.put("state", s.state().name().toLowerCase(Locale.ROOT));
      o.put("points", s.points());
      o.put("deleted", s.deleted());
      if (s.graphPoints() >= 0) {
        o.put("graph_points", s.graphPoints());
      }
    }
    return r;
  }
}
