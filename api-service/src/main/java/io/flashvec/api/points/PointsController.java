package io.flashvec.api.points;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.collections.StrictModeGuard;
import io.flashvec.api.collections.StrictModeGuard.Route;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Output;
import io.flashvec.api.web.Requests;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.TooLargeException;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.collection.UpsertCondition;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import java.util.ArrayList;
import java.util.List;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** {@code /collections/{name}/points…} except search, in Qdrant's shapes. */
@RestController
public class PointsController {

  private final CollectionService service;
  private final Blocking blocking;
  private final int maxBatch;
  private final StrictModeGuard strict;

  PointsController(
      CollectionService service,
      Blocking blocking,
      FlashVecProperties props,
      StrictModeGuard strict) {
    this.service = service;
    this.blocking = blocking;
    this.maxBatch = props.limits().maxBatchPoints();
    this.strict = strict;
  }

  @PutMapping("/collections/{name}/points")
  Mono<ResponseEntity<byte[]>> upsert(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return write(name, wait, body, Route.UPSERT, this::upsert);
  }

  /** An update on a parsed request body. */
  @FunctionalInterface
  interface Operation {
    Collection.UpdateResult apply(String name, JsonNode body, boolean wait);
  }

  /**
   * Runs {@code op} on the body as a write request, once the collection's strict mode let it
   * ({@code route}), and answers Qdrant's UpdateResult.
   */
  private Mono<ResponseEntity<byte[]>> write(
      String name, boolean wait, byte[] body, Route route, Operation op) {
    Blocking.BodyWork work =
        b -> {
          strict.check(name, route, b);
          return update(op.apply(name, b, wait));
        };
    return wait
        ? blocking.answerWaitedWrite(name, body, work)
        : blocking.answerWrite(name, body, work);
  }

  /** The fields of an upsert body; any other is refused. */
  private static final java.util.Set<String> UPSERT_FIELDS =
      java.util.Set.of("points", "batch", "shard_key", "update_mode", "update_filter");

  /**
   * An upsert body ({@code points} or {@code batch}), parsed and applied; with Qdrant's {@code
   * update_mode} ({@code upsert}, {@code insert_only}, {@code update_only}) and {@code
   * update_filter} (an existing point is overwritten only if it matches) when given.
   */
  Collection.UpdateResult upsert(String name, JsonNode b, boolean wait) {
    List<Point> points = parsePoints(b, service.config(name));
    for (String k : b.propertyNames()) {
      if (!UPSERT_FIELDS.contains(k)) {
        throw new InvalidInputException(
            "Wrong input: unknown field `"
                + k
                + "`; expected points or batch, shard_key, update_mode, update_filter ["
                + k
                + "]");
      }
    }
    JsonNode mode = b.get("update_mode");
    io.flashvec.index.UpsertMode m = io.flashvec.index.UpsertMode.UPSERT;
    if (mode != null && !mode.isNull()) {
      if (!mode.isString()) {
        throw new InvalidInputException(
            "Wrong input: update_mode must be one of `upsert`, `insert_only`, `update_only`"
                + " [update_mode="
                + mode
                + "]");
      }
      m = io.flashvec.index.UpsertMode.parse(mode.asString(), "update_mode");
    }
    JsonNode uf = b.get("update_filter");
    Filter filter = uf == null || uf.isNull() ? null : FilterParser.parse(uf, "update_filter");
    UpsertCondition condition = new UpsertCondition(m, filter);
    return condition.always()
        ? service.upsert(name, points, wait)
        : service.upsert(name, points, condition, wait);
  }

  /**
   * Qdrant's update_vectors: new vectors for existing points, their payloads kept; an id that does
   * not exist is a 404 and nothing changes. The payloads are read where the new versions are
   * written, under the shard's write lock, so a concurrent payload update is never lost.
   */
  @PutMapping("/collections/{name}/points/vectors")
  Mono<ResponseEntity<byte[]>> updateVectors(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return write(name, wait, body, Route.UPDATE_VECTORS, this::updateVectors);
  }

