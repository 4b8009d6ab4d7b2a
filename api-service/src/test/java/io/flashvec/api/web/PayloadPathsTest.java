package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.filter.FieldPath;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/**
 * Payload keys are paths (delete_payload, with_payload include/exclude) with Qdrant's semantics:
 * the cases of Qdrant's own {@code json_path} tests and its REST suite's payload selectors.
 */
class PayloadPathsTest {

  private static ObjectNode json(String s) {
    return (ObjectNode) Json.MAPPER.readTree(s);
  }

  private static String after(String payload, String key) {
    ObjectNode o = json(payload);
    PayloadPaths.remove(o, FieldPath.parse(key, "keys[0]"));
    return Json.MAPPER.writeValueAsString(o);
  }

  private static String only(String payload, String... keys) {
    return Json.MAPPER.writeValueAsString(
        PayloadPaths.include(
            json(payload), Arrays.stream(keys).map(k -> FieldPath.parse(k, "include")).toList()));
  }

  private static String without(String payload, String... keys) {
    return Json.MAPPER.writeValueAsString(
        PayloadPaths.exclude(
            json(payload), Arrays.stream(keys).map(k -> FieldPath.parse(k, "exclude")).toList()));
  }

  @Test
  void aDottedKeyRemovesTheNestedKey() {
    assertThat(after("{\"a.b\":1,\"a\":{\"b\":2,\"c\":3}}", "a.b"))
        .isEqualTo("{\"a.b\":1,\"a\":{\"c\":3}}");
    assertThat(after("{\"a\":{\"b\":{\"c\":1,\"d\":2}}}", "a.b.c"))
        .isEqualTo("{\"a\":{\"b\":{\"d\":2}}}");
  }

  @Test
  void removeEntersArraysOnlyThroughBrackets() {
    String p = "{\"arr\":[{\"x\":1,\"y\":1},{\"x\":2},3]}";
    assertThat(after(p, "arr[].x")).isEqualTo("{\"arr\":[{\"y\":1},{},3]}");
    assertThat(after(p, "arr.x")).as("a plain key does not enter an array").isEqualTo(p);
    assertThat(after(p, "arr[0].y")).isEqualTo("{\"arr\":[{\"x\":1},{\"x\":2},3]}");
    assertThat(after(p, "arr[1]")).as("removing by index is not idempotent: nothing").isEqualTo(p);
    assertThat(after(p, "arr[]")).as("the array stays, empty").isEqualTo("{\"arr\":[]}");
  }

  @Test
  void removeFollowsQdrantsJsonPathTest() {
    String p =
        "{\"a\":1,\"b\":{\"c\":123,\"e\":{\"f\":[1,2,3],\"g\":7,\"h\":\"text\","
            + "\"i\":[{\"j\":1,\"k\":2},{\"j\":3,\"k\":4}]}}}";
    p = after(p, "b.c");
    p = after(p, "b.e.i[0].j");
    assertThat(p).contains("\"i\":[{\"k\":2},{\"j\":3,\"k\":4}]");
    p = after(p, "b.e.i[].k");
    assertThat(p).contains("\"i\":[{},{\"j\":3}]");
    p = after(p, "b.e.i[]");
    assertThat(p).contains("\"i\":[]");
    p = after(p, "b.e.i");
    p = after(p, "b.e.f");
    assertThat(after(p, "k")).isEqualTo(p);
    assertThat(after(p, "b.e.l")).isEqualTo(p);
    assertThat(p).isEqualTo("{\"a\":1,\"b\":{\"e\":{\"g\":7,\"h\":\"text\"}}}");
    assertThat(after(after(after(p, "a"), "b.e"), "b")).isEqualTo("{}");
  }

  @Test
  void aPathThatReachesNothingChangesNothing() {
    String p = "{\"a\":{\"b\":1},\"n\":5,\"arr\":[1]}";
    for (String key : new String[] {"z", "a.z", "n.x", "a[].b", "arr[7]", "arr[0].q", "arr.q"}) {
      assertThat(after(p, key)).as(key).isEqualTo(p);
    }
    assertThat(after(p, "n")).isEqualTo("{\"a\":{\"b\":1},\"arr\":[1]}");
  }

