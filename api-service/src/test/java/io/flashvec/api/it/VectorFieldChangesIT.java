package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's create and delete named vector ({@code PUT/DELETE /collections/{c}/vectors/{name}}) over
 * HTTP: a vector added to a collection with points, written, searched and filtered on; a vector
 * deleted (one beside the points, and the first declared, the graph's) disappears from the
 * description, the points and the requests, and a vector created again under the same name does not
 * bring its old values back, from the WAL after a restart, from sealed segments and after a
 * compaction.
 */
@ExtendWith(TestSeeds.Reporter.class)
class VectorFieldChangesIT extends OneServerPerClass {

  /** What each point must show: its vectors by name. */
  static final Map<Long, Map<String, float[]>> WANT = new TreeMap<>();

  @Test
  void addDeleteAndRecreateNamedVectors() {
    Random r = TestSeeds.random("VectorFieldChangesIT");
    ok(
        http.put(
            "/collections/vf",
            "{\"vectors\": {\"image\": {\"size\": 4, \"distance\": \"Dot\"},"
                + " \"text\": {\"size\": 3, \"distance\": \"Euclid\"}}}"));
    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 30; id++) {
      Map<String, float[]> v = new HashMap<>();
      v.put("image", gaussian(r, 4));
      if (id % 2 == 0) {
        v.put("text", gaussian(r, 3));
      }
      WANT.put(id, v);
      sb.append(id == 1 ? "" : ",").append("{\"id\": ").append(id).append(", \"vector\": ");
      sb.append(vectors(v)).append('}');
    }
    ok(http.put("/collections/vf/points?wait=true", sb.append("]}").toString()));

    // create: a field beside the points that no point has yet
    ok(
        http.put(
            "/collections/vf/vectors/extra", "{\"dense\": {\"size\": 2, \"distance\": \"Dot\"}}"));
    assertThat(names()).containsExactly("image", "text", "extra");
    checkAll("after create");
    // the same again is a no-op, another config Qdrant's 400
    ok(
        http.put(
            "/collections/vf/vectors/extra", "{\"dense\": {\"size\": 2, \"distance\": \"Dot\"}}"));
    Http.Response other =
        http.put(
            "/collections/vf/vectors/extra", "{\"dense\": {\"size\": 3, \"distance\": \"Dot\"}}");
    assertThat(other.status()).isEqualTo(400);
    assertThat(other.error())
        .isEqualTo("Wrong input: Vector `extra` already exists with a different configuration");
    refusals();

    // write it, search it, filter on it
    sb = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 10; id++) {
      float[] e = gaussian(r, 2);
      WANT.get(id).put("extra", e);
      sb.append(id == 1 ? "" : ",").append("{\"id\": ").append(id).append(", \"vector\": ");
      sb.append("{\"extra\": ").append(SparseVectorsIT.vec(e)).append("}}");
    }
    ok(http.put("/collections/vf/points/vectors?wait=true", sb.append("]}").toString()));
    checkAll("after writing the new field");
    float[] q = gaussian(r, 2);
    long best = bestDot("extra", q);
    JsonNode hits =
        http.post(
                "/collections/vf/points/query",
                "{\"query\": " + SparseVectorsIT.vec(q) + ", \"using\": \"extra\", \"limit\": 3}")
            .result()
            .get("points");
    assertThat(hits.get(0).get("id").longValue()).isEqualTo(best);
    assertThat(count("{\"must\": [{\"has_vector\": \"extra\"}]}")).isEqualTo(10);

    // delete a field beside the points
    ok(http.delete("/collections/vf/vectors/text"));
    WANT.values().forEach(v -> v.remove("text"));
    assertThat(names()).containsExactly("image", "extra");
    checkAll("after deleting text");
    Http.Response using =
        http.post("/collections/vf/points/query", "{\"query\": [1, 2, 3], \"using\": \"text\"}");
    assertThat(using.status()).isEqualTo(400);
    assertThat(using.error()).isEqualTo("Wrong input: Not existing vector name error: text");
    Http.Response again = http.delete("/collections/vf/vectors/text");
    assertThat(again.status()).isEqualTo(400);
    assertThat(again.error()).isEqualTo("Wrong input: Not existing vector name error: text");

    // recreated: the old values stay gone, new ones are its own
    ok(
        http.put(
            "/collections/vf/vectors/text", "{\"dense\": {\"size\": 5, \"distance\": \"Dot\"}}"));
    checkAll("after recreating text");
    assertThat(count("{\"must\": [{\"has_vector\": \"text\"}]}")).isZero();
    float[] t = gaussian(r, 5);
    ok(
        http.put(
            "/collections/vf/points/vectors?wait=true",
            "{\"points\": [{\"id\": 3, \"vector\": {\"text\": " + SparseVectorsIT.vec(t) + "}}]}"));
    WANT.get(3L).put("text", t);
    checkAll("after writing the recreated text");

    // the first declared vector (the graph's) is retired: gone from every request
    ok(http.delete("/collections/vf/vectors/image"));
    WANT.values().forEach(v -> v.remove("image"));
    assertThat(names()).containsExactly("extra", "text");
    checkAll("after deleting image");
    Http.Response noDefault =
        http.post("/collections/vf/points/query", "{\"query\": [1, 2, 3, 4]}");
    assertThat(noDefault.status()).isEqualTo(400);
    assertThat(noDefault.error()).isEqualTo("Wrong input: Not existing vector name error: ");
    Http.Response image =
        http.post(
            "/collections/vf/points/query", "{\"query\": [1, 2, 3, 4], \"using\": \"image\"}");
    assertThat(image.error()).isEqualTo("Wrong input: Not existing vector name error: image");
    ok(
        http.put(
            "/collections/vf/vectors/image", "{\"dense\": {\"size\": 2, \"distance\": \"Dot\"}}"));
    assertThat(names()).containsExactly("extra", "text", "image");
    checkAll("after recreating image");
    ok(
        http.put(
            "/collections/vf/points?wait=true",
            "{\"points\": [{\"id\": 31, \"vector\": {\"image\": [1, 2]}}]}"));
    WANT.put(31L, new HashMap<>(Map.of("image", new float[] {1, 2})));
    assertThat(
            http.post(
                    "/collections/vf/points/query",
                    "{\"query\": [1, 1], \"using\": \"image\", \"limit\": 5}")
                .result()
                .get("points")
                .size())
        .isEqualTo(1);

    // the WAL (written before the deletes) replayed after a restart gives the same
    server.restart();
    assertThat(names()).containsExactly("extra", "text", "image");
    checkAll("replayed, restarted");
    // sealed, restarted
    ok(http.post("/collections/vf/flush", "{}"));
    awaitGreen();
    server.restart();
    checkAll("sealed, restarted");
    // a field deleted and recreated over sealed segments, then a compaction that merges them
    ok(http.delete("/collections/vf/vectors/extra"));
    ok(
        http.put(
            "/collections/vf/vectors/extra", "{\"dense\": {\"size\": 2, \"distance\": \"Dot\"}}"));
    WANT.values().forEach(v -> v.remove("extra"));
    checkAll("extra recreated over sealed segments");
    ok(http.post("/collections/vf/compact?force=true", "{}"));
    awaitGreen();
    checkAll("compacted");
    server.restart();
    checkAll("compacted, restarted");
  }

  private void refusals() {
    Http.Response zero =
        http.put("/collections/vf/vectors/z", "{\"dense\": {\"size\": 0, \"distance\": \"Dot\"}}");
    assertThat(zero.status()).isEqualTo(422);
    assertThat(zero.error()).contains("dense.size");
    Http.Response huge =
        http.put(
            "/collections/vf/vectors/z", "{\"dense\": {\"size\": 65537, \"distance\": \"Dot\"}}");
    assertThat(huge.status()).isEqualTo(422);
    Http.Response big =
        http.put(
            "/collections/vf/vectors/z", "{\"dense\": {\"size\": 20000, \"distance\": \"Dot\"}}");
    assertThat(big.status()).isEqualTo(400);
    assertThat(big.error()).contains("dense.size").contains("16000");
    Http.Response hnsw =
        http.put(
            "/collections/vf/vectors/z",
            "{\"dense\": {\"size\": 2, \"distance\": \"Dot\", \"hnsw_config\": {\"m\": 16,"
                + " \"on_disk\": true}}}");
    assertThat(hnsw.status()).isEqualTo(400);
    assertThat(hnsw.error()).contains("dense.hnsw_config.on_disk");
    Http.Response sparse = http.put("/collections/vf/vectors/z", "{\"sparse\": {}}");
    assertThat(sparse.status()).isEqualTo(400);
    assertThat(
            http.put(
                    "/collections/nope/vectors/z",
                    "{\"dense\": {\"size\": 2, \"distance\": \"Dot\"}}")
                .status())
        .isEqualTo(404);
    assertThat(http.delete("/collections/nope/vectors/z").status()).isEqualTo(404);
    assertThat(names()).containsExactly("image", "text", "extra");
  }

  private static void awaitGreen() {
    Await.until(
        Duration.ofSeconds(120),
        "vf is green",
        () -> http.get("/collections/vf").result().path("status").asString().equals("green"));
  }

  private static List<String> names() {
    return http
        .get("/collections/vf")
        .result()
        .at("/config/params/vectors")
        .propertyNames()
        .stream()
        .toList();
  }

  /** Every point, scrolled with its vectors, shows exactly what {@link #WANT} says. */
  private static void checkAll(String when) {
    JsonNode pts =
        http.post("/collections/vf/points/scroll", "{\"limit\": 100, \"with_vector\": true}")
            .result()
            .get("points");
    assertThat(pts.size()).as(when).isEqualTo(WANT.size());
    for (JsonNode p : pts) {
      long id = p.get("id").longValue();
      Map<String, float[]> want = WANT.get(id);
      JsonNode got = p.get("vector");
      assertThat(got.propertyNames())
          .as(when + ", point " + id)
          .containsExactlyInAnyOrderElementsOf(want.keySet());
      want.forEach(
          (name, v) ->
              assertThat(got.get(name).toString())
                  .as(when + ", point " + id + ", " + name)
                  .isEqualTo(SparseVectorsIT.vec(v)));
    }
  }

  private static long bestDot(String field, float[] q) {
    long best = -1;
    double score = Double.NEGATIVE_INFINITY;
    for (Map.Entry<Long, Map<String, float[]>> e : WANT.entrySet()) {
      float[] v = e.getValue().get(field);
      if (v != null) {
        double s = 0;
        for (int i = 0; i < q.length; i++) {
          s += q[i] * v[i];
        }
        if (s > score) {
          score = s;
          best = e.getKey();
        }
      }
    }
    return best;
  }

  private static long count(String filter) {
    return http.post("/collections/vf/points/count", "{\"filter\": " + filter + "}")
        .result()
        .get("count")
        .longValue();
  }

  private static String vectors(Map<String, float[]> v) {
    StringBuilder sb = new StringBuilder("{");
    v.forEach(
        (name, x) ->
            sb.append(sb.length() == 1 ? "" : ",")
                .append('"')
                .append(name)
                .append("\": ")
                .append(SparseVectorsIT.vec(x)));
    return sb.append('}').toString();
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
