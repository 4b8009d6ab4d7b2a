package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

/**
 * Graphs of the dense vectors after the first (ADR 0040) against a real server: a collection of a
 * primary vector and two named vectors with their own {@code hnsw_config}, one with Qdrant's scalar
 * quantization (given as {@code quantization}, its alias); once sealed, both are indexed ({@code
 * indexed_vectors_count}), their searches match exact ones closely and honour filters, the settings
 * are described as given and survive a restart, after which the graphs are read from the files
 * written beside their segments, not built again. Settings a field graph does not honour, and a
 * {@code beam_width} on a search of such a vector, are refused.
 */
@ExtendWith(TestSeeds.Reporter.class)
class FieldGraphsIT extends OneServerPerClass {

  static final int POINTS = 2500;

  @Test
  void namedVectorsAreSearchedThroughTheirOwnGraphs() throws Exception {
    Random r = TestSeeds.random("FieldGraphsIT");
    ok(
        http.put(
            "/collections/g",
            "{\"vectors\": {\"img\": {\"size\": 4, \"distance\": \"Dot\"},"
                + " \"txt\": {\"size\": 32, \"distance\": \"Cosine\", \"hnsw_config\": {\"m\": 8},"
                + " \"quantization\": {\"scalar\": {\"type\": \"int8\", \"quantile\": 0.99}}},"
                + " \"e\": {\"size\": 16, \"distance\": \"Euclid\", \"on_disk\": true}},"
                + " \"hnsw_config\": {\"ef_construct\": 64}}"));
    for (int from = 0; from < POINTS; from += 500) {
      StringBuilder sb = new StringBuilder("{\"points\": [");
      for (int id = from; id < from + 500; id++) {
        sb.append(id == from ? "" : ",")
            .append("{\"id\": ")
            .append(id)
            .append(", \"payload\": {\"g\": ")
            .append(id % 4)
            .append("}, \"vector\": {\"img\": ")
            .append(SparseVectorsIT.vec(gaussian(r, 4)))
            .append(", \"txt\": ")
            .append(SparseVectorsIT.vec(gaussian(r, 32)));
        if (id % 5 != 0) {
          sb.append(", \"e\": ").append(SparseVectorsIT.vec(gaussian(r, 16)));
        }
        sb.append("}}");
      }
      ok(http.put("/collections/g/points?wait=true", sb.append("]}").toString()));
    }
    JsonNode vectors = http.get("/collections/g").result().at("/config/params/vectors");
    assertThat(vectors.get("txt").get("hnsw_config").toString()).isEqualTo("{\"m\":8}");
    assertThat(vectors.get("txt").get("quantization_config").toString())
        .isEqualTo("{\"scalar\":{\"type\":\"int8\",\"quantile\":0.99}}");
    assertThat(vectors.get("e").has("hnsw_config")).isFalse();

    ok(http.post("/collections/g/flush", ""));
    // the primary's graph, and the two fields' graphs: all of txt, four fifths of e
    long expected = POINTS + POINTS + POINTS * 4 / 5;
    awaitIndexed("g", expected);
    checkSearches(r, "before a restart");
    // each graph is written beside its segment once built: both fields' files
    Await.until(Duration.ofSeconds(60), "the field graphs written", () -> graphsWritten() == 2);

    server.restart();
    http = new Http(server.url());
    assertThat(http.get("/collections/g").result().at("/config/params/vectors")).isEqualTo(vectors);
    awaitIndexed("g", expected);
    checkSearches(r, "after a restart");
    assertThat(graphsWritten()).as("read back after the restart, not built again").isEqualTo(2);

    // beam_width tunes the primary vector's on-disk search only: refused for another vector
    float[] txt = gaussian(r, 32);
    for (String path : new String[] {"/points/query", "/points/search"}) {
      String body =
          path.endsWith("query")
              ? "{\"query\": " + SparseVectorsIT.vec(txt) + ", \"using\": \"txt\""
              : "{\"vector\": {\"name\": \"txt\", \"vector\": " + SparseVectorsIT.vec(txt) + "}";
      Http.Response beam =
          http.post(
              "/collections/g" + path, body + ", \"limit\": 3, \"params\": {\"beam_width\": 4}}");
      assertThat(beam.status()).as(path).isEqualTo(400);
      assertThat(beam.error()).as(path).contains("beam_width").contains("txt");
    }
    ok(
        http.post(
            "/collections/g/points/query",
            "{\"query\": "
                + SparseVectorsIT.vec(gaussian(r, 4))
                + ", \"using\": \"img\", \"limit\": 3, \"params\": {\"beam_width\": 4}}"));

    // a vector added to a collection gets its graphs as well, once its values are sealed
    ok(
        http.put(
            "/collections/h", "{\"vectors\": {\"img\": {\"size\": 4, \"distance\": \"Dot\"}}}"));
    ok(
        http.put(
            "/collections/h/vectors/late",
            "{\"dense\": {\"size\": 16, \"distance\": \"Euclid\", \"hnsw_config\": {\"m\": 8}}}"));
    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (int id = 0; id < 1500; id++) {
      sb.append(id == 0 ? "" : ",")
          .append("{\"id\": ")
          .append(id)
          .append(", \"vector\": {\"img\": ")
          .append(SparseVectorsIT.vec(gaussian(r, 4)))
          .append(", \"late\": ")
          .append(SparseVectorsIT.vec(gaussian(r, 16)))
          .append("}}");
    }
    ok(http.put("/collections/h/points?wait=true", sb.append("]}").toString()));
    ok(http.post("/collections/h/flush", ""));
    awaitIndexed("h", 1500 + 1500);
    int hits = 0;
    for (int i = 0; i < 20; i++) {
      float[] q = gaussian(r, 16);
      Set<Long> exact = ids(query("h", "late", q, true, ""));
      Set<Long> found = ids(query("h", "late", q, false, ""));
      assertThat(found).hasSize(10);
      found.retainAll(exact);
      hits += found.size();
    }
    assertThat(hits / 200.0).as("recall@10 of an added vector").isGreaterThanOrEqualTo(0.9);
  }

