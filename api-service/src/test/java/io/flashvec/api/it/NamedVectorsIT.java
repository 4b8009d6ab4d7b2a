package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's named dense vectors against a real server: a collection of one named vector (the graph's
 * vector with a name) and one of two named vectors of different sizes and metrics plus a sparse
 * vector, as Qdrant's {@code multivec_collection_setup} creates them (the second one with {@code
 * on_disk: true}: its sealed vectors stay in the mapped file). Points may lack any vector. Searches
 * of either dense vector ({@code points/query} with {@code using}, the legacy named search, a
 * recommend) equal a brute force; reads show Qdrant's shapes by name; {@code has_vector}, {@code
 * update_vectors} and {@code delete_vectors} work by name; unknown names get Qdrant's error; all of
 * it holds after a restart, from a sealed segment and from the WAL.
 */
@ExtendWith(TestSeeds.Reporter.class)
class NamedVectorsIT extends OneServerPerClass {

  /** What the two-vector collection should hold, by id. */
  static final Map<Long, float[]> IMAGE = new TreeMap<>();

  static final Map<Long, float[]> TEXT = new TreeMap<>();
  static final Map<Long, TreeMap<Long, Float>> SPARSE = new TreeMap<>();
  static final Set<Long> IDS = new TreeSet<>();

  @Test
  void oneAndTwoNamedVectorsEndToEnd() {
    Random r = TestSeeds.random("NamedVectorsIT");
    // one named vector: the primary vector with a name
    ok(
        http.put(
            "/collections/one",
            "{\"vectors\": {\"text\": {\"size\": 3, \"distance\": \"Dot\"}},"
                + " \"sparse_vectors\": {\"sp\": {}}}"));
    assertThat(http.get("/collections/one").result().at("/config/params/vectors").toString())
        .isEqualTo("{\"text\":{\"size\":3,\"distance\":\"Dot\",\"on_disk\":true}}");
    ok(
        http.put(
            "/collections/one/points?wait=true",
            "{\"points\": [{\"id\": 1, \"vector\": {\"text\": [1, 0, 0]}}, {\"id\": 2, \"vector\":"
                + " {\"text\": [0, 2, 0], \"sp\": {\"indices\": [7], \"values\": [1]}}},"
                + " {\"id\": 3, \"vector\": {}}]}"));
    Http.Response unnamed =
        http.put(
            "/collections/one/points?wait=true",
            "{\"points\": [{\"id\": 4, \"vector\": [1, 2, 3]}]}");
    assertThat(unnamed.status()).isEqualTo(400);
    assertThat(unnamed.error()).isEqualTo("Wrong input: Not existing vector name error: ");
    JsonNode hits =
        http.post(
                "/collections/one/points/query",
                "{\"query\": [0, 1, 0], \"using\": \"text\", \"with_vector\": true}")
            .result()
            .get("points");
    assertThat(hits.get(0).get("id").longValue()).isEqualTo(2);
    assertThat(hits.get(0).get("vector").toString())
        .isEqualTo("{\"text\":[0.0,2.0,0.0],\"sp\":{\"indices\":[7],\"values\":[1.0]}}");
    assertThat(http.get("/collections/one/points/1").result().get("vector").toString())
        .isEqualTo("{\"text\":[1.0,0.0,0.0]}");
    assertThat(http.get("/collections/one/points/3").result().get("vector").toString())
        .isEqualTo("{}");
    assertThat(countIn("one", "{\"must\": [{\"has_vector\": \"text\"}]}")).isEqualTo(2);

    // two named vectors and a sparse one: the first declared is the graph's
    ok(
        http.put(
            "/collections/c",
            "{\"vectors\": {\"image\": {\"size\": 4, \"distance\": \"Dot\", \"on_disk\": false},"
                + " \"text\": {\"size\": 3, \"distance\": \"Euclid\", \"on_disk\": true,"
                + " \"hnsw_config\": {\"m\": 0}}}, \"sparse_vectors\": {\"sp\": {}}}"));
    JsonNode vectors = http.get("/collections/c").result().at("/config/params/vectors");
    assertThat(vectors.propertyNames()).containsExactly("image", "text");
    assertThat(vectors.at("/text/on_disk").asBoolean()).isTrue();
    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 80; id++) {
      sb.append(id == 1 ? "" : ",").append("{\"id\": ").append(id).append(", \"vector\": {");
      List<String> parts = new ArrayList<>();
      if (r.nextInt(4) != 0) {
        float[] v = gaussian(r, 4);
        IMAGE.put(id, v);
        parts.add("\"image\": " + SparseVectorsIT.vec(v));
      }
      if (r.nextInt(4) != 0) {
        float[] v = gaussian(r, 3);
        TEXT.put(id, v);
        parts.add("\"text\": " + SparseVectorsIT.vec(v));
      }
      if (r.nextInt(3) == 0) {
        TreeMap<Long, Float> s = new TreeMap<>(Map.of((long) r.nextInt(10), 1f));
        SPARSE.put(id, s);
        parts.add("\"sp\": " + SparseVectorsIT.sparse(s));
      }
      IDS.add(id);
      sb.append(String.join(", ", parts)).append("}, \"payload\": {\"n\": ").append(id);
      sb.append("}}");
    }
    ok(http.put("/collections/c/points?wait=true", sb.append("]}").toString()));
    // the columnar form by name
    ok(
        http.put(
            "/collections/c/points?wait=true",
            "{\"batch\": {\"ids\": [90, 91], \"vectors\": {\"text\": [[1, 2, 3], [3, 2, 1]]}}}"));
    TEXT.put(90L, new float[] {1, 2, 3});
    TEXT.put(91L, new float[] {3, 2, 1});
    IDS.addAll(List.of(90L, 91L));
    checkAll(r, "fresh");

