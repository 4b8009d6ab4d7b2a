package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's most common fixture against a real server: an unnamed dense vector plus the sparse
 * vector {@code sparse-text}, with points that have only the sparse one. Dense searches never
 * return those; sparse searches ({@code points/query} with {@code using}, the legacy named search)
 * equal a brute force of the dot product; hybrid RRF fuses both; reads show Qdrant's vector shapes;
 * {@code has_vector}, {@code update_vectors} and {@code delete_vectors} work on both kinds; and all
 * of it holds after a restart, from a sealed segment and from the WAL.
 */
@ExtendWith(TestSeeds.Reporter.class)
class SparseVectorsIT extends OneServerPerClass {

  /** What the collection should hold: dense vectors and sparse ones (index → value) by id. */
  static final Map<Long, float[]> DENSE = new TreeMap<>();

  static final Map<Long, TreeMap<Long, Float>> SPARSE = new TreeMap<>();

  /** Points whose vectors were deleted: still points, whatever vectors they have left. */
  static final java.util.Set<Long> LEFT = new java.util.TreeSet<>();

  @Test
  void denseAndSparseVectorsEndToEnd() {
    Random r = TestSeeds.random("SparseVectorsIT");
    ok(
        http.put(
            "/collections/c",
            "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\", \"on_disk\": false},"
                + " \"sparse_vectors\": {\"sparse-text\": {}}}"));
    assertThat(http.get("/collections/c").result().at("/config/params/sparse_vectors").toString())
        .isEqualTo("{\"sparse-text\":{}}");
    // the fixture's points, then more of each kind
    StringBuilder sb = new StringBuilder("{\"points\": [");
    sb.append(
        "{\"id\": 1, \"vector\": [0.05, 0.61, 0.76, 0.74], \"payload\": {\"city\": \"Berlin\"}},");
    DENSE.put(1L, new float[] {0.05f, 0.61f, 0.76f, 0.74f});
    sb.append(
        "{\"id\": 9, \"vector\": {\"sparse-text\": {\"indices\": [66, 12], \"values\": [0.5,"
            + " 0.5]}}},");
    SPARSE.put(9L, new TreeMap<>(Map.of(66L, 0.5f, 12L, 0.5f)));
    sb.append(
        "{\"id\": 10, \"vector\": {\"sparse-text\": {\"indices\": [1, 2, 3], \"values\": [0.1,"
            + " 0.2, 0.3]}}, \"payload\": {\"city\": \"Rome\"}}");
    SPARSE.put(10L, new TreeMap<>(Map.of(1L, 0.1f, 2L, 0.2f, 3L, 0.3f)));
    for (long id = 11; id <= 60; id++) {
      boolean dense = r.nextInt(4) != 0;
      boolean sparse = !dense || r.nextBoolean();
      sb.append(",{\"id\": ").append(id).append(", \"vector\": {");
      if (dense) {
        float[] v = new float[4];
        for (int i = 0; i < 4; i++) {
          v[i] = (float) r.nextGaussian();
        }
        DENSE.put(id, v);
        sb.append("\"\": ").append(vec(v)).append(sparse ? "," : "");
      }
      if (sparse) {
        TreeMap<Long, Float> s = new TreeMap<>();
        int nnz = 1 + r.nextInt(5);
        while (s.size() < nnz) {
          s.put((long) r.nextInt(20), (float) r.nextGaussian());
        }
        SPARSE.put(id, s);
        sb.append("\"sparse-text\": ").append(sparse(s));
      }
      sb.append("}, \"payload\": {\"n\": ").append(id).append("}}");
    }
    ok(http.put("/collections/c/points?wait=true", sb.append("]}").toString()));
    checkAll(r, "fresh");

    // reads: Qdrant's shapes
    JsonNode got =
        http.post("/collections/c/points", "{\"ids\": [1, 9], \"with_vector\": true}").result();
    assertThat(got.get(0).get("vector").isArray()).as(got.toString()).isTrue();
    assertThat(got.get(1).get("vector").toString())
        .isEqualTo("{\"sparse-text\":{\"indices\":[12,66],\"values\":[0.5,0.5]}}");
    JsonNode onlySparse =
        http.post("/collections/c/points", "{\"ids\": [1], \"with_vector\": [\"sparse-text\"]}")
            .result();
    assertThat(onlySparse.get(0).get("vector").toString()).isEqualTo("{}");

    // a point's own sparse vector as the query: the point itself is no result
    Map<Long, Float> want = bruteForce(SPARSE.get(10L));
    want.remove(10L);
    JsonNode byId =
        http.post(
                "/collections/c/points/query",
                "{\"query\": 10, \"using\": \"sparse-text\", \"limit\": 100}")
            .result()
            .get("points");
    assertThat(byId).hasSize(want.size());
    for (JsonNode h : byId) {
      assertThat(h.get("score").floatValue())
          .as("id %s", h.get("id"))
          .isCloseTo(want.get(h.get("id").longValue()), within(1e-5f));
    }
    assertThat(
            http.post("/collections/c/points/query", "{\"query\": 1, \"using\": \"sparse-text\"}")
                .error())
        .contains("point 1 has no vector sparse-text");
    assertThat(
            http.post("/collections/c/points/query", "{\"query\": 999, \"using\": \"sparse-text\"}")
                .status())
        .isEqualTo(404);

    // errors, with Qdrant's texts
    Http.Response unknown =
        http.post(
            "/collections/c/points/query",
            "{\"query\": {\"indices\": [1], \"values\": [1]}, \"using\": \"nope\"}");
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.error()).isEqualTo("Wrong input: Not existing vector name error: nope");
    Http.Response dup =
        http.put(
            "/collections/c/points?wait=true",
            "{\"points\": [{\"id\": 5, \"vector\": {\"sparse-text\": {\"indices\": [1, 1],"
                + " \"values\": [1, 2]}}}]}");
    assertThat(dup.error())
        .contains("points[0].vector.?.indices: Validation error: must be unique");
    Http.Response idf =
        http.put(
            "/collections/idf",
            "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\"}, \"sparse_vectors\": {\"s\":"
                + " {\"modifier\": \"idf\"}}}");
    ok(idf); // IDF weighting is tested by SparseOnlyCollectionsIT
    ok(http.delete("/collections/idf"));

