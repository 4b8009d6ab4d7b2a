package io.flashvec.api.it;

import static io.flashvec.api.it.SparseVectorsIT.ok;
import static io.flashvec.api.it.SparseVectorsIT.sparse;
import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's sparse-only collections ({@code {"sparse_vectors": {"text": {}}}} without {@code
 * vectors}, or with {@code vectors: {}}) against a real server: created and described as Qdrant
 * does, sparse searches equal a brute force of the dot product with filters and deletes, requests
 * on the default (absent) vector get Qdrant's 400, a flush seals segments without a graph and the
 * collection turns green, and everything holds after a restart from sealed segments and from the
 * WAL.
 */
@ExtendWith(TestSeeds.Reporter.class)
class SparseOnlyCollectionsIT extends OneServerPerClass {

  /** What the collection should hold: sparse vectors (index → value) by id. */
  static final TreeMap<Long, TreeMap<Long, Float>> SPARSE = new TreeMap<>();

  @Test
  void sparseOnlyCollectionsEndToEnd() throws IOException {
    Random r = TestSeeds.random("SparseOnlyCollectionsIT");
    ok(http.put("/collections/s", "{\"sparse_vectors\": {\"text\": {}}}"));
    ok(http.put("/collections/e", "{\"vectors\": {}, \"sparse_vectors\": {\"text\": {}}}"));
    for (String c : List.of("s", "e")) {
      JsonNode params = http.get("/collections/" + c).result().at("/config/params");
      assertThat(params.get("vectors").toString()).as(c).isEqualTo("{}");
      assertThat(params.get("sparse_vectors").toString()).as(c).isEqualTo("{\"text\":{}}");
    }
    // neither vectors nor sparse vectors: still refused
    Http.Response none = http.put("/collections/n", "{\"vectors\": {}}");
    assertThat(none.status()).isEqualTo(400);
    assertThat(none.error()).contains("vectors must name at least one vector");

    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 80; id++) {
      TreeMap<Long, Float> s = new TreeMap<>();
      int nnz = 1 + r.nextInt(5);
      while (s.size() < nnz) {
        s.put((long) r.nextInt(25), (float) r.nextGaussian());
      }
      SPARSE.put(id, s);
      sb.append(id == 1 ? "" : ",")
          .append("{\"id\": ")
          .append(id)
          .append(", \"vector\": {\"text\": ")
          .append(sparse(s))
          .append("}, \"payload\": {\"n\": ")
          .append(id)
          .append("}}");
    }
    ok(http.put("/collections/s/points?wait=true", sb.append("]}").toString()));
    checkAll(r, "fresh");

