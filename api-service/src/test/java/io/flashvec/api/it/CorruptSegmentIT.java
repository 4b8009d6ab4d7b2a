package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Sealed segments are built into on-disk DiskANN segments in the background, survive a restart
 * without a rebuild, and a corrupted segment file is detected at open: that collection answers 503
 * with the reason (never wrong results), {@code /readyz} answers 503 naming it until it is deleted,
 * other collections keep working, and it can be deleted.
 */
class CorruptSegmentIT {

  @TempDir Path tmp;

  @Test
  void segmentsReopenAndCorruptionIsReportedNotServed() throws Exception {
    long seed = TestSeeds.seed("CorruptSegmentIT");
    Random rnd = new Random(seed);
    Path data = tmp.resolve("data");
    try (ServerProcess server = new ServerProcess(data, tmp.resolve("a.log")).start()) {
      Http http = new Http(server.url());
      for (String c : List.of("good", "bad")) {
        assertThat(
                http.put("/collections/" + c, "{\"vectors\":{\"size\":8,\"distance\":\"Cosine\"}}")
                    .status())
            .isEqualTo(200);
        ObjectNode body = Http.JSON.createObjectNode();
        ArrayNode pts = body.putArray("points");
        for (int i = 0; i < 600; i++) {
          ObjectNode p = pts.addObject();
          p.put("id", i);
          ArrayNode v = p.putArray("vector");
          for (int d = 0; d < 8; d++) {
            v.add(rnd.nextGaussian());
          }
        }
        assertThat(http.put("/collections/" + c + "/points?wait=true", body.toString()).status())
            .isEqualTo(200);
        assertThat(http.post("/collections/" + c + "/flush", null).status()).isEqualTo(200);
      }
      for (String c : List.of("good", "bad")) {
        JsonNode[] last = new JsonNode[1];
        Await.until(
            Duration.ofSeconds(60),
            c + " indexed",
            () -> String.valueOf(last[0]),
            () -> {
              last[0] = http.get("/collections/" + c).result();
              return last[0].get("status").asString().equals("green");
            });
        JsonNode info = last[0];
        assertThat(info.at("/flashvec/segments/0/state").asString()).isEqualTo("sealed");
        assertThat(info.get("indexed_vectors_count").asLong()).isEqualTo(600);
        assertThat(info.at("/flashvec/disk_bytes").asLong()).isGreaterThan(600L * 8 * 4);
      }
    }
    // Restart: the segment is reopened, not rebuilt.
    try (ServerProcess server = new ServerProcess(data, tmp.resolve("b.log")).start()) {
      Http http = new Http(server.url());
      JsonNode hits =
          http.post("/collections/good/points/query", "{\"query\":1,\"limit\":1}").result();
      assertThat(hits.get("points")).hasSize(1);
      assertThat(hits.at("/points/0/id").asLong()).isNotEqualTo(1); // the point itself is left out
      assertThat(http.post("/collections/good/points/count", "{}").result().get("count").asLong())
          .isEqualTo(600);
      assertThat(server.logTail()).doesNotContain("segment indexed");
    }
    Path graph;
    try (var files = Files.walk(data.resolve("collections").resolve("bad"))) {
      graph =
          files
              .filter(p -> p.getFileName().toString().equals("graph.fvg"))
              .findFirst()
              .orElseThrow();
    }
    try (RandomAccessFile f = new RandomAccessFile(graph.toFile(), "rw")) {
      f.seek(f.length() / 2);
      int b = f.read();
      f.seek(f.length() / 2);
      f.write(b ^ 0x40);
    }
    try (ServerProcess server =
        new ServerProcess(data, tmp.resolve("c.log")).startWithFailedCollections()) {
      Http http = new Http(server.url());
      Http.Response ready = http.get("/readyz");
      assertThat(ready.status()).isEqualTo(503);
      assertThat(ready.raw())
          .isEqualTo(
              "some shards are not ready: collections failed to open: bad;"
                  + " GET /collections/{name} says why");
      JsonNode issues = http.get("/issues").result().get("issues");
      assertThat(issues).hasSize(1);
      assertThat(issues.get(0).get("id").asString()).isEqualTo("collection_failed_to_open/bad");
      assertThat(issues.get(0).get("related_collection").asString()).isEqualTo("bad");
      assertThat(issues.get(0).at("/solution/refactor").asString()).contains("DELETE");
      assertThat(http.delete("/issues").result().asBoolean()).isTrue();
      assertThat(http.get("/issues").result().get("issues")).as("dismissed").isEmpty();
      Http.Response bad =
          http.post("/collections/bad/points/search", "{\"vector\":[1,0,0,0,0,0,0,0],\"limit\":3}");
      assertThat(bad.status()).isEqualTo(503);
      assertThat(bad.error()).contains("bad").contains("checksum").contains("graph.fvg");
      assertThat(http.get("/collections/bad").status()).isEqualTo(503);
      assertThat(http.get("/collections/bad/exists").result().get("exists").asBoolean()).isTrue();
      assertThat(http.post("/collections/good/points/count", "{}").result().get("count").asLong())
          .isEqualTo(600);
      assertThat(http.delete("/collections/bad").result().asBoolean()).isTrue();
      assertThat(http.get("/collections/bad").status()).isEqualTo(404);
      assertThat(http.get("/readyz").status()).as("ready once it is deleted").isEqualTo(200);
    }
  }
}
