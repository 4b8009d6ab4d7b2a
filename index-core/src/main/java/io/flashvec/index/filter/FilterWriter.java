package io.flashvec.index.filter;

import io.flashvec.index.PointId;
import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes a {@link Filter} back as the Qdrant JSON {@link FilterParser} reads: {@code
 * FilterParser.parse(FilterWriter.toJson(f))} equals {@code f}. Cluster mode sends filters to the
 * query nodes this way, so a shard runs exactly the filter the proxy parsed.
 */
public final class FilterWriter {

  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private FilterWriter() {}

  /** The filter as a JSON string; {@code ""} for {@code null} or the empty filter. */
  public static String toJsonString(Filter filter) {
    return filter == null || filter.isEmpty() ? "" : JSON.writeValueAsString(toJson(filter));
  }

  /** Parses {@link #toJsonString} output; {@code null} for {@code ""}. */
  public static Filter fromJsonString(String json) {
    if (json == null || json.isEmpty()) {
      return null;
    }
    return FilterParser.parse(JSON.readTree(json), "filter");
  }

  /** The filter as a JSON object. */
  public static ObjectNode toJson(Filter f) {
    ObjectNode o = F.objectNode();
    clause(o, "must", f.must());
    clause(o, "should", f.should());
    clause(o, "must_not", f.mustNot());
    if (f.minShould() != null) {
      ObjectNode ms = o.putObject("min_should");
      ArrayNode a = ms.putArray("conditions");
      f.minShould().conditions().forEach(c -> a.add(condition(c)));
      ms.put("min_count", f.minShould().minCount());
    }
    return o;
  }

  private static void clause(ObjectNode o, String name, List<Condition> conditions) {
    if (!conditions.isEmpty()) {
      ArrayNode a = o.putArray(name);
      conditions.forEach(c -> a.add(condition(c)));
    }
  }

  private static JsonNode condition(Condition c) {
    return switch (c) {
      case Filter f -> toJson(f);
      case Condition.MatchValue m -> match(m.key(), "value", value(m.value()));
      case Condition.MatchAny m -> match(m.key(), "any", values(m.values()));
      case Condition.MatchExcept m -> match(m.key(), "except", values(m.values()));
      case Condition.MatchText m -> match(m.key(), "text", F.stringNode(m.text()));
      case Condition.Range r -> {
        ObjectNode o = keyed(r.key());
        ObjectNode b = o.putObject("range");
        bound(b, "gt", r.gt());
        bound(b, "gte", r.gte());
        bound(b, "lt", r.lt());
        bound(b, "lte", r.lte());
        yield o;
      }
      case Condition.DatetimeRange r -> {
        ObjectNode o = keyed(r.key());
        ObjectNode b = o.putObject("range");
        bound(b, "gt", r.gt());
        bound(b, "gte", r.gte());
        bound(b, "lt", r.lt());
        bound(b, "lte", r.lte());
        yield o;
      }
      case Condition.HasId h -> {
        ObjectNode o = F.objectNode();
        ArrayNode a = o.putArray("has_id");
        h.ids().forEach(id -> a.add(id(id)));
        yield o;
      }
      case Condition.IsEmpty e -> {
        ObjectNode o = F.objectNode();
        o.putObject("is_empty").put("key", e.key().key());
        yield o;
      }
      case Condition.IsNull n -> {
        ObjectNode o = F.objectNode();
        o.putObject("is_null").put("key", n.key().key());
        yield o;
      }
      case Condition.Nested n -> {
        ObjectNode o = F.objectNode();
        ObjectNode inner = o.putObject("nested");
        inner.put("key", n.key().key());
        inner.set("filter", toJson(n.filter()));
        yield o;
      }
    };
  }

  private static ObjectNode keyed(FieldPath key) {
    ObjectNode o = F.objectNode();
    o.put("key", key.key());
    return o;
  }

  private static ObjectNode match(FieldPath key, String kind, JsonNode value) {
    ObjectNode o = keyed(key);
    o.putObject("match").set(kind, value);
    return o;
  }

  private static JsonNode value(Object v) {
    return switch (v) {
      case String s -> F.stringNode(s);
      case Boolean b -> F.booleanNode(b);
      case Long l -> F.numberNode(l);
      case Integer i -> F.numberNode(i.longValue());
      default ->
          throw new IllegalArgumentException("not a match value: " + v + " (" + v.getClass() + ")");
    };
  }

  private static ArrayNode values(Set<Object> vs) {
    ArrayNode a = F.arrayNode();
    vs.forEach(v -> a.add(value(v)));
    return a;
  }

  private static void bound(ObjectNode b, String name, double v) {
    if (!Double.isNaN(v)) {
      b.put(name, v);
    }
  }

  private static void bound(ObjectNode b, String name, Instant v) {
    if (v != null) {
      b.put(name, v.toString());
    }
  }

  private static JsonNode id(PointId id) {
    if (id.isUuid()) {
      return F.stringNode(id.uuid().toString());
    }
    return F.numberNode(new BigInteger(Long.toUnsignedString(id.loBits())));
  }
}