  Collection.UpdateResult updateVectors(String name, JsonNode b, boolean wait) {
    JsonNode list = b.get("points");
    if (list == null || !list.isArray()) {
      throw new InvalidInputException(
          "Wrong input: update_vectors needs `points`, a list of {id, vector}");
    }
    List<Point> points = parsePoints(b, service.config(name));
    // as Qdrant: a missing point is a 404 before anything else about the request
    requireAll(service, name, points.stream().map(Point::id).distinct().toList(), false);
    for (int i = 0; i < list.size(); i++) {
      if (list.get(i).has("payload")) {
        throw new InvalidInputException(
            "Wrong input: update_vectors changes vectors only; use the payload endpoints ["
                + "points["
                + i
                + "].payload]");
      }
      Point p = points.get(i);
      if (p.vector() == null && p.sparse().isEmpty() && p.dense().isEmpty()) {
        throw new io.flashvec.api.web.ValidationException(
            "points[" + i + "].vector", "must specify vectors to update for point");
      }
    }
    for (String k : b.propertyNames()) {
      if (!k.equals("points") && !k.equals("shard_key") && !k.equals("update_filter")) {
        throw new InvalidInputException(
            "Wrong input: unknown field `"
                + k
                + "`; expected points, shard_key, update_filter ["
                + k
                + "]");
      }
    }
    JsonNode uf = b.get("update_filter");
    return uf == null || uf.isNull()
        ? service.updateVectors(name, points, wait)
        : service.updateVectors(name, points, FilterParser.parse(uf, "update_filter"), wait);
  }

  /**
   * The points with these ids, by id (payloads if {@code withPayload}); as Qdrant, a 404 naming the
   * first id that does not exist. For updates of existing points: nothing is changed when one is
   * missing.
   */
  static java.util.Map<PointId, Record> requireAll(
      CollectionService service, String name, List<PointId> ids, boolean withPayload) {
    java.util.Map<PointId, Record> found = new java.util.HashMap<>();
    for (Record r : service.retrieve(name, ids, withPayload, false)) {
      found.put(r.id(), r);
    }
    for (PointId id : ids) {
      if (!found.containsKey(id)) {
        throw noSuchPoint(id);
      }
    }
    return found;
  }

  /** Qdrant's 404 for a point id that does not exist. */
  public static NotFoundException noSuchPoint(PointId id) {
    return new NotFoundException("Not found: No point with id " + id + " found");
  }

  /**
   * Qdrant's delete_vectors: removes the named vectors ({@code ""}: the default dense one) from the
   * listed points and keeps the rest; an id that does not exist is a 404 and nothing changes.
   */
  @PostMapping("/collections/{name}/points/vectors/delete")
  Mono<ResponseEntity<byte[]>> deleteVectors(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return write(name, wait, body, Route.DELETE_VECTORS, this::deleteVectors);
  }

  /** Points whose vectors one page of a delete_vectors by filter removes. */
  private static final int DELETE_PAGE = 1000;

  Collection.UpdateResult deleteVectors(String name, JsonNode b, boolean wait) {
    Requests.refuseUnknown(b, Requests.Fields.DELETE_VECTORS, "");
    JsonNode names = b.get("vector");
    if (names == null || !names.isArray()) {
      throw Requests.invalid(
          "delete_vectors needs `vector`, a list of vector names", "vector", names);
    }
    CollectionConfig config = service.config(name);
    java.util.Set<String> set = new java.util.HashSet<>();
    for (JsonNode n : names) {
      if (!n.isString()) {
        throw Requests.invalid("vector names must be strings", "vector", names);
      }
      set.add(config.internalName(n.asString()));
    }
    JsonNode filter = b.get("filter");
    JsonNode pts = b.get("points");
    boolean hasFilter = filter != null && !filter.isNull();
    if ((pts == null || pts.isNull()) == !hasFilter) {
      throw new InvalidInputException(
          "Wrong input: delete_vectors needs either `points` (a list of ids) or `filter`"
              + (hasFilter ? ", not both" : ""));
    }
    if (hasFilter) {
      return deleteVectorsWhere(name, FilterParser.parse(filter, "filter"), set, wait);
    }
    List<PointId> ids = Requests.ids(pts, "points");
    checkBatch(ids.size());
    return service.deleteVectors(name, ids, set, wait);
  }

