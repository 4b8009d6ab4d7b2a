package io.flashvec.api.points;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.collections.StrictModeGuard;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.query.ScrollRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * Qdrant's facet counts ({@code POST /collections/{c}/facet}): how many points that pass the filter
 * hold each value of a keyword, integer, uuid or bool payload index, most frequent first (ties by
 * value). A point counts once per distinct value it holds. As Qdrant does, the key must carry one
 * of those indexes. The counts are always exact: they are taken over the matching points' payloads
 * (a scan of the matching points, so a selective filter keeps them cheap), {@code exact: false}
 * included.
 */
@RestController
public class FacetController {

  /** Qdrant's default number of values. */
  static final int DEFAULT_LIMIT = 10;

  private static final int PAGE = 1_000;

  private final CollectionService service;
  private final Blocking blocking;
  private final int maxLimit;
  private final StrictModeGuard strict;

  FacetController(
      CollectionService service,
      Blocking blocking,
      FlashVecProperties props,
      StrictModeGuard strict) {
    this.service = service;
    this.blocking = blocking;
    this.maxLimit = props.limits().maxSearchLimit();
    this.strict = strict;
  }

  @PostMapping("/collections/{name}/facet")
  Mono<ResponseEntity<byte[]>> facet(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    long t0 = System.nanoTime();
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parse(body);
          return Json.ok(facet(name, b), t0);
        });
  }

  private ObjectNode facet(String name, JsonNode b) {
    Requests.refuseUnknown(b, Requests.Fields.FACET, "");
    if (!b.isObject()) {
      throw new InvalidInputException("Wrong input: facet request must be an object");
    }
    JsonNode keyNode = b.get("key");
    if (keyNode == null || !keyNode.isString() || keyNode.asString().isEmpty()) {
      throw Requests.invalid("facet needs `key`, a payload key", "key", keyNode);
    }
    String key = keyNode.asString();
    strict.check(name, StrictModeGuard.Route.FACET, b);
    FieldPath path = FieldPath.parse(key, "key");
    JsonNode limitNode = b.get("limit");
    if (limitNode != null && limitNode.isIntegralNumber() && limitNode.asLong(1) == 0) {
      throw new io.flashvec.api.web.ValidationException(
          "limit", "value 0 invalid, must be 1 or larger");
    }
    int limit = Requests.nonNegativeInt(b, "limit", DEFAULT_LIMIT, maxLimit);
    Requests.bool(b, "exact", false); // validated; the counts are exact either way
    Filter filter = Requests.filter(b, "");
    PayloadFieldSchema field = service.describe(name).info().payloadSchema().field(key);
    PayloadFieldSchema.Type type = field == null ? null : field.type();
    if (type != PayloadFieldSchema.Type.KEYWORD
        && type != PayloadFieldSchema.Type.INTEGER
        && type != PayloadFieldSchema.Type.UUID
        && type != PayloadFieldSchema.Type.BOOL) {
      throw new InvalidInputException(
          "Bad request: Index required but not found for \""
              + key
              + "\" of one of the following types: [keyword, integer, uuid, bool]. Help: Create an"
              + " index for this key, for example PUT /collections/"
              + name
              + "/index {\"field_name\": \""
              + key
              + "\", \"field_schema\": \"keyword\"}");
    }
    Map<JsonNode, Long> counts = new HashMap<>();
    ScrollRequest req = new ScrollRequest(null, PAGE, true, false, filter);
    while (true) {
      ScrollPage page = service.scroll(name, req);
      for (Record r : page.points()) {
        if (r.payload() != null) {
          for (JsonNode v : values(Json.readStored(r.payload()), path, type)) {
            counts.merge(v, 1L, Long::sum);
          }
        }
      }
      if (page.nextOffset() == null) {
        break;
      }
      req = req.from(page.nextOffset());
    }
    List<Map.Entry<JsonNode, Long>> hits = new ArrayList<>(counts.entrySet());
    hits.sort(
        Comparator.comparingLong((Map.Entry<JsonNode, Long> e) -> -e.getValue())
            .thenComparing(Map.Entry::getKey, FacetController::compareValues));
    ObjectNode out = Json.object();
    ArrayNode arr = out.putArray("hits");
    for (int i = 0; i < Math.min(limit, hits.size()); i++) {
      ObjectNode h = arr.addObject();
      h.set("value", hits.get(i).getKey());
      h.put("count", hits.get(i).getValue());
    }
    return out;
  }

  /**
   * The distinct values at {@code path} (the filters' path semantics) that the index kind {@code
   * type} holds.
   */
  static Set<JsonNode> values(JsonNode payload, FieldPath path, PayloadFieldSchema.Type type) {
    Set<JsonNode> out = new LinkedHashSet<>();
    for (JsonNode v : FilterEvaluator.values(path, payload)) {
      boolean fits =
          switch (type) {
            case KEYWORD, UUID -> v.isString();
            case INTEGER -> v.isIntegralNumber() && v.canConvertToLong();
            case BOOL -> v.isBoolean();
            default -> false;
          };
      if (fits) {
        out.add(
            type == PayloadFieldSchema.Type.INTEGER
                ? Json.MAPPER.getNodeFactory().numberNode(v.longValue())
                : v);
      }
    }
    return out;
  }

  private static int compareValues(JsonNode a, JsonNode b) {
    if (a.isNumber() && b.isNumber()) {
      return Long.compare(a.longValue(), b.longValue());
    }
    if (a.isBoolean() && b.isBoolean()) {
      return Boolean.compare(a.booleanValue(), b.booleanValue());
    }
    return a.asString().compareTo(b.asString());
  }
}