    // errors, with Qdrant's texts
    for (String body :
        List.of(
            "{\"query\": [1, 2, 3], \"using\": \"xyz\"}",
            "{\"query\": [1, 2, 3, 4]}",
            "{\"query\": [1, 2, 3], \"with_vector\": [\"xyz\"], \"using\": \"text\"}")) {
      Http.Response bad = http.post("/collections/c/points/query", body);
      assertThat(bad.status()).as(body).isEqualTo(400);
      assertThat(bad.error()).as(body).startsWith("Wrong input: Not existing vector name error: ");
    }
    Http.Response wrongSize =
        http.put(
            "/collections/c/points?wait=true",
            "{\"points\": [{\"id\": 5, \"vector\": {\"text\": [1, 2]}}]}");
    assertThat(wrongSize.status()).isEqualTo(400);
    assertThat(wrongSize.error()).contains("expected dim: 3, got 2");
    // a second vector's graph is held in memory: its hnsw_config cannot put it on disk
    Http.Response graphOnDisk =
        http.put(
            "/collections/refused",
            "{\"vectors\": {\"a\": {\"size\": 2, \"distance\": \"Dot\"}, \"b\": {\"size\": 2,"
                + " \"distance\": \"Dot\", \"hnsw_config\": {\"m\": 16, \"on_disk\": true}}}}");
    assertThat(graphOnDisk.status()).isEqualTo(400);
    assertThat(graphOnDisk.error()).contains("vectors.b.hnsw_config.on_disk").contains("memory");

