package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.filter.FieldPath;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Payload keys are paths (delete_payload, with_payload include/exclude), as in Qdrant. */
class PayloadPathsTest {

  private static String after(String payload, String key) {
    JsonNode o = Json.MAPPER.readTree(payload);
    PayloadPaths.remove(o, FieldPath.parse(key, "keys[0]"));
    return Json.MAPPER.writeValueAsString(o);
  }

  @Test
  void aDottedKeyRemovesTheNestedKey() {
    assertThat(after("{\"a.b\":1,\"a\":{\"b\":2,\"c\":3}}", "a.b"))
        .isEqualTo("{\"a.b\":1,\"a\":{\"c\":3}}");
    assertThat(after("{\"a\":{\"b\":{\"c\":1,\"d\":2}}}", "a.b.c"))
        .isEqualTo("{\"a\":{\"b\":{\"d\":2}}}");
  }

  @Test
  void arraysAreWalkedWithOrWithoutBrackets() {
    String p = "{\"arr\":[{\"x\":1,\"y\":1},{\"x\":2},3]}";
    assertThat(after(p, "arr[].x")).isEqualTo("{\"arr\":[{\"y\":1},{},3]}");
    assertThat(after(p, "arr.x")).isEqualTo("{\"arr\":[{\"y\":1},{},3]}");
    assertThat(after(p, "arr[0].y")).isEqualTo("{\"arr\":[{\"x\":1},{\"x\":2},3]}");
    assertThat(after(p, "arr[1]")).isEqualTo("{\"arr\":[{\"x\":1,\"y\":1},3]}");
    assertThat(after(p, "arr[]")).isEqualTo("{\"arr\":[]}");
  }

  @Test
  void aPathThatReachesNothingChangesNothing() {
    String p = "{\"a\":{\"b\":1},\"n\":5,\"arr\":[1]}";
    for (String key : new String[] {"z", "a.z", "n.x", "a[].b", "arr[7]", "arr[0].q"}) {
      assertThat(after(p, key)).as(key).isEqualTo(p);
    }
    assertThat(after(p, "n")).isEqualTo("{\"a\":{\"b\":1},\"arr\":[1]}");
  }

  private static String only(String payload, String... keys) {
    JsonNode o = Json.MAPPER.readTree(payload);
    var into = Json.object();
    for (String k : keys) {
      PayloadPaths.select(o, FieldPath.parse(k, "include"), into);
    }
    PayloadPaths.pruneEmptyElements(into);
    return Json.MAPPER.writeValueAsString(into);
  }

  @Test
  void includeKeepsThePathsAndTheStructureAroundThem() {
    String p =
        "{\"city\":\"Rome\",\"meta\":{\"a\":{\"b\":2},\"src\":\"app\"},"
            + "\"items\":[{\"x\":1,\"y\":1},{\"y\":2},{\"x\":3}],\"dotted.key\":5}";
    assertThat(only(p, "city", "meta.a"))
        .isEqualTo("{\"city\":\"Rome\",\"meta\":{\"a\":{\"b\":2}}}");
    assertThat(only(p, "meta.src", "meta.a.b"))
        .isEqualTo("{\"meta\":{\"src\":\"app\",\"a\":{\"b\":2}}}");
    assertThat(only(p, "items[].x")).isEqualTo("{\"items\":[{\"x\":1},{\"x\":3}]}");
    assertThat(only(p, "items.y")).isEqualTo("{\"items\":[{\"y\":1},{\"y\":2}]}");
    assertThat(only(p, "items[2]")).isEqualTo("{\"items\":[{\"x\":3}]}");
    assertThat(only(p, "items[]")).contains("\"items\":[{\"x\":1,\"y\":1},{\"y\":2},{\"x\":3}]");
    assertThat(only(p, "nope", "meta.nope", "city.x")).isEqualTo("{}");
    // a dotted key is a path, as in filters: the literal top-level key is not reached
    assertThat(only(p, "dotted.key")).isEqualTo("{}");
  }

  @Test
  void excludeRemovesNestedPaths() {
    String p = "{\"desc\":\"d\",\"meta\":{\"a\":{\"b\":2},\"src\":\"app\"}}";
    assertThat(after(p, "meta.src")).isEqualTo("{\"desc\":\"d\",\"meta\":{\"a\":{\"b\":2}}}");
  }
}
