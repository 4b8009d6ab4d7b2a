package io.flashvec.index.filter;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.PointId;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Filter semantics against a small independent evaluator that interprets the filter JSON directly
 * over payloads decoded into plain maps and lists, on seeded random payloads (nested objects,
 * arrays, missing keys, nulls, numbers, strings, bools, datetimes) and random filters.
 */
@ExtendWith(TestSeeds.Reporter.class)
public class FilterEvaluatorTest {

  private static final JsonMapper M = JsonMapper.builder().build();
  private static final String[] WORDS = {"red", "green", "blue", "Berlin", "London"};
  private static final String[] KEYS = {
    "color",
    "n",
    "f",
    "ok",
    "tags",
    "ts",
    "obj.x",
    "obj.y",
    "arr[].x",
    "arr.y",
    "nums",
    "obj.deep.z"
  };

  // ------------------------------------------------------------------------------------------
  // Random payloads

  private static Object scalar(Random r) {
    return switch (r.nextInt(7)) {
      case 0 -> WORDS[r.nextInt(WORDS.length)];
      case 1 -> (long) r.nextInt(10) - 3;
      case 2 -> r.nextInt(20) / 4.0 - 1;
      case 3 -> r.nextBoolean();
      case 4 -> null;
      case 5 ->
          String.format(Locale.ROOT, "2024-01-%02dT%02d:00:00Z", 1 + r.nextInt(9), r.nextInt(24));
      default -> "the " + WORDS[r.nextInt(WORDS.length)] + " city";
    };
  }

  private static Object valueOrArray(Random r) {
    if (r.nextInt(4) == 0) {
      List<Object> l = new ArrayList<>();
      int n = r.nextInt(4);
      for (int i = 0; i < n; i++) {
        l.add(scalar(r));
      }
      return l;
    }
    return scalar(r);
  }

  private static Map<String, Object> object(Random r, int depth) {
    Map<String, Object> o = new LinkedHashMap<>();
    for (String k : new String[] {"x", "y"}) {
      if (r.nextInt(4) != 0) {
        o.put(k, valueOrArray(r));
      }
    }
    if (depth > 0 && r.nextBoolean()) {
      Map<String, Object> deep = new LinkedHashMap<>();
      if (r.nextBoolean()) {
        deep.put("z", valueOrArray(r));
      }
      o.put("deep", deep);
    }
    return o;
  }

  public static Map<String, Object> payload(Random r) {
    Map<String, Object> p = new LinkedHashMap<>();
    for (String k : new String[] {"color", "n", "f", "ok", "tags", "ts", "nums"}) {
      if (r.nextInt(5) != 0) {
        p.put(k, valueOrArray(r));
      }
    }
    if (r.nextInt(4) != 0) {
      p.put("obj", r.nextInt(6) == 0 ? null : object(r, 1));
    }
    if (r.nextInt(3) != 0) {
      List<Object> arr = new ArrayList<>();
      int n = r.nextInt(4);
      for (int i = 0; i < n; i++) {
        arr.add(object(r, 0));
      }
      p.put("arr", arr);
    }
    p.put("big", "x".repeat(r.nextInt(50))); // never referenced: skipped by the streaming parse
    return p;
  }

  // ------------------------------------------------------------------------------------------
  // Random filters, as the JSON a client sends

