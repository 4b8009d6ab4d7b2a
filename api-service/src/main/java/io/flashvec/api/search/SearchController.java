package io.flashvec.api.search;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.collections.StrictModeGuard;
import io.flashvec.api.collections.StrictModeGuard.Route;
import io.flashvec.api.metrics.SearchMetrics;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Output;
import io.flashvec.api.web.Requests;
import io.flashvec.api.web.ScoredPoints;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Record;
import io.flashvec.index.SearchStats;
import io.flashvec.index.SparseVector;
import io.flashvec.index.TooLargeException;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.SparseSearchRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code POST …/points/search}, {@code …/search/batch}, {@code …/query} and {@code …/query/batch}.
 * The query accepts a bare vector, {@code {"nearest": vector}}, or a point id (search with that
 * point's vector); every form takes a Qdrant {@code filter}. A BM25 text query is {@code {"text":
 * "..."}} with {@code using} naming a text-indexed payload key; hybrid queries fuse {@code
 * prefetch} lists of both kinds with {@code {"fusion": "rrf" | "dbsf"}} (see {@link Fusion}).
 */
@RestController
public class SearchController {

  private final CollectionService service;
  private final Blocking blocking;
  private final int maxLimit;
  private final int maxBatch;

  private final SearchMetrics metrics;
  private final UniversalQuery query;
  private final QueryGroups groups;
  private final DistanceMatrix matrix;
  private final StrictModeGuard strict;

  SearchController(
      CollectionService service,
      Blocking blocking,
      FlashVecProperties props,
      SearchMetrics metrics,
      StrictModeGuard strict) {
    this.strict = strict;
    this.service = service;
    this.metrics = metrics;
    this.blocking = blocking;
    this.maxLimit = props.limits().maxSearchLimit();
    this.maxBatch = props.limits().maxBatchPoints();
    this.query = new UniversalQuery(service, maxLimit, maxBatch, System.nanoTime());
    this.groups = new QueryGroups(service, query, maxLimit);
    this.matrix = new DistanceMatrix(query, maxLimit);
  }

  /** A parsed search with its output options. */
  private record Parsed(
      SearchRequest request,
      String using,
      SparseSearchRequest sparse,
      Output.PayloadSelector payload,
      boolean withVector,
      java.util.Set<String> vectorNames) {}

  @PostMapping("/collections/{name}/points/search")
  Mono<ResponseEntity<byte[]>> search(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return single(name, body, Json::parse, b -> planSearch(name, b));
  }

  private Plan planSearch(String name, JsonNode b) {
    strict.check(name, Route.SEARCH, b);
    Parsed p = parseSearch(name, b, "");
    return new Plan(
        p.request() != null && p.using().isEmpty() && inline(name, p.request()),
        stats -> run(name, p, stats));
  }

  /** The work of a search request: its result, its costs added to {@code stats}. */
  @FunctionalInterface
  private interface Searches {
    JsonNode run(SearchStats stats);
  }

  /** A single search planned on the event loop: whether it may run there, and its work. */
  private record Plan(boolean inline, Searches work) {}

