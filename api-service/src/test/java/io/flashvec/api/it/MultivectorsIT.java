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
 * Qdrant's multivectors ({@code multivector_config: {comparator: max_sim}}) against a real server,
 * in a collection of a primary dense vector and two multivector fields of other sizes and metrics
 * (Cosine with {@code on_disk: true}, Euclid on the heap), each point with any number of vectors in
 * either or none: the configuration reads back as Qdrant shows it; points come back as lists of
 * lists (Cosine vectors normalised one by one); {@code points/query} with a multivector, alone, in
 * a prefetch and rescoring a prefetch, equals a brute-force MaxSim; recommend takes multivector
 * examples; bad multivectors and settings get a 400 or 422 naming them; all of it holds after a
 * restart, from a sealed segment and from the WAL.
 */
@ExtendWith(TestSeeds.Reporter.class)
class MultivectorsIT extends OneServerPerClass {

  /** What the collection should hold, by id: each field's vectors as given. */
  static final Map<Long, float[]> DENSE = new TreeMap<>();

  static final Map<Long, float[][]> COLBERT = new TreeMap<>();
  static final Map<Long, float[][]> LATE = new TreeMap<>();
  static final Set<Long> IDS = new TreeSet<>();

  @Test
  void multivectorsEndToEnd() {
    Random r = TestSeeds.random("MultivectorsIT");
    ok(
        http.put(
            "/collections/m",
            "{\"vectors\": {\"dense\": {\"size\": 3, \"distance\": \"Dot\"},"
                + " \"colbert\": {\"size\": 4, \"distance\": \"Cosine\", \"on_disk\": true,"
                + " \"multivector_config\": {\"comparator\": \"max_sim\"}},"
                + " \"late\": {\"size\": 2, \"distance\": \"Euclid\","
                + " \"multivector_config\": {\"comparator\": \"max_sim\"}}}}"));
    JsonNode vectors = http.get("/collections/m").result().at("/config/params/vectors");
    assertThat(vectors.get("colbert").toString())
        .isEqualTo(
            "{\"size\":4,\"distance\":\"Cosine\",\"on_disk\":true,"
                + "\"multivector_config\":{\"comparator\":\"max_sim\"}}");
    assertThat(vectors.get("dense").has("multivector_config")).isFalse();
    refusedSettings();

    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 60; id++) {
      sb.append(id == 1 ? "" : ",").append("{\"id\": ").append(id).append(", \"vector\": {");
      List<String> parts = new ArrayList<>();
      if (r.nextInt(4) != 0) {
        float[] v = gaussian(r, 3);
        DENSE.put(id, v);
        parts.add("\"dense\": " + SparseVectorsIT.vec(v));
      }
      if (r.nextInt(4) != 0) {
        float[][] m = multi(r, 4);
        COLBERT.put(id, m);
        parts.add("\"colbert\": " + lists(m));
      }
      if (r.nextInt(3) != 0) {
        float[][] m = multi(r, 2);
        LATE.put(id, m);
        parts.add("\"late\": " + lists(m));
      }
      IDS.add(id);
      sb.append(String.join(", ", parts)).append("}, \"payload\": {\"n\": ").append(id);
      sb.append("}}");
    }
    ok(http.put("/collections/m/points?wait=true", sb.append("]}").toString()));
    // the columnar form, and a plain vector as a multivector of one (as Qdrant takes it)
    ok(
        http.put(
            "/collections/m/points?wait=true",
            "{\"batch\": {\"ids\": [70, 71], \"vectors\": {\"colbert\": [[[1, 0, 0, 0], [0, 2, 0,"
                + " 0]], [0, 0, 3, 0]]}}}"));
    COLBERT.put(70L, new float[][] {{1, 0, 0, 0}, {0, 2, 0, 0}});
    COLBERT.put(71L, new float[][] {{0, 0, 3, 0}});
    IDS.addAll(List.of(70L, 71L));
    badPoints();
    checkAll(r, "fresh");

