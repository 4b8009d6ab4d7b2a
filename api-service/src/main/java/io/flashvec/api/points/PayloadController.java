package io.flashvec.api.points;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.collections.StrictModeGuard;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.index.TooLargeException;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterParser;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Payload-only updates in Qdrant's shapes: set (merge top-level keys), overwrite, delete keys and
 * clear, for points given by id ({@code points}) or by a Qdrant {@code filter}; the vectors stay as
 * they are.
 */
@RestController
public class PayloadController {

  private final CollectionService service;
  private final Blocking blocking;
  private final int maxBatch;
  private final StrictModeGuard strict;

  PayloadController(
      CollectionService service,
      Blocking blocking,
      FlashVecProperties props,
      StrictModeGuard strict) {
    this.service = service;
    this.blocking = blocking;
    this.maxBatch = props.limits().maxBatchPoints();
    this.strict = strict;
  }

  @PostMapping("/collections/{name}/points/payload")
  Mono<ResponseEntity<byte[]>> setPayload(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return update(name, wait, body, SET);
  }

  /** The changes of set_payload, overwrite_payload, delete_payload and clear_payload bodies. */
  static final java.util.function.Function<JsonNode, UnaryOperator<byte[]>> SET =
      b -> {
        JsonNode key = b.get("key");
        if (key == null || key.isNull()) {
          return merge(payload(b));
        }
        if (!key.isString()) {
          throw Requests.invalid("`key` must be a payload key (a string)", "key", key);
        }
        ObjectNode add = payload(b);
        FieldPath path = FieldPath.parse(key.asString(), "key");
        return old -> {
          ObjectNode o = old == null ? Json.object() : (ObjectNode) Json.readStored(old);
          io.flashvec.api.web.PayloadPaths.set(o, path, add);
          return Json.MAPPER.writeValueAsBytes(o);
        };
      };

  static final java.util.function.Function<JsonNode, UnaryOperator<byte[]>> OVERWRITE =
      b -> {
        if (b.has("key") && !b.get("key").isNull()) {
          // Qdrant ignores it here; a key that would change nothing is refused instead
          throw Requests.invalid(
              "overwrite_payload replaces the whole payload and takes no `key`; use set_payload"
                  + " with `key` to set values under a nested key",
              "key",
              b.get("key"));
        }
        byte[] replacement = Json.MAPPER.writeValueAsBytes(payload(b));
        return old -> replacement;
      };

  static final java.util.function.Function<JsonNode, UnaryOperator<byte[]>> DELETE_KEYS =
      PayloadController::deleteKeys;

  static final java.util.function.Function<JsonNode, UnaryOperator<byte[]>> CLEAR =
      b -> old -> null;

  @PutMapping("/collections/{name}/points/payload")
  Mono<ResponseEntity<byte[]>> overwritePayload(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return update(name, wait, body, OVERWRITE);
  }

  @PostMapping("/collections/{name}/points/payload/delete")
  Mono<ResponseEntity<byte[]>> deletePayloadKeys(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return update(name, wait, body, DELETE_KEYS);
  }

  private static UnaryOperator<byte[]> deleteKeys(JsonNode b) {
    JsonNode keys = b.get("keys");
    if (keys == null || !keys.isArray()) {
      throw new InvalidInputException("Wrong input: `keys` must be an array of payload keys");
    }
    List<FieldPath> paths = new ArrayList<>();
    for (JsonNode k : keys) {
      if (!k.isString()) {
        throw Requests.invalid("payload key must be a string", "keys", keys);
      }
      paths.add(FieldPath.parse(k.asString(), "keys[" + paths.size() + "]"));
    }
    return old -> {
      if (old == null) {
        return null;
      }
      ObjectNode o = (ObjectNode) Json.readStored(old);
      for (FieldPath path : paths) {
        io.flashvec.api.web.PayloadPaths.remove(o, path);
      }
      return Json.MAPPER.writeValueAsBytes(o);
    };
  }

  @PostMapping("/collections/{name}/points/payload/clear")
  Mono<ResponseEntity<byte[]>> clearPayload(
      @PathVariable String name,
      @RequestParam(defaultValue = "false") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return update(name, wait, body, CLEAR);
  }

  /** Parses the body, the point selector and the change, then applies it. */
  private Mono<ResponseEntity<byte[]>> update(
      String name,
      boolean wait,
      byte[] body,
      java.util.function.Function<JsonNode, UnaryOperator<byte[]>> change) {
    StrictModeGuard.Route route =
        change == CLEAR
            ? StrictModeGuard.Route.CLEAR_PAYLOAD
            : change == DELETE_KEYS
                ? StrictModeGuard.Route.DELETE_PAYLOAD
                : StrictModeGuard.Route.SET_PAYLOAD;
    io.flashvec.api.web.Blocking.BodyWork work =
        b -> {
          strict.check(name, route, b);
          return PointsController.update(apply(name, b, wait, change));
        };
    return wait
        ? blocking.answerWaitedWrite(name, body, work)
        : blocking.answerWrite(name, body, work);
  }

  /** Applies a parsed payload-update body: its point selector and the change it describes. */
  Collection.UpdateResult apply(
      String name,
      JsonNode b,
      boolean wait,
      java.util.function.Function<JsonNode, UnaryOperator<byte[]>> change) {
    // Qdrant's clear_payload takes {"points": [...]} or {"filter": {...}}; the others take
    // "points" or "filter" beside the change.
    Requests.refuseUnknown(
        b,
        change == CLEAR
            ? Requests.Fields.SELECTOR
            : change == DELETE_KEYS ? Requests.Fields.DELETE_PAYLOAD : Requests.Fields.SET_PAYLOAD,
        "");
    JsonNode pts = b.isArray() ? b : b.get("points");
    boolean hasFilter = b.isObject() && b.has("filter") && !b.get("filter").isNull();
    if ((pts == null || pts.isNull()) == !hasFilter) {
      throw new InvalidInputException(
          "Wrong input: payload updates need either `points` (a list of ids) or `filter`"
              + (hasFilter ? ", not both" : ""));
    }
    if (hasFilter) {
      Filter filter = FilterParser.parse(b.get("filter"), "filter");
      UnaryOperator<byte[]> fn = change.apply(b);
      return service.updatePayloadsByFilter(name, filter, fn, wait);
    }
    List<PointId> ids = Requests.ids(pts, "points");
    if (ids.size() > maxBatch) {
      throw new TooLargeException(
          "Payload too large: too many points [points=" + ids.size() + ", max=" + maxBatch + "]");
    }
    UnaryOperator<byte[]> fn = change.apply(b);
    // as Qdrant: an id that does not exist is a 404 and nothing changes (a delete racing with
    // the update may still remove a point in between; the update then skips it)
    PointsController.requireAll(service, name, ids, false);
    return service.updatePayloads(name, ids, fn, wait);
  }

  private static ObjectNode payload(JsonNode b) {
    JsonNode p = b.get("payload");
    if (p == null || !p.isObject()) {
      throw Requests.invalid("`payload` must be a JSON object", "payload", p);
    }
    return (ObjectNode) p;
  }

  private static UnaryOperator<byte[]> merge(ObjectNode add) {
    return old -> {
      ObjectNode o = old == null ? Json.object() : (ObjectNode) Json.readStored(old);
      o.setAll(add);
      return Json.MAPPER.writeValueAsBytes(o);
    };
  }
}
