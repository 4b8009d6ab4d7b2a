package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

/**
 * A collection update of the primary vector's graph settings against a real server: {@code m} and
 * {@code ef_construct}, given in the vector's own {@code hnsw_config} or the collection's, are
 * described as updated, the sealed segments are rebuilt with them in the background (Qdrant's
 * {@code config_mismatch} optimization; searches meanwhile and after match exact ones closely), the
 * segments written later take them, they survive a restart, and what cannot be honoured (no graph,
 * quantization of the primary vector) is refused naming the field.
 */
@ExtendWith(TestSeeds.Reporter.class)
class PrimaryGraphUpdatesIT extends OneServerPerClass {

  static final int DIM = 16;

  @Test
  void thePrimaryVectorsGraphSettingsChangeByAnUpdate() throws Exception {
    Random r = TestSeeds.random("PrimaryGraphUpdatesIT");
    ok(http.put("/collections/p", "{\"vectors\": {\"size\": 16, \"distance\": \"Cosine\"}}"));
    for (int from = 0; from < 3000; from += 1000) {
      upload(r, from, from + 1000);
      ok(http.post("/collections/p/flush", ""));
    }
    awaitGreen(3000);
    assertThat(builds())
        .as("the default graph: m 32, ef_construct 100")
        .containsOnly(build(64, 100));

    refused("{\"hnsw_config\": {\"m\": 0}}", "hnsw_config.m");
    refused(
        "{\"vectors\": {\"\": {\"quantization_config\": {\"scalar\": {\"type\": \"int8\"}}}}}",
        "vectors.quantization_config");
    refused("{\"quantization_config\": {\"turbo\": {\"bits\": \"bits2\"}}}", "quantization_config");
    assertThat(http.get("/collections/p").result().at("/config/hnsw_config/m").intValue())
        .as("a refused update changes nothing")
        .isEqualTo(32);

    ok(
        http.send(
            "PATCH",
            "/collections/p",
            "{\"vectors\": {\"\": {\"hnsw_config\": {\"m\": 8, \"ef_construct\": 40}}}}"));
    JsonNode hnsw = http.get("/collections/p").result().at("/config/hnsw_config");
    assertThat(hnsw.get("m").intValue()).isEqualTo(8);
    assertThat(hnsw.get("ef_construct").intValue()).isEqualTo(40);
    ExactRecall.check(http, "p", null, DIM, r, "while the segments are rebuilt");
    awaitGreen(3000);
    Await.until(
        Duration.ofSeconds(120),
        "every segment rebuilt with m 8, ef_construct 40",
        () -> "builds " + builds(),
        () -> !builds().isEmpty() && Set.copyOf(builds()).equals(Set.of(build(16, 40))));
    JsonNode done =
        http.get("/collections/p/optimizations?with=completed&completed_limit=100").result();
    assertThat(done.get("completed").findValuesAsString("optimizer"))
        .as("%s", done)
        .contains("config_mismatch");
    ExactRecall.check(http, "p", null, DIM, r, "after the rebuilds");

    upload(r, 3000, 3500);
    ok(http.post("/collections/p/flush", ""));
    awaitGreen(3500);
    assertThat(builds()).as("sealed after the update").containsOnly(build(16, 40));

    server.restart();
    http = new Http(server.url());
    assertThat(http.get("/collections/p").result().at("/config/hnsw_config")).isEqualTo(hnsw);
    awaitGreen(3500);
    assertThat(builds()).as("nothing rebuilt back at the restart").containsOnly(build(16, 40));
    ExactRecall.check(http, "p", null, DIM, r, "after a restart");

    // the collection's hnsw_config reaches the primary vector too
    ok(http.send("PATCH", "/collections/p", "{\"hnsw_config\": {\"ef_construct\": 60}}"));
    hnsw = http.get("/collections/p").result().at("/config/hnsw_config");
    assertThat(hnsw.get("m").intValue()).isEqualTo(8);
    assertThat(hnsw.get("ef_construct").intValue()).isEqualTo(60);
    Await.until(
        Duration.ofSeconds(120),
        "every segment rebuilt with ef_construct 60",
        () -> "builds " + builds(),
        () -> Set.copyOf(builds()).equals(Set.of(build(16, 60))));
    awaitGreen(3500);
    ExactRecall.check(http, "p", null, DIM, r, "after the second update");
  }

  private static List<Integer> build(int maxDegree, int efConstruct) {
    return List.of(maxDegree, efConstruct);
  }

  /**
   * The max degree and construction list of each segment's graph, as its build file ({@code
   * graph-build.fvs}: a checksummed file whose 8-byte body ends 16 bytes before its end) says.
   */
  private static List<List<Integer>> builds() {
    List<List<Integer>> out = new ArrayList<>();
    try (Stream<Path> files = Files.walk(server.dataDir())) {
      for (Path f : files.filter(p -> p.endsWith("graph-build.fvs")).toList()) {
        byte[] b;
        try {
          b = Files.readAllBytes(f);
        } catch (java.nio.file.NoSuchFileException e) {
          continue; // a replaced segment removed meanwhile
        }
        ByteBuffer body = ByteBuffer.wrap(b, b.length - 24, 8).order(ByteOrder.LITTLE_ENDIAN);
        out.add(List.of(body.getInt(), body.getInt()));
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      return List.of(); // a directory removed during the walk: ask again
    }
    return out;
  }

  private static void upload(Random r, int from, int to) {
    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (int id = from; id < to; id++) {
      sb.append(id == from ? "" : ",")
          .append("{\"id\": ")
          .append(id)
          .append(", \"vector\": ")
          .append(SparseVectorsIT.vec(ExactRecall.gaussian(r, DIM)))
          .append("}");
    }
    ok(http.put("/collections/p/points?wait=true", sb.append("]}").toString()));
  }

  private static void refused(String body, String field) {
    Http.Response resp = http.send("PATCH", "/collections/p", body);
    assertThat(resp.status()).as(resp.raw()).isEqualTo(400);
    assertThat(resp.error()).contains(field);
  }

  private static void awaitGreen(long points) {
    Await.until(
        Duration.ofSeconds(120),
        "green with " + points + " indexed vectors",
        () -> "collection " + http.get("/collections/p").result(),
        () -> {
          JsonNode c = http.get("/collections/p").result();
          return c.get("indexed_vectors_count").longValue() == points
              && c.get("status").asString().equals("green");
        });
  }

  private static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }
}
