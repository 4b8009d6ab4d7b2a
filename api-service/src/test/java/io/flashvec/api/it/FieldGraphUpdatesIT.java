package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

/**
 * A collection update of a named vector's graph settings (ADR 0040) against a real server: {@code
 * hnsw_config} and a scalar {@code quantization_config} of a vector other than the primary one are
 * described as updated, its sealed segments' graphs are built again with them (searches meanwhile
 * and after match exact ones closely), the settings survive a restart, {@code m: 0} drops the graph
 * (strict mode's {@code search_allow_exact: false} then refuses its searches), and what cannot be
 * honoured is refused naming the field.
 */
@ExtendWith(TestSeeds.Reporter.class)
class FieldGraphUpdatesIT extends OneServerPerClass {

  static final int POINTS = 2000;

  @Test
  void aNamedVectorsGraphSettingsChangeByAnUpdate() throws Exception {
    Random r = TestSeeds.random("FieldGraphUpdatesIT");
    ok(
        http.put(
            "/collections/u",
            "{\"vectors\": {\"img\": {\"size\": 4, \"distance\": \"Dot\"},"
                + " \"txt\": {\"size\": 16, \"distance\": \"Euclid\"}}}"));
    for (int from = 0; from < POINTS; from += 500) {
      StringBuilder sb = new StringBuilder("{\"points\": [");
      for (int id = from; id < from + 500; id++) {
        sb.append(id == from ? "" : ",")
            .append("{\"id\": ")
            .append(id)
            .append(", \"vector\": {\"img\": ")
            .append(SparseVectorsIT.vec(ExactRecall.gaussian(r, 4)))
            .append(", \"txt\": ")
            .append(SparseVectorsIT.vec(ExactRecall.gaussian(r, 16)))
            .append("}}");
      }
      ok(http.put("/collections/u/points?wait=true", sb.append("]}").toString()));
    }
    ok(http.post("/collections/u/flush", ""));
    awaitIndexed(2L * POINTS);
    Await.until(Duration.ofSeconds(60), "the graphs written", () -> graphsWritten("m=16") > 0);
    int written = graphsWritten("m=16");

    // refused, naming the field: no graph for the primary, product quantization, on_disk
    refused("{\"vectors\": {\"img\": {\"hnsw_config\": {\"m\": 0}}}}", "vectors.img.hnsw_config.m");
    refused(
        "{\"vectors\": {\"txt\": {\"quantization_config\": {\"product\": {\"compression\":"
            + " \"x16\"}}}}}",
        "vectors.txt.quantization_config");
    refused("{\"vectors\": {\"txt\": {\"on_disk\": true}}}", "vectors.txt.on_disk");
    refused(
        "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 0}, \"quantization_config\":"
            + " {\"scalar\": {\"type\": \"int8\"}}}}}",
        "vectors.txt.quantization_config");

    ok(
        http.send(
            "PATCH",
            "/collections/u",
            "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 8, \"ef_construct\": 64},"
                + " \"quantization_config\": {\"scalar\": {\"type\": \"int8\", \"quantile\":"
                + " 0.99}}}}}"));
    JsonNode vectors = http.get("/collections/u").result().at("/config/params/vectors");
    assertThat(vectors.at("/txt/hnsw_config").toString())
        .isEqualTo("{\"m\":8,\"ef_construct\":64}");
    assertThat(vectors.at("/txt/quantization_config").toString())
        .isEqualTo("{\"scalar\":{\"type\":\"int8\",\"quantile\":0.99}}");
    ExactRecall.check(http, "u", "txt", 16, r, "while or after the graphs are built again");
    awaitIndexed(2L * POINTS);
    Await.until(
        Duration.ofSeconds(120),
        "the graphs of the new settings written",
        () -> graphsWritten("m=8") > 0 && graphsWritten("m=8") == written);
    ExactRecall.check(http, "u", "txt", 16, r, "after the update");

    server.restart();
    http = new Http(server.url());
    assertThat(http.get("/collections/u").result().at("/config/params/vectors")).isEqualTo(vectors);
    awaitIndexed(2L * POINTS);
    ExactRecall.check(http, "u", "txt", 16, r, "after a restart");
    assertThat(graphsWritten("m=8"))
        .as("the files of the new settings are read back, not built again")
        .isEqualTo(written);

    // quantization removed, then no graph at all: searches scan, strict mode refuses them
    ok(
        http.send(
            "PATCH",
            "/collections/u",
            "{\"vectors\": {\"txt\": {\"quantization_config\": \"Disabled\"}}}"));
    assertThat(
            http.get("/collections/u")
                .result()
                .at("/config/params/vectors/txt")
                .has("quantization_config"))
        .isFalse();
    ok(
        http.send(
            "PATCH", "/collections/u", "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 0}}}}"));
    assertThat(
            http.get("/collections/u")
                .result()
                .at("/config/params/vectors/txt/hnsw_config/m")
                .intValue())
        .isZero();
    awaitIndexed(POINTS);
    ExactRecall.check(http, "u", "txt", 16, r, "without a graph");
    ok(
        http.send(
            "PATCH",
            "/collections/u",
            "{\"strict_mode_config\": {\"enabled\": true, \"search_allow_exact\": false}}"));
    Http.Response scan =
        http.post(
            "/collections/u/points/query",
            "{\"query\": "
                + SparseVectorsIT.vec(ExactRecall.gaussian(r, 16))
                + ", \"using\": \"txt\", \"limit\": 3}");
    assertThat(scan.status()).as(scan.raw()).isEqualTo(400);
    assertThat(scan.error()).contains("txt");
  }

  private static void refused(String body, String field) {
    Http.Response resp = http.send("PATCH", "/collections/u", body);
    assertThat(resp.status()).as(resp.raw()).isEqualTo(400);
    assertThat(resp.error()).contains(field);
  }

  /** Field graph files of {@code settings} (e.g. {@code m=8}) the server wrote, by its log. */
  private static int graphsWritten(String settings) throws java.io.IOException {
    try (var lines = java.nio.file.Files.lines(tmp.resolve("server.log"))) {
      return (int)
          lines.filter(l -> l.contains("field graph written") && l.contains(settings)).count();
    }
  }

  private static void awaitIndexed(long expected) {
    Await.until(
        Duration.ofSeconds(120),
        "graphs built: " + expected + " indexed vectors",
        () -> "collection " + http.get("/collections/u").result(),
        () -> {
          JsonNode c = http.get("/collections/u").result();
          return c.get("indexed_vectors_count").longValue() == expected
              && c.get("status").asString().equals("green");
        });
  }

  private static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }
}