  private static Map<String, Object> fieldCondition(Random r) {
    String key = KEYS[r.nextInt(KEYS.length)];
    Map<String, Object> c = new LinkedHashMap<>();
    switch (r.nextInt(13)) {
      case 0, 1 -> {
        c.put("key", key);
        Object v = r.nextInt(3) == 0 ? (Object) r.nextBoolean() : scalar(r);
        if (v == null || v instanceof Double) {
          v = (long) r.nextInt(5);
        }
        c.put("match", Map.of("value", v));
      }
      case 2 -> {
        c.put("key", key);
        c.put("match", Map.of("any", List.of(WORDS[r.nextInt(5)], WORDS[r.nextInt(5)], 1L)));
      }
      case 3 -> {
        c.put("key", key);
        c.put("match", Map.of("except", List.of(WORDS[r.nextInt(5)], (long) r.nextInt(4))));
      }
      case 4 -> {
        c.put("key", key);
        c.put("match", Map.of("text", WORDS[r.nextInt(5)].substring(0, 3)));
      }
      case 5 -> {
        c.put("key", key);
        Map<String, Object> range = new LinkedHashMap<>();
        String[] ops = {"gt", "gte", "lt", "lte"};
        range.put(ops[r.nextInt(2)], r.nextInt(8) - 3);
        if (r.nextBoolean()) {
          range.put(ops[2 + r.nextInt(2)], r.nextInt(8) / 2.0);
        }
        c.put("range", range);
      }
      case 6 -> {
        c.put("key", key);
        Map<String, Object> range = new LinkedHashMap<>();
        range.put(r.nextBoolean() ? "gte" : "gt", "2024-01-0" + (1 + r.nextInt(5)) + "T06:00:00Z");
        if (r.nextBoolean()) {
          range.put(
              r.nextBoolean() ? "lte" : "lt", "2024-01-0" + (5 + r.nextInt(5)) + "T00:00:00Z");
        }
        c.put("range", range);
      }
      case 7 -> c.put("is_empty", Map.of("key", key));
      case 8 -> c.put("is_null", Map.of("key", key));
      case 9 -> {
        c.put("key", key);
        String w = WORDS[r.nextInt(WORDS.length)];
        String[] prefixes = {"", w.substring(0, 1 + r.nextInt(3)), w, "the ", "2024-01-0", "x"};
        c.put("match", Map.of("prefix", prefixes[r.nextInt(prefixes.length)]));
      }
      case 10 -> {
        c.put("key", key);
        String[] queries = {"", "zz " + WORDS[r.nextInt(5)], "Ber  ci", " gre  ", "qq ty"};
        c.put("match", Map.of("text_any", queries[r.nextInt(queries.length)]));
      }
      case 11 -> {
        c.put("key", key);
        String[] phrases = {"", "the " + WORDS[r.nextInt(5)], WORDS[r.nextInt(5)] + " city", "e c"};
        c.put("match", Map.of("phrase", phrases[r.nextInt(phrases.length)]));
      }
      default -> {
        c.put("key", key);
        Map<String, Object> count = new LinkedHashMap<>();
        String[] ops = {"gt", "gte", "lt", "lte"};
        count.put(ops[r.nextInt(4)], (long) r.nextInt(4));
        if (r.nextBoolean()) {
          count.put(ops[r.nextInt(4)], (long) r.nextInt(4));
        }
        c.put("values_count", count);
      }
    }
    return c;
  }

  private static Map<String, Object> condition(Random r, int depth) {
    int kind = r.nextInt(12);
    if (kind == 0 && depth > 0) {
      return filter(r, depth - 1);
    }
    if (kind == 1) {
      return Map.of("has_id", List.of((long) r.nextInt(40), (long) r.nextInt(40)));
    }
    if (kind == 2 && depth > 0) {
      Map<String, Object> inner = new LinkedHashMap<>();
      inner.put("must", List.of(nestedField(r)));
      if (r.nextBoolean()) {
        inner.put("must_not", List.of(nestedField(r)));
      }
      return Map.of("nested", Map.of("key", "arr", "filter", inner));
    }
    return fieldCondition(r);
  }

  private static Map<String, Object> nestedField(Random r) {
    Map<String, Object> c = new LinkedHashMap<>(fieldCondition(r));
    String k = r.nextBoolean() ? "x" : "y";
    if (c.containsKey("key")) {
      c.put("key", k);
    } else if (c.containsKey("is_empty")) {
      c.put("is_empty", Map.of("key", k));
    } else {
      c.put("is_null", Map.of("key", k));
    }
    return c;
  }

