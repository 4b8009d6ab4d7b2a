package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.api.web.Json;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class WriteCostTest {

  private static JsonNode json(String s) {
    return Json.parse(s.getBytes(StandardCharsets.UTF_8));
  }

  /** Conditions on "a", "b", "c" are counted by these numbers; any other key is unindexed. */
  private static final ToLongFunction<JsonNode> COUNTS =
      c -> {
        JsonNode key = c.path("key");
        Long n = key.isString() ? Map.of("a", 40L, "b", 50L, "c", 0L).get(key.asString()) : null;
        return n == null ? -1 : n;
      };

  private static long cost(String filter) {
    return WriteCost.estimate(json(filter), 100, COUNTS);
  }

  private static String cond(String key) {
    return "{\"key\": \"" + key + "\", \"match\": {\"value\": \"v\"}}";
  }

  @Test
  void anUnindexedConditionIsHalfThePointsAndAnIndexedOneItsCount() {
    assertThat(cost("{\"must\": [" + cond("x") + "]}")).isEqualTo(50);
    assertThat(WriteCost.estimate(json("{\"must\": [" + cond("x") + "]}"), 11, COUNTS))
        .isEqualTo(5);
    assertThat(cost("{\"must\": [" + cond("a") + "]}")).isEqualTo(40);
    // a condition given alone, not in a list
    assertThat(cost("{\"must\": " + cond("c") + "}")).isZero();
  }

  @Test
  void clausesCombineAsQdrantCombinesThem() {
    // must: 100 * 0.4 * 0.5
    assertThat(cost("{\"must\": [" + cond("a") + ", " + cond("b") + "]}")).isEqualTo(20);
    // should: 100 * (1 - 0.6 * 0.5)
    assertThat(cost("{\"should\": [" + cond("a") + ", " + cond("x") + "]}")).isEqualTo(70);
    // must_not: the complement of each, multiplied: 100 * 0.6 * 0.5
    assertThat(cost("{\"must_not\": [" + cond("a") + ", " + cond("b") + "]}")).isEqualTo(30);
    // clauses of one filter multiply: 40 * (1 - 0.5)
    assertThat(cost("{\"must\": [" + cond("a") + "], \"must_not\": [" + cond("x") + "]}"))
        .isEqualTo(20);
    // a nested filter is one condition
    assertThat(
            cost(
                "{\"must\": ["
                    + cond("a")
                    + ", {\"should\": ["
                    + cond("c")
                    + ", "
                    + cond("b")
                    + "]}]}"))
        .isEqualTo(20);
    // an empty filter selects every point
    assertThat(cost("{}")).isEqualTo(100);
  }

  @Test
  void minShouldIsTheShouldOfTheMustsOfEachChoice() {
    String three = "[" + cond("a") + ", " + cond("b") + ", " + cond("x") + "]";
    // pairs: ab 20, ax 20, bx 25; should: 100 * (1 - 0.8 * 0.8 * 0.75) = 52
    assertThat(cost("{\"min_should\": {\"conditions\": " + three + ", \"min_count\": 2}}"))
        .isEqualTo(52);
    // one of them: the should
    assertThat(cost("{\"min_should\": {\"conditions\": " + three + ", \"min_count\": 1}}"))
        .isEqualTo(85);
    assertThat(cost("{\"min_should\": {\"conditions\": " + three + ", \"min_count\": 4}}"))
        .isZero();
    assertThat(cost("{\"min_should\": {\"conditions\": " + three + ", \"min_count\": 0}}"))
        .isEqualTo(100);
  }

  @Test
  void anEmptyCollectionCostsNothing() {
    assertThat(WriteCost.estimate(json("{\"must\": [" + cond("x") + "]}"), 0, COUNTS)).isZero();
  }
}
