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
 * Qdrant's TurboQuant against a real server (ADR 0045): named vectors with {@code turbo}
 * quantization, their own and the collection's, are indexed by graphs navigated by TurboQuant codes
 * whose searches match exact ones closely; a {@code turbo4} vector is stored coded and decoded,
 * keeping its length and direction, the same on every read and after a restart. Combinations
 * FlashVec does not honour are refused naming the setting.
 */
@ExtendWith(TestSeeds.Reporter.class)
class TurboQuantIT extends OneServerPerClass {

  static final int POINTS = 1500;

  @Test
  void turboCodesIndexNamedVectorsAndTurbo4StoresCodedValues() throws Exception {
    Random r = TestSeeds.random("TurboQuantIT");
    ok(
        http.put(
            "/collections/t",
            "{\"vectors\": {\"a\": {\"size\": 32, \"distance\": \"Cosine\","
                + " \"quantization_config\": {\"turbo\": {\"bits\": \"bits4\", \"always_ram\":"
                + " true}}},"
                + " \"b\": {\"size\": 24, \"distance\": \"Euclid\"},"
                + " \"c\": {\"size\": 20, \"distance\": \"Dot\", \"datatype\": \"turbo4\"},"
                + " \"d\": {\"size\": 32, \"distance\": \"Dot\", \"quantization_config\":"
                + " {\"binary\": {\"always_ram\": true}}}},"
                + " \"quantization_config\": {\"turbo\": {\"bits\": \"bits2\"}}}"));
    float[][] c = new float[POINTS][];
    for (int from = 0; from < POINTS; from += 500) {
      StringBuilder sb = new StringBuilder("{\"points\": [");
      for (int id = from; id < from + 500; id++) {
        c[id] = gaussian(r, 20);
        sb.append(id == from ? "" : ",")
            .append("{\"id\": ")
            .append(id)
            .append(", \"vector\": {\"a\": ")
            .append(SparseVectorsIT.vec(gaussian(r, 32)))
            .append(", \"b\": ")
            .append(SparseVectorsIT.vec(gaussian(r, 24)))
            .append(", \"c\": ")
            .append(SparseVectorsIT.vec(c[id]))
            .append(", \"d\": ")
            .append(SparseVectorsIT.vec(gaussian(r, 32)))
            .append("}}");
      }
      ok(http.put("/collections/t/points?wait=true", sb.append("]}").toString()));
    }
    JsonNode config = http.get("/collections/t").result().get("config");
    JsonNode vectors = config.at("/params/vectors");
    assertThat(vectors.get("a").get("quantization_config").toString())
        .isEqualTo("{\"turbo\":{\"bits\":\"bits4\",\"always_ram\":true}}");
    assertThat(vectors.get("b").has("quantization_config")).as("the collection's").isFalse();
    assertThat(config.get("quantization_config").toString())
        .isEqualTo("{\"turbo\":{\"bits\":\"bits2\"}}");
    assertThat(vectors.get("c").get("datatype").asString()).isEqualTo("turbo4");
    // Qdrant's binary quantization: one-bit TurboQuant codes, shown as given
    assertThat(vectors.get("d").get("quantization_config").toString())
        .isEqualTo("{\"binary\":{\"always_ram\":true}}");

    JsonNode stored = http.get("/collections/t/points/7").result().at("/vector/c");
    float[] back = floats(stored);
    assertThat(back).isNotEqualTo(c[7]);
    assertThat(cosine(back, c[7])).as("direction kept").isGreaterThan(0.97);
    assertThat(norm(back) / norm(c[7])).as("length kept").isCloseTo(1.0, within(1e-3));
    assertThat(http.get("/collections/t/points/7").result().at("/vector/c")).isEqualTo(stored);

    ok(http.post("/collections/t/flush", ""));
    awaitIndexed("t", 4L * POINTS);
    checkSearches(r, "a", 32, 0.9);
    checkSearches(r, "b", 24, 0.85);
    checkSearches(r, "d", 32, 0.75); // one bit for each of 32 coordinates navigates coarsely

    // a collection-level quantization that every quantized vector overrides is still shown
    ok(
        http.put(
            "/collections/u",
            "{\"vectors\": {\"a\": {\"size\": 8, \"distance\": \"Dot\", \"quantization_config\":"
                + " {\"turbo\": {\"bits\": \"bits1_5\"}}}},"
                + " \"quantization_config\": {\"turbo\": {\"bits\": \"bits1\", \"always_ram\": true}}}"));
    String shown = "{\"turbo\":{\"bits\":\"bits1\",\"always_ram\":true}}";
    assertThat(http.get("/collections/u").result().at("/config/quantization_config").toString())
        .isEqualTo(shown);

    server.restart();
    http = new Http(server.url());
    assertThat(http.get("/collections/u").result().at("/config/quantization_config").toString())
        .isEqualTo(shown);
    ok(http.send("PATCH", "/collections/u", "{\"quantization_config\": \"Disabled\"}"));
    assertThat(http.get("/collections/u").result().at("/config/quantization_config").isNull())
        .isTrue();
    assertThat(http.get("/collections/t").result().get("config")).isEqualTo(config);
    assertThat(http.get("/collections/t/points/7").result().at("/vector/c")).isEqualTo(stored);
    awaitIndexed("t", 4L * POINTS);
    checkSearches(r, "a", 32, 0.9);
  }

