package io.flashvec.api.search;

import io.flashvec.api.FlashVecProperties;
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
import io.flashvec.index.TooLargeException;
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
 * point's vector); hybrid {@code prefetch}/fusion is not supported yet and is rejected rather than
 * ignored.
 */
@RestController
public class SearchController {

  private final CollectionService service;
  private final Blocking blocking;
  private final int maxLimit;
  private final int maxBatch;

  SearchController(CollectionService service, Blocking blocking, FlashVecProperties props) {
    this.service = service;
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
          Parsed p = parseSearch(Json.parse(body), "");
          return Json.ok(run(name, p), t0);
        });
  }

  @PostMapping("/collections/{name}/points/search/batch")
  Mono<ResponseEntity<byte[]>> searchBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode searches = batchOf(Json.parse(body));
          List<Parsed> parsed = new ArrayList<>();
          for (int i = 0; i < searches.size(); i++) {
            parsed.add(parseSearch(searches.get(i), "searches[" + i + "]."));
          }
          ArrayNode out = Json.array();
          for (Parsed p : parsed) {
            out.add(run(name, p));
          }
          return Json.ok(out, t0);
        });
  }

  @PostMapping("/collections/{name}/points/query")
  Mono<ResponseEntity<byte[]>> query(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          return Json.ok(runQuery(name, Json.parseOptional(body), ""), t0);
        });
  }

  @PostMapping("/collections/{name}/points/query/batch")
  Mono<ResponseEntity<byte[]>> queryBatch(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode searches = batchOf(Json.parse(body));
          ArrayNode out = Json.array();
          for (int i = 0; i < searches.size(); i++) {
            out.add(runQuery(name, searches.get(i), "searches[" + i + "]."));
          }
          return Json.ok(out, t0);
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

  private ArrayNode run(String name, Parsed p) {
    return Output.scoredList(service.search(name, p.request()), p.payload(), p.withVector());
  }

  private Parsed parseSearch(JsonNode b, String prefix) {
    if (!b.isObject()) {
      throw new InvalidInputException(
          "Wrong input: " + prefix + "search request must be an object");
    }
    Requests.rejectFilter(b);
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
            withVector);
    return new Parsed(req, sel, withVector);
  }

  private ObjectNode runQuery(String name, JsonNode b, String prefix) {
    if (!b.isObject()) {
      throw new InvalidInputException("Wrong input: " + prefix + "query request must be an object");
    }
    Requests.rejectFilter(b);
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
      ScrollPage page = service.scroll(name, null, limit, sel.any(), withVector);
      out.set("points", Output.scoredList(page.points(), sel, withVector));
      return out;
    }
    float[] v = queryVector(name, q, prefix + "query");
    out.set("points", run(name, build(b, v, 10, prefix)));
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