  public static Map<String, Object> filter(Random r, int depth) {
    Map<String, Object> f = new LinkedHashMap<>();
    for (String clause : new String[] {"must", "should", "must_not"}) {
      if (r.nextInt(3) == 0) {
        List<Object> cs = new ArrayList<>();
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) {
          cs.add(condition(r, depth));
        }
        f.put(clause, cs);
      }
    }
    if (r.nextInt(6) == 0) {
      List<Object> cs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        cs.add(condition(r, depth));
      }
      f.put("min_should", Map.of("conditions", cs, "min_count", r.nextInt(4)));
    }
    return f;
  }

  // ------------------------------------------------------------------------------------------
  // The reference: interprets the JSON filter over plain maps and lists.

  @SuppressWarnings("unchecked")
  static boolean ref(Map<String, Object> f, long id, Object payload) {
    for (Object c : (List<Object>) f.getOrDefault("must", List.of())) {
      if (!refCond((Map<String, Object>) c, id, payload)) {
        return false;
      }
    }
    List<Object> should = (List<Object>) f.getOrDefault("should", List.of());
    if (!should.isEmpty()
        && should.stream().noneMatch(c -> refCond((Map<String, Object>) c, id, payload))) {
      return false;
    }
    for (Object c : (List<Object>) f.getOrDefault("must_not", List.of())) {
      if (refCond((Map<String, Object>) c, id, payload)) {
        return false;
      }
    }
    Map<String, Object> ms = (Map<String, Object>) f.get("min_should");
    if (ms != null) {
      long hits =
          ((List<Object>) ms.get("conditions"))
              .stream().filter(c -> refCond((Map<String, Object>) c, id, payload)).count();
      return hits >= ((Number) ms.get("min_count")).longValue();
    }
    return true;
  }

  @SuppressWarnings("unchecked")
  static boolean refCond(Map<String, Object> c, long id, Object payload) {
    if (c.containsKey("has_id")) {
      return ((List<Object>) c.get("has_id")).contains(id);
    }
    if (c.containsKey("is_empty")) {
      String key = (String) ((Map<String, Object>) c.get("is_empty")).get("key");
      return leaves(payload, key).stream().allMatch(Objects::isNull);
    }
    if (c.containsKey("is_null")) {
      String key = (String) ((Map<String, Object>) c.get("is_null")).get("key");
      List<Object> raw = new ArrayList<>();
      walk(payload, key.split("\\."), 0, raw);
      return raw.contains(null);
    }
    if (c.containsKey("nested")) {
      Map<String, Object> n = (Map<String, Object>) c.get("nested");
      for (Object o : leaves(payload, (String) n.get("key"))) {
        if (o instanceof Map && ref((Map<String, Object>) n.get("filter"), id, o)) {
          return true;
        }
      }
      return false;
    }
    if (!c.containsKey("key")) {
      return ref(c, id, payload);
    }
    List<Object> vals = leaves(payload, (String) c.get("key"));
    if (c.containsKey("values_count")) {
      Map<String, Object> count = (Map<String, Object>) c.get("values_count");
      List<Object> raw = new ArrayList<>();
      walk(payload, ((String) c.get("key")).split("\\."), 0, raw);
      if (raw.isEmpty()) {
        raw.add(null); // a missing key counts 0, as null does
      }
      for (Object v : raw) {
        int n = v == null ? 0 : v instanceof List<?> l ? l.size() : 1;
        if (count.entrySet().stream()
            .allMatch(e -> cmp(Long.compare(n, ((Number) e.getValue()).longValue()), e.getKey()))) {
          return true;
        }
      }
      return false;
    }
    if (c.containsKey("match")) {
      Map<String, Object> m = (Map<String, Object>) c.get("match");
      if (m.containsKey("value")) {
        return vals.stream().anyMatch(v -> same(v, m.get("value")));
      }
      if (m.containsKey("any")) {
        List<Object> any = (List<Object>) m.get("any");
        return vals.stream().anyMatch(v -> any.stream().anyMatch(a -> same(v, a)));
      }
      if (m.containsKey("except")) {
        List<Object> ex = (List<Object>) m.get("except");
        List<Object> nonNull = vals.stream().filter(Objects::nonNull).toList();
        return nonNull.isEmpty()
            || nonNull.stream().anyMatch(v -> ex.stream().noneMatch(a -> same(v, a)));
      }
      if (m.containsKey("prefix")) {
        String p = (String) m.get("prefix");
        return vals.stream().anyMatch(v -> v instanceof String s && s.startsWith(p));
      }
      if (m.containsKey("text_any")) {
        List<String> words =
            List.of(((String) m.get("text_any")).split(" ")).stream()
                .filter(w -> !w.isEmpty())
                .toList();
        return vals.stream()
            .anyMatch(v -> v instanceof String s && words.stream().anyMatch(s::contains));
      }
      String t = (String) m.getOrDefault("text", m.get("phrase"));
      return vals.stream().anyMatch(v -> v instanceof String s && s.contains(t));
    }
    Map<String, Object> range = (Map<String, Object>) c.get("range");
    boolean dt = range.values().stream().anyMatch(v -> v instanceof String);
    for (Object v : vals) {
      if (dt) {
        if (v instanceof String s && s.length() == 20 && s.startsWith("2024-")) {
          Instant t = Instant.parse(s);
          if (range.entrySet().stream()
              .allMatch(e -> cmp(t.compareTo(Instant.parse((String) e.getValue())), e.getKey()))) {
            return true;
          }
        }
      } else if (v instanceof Number num) {
        double d = num.doubleValue();
        if (range.entrySet().stream()
            .allMatch(
                e -> cmp(Double.compare(d, ((Number) e.getValue()).doubleValue()), e.getKey()))) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean cmp(int c, String op) {
    return switch (op) {
      case "gt" -> c > 0;
      case "gte" -> c >= 0;
      case "lt" -> c < 0;
      default -> c <= 0;
    };
  }

  private static boolean same(Object payloadValue, Object operand) {
    if (payloadValue instanceof String || payloadValue instanceof Boolean) {
      return payloadValue.equals(operand);
    }
    if ((payloadValue instanceof Integer || payloadValue instanceof Long)
        && operand instanceof Number o) {
      return ((Number) payloadValue).longValue() == o.longValue();
    }
    return false;
  }

  /**
   * Values at a dotted key: {@code []} enters arrays along the way, an array at the end flattens.
   */
  static List<Object> leaves(Object payload, String key) {
    List<Object> raw = new ArrayList<>();
    walk(payload, key.split("\\."), 0, raw);
    List<Object> out = new ArrayList<>();
    for (Object o : raw) {
      if (o instanceof List<?> l) {
        out.addAll(l);
      } else {
        out.add(o);
      }
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static void walk(Object node, String[] parts, int i, List<Object> out) {
    if (i == parts.length) {
      out.add(node);
      return;
    }
    if (!(node instanceof Map)) { // a name does not enter an array (Qdrant's paths)
      return;
    }
    Map<String, Object> m = (Map<String, Object>) node;
    boolean all = parts[i].endsWith("[]");
    String name = all ? parts[i].substring(0, parts[i].length() - 2) : parts[i];
    if (!m.containsKey(name)) {
      return;
    }
    Object child = m.get(name);
    if (all) {
      if (child instanceof List<?> l) {
        for (Object o : l) {
          walk(o, parts, i + 1, out);
        }
      }
      return;
    }
    walk(child, parts, i + 1, out);
  }

  // ------------------------------------------------------------------------------------------

  @Test
  void randomFiltersAgreeWithTheReferenceEvaluator() {
    Random r = TestSeeds.random("filter-semantics");
    int nPayloads = 300;
    List<byte[]> bytes = new ArrayList<>();
    List<Object> decoded = new ArrayList<>();
    for (int i = 0; i < nPayloads; i++) {
      Map<String, Object> p = payload(r);
      byte[] b = M.writeValueAsBytes(p);
      bytes.add(b);
      decoded.add(M.readValue(b, Map.class));
    }
    int filters = 400;
    long matchedTotal = 0;
    for (int f = 0; f < filters; f++) {
      Map<String, Object> fj = filter(r, 2);
      JsonNode node = M.valueToTree(fj);
      FilterEvaluator ev = new FilterEvaluator(FilterParser.parse(node, "filter"));
      for (int i = 0; i < nPayloads; i++) {
        boolean expected = ref(fj, i, decoded.get(i));
        boolean actual = ev.matches(PointId.of(i), bytes.get(i));
        if (expected != actual) {
          throw new AssertionError(
              "filter "
                  + node
                  + " on payload "
                  + new String(bytes.get(i), StandardCharsets.UTF_8)
                  + " [id="
                  + i
                  + ", expected="
                  + expected
                  + "]");
        }
        matchedTotal += actual ? 1 : 0;
      }
    }
    // The generator must produce both outcomes often, or the comparison proves little.
    assertThat(matchedTotal).isBetween(filters * nPayloads / 20L, filters * nPayloads * 19L / 20);
  }

  private static boolean eval(String filter, String payload) {
    return eval(filter, payload, 1);
  }

  private static boolean eval(String filter, String payload, long id) {
    return new FilterEvaluator(FilterParser.parse(M.readTree(filter), "filter"))
        .matches(PointId.of(id), payload == null ? null : payload.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void documentedExamples() {
    String london = "{\"must\":[{\"key\":\"city\",\"match\":{\"value\":\"London\"}}]}";
    assertThat(eval(london, "{\"city\":\"London\"}")).isTrue();
    assertThat(eval(london, "{\"city\":[\"Berlin\",\"London\"]}")).isTrue();
    assertThat(eval(london, "{\"city\":\"Berlin\"}")).isFalse();
    assertThat(eval(london, null)).isFalse();
    assertThat(eval("{}", null)).isTrue();
    assertThat(eval("{\"must_not\":[{\"key\":\"city\",\"match\":{\"value\":\"London\"}}]}", null))
        .isTrue();
    assertThat(eval("{\"should\":[]}", "{}")).isTrue();
    // integers and strings do not mix; floats are not integers
    assertThat(eval("{\"must\":{\"key\":\"n\",\"match\":{\"value\":1}}}", "{\"n\":\"1\"}"))
        .isFalse();
    assertThat(eval("{\"must\":{\"key\":\"n\",\"match\":{\"value\":1}}}", "{\"n\":1.0}")).isFalse();
    assertThat(eval("{\"must\":{\"key\":\"n\",\"match\":{\"value\":1}}}", "{\"n\":1}")).isTrue();
    // nested keys, arrays of objects with and without []
    String deep = "{\"must\":[{\"key\":\"a.b[].c\",\"match\":{\"value\":true}}]}";
    assertThat(eval(deep, "{\"a\":{\"b\":[{\"c\":false},{\"c\":true}]}}")).isTrue();
    // as in Qdrant, only [] enters an array: a.b.c reaches nothing in an array b
    assertThat(eval(deep.replace("b[]", "b"), "{\"a\":{\"b\":[{\"c\":true}]}}")).isFalse();
    assertThat(eval(deep.replace("b[]", "b"), "{\"a\":{\"b\":{\"c\":true}}}")).isTrue();
    assertThat(eval(deep, "{\"a\":{\"b\":[[{\"c\":true}]]}}")).isFalse();
    assertThat(eval(deep.replace("b[]", "b[1]"), "{\"a\":{\"b\":[{\"c\":true},{\"c\":0}]}}"))
        .isFalse();
    // is_empty / is_null
    String empty = "{\"must\":[{\"is_empty\":{\"key\":\"r\"}}]}";
    assertThat(eval(empty, "{}")).isTrue();
    assertThat(eval(empty, "{\"r\":null}")).isTrue();
    assertThat(eval(empty, "{\"r\":[]}")).isTrue();
    assertThat(eval(empty, "{\"r\":[1]}")).isFalse();
    String isNull = "{\"must\":[{\"is_null\":{\"key\":\"r\"}}]}";
    assertThat(eval(isNull, "{\"r\":null}")).isTrue();
    assertThat(eval(isNull, "{}")).isFalse();
    assertThat(eval(isNull, "{\"r\":[]}")).isFalse();
    // datetimes in several accepted spellings
    String dt =
        "{\"must\":[{\"key\":\"t\",\"range\":{\"gte\":\"2024-05-01T00:00:00Z\",\"lt\":\"2024-05-02\"}}]}";
    assertThat(eval(dt, "{\"t\":\"2024-05-01T10:00:00+02:00\"}")).isTrue();
    assertThat(eval(dt, "{\"t\":\"2024-05-01 23:59:59\"}")).isTrue();
    assertThat(eval(dt, "{\"t\":\"2024-05-02T00:00:00.000Z\"}")).isFalse();
    assertThat(eval(dt, "{\"t\":\"2024-04-30T23:00:00-02:00\"}")).isTrue();
    assertThat(eval(dt, "{\"t\":\"yesterday\"}")).isFalse();
    // has_id with UUIDs; nested filter over array elements
    assertThat(
            eval("{\"must\":[{\"has_id\":[1,\"550e8400-e29b-41d4-a716-446655440000\"]}]}", null, 1))
        .isTrue();
    String nested =
        "{\"must\":[{\"nested\":{\"key\":\"d\",\"filter\":{\"must\":["
            + "{\"key\":\"k\",\"match\":{\"value\":\"a\"}},{\"key\":\"v\",\"range\":{\"gt\":1}}]}}}]}";
    assertThat(eval(nested, "{\"d\":[{\"k\":\"a\",\"v\":0},{\"k\":\"b\",\"v\":5}]}")).isFalse();
    assertThat(eval(nested, "{\"d\":[{\"k\":\"a\",\"v\":2}]}")).isTrue();
    // min_should
    String ms =
        "{\"min_should\":{\"min_count\":2,\"conditions\":[{\"key\":\"a\",\"match\":{\"value\":1}},"
            + "{\"key\":\"b\",\"match\":{\"value\":1}},{\"key\":\"c\",\"match\":{\"value\":1}}]}}";
    assertThat(eval(ms, "{\"a\":1,\"c\":1}")).isTrue();
    assertThat(eval(ms, "{\"a\":1,\"c\":2}")).isFalse();
    // text is a case-sensitive substring
    assertThat(
            eval("{\"must\":[{\"key\":\"s\",\"match\":{\"text\":\"lin\"}}]}", "{\"s\":\"Berlin\"}"))
        .isTrue();
  }

  private static String cond(String key, String json) {
    return "{\"must\":[{\"key\":\"" + key + "\"," + json + "}]}";
  }

  @Test
  void valuesCountCountsArrayElementsScalarsAsOneAndMissingOrNullAsZero() {
    String gte2 = cond("city", "\"values_count\":{\"gte\":2}");
    assertThat(eval(gte2, "{\"city\":[\"Berlin\",\"London\"]}")).isTrue();
    assertThat(eval(gte2, "{\"city\":\"Berlin\"}")).isFalse();
    assertThat(eval(gte2, "{\"city\":[[1,2]]}")).isFalse(); // one element, an array
    String lt1 = cond("tags", "\"values_count\":{\"lt\":1}");
    assertThat(eval(lt1, "{\"title\":\"no tags field\"}")).isTrue();
    assertThat(eval(lt1, null)).isTrue();
    assertThat(eval(lt1, "{\"tags\":null}")).isTrue();
    assertThat(eval(lt1, "{\"tags\":[]}")).isTrue();
    assertThat(eval(lt1, "{\"tags\":{\"a\":1}}")).isFalse(); // an object counts 1
    assertThat(eval(cond("tags", "\"values_count\":{\"gte\":0}"), "{}")).isTrue();
    // "a[]" reaches each element, which counts 1 unless it is itself an array
    String all = cond("a[]", "\"values_count\":{\"gt\":1}");
    assertThat(eval(all, "{\"a\":[1,2,3]}")).isFalse();
    assertThat(eval(all, "{\"a\":[1,[2,3]]}")).isTrue();
    // inside nested, keys are relative to each object
    String nested =
        "{\"must\":[{\"nested\":{\"key\":\"c\",\"filter\":"
            + cond("s", "\"values_count\":{\"gte\":2}")
            + "}}]}";
    assertThat(eval(nested, "{\"c\":[{\"s\":[1]},{\"s\":[1,2]}]}")).isTrue();
    assertThat(eval(nested, "{\"c\":[{\"s\":[1]},{\"s\":3}]}")).isFalse();
  }

  @Test
  void prefixTextAnyAndPhraseWithoutATextIndexCompareStrings() {
    String prefix = cond("url", "\"match\":{\"prefix\":\"https://q\"}");
    assertThat(eval(prefix, "{\"url\":\"https://qdrant.tech\"}")).isTrue();
    assertThat(eval(prefix, "{\"url\":[\"http://x\",\"https://qdrant.tech/blog\"]}")).isTrue();
    assertThat(eval(prefix, "{\"url\":\"HTTPS://QDRANT\"}")).isFalse();
    assertThat(eval(prefix, "{\"url\":1}")).isFalse();
    String empty = cond("url", "\"match\":{\"prefix\":\"\"}");
    assertThat(eval(empty, "{\"url\":\"\"}")).isTrue();
    assertThat(eval(empty, "{\"url\":null}")).isFalse();
    String any = cond("t", "\"match\":{\"text_any\":\"robot  star\"}");
    assertThat(eval(any, "{\"t\":\"a starship\"}")).isTrue();
    assertThat(eval(any, "{\"t\":\"the robots\"}")).isTrue();
    assertThat(eval(any, "{\"t\":\"nothing here\"}")).isFalse();
    assertThat(eval(cond("t", "\"match\":{\"text_any\":\" \"}"), "{\"t\":\"x\"}")).isFalse();
    String phrase = cond("t", "\"match\":{\"phrase\":\"quick brown\"}");
    assertThat(eval(phrase, "{\"t\":\"the quick brown fox\"}")).isTrue();
    assertThat(eval(phrase, "{\"t\":\"brown quick\"}")).isFalse();
    assertThat(eval(phrase, "{\"t\":[\"quick\",\"brown\"]}")).isFalse();
  }

  @Test
  void geoConditionsOnPointsAndArraysOfPoints() {
    String berlinAndMoscow =
        "{\"loc\":[{\"lat\":52.52197645,\"lon\":13.413637435864272},"
            + "{\"lat\":55.7536283,\"lon\":37.62137960067377}]}";
    String near =
        cond(
            "loc",
            "\"geo_radius\":{\"center\":{\"lon\":13.413637,\"lat\":52.521976},\"radius\":2000}");
    String miss =
        cond(
            "loc",
            "\"geo_radius\":{\"center\":{\"lon\":20.423637,\"lat\":52.511},\"radius\":2000}");
    assertThat(eval(near, berlinAndMoscow)).isTrue();
    assertThat(eval(miss, berlinAndMoscow)).isFalse();
    // Berlin to Moscow is about 1,608 km on the mean sphere
    String berlinMoscow = "\"center\":{\"lon\":13.4050,\"lat\":52.5200},\"radius\":";
    String moscow = "{\"loc\":{\"lon\":37.6173,\"lat\":55.7558}}";
    assertThat(eval(cond("loc", "\"geo_radius\":{" + berlinMoscow + "1610000}"), moscow)).isTrue();
    assertThat(eval(cond("loc", "\"geo_radius\":{" + berlinMoscow + "1600000}"), moscow)).isFalse();
    // strictly inside a box; a box with top_left east of bottom_right crosses the antimeridian
    String box =
        cond(
            "loc",
            "\"geo_bounding_box\":{\"top_left\":{\"lon\":170,\"lat\":10},"
                + "\"bottom_right\":{\"lon\":-170,\"lat\":-10}}");
    assertThat(eval(box, "{\"loc\":{\"lon\":179.5,\"lat\":0}}")).isTrue();
    assertThat(eval(box, "{\"loc\":{\"lon\":-175,\"lat\":5}}")).isTrue();
    assertThat(eval(box, "{\"loc\":{\"lon\":0,\"lat\":0}}")).isFalse();
    assertThat(eval(box, "{\"loc\":{\"lon\":175,\"lat\":10}}")).isFalse(); // on the edge
    // a polygon with a hole: inside the ring and outside the hole, edges excluded
    String poly =
        cond(
            "loc",
            "\"geo_polygon\":{\"exterior\":{\"points\":[{\"lon\":0,\"lat\":0},"
                + "{\"lon\":10,\"lat\":0},{\"lon\":10,\"lat\":10},{\"lon\":0,\"lat\":10},"
                + "{\"lon\":0,\"lat\":0}]},\"interiors\":[{\"points\":[{\"lon\":4,\"lat\":4},"
                + "{\"lon\":6,\"lat\":4},{\"lon\":6,\"lat\":6},{\"lon\":4,\"lat\":6},"
                + "{\"lon\":4,\"lat\":4}]}]}");
    assertThat(eval(poly, "{\"loc\":{\"lon\":2,\"lat\":2}}")).isTrue();
    assertThat(eval(poly, "{\"loc\":{\"lon\":5,\"lat\":5}}")).isFalse(); // in the hole
    assertThat(eval(poly, "{\"loc\":{\"lon\":4,\"lat\":5}}")).isFalse(); // on the hole's edge
    assertThat(eval(poly, "{\"loc\":{\"lon\":0,\"lat\":5}}")).isFalse(); // on the ring
    assertThat(eval(poly, "{\"loc\":{\"lon\":11,\"lat\":5}}")).isFalse();
    assertThat(eval(poly, "{\"loc\":[{\"lon\":11,\"lat\":5},{\"lon\":9,\"lat\":9}]}")).isTrue();
    // not geo points: strings, missing coordinates, out of range
    assertThat(eval(poly, "{\"loc\":\"2,2\"}")).isFalse();
    assertThat(eval(poly, "{\"loc\":{\"lon\":2}}")).isFalse();
    assertThat(eval(box, "{\"loc\":{\"lon\":190,\"lat\":0}}")).isFalse();
  }

  @Test
  void randomGeoConditionsAgreeWithBruteForceGeometry() {
    Random r = TestSeeds.random("FilterEvaluatorTest.geo");
    for (int i = 0; i < 2_000; i++) {
      double lon = r.nextDouble() * 360 - 180;
      double lat = r.nextDouble() * 180 - 90;
      double clon = r.nextDouble() * 360 - 180;
      double clat = r.nextDouble() * 180 - 90;
      double radius = r.nextDouble() * 5_000_000;
      String payload = "{\"p\":{\"lon\":" + lon + ",\"lat\":" + lat + "}}";
      String f =
          cond(
              "p",
              "\"geo_radius\":{\"center\":{\"lon\":"
                  + clon
                  + ",\"lat\":"
                  + clat
                  + "},\"radius\":"
                  + radius
                  + "}");
      // the great-circle distance by the spherical law of cosines, independent of haversine
      double c =
          Math.sin(Math.toRadians(lat)) * Math.sin(Math.toRadians(clat))
              + Math.cos(Math.toRadians(lat))
                  * Math.cos(Math.toRadians(clat))
                  * Math.cos(Math.toRadians(lon - clon));
      double d = Geo.EARTH_RADIUS_METERS * Math.acos(Math.max(-1, Math.min(1, c)));
      if (Math.abs(d - radius) > 1.0) {
        assertThat(eval(f, payload))
            .as("%s on %s (distance %s)", f, payload, d)
            .isEqualTo(d < radius);
      }
      // a random axis-aligned rectangle as a polygon agrees with the equivalent box
      double w = Math.min(lon, clon);
      double e = Math.max(lon, clon) + 1;
      double s = Math.min(lat, clat) - 1;
      double n = Math.max(lat, clat) - r.nextDouble() * 2;
      if (w < e && s < n && e <= 180 && s >= -90 && n <= 90 && w + 0.5 < e) {
        double qlon = w + r.nextDouble() * (e - w + 2) - 1;
        double qlat = s + r.nextDouble() * (n - s + 2) - 1;
        String q = "{\"p\":{\"lon\":" + qlon + ",\"lat\":" + qlat + "}}";
        String bbox =
            cond(
                "p",
                "\"geo_bounding_box\":{\"top_left\":{\"lon\":"
                    + w
                    + ",\"lat\":"
                    + n
                    + "},\"bottom_right\":{\"lon\":"
                    + e
                    + ",\"lat\":"
                    + s
                    + "}}");
        String ring =
            String.format(
                Locale.ROOT,
                "[{\"lon\":%s,\"lat\":%s},{\"lon\":%s,\"lat\":%s},{\"lon\":%s,\"lat\":%s},"
                    + "{\"lon\":%s,\"lat\":%s},{\"lon\":%s,\"lat\":%s}]",
                w,
                s,
                e,
                s,
                e,
                n,
                w,
                n,
                w,
                s);
        String poly = cond("p", "\"geo_polygon\":{\"exterior\":{\"points\":" + ring + "}}");
        boolean inside = w < qlon && qlon < e && s < qlat && qlat < n;
        if (Geo.valid(qlon, qlat)) {
          assertThat(eval(bbox, q)).as("%s on %s", bbox, q).isEqualTo(inside);
          assertThat(eval(poly, q)).as("%s on %s", poly, q).isEqualTo(inside);
        }
      }
    }
  }

  @Test
  void isEmptyAndIsNullAsFieldConditionsFollowQdrantsValueChecks() {
    String[] payloads = {
      "{\"city\":\"Berlin\"}",
      "{\"city\":[\"Berlin\",\"London\"]}",
      "{\"count\":0}",
      null,
      "{\"city\":null}",
      "{\"city\":[]}",
      "{\"city\":[null]}",
    };
    boolean[] emptyTrue = {false, false, true, true, true, true, false};
    boolean[] emptyFalse = {true, true, false, false, false, false, true};
    boolean[] nullTrue = {false, false, false, false, true, false, true};
    boolean[] nullFalse = {true, true, true, true, false, true, false};
    for (int i = 0; i < payloads.length; i++) {
      String p = payloads[i];
      assertThat(eval(cond("city", "\"is_empty\":true"), p))
          .as("is_empty on %s", p)
          .isEqualTo(emptyTrue[i]);
      assertThat(eval(cond("city", "\"is_empty\":false"), p))
          .as("not empty on %s", p)
          .isEqualTo(emptyFalse[i]);
      assertThat(eval(cond("city", "\"is_null\":true"), p))
          .as("is_null on %s", p)
          .isEqualTo(nullTrue[i]);
      assertThat(eval(cond("city", "\"is_null\":false"), p))
          .as("not null on %s", p)
          .isEqualTo(nullFalse[i]);
    }
    // the same points as the separate conditions on Qdrant's sample payloads
    for (int i = 0; i < 6; i++) {
      String p = payloads[i];
      assertThat(eval(cond("city", "\"is_empty\":true"), p))
          .isEqualTo(eval("{\"must\":[{\"is_empty\":{\"key\":\"city\"}}]}", p));
      assertThat(eval(cond("city", "\"is_null\":false"), p))
          .isEqualTo(eval("{\"must_not\":[{\"is_null\":{\"key\":\"city\"}}]}", p));
    }
  }
}
