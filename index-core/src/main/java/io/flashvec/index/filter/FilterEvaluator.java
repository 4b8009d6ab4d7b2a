package io.flashvec.index.filter;

import io.flashvec.index.PointId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
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
 *   <li>A key's <em>values</em> are what its path reaches: objects are descended by name, {@code
 *       name[]} descends every element of an array and {@code name[n]} one, and an array at the end
 *       contributes its elements. A name step does not enter an array ({@code a.b} reaches nothing
 *       when {@code a} is an array of objects; {@code a[].b} does), as in Qdrant. A missing key has
 *       no values.
 *   <li>{@code match.value}/{@code any}, {@code text} and {@code range} hold when <em>some</em>
 *       value satisfies them; types never mix (the string {@code "1"} is not the integer {@code 1},
 *       a float is not an integer; ranges compare numbers, or datetime strings for datetime
 *       bounds).
 *   <li>{@code match.except} holds when the key has no (non-null) value or some value is not in the
 *       list.
 *   <li>{@code is_empty}: no non-null value ({@code missing}, {@code null}, {@code []}). {@code
 *       is_null}: the path reaches a JSON {@code null} (not inside an array).
 *   <li>{@code match.text_any}: with a text index on the key, some value holds one of the query's
 *       tokens; without, one of its whitespace-separated words is a substring of some value. An
 *       empty query matches nothing.
 *   <li>{@code match.phrase}: with a text index, some value holds the phrase's tokens adjacent and
 *       in order (never across two values of an array; nothing matches on an index made without
 *       {@code phrase_matching}, or for a phrase without tokens); without, the phrase is a
 *       substring of some value.
 *   <li>{@code match.prefix}: some string value starts with the prefix (case-sensitive; the empty
 *       prefix matches every string).
 *   <li>{@code values_count}: the count of some value the path reaches lies within the bounds: an
 *       array counts its elements, {@code null} 0, anything else 1; a path that reaches nothing
 *       counts 0 (so {@code lt: 1} matches a missing key).
 *   <li>Geo conditions: some value (or element of an array value) is an object with numeric {@code
 *       lon} and {@code lat} in range that lies inside the area; see {@link Geo}.
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

    /**
     * The tokens of {@code match.phrase} on {@code key}, in order with repeats, each with its
     * position relative to the first; {@code null} if the key has no text index, empty when the
     * phrase can match nothing there (it has no token, or the index was made without phrase
     * matching).
     */
    List<Token> phraseTokens(FieldPath key, String phrase);

    /** The words of one value of {@code key} with their positions, as a phrase compares them. */
    List<Token> valuePositions(FieldPath key, String value);
  }

  /** A token and its position in the token stream of one string. */
  public record Token(String term, int position) {}

  private final Filter filter;
  private final Set<String> heads;
  private final boolean needsPayload;
  private final boolean needsVectors;
  private final TextTokens text;
  private String primaryVectorName = "";
  private java.util.function.UnaryOperator<String> vectorKey;
  private final java.util.Map<Condition, List<String>> textQueries =
      new java.util.IdentityHashMap<>();
  private final java.util.Map<Condition.MatchPhrase, List<Token>> phraseQueries =
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
    Set<String> names = new HashSet<>();
    collectVectorNames(filter, names);
    this.needsVectors = !names.isEmpty();
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
      case Condition.MatchTextAny m -> {
        List<String> q = text.queryTokens(m.key(), m.text());
        if (q != null) {
          textQueries.put(m, q);
        }
      }
      case Condition.MatchPhrase m -> {
        List<Token> q = text.phraseTokens(m.key(), m.phrase());
        if (q != null) {
          phraseQueries.put(m, q);
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
      case Condition.MatchTextAny m -> out.add(m.key().head());
      case Condition.MatchPhrase m -> out.add(m.key().head());
      case Condition.MatchPrefix m -> out.add(m.key().head());
      case Condition.ValuesCount v -> out.add(v.key().head());
      case Condition.FieldIsEmpty e -> out.add(e.key().head());
      case Condition.FieldIsNull e -> out.add(e.key().head());
      case Condition.GeoRadius g -> out.add(g.key().head());
      case Condition.GeoBoundingBox g -> out.add(g.key().head());
      case Condition.GeoPolygon g -> out.add(g.key().head());
      case Condition.Range r -> out.add(r.key().head());
      case Condition.DatetimeRange r -> out.add(r.key().head());
      case Condition.IsEmpty e -> out.add(e.key().head());
      case Condition.IsNull e -> out.add(e.key().head());
      case Condition.Nested n -> out.add(n.key().head());
      case Condition.HasId h -> {}
      case Condition.HasVector h -> {}
      case Condition.Slice sl -> {}
    }
  }

  /**
   * Names the collection's primary dense vector: {@code has_vector} of that name asks for the
   * vector the predicate of {@link #matches(PointId, byte[], Predicate)} calls {@code ""}.
   */
  public FilterEvaluator primaryVectorName(String name) {
    this.primaryVectorName = name;
    return this;
  }

  /**
   * Maps the names {@code has_vector} gives to the keys the point's vectors are stored under (the
   * collection's {@code internalName}: {@code ""} for the primary vector, a storage key for a dense
   * field added after creation); replaces {@link #primaryVectorName}.
   */
  public FilterEvaluator vectorKeys(java.util.function.UnaryOperator<String> key) {
    this.vectorKey = key;
    return this;
  }

  /** Whether the point with this id and payload ({@code null}: none) matches. */
  public boolean matches(PointId id, byte[] payload) {
    if (filter.isEmpty()) {
      return true;
    }
    JsonNode root = needsPayload ? parse(payload) : null;
    return eval(filter, id, root, null);
  }

  /**
   * Whether the point with this id, payload ({@code null}: none) and vectors ({@code
   * vectors.test(name)}: whether it has the vector {@code name}, {@code ""} the default dense one)
   * matches.
   */
  public boolean matches(PointId id, byte[] payload, Predicate<String> vectors) {
    if (filter.isEmpty()) {
      return true;
    }
    JsonNode root = needsPayload ? parse(payload) : null;
    return eval(filter, id, root, vectors);
  }

  /** Whether the filter reads payloads (it has conditions on payload keys). */
  public boolean needsPayload() {
    return needsPayload;
  }

  /** Whether the filter has a {@code has_vector} condition (it then needs the point's vectors). */
  public boolean needsVectors() {
    return needsVectors;
  }

  /** The vector names the filter's {@code has_vector} conditions name. */
  public Set<String> vectorNames() {
    Set<String> out = new HashSet<>();
    collectVectorNames(filter, out);
    return out;
  }

  private static void collectVectorNames(Condition c, Set<String> out) {
    switch (c) {
      case Filter f -> {
        f.must().forEach(x -> collectVectorNames(x, out));
        f.should().forEach(x -> collectVectorNames(x, out));
        f.mustNot().forEach(x -> collectVectorNames(x, out));
        if (f.minShould() != null) {
          f.minShould().conditions().forEach(x -> collectVectorNames(x, out));
        }
      }
      case Condition.Nested n -> collectVectorNames(n.filter(), out);
      case Condition.HasVector h -> out.add(h.name());
      default -> {}
    }
  }

  /** Whether the point matches, given its payload as a parsed JSON object ({@code null}: none). */
  public boolean matches(PointId id, JsonNode payload) {
    return eval(filter, id, payload, null);
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

  private boolean eval(Condition c, PointId id, JsonNode root, Predicate<String> vectors) {
    return switch (c) {
      case Filter f -> evalFilter(f, id, root, vectors);
      case Condition.HasId h -> h.ids().contains(id);
      case Condition.HasVector h -> {
        if (vectors == null) {
          throw new IllegalStateException("has_vector is evaluated with the point's vectors");
        }
        yield vectors.test(
            vectorKey != null
                ? vectorKey.apply(h.name())
                : h.name().equals(primaryVectorName) ? "" : h.name());
      }
      case Condition.Slice sl -> sl.contains(id);
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
      case Condition.MatchTextAny m -> {
        List<String> tokens = textQueries.get(m);
        if (tokens != null) {
          yield matchesAnyToken(m.key(), tokens, root);
        }
        String[] words = m.text().strip().split("(?U)\\s+");
        for (JsonNode v : values(m.key(), root)) {
          if (v.isString()) {
            for (String w : words) {
              if (!w.isEmpty() && v.asString().contains(w)) {
                yield true;
              }
            }
          }
        }
        yield false;
      }
      case Condition.MatchPhrase m -> {
        List<Token> phrase = phraseQueries.get(m);
        if (phrase != null) {
          yield matchesPhrase(m.key(), phrase, root);
        }
        for (JsonNode v : values(m.key(), root)) {
          if (v.isString() && v.asString().contains(m.phrase())) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.MatchPrefix m -> {
        for (JsonNode v : values(m.key(), root)) {
          if (v.isString() && v.asString().startsWith(m.prefix())) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.ValuesCount vc -> {
        List<JsonNode> raw = new ArrayList<>(2);
        reach(root, vc.key().steps(), 0, raw);
        if (raw.isEmpty()) {
          yield vc.accepts(0);
        }
        for (JsonNode v : raw) {
          if (vc.accepts(v.isArray() ? v.size() : v.isNull() ? 0 : 1)) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.FieldIsEmpty e -> {
        List<JsonNode> raw = new ArrayList<>(2);
        reach(root, e.key().steps(), 0, raw);
        if (raw.isEmpty()) {
          yield e.empty();
        }
        for (JsonNode v : raw) {
          boolean empty = v.isNull() || (v.isArray() && v.isEmpty());
          if (empty == e.empty()) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.FieldIsNull n -> {
        List<JsonNode> raw = new ArrayList<>(2);
        reach(root, n.key().steps(), 0, raw);
        if (raw.isEmpty()) {
          yield !n.isNull();
        }
        for (JsonNode v : raw) {
          boolean isNull = v.isNull();
          if (v.isArray()) {
            for (JsonNode x : v) {
              isNull |= x.isNull();
            }
          }
          if (isNull == n.isNull()) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.GeoRadius g -> {
        for (JsonNode v : values(g.key(), root)) {
          Condition.GeoPoint p = Geo.point(v);
          if (p != null && Geo.inside(g, p)) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.GeoBoundingBox g -> {
        for (JsonNode v : values(g.key(), root)) {
          Condition.GeoPoint p = Geo.point(v);
          if (p != null && Geo.inside(g, p)) {
            yield true;
          }
        }
        yield false;
      }
      case Condition.GeoPolygon g -> {
        for (JsonNode v : values(g.key(), root)) {
          Condition.GeoPoint p = Geo.point(v);
          if (p != null && Geo.inside(g, p)) {
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
          if (v.isObject() && evalFilter(n.filter(), id, v, vectors)) {
            yield true;
          }
        }
        yield false;
      }
    };
  }

  private boolean evalFilter(Filter f, PointId id, JsonNode root, Predicate<String> vectors) {
    for (Condition c : f.must()) {
      if (!eval(c, id, root, vectors)) {
        return false;
      }
    }
    for (Condition c : f.mustNot()) {
      if (eval(c, id, root, vectors)) {
        return false;
      }
    }
    if (!f.should().isEmpty()) {
      boolean any = false;
      for (Condition c : f.should()) {
        if (eval(c, id, root, vectors)) {
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
        if (eval(c, id, root, vectors)) {
          need--;
        }
      }
      return need <= 0;
    }
    return true;
  }

  private boolean matchesTokens(FieldPath key, List<String> tokens, JsonNode root) {
    if (tokens.isEmpty()) {
      return false; // as Qdrant: a query with no words (empty, or only stop words) matches nothing
    }
    for (JsonNode v : values(key, root)) {
      if (v.isString() && new HashSet<>(text.valueTokens(key, v.asString())).containsAll(tokens)) {
        return true;
      }
    }
    return false;
  }

  private boolean matchesAnyToken(FieldPath key, List<String> tokens, JsonNode root) {
    if (tokens.isEmpty()) {
      return false;
    }
    for (JsonNode v : values(key, root)) {
      if (v.isString()) {
        for (String t : text.valueTokens(key, v.asString())) {
          if (tokens.contains(t)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * Whether one string value holds every phrase token at its relative position from some start: the
   * same test as a positional phrase query on the text index, one value at a time (values of an
   * array never join into one phrase).
   */
  private boolean matchesPhrase(FieldPath key, List<Token> phrase, JsonNode root) {
    if (phrase.isEmpty()) {
      return false;
    }
    for (JsonNode v : values(key, root)) {
      if (!v.isString()) {
        continue;
      }
      List<Token> doc = text.valuePositions(key, v.asString());
      Set<Token> at = new HashSet<>(doc);
      Token first = phrase.getFirst();
      for (Token d : doc) {
        if (!d.term().equals(first.term())) {
          continue;
        }
        int start = d.position() - first.position();
        boolean all = true;
        for (Token q : phrase) {
          if (!at.contains(new Token(q.term(), start + q.position()))) {
            all = false;
            break;
          }
        }
        if (all) {
          return true;
        }
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
    if (!node.isObject()) {
      // a name step does not enter an array: objects in an array are reached with name[]
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