  /**
   * delete_vectors by filter: the points that match when each page of them is read, their vectors
   * removed a page at a time (a point written after its page was read keeps its vectors).
   */
  private Collection.UpdateResult deleteVectorsWhere(
      String name, Filter filter, java.util.Set<String> names, boolean wait) {
    // a write in pages: an applied page does not mean the next ones are, so none is told applied
    // (a timeout answers 408, never wait_timeout)
    return ScopedValue.where(Collection.ON_APPLIED, op -> {})
        .call(() -> deletePagesOfVectors(name, filter, names, wait));
  }

  private Collection.UpdateResult deletePagesOfVectors(
      String name, Filter filter, java.util.Set<String> names, boolean wait) {
    Collection.UpdateResult last = new Collection.UpdateResult(0, true);
    PointId offset = null;
    do {
      ScrollPage page =
          service.scroll(name, new ScrollRequest(offset, DELETE_PAGE, false, false, filter));
      List<PointId> ids = page.points().stream().map(Record::id).toList();
      if (!ids.isEmpty()) {
        last = service.deleteVectors(name, ids, names, wait);
      }
      offset = page.nextOffset();
    } while (offset != null);
    return last;
  }

  @PostMapping("/collections/{name}/points/delete")
  Mono<ResponseEntity<byte[]>> delete(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return write(name, wait, body, Route.DELETE_POINTS, this::delete);
  }

  /** A delete body ({@code points} or {@code filter}), parsed and applied. */
  Collection.UpdateResult delete(String name, JsonNode b, boolean wait) {
    Requests.refuseUnknown(b, Requests.Fields.SELECTOR, "");
    JsonNode pts = b.get("points");
    boolean hasFilter = b.has("filter") && !b.get("filter").isNull();
    if ((pts == null || pts.isNull()) == !hasFilter) {
      throw new InvalidInputException(
          "Wrong input: delete needs either `points` (a list of ids) or `filter`"
              + (hasFilter ? ", not both" : ""));
    }
    if (hasFilter) {
      Filter filter = FilterParser.parse(b.get("filter"), "filter");
      return service.deleteByFilter(name, filter, wait);
    }
    List<PointId> ids = Requests.ids(pts, "points");
    checkBatch(ids.size());
    return service.delete(name, ids, wait);
  }

  @GetMapping("/collections/{name}/points/{id}")
  Mono<ResponseEntity<byte[]>> getOne(@PathVariable String name, @PathVariable String id) {
    return blocking.answer(
        () -> {
          CollectionNames.validate(name);
          PointId pid = PointId.parse(id);
          strict.check(name, Route.GET_POINT, null);
          List<Record> r = service.retrieve(name, List.of(pid), true, true);
          if (r.isEmpty()) {
            throw noSuchPoint(pid);
          }
          return Output.record(
              Output.selectVectors(r.getFirst(), null, service.config(name)),
              Output.PayloadSelector.ALL,
              true);
        });
  }

  @PostMapping("/collections/{name}/points")
  Mono<ResponseEntity<byte[]>> retrieve(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return blocking.answer(name, body, Json::parse, b -> retrieve(name, b));
  }

  /** The points a parsed retrieve body names, as Qdrant renders them. */
  private ArrayNode retrieve(String name, JsonNode b) {
    Requests.refuseUnknown(b, Requests.Fields.RETRIEVE, "");
    strict.check(name, Route.RETRIEVE, b);
    List<PointId> ids = Requests.ids(b.get("ids"), "ids");
    checkBatch(ids.size());
    Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", true);
    boolean withVector = Output.withVector(b, "with_vector", false);
    java.util.Set<String> names = Output.vectorNames(b, "with_vector");
    CollectionConfig config = service.config(name);
    ArrayNode out = Json.array();
    for (Record r : service.retrieve(name, ids, sel.any(), withVector)) {
      out.add(Output.record(Output.selectVectors(r, names, config), sel, withVector));
    }
    return out;
  }

  @PostMapping("/collections/{name}/points/count")
  Mono<ResponseEntity<byte[]>> count(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return blocking.answer(name, body, Json::parseOptional, b -> count(name, b));
  }

