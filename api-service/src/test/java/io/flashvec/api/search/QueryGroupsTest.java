package io.flashvec.api.search;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.filter.FieldPath;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class QueryGroupsTest {

  private static Record hit(long id, String payload) {
    return new Record(PointId.of(id), 1f / id, null, payload.getBytes(StandardCharsets.UTF_8));
  }

  private static List<String> groupIds(Map<JsonNode, List<Record>> groups) {
    List<String> out = new ArrayList<>();
    groups.keySet().forEach(k -> out.add(k.toString()));
    return out;
  }

  private static Map<JsonNode, List<Record>> grouped(
      List<Record> hits, String key, int groups, int size) {
    var g = new QueryGroups.Groups(FieldPath.parse(key, "group_by"), groups, size, true);
    g.add(hits);
    return g.distill();
  }

  /**
   * Hits of a later request (fewer competitors: a better fused rank) can outrank earlier ones;
   * groups rank by their best hit and the full ones are what the next request leaves out.
   */
  @Test
  void groupsRankByTheirBestHitAcrossRequests() {
    var g = new QueryGroups.Groups(FieldPath.parse("g", "group_by"), 2, 2, true);
    g.add(List.of(scored(1, 0.9f, "a"), scored(2, 0.8f, "a"), scored(3, 0.5f, "b")));
    assertThat(g.full()).containsExactly("a");
    assertThat(g.openBest()).containsExactly("b");
    assertThat(g.filledBest()).isEqualTo(1);
    g.add(List.of(scored(4, 0.95f, "c"), scored(1, 0.1f, "a"), scored(5, 0.4f, "c")));
    assertThat(g.best()).extracting(JsonNode::asString).containsExactly("c", "a");
    assertThat(g.filledBest()).isEqualTo(2);
    var out = g.distill();
    assertThat(out.get(out.keySet().iterator().next()).stream().map(r -> r.id().number()))
        .containsExactly(4L, 5L);
    var distances = new QueryGroups.Groups(FieldPath.parse("g", "group_by"), 1, 1, false);
    distances.add(List.of(scored(1, 0.7f, "a"), scored(2, 0.2f, "b")));
    assertThat(distances.best()).extracting(JsonNode::asString).containsExactly("b");
  }

  private static Record scored(long id, float score, String group) {
    return new Record(
        PointId.of(id),
        score,
        null,
        ("{\"g\":\"" + group + "\"}").getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void stringsAndIntegersMakeGroupsAndOtherValuesNone() {
    List<Record> hits =
        List.of(
            hit(1, "{\"g\":\"string\"}"),
            hit(2, "{\"g\":123}"),
            hit(3, "{\"g\":[1,2,3]}"),
            hit(4, "{\"g\":[\"a\",\"b\"]}"),
            hit(5, "{\"g\":2.42}"),
            hit(6, "{\"g\":[[\"x\"]]}"),
            hit(7, "{\"g\":{\"o\":\"s\"}}"),
            hit(8, "{\"g\":[]}"),
            hit(9, "{\"g\":null}"),
            hit(10, "{}"));
    Map<JsonNode, List<Record>> groups = grouped(hits, "g", 100, 3);
    assertThat(groupIds(groups))
        .containsExactly("\"string\"", "123", "1", "2", "3", "\"a\"", "\"b\"");
  }

  @Test
  void groupsFillInHitOrderUpToTheirSizeAndCount() {
    List<Record> hits =
        List.of(
            hit(1, "{\"d\":{\"id\":7}}"),
            hit(2, "{\"d\":{\"id\":7}}"),
            hit(3, "{\"d\":{\"id\":8}}"),
            hit(4, "{\"d\":{\"id\":7}}"),
            hit(5, "{\"d\":{\"id\":9}}"),
            hit(6, "{\"d\":{\"id\":8}}"));
    Map<JsonNode, List<Record>> groups = grouped(hits, "d.id", 2, 2);
    assertThat(groupIds(groups)).containsExactly("7", "8");
    assertThat(groups.values().stream().map(List::size)).containsExactly(2, 2);
    assertThat(groups.values().iterator().next().stream().map(r -> r.id().number()))
        .containsExactly(1L, 2L);
  }
}
