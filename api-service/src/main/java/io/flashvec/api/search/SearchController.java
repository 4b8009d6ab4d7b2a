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
import io.flashvec.index.NotFoundException;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchRequest;
import io.flashvec.index.SearchStats;
import io.flashvec.index.TooLargeException;
import io.flashvec.storage.ThreadIo;
import java.util.ArrayList;
import java.util.List;
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
 * point's vector); every form takes a Qdrant {@code filter}. Hybrid {@code prefetch}/fusion is not
 * supported yet and is rejected rather than ignored.
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
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parse(body);
          Parsed p = parseSearch(b, "");
          SearchStats stats = new SearchStats();
          return respond(run(name, p, stats), t0, b, stats, 1);
        });
  }

  @PostMapping("/collections/{name}/points/search/batch")
  Mono<ResponseEntity<byte[]>> searchBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parse(body);
          JsonNode searches = batchOf(b);
          List<Parsed> parsed = new ArrayList<>();
          for (int i = 0; i < searches.size(); i++) {
            parsed.add(parseSearch(searches.get(i), "searches[" + i + "]."));
          }
          SearchStats stats = new SearchStats();
          ArrayNode out = Json.array();
          for (Parsed p : parsed) {
            out.add(run(name, p, stats));
          }
          return respond(out, t0, b, stats, parsed.size());
        });
  }

  @PostMapping("/collections/{name}/points/query")
  Mono<ResponseEntity<byte[]>> query(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parseOptional(body);
          SearchStats stats = new SearchStats();
          return respond(runQuery(name, b, "", stats), t0, b, stats, 1);
        });
  }

  @PostMapping("/collections/{name}/points/query/batch")
  Mono<ResponseEntity<byte[]>> queryBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parse(body);
          JsonNode searches = batchOf(b);
          SearchStats stats = new SearchStats();
          ArrayNode out = Json.array();
          for (int i = 0; i < searches.size(); i++) {
            out.add(runQuery(name, searches.get(i), "searches[" + i + "].", stats));
          }
          return respond(out, t0, b, stats, searches.size());
        });
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
   * Records the search costs in the metrics and, when the body asks with {@code "with_stats":
   * true}, returns them as {@code flashvec_stats} beside {@code result} (off by default so Qdrant
   * clients see their usual envelope).
   */
  private ResponseEntity<byte[]> respond(
      JsonNode result, long t0, JsonNode body, SearchStats stats, int searches) {
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
    o.put("bytes_read", stats.pagesRead * ThreadIo.PAGE_BYTES);
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
    if (prefetch != null && !prefetch.isNull() && !(prefetch.isArray() && prefetch.isEmpty())) {
      throw new InvalidInputException(
          "Wrong input: prefetch (hybrid queries) is not supported yet");
    }
    JsonNode using = b.get("using");
    if (using != null && !using.isNull() && !using.asString("").isEmpty()) {
      throw new InvalidInputException(
          "Wrong input: named vectors are not supported [using="
              + Requests.abbreviate(using)
              + "]");
    }
    JsonNode q = b.get("query");
    ObjectNode out = Json.object();
    if (q == null || q.isNull()) {
      // No query: points in id order, like scroll.
      int limit = Math.max(1, Requests.nonNegativeInt(b, "limit", 10, maxLimit));
      Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", false);
      boolean withVector = Output.withVector(b, "with_vector", false);
      io.flashvec.index.filter.Filter filter = Requests.filter(b, prefix);
      ScrollPage page =
          filter == null
              ? service.scroll(name, null, limit, sel.any(), withVector)
              : service.scroll(name, null, limit, sel.any(), withVector, filter);
      out.set("points", Output.scoredList(page.points(), sel, withVector));
      return out;
    }
    float[] v = queryVector(name, q, prefix + "query");
    out.set("points", run(name, build(b, v, 10, prefix), stats));
    return out;
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
        throw new NotFoundException("Not found: No point with id " + id + " found");
      }
      return r.getFirst().vector();
    }
    if (q.isObject()) {
      throw new InvalidInputException(
          "Wrong input: only nearest-vector queries are supported so far ["
              + field
              + "="
              + Requests.abbreviate(q)
              + "]");
    }
    throw new InvalidInputException(
        "Wrong input: query must be a vector, {\"nearest\": vector} or a point id ["
            + field
            + "="
            + Requests.abbreviate(q)
            + "]");
  }
}