  /** Qdrant's count result of a parsed count body. */
  private ObjectNode count(String name, JsonNode b) {
    Requests.refuseUnknown(b, Requests.Fields.COUNT, "");
    strict.check(name, Route.COUNT, b);
    Requests.bool(b, "exact", true); // always exact: counted from the live bitmaps
    Filter filter = Requests.filter(b, "");
    ObjectNode r = Json.object();
    r.put("count", service.count(name, filter));
    return r;
  }

  @PostMapping("/collections/{name}/points/scroll")
  Mono<ResponseEntity<byte[]>> scroll(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return blocking.answer(name, body, Json::parseOptional, b -> scroll(name, b));
  }

  /** Qdrant's scroll page of a parsed scroll body. */
  private ObjectNode scroll(String name, JsonNode b) {
    Requests.refuseUnknown(b, Requests.Fields.SCROLL, "");
    strict.check(name, Route.SCROLL, b);
    Filter filter = Requests.filter(b, "");
    JsonNode off = b.get("offset");
    PointId offset = off == null || off.isNull() ? null : Requests.id(off, "offset");
    int limit = Requests.nonNegativeInt(b, "limit", 10, maxBatch);
    if (limit == 0) {
      throw new InvalidInputException("Wrong input: limit must be positive [limit=0]");
    }
    Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", true);
    boolean withVector = Output.withVector(b, "with_vector", false);
    JsonNode orderBy = b.get("order_by");
    if (orderBy != null && !orderBy.isNull()) {
      if (offset != null) {
        throw Requests.invalid(
            "offset cannot be used with order_by; use order_by.start_from", "offset", off);
      }
      return orderedScroll(name, orderBy, limit, filter, sel, withVector);
    }
    ScrollPage page =
        service.scroll(name, new ScrollRequest(offset, limit, sel.any(), withVector, filter));
    ObjectNode r = Json.object();
    ArrayNode pts = r.putArray("points");
    java.util.Set<String> names = Output.vectorNames(b, "with_vector");
    CollectionConfig config = service.config(name);
    for (Record rec : page.points()) {
      pts.add(Output.record(Output.selectVectors(rec, names, config), sel, withVector));
    }
    if (page.nextOffset() == null) {
      r.putNull("next_page_offset");
    } else {
      Json.putId(r, "next_page_offset", page.nextOffset());
    }
    return r;
  }

  /**
   * Qdrant's {@code order_by}: a key, or {@code {"key": k, "direction": "asc|desc", "start_from":
   * number or datetime}}; points come in value order, each with its {@code order_value}, and {@code
   * next_page_offset} is null (continue with {@code start_from}).
   */
  private ObjectNode orderedScroll(
      String name,
      JsonNode orderBy,
      int limit,
      Filter filter,
      Output.PayloadSelector sel,
      boolean withVector) {
    OrderedScrollRequest req =
        Requests.orderBy(orderBy, "order_by", limit, filter, sel.any(), withVector);
    List<Ordered> page = service.scrollOrdered(name, req);
    var schema = service.describe(name).info().payloadSchema().field(req.key());
    ObjectNode r = Json.object();
    ArrayNode pts = r.putArray("points");
    CollectionConfig config = service.config(name);
    for (Ordered o : page) {
      ObjectNode p = Output.record(Output.selectVectors(o.record(), null, config), sel, withVector);
      double v = o.value();
      if (schema != null
          && schema.type() == io.flashvec.index.payload.PayloadFieldSchema.Type.DATETIME) {
        p.put("order_value", Math.floorDiv((long) v, 1000L)); // microseconds, as Qdrant
      } else if (v == Math.rint(v) && Math.abs(v) < 0x1p53) {
        p.put("order_value", (long) v);
      } else {
        p.put("order_value", v);
      }
      pts.add(p);
    }
    r.putNull("next_page_offset");
    return r;
  }

  private void checkBatch(int n) {
    if (n > maxBatch) {
      throw new TooLargeException(
          "Payload too large: batch has too many points [points=" + n + ", max=" + maxBatch + "]");
    }
  }