  @Test
  void settingsAFieldGraphDoesNotHonourAreRefused() {
    String base = "{\"vectors\": {\"a\": {\"size\": 4, \"distance\": \"Dot\"}, \"b\": ";
    Http.Response ram =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"quantization_config\": {\"scalar\":"
                + " {\"type\": \"int8\", \"always_ram\": false}}}}}");
    assertThat(ram.status()).isEqualTo(400);
    assertThat(ram.error()).contains("vectors.b.quantization_config.scalar.always_ram");
    Http.Response onDisk =
        http.put(
            "/collections/bad",
            base + "{\"size\": 4, \"distance\": \"Dot\", \"hnsw_config\": {\"on_disk\": true}}}}");
    assertThat(onDisk.status()).isEqualTo(400);
    assertThat(onDisk.error()).contains("vectors.b.hnsw_config.on_disk");
    Http.Response quantile =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"quantization_config\": {\"scalar\":"
                + " {\"type\": \"int8\", \"quantile\": 0.2}}}}}");
    assertThat(quantile.status()).isEqualTo(422);
    Http.Response product =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"quantization_config\": {\"product\":"
                + " {\"compression\": \"x16\"}}}}}");
    assertThat(product.status()).isEqualTo(400);
    assertThat(product.error()).contains("product quantization");
    Http.Response both =
        http.put(
            "/collections/bad",
            "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\"}, \"quantization\": {\"scalar\":"
                + " {\"type\": \"int8\"}}, \"quantization_config\": {\"scalar\": {\"type\":"
                + " \"int8\"}}}");
    assertThat(both.status()).isEqualTo(400);
    assertThat(http.get("/collections/bad").status()).isEqualTo(404);
    // a multivector has no graph: only m 0
    Http.Response multi =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"multivector_config\": {\"comparator\":"
                + " \"max_sim\"}, \"hnsw_config\": {\"m\": 16}}}}");
    assertThat(multi.status()).isEqualTo(400);
    assertThat(multi.error()).contains("vectors.b.hnsw_config");
  }

  /** The field graph files the server wrote so far, by its log. */
  private static long graphsWritten() throws java.io.IOException {
    try (var lines = java.nio.file.Files.lines(tmp.resolve("server.log"))) {
      return lines.filter(l -> l.contains("field graph written")).count();
    }
  }

  /** Waits until {@code collection} reports {@code expected} indexed vectors: its graphs built. */
  private static void awaitIndexed(String collection, long expected) {
    Await.until(
        Duration.ofSeconds(120),
        "field graphs built: " + expected + " indexed vectors",
        () -> "collection " + http.get("/collections/" + collection).result(),
        () ->
            http.get("/collections/" + collection).result().get("indexed_vectors_count").longValue()
                == expected);
  }

  /** Graph searches of both fields against exact ones (Qdrant's {@code exact}), with filters. */
  private static void checkSearches(Random r, String when) {
    for (String using : new String[] {"txt", "e"}) {
      int dim = using.equals("txt") ? 32 : 16;
      int hits = 0;
      for (int i = 0; i < 20; i++) {
        float[] q = gaussian(r, dim);
        String filter =
            i % 2 == 0
                ? ""
                : ", \"filter\": {\"must\": {\"key\": \"g\", \"match\": {\"value\": 1}}}";
        Set<Long> exact = ids(query(using, q, true, filter));
        JsonNode approx = query(using, q, false, filter);
        assertThat(approx.size()).as(when).isEqualTo(10);
        for (JsonNode p : approx) {
          if (!filter.isEmpty()) {
            assertThat(p.get("id").longValue() % 4).as(when).isEqualTo(1);
          }
          if (using.equals("e")) {
            assertThat(p.get("id").longValue() % 5).as("has the field, " + when).isNotZero();
          }
        }
        Set<Long> found = ids(approx);
        found.retainAll(exact);
        hits += found.size();
      }
      assertThat(hits / 200.0).as("recall@10 of %s %s", using, when).isGreaterThanOrEqualTo(0.9);
    }
  }

  private static JsonNode query(String using, float[] q, boolean exact, String filter) {
    return query("g", using, q, exact, filter);
  }

  private static JsonNode query(
      String collection, String using, float[] q, boolean exact, String filter) {
    Http.Response resp =
        http.post(
            "/collections/" + collection + "/points/query",
            "{\"query\": "
                + SparseVectorsIT.vec(q)
                + ", \"using\": \""
                + using
                + "\", \"limit\": 10, \"params\": {\"exact\": "
                + exact
                + ", \"hnsw_ef\": 64}"
                + filter
                + "}");
    ok(resp);
    return resp.result().get("points");
  }

  private static Set<Long> ids(JsonNode points) {
    Set<Long> out = new HashSet<>();
    for (JsonNode p : points) {
      out.add(p.get("id").longValue());
    }
    return out;
  }

  private static float[] gaussian(Random r, int dim) {
    float[] v = new float[dim];
    for (int i = 0; i < dim; i++) {
      v[i] = (float) r.nextGaussian();
    }
    return v;
  }

  private static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }
}
