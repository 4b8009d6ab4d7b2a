package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's universal query beyond a nearest-vector search, against a real server: nested prefetches
 * rescored by any query, weighted RRF, recommend / discover / context scores checked against a
 * brute force of Qdrant's formulas, MMR, {@code order_by} and {@code sample} queries, and grouped
 * queries with lookups.
 */
class QueryApiIT extends OneServerPerClass {

  static final int N = 300;
  static final int DIM = 8;
  static final float[][] VECTORS = new float[N][DIM];

  @BeforeAll
  static void start() {
    Random rnd = TestSeeds.random("QueryApiIT");
    ok(http.put("/collections/q", "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Dot\"}}"));
    ok(http.put("/collections/q/index", "{\"field_name\":\"price\",\"field_schema\":\"integer\"}"));
    ok(http.put("/collections/q/index", "{\"field_name\":\"tags\",\"field_schema\":\"keyword\"}"));
    StringBuilder sb = new StringBuilder("{\"points\":[");
    for (int i = 0; i < N; i++) {
      for (int d = 0; d < DIM; d++) {
        VECTORS[i][d] = (float) rnd.nextGaussian();
      }
      if (i > 0) {
        sb.append(',');
      }
      sb.append("{\"id\":")
          .append(i)
          .append(",\"vector\":")
          .append(vec(VECTORS[i]))
          .append(",\"payload\":{\"doc\":")
          .append(i / 5)
          .append(",\"tags\":[\"t")
          .append(i % 3)
          .append("\",\"all\"],\"price\":")
          .append((i * 37) % 101)
          .append("}}");
    }
    ok(http.put("/collections/q/points?wait=true", sb.append("]}").toString()));
    ok(http.put("/collections/docs", "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Dot\"}}"));
    StringBuilder docs = new StringBuilder("{\"points\":[");
    for (int d = 0; d < N / 5; d++) {
      docs.append(d == 0 ? "" : ",")
          .append("{\"id\":")
          .append(d)
          .append(",\"vector\":")
          .append(vec(VECTORS[d]))
          .append(",\"payload\":{\"title\":\"doc ")
          .append(d)
          .append("\"}}");
    }
    ok(http.put("/collections/docs/points?wait=true", docs.append("]}").toString()));
  }

  @Test
  void aNestedPrefetchRescoredByTheSameVectorEqualsTheSearch() {
    float[] q = VECTORS[7].clone();
    q[0] += 0.5f;
    String root = "{\"query\":" + vec(q) + ",\"limit\":10,\"params\":{\"exact\":true}}";
    String nested =
        "{\"prefetch\":{\"prefetch\":{\"limit\":1000},\"query\":"
            + vec(q)
            + ",\"limit\":50,\"params\":{\"exact\":true}},\"query\":"
            + vec(q)
            + ",\"limit\":10}";
    JsonNode a = points(http.post("/collections/q/points/query", root));
    JsonNode b = points(http.post("/collections/q/points/query", nested));
    assertThat(ids(b)).isEqualTo(ids(a)).isEqualTo(bruteForce(v -> dot(q, v), 10, Set.of()));
    for (int i = 0; i < a.size(); i++) {
      assertThat(b.get(i).get("score").doubleValue())
          .isCloseTo(a.get(i).get("score").doubleValue(), within(1e-5));
    }
  }