    // update_vectors and delete_vectors, of both kinds
    ok(
        http.put(
            "/collections/c/points/vectors?wait=true",
            "{\"points\": [{\"id\": 1, \"vector\": {\"sparse-text\": {\"indices\": [12],"
                + " \"values\": [3]}}}]}"));
    SPARSE.put(1L, new TreeMap<>(Map.of(12L, 3f)));
    long denseVictim = DENSE.keySet().stream().filter(id -> id > 10).findFirst().orElseThrow();
    ok(
        http.post(
            "/collections/c/points/vectors/delete?wait=true",
            "{\"points\": [" + denseVictim + "], \"vector\": [\"\"]}"));
    DENSE.remove(denseVictim);
    LEFT.add(denseVictim); // a point still, with or without a sparse vector
    ok(
        http.post(
            "/collections/c/points/vectors/delete?wait=true",
            "{\"points\": [9], \"vector\": [\"sparse-text\"]}"));
    SPARSE.remove(9L);
    assertThat(http.get("/collections/c/points/9").result().get("vector").toString())
        .isEqualTo("{}");
    Http.Response missing =
        http.post(
            "/collections/c/points/vectors/delete?wait=true",
            "{\"points\": [777], \"vector\": [\"sparse-text\"]}");
    assertThat(missing.status()).isEqualTo(404);
    checkAll(r, "after vector updates");