    // the default vector does not exist: Qdrant's texts
    String names =
        "Wrong input: Collection requires specified vector name in the request,"
            + " available names: text";
    Http.Response query =
        http.post("/collections/s/points/query", "{\"query\": [0.1, 0.2], \"limit\": 3}");
    assertThat(query.status()).isEqualTo(400);
    assertThat(query.error()).isEqualTo(names);
    Http.Response search =
        http.post("/collections/s/points/search", "{\"vector\": [0.1, 0.2], \"limit\": 3}");
    assertThat(search.status()).isEqualTo(400);
    assertThat(search.error()).isEqualTo(names);
    Http.Response unnamed =
        http.put(
            "/collections/s/points?wait=true",
            "{\"points\": [{\"id\": 500, \"vector\": [0.1, 0.2]}]}");
    assertThat(unnamed.status()).isEqualTo(400);
    assertThat(unnamed.error()).isEqualTo("Wrong input: Not existing vector name error: ");
    Http.Response unknown =
        http.post(
            "/collections/s/points/query",
            "{\"query\": {\"indices\": [1], \"values\": [1]}, \"using\": \"nope\"}");
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.error()).isEqualTo("Wrong input: Not existing vector name error: nope");
    assertThat(http.get("/collections/s/points/500").status()).isEqualTo(404);

    // deletes, a vector update and a point without any vector
    ok(http.post("/collections/s/points/delete?wait=true", "{\"points\": [3, 4, 5]}"));
    SPARSE.remove(3L);
    SPARSE.remove(4L);
    SPARSE.remove(5L);
    ok(
        http.put(
            "/collections/s/points/vectors?wait=true",
            "{\"points\": [{\"id\": 7, \"vector\": {\"text\": {\"indices\": [1, 24],"
                + " \"values\": [2, -1]}}}]}"));
    SPARSE.put(7L, new TreeMap<>(Map.of(1L, 2f, 24L, -1f)));
    checkAll(r, "after deletes");

    // sealed: a flush writes segments without a graph; the collection is green
    ok(http.post("/collections/s/flush", "{}"));
    Await.until(
        Duration.ofSeconds(120),
        "the collection is green with a sealed segment",
        () -> {
          JsonNode info = http.get("/collections/s").result();
          return info.path("status").asString().equals("green")
              && info.path("segments_count").asInt() > 0
              && segmentFiles("meta.fvs") > 0;
        });
    assertThat(segmentFiles("graph.fvg")).as("no graph anywhere").isZero();
    assertThat(segmentFiles("pq.fvs")).as("no PQ codes anywhere").isZero();
    JsonNode info = http.get("/collections/s").result();
    assertThat(info.get("indexed_vectors_count").asLong()).isZero();
    assertThat(info.get("optimizer_status").asString()).isEqualTo("ok");
    server.restart();
    checkAll(r, "sealed, restarted");
    // replayed: new writes in the WAL only
    ok(
        http.put(
            "/collections/s/points?wait=true",
            "{\"points\": [{\"id\": 90, \"vector\": {\"text\": {\"indices\": [2, 3],"
                + " \"values\": [1, -1]}}, \"payload\": {\"n\": 90}}]}"));
    SPARSE.put(90L, new TreeMap<>(Map.of(2L, 1f, 3L, -1f)));
    ok(http.post("/collections/s/points/delete?wait=true", "{\"points\": [10]}"));
    SPARSE.remove(10L);
    server.restart();
    checkAll(r, "replayed, restarted");
    assertThat(http.get("/collections/s").result().at("/config/params/vectors").toString())
        .isEqualTo("{}");

    // a snapshot, recovered as another collection, holds the same points and configuration
    JsonNode snap = http.post("/collections/s/snapshots?wait=true", null).result();
    Path file =
        server.dataDir().resolve("snapshots").resolve("s").resolve(snap.get("name").asString());
    assertThat(file).exists();
    ok(http.put("/collections/copy/snapshots/recover", "{\"location\":\"" + file.toUri() + "\"}"));
    assertThat(http.get("/collections/copy").result().at("/config/params").toString())
        .contains("\"vectors\":{}", "\"sparse_vectors\":{\"text\":{}}");
    assertThat(
            http.post("/collections/copy/points/count", "{\"exact\": true}")
                .result()
                .get("count")
                .longValue())
        .isEqualTo(SPARSE.size());
  }

  @Test
  void idfWeightsTheQueryAndFollowsItsModifier() {
    Random r = TestSeeds.random("SparseOnlyCollectionsIT.idf");
    ok(http.put("/collections/idf", "{\"sparse_vectors\": {\"text\": {\"modifier\": \"idf\"}}}"));
    assertThat(http.get("/collections/idf").result().at("/config/params/sparse_vectors").toString())
        .isEqualTo("{\"text\":{\"modifier\":\"idf\"}}");
    Map<Long, TreeMap<Long, Float>> docs = new TreeMap<>();
    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 60; id++) {
      TreeMap<Long, Float> s = new TreeMap<>();
      s.put(0L, 1f); // in every point: weighs almost nothing under IDF
      int nnz = 1 + r.nextInt(4);
      while (s.size() < nnz + 1) {
        s.put(1L + r.nextInt(30), 0.5f + r.nextFloat());
      }
      docs.put(id, s);
      sb.append(id == 1 ? "" : ",")
          .append("{\"id\": ")
          .append(id)
          .append(", \"vector\": {\"text\": ")
          .append(sparse(s))
          .append("}, \"payload\": {\"n\": ")
          .append(id)
          .append("}}");
    }
    ok(http.put("/collections/idf/points?wait=true", sb.append("]}").toString()));
    ok(http.post("/collections/idf/points/delete?wait=true", "{\"points\": [1, 2]}"));
    docs.remove(1L);
    docs.remove(2L);
    for (int round = 0; round < 3; round++) {
      boolean idf = round < 2;
      for (int q = 0; q < 4; q++) {
        TreeMap<Long, Float> query = new TreeMap<>();
        query.put(0L, 3f);
        while (query.size() < 3) {
          query.put(1L + r.nextInt(30), 1f);
        }
        Map<Long, Float> want = idfBruteForce(docs, query, idf, id -> true);
        JsonNode hits =
            http.post(
                    "/collections/idf/points/query",
                    "{\"query\": " + sparse(query) + ", \"using\": \"text\", \"limit\": 100}")
                .result()
                .get("points");
        Map<Long, Float> got = new LinkedHashMap<>();
        for (JsonNode h : hits) {
          got.put(h.get("id").longValue(), h.get("score").floatValue());
        }
        assertThat(got).as("round " + round + ", idf " + idf + ", query " + query).isEqualTo(want);
        if (idf) {
          // Qdrant's params.idf.corpus: the statistics of the points n < 30, every point scored
          Map<Long, Float> corpusWant = idfBruteForce(docs, query, true, id -> id < 30);
          JsonNode corpusHits =
              http.post(
                      "/collections/idf/points/query",
                      "{\"query\": "
                          + sparse(query)
                          + ", \"using\": \"text\", \"limit\": 100, \"params\": {\"idf\":"
                          + " {\"corpus\": {\"must\": [{\"key\": \"n\", \"range\": {\"lt\":"
                          + " 30}}]}}}}")
                  .result()
                  .get("points");
          Map<Long, Float> corpusGot = new LinkedHashMap<>();
          for (JsonNode h : corpusHits) {
            corpusGot.put(h.get("id").longValue(), h.get("score").floatValue());
          }
          assertThat(corpusGot).as("round " + round + ", corpus n < 30").isEqualTo(corpusWant);
        }
      }
      if (round == 0) {
        server.restart(); // the modifier is kept
      } else if (round == 1) {
        ok(
            http.send(
                "PATCH",
                "/collections/idf",
                "{\"sparse_vectors\": {\"text\": {\"modifier\": \"none\"}}}"));
        assertThat(
                http.get("/collections/idf")
                    .result()
                    .at("/config/params/sparse_vectors")
                    .toString())
            .isEqualTo("{\"text\":{}}");
      }
    }
    Http.Response unknown =
        http.send(
            "PATCH",
            "/collections/idf",
            "{\"sparse_vectors\": {\"nope\": {\"modifier\": \"idf\"}}}");
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.error())
        .isEqualTo("Wrong input: Sparse vector `nope` is not specified in collection config");
    Http.Response onDisk =
        http.send(
            "PATCH",
            "/collections/idf",
            "{\"sparse_vectors\": {\"text\": {\"index\": {\"on_disk\": true}}}}");
    assertThat(onDisk.status()).isEqualTo(400);
    assertThat(onDisk.error()).contains("sparse_vectors.text.index.on_disk");
    // a corpus filter without the idf modifier (now none) is refused, not ignored
    String q = "{\"query\": {\"indices\": [0], \"values\": [1]}, \"using\": \"text\", ";
    ok(http.post("/collections/idf/points/query", q + "\"params\": {\"idf\": \"global\"}}"));
    Http.Response corpus =
        http.post(
            "/collections/idf/points/query",
            q + "\"params\": {\"idf\": {\"corpus\": {\"must\": []}}}}");
    assertThat(corpus.status()).isEqualTo(400);
    assertThat(corpus.error())
        .isEqualTo(
            "Wrong input: params.idf applies to a sparse vector with the idf modifier, which text"
                + " has not");
    Http.Response shape =
        http.post("/collections/idf/points/query", q + "\"params\": {\"idf\": \"local\"}}");
    assertThat(shape.status()).isEqualTo(400);
    assertThat(shape.error()).contains("params.idf");
  }

  /**
   * Qdrant's IDF: each query weight times ln((N - df + 0.5) / (df + 0.5) + 1), as the server, N and
   * df counted over the points in {@code corpus}.
   */
  private static Map<Long, Float> idfBruteForce(
      Map<Long, TreeMap<Long, Float>> docs,
      TreeMap<Long, Float> query,
      boolean idf,
      java.util.function.LongPredicate corpus) {
    TreeMap<Long, Float> weighted = new TreeMap<>();
    float n = docs.keySet().stream().filter(corpus::test).count();
    for (Map.Entry<Long, Float> t : query.entrySet()) {
      float df =
          docs.entrySet().stream()
              .filter(d -> corpus.test(d.getKey()) && d.getValue().containsKey(t.getKey()))
              .count();
      weighted.put(
          t.getKey(),
          idf ? t.getValue() * (float) Math.log((n - df + 0.5f) / (df + 0.5f) + 1f) : t.getValue());
    }
    return SparseVectorsIT.dotScores(docs, weighted);
  }

  private static long segmentFiles(String name) throws IOException {
    try (Stream<Path> files = Files.walk(server.dataDir())) {
      return files.filter(p -> p.getFileName().toString().equals(name)).count();
    }
  }

  private void checkAll(Random r, String when) {
    JsonNode pts =
        http.post(
                "/collections/s/points/scroll",
                "{\"limit\": 1000, \"with_vector\": true, \"with_payload\": false}")
            .result()
            .get("points");
    assertThat(pts.size()).as(when).isEqualTo(SPARSE.size());
    for (JsonNode p : pts) {
      long id = p.get("id").longValue();
      assertThat(p.get("vector").toString())
          .as(when + ", point " + id)
          .isEqualTo("{\"text\":" + sparse(SPARSE.get(id)) + "}");
    }
    assertThat(
            http.post("/collections/s/points/count", "{\"exact\": true}")
                .result()
                .get("count")
                .longValue())
        .as(when)
        .isEqualTo(SPARSE.size());
    for (int q = 0; q < 5; q++) {
      TreeMap<Long, Float> query = new TreeMap<>();
      while (query.size() < 3) {
        query.put((long) r.nextInt(25), (float) r.nextGaussian());
      }
      long above = 1 + r.nextInt(60);
      boolean filtered = q % 2 == 1;
      Map<Long, Float> want = bruteForce(query, filtered ? above : Long.MIN_VALUE);
      String filter =
          filtered
              ? ", \"filter\": {\"must\": [{\"key\": \"n\", \"range\": {\"gt\": " + above + "}}]}"
              : "";
      JsonNode hits =
          http.post(
                  "/collections/s/points/query",
                  "{\"query\": "
                      + sparse(query)
                      + ", \"using\": \"text\", \"limit\": 100"
                      + filter
                      + "}")
              .result()
              .get("points");
      Map<Long, Float> got = new LinkedHashMap<>();
      for (JsonNode h : hits) {
        got.put(h.get("id").longValue(), h.get("score").floatValue());
      }
      assertThat(got).as(when + ", query " + query + filter).isEqualTo(want);
    }
  }

  private static Map<Long, Float> bruteForce(TreeMap<Long, Float> query, long above) {
    return SparseVectorsIT.dotScores(SPARSE.tailMap(above, false), query);
  }

  /**
   * Qdrant's documents with the built-in BM25 model: a text given as a sparse vector is stored as
   * its BM25 term-frequency weights, a text query of the field searches by its tokens (weighted by
   * IDF with the field's modifier), and other models or options are refused.
   */
  @Test
  void bm25DocumentsAreTheBuiltInModelsSparseVectors() {
    ok(http.put("/collections/bm", "{\"sparse_vectors\": {\"text\": {\"modifier\": \"idf\"}}}"));
    String[] texts = {
      "I must not fear. Fear is the mind-killer.",
      "It was a pleasure to burn.",
      "The sky above the port was the color of television.",
      "Fear of the dark, fear of the night."
    };
    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (int i = 0; i < texts.length; i++) {
      sb.append(i == 0 ? "" : ",")
          .append("{\"id\": ")
          .append(i + 1)
          .append(", \"vector\": {\"text\": {\"model\": \"qdrant/bm25\", \"text\": \"")
          .append(texts[i])
          .append("\"}}}");
    }
    ok(http.put("/collections/bm/points?wait=true", sb.append("]}").toString()));
    // point 1: i, must, fear, fear, mind, killer ("not", "is", "the" are stop words)
    JsonNode v =
        http.post("/collections/bm/points", "{\"ids\": [1], \"with_vector\": true}")
            .result()
            .get(0)
            .at("/vector/text");
    assertThat(v.get("indices")).hasSize(5);
    long fear = io.flashvec.index.payload.Bm25Embedding.tokenId("fear");
    double expected = 2 * 2.2 / (1.2 * (1 - 0.75 + 0.75 * 6 / 256.0) + 2);
    boolean found = false;
    for (int i = 0; i < v.get("indices").size(); i++) {
      if (v.get("indices").get(i).asLong() == fear) {
        assertThat(v.get("values").get(i).asDouble())
            .isCloseTo(expected, org.assertj.core.data.Offset.offset(1e-5));
        found = true;
      }
    }
    assertThat(found).as(v.toString()).isTrue();

    // "fear" is in points 1 and 4; point 1 says it twice in a shorter text
    JsonNode hits =
        http.post(
                "/collections/bm/points/query",
                "{\"query\": {\"text\": \"Should I fear?\", \"model\": \"bm25\"},"
                    + " \"using\": \"text\", \"limit\": 10}")
            .result()
            .get("points");
    assertThat(hits).hasSize(2);
    assertThat(hits.get(0).get("id").asLong()).isEqualTo(1);
    assertThat(hits.get(1).get("id").asLong()).isEqualTo(4);
    assertThat(hits.get(0).get("score").asDouble())
        .isGreaterThan(hits.get(1).get("score").asDouble());

    String[][] refused = {
      {"{\"text\": \"x\"}", "a document needs `model`"},
      {"{\"text\": \"x\", \"model\": \"openai/text-embedding-3\"}", "only the built-in BM25"},
      {
        "{\"text\": \"x\", \"model\": \"qdrant/bm25\", \"options\": {\"tokenizer\": \"whitespace\"}}",
        "options.tokenizer"
      },
      {"{\"text\": \"x\", \"model\": \"qdrant/bm25\", \"options\": {\"b\": 2}}", "options.b"},
    };
    for (String[] r : refused) {
      Http.Response bad =
          http.put(
              "/collections/bm/points?wait=true",
              "{\"points\": [{\"id\": 9, \"vector\": {\"text\": " + r[0] + "}}]}");
      assertThat(bad.status()).as(r[0]).isEqualTo(400);
      assertThat(bad.error()).as(r[0]).contains(r[1]);
      Http.Response badQuery =
          http.post(
              "/collections/bm/points/query",
              "{\"query\": " + r[0] + ", \"using\": \"text\", \"limit\": 1}");
      assertThat(badQuery.status()).as("query " + r[0]).isEqualTo(400);
      assertThat(badQuery.error()).as("query " + r[0]).contains(r[1]);
    }
    // options belong to the model of a sparse vector, not to BM25 over a payload key
    Http.Response payloadOptions =
        http.post(
            "/collections/bm/points/query",
            "{\"query\": {\"text\": \"x\", \"options\": {\"k\": 1}}, \"using\": \"title\"}");
    assertThat(payloadOptions.status()).isEqualTo(400);
    assertThat(payloadOptions.error()).contains("query.options");
    ok(http.delete("/collections/bm"));
  }
}