    // update_vectors and delete_vectors by name
    ok(
        http.put(
            "/collections/c/points/vectors?wait=true",
            "{\"points\": [{\"id\": 1, \"vector\": {\"text\": [0.5, 0.5, 0.5]}}]}"));
    TEXT.put(1L, new float[] {0.5f, 0.5f, 0.5f});
    long victim = IMAGE.keySet().iterator().next();
    ok(
        http.post(
            "/collections/c/points/vectors/delete?wait=true",
            "{\"points\": [" + victim + "], \"vector\": [\"image\", \"text\"]}"));
    IMAGE.remove(victim);
    TEXT.remove(victim);
    // two updates of one point in one request: both applied
    ok(
        http.put(
            "/collections/c/points/vectors?wait=true",
            "{\"points\": [{\"id\": 2, \"vector\": {\"text\": [1, 1, 1]}}, {\"id\": 2,"
                + " \"vector\": {\"image\": [2, 2, 2, 2]}}]}"));
    TEXT.put(2L, new float[] {1, 1, 1});
    IMAGE.put(2L, new float[] {2, 2, 2, 2});
    // a missing point is Qdrant's 404, whatever else the request has
    Http.Response missing =
        http.put(
            "/collections/c/points/vectors?wait=true",
            "{\"points\": [{\"id\": 2, \"vector\": {\"text\": [1, 1, 1]}, \"payload\": {}},"
                + " {\"id\": 4242, \"vector\": {\"text\": [1, 1, 1]}}]}");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.error()).isEqualTo("Not found: No point with id 4242 found");
    Http.Response none =
        http.put(
            "/collections/c/points/vectors?wait=true",
            "{\"points\": [{\"id\": 2, \"vector\": {}}]}");
    assertThat(none.status()).isEqualTo(422);
    // delete_vectors by filter: the image of every point from id 70 on
    ok(
        http.post(
            "/collections/c/points/vectors/delete?wait=true",
            "{\"filter\": {\"must\": [{\"key\": \"n\", \"range\": {\"gte\": 70}}]},"
                + " \"vector\": [\"image\"]}"));
    IMAGE.keySet().removeIf(id -> id >= 70 && id <= 80);
    checkAll(r, "after vector updates");

    // sealed: a flush writes the segment with its vectors file, then a restart opens it
    ok(http.post("/collections/c/flush", "{}"));
    Await.until(
        Duration.ofSeconds(120),
        "the collection is green",
        () -> http.get("/collections/c").result().path("status").asString().equals("green"));
    server.restart();
    checkAll(r, "sealed, restarted");
    assertThat(http.get("/collections/one/points/2").result().get("vector").get("text").toString())
        .isEqualTo("[0.0,2.0,0.0]");
    // replayed: new writes in the WAL only
    ok(
        http.put(
            "/collections/c/points?wait=true",
            "{\"points\": [{\"id\": 95, \"vector\": {\"text\": [9, 9, 9]}}]}"));
    TEXT.put(95L, new float[] {9, 9, 9});
    IDS.add(95L);
    server.restart();
    checkAll(r, "replayed, restarted");
  }

  private void checkAll(Random r, String when) {
    JsonNode pts =
        http.post("/collections/c/points/scroll", "{\"limit\": 1000, \"with_vector\": true}")
            .result()
            .get("points");
    assertThat(pts.size()).as(when).isEqualTo(IDS.size());
    for (JsonNode p : pts) {
      long id = p.get("id").longValue();
      JsonNode v = p.get("vector");
      String what = when + ", point " + id + ": " + v;
      assertThat(v.isObject()).as(what).isTrue();
      assertThat(v.has("image")).as(what).isEqualTo(IMAGE.containsKey(id));
      assertThat(v.has("text")).as(what).isEqualTo(TEXT.containsKey(id));
      assertThat(v.has("sp")).as(what).isEqualTo(SPARSE.containsKey(id));
      if (IMAGE.containsKey(id)) {
        assertThat(v.get("image").toString())
            .as(what)
            .isEqualTo(SparseVectorsIT.vec(IMAGE.get(id)));
      }
      if (TEXT.containsKey(id)) {
        assertThat(v.get("text").toString()).as(what).isEqualTo(SparseVectorsIT.vec(TEXT.get(id)));
      }
    }
    assertThat(count("{\"must\": [{\"has_vector\": \"image\"}]}")).as(when).isEqualTo(IMAGE.size());
    assertThat(count("{\"must\": [{\"has_vector\": \"text\"}]}")).as(when).isEqualTo(TEXT.size());
    // searches of each dense vector, every request shape, against brute force
    for (int q = 0; q < 3; q++) {
      float[] image = gaussian(r, 4);
      float[] text = gaussian(r, 3);
      String filter = "{\"must_not\": [{\"has_vector\": \"image\"}]}";
      List<JsonNode> imageHits =
          List.of(
              http.post(
                      "/collections/c/points/query",
                      "{\"query\": "
                          + SparseVectorsIT.vec(image)
                          + ", \"using\": \"image\", \"limit\": 100, \"params\": {\"exact\": true}}")
                  .result()
                  .get("points"),
              http.post(
                      "/collections/c/points/search",
                      "{\"vector\": {\"name\": \"image\", \"vector\": "
                          + SparseVectorsIT.vec(image)
                          + "}, \"limit\": 100, \"params\": {\"exact\": true}}")
                  .result());
      for (JsonNode hits : imageHits) {
        checkHits(when + ", image", hits, IMAGE, image, false, id -> true);
      }
      List<JsonNode> textHits =
          List.of(
              http.post(
                      "/collections/c/points/query",
                      "{\"query\": "
                          + SparseVectorsIT.vec(text)
                          + ", \"using\": \"text\", \"limit\": 100}")
                  .result()
                  .get("points"),
              http.post(
                      "/collections/c/points/search",
                      "{\"vector\": {\"name\": \"text\", \"vector\": "
                          + SparseVectorsIT.vec(text)
                          + "}, \"limit\": 100}")
                  .result());
      for (JsonNode hits : textHits) {
        checkHits(when + ", text", hits, TEXT, text, true, id -> true);
      }
      JsonNode filtered =
          http.post(
                  "/collections/c/points/query",
                  "{\"query\": "
                      + SparseVectorsIT.vec(text)
                      + ", \"using\": \"text\", \"limit\": 100, \"filter\": "
                      + filter
                      + "}")
              .result()
              .get("points");
      checkHits(
          when + ", text without image", filtered, TEXT, text, true, id -> !IMAGE.containsKey(id));
    }
    // a recommend by id on the second vector: the example's own vector, the example left out
    long example = TEXT.keySet().iterator().next();
    JsonNode rec =
        http.post(
                "/collections/c/points/query",
                "{\"query\": {\"recommend\": {\"positive\": ["
                    + example
                    + "]}}, \"using\": \"text\", \"limit\": 100}")
            .result()
            .get("points");
    assertThat(rec).as(when).hasSize(TEXT.size() - 1);
    for (JsonNode h : rec) {
      assertThat(h.get("id").longValue()).as(when).isNotEqualTo(example);
    }
    // lookup_from naming a vector the other collection lacks: as Qdrant, an example id missing
    // there is its 404 first, else the unknown vector's 400
    for (long id : new long[] {example, 1_000_000L}) {
      Http.Response bad =
          http.post(
              "/collections/c/points/query",
              "{\"query\": {\"recommend\": {\"positive\": ["
                  + id
                  + "]}}, \"using\": \"text\", \"lookup_from\": {\"collection\": \"c\","
                  + " \"vector\": \"nope\"}}");
      assertThat(bad.status()).as(when + ", lookup id " + id).isEqualTo(id == example ? 400 : 404);
    }
  }

  /**
   * Manhattan vectors, which no graph indexes: an unnamed one makes a collection searched exactly
   * (as Qdrant's unnamed vector, points given and shown as bare lists), a named one is a field
   * beside a Cosine graph; both rank by the L1 distance, lower first, with thresholds, before and
   * after a seal and a restart.
   */
  @Test
  void manhattanVectorsAreSearchedExactly() {
    Random r = TestSeeds.random("NamedVectorsIT.manhattan");
    ok(http.put("/collections/l1", "{\"vectors\": {\"size\": 5, \"distance\": \"Manhattan\"}}"));
    ok(
        http.put(
            "/collections/l1named",
            "{\"vectors\": {\"l1\": {\"size\": 5, \"distance\": \"Manhattan\"}, \"image\":"
                + " {\"size\": 3, \"distance\": \"Cosine\"}}}"));
    assertThat(
            http.get("/collections/l1").result().at("/config/params/vectors/distance").asString())
        .isEqualTo("Manhattan");
    Map<Long, float[]> stored = new TreeMap<>();
    StringBuilder bare = new StringBuilder("{\"points\": [");
    StringBuilder named = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 40; id++) {
      float[] v = gaussian(r, 5);
      stored.put(id, v);
      String sep = id == 1 ? "" : ",";
      bare.append(sep).append("{\"id\": ").append(id).append(", \"vector\": ");
      bare.append(SparseVectorsIT.vec(v)).append('}');
      named.append(sep).append("{\"id\": ").append(id).append(", \"vector\": {\"l1\": ");
      named.append(SparseVectorsIT.vec(v)).append(", \"image\": ");
      named.append(SparseVectorsIT.vec(gaussian(r, 3))).append("}}");
    }
    ok(http.put("/collections/l1/points?wait=true", bare.append("]}").toString()));
    ok(http.put("/collections/l1named/points?wait=true", named.append("]}").toString()));
    for (int round = 0; round < 2; round++) {
      String when = round == 0 ? "from the WAL" : "sealed, restarted";
      JsonNode got = http.get("/collections/l1/points/3").result().get("vector");
      assertThat(got.isArray()).as(when + ": " + got).isTrue();
      assertThat(got.get(0).floatValue()).as(when).isEqualTo(stored.get(3L)[0]);
      float[] q = gaussian(r, 5);
      List<Map.Entry<Long, Float>> want = new ArrayList<>();
      for (Map.Entry<Long, float[]> e : stored.entrySet()) {
        float d = 0;
        for (int i = 0; i < 5; i++) {
          d += Math.abs(q[i] - e.getValue()[i]);
        }
        want.add(Map.entry(e.getKey(), d));
      }
      want.sort(Map.Entry.comparingByValue());
      float threshold = (want.get(9).getValue() + want.get(10).getValue()) / 2;
      for (String query :
          List.of(
              "/collections/l1/points/query {\"query\": " + SparseVectorsIT.vec(q),
              "/collections/l1named/points/query {\"using\": \"l1\", \"query\": "
                  + SparseVectorsIT.vec(q))) {
        String[] at = query.split(" ", 2);
        JsonNode hits =
            http.post(at[0], at[1] + ", \"limit\": 40, \"score_threshold\": " + threshold + "}")
                .result()
                .get("points");
        assertThat(hits).as(when + " " + at[0]).hasSize(10);
        for (int i = 0; i < hits.size(); i++) {
          assertThat(hits.get(i).get("id").longValue())
              .as("%s %s rank %d", when, at[0], i)
              .isEqualTo(want.get(i).getKey());
          assertThat(hits.get(i).get("score").floatValue())
              .isCloseTo(want.get(i).getValue(), within(1e-4f));
        }
      }
      for (String c : List.of("l1", "l1named")) {
        ok(http.post("/collections/" + c + "/flush", "{}"));
        Await.until(
            Duration.ofSeconds(120),
            c + " is green",
            () -> http.get("/collections/" + c).result().path("status").asString().equals("green"));
      }
      server.restart();
    }
  }

  private static void checkHits(
      String what,
      JsonNode hits,
      Map<Long, float[]> stored,
      float[] query,
      boolean euclid,
      java.util.function.LongPredicate accepted) {
    List<Map.Entry<Long, Float>> want = new ArrayList<>();
    for (Map.Entry<Long, float[]> e : stored.entrySet()) {
      if (accepted.test(e.getKey())) {
        want.add(Map.entry(e.getKey(), score(query, e.getValue(), euclid)));
      }
    }
    want.sort(
        (a, b) ->
            euclid
                ? Float.compare(a.getValue(), b.getValue())
                : Float.compare(b.getValue(), a.getValue()));
    assertThat(hits).as(what).hasSize(want.size());
    for (int i = 0; i < hits.size(); i++) {
      long id = hits.get(i).get("id").longValue();
      float s = hits.get(i).get("score").floatValue();
      assertThat(s).as(what + ", rank " + i).isCloseTo(want.get(i).getValue(), within(1e-4f));
      assertThat(stored).as(what).containsKey(id);
      assertThat(score(query, stored.get(id), euclid)).as(what).isCloseTo(s, within(1e-4f));
    }
  }

  private static float score(float[] q, float[] v, boolean euclid) {
    double s = 0;
    for (int i = 0; i < q.length; i++) {
      s += euclid ? (q[i] - v[i]) * (q[i] - v[i]) : q[i] * v[i];
    }
    return (float) (euclid ? Math.sqrt(s) : s);
  }

  private static float[] gaussian(Random r, int dim) {
    float[] v = new float[dim];
    for (int i = 0; i < dim; i++) {
      v[i] = (float) r.nextGaussian();
    }
    return v;
  }

  private static long count(String filter) {
    return countIn("c", filter);
  }

  private static long countIn(String collection, String filter) {
    return http.post("/collections/" + collection + "/points/count", "{\"filter\": " + filter + "}")
        .result()
        .get("count")
        .longValue();
  }

  private static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }
}
