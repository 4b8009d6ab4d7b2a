package io.flashvec.api.points;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.api.web.Json;
import io.flashvec.index.filter.FieldPath;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** delete_payload's keys are paths, as in Qdrant. */
class PayloadKeyRemovalTest {

  private static String after(String payload, String key) {
    JsonNode o = Json.MAPPER.readTree(payload);
    PayloadController.remove(o, FieldPath.parse(key, "keys[0]").steps(), 0);
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
}
