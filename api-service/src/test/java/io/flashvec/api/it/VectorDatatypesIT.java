package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's {@code datatype} of dense vectors against a real server: {@code uint8} values are
 * truncated and clamped to 0..255, {@code float16} ones rounded to half precision, on every write
 * path (points list, batch, vector update) and for queries; points come back and score as the
 * converted values, also after a restart that replays the WAL. Also Qdrant's configuration {@code
 * warnings} for an {@code inline_storage} that changes nothing.
 */
class VectorDatatypesIT extends OneServerPerClass {

  @Test
  void valuesAreConvertedOnEveryWriteAndKeptAcrossARestart() {
    ok(
        http.put(
            "/collections/dt",
            "{\"vectors\": {\"mv\": {\"size\": 4, \"distance\": \"Dot\", \"datatype\": \"uint8\","
                + " \"multivector_config\": {\"comparator\": \"max_sim\"}},"
                + " \"half\": {\"size\": 2, \"distance\": \"Euclid\", \"datatype\": \"float16\"},"
                + " \"byte\": {\"size\": 2, \"distance\": \"Dot\", \"datatype\": \"uint8\"}}}"));
    JsonNode vectors = http.get("/collections/dt").result().at("/config/params/vectors");
    assertThat(vectors.at("/mv/datatype").asString()).isEqualTo("uint8");
    assertThat(vectors.at("/half/datatype").asString()).isEqualTo("float16");
    ok(
        http.put(
            "/collections/dt/points?wait=true",
            "{\"points\": [{\"id\": 1, \"vector\": {\"mv\": [[256.19, 1.81, 2.75, -3.11],"
                + " [0.5, 7.9, 300, 4]], \"half\": [0.1, 70000.0e-1], \"byte\": [2.9, 3.2]}}]}"));
    ok(
        http.put(
            "/collections/dt/points?wait=true",
            "{\"batch\": {\"ids\": [2], \"vectors\": {\"byte\": [[9.99, -1]],"
                + " \"half\": [[1.0001, 2049]]}}}"));
    for (int round = 0; round < 2; round++) {
      String when = round == 0 ? "written" : "replayed from the WAL";
      JsonNode p1 = http.get("/collections/dt/points/1").result().get("vector");
      assertThat(p1.get("mv").toString())
          .as(when)
          .isEqualTo("[[255.0,1.0,2.0,0.0],[0.0,7.0,255.0,4.0]]");
      assertThat(p1.at("/half/0").floatValue())
          .as(when)
          .isEqualTo(Float.float16ToFloat(Float.floatToFloat16(0.1f)));
      assertThat(p1.at("/half/1").floatValue()).as(when).isEqualTo(7000f);
      assertThat(p1.get("byte").toString()).as(when).isEqualTo("[2.0,3.0]");
      JsonNode p2 = http.get("/collections/dt/points/2").result().get("vector");
      assertThat(p2.get("byte").toString()).as(when).isEqualTo("[9.0,0.0]");
      // 2049 is not a half-precision value: ties to even give 2048
      assertThat(p2.get("half").toString()).as(when).isEqualTo("[1.0,2048.0]");
      // a query is converted as well: [0.7, 2.2] scores as [0, 2] (as given it would score 8)
      JsonNode hit =
          http.post(
                  "/collections/dt/points/query",
                  "{\"query\": [0.7, 2.2], \"using\": \"byte\", \"limit\": 1}")
              .result()
              .at("/points/0");
      assertThat(hit.path("id").asLong()).as(when).isEqualTo(1);
      assertThat(hit.path("score").floatValue()).as(when).isCloseTo(6, offset(1e-4f));
      if (round == 0) {
        // the vector update path converts too
        ok(
            http.put(
                "/collections/dt/points/vectors?wait=true",
                "{\"points\": [{\"id\": 2, \"vector\": {\"byte\": [9.99, 0.5]}}]}"));
        assertThat(http.get("/collections/dt/points/2").result().at("/vector/byte").toString())
            .isEqualTo("[9.0,0.0]");
        server.restart();
      }
    }
  }

  @Test
  void settingsThatCannotBeHonouredAreRefused() {
    Http.Response cosine =
        http.put(
            "/collections/bad",
            "{\"vectors\": {\"size\": 2, \"distance\": \"Cosine\", \"datatype\": \"uint8\"}}");
    assertThat(cosine.status()).isEqualTo(400);
    assertThat(cosine.error()).contains("uint8 is not supported with Cosine");
    Http.Response half =
        http.put(
            "/collections/half",
            "{\"vectors\": {\"size\": 2, \"distance\": \"Dot\", \"datatype\": \"float16\"}}");
    ok(half);
    Http.Response big =
        http.put(
            "/collections/half/points?wait=true",
            "{\"points\": [{\"id\": 1," + " \"vector\": [1, 70000]}]}");
    assertThat(big.status()).isEqualTo(400);
    assertThat(big.error()).contains("float16 range");
  }

  @Test
  void anInlineStorageThatChangesNothingIsWarnedAbout() {
    ok(
        http.put(
            "/collections/w1",
            "{\"vectors\": {\"v\": {\"size\": 4, \"distance\": \"Dot\","
                + " \"hnsw_config\": {\"inline_storage\": true}, \"multivector_config\":"
                + " {\"comparator\": \"max_sim\"}}}}"));
    JsonNode w1 = http.get("/collections/w1").result();
    assertThat(w1.path("warnings")).hasSize(1);
    assertThat(w1.at("/warnings/0/message").asString()).contains("'v'", "multivectors");
    ok(
        http.put(
            "/collections/w2",
            "{\"vectors\": {\"v\": {\"size\": 4, \"distance\": \"Dot\","
                + " \"hnsw_config\": {\"inline_storage\": true}}}}"));
    JsonNode w2 = http.get("/collections/w2").result();
    assertThat(w2.path("warnings")).hasSize(1);
    assertThat(w2.at("/warnings/0/message").asString()).contains("'v'", "requires quantization");
    ok(http.put("/collections/w3", "{\"vectors\": {\"v\": {\"size\": 4, \"distance\": \"Dot\"}}}"));
    assertThat(http.get("/collections/w3").result().has("warnings")).isFalse();
  }

  private static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }
}