  @Test
  void turboSettingsFlashVecDoesNotHonourAreRefused() {
    String base = "{\"vectors\": {\"a\": {\"size\": 4, \"distance\": \"Dot\"}, \"b\": ";
    Http.Response ram =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"quantization_config\": {\"turbo\":"
                + " {\"always_ram\": false}}}}}");
    assertThat(ram.status()).isEqualTo(400);
    assertThat(ram.error()).contains("vectors.b.quantization_config.turbo.always_ram");
    Http.Response bits =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"quantization_config\": {\"turbo\":"
                + " {\"bits\": \"bits3\"}}}}}");
    assertThat(bits.status()).isEqualTo(400);
    assertThat(bits.error()).contains("vectors.b.quantization_config.turbo.bits");
    Http.Response multi =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"multivector_config\": {\"comparator\":"
                + " \"max_sim\"}, \"quantization_config\": {\"turbo\": {}}}}}");
    assertThat(multi.status()).isEqualTo(400);
    assertThat(multi.error()).contains("vectors.b.quantization_config");
    Http.Response collectionBits =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"quantization_config\": {\"turbo\": {}}}},"
                + " \"quantization_config\": {\"turbo\": {\"bits\": \"bits8\"}}}");
    assertThat(collectionBits.status()).isEqualTo(400);
    assertThat(collectionBits.error()).contains("quantization_config.turbo.bits");
    Http.Response coarse =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"quantization_config\": {\"binary\":"
                + " {\"query_encoding\": \"binary\"}}}}}");
    assertThat(coarse.status()).isEqualTo(400);
    assertThat(coarse.error()).contains("vectors.b.quantization_config.binary.query_encoding");
    Http.Response encoding =
        http.put(
            "/collections/bad",
            base
                + "{\"size\": 4, \"distance\": \"Dot\", \"quantization_config\": {\"binary\":"
                + " {\"encoding\": \"three_bits\"}}}}}");
    assertThat(encoding.status()).isEqualTo(400);
    assertThat(encoding.error()).contains("vectors.b.quantization_config.binary.encoding");
    assertThat(http.get("/collections/bad").status()).isEqualTo(404);

    // the primary (diskann) vector keeps its product quantisation: turbo by an update is refused
    ok(http.put("/collections/p", "{\"vectors\": {\"size\": 4, \"distance\": \"Cosine\"}}"));
    Http.Response patch =
        http.send(
            "PATCH",
            "/collections/p",
            "{\"quantization_config\": {\"turbo\": {\"bits\": \"bits2\"}}}");
    assertThat(patch.status()).isEqualTo(400);
    assertThat(patch.error()).contains("quantization_config").contains("turbo");
  }

  private static void awaitIndexed(String collection, long expected) {
    Await.until(
        Duration.ofSeconds(120),
        "graphs built: " + expected + " indexed vectors",
        () -> "collection " + http.get("/collections/" + collection).result(),
        () ->
            http.get("/collections/" + collection).result().get("indexed_vectors_count").longValue()
                == expected);
  }

  private static void checkSearches(Random r, String using, int dim, double recall) {
    int hits = 0;
    for (int i = 0; i < 20; i++) {
      float[] q = gaussian(r, dim);
      Set<Long> exact = ids(query(using, q, true));
      JsonNode approx = query(using, q, false);
      assertThat(approx.size()).isEqualTo(10);
      Set<Long> found = ids(approx);
      found.retainAll(exact);
      hits += found.size();
    }
    assertThat(hits / 200.0).as("recall@10 of %s", using).isGreaterThanOrEqualTo(recall);
  }

  private static JsonNode query(String using, float[] q, boolean exact) {
    Http.Response resp =
        http.post(
            "/collections/t/points/query",
            "{\"query\": "
                + SparseVectorsIT.vec(q)
                + ", \"using\": \""
                + using
                + "\", \"limit\": 10, \"params\": {\"exact\": "
                + exact
                + ", \"hnsw_ef\": 64}}");
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

  private static float[] floats(JsonNode a) {
    float[] out = new float[a.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.get(i).floatValue();
    }
    return out;
  }

  private static double cosine(float[] a, float[] b) {
    double d = 0;
    double na = 0;
    double nb = 0;
    for (int i = 0; i < a.length; i++) {
      d += (double) a[i] * b[i];
      na += (double) a[i] * a[i];
      nb += (double) b[i] * b[i];
    }
    return d / Math.sqrt(na * nb);
  }

  private static double norm(float[] a) {
    double s = 0;
    for (float x : a) {
      s += (double) x * x;
    }
    return Math.sqrt(s);
  }

  private static org.assertj.core.data.Offset<Double> within(double d) {
    return org.assertj.core.data.Offset.offset(d);
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