  @Test
  void weightedRrfMatchesQdrantsFormula() {
    String body =
        "{\"prefetch\":[{\"query\":%s,\"limit\":5,\"params\":{\"exact\":true}},"
            + "{\"query\":%s,\"limit\":5,\"params\":{\"exact\":true}}],"
            + "\"query\":{\"rrf\":{\"weights\":[3.0,1.0]}},\"limit\":20}";
    JsonNode fused =
        points(
            http.post(
                "/collections/q/points/query",
                String.format(Locale.ROOT, body, vec(VECTORS[1]), vec(VECTORS[2]))));
    List<Long> a = bruteForce(v -> dot(VECTORS[1], v), 5, Set.of());
    List<Long> b = bruteForce(v -> dot(VECTORS[2], v), 5, Set.of());
    Map<Long, Double> expected = new LinkedHashMap<>();
    for (int i = 0; i < 5; i++) {
      expected.merge(a.get(i), 1.0 / ((i + 1) / 3.0 + 2 - 1), Double::sum);
      expected.merge(b.get(i), 1.0 / ((i + 1) / 1.0 + 2 - 1), Double::sum);
    }
    assertThat(fused.size()).isEqualTo(expected.size());
    for (JsonNode p : fused) {
      assertThat(p.get("score").doubleValue())
          .isCloseTo(expected.get(p.get("id").longValue()), within(1e-5));
    }
    Http.Response wrong =
        http.post(
            "/collections/q/points/query",
            String.format(Locale.ROOT, body, vec(VECTORS[1]), vec(VECTORS[2]))
                .replace("[3.0,1.0]", "[1.0]"));
    assertThat(wrong.status()).isEqualTo(400);
    assertThat(wrong.error()).contains("got 1, expected 2");
  }

