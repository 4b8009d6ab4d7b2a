package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Payload indexes, BM25 text queries, hybrid fusion and {@code order_by} over REST against a real
 * server process, including a restart with the indexes on disk.
 */
class PayloadIndexIT extends OneServerPerClass {

  private static final String[] DOCS = {
    "the quick brown fox jumps over the lazy dog",
    "quick quick quick fox",
    "a lazy afternoon in the park",
    "brown bread and butter",
    "vector databases on flash storage",
  };

  @BeforeAll
  static void start() {
    Http.Response r =
        http.put("/collections/docs", "{\"vectors\":{\"size\":4,\"distance\":\"Cosine\"}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    StringBuilder pts = new StringBuilder("{\"points\":[");
    for (int i = 0; i < DOCS.length; i++) {
      if (i > 0) {
        pts.append(',');
      }
      pts.append("{\"id\":")
          .append(i + 1)
          .append(",\"vector\":[1,")
          .append(i)
          .append(",0,0],\"payload\":{\"body\":\"")
          .append(DOCS[i])
          .append("\",\"tenant\":\"")
          .append(i % 2 == 0 ? "a" : "b")
          .append("\",\"price\":")
          .append(10 * (DOCS.length - i))
          .append(",\"day\":\"2024-05-0")
          .append(i + 1)
          .append("T12:00:00Z\"}}");
    }
    pts.append("]}");
    r = http.put("/collections/docs/points?wait=true", pts.toString());
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }

  private static Http.Response index(String body) {
    return http.put("/collections/docs/index?wait=true", body);
  }

  private static List<Long> ids(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    JsonNode pts = r.result().has("points") ? r.result().get("points") : r.result();
    List<Long> out = new ArrayList<>();
    pts.forEach(p -> out.add(p.get("id").asLong()));
    return out;
  }

  @Test
  void indexesTextQueriesFusionAndOrderBySurviveARestart() {
    Http.Response r = index("{\"field_name\":\"tenant\",\"field_schema\":\"keyword\"}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    assertThat(r.result().get("status").asString()).isEqualTo("completed");
    assertThat(
            index(
                    "{\"field_name\":\"body\",\"field_schema\":{\"type\":\"text\",\"tokenizer\":\"word\",\"lowercase\":true}}")
                .status())
        .isEqualTo(200);
    assertThat(index("{\"field_name\":\"price\",\"field_schema\":\"integer\"}").status())
        .isEqualTo(200);
    assertThat(index("{\"field_name\":\"day\",\"field_schema\":\"datetime\"}").status())
        .isEqualTo(200);
    checkAll();

    // the indexes persist: after a SIGKILL and restart, the same answers
    http.post("/collections/docs/flush", "");
    server.kill();
    server.start();
    http = new Http(server.url());
    checkAll();

    r = http.delete("/collections/docs/index/price?wait=true");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    assertThat(http.get("/collections/docs").result().get("payload_schema").has("price")).isFalse();
    r = http.post("/collections/docs/points/scroll", "{\"order_by\":\"price\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("[key=price]");
  }

  private static void checkAll() {
    JsonNode schema = http.get("/collections/docs").result().get("payload_schema");
    assertThat(schema.at("/tenant/data_type").asString()).isEqualTo("keyword");
    assertThat(schema.at("/tenant/points").asLong()).isEqualTo(5);
    assertThat(schema.at("/body/data_type").asString()).isEqualTo("text");
    assertThat(schema.at("/body/params/tokenizer").asString()).isEqualTo("word");

    // filters over indexes
    assertThat(
            http.post(
                    "/collections/docs/points/count",
                    "{\"filter\":{\"must\":[{\"key\":\"tenant\",\"match\":{\"value\":\"a\"}}]},\"exact\":true}")
                .result()
                .get("count")
                .asLong())
        .isEqualTo(3);
    assertThat(
            ids(
                http.post(
                    "/collections/docs/points/scroll",
                    "{\"filter\":{\"must\":[{\"key\":\"body\",\"match\":{\"text\":\"FOX quick\"}}]}}")))
        .containsExactly(1L, 2L);

    // BM25 text query: term frequency and length decide
    assertThat(
            ids(
                http.post(
                    "/collections/docs/points/query",
                    "{\"query\":{\"text\":\"quick fox\"},\"using\":\"body\",\"limit\":5}")))
        .containsExactly(2L, 1L);
    assertThat(
            ids(
                http.post(
                    "/collections/docs/points/query",
                    "{\"query\":{\"text\":\"lazy\",\"model\":\"qdrant/bm25\"},\"using\":\"body\",\"filter\":{\"must\":{\"key\":\"tenant\",\"match\":{\"value\":\"b\"}}}}")))
        .isEmpty();

    // hybrid: a vector list [5,4,3,2,1] and a text list [2,1]; RRF with k=2 (Qdrant's 1/(k+pos),
    // pos from 0) scores 2 with 1/5+1/2, 1 with 1/6+1/3 = 1/2 and 5 with 1/2 (ties go by id)
    String hybrid =
        "{\"prefetch\":[{\"query\":[1,4,0,0],\"limit\":5},"
            + "{\"query\":{\"text\":\"quick fox\"},\"using\":\"body\",\"limit\":5}],"
            + "\"query\":{\"fusion\":\"%s\"},\"limit\":3,\"with_payload\":[\"tenant\"]}";
    Http.Response rrf =
        http.post("/collections/docs/points/query", String.format(Locale.ROOT, hybrid, "rrf"));
    assertThat(ids(rrf)).containsExactly(2L, 1L, 5L);
    assertThat(rrf.result().at("/points/0/payload/tenant").asString()).isEqualTo("b");
    assertThat(rrf.result().at("/points/0/payload").has("body")).isFalse();
    Http.Response dbsf =
        http.post("/collections/docs/points/query", String.format(Locale.ROOT, hybrid, "dbsf"));
    assertThat(ids(dbsf)).hasSize(3).contains(2L);

    // order_by over integer and datetime indexes
    assertThat(
            ids(
                http.post(
                    "/collections/docs/points/scroll",
                    "{\"order_by\":{\"key\":\"price\",\"direction\":\"asc\"},\"limit\":3}")))
        .containsExactly(5L, 4L, 3L);
    Http.Response desc =
        http.post(
            "/collections/docs/points/scroll",
            "{\"order_by\":{\"key\":\"day\",\"direction\":\"desc\",\"start_from\":\"2024-05-03T12:00:00Z\"},\"limit\":10}");
    assertThat(ids(desc)).containsExactly(3L, 2L, 1L);
    assertThat(desc.result().at("/points/0/order_value").isIntegralNumber()).isTrue();
    assertThat(desc.result().get("next_page_offset").isNull()).isTrue();
  }

  @Test
  void badRequestsNameTheOffendingValue() {
    Http.Response r = index("{\"field_name\":\"x\",\"field_schema\":\"geo-ish\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("[type=geo-ish]");
    r =
        index(
            "{\"field_name\":\"x\",\"field_schema\":{\"type\":\"text\",\"tokenizer\":\"klingon\"}}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("[tokenizer=klingon]");
    r = index("{\"field_schema\":\"keyword\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("field_name");
    r = http.put("/collections/nope/index", "{\"field_name\":\"x\",\"field_schema\":\"keyword\"}");
    assertThat(r.status()).isEqualTo(404);
    r =
        http.post(
            "/collections/docs/points/query",
            "{\"query\":{\"text\":\"fox\"},\"using\":\"tenant_nope\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("[field=tenant_nope]");
    r =
        http.post(
            "/collections/docs/points/query",
            "{\"prefetch\":[{\"query\":[1,0,0,0]}],\"query\":{\"fusion\":\"max\"}}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("[fusion=\"max\"]");
    r =
        http.post(
            "/collections/docs/points/scroll",
            "{\"order_by\":{\"key\":\"price\",\"direction\":\"sideways\"}}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("[direction=\"sideways\"]");
  }
}
