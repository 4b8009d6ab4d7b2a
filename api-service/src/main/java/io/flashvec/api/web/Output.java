package io.flashvec.api.web;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Record;
import io.flashvec.index.filter.FieldPath;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Renders stored points as Qdrant does, and parses {@code with_payload} / {@code with_vector}.
 *
 * <p>{@code with_payload} may be a boolean, a list of keys to include, or {@code {"include":
 * [...]}} / {@code {"exclude": [...]}}; keys are paths as in filters ({@link PayloadPaths}).
 */
public final class Output {

  private Output() {}

  /** Which payload keys to return. */
  public record PayloadSelector(boolean any, List<FieldPath> include, List<FieldPath> exclude) {
    public static final PayloadSelector ALL = new PayloadSelector(true, null, null);
    public static final PayloadSelector NONE = new PayloadSelector(false, null, null);

    /** Parses {@code field} of {@code parent}, defaulting to {@code dflt}. */
    public static PayloadSelector parse(JsonNode parent, String field, boolean dflt) {
      JsonNode n = parent.get(field);
      if (n == null || n.isNull()) {
        return dflt ? ALL : NONE;
      }
      if (n.isBoolean()) {
        return n.booleanValue() ? ALL : NONE;
      }
      if (n.isArray()) {
        return new PayloadSelector(true, keys(n, field), null);
      }
      if (n.isObject() && n.has("include")) {
        return new PayloadSelector(true, keys(n.get("include"), field + ".include"), null);
      }
      if (n.isObject() && n.has("exclude")) {
        return new PayloadSelector(true, null, keys(n.get("exclude"), field + ".exclude"));
      }
      throw Requests.invalid(
          field + " must be a boolean, a list of keys, or {include|exclude: [...]}", field, n);
    }

    private static List<FieldPath> keys(JsonNode arr, String field) {
      if (arr == null || !arr.isArray()) {
        throw new InvalidInputException(
            "Wrong input: " + field + " must be a list of payload keys");
      }
      List<FieldPath> s = new ArrayList<>();
      for (JsonNode k : arr) {
        if (!k.isString()) {
          throw Requests.invalid("payload key must be a string", field, k);
        }
        s.add(FieldPath.parse(k.asString(), field + "[" + s.size() + "]"));
      }
      return s;
    }
  }

  /** Parses {@code with_vector}: a boolean (named-vector lists select the default vector). */
  public static boolean withVector(JsonNode parent, String field, boolean dflt) {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (n.isBoolean()) {
      return n.booleanValue();
    }
    if (n.isArray()) {
      return !n.isEmpty();
    }
    throw Requests.invalid(field + " must be a boolean", field, n);
  }

  /** A point as returned by get/retrieve/scroll. */
  public static ObjectNode record(Record r, PayloadSelector sel, boolean withVector) {
    ObjectNode o = Json.object();
    Json.putId(o, "id", r.id());
    putPayload(o, r.payload(), sel);
    putVector(o, r.vector(), withVector);
    return o;
  }

  /** A search hit (ScoredPoint). */
  public static ObjectNode scored(Record r, PayloadSelector sel, boolean withVector) {
    ObjectNode o = Json.object();
    Json.putId(o, "id", r.id());
    o.put("version", 0);
    o.put("score", r.score());
    putPayload(o, r.payload(), sel);
    putVector(o, r.vector(), withVector);
    return o;
  }

  public static ArrayNode scoredList(List<Record> hits, PayloadSelector sel, boolean withVector) {
    ArrayNode a = Json.array();
    for (Record r : hits) {
      a.add(scored(r, sel, withVector));
    }
    return a;
  }

  private static void putPayload(ObjectNode o, byte[] payload, PayloadSelector sel) {
    if (!sel.any()) {
      o.putNull("payload");
      return;
    }
    if (payload == null) {
      o.putObject("payload");
      return;
    }
    JsonNode p = Json.readStored(payload);
    if (p instanceof ObjectNode map && sel.include() != null) {
      p = PayloadPaths.include(map, sel.include());
    } else if (p instanceof ObjectNode map && sel.exclude() != null) {
      p = PayloadPaths.exclude(map, sel.exclude());
    }
    o.set("payload", p);
  }

  private static void putVector(ObjectNode o, float[] v, boolean withVector) {
    if (!withVector || v == null) {
      o.putNull("vector");
      return;
    }
    ArrayNode a = o.putArray("vector");
    for (float x : v) {
      a.add(x);
    }
  }
}
