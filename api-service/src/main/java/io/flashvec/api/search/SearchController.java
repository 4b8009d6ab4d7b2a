package io.flashvec.api.search;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.metrics.SearchMetrics;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Output;
import io.flashvec.api.web.Requests;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.TooLargeException;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
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

  SearchController(
      CollectionService service,
      Blocking blocking,
      FlashVecProperties props,
      SearchMetrics metrics) {
    this.service = service;
    this.metrics = metrics;
    this.blocking = blocking;
    this.maxLimit = props.limits().maxSearchLimit();
    this.maxBatch = props.limits().maxBatchPoints();
  }

  /** A parsed search with its output options. */
  private record Parsed(
      SearchRequest request, Output.PayloadSelector payload, boolean withVector) {}

  @PostMapping("/collections/{name}/points/search")
  Mono<ResponseEntity<byte[]>> search(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return single(name, body, Json::parse, b -> planSearch(name, b));
  }

  private Plan planSearch(String name, JsonNode b) {
    Parsed p = parseSearch(b, "");
    return new Plan(inline(name, p.request()), stats -> run(name, p, stats));
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
          return blocking.call(p.inline(), () -> respond(t0, b, 1, p.work()));
        });
  }

  /**
   * A batch of searches or queries, off the event loop: {@code work} runs the body's {@code
   * searches} ({@link #batchOf}) into one result per search.
   */
  private Mono<ResponseEntity<byte[]>> batch(
      String name, byte[] body, BiFunction<JsonNode, SearchStats, ArrayNode> work) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parse(body);
          JsonNode searches = batchOf(b);
          return respond(t0, b, searches.size(), stats -> work.apply(searches, stats));
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
        && b.path("limit").asInt(10) + b.path("offset").asInt(0) <= INLINE_MAX_RESULTS
        && service.searchesServedFromMemory(name);
  }

  @PostMapping("/collections/{name}/points/search/batch")
  Mono<ResponseEntity<byte[]>> searchBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return batch(name, body, (searches, stats) -> searchAll(name, searches, stats));
  }

  /** Every search of a batch is parsed before the first runs. */
  private ArrayNode searchAll(String name, JsonNode searches, SearchStats stats) {
    List<Parsed> parsed = new ArrayList<>();
    for (int i = 0; i < searches.size(); i++) {
      parsed.add(parseSearch(searches.get(i), "searches[" + i + "]."));
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
    return new Plan(inlineQuery(name, b), stats -> runQuery(name, b, "", stats));
  }

  @PostMapping("/collections/{name}/points/query/batch")
  Mono<ResponseEntity<byte[]>> queryBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return batch(name, body, (searches, stats) -> queryAll(name, searches, stats));
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
  private ResponseEntity<byte[]> respond(long t0, JsonNode body, int searches, Searches work) {
    SearchStats stats = new SearchStats();
    JsonNode result = work.run(stats);
    metrics.record(searches, stats);
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

  private ArrayNode run(String name, Parsed p, SearchStats stats) {
    return Output.scoredList(service.search(name, p.request(), stats), p.payload(), p.withVector());
  }

  private Parsed parseSearch(JsonNode b, String prefix) {
    if (!b.isObject()) {
      throw new InvalidInputException(
          "Wrong input: " + prefix + "search request must be an object");
    }
    if (!b.has("vector")) {
      throw new InvalidInputException("Wrong input: missing field `" + prefix + "vector`");
    }
    float[] v = Requests.vector(b.get("vector"), prefix + "vector");
    if (!b.has("limit")) {
      throw new InvalidInputException("Wrong input: missing field `" + prefix + "limit`");
    }
    return build(b, v, 10, prefix);
  }

  private Parsed build(JsonNode b, float[] v, int defaultLimit, String prefix) {
    int limit = Requests.nonNegativeInt(b, "limit", defaultLimit, maxLimit);
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
    return new Parsed(req, sel, withVector);
  }

  private ObjectNode runQuery(String name, JsonNode b, String prefix, SearchStats stats) {
    if (!b.isObject()) {
      throw new InvalidInputException("Wrong input: " + prefix + "query request must be an object");
    }
    JsonNode prefetch = b.get("prefetch");
    JsonNode q = b.get("query");
    ObjectNode out = Json.object();
    if (prefetch != null && !prefetch.isNull() && !(prefetch.isArray() && prefetch.isEmpty())) {
      out.set("points", hybrid(name, b, prefetch, prefix, stats));
      return out;
    }
    if (isTextQuery(q)) {
      Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", false);
      boolean withVector = Output.withVector(b, "with_vector", false);
      int limit = Requests.nonNegativeInt(b, "limit", 10, maxLimit);
      int offset = Requests.nonNegativeInt(b, "offset", 0, maxLimit);
      List<Record> hits =
          textSearch(
              name,
              b,
              q,
              limit + offset,
              Requests.filter(b, prefix),
              sel.any(),
              withVector,
              prefix);
      out.set(
          "points",
          Output.scoredList(
              hits.subList(Math.min(offset, hits.size()), hits.size()), sel, withVector));
      return out;
    }
    JsonNode using = b.get("using");
    if (using != null && !using.isNull() && !using.asString("").isEmpty()) {
      throw Requests.invalid("named vectors are not supported", "using", using);
    }
    if (q == null || q.isNull()) {
      // No query: points in id order, like scroll.
      int limit = Math.max(1, Requests.nonNegativeInt(b, "limit", 10, maxLimit));
      Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", false);
      boolean withVector = Output.withVector(b, "with_vector", false);
      ScrollPage page =
          service.scroll(
              name,
              new ScrollRequest(null, limit, sel.any(), withVector, Requests.filter(b, prefix)));
      out.set("points", Output.scoredList(page.points(), sel, withVector));
      return out;
    }
    float[] v = queryVector(name, q, prefix + "query");
    Parsed p = build(b, v, 10, prefix);
    p =
        new Parsed(
            excludeReferenced(p.request(), q, prefix + "query"), p.payload(), p.withVector());
    out.set("points", run(name, p, stats));
    return out;
  }

  /**
   * {@code {"text": "..."}} (Qdrant's document query, also as {@code {"nearest": {"text": ...}}};
   * {@code model}, if given, must be BM25).
   */
  private static boolean isTextQuery(JsonNode q) {
    return q != null && q.isObject() && (q.has("text") || isTextQuery(q.get("nearest")));
  }

  /**
   * BM25 over the text-indexed payload key that {@code using} (or the query's {@code field}) names.
   */
  private List<Record> textSearch(
      String name,
      JsonNode b,
      JsonNode q,
      int limit,
      io.flashvec.index.filter.Filter filter,
      boolean withPayload,
      boolean withVector,
      String prefix) {
    if (!q.has("text")) {
      q = q.get("nearest");
    }
    JsonNode text = q.get("text");
    if (!text.isString()) {
      throw Requests.invalid(prefix + "query.text must be a string", "text", text);
    }
    JsonNode model = q.get("model");
    if (model != null
        && !model.isNull()
        && !List.of("bm25", "qdrant/bm25")
            .contains(model.asString("").toLowerCase(java.util.Locale.ROOT))) {
      throw Requests.invalid("only BM25 text queries are supported", "model", model);
    }
    JsonNode field = q.has("field") ? q.get("field") : b.get("using");
    if (field == null || !field.isString() || field.asString().isEmpty()) {
      throw new InvalidInputException(
          "Wrong input: a text query names its text-indexed payload key with `"
              + prefix
              + "using` (or query.field)");
    }
    return service.textSearch(
        name,
        new TextSearchRequest(
            field.asString(), text.asString(), limit, filter, withPayload, withVector));
  }

  /**
   * Qdrant's hybrid query: every prefetch (a vector or a BM25 text query, each with its own {@code
   * limit}, {@code filter} and {@code params}; the request's {@code filter} applies to all) runs,
   * and their lists are fused by {@code query} ({@code {"fusion": "rrf" | "dbsf"}}).
   */
  private ArrayNode hybrid(
      String name, JsonNode b, JsonNode prefetch, String prefix, SearchStats stats) {
    Fusion fusion = Fusion.parse(b.get("query"), prefix + "query");
    if (fusion == null) {
      throw Requests.invalid(
          "with prefetch, " + prefix + "query must be a fusion ({\"fusion\": \"rrf\"} or \"dbsf\")",
          "query",
          b.get("query"));
    }
    List<JsonNode> parts = new ArrayList<>();
    if (prefetch.isArray()) {
      prefetch.forEach(parts::add);
    } else {
      parts.add(prefetch);
    }
    if (parts.size() > maxBatch) {
      throw new TooLargeException(
          "Payload too large: too many prefetches [prefetch=" + parts.size() + "]");
    }
    Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", false);
    boolean withVector = Output.withVector(b, "with_vector", false);
    io.flashvec.index.filter.Filter top = Requests.filter(b, prefix);
    boolean higherIsBetter = service.describe(name).config().distance().higherIsBetter();
    List<Fusion.Ranked> lists = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      JsonNode p = parts.get(i);
      String pp = prefix + "prefetch[" + i + "].";
      if (!p.isObject()) {
        throw new InvalidInputException("Wrong input: " + pp + " must be an object");
      }
      JsonNode nested = p.get("prefetch");
      if (nested != null && !nested.isNull() && !(nested.isArray() && nested.isEmpty())) {
        throw new InvalidInputException(
            "Wrong input: nested prefetch is not supported [" + pp + "prefetch]");
      }
      JsonNode pq = p.get("query");
      if (pq == null || pq.isNull()) {
        throw new InvalidInputException("Wrong input: missing field `" + pp + "query`");
      }
      io.flashvec.index.filter.Filter filter = and(top, Requests.filter(p, pp));
      int limit = Requests.nonNegativeInt(p, "limit", 10, maxLimit);
      if (isTextQuery(pq)) {
        lists.add(
            new Fusion.Ranked(
                textSearch(name, p, pq, limit, filter, sel.any(), withVector, pp), true));
      } else {
        JsonNode using = p.get("using");
        if (using != null && !using.isNull() && !using.asString("").isEmpty()) {
          throw Requests.invalid("named vectors are not supported", pp + "using", using);
        }
        float[] v = queryVector(name, pq, pp + "query");
        SearchRequest req =
            new SearchRequest(
                v,
                limit,
                0,
                Requests.optionalFloat(p, "score_threshold"),
                Requests.params(p),
                sel.any(),
                withVector,
                filter);
        req = excludeReferenced(req, pq, pp + "query");
        lists.add(new Fusion.Ranked(service.search(name, req, stats), higherIsBetter));
      }
    }
    List<Record> fused = fusion.fuse(lists);
    int limit = Requests.nonNegativeInt(b, "limit", 10, maxLimit);
    int offset = Requests.nonNegativeInt(b, "offset", 0, maxLimit);
    Float threshold = Requests.optionalFloat(b, "score_threshold");
    List<Record> page = new ArrayList<>();
    for (int i = offset; i < fused.size() && page.size() < limit; i++) {
      Record r = fused.get(i);
      if (threshold != null && r.score() < threshold) {
        break;
      }
      page.add(r);
    }
    return Output.scoredList(page, sel, withVector);
  }

  private static io.flashvec.index.filter.Filter and(
      io.flashvec.index.filter.Filter a, io.flashvec.index.filter.Filter b) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    return io.flashvec.index.filter.Filter.must(a, b);
  }

  /**
   * {@code req} without the point its query names by id, as Qdrant does (a query by a point's id
   * asks for the points like it, and the point itself is the nearest): its filter gains {@code
   * must_not: has_id}.
   */
  private static SearchRequest excludeReferenced(SearchRequest req, JsonNode q, String field) {
    JsonNode ref = q != null && q.isObject() && q.has("nearest") ? q.get("nearest") : q;
    if (ref == null || !(ref.isIntegralNumber() || ref.isString())) {
      return req;
    }
    io.flashvec.index.filter.Filter notIt =
        new io.flashvec.index.filter.Filter(
            List.of(),
            List.of(),
            List.of(
                new io.flashvec.index.filter.Condition.HasId(
                    java.util.Set.of(Requests.id(ref, field)))),
            null);
    return new SearchRequest(
        req.vector(),
        req.limit(),
        req.offset(),
        req.scoreThreshold(),
        req.params(),
        req.withPayload(),
        req.withVector(),
        and(req.filter(), notIt));
  }

  private float[] queryVector(String name, JsonNode q, String field) {
    if (q.isArray()) {
      return Requests.vector(q, field);
    }
    if (q.isObject() && q.has("nearest")) {
      return queryVector(name, q.get("nearest"), field + ".nearest");
    }
    if (q.isIntegralNumber() || q.isString()) {
      PointId id = Requests.id(q, field);
      List<Record> r = service.retrieve(name, List.of(id), false, true);
      if (r.isEmpty()) {
        throw io.flashvec.api.points.PointsController.noSuchPoint(id);
      }
      return r.getFirst().vector();
    }
    if (q.isObject()) {
      throw Requests.invalid("only nearest-vector queries are supported so far", field, q);
    }
    throw Requests.invalid("query must be a vector, {\"nearest\": vector} or a point id", field, q);
  }
}