    // sealed: a flush writes the segment with its vectors file, then a restart opens it
    ok(http.post("/collections/c/flush", "{}"));
    Await.until(
        Duration.ofSeconds(120),
        "the collection is green with a sealed segment",
        () -> {
          JsonNode info = http.get("/collections/c").result();
          return info.path("status").asString().equals("green")
              && info.path("segments_count").asInt() > 0;
        });
    server.restart();
    checkAll(r, "sealed, restarted");
    // replayed: new writes in the WAL only
    ok(
        http.put(
            "/collections/c/points?wait=true",
            "{\"points\": [{\"id\": 70, \"vector\": {\"sparse-text\": {\"indices\": [2, 3],"
                + " \"values\": [1, -1]}}}, {\"id\": 71, \"vector\": [1, 0, 0, 1]}]}"));
    SPARSE.put(70L, new TreeMap<>(Map.of(2L, 1f, 3L, -1f)));
    DENSE.put(71L, new float[] {1, 0, 0, 1});
    server.restart();
    checkAll(r, "replayed, restarted");
  }

  private void checkAll(Random r, String when) {
    // reads
    java.util.Set<Long> all = new java.util.TreeSet<>(DENSE.keySet());
    all.addAll(SPARSE.keySet());
    all.add(9L); // without any vector now, but still a point
    all.addAll(LEFT);
    JsonNode pts =
        http.post(
                "/collections/c/points/scroll",
                "{\"limit\": 1000, \"with_vector\": true, \"with_payload\": false}")
            .result()
            .get("points");
    assertThat(pts.size()).as(when).isEqualTo(all.size());
    for (JsonNode p : pts) {
      long id = p.get("id").longValue();
      JsonNode v = p.get("vector");
      float[] dense = DENSE.get(id);
      TreeMap<Long, Float> sparse = SPARSE.get(id);
      String what = when + ", point " + id + ": " + v;
      if (sparse == null && dense != null) {
        assertThat(v.isArray()).as(what).isTrue();
        assertThat(v.toString()).as(what).isEqualTo(vec(dense));
      } else {
        assertThat(v.isObject()).as(what).isTrue();
        assertThat(v.has("")).as(what).isEqualTo(dense != null);
        if (dense != null) {
          assertThat(v.get("").toString()).as(what).isEqualTo(vec(dense));
        }
        if (sparse != null) {
          assertThat(v.get("sparse-text").toString()).as(what).isEqualTo(sparse(sparse));
        }
      }
    }
    // has_vector
    assertThat(count("{\"must\": [{\"has_vector\": \"\"}]}")).as(when).isEqualTo(DENSE.size());
    assertThat(count("{\"must\": [{\"has_vector\": \"sparse-text\"}]}"))
        .as(when)
        .isEqualTo(SPARSE.size());
    // dense searches: only points with the dense vector, as brute force
    for (int q = 0; q < 3; q++) {
      float[] query = new float[4];
      for (int i = 0; i < 4; i++) {
        query[i] = (float) r.nextGaussian();
      }
      JsonNode hits =
          http.post(
                  "/collections/c/points/search",
                  "{\"vector\": " + vec(query) + ", \"limit\": 100, \"params\": {\"exact\": true}}")
              .result();
      assertThat(hits).as(when).hasSize(DENSE.size());
      for (JsonNode h : hits) {
        long id = h.get("id").longValue();
        assertThat(DENSE).as(when + ", dense hit " + id).containsKey(id);
        assertThat(h.get("score").floatValue())
            .isCloseTo(dot(query, DENSE.get(id)), org.assertj.core.api.Assertions.within(1e-4f));
      }
    }
    // sparse searches: both request shapes, against brute force
    for (int q = 0; q < 4; q++) {
      TreeMap<Long, Float> query = new TreeMap<>();
      while (query.size() < 3) {
        query.put((long) r.nextInt(20), (float) r.nextGaussian());
      }
      if (q == 0) {
        query.put(66L, 1f);
      }
      Map<Long, Float> want = bruteForce(query);
      JsonNode viaQuery =
          http.post(
                  "/collections/c/points/query",
                  "{\"query\": " + sparse(query) + ", \"using\": \"sparse-text\", \"limit\": 100}")
              .result()
              .get("points");
      JsonNode viaSearch =
          http.post(
                  "/collections/c/points/search",
                  "{\"vector\": {\"name\": \"sparse-text\", \"vector\": "
                      + sparse(query)
                      + "}, \"limit\": 100}")
              .result();
      for (JsonNode hits : List.of(viaQuery, viaSearch)) {
        Map<Long, Float> got = new LinkedHashMap<>();
        float last = Float.POSITIVE_INFINITY;
        for (JsonNode h : hits) {
          float s = h.get("score").floatValue();
          assertThat(s).as(when).isLessThanOrEqualTo(last);
          last = s;
          got.put(h.get("id").longValue(), s);
        }
        assertThat(got).as(when + ", query " + query).isEqualTo(want);
      }
    }
    // hybrid: RRF (k = 2) of a dense and a sparse prefetch
    float[] dq = {0.2f, 0.1f, 0.9f, 0.7f};
    TreeMap<Long, Float> sq = new TreeMap<>(Map.of(1L, 1f, 2L, 1f, 12L, 1f));
    JsonNode dense =
        http.post("/collections/c/points/query", "{\"query\": " + vec(dq) + ", \"limit\": 5}")
            .result()
            .get("points");
    JsonNode sparse =
        http.post(
                "/collections/c/points/query",
                "{\"query\": " + sparse(sq) + ", \"using\": \"sparse-text\", \"limit\": 5}")
            .result()
            .get("points");
    Map<Long, Double> rrf = new HashMap<>();
    for (JsonNode list : List.of(dense, sparse)) {
      for (int i = 0; i < list.size(); i++) {
        rrf.merge(list.get(i).get("id").longValue(), 1.0 / (2 + i), Double::sum);
      }
    }
    JsonNode fused =
        http.post(
                "/collections/c/points/query",
                "{\"prefetch\": [{\"query\": "
                    + vec(dq)
                    + ", \"limit\": 5}, {\"query\": "
                    + sparse(sq)
                    + ", \"using\": \"sparse-text\", \"limit\": 5}], \"query\": {\"fusion\":"
                    + " \"rrf\"}, \"limit\": 20}")
            .result()
            .get("points");
    assertThat(fused).as(when).hasSize(rrf.size());
    for (JsonNode h : fused) {
      assertThat(h.get("score").doubleValue())
          .as(when + ", fused " + h)
          .isCloseTo(
              rrf.get(h.get("id").longValue()), org.assertj.core.api.Assertions.within(1e-6));
    }
  }

  private static Map<Long, Float> bruteForce(TreeMap<Long, Float> query) {
    return dotScores(SPARSE, query);
  }

  /**
   * The exact sparse scores of {@code query} against {@code docs} (id to index to weight), best
   * first, without the points sharing no index with it: a brute force of the server's search.
   */
  static Map<Long, Float> dotScores(Map<Long, TreeMap<Long, Float>> docs, Map<Long, Float> query) {
    List<Map.Entry<Long, Float>> all = new ArrayList<>();
    for (Map.Entry<Long, TreeMap<Long, Float>> e : docs.entrySet()) {
      float s = 0f;
      for (Map.Entry<Long, Float> t : e.getValue().entrySet()) { // ascending index, as the server
        Float w = query.get(t.getKey());
        if (w != null) {
          s += w * t.getValue();
        }
      }
      if (s != 0f) {
        all.add(Map.entry(e.getKey(), s));
      }
    }
    all.sort((a, b) -> Float.compare(b.getValue(), a.getValue()));
    Map<Long, Float> out = new LinkedHashMap<>();
    all.forEach(e -> out.put(e.getKey(), e.getValue()));
    return out;
  }

  private static long count(String filter) {
    return http.post("/collections/c/points/count", "{\"filter\": " + filter + "}")
        .result()
        .get("count")
        .longValue();
  }

  private static float dot(float[] a, float[] b) {
    float s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }

  static String vec(float[] v) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < v.length; i++) {
      sb.append(i == 0 ? "" : ",").append(v[i]);
    }
    return sb.append(']').toString();
  }

  static String sparse(TreeMap<Long, Float> s) {
    StringBuilder idx = new StringBuilder();
    StringBuilder val = new StringBuilder();
    for (Map.Entry<Long, Float> e : s.entrySet()) {
      idx.append(idx.isEmpty() ? "" : ",").append(e.getKey());
      val.append(val.isEmpty() ? "" : ",").append(e.getValue());
    }
    return String.format(Locale.ROOT, "{\"indices\":[%s],\"values\":[%s]}", idx, val);
  }

  static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }
}