  /** Qdrant's UpdateResult: {@code {"operation_id": n, "status": "completed|acknowledged"}}. */
  public static ObjectNode update(Collection.UpdateResult r) {
    ObjectNode o = Json.object();
    o.put("operation_id", r.operationId());
    o.put("status", r.completed() ? "completed" : "acknowledged");
    return o;
  }

  /**
   * Parses {@code {"points": [...]}} or the columnar {@code {"batch": {...}}} for a collection
   * configured as {@code config} (its vector names).
   */
  List<Point> parsePoints(JsonNode b, CollectionConfig config) {
    JsonNode list = b.get("points");
    JsonNode batch = b.get("batch");
    List<Point> out;
    if (list != null && !list.isNull()) {
      if (!list.isArray()) {
        throw new InvalidInputException("Wrong input: points must be an array");
      }
      checkBatch(list.size());
      out = new ArrayList<>(list.size());
      for (int i = 0; i < list.size(); i++) {
        JsonNode p = list.get(i);
        if (!p.isObject()) {
          throw new InvalidInputException("Wrong input: points[" + i + "] must be an object");
        }
        PointId id = Requests.id(p.get("id"), "points[" + i + "].id");
        Requests.PointVectors v =
            Requests.pointVectors(p.get("vector"), "points[" + i + "].vector");
        out.add(v.toPoint(id, payload(p.get("payload"), "points[" + i + "].payload"), config));
      }
    } else if (batch != null && batch.isObject()) {
      List<PointId> ids = Requests.ids(batch.get("ids"), "batch.ids");
      checkBatch(ids.size());
      JsonNode vectors = batch.get("vectors");
      if (vectors != null && vectors.isObject()) {
        vectors = byPoint(vectors, ids.size());
      }
      if (vectors == null || !vectors.isArray() || vectors.size() != ids.size()) {
        throw new InvalidInputException(
            "Wrong input: batch.vectors must be an array with one vector per id [ids="
                + ids.size()
                + ", vectors="
                + (vectors != null && vectors.isArray() ? vectors.size() : 0)
                + "]");
      }
      JsonNode payloads = batch.get("payloads");
      if (payloads != null
          && !payloads.isNull()
          && (!payloads.isArray() || payloads.size() != ids.size())) {
        throw new InvalidInputException(
            "Wrong input: batch.payloads must be an array with one payload per id [ids="
                + ids.size()
                + "]");
      }
      out = new ArrayList<>(ids.size());
      for (int i = 0; i < ids.size(); i++) {
        Requests.PointVectors v = Requests.pointVectors(vectors.get(i), "batch.vectors[" + i + "]");
        byte[] payload =
            payloads == null || payloads.isNull()
                ? null
                : payload(payloads.get(i), "batch.payloads[" + i + "]");
        out.add(v.toPoint(ids.get(i), payload, config));
      }
    } else {
      throw new InvalidInputException(
          "Wrong input: upsert needs `points` (a list of {id, vector, payload}) or `batch` ({ids, vectors, payloads})");
    }
    return out;
  }

  /**
   * Qdrant's named columnar vectors {@code {"name": [v0, v1, ...], ...}} turned into one object of
   * vectors by name per point, with one vector per id under each name.
   */
  private static JsonNode byPoint(JsonNode named, int points) {
    tools.jackson.databind.node.ArrayNode out = Json.array();
    for (int i = 0; i < points; i++) {
      out.addObject();
    }
    for (java.util.Map.Entry<String, JsonNode> e : named.properties()) {
      JsonNode list = e.getValue();
      if (list == null || !list.isArray() || list.size() != points) {
        throw new InvalidInputException(
            "Wrong input: batch.vectors."
                + e.getKey()
                + " must be an array with one vector per id [ids="
                + points
                + ", vectors="
                + (list != null && list.isArray() ? list.size() : 0)
                + "]");
      }
      for (int i = 0; i < points; i++) {
        ((tools.jackson.databind.node.ObjectNode) out.get(i)).set(e.getKey(), list.get(i));
      }
    }
    return out;
  }

  private static byte[] payload(JsonNode p, String field) {
    if (p == null || p.isNull()) {
      return null;
    }
    if (!p.isObject()) {
      throw Requests.invalid("payload must be a JSON object", field, p);
    }
    return Json.MAPPER.writeValueAsBytes(p);
  }
}
