package io.flashvec.index.filter;

import io.flashvec.index.PointId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Evaluates a {@link Filter} against a point's id and payload JSON bytes.
 *
 * <h2>Semantics (Qdrant's, where Qdrant documents them)</h2>
 *
 * <ul>
 *   <li>A key's <em>values</em> are what its path reaches: objects are descended by name, arrays
 *       met on the way are descended element by element (with or without {@code []}), {@code [n]}
 *       picks one element, and an array at the end contributes its elements. A missing key has no
 *       values.
 *   <li>{@code match.value}/{@code any}, {@code text} and {@code range} hold when <em>some</em>
 *       value satisfies them; types never mix (the string {@code "1"} is not the integer {@code 1},
 *       a float is not an integer; ranges compare numbers, or datetime strings for datetime
 *       bounds).
 *   <li>{@code match.except} holds when the key has no (non-null) value or some value is not in the
 *       list.
 *   <li>{@code is_empty}: no non-null value ({@code missing}, {@code null}, {@code []}). {@code
 *       is_null}: the path reaches a JSON {@code null} (not inside an array).
 *   <li>{@code nested}: some object among the key's values satisfies the inner filter.
 *   <li>{@code must}: all; {@code should}: at least one if non-empty; {@code must_not}: none;
 *       {@code min_should}: at least {@code min_count}.
 * </ul>
 *
 * <h2>Cost</h2>
 *
 * The payload is parsed with a streaming parser that builds trees only for the top-level keys the
 * filter mentions and skips the others, so large unrelated payload fields cost a scan, not an
 * allocation. Nothing is cached between points. Immutable and thread-safe.
 */
public final class FilterEvaluator {

  /** Reads one value at a time from a parser positioned inside the payload object. */
  private static final JsonMapper MAPPER =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();

  /**
   * How {@code match.text} tokenizes, for keys with a full-text payload index: then a value matches
   * when it contains every token of the query (Qdrant's semantics with a text index); without one
   * the query must be a substring of the value.
   */
  public interface TextTokens {
    /** The query's tokens for {@code key}, or {@code null} if the key has no text index. */
    List<String> queryTokens(FieldPath key, String text);

    /** The tokens of one value of {@code key} (a key with a text index). */
    List<String> valueTokens(FieldPath key, String value);
  }

  private final Filter filter;
  private final Set<String> heads;
  private final boolean needsPayload;
  private final TextTokens text;
  private final java.util.Map<Condition.MatchText, List<String>> textQueries =
      new java.util.IdentityHashMap<>();

  public FilterEvaluator(Filter filter) {
    this(filter, null);
  }

  /** An evaluator whose {@code match.text} tokenizes with {@code text} where it can. */
  public FilterEvaluator(Filter filter, TextTokens text) {
    this.filter = filter;
    this.text = text;
    if (text != null) {
      collectText(filter);
    }
    Set<String> h = new HashSet<>();
    collectHeads(filter, h);
    this.heads = Set.copyOf(h);
    this.needsPayload = !heads.isEmpty();
  }

  public Filter filter() {
    return filter;
  }

  /** Whether the filter matches every point (callers can skip evaluation). */
  public boolean matchesAll() {
    return filter.isEmpty();
  }

  private void collectText(Condition c) {
    switch (c) {
      case Filter f -> {
        f.must().forEach(this::collectText);
        f.should().forEach(this::collectText);
        f.mustNot().forEach(this::collectText);
        if (f.minShould() != null) {
          f.minShould().conditions().forEach(this::collectText);
        }
      }
      case Condition.Nested n -> {} // keys inside are relative to the array's objects
      case Condition.MatchText m -> {
        List<String> q = text.queryTokens(m.key(), m.text());
        if (q != null) {
          textQueries.put(m, q);
        }
      }
      default -> {}
    }
  }

  private static void collectHeads(Condition c, Set<String> out) {
    switch (c) {
      case Filter f -> {
        f.must().forEach(x -> collectHeads(x, out));
        f.should().forEach(x -> collectHeads(x, out));
        f.mustNot().forEach(x -> collectHeads(x, out));
        if (f.minShould() != null) {
          f.minShould().conditions().forEach(x -> collectHeads(x, out));
        }
      }
      case Condition.MatchValue m -> out.add(m.key().head());
      case Condition.MatchAny m -> out.add(m.key().head());
      case Condition.MatchExcept m -> out.add(m.key().head());
      case Condition.MatchText m -> out.add(m.key().head());
      case Condition.Range r -> out.add(r.key().head());
      case Condition.DatetimeRange r -> out.add(r.key().head());
      case Condition.IsEmpty e -> out.add(e.key().head());
      case Condition.IsNull e -> out.add(e.key().head());
      case Condition.Nested n -> out.add(n.key().head());
      case Condition.HasId h -> {}
    }
  }

  /** Whether the point with this id and payload ({@code null}: none) matches. */
  public boolean matches(PointId id, byte[] payload) {
    if (filter.isEmpty()) {
      return true;
    }
    JsonNode root = needsPayload ? parse(payload) : null;
    return eval(filter, id, root);
  }

  /** Whether the point matches, given its payload as a parsed JSON object ({@code null}: none). */
  public boolean matches(PointId id, JsonNode payload) {
    return eval(filter, id, payload);
  }

  /** Parses only the top-level keys the filter needs; {@code null} for no or malformed payload. */
  private JsonNode parse(byte[] payload) {
    if (payload == null || payload.length == 0) {
      return null;
    }
    try (JsonParser p = MAPPER.createParser(StoredPayloads.repair(payload))) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      ObjectNode out = MAPPER.createObjectNode();
      while (p.nextToken() == JsonToken.PROPERTY_NAME) {
        String name = p.currentName();
        p.nextToken();
        if (heads.contains(name)) {
          out.set(name, MAPPER.readTree(p));
        } else {
          p.skipChildren();
        }
      }
      return out;
    } catch (JacksonException e) {
      // Payloads are validated JSON objects on the way in; an unreadable one has no fields.
      return null;
    }
  }

  private boolean eval(Condition c, PointId id, JsonNode root) {
    return switch (c) {
      case Filter f -> evalFilter(f, id, root);
      case Condition.HasId h -> h.ids().contains(id);
      case Condition.MatchValue m -> {
        for (JsonNode v : values(m.key(), root)) {
          if (m.value().equals(matchable(v))) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.MatchAny m -> {
        for (JsonNode v : values(m.key(), root)) {
          Object x = matchable(v);
          if (x != null && m.values().contains(x)) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.MatchExcept m -> {
        boolean any = false;
        for (JsonNode v : values(m.key(), root)) {
          if (v.isNull()) {
            continue;
          }
          any = true;
          Object x = matchable(v);
          if (x == null || !m.values().contains(x)) {
            yield true;
          }
        }
        yield !any;
      }
      case Condition.MatchText m -> {
        List<String> tokens = textQueries.get(m);
        if (tokens != null) {
          yield matchesTokens(m.key(), tokens, root);
        }
        for (JsonNode v : values(m.key(), root)) {
          if (v.isString() && v.asString().contains(m.text())) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.Range r -> {
        for (JsonNode v : values(r.key(), root)) {
          if (v.isNumber() && inRange(v.doubleValue(), r)) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.DatetimeRange r -> {
        for (JsonNode v : values(r.key(), root)) {
          if (v.isString()) {
            Instant t = FilterParser.parseDatetime(v.asString());
            if (t != null && inRange(t, r)) {
              yield true;
            }
          }
        }
        yield false;
      }
      case Condition.IsEmpty e -> {
        for (JsonNode v : values(e.key(), root)) {
          if (!v.isNull()) {
            yield false;
          }
        }
        yield true;
      }
      case Condition.IsNull e -> {
        List<JsonNode> raw = new ArrayList<>(2);
        reach(root, e.key().steps(), 0, raw);
        for (JsonNode v : raw) {
          if (v.isNull()) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.Nested n -> {
        for (JsonNode v : values(n.key(), root)) {
          if (v.isObject() && evalFilter(n.filter(), id, v)) {
            yield true;
          }
        }
        yield false;
      }
    };
  }

  private boolean evalFilter(Filter f, PointId id, JsonNode root) {
    for (Condition c : f.must()) {
      if (!eval(c, id, root)) {
        return false;
      }
    }
    for (Condition c : f.mustNot()) {
      if (eval(c, id, root)) {
        return false;
      }
    }
    if (!f.should().isEmpty()) {
      boolean any = false;
      for (Condition c : f.should()) {
        if (eval(c, id, root)) {
          any = true;
          break;
        }
      }
      if (!any) {
        return false;
      }
    }
    if (f.minShould() != null) {
      int need = f.minShould().minCount();
      for (Condition c : f.minShould().conditions()) {
        if (need <= 0) {
          break;
        }
        if (eval(c, id, root)) {
          need--;
        }
      }
      return need <= 0;
    }
    return true;
  }

  private boolean matchesTokens(FieldPath key, List<String> tokens, JsonNode root) {
    for (JsonNode v : values(key, root)) {
      if (v.isString() && new HashSet<>(text.valueTokens(key, v.asString())).containsAll(tokens)) {
        return true;
      }
    }
    return false;
  }

  private static boolean inRange(double v, Condition.Range r) {
    return (Double.isNaN(r.gt()) || v > r.gt())
        && (Double.isNaN(r.gte()) || v >= r.gte())
        && (Double.isNaN(r.lt()) || v < r.lt())
        && (Double.isNaN(r.lte()) || v <= r.lte());
  }

  private static boolean inRange(Instant t, Condition.DatetimeRange r) {
    return (r.gt() == null || t.isAfter(r.gt()))
        && (r.gte() == null || !t.isBefore(r.gte()))
        && (r.lt() == null || t.isBefore(r.lt()))
        && (r.lte() == null || !t.isAfter(r.lte()));
  }

  /** A JSON scalar as a match operand: String, Long or Boolean; {@code null} for other types. */
  private static Object matchable(JsonNode v) {
    if (v.isString()) {
      return v.asString();
    }
    if (v.isBoolean()) {
      return v.booleanValue();
    }
    if (v.isIntegralNumber() && v.canConvertToLong()) {
      return v.longValue();
    }
    return null;
  }

  /** The values a path reaches, arrays at the end flattened into their elements. */
  public static List<JsonNode> values(FieldPath path, JsonNode root) {
    List<JsonNode> raw = new ArrayList<>(2);
    reach(root, path.steps(), 0, raw);
    List<JsonNode> out = raw;
    for (JsonNode v : raw) {
      if (v.isArray()) {
        out = new ArrayList<>();
        for (JsonNode x : raw) {
          if (x.isArray()) {
            x.forEach(out::add);
          } else {
            out.add(x);
          }
        }
        break;
      }
    }
    return out;
  }

  private static void reach(JsonNode node, List<FieldPath.Step> steps, int i, List<JsonNode> out) {
    if (node == null) {
      return;
    }
    if (i == steps.size()) {
      out.add(node);
      return;
    }
    if (node.isArray()) {
      for (JsonNode e : node) {
        reach(e, steps, i, out);
      }
      return;
    }
    if (!node.isObject()) {
      return;
    }
    FieldPath.Step s = steps.get(i);
    JsonNode child = node.get(s.name());
    if (child == null) {
      return;
    }
    if (s.index() == FieldPath.NO_INDEX) {
      reach(child, steps, i + 1, out);
    } else if (s.index() == FieldPath.ALL) {
      if (child.isArray()) {
        for (JsonNode e : child) {
          reach(e, steps, i + 1, out);
        }
      }
    } else if (child.isArray() && s.index() < child.size()) {
      reach(child.get(s.index()), steps, i + 1, out);
    }
  }
}