    // update_vectors: a new multivector with another number of vectors
    ok(
        http.put(
            "/collections/m/points/vectors?wait=true",
            "{\"points\": [{\"id\": 1, \"vector\": {\"late\": [[1, 1], [2, 2], [3, 3], [4, 4],"
                + " [5, 5]]}}]}"));
    LATE.put(1L, new float[][] {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}});
    long victim = COLBERT.keySet().iterator().next();
    ok(
        http.post(
            "/collections/m/points/vectors/delete?wait=true",
            "{\"points\": [" + victim + "], \"vector\": [\"colbert\"]}"));
    COLBERT.remove(victim);
    checkAll(r, "after vector updates");

    // sealed: a flush writes the segment with its vectors file, then a restart opens it
    ok(http.post("/collections/m/flush", "{}"));
    Await.until(
        Duration.ofSeconds(120),
        "the collection is green",
        () -> http.get("/collections/m").result().path("status").asString().equals("green"));
    server.restart();
    checkAll(r, "sealed, restarted");
    // replayed: new writes in the WAL only
    ok(
        http.put(
            "/collections/m/points?wait=true",
            "{\"points\": [{\"id\": 95, \"vector\": {\"late\": [[9, 9], [8, 8]], \"colbert\":"
                + " [[1, 2, 3, 4]]}}]}"));
    LATE.put(95L, new float[][] {{9, 9}, {8, 8}});
    COLBERT.put(95L, new float[][] {{1, 2, 3, 4}});
    IDS.add(95L);
    server.restart();
    checkAll(r, "replayed, restarted");
  }

  /**
   * A collection whose only vectors are multivectors has no primary vector (no graph): its MaxSim
   * queries are exact, before and after a seal and a restart, and the default vector is Qdrant's
   * 400.
   */
  @Test
  void aCollectionOfMultivectorsOnly() {
    Random r = TestSeeds.random("MultivectorsIT.only");
    ok(
        http.put(
            "/collections/only",
            "{\"vectors\": {\"mv\": {\"size\": 3, \"distance\": \"Dot\","
                + " \"multivector_config\": {\"comparator\": \"max_sim\"}}}}"));
    assertThat(http.get("/collections/only").result().at("/config/params/vectors/mv/size").asInt())
        .isEqualTo(3);
    Map<Long, float[][]> docs = new java.util.HashMap<>();
    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 40; id++) {
      float[][] m = multi(r, 3);
      docs.put(id, m);
      sb.append(id == 1 ? "" : ",").append("{\"id\": ").append(id);
      sb.append(", \"vector\": {\"mv\": ").append(lists(m)).append("}}");
    }
    ok(http.put("/collections/only/points?wait=true", sb.append("]}").toString()));
    Http.Response unnamed =
        http.post("/collections/only/points/query", "{\"query\": [1, 2, 3], \"limit\": 3}");
    assertThat(unnamed.status()).isEqualTo(400);
    for (int round = 0; round < 2; round++) {
      float[][] q = multi(r, 3);
      JsonNode hits =
          http.post(
                  "/collections/only/points/query",
                  "{\"query\": " + lists(q) + ", \"using\": \"mv\", \"limit\": 5}")
              .result()
              .get("points");
      List<Float> want = dotMaxSims(docs, q);
      assertThat(hits).hasSize(5);
      for (int i = 0; i < 5; i++) {
        assertThat(hits.get(i).get("score").floatValue())
            .as("round %d rank %d", round, i)
            .isCloseTo(want.get(i), org.assertj.core.api.Assertions.offset(1e-3f));
      }
      sealAndRestart("only");
    }
  }

  /**
   * Qdrant's unnamed multivector ({@code vectors: {size, distance, multivector_config}}): points
   * given and shown as bare lists of lists (a plain vector is a multivector of one), queries
   * without {@code using} are exact MaxSim, the configuration reads back unnamed, and all of it
   * holds after a seal and a restart.
   */
  @Test
  void anUnnamedMultivector() {
    Random r = TestSeeds.random("MultivectorsIT.unnamed");
    ok(
        http.put(
            "/collections/bare",
            "{\"vectors\": {\"size\": 4, \"distance\": \"Dot\","
                + " \"multivector_config\": {\"comparator\": \"max_sim\"}}}"));
    JsonNode vectors = http.get("/collections/bare").result().at("/config/params/vectors");
    assertThat(vectors.path("size").asInt()).isEqualTo(4);
    assertThat(vectors.at("/multivector_config/comparator").asString()).isEqualTo("max_sim");
    Map<Long, float[][]> docs = new java.util.HashMap<>();
    StringBuilder sb = new StringBuilder("{\"points\": [");
    for (long id = 1; id <= 30; id++) {
      float[][] m = multi(r, 4);
      docs.put(id, m);
      String given = m.length == 1 && id % 2 == 0 ? SparseVectorsIT.vec(m[0]) : lists(m);
      sb.append(id == 1 ? "" : ",").append("{\"id\": ").append(id);
      sb.append(", \"vector\": ").append(given).append('}');
    }
    ok(http.put("/collections/bare/points?wait=true", sb.append("]}").toString()));
    Http.Response wrongSize =
        http.post("/collections/bare/points/query", "{\"query\": [1, 2, 3], \"limit\": 3}");
    assertThat(wrongSize.status()).isEqualTo(400);
    assertThat(wrongSize.raw()).contains("Vector dimension error: expected dim: 4, got 3");
    Http.Response named =
        http.post(
            "/collections/bare/points/query",
            "{\"query\": [1, 2, 3, 4], \"using\": \"mv\", \"limit\": 3}");
    assertThat(named.status()).isEqualTo(400);
    for (int round = 0; round < 2; round++) {
      String when = round == 0 ? "from the WAL" : "sealed, restarted";
      checkLists(when, http.get("/collections/bare/points/7").result().get("vector"), docs.get(7L));
      float[][] q = multi(r, 4);
      JsonNode hits =
          http.post("/collections/bare/points/query", "{\"query\": " + lists(q) + ", \"limit\": 5}")
              .result()
              .get("points");
      List<Float> want = dotMaxSims(docs, q);
      assertThat(hits).as(when).hasSize(5);
      for (int i = 0; i < 5; i++) {
        assertThat(hits.get(i).get("score").floatValue())
            .as("%s rank %d", when, i)
            .isCloseTo(want.get(i), org.assertj.core.api.Assertions.offset(1e-3f));
      }
      sealAndRestart("bare");
    }
    assertThat(http.get("/collections/bare").result().at("/config/params/vectors/size").asInt())
        .isEqualTo(4);
  }

  /** Seals {@code collection}'s points (a flush, then its builds), then restarts the server. */
  private static void sealAndRestart(String collection) {
    ok(http.post("/collections/" + collection + "/flush", "{}"));
    Await.until(
        Duration.ofSeconds(120),
        collection + " is green",
        () ->
            http.get("/collections/" + collection)
                .result()
                .path("status")
                .asString()
                .equals("green"));
    server.restart();
  }

  /** The MaxSim of {@code q} against every doc by dot product, best first. */
  private static List<Float> dotMaxSims(Map<Long, float[][]> docs, float[][] q) {
    List<Float> want = new ArrayList<>();
    for (float[][] d : docs.values()) {
      float sum = 0;
      for (float[] qv : q) {
        float best = Float.NEGATIVE_INFINITY;
        for (float[] dv : d) {
          float dot = 0;
          for (int i = 0; i < qv.length; i++) {
            dot += qv[i] * dv[i];
          }
          best = Math.max(best, dot);
        }
        sum += best;
      }
      want.add(sum);
    }
    want.sort(java.util.Comparator.reverseOrder());
    return want;
  }

  private void refusedSettings() {
    Map<String, String> refused =
        Map.of(
            "{\"vectors\": {\"a\": {\"size\": 2, \"distance\": \"Dot\"}, \"b\": {\"size\": 2,"
                + " \"distance\": \"Dot\", \"multivector_config\": {\"comparator\": \"sum\"}}}}",
            "sum",
            "{\"vectors\": {\"size\": 2, \"distance\": \"Dot\", \"multivector_config\":"
                + " {\"comparator\": \"max_sim\"}, \"hnsw_config\": {\"m\": 8}}}",
            "vectors.hnsw_config");
    for (Map.Entry<String, String> e : refused.entrySet()) {
      Http.Response bad = http.put("/collections/refused", e.getKey());
      assertThat(bad.status()).as(e.getKey()).isEqualTo(400);
      assertThat(bad.error()).as(e.getKey()).contains(e.getValue());
      assertThat(http.get("/collections/refused").status()).isEqualTo(404);
    }
  }

  private void badPoints() {
    Map<String, String> bad =
        Map.of(
            "{\"points\": [{\"id\": 500, \"vector\": {\"colbert\": [[1, 2, 3]]}}]}",
            "expected dim: 4, got 3 [vector=colbert]",
            "{\"points\": [{\"id\": 500, \"vector\": {\"colbert\": [[1, 2, 3, 4], [1, 2, 3]]}}]}",
            "all vectors must have the same dimension, found vector with dimension 3",
            "{\"points\": [{\"id\": 500, \"vector\": {\"colbert\": [[1, 2, 3, 4], []]}}]}",
            "all vectors must be non-empty",
            "{\"points\": [{\"id\": 500, \"vector\": {\"dense\": [[1, 2, 3]]}}]}",
            "vector dense is not a multivector");
    for (Map.Entry<String, String> e : bad.entrySet()) {
      Http.Response resp = http.put("/collections/m/points?wait=true", e.getKey());
      assertThat(resp.status()).as(e.getKey()).isIn(400, 422);
      assertThat(resp.error()).as(e.getKey()).contains(e.getValue());
    }
    Http.Response query =
        http.post(
            "/collections/m/points/query", "{\"query\": [[1, 2], [3, 4]], \"using\": \"colbert\"}");
    assertThat(query.status()).isEqualTo(400);
    assertThat(query.error()).contains("expected dim: 4, got 2");
    assertThat(http.get("/collections/m/points/500").status()).isEqualTo(404);
  }

  private void checkAll(Random r, String when) {
    JsonNode pts =
        http.post("/collections/m/points/scroll", "{\"limit\": 1000, \"with_vector\": true}")
            .result()
            .get("points");
    assertThat(pts.size()).as(when).isEqualTo(IDS.size());
    for (JsonNode p : pts) {
      long id = p.get("id").longValue();
      JsonNode v = p.get("vector");
      String what = when + ", point " + id + ": " + v;
      assertThat(v.has("colbert")).as(what).isEqualTo(COLBERT.containsKey(id));
      assertThat(v.has("late")).as(what).isEqualTo(LATE.containsKey(id));
      if (COLBERT.containsKey(id)) {
        checkLists(what, v.get("colbert"), normalised(COLBERT.get(id)));
      }
      if (LATE.containsKey(id)) {
        checkLists(what, v.get("late"), LATE.get(id));
      }
    }
    // retrieve by id shows the same
    long one = COLBERT.keySet().iterator().next();
    checkLists(
        when,
        http.get("/collections/m/points/" + one).result().at("/vector/colbert"),
        normalised(COLBERT.get(one)));
    for (int q = 0; q < 3; q++) {
      float[][] colbert = multi(r, 4);
      float[][] late = multi(r, 2);
      JsonNode hits =
          http.post(
                  "/collections/m/points/query",
                  "{\"query\": " + lists(colbert) + ", \"using\": \"colbert\", \"limit\": 100}")
              .result()
              .get("points");
      checkHits(when + ", colbert", hits, COLBERT, colbert, false, Set.copyOf(COLBERT.keySet()));
      JsonNode lateHits =
          http.post(
                  "/collections/m/points/query",
                  "{\"query\": "
                      + lists(late)
                      + ", \"using\": \"late\", \"limit\": 100, \"with_vector\": [\"late\"]}")
              .result()
              .get("points");
      checkHits(when + ", late", lateHits, LATE, late, true, Set.copyOf(LATE.keySet()));
      checkLists(
          when,
          lateHits.get(0).at("/vector/late"),
          LATE.get(lateHits.get(0).get("id").longValue()));
      // rescoring a prefetch of the primary vector: the points it found, ranked by MaxSim
      JsonNode rescored =
          http.post(
                  "/collections/m/points/query",
                  "{\"prefetch\": {\"query\": "
                      + SparseVectorsIT.vec(gaussian(r, 3))
                      + ", \"using\": \"dense\", \"limit\": 1000, \"params\": {\"exact\": true}},"
                      + " \"query\": "
                      + lists(late)
                      + ", \"using\": \"late\", \"limit\": 100}")
              .result()
              .get("points");
      Set<Long> both = new TreeSet<>(DENSE.keySet());
      both.retainAll(LATE.keySet());
      checkHits(when + ", late over a dense prefetch", rescored, LATE, late, true, both);
      // a multivector prefetch fused with a dense one
      JsonNode fused =
          http.post(
                  "/collections/m/points/query",
                  "{\"prefetch\": [{\"query\": "
                      + lists(colbert)
                      + ", \"using\": \"colbert\", \"limit\": 5}, {\"query\": "
                      + SparseVectorsIT.vec(gaussian(r, 3))
                      + ", \"using\": \"dense\", \"limit\": 5}], \"query\": {\"fusion\": \"rrf\"}}")
              .result()
              .get("points");
      assertThat(fused.size()).as(when).isBetween(1, 10);
    }
    // recommend by a multivector example and by id: the id's own multivector, the id left out
    long example = LATE.keySet().iterator().next();
    JsonNode byId =
        http.post(
                "/collections/m/points/query",
                "{\"query\": {\"recommend\": {\"positive\": ["
                    + example
                    + "]}}, \"using\": \"late\", \"limit\": 100}")
            .result()
            .get("points");
    Set<Long> others = new TreeSet<>(LATE.keySet());
    others.remove(example);
    checkHits(when + ", recommend by id", byId, LATE, LATE.get(example), true, others);
    JsonNode best =
        http.post(
                "/collections/m/points/query",
                "{\"query\": {\"recommend\": {\"positive\": ["
                    + lists(LATE.get(example))
                    + "], \"negative\": [[[0, 0]]], \"strategy\": \"best_score\"}}, \"using\":"
                    + " \"late\", \"limit\": 100}")
            .result()
            .get("points");
    assertThat(best).as(when).hasSize(LATE.size());
    assertThat(best.get(0).get("id").longValue()).as(when).isEqualTo(example);
  }

  private static void checkHits(
      String what,
      JsonNode hits,
      Map<Long, float[][]> stored,
      float[][] query,
      boolean euclid,
      Set<Long> accepted) {
    List<Map.Entry<Long, Float>> want = new ArrayList<>();
    for (long id : accepted) {
      want.add(Map.entry(id, maxSim(query, stored.get(id), euclid)));
    }
    want.sort(
        (a, b) ->
            euclid
                ? Float.compare(a.getValue(), b.getValue())
                : Float.compare(b.getValue(), a.getValue()));
    assertThat(hits).as(what).hasSize(Math.min(100, want.size()));
    for (int i = 0; i < hits.size(); i++) {
      long id = hits.get(i).get("id").longValue();
      float s = hits.get(i).get("score").floatValue();
      assertThat(s).as(what + ", rank " + i).isCloseTo(want.get(i).getValue(), within(1e-3f));
      assertThat(accepted).as(what).contains(id);
      assertThat(maxSim(query, stored.get(id), euclid)).as(what).isCloseTo(s, within(1e-3f));
    }
  }

  /**
   * Qdrant's MaxSim by definition: Cosine over normalised vectors, and for Euclid the square root
   * of the summed smallest squared distances.
   */
  private static float maxSim(float[][] query, float[][] stored, boolean euclid) {
    float[][] q = euclid ? query : normalised(query);
    float[][] s = euclid ? stored : normalised(stored);
    double sum = 0;
    for (float[] a : q) {
      double bestSim = Double.NEGATIVE_INFINITY;
      for (float[] b : s) {
        double sim = 0;
        for (int i = 0; i < a.length; i++) {
          sim += euclid ? -(a[i] - b[i]) * (a[i] - b[i]) : a[i] * b[i];
        }
        bestSim = Math.max(bestSim, sim);
      }
      sum += bestSim;
    }
    return (float) (euclid ? Math.sqrt(Math.abs(sum)) : sum);
  }

  private static float[][] normalised(float[][] m) {
    float[][] out = new float[m.length][];
    for (int i = 0; i < m.length; i++) {
      double norm = 0;
      for (float x : m[i]) {
        norm += x * x;
      }
      out[i] = new float[m[i].length];
      for (int j = 0; j < m[i].length; j++) {
        out[i][j] = (float) (m[i][j] / Math.sqrt(norm));
      }
    }
    return out;
  }

  private static void checkLists(String what, JsonNode got, float[][] want) {
    assertThat(got.isArray()).as(what + ": " + got).isTrue();
    assertThat(got.size()).as(what + ": " + got).isEqualTo(want.length);
    for (int i = 0; i < want.length; i++) {
      assertThat(got.get(i).size()).as(what).isEqualTo(want[i].length);
      for (int j = 0; j < want[i].length; j++) {
        assertThat(got.get(i).get(j).floatValue()).as(what).isCloseTo(want[i][j], within(1e-5f));
      }
    }
  }

  private static String lists(float[][] m) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < m.length; i++) {
      sb.append(i == 0 ? "" : ",").append(SparseVectorsIT.vec(m[i]));
    }
    return sb.append(']').toString();
  }

  /** One to four vectors of {@code dim}. */
  private static float[][] multi(Random r, int dim) {
    float[][] m = new float[1 + r.nextInt(4)][];
    for (int i = 0; i < m.length; i++) {
      m[i] = gaussian(r, dim);
    }
    return m;
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