  @Test
  void recommendStrategiesScoreAsQdrant() {
    Set<Long> examples = Set.of(3L, 4L, 5L);
    // average_vector: 2·avg(positive) − avg(negative), the examples left out
    float[] target = new float[DIM];
    for (int d = 0; d < DIM; d++) {
      float avgPos = (VECTORS[3][d] + VECTORS[4][d]) / 2;
      target[d] = 2 * avgPos - VECTORS[5][d];
    }
    JsonNode avg =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"recommend\":{\"positive\":[3,4],\"negative\":[5]}},"
                    + "\"limit\":10,\"params\":{\"exact\":true}}"));
    assertThat(ids(avg)).isEqualTo(bruteForce(v -> dot(target, v), 10, examples));

    // best_score, exactly over every point
    ToDoubleFunction<float[]> best =
        v -> {
          double pos = Math.max(dot(VECTORS[3], v), dot(VECTORS[4], v));
          double neg = dot(VECTORS[5], v);
          return pos > neg ? scaledSigmoid(pos) : -scaledSigmoid(neg);
        };
    JsonNode bestScore =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"recommend\":{\"positive\":[3,4],\"negative\":[5],"
                    + "\"strategy\":\"best_score\"}},\"limit\":10,\"params\":{\"exact\":true}}"));
    assertThat(ids(bestScore)).isEqualTo(bruteForce(best, 10, examples));
    for (JsonNode p : bestScore) {
      assertThat(p.get("score").doubleValue())
          .isCloseTo(best.applyAsDouble(VECTORS[(int) p.get("id").longValue()]), within(1e-4));
    }

    // sum_scores, approximate (neighbours of the positives): most of the exact top 10
    ToDoubleFunction<float[]> sum =
        v -> dot(VECTORS[3], v) + dot(VECTORS[4], v) - dot(VECTORS[5], v);
    JsonNode sumScores =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"recommend\":{\"positive\":[3,4],\"negative\":[5],"
                    + "\"strategy\":\"sum_scores\"}},\"limit\":10}"));
    List<Long> exact = bruteForce(sum, 10, examples);
    assertThat(ids(sumScores)).doesNotContainAnyElementsOf(examples);
    // the candidates are the 64 nearest neighbours of each positive, rescored: emulated exactly
    // here, so the bound does not depend on how far the sum's optimum lies from the positives
    Set<Long> near = new HashSet<>(bruteForce(v -> dot(VECTORS[3], v), 64, examples));
    near.addAll(bruteForce(v -> dot(VECTORS[4], v), 64, examples));
    List<Long> fromNeighbours =
        bruteForce(sum, N - examples.size(), examples).stream()
            .filter(near::contains)
            .limit(10)
            .toList();
    assertThat(ids(sumScores).stream().filter(fromNeighbours::contains).count())
        .isGreaterThanOrEqualTo(9);
    for (JsonNode p : sumScores) {
      assertThat(p.get("score").doubleValue())
          .isCloseTo(sum.applyAsDouble(VECTORS[(int) p.get("id").longValue()]), within(1e-4));
    }
    JsonNode sumExact =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"recommend\":{\"positive\":[3,4],\"negative\":[5],"
                    + "\"strategy\":\"sum_scores\"}},\"limit\":10,\"params\":{\"exact\":true}}"));
    assertThat(ids(sumExact)).isEqualTo(exact);
  }

  /**
   * Qdrant's older recommend and discover routes (qdrant-client up to 1.12 calls them) answer as
   * the query API's recommend and discover queries: the same points and scores, as a list.
   */
  @Test
  void theOlderRecommendAndDiscoverRoutesAnswerAsTheQueryApi() {
    String rec = "\"positive\":[3,4],\"negative\":[5],\"strategy\":\"best_score\"";
    String rest = ",\"limit\":5,\"params\":{\"exact\":true},\"with_payload\":true}";
    JsonNode byQuery =
        points(
            http.post(
                "/collections/q/points/query", "{\"query\":{\"recommend\":{" + rec + "}}" + rest));
    Http.Response legacy = http.post("/collections/q/points/recommend", "{" + rec + rest);
    ok(legacy);
    assertThat(legacy.result()).isEqualTo(byQuery);
    Http.Response batch =
        http.post(
            "/collections/q/points/recommend/batch",
            "{\"searches\":[{" + rec + rest + ",{\"positive\":[7]" + rest + "]}");
    ok(batch);
    assertThat(batch.result().get(0)).isEqualTo(byQuery);
    assertThat(batch.result().get(1)).hasSize(5);
    Http.Response grouped =
        http.post(
            "/collections/q/points/recommend/groups",
            "{" + rec + ",\"limit\":2,\"group_by\":\"doc\",\"group_size\":1}");
    ok(grouped);
    assertThat(grouped.result().get("groups")).hasSize(2);

    String ctx = "\"context\":[{\"positive\":11,\"negative\":12}]";
    JsonNode discover =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"discover\":{\"target\":10," + ctx + "}}" + rest));
    Http.Response d = http.post("/collections/q/points/discover", "{\"target\":10," + ctx + rest);
    ok(d);
    assertThat(d.result()).isEqualTo(discover);
    JsonNode context =
        points(http.post("/collections/q/points/query", "{\"query\":{" + ctx + "}" + rest));
    Http.Response c =
        http.post("/collections/q/points/discover/batch", "{\"searches\":[{" + ctx + rest + "]}");
    ok(c);
    assertThat(c.result().get(0)).isEqualTo(context);

    Http.Response noLimit = http.post("/collections/q/points/recommend", "{\"positive\":[3]}");
    assertThat(noLimit.status()).isEqualTo(400);
    assertThat(noLimit.error()).contains("missing field `limit`");
  }

  @Test
  void discoverAndContextScoreAsQdrant() {
    ToDoubleFunction<float[]> discover =
        v -> {
          double rank = Double.compare(dot(VECTORS[11], v), dot(VECTORS[12], v));
          return rank + scaledSigmoid(dot(VECTORS[10], v));
        };
    JsonNode d =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"discover\":{\"target\":10,\"context\":[{\"positive\":11,"
                    + "\"negative\":12}]}},\"limit\":10,\"params\":{\"exact\":true}}"));
    assertThat(ids(d)).isEqualTo(bruteForce(discover, 10, Set.of(10L, 11L, 12L)));

    ToDoubleFunction<float[]> context =
        v -> {
          double diff = dot(VECTORS[11], v) - dot(VECTORS[12], v) - Math.ulp(1.0f);
          double x = Math.min(diff, 0);
          return x / (1 + Math.abs(x));
        };
    JsonNode c =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"context\":{\"positive\":11,\"negative\":12}},"
                    + "\"limit\":5,\"params\":{\"exact\":true}}"));
    for (JsonNode p : c) {
      assertThat(p.get("score").doubleValue())
          .isCloseTo(context.applyAsDouble(VECTORS[(int) p.get("id").longValue()]), within(1e-4));
    }
  }

  /** Qdrant's naive relevance feedback, exact: a·sim(target) + Σ c·conf^b·(sim(p) − sim(n)). */
  @Test
  void relevanceFeedbackScoresAsQdrant() {
    float a = 1f, b = 2f, c = 0.5f;
    // feedback 21: 0.9, 22: 0.2, 23: 0.5 -> pairs (21,22) 0.7, (21,23) 0.4, (23,22) 0.3
    ToDoubleFunction<float[]> feedback =
        v ->
            a * dot(VECTORS[20], v)
                + (float) Math.pow(0.9f - 0.2f, b) * c * (dot(VECTORS[21], v) - dot(VECTORS[22], v))
                + (float) Math.pow(0.9f - 0.5f, b) * c * (dot(VECTORS[21], v) - dot(VECTORS[23], v))
                + (float) Math.pow(0.5f - 0.2f, b)
                    * c
                    * (dot(VECTORS[23], v) - dot(VECTORS[22], v));
    JsonNode r =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"relevance_feedback\":{\"target\":20,\"feedback\":["
                    + "{\"example\":21,\"score\":0.9},{\"example\":22,\"score\":0.2},"
                    + "{\"example\":23,\"score\":0.5}],\"strategy\":{\"naive\":"
                    + "{\"a\":1,\"b\":2,\"c\":0.5}}}},\"limit\":10,\"params\":{\"exact\":true}}"));
    assertThat(ids(r)).isEqualTo(bruteForce(feedback, 10, Set.of(20L, 21L, 22L, 23L)));
    for (JsonNode p : r) {
      assertThat(p.get("score").doubleValue())
          .isCloseTo(feedback.applyAsDouble(VECTORS[(int) p.get("id").longValue()]), within(1e-3));
    }
    Http.Response empty =
        http.post(
            "/collections/q/points/query",
            "{\"query\":{\"relevance_feedback\":{\"target\":20,\"feedback\":[],"
                + "\"strategy\":{\"naive\":{\"a\":1,\"b\":1,\"c\":1}}}}}");
    assertThat(empty.status()).isEqualTo(400);
    assertThat(empty.error()).contains("feedback elements must be non-empty");
    Http.Response negative =
        http.post(
            "/collections/q/points/query",
            "{\"query\":{\"relevance_feedback\":{\"target\":20,\"feedback\":[{\"example\":21,"
                + "\"score\":0.9}],\"strategy\":{\"naive\":{\"a\":1,\"b\":-1,\"c\":1}}}}}");
    assertThat(negative.status()).isEqualTo(422);
    assertThat(negative.error())
        .isEqualTo(
            "Validation error in JSON body: [internal.query.relevance_feedback.strategy.naive.b:"
                + " value -1.0 invalid, must be 0.0 or larger]");
  }

  @Test
  void mmrWithoutDiversityIsTheSearchAndWithItSpreads() {
    String plain = "{\"query\":{\"nearest\":" + vec(VECTORS[20]) + "},\"limit\":5}";
    String mmr0 =
        "{\"query\":{\"nearest\":"
            + vec(VECTORS[20])
            + ",\"mmr\":{\"diversity\":0,\"candidates_limit\":50}},\"limit\":5}";
    String mmr1 =
        "{\"query\":{\"nearest\":"
            + vec(VECTORS[20])
            + ",\"mmr\":{\"diversity\":0.9,\"candidates_limit\":50}},\"limit\":5}";
    List<Long> base = ids(points(http.post("/collections/q/points/query", plain)));
    assertThat(ids(points(http.post("/collections/q/points/query", mmr0)))).isEqualTo(base);
    List<Long> diverse = ids(points(http.post("/collections/q/points/query", mmr1)));
    assertThat(diverse).hasSize(5).doesNotHaveDuplicates();
    assertThat(diverse.getFirst()).isEqualTo(base.getFirst());
    assertThat(diverse).isNotEqualTo(base);
  }

  @Test
  void orderByAndSampleQueries() {
    JsonNode ordered =
        points(
            http.post(
                "/collections/q/points/query",
                "{\"query\":{\"order_by\":{\"key\":\"price\",\"direction\":\"desc\"}},\"limit\":3,"
                    + "\"with_payload\":true}"));
    assertThat(ordered.get(0).at("/payload/price").intValue()).isEqualTo(100);
    for (int i = 1; i < ordered.size(); i++) {
      assertThat(ordered.get(i).at("/payload/price").intValue())
          .isLessThanOrEqualTo(ordered.get(i - 1).at("/payload/price").intValue());
      assertThat(ordered.get(i).get("score").doubleValue())
          .isEqualTo(ordered.get(i).at("/payload/price").doubleValue());
    }

    Set<String> orders = new HashSet<>();
    for (int i = 0; i < 4; i++) {
      JsonNode s =
          points(
              http.post(
                  "/collections/q/points/query",
                  "{\"query\":{\"sample\":\"random\"},\"limit\":10,"
                      + "\"filter\":{\"must\":{\"key\":\"doc\",\"match\":{\"any\":[0,1]}}}}"));
      assertThat(new HashSet<>(ids(s))).isEqualTo(Set.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L));
      orders.add(ids(s).toString());
    }
    assertThat(orders).hasSizeGreaterThan(1);
  }

  @Test
  void groupsHoldTheBestHitsOfEachValueWithLookups() {
    JsonNode groups =
        http.post(
                "/collections/q/points/query/groups",
                "{\"query\":"
                    + vec(VECTORS[42])
                    + ",\"group_by\":\"doc\",\"group_size\":2,\"limit\":4,\"with_payload\":true,"
                    + "\"params\":{\"exact\":true},\"with_lookup\":\"docs\"}")
            .result()
            .get("groups");
    assertThat(groups).hasSize(4);
    long best = bruteForce(v -> dot(VECTORS[42], v), 1, Set.of()).getFirst();
    assertThat(groups.get(0).get("id").longValue()).isEqualTo(best / 5);
    for (JsonNode g : groups) {
      assertThat(g.get("hits")).hasSize(2);
      for (JsonNode h : g.get("hits")) {
        assertThat(h.at("/payload/doc").longValue()).isEqualTo(g.get("id").longValue());
      }
      assertThat(g.at("/lookup/payload/title").asString()).isEqualTo("doc " + g.get("id"));
    }
    // Arrays put a point in a group per element.
    JsonNode tags =
        http.post(
                "/collections/q/points/search/groups",
                "{\"vector\":"
                    + vec(VECTORS[1])
                    + ",\"group_by\":\"tags\",\"group_size\":3,\"limit\":10}")
            .result()
            .get("groups");
    Set<String> ids = new HashSet<>();
    tags.forEach(g -> ids.add(g.get("id").asString()));
    assertThat(ids).isEqualTo(Set.of("t0", "t1", "t2", "all"));

    Http.Response missing =
        http.post(
            "/collections/q/points/query/groups",
            "{\"query\":"
                + vec(VECTORS[1])
                + ",\"group_by\":\"doc\",\"with_lookup\":{\"collection\":\"nope\"}}");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.error()).contains("Collection nope not found");
  }

  /**
   * As Qdrant's group-by: prefetches are asked for {@code group_size} times their limits, and the
   * groups still open are filled by further requests that leave out the points and the full groups
   * found; a prefetch limit of one still yields every group.
   */
  @Test
  void groupsOfFusedPrefetchesAreFilledByFurtherRequests() {
    ok(
        http.put(
            "/collections/g",
            "{\"vectors\":{\"a\":{\"size\":2,\"distance\":\"Dot\"},"
                + "\"b\":{\"size\":2,\"distance\":\"Dot\"}}}"));
    StringBuilder points = new StringBuilder("{\"points\":[");
    String[] groupOf = {"x", "x", "y", "y", "z", "z"};
    for (int i = 1; i <= 6; i++) {
      // vector a ranks the points by id, vector b in reverse
      points
          .append(i > 1 ? "," : "")
          .append("{\"id\":")
          .append(i)
          .append(",\"vector\":{\"a\":[")
          .append(7 - i)
          .append(",0],\"b\":[")
          .append(i)
          .append(",0]},\"payload\":{\"g\":\"")
          .append(groupOf[i - 1])
          .append("\"}}");
    }
    ok(http.put("/collections/g/points?wait=true", points.append("]}").toString()));
    JsonNode groups =
        http.post(
                "/collections/g/points/query/groups",
                "{\"prefetch\":[{\"query\":[1,0],\"using\":\"a\",\"limit\":1},"
                    + "{\"query\":[1,0],\"using\":\"b\",\"limit\":1}],"
                    + "\"query\":{\"fusion\":\"rrf\"},\"group_by\":\"g\",\"limit\":3,"
                    + "\"group_size\":1}")
            .result()
            .get("groups");
    Set<String> ids = new HashSet<>();
    for (JsonNode g : groups) {
      ids.add(g.get("id").asString());
      assertThat(g.get("hits")).hasSize(1);
      // each hit tops one of its request's two lists: 1 / (k + 0) with k = 2
      assertThat(g.at("/hits/0/score").doubleValue()).isCloseTo(0.5, within(1e-6));
    }
    assertThat(ids).containsExactlyInAnyOrder("x", "y", "z");
  }

  @Test
  void distanceMatrixPairsAndOffsetsAreExactAmongTheSample() {
    String body =
        "{\"sample\":6,\"limit\":2,\"filter\":{\"must\":{\"key\":\"doc\",\"match\":{\"value\":3}}}}";
    JsonNode pairs = http.post("/collections/q/points/search/matrix/pairs", body).result();
    // doc 3 holds points 15..19: the five are the whole sample, each with its 2 nearest others
    assertThat(pairs.get("pairs")).hasSize(10);
    for (JsonNode p : pairs.get("pairs")) {
      int a = (int) p.get("a").longValue();
      int b = (int) p.get("b").longValue();
      assertThat(p.get("score").doubleValue()).isCloseTo(dot(VECTORS[a], VECTORS[b]), within(1e-4));
    }
    int a = (int) pairs.at("/pairs/0/a").longValue();
    Set<Long> others = new HashSet<>(List.of(15L, 16L, 17L, 18L, 19L));
    others.remove((long) a);
    List<Long> expected =
        others.stream()
            .sorted(
                Comparator.comparingDouble((Long o) -> -dot(VECTORS[a], VECTORS[(int) (long) o])))
            .limit(2)
            .toList();
    assertThat(List.of(pairs.at("/pairs/0/b").longValue(), pairs.at("/pairs/1/b").longValue()))
        .isEqualTo(expected);
    JsonNode offsets = http.post("/collections/q/points/search/matrix/offsets", body).result();
    assertThat(ids(offsets.get("ids"))).containsExactly(15L, 16L, 17L, 18L, 19L);
    assertThat(offsets.get("offsets_row")).hasSize(10);
    assertThat(offsets.get("scores").get(0).doubleValue())
        .isCloseTo(pairs.at("/pairs/0/score").doubleValue(), within(1e-6));
  }

  @Test
  void facetsCountPointsPerIndexedValue() {
    JsonNode hits =
        http.post(
                "/collections/q/facet",
                "{\"key\":\"tags\",\"filter\":{\"must\":{\"key\":\"doc\",\"match\":{\"any\":[0,1]}}}}")
            .result()
            .get("hits");
    // points 0..9: "all" on each, t0 on 0,3,6,9, t1 on 1,4,7, t2 on 2,5,8
    assertThat(hits.toString())
        .isEqualTo(
            "[{\"value\":\"all\",\"count\":10},{\"value\":\"t0\",\"count\":4},"
                + "{\"value\":\"t1\",\"count\":3},{\"value\":\"t2\",\"count\":3}]");
    JsonNode prices =
        http.post("/collections/q/facet", "{\"key\":\"price\",\"limit\":1}").result().get("hits");
    assertThat(prices).hasSize(1);
    assertThat(prices.at("/0/count").longValue()).isEqualTo(3); // 300 points over 101 prices
    Http.Response r = http.post("/collections/q/facet", "{\"key\":\"doc\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("Index required but not found for \"doc\"");
    Http.Response zero = http.post("/collections/q/facet", "{\"key\":\"price\",\"limit\":0}");
    assertThat(zero.status()).isEqualTo(422);
    assertThat(zero.error()).contains("limit: value 0 invalid, must be 1 or larger");
  }

  /**
   * Qdrant's formula query: the scores of the prefetch, payload values and conditions combined,
   * highest first; each score equals the formula evaluated here on the prefetch's score.
   */
  @Test
  void aFormulaRescoresThePrefetchWithPayloadAndConditions() {
    float[] q = VECTORS[11];
    Http.Response plain =
        http.post("/collections/q/points/query", "{\"query\":" + vec(q) + ",\"limit\":40}");
    ok(plain);
    Map<Long, Double> score = new HashMap<>();
    for (JsonNode p : plain.result().get("points")) {
      score.put(p.get("id").asLong(), p.get("score").asDouble());
    }
    Http.Response r =
        http.post(
            "/collections/q/points/query",
            "{\"prefetch\":{\"query\":"
                + vec(q)
                + ",\"limit\":40},\"query\":{\"formula\":{\"sum\":[\"$score\","
                + "{\"mult\":[0.01,\"price\"]},{\"mult\":[5,{\"key\":\"tags\","
                + "\"match\":{\"value\":\"t0\"}}]}]}},\"limit\":40,\"with_payload\":true}");
    ok(r);
    JsonNode points = r.result().get("points");
    assertThat(points).hasSize(40);
    double previous = Double.MAX_VALUE;
    for (JsonNode p : points) {
      long id = p.get("id").asLong();
      double expected = score.get(id) + 0.01 * ((id * 37) % 101) + (id % 3 == 0 ? 5 : 0);
      assertThat(p.get("score").asDouble()).as("point %d", id).isCloseTo(expected, within(1e-3));
      assertThat(p.get("score").asDouble()).isLessThanOrEqualTo(previous);
      previous = p.get("score").asDouble();
      assertThat(p.get("payload").get("price").asLong()).isEqualTo((id * 37) % 101);
    }
    Http.Response missing =
        http.post(
            "/collections/q/points/query",
            "{\"prefetch\":{\"query\":" + vec(q) + "},\"query\":{\"formula\":\"nope\"}}");
    assertThat(missing.status()).isEqualTo(400);
    assertThat(missing.error())
        .isEqualTo(
            "Bad request: Expected number value for nope in the payload and/or in the formula"
                + " defaults. Error: No value found in a payload nor defaults");
    Http.Response withDefault =
        http.post(
            "/collections/q/points/query",
            "{\"prefetch\":{\"query\":"
                + vec(q)
                + "},\"query\":{\"formula\":\"nope\",\"defaults\":{\"nope\":2.5}},\"limit\":3}");
    ok(withDefault);
    assertThat(withDefault.result().get("points").get(0).get("score").asDouble()).isEqualTo(2.5);
  }

  @Test
  void badQueriesNameTheProblem() {
    Http.Response r =
        http.post("/collections/q/points/query", "{\"prefetch\":[{\"query\":[1,0,0,0,0,0,0,0]}]}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error())
        .isEqualTo(
            "Bad request: A query is needed to merge the prefetches. Can't have prefetches without"
                + " defining a query.");
    r = http.post("/collections/q/points/query", "{\"score_threshold\":1}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("A query is needed to use the score_threshold");
    r = http.post("/collections/q/points/query", "{\"query\":{\"formula\":{\"sum\":[1]}}}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("a formula query rescores the results of its prefetches");
    // Qdrant's body validation: 422 with its path and wording
    r = http.post("/collections/q/points/query", "{\"query\":[1,0,0,0,0,0,0,0],\"limit\":0}");
    assertThat(r.status()).isEqualTo(422);
    assertThat(r.error())
        .isEqualTo(
            "Validation error in JSON body: [internal.limit: value 0 invalid, must be 1 or larger]");
    r =
        http.post(
            "/collections/q/points/query",
            "{\"query\":[1,0,0,0,0,0,0,0],\"params\":{\"hnsw_ef\":0}}");
    assertThat(r.status()).isEqualTo(422);
    assertThat(r.error()).contains("Validation error").contains("hnsw_ef");
    r = http.post("/collections/q/points/query", "{\"query\":{\"recommend\":{\"positive\":[]}}}");
    assertThat(r.status()).isEqualTo(422);
    assertThat(r.error()).contains("At least one positive or negative vector/id must be provided");
    r = http.post("/collections/q/points/query", "{\"query\":{\"recommend\":{\"negative\":[3]}}}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("Positive vectors should not be empty with `average` strategy");
    r = http.post("/collections/q/points/query", "{\"query\":{\"fusion\":\"rrf\"}}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("needs prefetches");
    r =
        http.post(
            "/collections/q/points/query",
            "{\"prefetch\":[{\"query\":[1,0,0,0,0,0,0,0]}],\"query\":{\"fusion\":\"rrf\"},"
                + "\"using\":\"x\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error())
        .isEqualTo("Bad request: Fusion queries cannot be combined with the 'using' field.");
    r =
        http.post(
            "/collections/q/points/query", "{\"query\":{\"fusion\":\"rrf\"},\"using\":\"x\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error())
        .isEqualTo("Bad request: Fusion queries cannot be combined with the 'using' field.");
    // as Qdrant: a prefetch's error (an example that does not exist) comes first
    r =
        http.post(
            "/collections/q/points/query",
            "{\"prefetch\":[{\"query\":{\"recommend\":{\"positive\":[987654]}}}],"
                + "\"query\":{\"fusion\":\"rrf\"},\"using\":\"x\"}");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.error()).isEqualTo("Not found: No point with id 987654 found");
    r =
        http.post(
            "/collections/q/points/query",
            "{\"query\":{\"recommend\":{\"positive\":[1],\"strategy\":\"median\"}}}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("[query.recommend.strategy=\"median\"]");
  }

  // ---- helpers ------------------------------------------------------------------------------

  /**
   * The ids of the {@code k} best points by {@code score}, leaving out {@code skip}; ties by id.
   */
  static List<Long> bruteForce(ToDoubleFunction<float[]> score, int k, Set<Long> skip) {
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < N; i++) {
      if (!skip.contains((long) i)) {
        all.add(i);
      }
    }
    all.sort(
        Comparator.comparingDouble((Integer i) -> -(float) score.applyAsDouble(VECTORS[i]))
            .thenComparing(i -> i));
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < k; i++) {
      out.add((long) all.get(i));
    }
    return out;
  }

  static double dot(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += (double) a[i] * b[i];
    }
    return s;
  }

  static double scaledSigmoid(double x) {
    return 0.5 * (x / (1 + Math.abs(x)) + 1);
  }

  static String vec(float[] v) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < v.length; i++) {
      sb.append(i == 0 ? "" : ",").append(v[i]);
    }
    return sb.append(']').toString();
  }

  static JsonNode points(Http.Response r) {
    ok(r);
    return r.result().get("points");
  }

  static List<Long> ids(JsonNode points) {
    List<Long> out = new ArrayList<>();
    points.forEach(p -> out.add(p.isObject() ? p.get("id").longValue() : p.longValue()));
    return out;
  }

  static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }
}