  @Test
  void includeKeepsThePathsAndTheStructureAroundThem() {
    String p =
        "{\"city\":\"Rome\",\"meta\":{\"a\":{\"b\":2},\"src\":\"app\"},"
            + "\"items\":[{\"x\":1,\"y\":1},{\"y\":2},{\"x\":3}],\"dotted.key\":5}";
    assertThat(only(p, "city", "meta.a"))
        .isEqualTo("{\"city\":\"Rome\",\"meta\":{\"a\":{\"b\":2}}}");
    assertThat(only(p, "meta.src", "meta.a.b"))
        .as("the payload's own order")
        .isEqualTo("{\"meta\":{\"a\":{\"b\":2},\"src\":\"app\"}}");
    assertThat(only(p, "items[].x"))
        .as("every element stays; inside, only what was asked for")
        .isEqualTo("{\"items\":[{\"x\":1},{},{\"x\":3}]}");
    assertThat(only(p, "items.y"))
        .as("a plain key does not enter an array")
        .isEqualTo("{\"items\":[]}");
    assertThat(only(p, "items[2]"))
        .as("an index never matches an element")
        .isEqualTo("{\"items\":[]}");
    assertThat(only(p, "items[]")).isEqualTo("{\"items\":[{\"x\":1,\"y\":1},{\"y\":2},{\"x\":3}]}");
    assertThat(only(p, "nope", "meta.nope")).isEqualTo("{\"meta\":{}}");
    assertThat(only(p, "city.x"))
        .as("a value below a scalar keeps the scalar")
        .isEqualTo("{\"city\":\"Rome\"}");
    // a dotted key is a path, as in filters: the literal top-level key is not reached
    assertThat(only(p, "dotted.key")).isEqualTo("{}");
  }

  @Test
  void selectorsOfQdrantsRestSuite() {
    String p =
        "{\"country\":{\"name\":\"Germany\",\"capital\":\"Berlin\",\"cities\":["
            + "{\"name\":\"Berlin\",\"population\":3.7,\"sightseeing\":[\"Brandenburg Gate\"]},"
            + "{\"name\":\"Munich\",\"population\":1.5}]}}";
    assertThat(only(p, "country.name", "country.capital"))
        .isEqualTo("{\"country\":{\"name\":\"Germany\",\"capital\":\"Berlin\"}}");
    assertThat(only(p, "country.cities[].name"))
        .isEqualTo("{\"country\":{\"cities\":[{\"name\":\"Berlin\"},{\"name\":\"Munich\"}]}}");
    assertThat(without(p, "country.cities"))
        .isEqualTo("{\"country\":{\"name\":\"Germany\",\"capital\":\"Berlin\"}}");
    assertThat(without(p, "country.name", "country.capital"))
        .isEqualTo(
            "{\"country\":{\"cities\":[{\"name\":\"Berlin\",\"population\":3.7,\"sightseeing\":"
                + "[\"Brandenburg Gate\"]},{\"name\":\"Munich\",\"population\":1.5}]}}");
    assertThat(without(p, "country.cities[].population", "country.cities[].sightseeing"))
        .isEqualTo(
            "{\"country\":{\"name\":\"Germany\",\"capital\":\"Berlin\",\"cities\":"
                + "[{\"name\":\"Berlin\"},{\"name\":\"Munich\"}]}}");
    assertThat(without(p, "country.cities.name")).as("no brackets: nothing excluded").isEqualTo(p);
  }

  private static String set(String payload, String key, String src) {
    ObjectNode o = json(payload);
    PayloadPaths.set(o, FieldPath.parse(key, "key"), json(src));
    return Json.MAPPER.writeValueAsString(o);
  }

  @Test
  void setUnderAKeyFollowsQdrantsJsonPathTests() {
    String p =
        "{\"a\":{\"b\":[{\"c\":1},{\"c\":2},{\"d\":{\"e\":3}}]},\"f\":3,"
            + "\"g\":[\"g0\",\"g1\",\"g2\"]}";
    assertThat(set(p, "a", "{\"b\":5}"))
        .isEqualTo("{\"a\":{\"b\":5},\"f\":3,\"g\":[\"g0\",\"g1\",\"g2\"]}");
    assertThat(set(p, "a.b[1]", "{\"c\":5}")).contains("\"b\":[{\"c\":1},{\"c\":5},{\"d\"");
    assertThat(set(p, "a.b[1]", "{}")).isEqualTo(p);
    assertThat(set(p, "a.b[].x", "{\"y\":0}"))
        .contains("\"b\":[{\"c\":1,\"x\":{\"y\":0}},{\"c\":2,\"x\":{\"y\":0}},");
    assertThat(set("{}", "key1.key2", "{\"c\":1}")).isEqualTo("{\"key1\":{\"key2\":{\"c\":1}}}");
    assertThat(set("{}", "key1.key2[3]", "{\"c\":1}")).isEqualTo("{\"key1\":{\"key2\":[]}}");
    assertThat(set("{}", "key1.key2[0]", "{\"c\":1}")).isEqualTo("{\"key1\":{\"key2\":[]}}");
    assertThat(set("{}", "key1.key2[].key3", "{\"c\":1}")).isEqualTo("{\"key1\":{\"key2\":[]}}");
    assertThat(set("{\"a\":10}", "a.b.c", "{\"x\":1}"))
        .as("a scalar on the way becomes an object")
        .isEqualTo("{\"a\":{\"b\":{\"c\":{\"x\":1}}}}");
  }
}