  /**
   * A single search or query: on the event loop the name is checked, the body parsed by {@code
   * parse} and planned by {@code plan}; the work runs there too when the plan says so ({@link
   * Blocking#call(boolean, java.util.concurrent.Callable)}), else off it.
   */
  private Mono<ResponseEntity<byte[]>> single(
      String name, byte[] body, Function<byte[], JsonNode> parse, Function<JsonNode, Plan> plan) {
    long t0 = System.nanoTime();
    return Mono.defer(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = parse.apply(body);
          Plan p = plan.apply(b);
          return blocking.call(p.inline(), () -> respond(name, t0, b, 1, p.work()));
        });
  }

  /**
   * A batch of searches or queries, off the event loop: {@code work} runs the body's {@code
   * searches} ({@link #batchOf}) into one result per search.
   */
  private Mono<ResponseEntity<byte[]>> batch(
      String name, byte[] body, Route route, BiFunction<JsonNode, SearchStats, ArrayNode> work) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parse(body);
          Requests.refuseUnknown(b, Requests.Fields.BATCH, "");
          JsonNode searches = batchOf(b);
          strict.check(name, route, b);
          return respond(name, t0, b, searches.size(), stats -> work.apply(searches, stats));
        });
  }

  /** Results beyond which a search leaves the event loop (it then reads many records). */
  private static final int INLINE_MAX_RESULTS = 100;

  /** Search lists beyond which a search leaves the event loop. */
  private static final int INLINE_MAX_SEARCH_LIST = 1000;

  /**
   * Whether a search may run on the event loop ({@link Blocking#call(boolean,
   * java.util.concurrent.Callable)}): a plain ANN search, with no filter (an unindexed one may
   * evaluate every payload) and not exact (a scan), of a collection whose searches have been served
   * from memory lately.
   */
  private boolean inline(String name, SearchRequest r) {
    return r.filter() == null
        && !r.params().exact()
        && r.limit() + r.offset() <= INLINE_MAX_RESULTS
        && r.params().searchList() <= INLINE_MAX_SEARCH_LIST
        && r.params().rerankK() <= INLINE_MAX_SEARCH_LIST
        && service.searchesServedFromMemory(name);
  }

  /** {@link #inline} for a {@code points/query} body: a vector, alone or as {@code nearest}. */
  private boolean inlineQuery(String name, JsonNode b) {
    if (!b.isObject() || b.has("prefetch") || b.has("filter") || b.has("using")) {
      return false;
    }
    JsonNode q = b.get("query");
    if (q != null && q.isObject() && q.size() == 1) {
      q = q.get("nearest");
    }
    JsonNode params = b.path("params");
    return q != null
        && q.isArray()
        && !params.path("exact").asBoolean(false)
        && params.path("search_list").asInt(0) <= INLINE_MAX_SEARCH_LIST
        && params.path("hnsw_ef").asInt(0) <= INLINE_MAX_SEARCH_LIST
        && params.path("rerank_k").asInt(0) <= INLINE_MAX_SEARCH_LIST
        && params.path("quantization").path("oversampling").isMissingNode()
        && b.path("limit").asInt(10) + b.path("offset").asInt(0) <= INLINE_MAX_RESULTS
        && service.searchesServedFromMemory(name);
  }

  @PostMapping("/collections/{name}/points/search/batch")
  Mono<ResponseEntity<byte[]>> searchBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return batch(
        name, body, Route.SEARCH_BATCH, (searches, stats) -> searchAll(name, searches, stats));
  }

  /** Every search of a batch is parsed before the first runs. */
  private ArrayNode searchAll(String name, JsonNode searches, SearchStats stats) {
    List<Parsed> parsed = new ArrayList<>();
    for (int i = 0; i < searches.size(); i++) {
      parsed.add(parseSearch(name, searches.get(i), "searches[" + i + "]."));
    }
    ArrayNode out = Json.array();
    for (Parsed p : parsed) {
      out.add(run(name, p, stats));
    }
    return out;
  }

  @PostMapping("/collections/{name}/points/query")
  Mono<ResponseEntity<byte[]>> query(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return single(name, body, Json::parseOptional, b -> planQuery(name, b));
  }

  private Plan planQuery(String name, JsonNode b) {
    strict.check(name, Route.QUERY, b);
    return new Plan(inlineQuery(name, b), stats -> runQuery(name, b, "", stats));
  }

  @PostMapping("/collections/{name}/points/query/batch")
  Mono<ResponseEntity<byte[]>> queryBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return batch(
        name, body, Route.QUERY_BATCH, (searches, stats) -> queryAll(name, searches, stats));
  }

  private ArrayNode queryAll(String name, JsonNode searches, SearchStats stats) {
    ArrayNode out = Json.array();
    for (int i = 0; i < searches.size(); i++) {
      out.add(runQuery(name, searches.get(i), "searches[" + i + "].", stats));
    }
    return out;
  }

  private JsonNode batchOf(JsonNode b) {
    JsonNode searches = b.get("searches");
    if (searches == null || !searches.isArray()) {
      throw new InvalidInputException("Wrong input: batch needs `searches`, an array of requests");
    }
    if (searches.size() > maxBatch) {
      throw new TooLargeException(
          "Payload too large: too many searches in one batch [searches="
              + searches.size()
              + ", max="
              + maxBatch
              + "]");
    }
    return searches;
  }

  /**
   * Runs {@code work}, records its costs in the metrics and, when the body asks with {@code
   * "with_stats": true}, returns them as {@code flashvec_stats} beside {@code result} (off by
   * default so Qdrant clients see their usual envelope).
   */
  private ResponseEntity<byte[]> respond(
      String name, long t0, JsonNode body, int searches, Searches work) {
    SearchStats stats = new SearchStats();
    JsonNode result = work.run(stats);
    metrics.record(name, searches, stats);
    if (stats.partial) {
      return PartialResults.mark(respondComplete(result, t0, body, stats, searches));
    }
    return respondComplete(result, t0, body, stats, searches);
  }

  private ResponseEntity<byte[]> respondComplete(
      JsonNode result, long t0, JsonNode body, SearchStats stats, int searches) {
    if (!Requests.bool(body, "with_stats", false)) {
      return Json.ok(result, t0);
    }
    ObjectNode extra = Json.object();
    ObjectNode o = extra.putObject("flashvec_stats");
    o.put("searches", searches);
    o.put("segments", stats.segments);
    o.put("nodes_visited", stats.visited);
    o.put("nodes_expanded", stats.expanded);
    o.put("reranked", stats.reranked);
    o.put("distance_computations", stats.distanceComputations);
    o.put("pages_read", stats.pagesRead);
    o.put("bytes_read", stats.bytesRead());
    o.put("node_cache_hits", stats.nodeCacheHits);
    return Json.ok(result, t0, extra);
  }

  private JsonNode run(String name, Parsed p, SearchStats stats) {
    List<Record> hits =
        p.sparse() != null
            ? service.sparseSearch(name, p.sparse())
            : UniversalQuery.search(service, name, p.using(), p.request(), stats);
    return ScoredPoints.node(
        Output.selectVectors(hits, p.vectorNames(), service.config(name)),
        p.payload(),
        p.withVector());
  }

  /** A {@code limit} of 0, which Qdrant's validation answers with 422. */
  static void zeroLimit(JsonNode b, String prefix) {
    JsonNode limit = b.get("limit");
    if (limit != null && limit.isIntegralNumber() && limit.asLong(1) == 0) {
      throw new io.flashvec.api.web.ValidationException(
          prefix + "limit", "value 0 invalid, must be 1 or larger");
    }
  }

  private Parsed parseSearch(String name, JsonNode b, String prefix) {
    if (!b.isObject()) {
      throw new InvalidInputException(
          "Wrong input: " + prefix + "search request must be an object");
    }
    Requests.refuseUnknown(b, Requests.Fields.SEARCH, prefix);
    if (!b.has("vector")) {
      throw new InvalidInputException("Wrong input: missing field `" + prefix + "vector`");
    }
    JsonNode vector = b.get("vector");
    if (!b.has("limit")) {
      throw new InvalidInputException("Wrong input: missing field `" + prefix + "limit`");
    }
    zeroLimit(b, prefix);
    CollectionConfig config = service.config(name);
    if (vector.isObject() && vector.has("name")) {
      // Qdrant's NamedVector / NamedSparseVector
      String field = vector.path("name").asString("");
      JsonNode sv = vector.get("vector");
      String internal = config.internalName(field);
      if (config.isDense(internal)) {
        return build(name, b, Requests.vector(sv, prefix + "vector.vector"), 10, prefix, internal);
      }
      if (!Requests.isSparse(sv)) {
        throw Requests.invalid(
            "a query of the sparse vector " + field + " must be a sparse vector {indices, values}",
            prefix + "vector.vector",
            sv);
      }
      SparseVector q = Requests.sparseVector(sv, prefix + "vector.vector");
      Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", false);
      boolean withVector = Output.withVector(b, "with_vector", false);
      SparseSearchRequest req =
          new SparseSearchRequest(
              field,
              q,
              Requests.limit(b, "limit", 10, maxLimit, () -> service.count(name)),
              Requests.nonNegativeInt(b, "offset", 0, maxLimit),
              Requests.filter(b, prefix),
              Requests.optionalFloat(b, "score_threshold"),
              sel.any(),
              withVector,
              Requests.idfCorpus(b, prefix));
      Requests.params(b);
      return new Parsed(null, "", req, sel, withVector, Output.vectorNames(b, "with_vector"));
    }
    if (!config.hasPrimary()) {
      throw config.missingDefault();
    }
    if (!config.vectorName().isEmpty()) {
      throw CollectionConfig.notExisting("");
    }
    float[] v = Requests.vector(vector, prefix + "vector");
    return build(name, b, v, 10, prefix, "");
  }

  private Parsed build(
      String name, JsonNode b, float[] v, int defaultLimit, String prefix, String using) {
    if (Requests.idfCorpus(b, prefix) != null) {
      throw new InvalidInputException(
          "Wrong input: "
              + prefix
              + "params.idf applies to a sparse vector with the idf modifier, not to a dense"
              + " one");
    }
    int limit = Requests.limit(b, "limit", defaultLimit, maxLimit, () -> service.count(name));
    int offset = Requests.nonNegativeInt(b, "offset", 0, maxLimit);
    Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", false);
    boolean withVector = Output.withVector(b, "with_vector", false);
    SearchRequest req =
        new SearchRequest(
            v,
            limit,
            offset,
            Requests.optionalFloat(b, "score_threshold"),
            Requests.params(b),
            sel.any(),
            withVector,
            Requests.filter(b, prefix));
    return new Parsed(req, using, null, sel, withVector, Output.vectorNames(b, "with_vector"));
  }

  private ObjectNode runQuery(String name, JsonNode b, String prefix, SearchStats stats) {
    UniversalQuery.Node node = query.parse(b, prefix, new int[1], () -> service.count(name));
    // after the query's own checks, whose messages Qdrant gives first (it ignores the field)
    Requests.refuseUnknown(b, Requests.Fields.QUERY, prefix);
    Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", false);
    boolean withVector = Output.withVector(b, "with_vector", false);
    int offset = Requests.nonNegativeInt(b, "offset", 0, maxLimit);
    List<Record> hits =
        query.run(name, node, null, offset, new UniversalQuery.Fetch(sel.any(), withVector), stats);
    ObjectNode out = Json.object();
    out.set(
        "points",
        ScoredPoints.node(
            Output.selectVectors(
                hits.subList(Math.min(offset, hits.size()), hits.size()),
                Output.vectorNames(b, "with_vector"),
                service.config(name)),
            sel,
            withVector));
    return out;
  }

  @PostMapping("/collections/{name}/points/query/groups")
  Mono<ResponseEntity<byte[]>> queryGroups(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return grouped(name, body, Requests.Fields.QUERY_GROUPS, (b, prefix) -> b);
  }

  /**
   * A grouped request: the query {@code translate} makes of the body, grouped by {@link #groups}.
   */
  private Mono<ResponseEntity<byte[]>> grouped(
      String name,
      byte[] body,
      java.util.Set<String> fields,
      BiFunction<JsonNode, String, JsonNode> translate) {
    return single(
        name,
        body,
        Json::parse,
        b -> {
          Requests.refuseUnknown(b, fields, "");
          JsonNode q = translate.apply(b, "");
          strict.check(name, Route.QUERY_GROUPS, q);
          return new Plan(
              false, stats -> groups.run(name, q, query.parse(q, "", new int[1]), stats));
        });
  }

  /**
   * Qdrant's older recommend API ({@code points/recommend}, still served by Qdrant and used by
   * qdrant-client up to 1.12): {@code positive}, {@code negative} and {@code strategy} beside the
   * search's fields, answered as the query API's {@code recommend} query, a list of scored points.
   */
  @PostMapping("/collections/{name}/points/recommend")
  Mono<ResponseEntity<byte[]>> recommend(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return legacy(name, body, Requests.Fields.RECOMMEND, SearchController::recommendQuery);
  }

  @PostMapping("/collections/{name}/points/recommend/batch")
  Mono<ResponseEntity<byte[]>> recommendBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return legacyBatch(name, body, Requests.Fields.RECOMMEND, SearchController::recommendQuery);
  }

  @PostMapping("/collections/{name}/points/recommend/groups")
  Mono<ResponseEntity<byte[]>> recommendGroups(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return grouped(name, body, Requests.Fields.RECOMMEND_GROUPS, SearchController::recommendQuery);
  }

  /**
   * Qdrant's older discovery API ({@code points/discover}): {@code target} and {@code context}
   * pairs, answered as the query API's {@code discover} query (a {@code context} query without a
   * target).
   */
  @PostMapping("/collections/{name}/points/discover")
  Mono<ResponseEntity<byte[]>> discover(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return legacy(name, body, Requests.Fields.DISCOVER, SearchController::discoverQuery);
  }

  @PostMapping("/collections/{name}/points/discover/batch")
  Mono<ResponseEntity<byte[]>> discoverBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return legacyBatch(name, body, Requests.Fields.DISCOVER, SearchController::discoverQuery);
  }

  /** A request of the older APIs, run as the query {@code translate} makes of it. */
  private Mono<ResponseEntity<byte[]>> legacy(
      String name,
      byte[] body,
      java.util.Set<String> fields,
      BiFunction<JsonNode, String, ObjectNode> translate) {
    return single(
        name,
        body,
        Json::parse,
        b -> {
          Requests.refuseUnknown(b, fields, "");
          ObjectNode q = translate.apply(b, "");
          strict.check(name, Route.QUERY, q);
          return new Plan(false, stats -> runQuery(name, q, "", stats).get("points"));
        });
  }

  private Mono<ResponseEntity<byte[]>> legacyBatch(
      String name,
      byte[] body,
      java.util.Set<String> fields,
      BiFunction<JsonNode, String, ObjectNode> translate) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parse(body);
          Requests.refuseUnknown(b, Requests.Fields.BATCH, "");
          JsonNode searches = batchOf(b);
          ArrayNode queries = Json.array();
          for (int i = 0; i < searches.size(); i++) {
            Requests.refuseUnknown(searches.get(i), fields, "searches[" + i + "].");
            queries.add(translate.apply(searches.get(i), "searches[" + i + "]."));
          }
          ObjectNode batch = Json.object();
          batch.set("searches", queries);
          strict.check(name, Route.QUERY_BATCH, batch);
          return respond(
              name,
              t0,
              b,
              queries.size(),
              stats -> {
                ArrayNode out = Json.array();
                for (int i = 0; i < queries.size(); i++) {
                  out.add(
                      runQuery(name, queries.get(i), "searches[" + i + "].", stats).get("points"));
                }
                return out;
              });
        });
  }

  /** An older recommend request as a query: its examples and strategy become the query. */
  static ObjectNode recommendQuery(JsonNode b, String prefix) {
    ObjectNode q = legacyBody(b, prefix);
    ObjectNode recommend = Json.object();
    for (String f : List.of("positive", "negative", "strategy")) {
      JsonNode v = q.remove(f);
      if (v != null && !v.isNull()) {
        recommend.set(f, v);
      }
    }
    ObjectNode query = Json.object();
    query.set("recommend", recommend);
    q.set("query", query);
    return q;
  }

  /** An older discover request as a query: {@code discover}, or {@code context} without target. */
  static ObjectNode discoverQuery(JsonNode b, String prefix) {
    ObjectNode q = legacyBody(b, prefix);
    JsonNode target = q.remove("target");
    JsonNode context = q.remove("context");
    if (context == null || context.isNull()) {
      context = Json.array();
    }
    ObjectNode query = Json.object();
    if (target != null && !target.isNull()) {
      ObjectNode discover = Json.object();
      discover.set("target", target);
      discover.set("context", context);
      query.set("discover", discover);
    } else {
      query.set("context", context);
    }
    q.set("query", query);
    return q;
  }

  /** A copy of an older request body, which must give {@code limit} and no {@code query}. */
  private static ObjectNode legacyBody(JsonNode b, String prefix) {
    if (!b.isObject()) {
      throw new InvalidInputException("Wrong input: " + prefix + "request must be an object");
    }
    if (!b.has("limit")) {
      throw new InvalidInputException("Wrong input: missing field `" + prefix + "limit`");
    }
    zeroLimit(b, prefix);
    if (b.has("query") || b.has("prefetch")) {
      String f = b.has("query") ? "query" : "prefetch";
      throw Requests.invalid(
          "unknown field `" + prefix + f + "`: use points/query for the query API",
          prefix + f,
          b.get(f));
    }
    return ((ObjectNode) b).deepCopy();
  }

  /** The older grouped search: a {@code vector} instead of a {@code query}. */
  @PostMapping("/collections/{name}/points/search/groups")
  Mono<ResponseEntity<byte[]>> searchGroups(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return single(
        name,
        body,
        Json::parse,
        b -> {
          if (!b.isObject() || !b.has("vector")) {
            throw new InvalidInputException("Wrong input: missing field `vector`");
          }
          Requests.refuseUnknown(b, Requests.Fields.SEARCH_GROUPS, "");
          strict.check(name, Route.SEARCH_GROUPS, b);
          ObjectNode q = ((ObjectNode) b).deepCopy();
          JsonNode v = q.remove("vector");
          if (v.isObject() && v.has("name") && v.has("vector")) {
            // Qdrant's NamedVector: the name becomes the query's `using`
            q.set("using", v.get("name"));
            v = v.get("vector");
          }
          q.set("query", v);
          return new Plan(
              false, stats -> groups.run(name, q, query.parse(q, "", new int[1]), stats));
        });
  }

  @PostMapping("/collections/{name}/points/search/matrix/pairs")
  Mono<ResponseEntity<byte[]>> matrixPairs(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return single(
        name,
        body,
        Json::parseOptional,
        b -> {
          strict.check(name, Route.MATRIX, b);
          return new Plan(false, stats -> DistanceMatrix.pairs(matrix.rows(name, b)));
        });
  }

  @PostMapping("/collections/{name}/points/search/matrix/offsets")
  Mono<ResponseEntity<byte[]>> matrixOffsets(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return single(
        name,
        body,
        Json::parseOptional,
        b -> {
          strict.check(name, Route.MATRIX, b);
          return new Plan(false, stats -> DistanceMatrix.offsets(matrix.rows(name, b)));
        });
  }
}
