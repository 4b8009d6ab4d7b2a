package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's {@code optimizers_config.default_segment_number} against a real server: a collection
 * created with 2 keeps two of its three small sealed segments' points apart (each with a graph),
 * where the tiers merge the same three into one; the setting reads back and survives a restart, and
 * an update to 1 merges the two at once and is kept too.
 */
class SegmentNumberIT extends OneServerPerClass {

  @Test
  void aCollectionKeepsTheSegmentsItAsksFor() {
    ok(
        http.put(
            "/collections/two",
            "{\"vectors\": {\"size\": 2, \"distance\": \"Dot\"},"
                + " \"optimizers_config\": {\"default_segment_number\": 2}}"));
    ok(http.put("/collections/tiers", "{\"vectors\": {\"size\": 2, \"distance\": \"Dot\"}}"));
    assertThat(
            http.get("/collections/two")
                .result()
                .at("/config/optimizer_config/default_segment_number")
                .asInt())
        .isEqualTo(2);
    int id = 0;
    for (int points : new int[] {30, 20, 10}) {
      StringBuilder sb = new StringBuilder("{\"points\": [");
      for (int i = 0; i < points; i++, id++) {
        sb.append(i == 0 ? "" : ",")
            .append("{\"id\": ")
            .append(id)
            .append(", \"vector\": [")
            .append(id % 7)
            .append(", 1]}");
      }
      String body = sb.append("]}").toString();
      for (String c : List.of("two", "tiers")) {
        ok(http.put("/collections/" + c + "/points?wait=true", body));
        ok(http.post("/collections/" + c + "/flush", "{}"));
      }
    }
    Await.until(
        Duration.ofSeconds(120),
        "the tiers merge three small segments into one",
        () -> sealed("tiers").equals(List.of(60)));
    Await.until(
        Duration.ofSeconds(120),
        "a target of two leaves two segments, each built",
        () -> sealed("two").size() == 2 && green("two"));
    server.restart();
    assertThat(
            http.get("/collections/two")
                .result()
                .at("/config/optimizer_config/default_segment_number")
                .asInt())
        .isEqualTo(2);
    // which two depends on when the seals were built: [30 + 20, 10] or [30, 20 + 10]
    List<Integer> after = sealed("two");
    assertThat(after.equals(List.of(50, 10)) || after.equals(List.of(30, 30)))
        .as("%s", after)
        .isTrue();
    assertThat(http.get("/collections/two").result().path("points_count").asLong()).isEqualTo(60);

    // an update changes the target: the shard merges down to it at once, and keeps it
    Http.Response tooMany =
        http.send(
            "PATCH",
            "/collections/two",
            "{\"optimizers_config\": {\"default_segment_number\": 1001}}");
    assertThat(tooMany.status()).isEqualTo(400);
    assertThat(tooMany.error()).contains("default_segment_number", "at most 1000");
    ok(
        http.send(
            "PATCH",
            "/collections/two",
            "{\"optimizers_config\": {\"default_segment_number\": 1}}"));
    assertThat(segmentNumber("two")).isEqualTo(1);
    Await.until(
        Duration.ofSeconds(120),
        "a target of one merges the two segments",
        () -> sealed("two").equals(List.of(60)) && green("two"));
    server.restart();
    assertThat(segmentNumber("two")).isEqualTo(1);
    assertThat(sealed("two")).isEqualTo(List.of(60));
    assertThat(http.get("/collections/two").result().path("points_count").asLong()).isEqualTo(60);
  }

  private static int segmentNumber(String collection) {
    return http.get("/collections/" + collection)
        .result()
        .at("/config/optimizer_config/default_segment_number")
        .asInt();
  }

  private static boolean green(String collection) {
    return http.get("/collections/" + collection)
        .result()
        .path("status")
        .asString()
        .equals("green");
  }

  /** The live points of {@code collection}'s sealed segments, largest first. */
  private static List<Integer> sealed(String collection) {
    JsonNode r = http.get("/collections/" + collection).result();
    List<Integer> out = new ArrayList<>();
    for (JsonNode s : r.at("/flashvec/segments")) {
      if (!s.path("state").asString().equals("growing")) {
        out.add(s.path("points").asInt());
      }
    }
    out.sort(java.util.Comparator.reverseOrder());
    return out;
  }

  private static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }
}
