package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's geo, {@code values_count}, {@code text_any}, {@code phrase}, {@code prefix}, {@code
 * slice} and field-form {@code is_empty} conditions over REST against a real server process: the
 * same points without a payload index, with one, and after a SIGKILL and restart; bad conditions
 * answer 400 or 422 naming the value.
 */
class FilterConditionsIT extends OneServerPerClass {

  private static final String[] POINTS = {
    "{\"id\":1,\"vector\":[1,0,0,0],\"payload\":{\"city\":\"Berlin\","
        + "\"location\":{\"lon\":13.405,\"lat\":52.52},\"url\":\"https://qdrant.tech\","
        + "\"text\":\"the quick brown fox\"}}",
    "{\"id\":2,\"vector\":[1,1,0,0],\"payload\":{\"city\":[\"Berlin\",\"London\"],"
        + "\"location\":[{\"lon\":-0.1276,\"lat\":51.5072},{\"lon\":13.405,\"lat\":52.52}],"
        + "\"url\":[\"http://example.com\",\"https://qdrant.tech/docs\"],"
        + "\"text\":[\"quick\",\"brown fox jumps\"]}}",
    "{\"id\":3,\"vector\":[1,2,0,0],\"payload\":{\"city\":\"Moscow\","
        + "\"location\":{\"lon\":37.6173,\"lat\":55.7558},\"url\":\"ftp://files.example.com\","
        + "\"text\":\"a quick brown dog\"}}",
    "{\"id\":4,\"vector\":[1,3,0,0],\"payload\":{\"city\":null,\"text\":\"brown quick fox\"}}",
    "{\"id\":5,\"vector\":[1,4,0,0],\"payload\":{\"city\":[],"
        + "\"location\":{\"lon\":179.5,\"lat\":-16.5}}}",
  };

  @BeforeAll
  static void start() {
    Http.Response r =
        http.put("/collections/c", "{\"vectors\":{\"size\":4,\"distance\":\"Cosine\"}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    r =
        http.put(
            "/collections/c/points?wait=true", "{\"points\":[" + String.join(",", POINTS) + "]}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }

  private static List<Long> scroll(String condition) {
    Http.Response r =
        http.post(
            "/collections/c/points/scroll",
            "{\"limit\":100,\"filter\":{\"must\":[" + condition + "]}}");
    assertThat(r.status()).as("%s: %s", condition, r.raw()).isEqualTo(200);
    List<Long> out = new ArrayList<>();
    r.result().get("points").forEach(p -> out.add(p.get("id").asLong()));
    Http.Response count =
        http.post(
            "/collections/c/points/count",
            "{\"exact\":true,\"filter\":{\"must\":[" + condition + "]}}");
    assertThat(count.result().get("count").asLong()).as(condition).isEqualTo(out.size());
    return out;
  }

  private static final String NEAR_BERLIN =
      "{\"key\":\"location\",\"geo_radius\":{\"center\":{\"lon\":13.4,\"lat\":52.5},"
          + "\"radius\":5000}}";
  private static final String EUROPE =
      "{\"key\":\"location\",\"geo_bounding_box\":{\"top_left\":{\"lon\":-5,\"lat\":56},"
          + "\"bottom_right\":{\"lon\":20,\"lat\":50}}}";
  private static final String ACROSS_THE_ANTIMERIDIAN =
      "{\"key\":\"location\",\"geo_bounding_box\":{\"top_left\":{\"lon\":170,\"lat\":0},"
          + "\"bottom_right\":{\"lon\":-170,\"lat\":-30}}}";
  private static final String EAST_OF_BERLIN_WITHOUT_BERLIN =
      "{\"key\":\"location\",\"geo_polygon\":{\"exterior\":{\"points\":[{\"lon\":10,\"lat\":50},"
          + "{\"lon\":40,\"lat\":50},{\"lon\":40,\"lat\":60},{\"lon\":10,\"lat\":60},"
          + "{\"lon\":10,\"lat\":50}]},\"interiors\":[{\"points\":[{\"lon\":12,\"lat\":52},"
          + "{\"lon\":14,\"lat\":52},{\"lon\":14,\"lat\":53},{\"lon\":12,\"lat\":53},"
          + "{\"lon\":12,\"lat\":52}]}]}}";

  private static void checkAll(boolean indexed) {
    assertThat(scroll(NEAR_BERLIN)).containsExactly(1L, 2L);
    assertThat(scroll(EUROPE)).containsExactly(1L, 2L);
    assertThat(scroll(ACROSS_THE_ANTIMERIDIAN)).containsExactly(5L);
    assertThat(scroll(EAST_OF_BERLIN_WITHOUT_BERLIN)).containsExactly(3L);
    assertThat(scroll("{\"key\":\"city\",\"values_count\":{\"gte\":2}}")).containsExactly(2L);
    assertThat(scroll("{\"key\":\"city\",\"values_count\":{\"lt\":1}}")).containsExactly(4L, 5L);
    assertThat(scroll("{\"key\":\"url\",\"match\":{\"prefix\":\"https://qdrant.\"}}"))
        .containsExactly(1L, 2L);
    assertThat(scroll("{\"key\":\"url\",\"match\":{\"prefix\":\"\"}}")).containsExactly(1L, 2L, 3L);
    assertThat(scroll("{\"key\":\"city\",\"is_empty\":true}")).containsExactly(4L, 5L);
    // without a text index: substrings; with one (phrase_matching): tokens in order
    assertThat(scroll("{\"key\":\"text\",\"match\":{\"phrase\":\"quick brown\"}}"))
        .containsExactly(1L, 3L);
    assertThat(scroll("{\"key\":\"text\",\"match\":{\"text_any\":\"fox cat\"}}"))
        .containsExactly(1L, 2L, 4L);
    if (indexed) {
      assertThat(scroll("{\"key\":\"text\",\"match\":{\"phrase\":\"QUICK Brown\"}}"))
          .containsExactly(1L, 3L);
      assertThat(scroll("{\"key\":\"text\",\"match\":{\"text_any\":\"Fox zebra\"}}"))
          .containsExactly(1L, 2L, 4L);
    }
    List<Long> all = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      all.addAll(scroll("{\"slice\":{\"total\":3,\"index\":" + i + "}}"));
    }
    assertThat(all).containsExactlyInAnyOrder(1L, 2L, 3L, 4L, 5L);
  }

  @Test
  void conditionsAnswerAlikeWithoutAndWithIndexesAndAfterARestart() {
    checkAll(false);
    for (String body :
        new String[] {
          "{\"field_name\":\"location\",\"field_schema\":\"geo\"}",
          "{\"field_name\":\"url\",\"field_schema\":{\"type\":\"keyword\",\"prefix\":true}}",
          "{\"field_name\":\"text\",\"field_schema\":{\"type\":\"text\",\"phrase_matching\":true}}",
          "{\"field_name\":\"city\",\"field_schema\":\"keyword\"}"
        }) {
      Http.Response r = http.put("/collections/c/index?wait=true", body);
      assertThat(r.status()).as(r.raw()).isEqualTo(200);
    }
    JsonNode schema = http.get("/collections/c").result().get("payload_schema");
    assertThat(schema.at("/location/data_type").asString()).isEqualTo("geo");
    assertThat(schema.at("/location/points").asLong()).isEqualTo(4);
    assertThat(schema.at("/url/params/prefix").asBoolean()).isTrue();
    assertThat(schema.at("/text/params/phrase_matching").asBoolean()).isTrue();
    checkAll(true);

    http.post("/collections/c/flush", "");
    server.kill();
    server.start();
    http = new Http(server.url());
    checkAll(true);
  }

  @Test
  void badConditionsNameTheValue() {
    Http.Response r =
        http.post(
            "/collections/c/points/scroll",
            "{\"filter\":{\"must\":[{\"key\":\"location\",\"geo_radius\":{\"center\":"
                + "{\"lon\":200,\"lat\":10},\"radius\":10}}]}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(400);
    assertThat(r.error())
        .contains("filter.must[0].geo_radius.center")
        .contains("lon within [-180, 180]")
        .contains("{\"lon\":200,\"lat\":10}");
    r =
        http.post(
            "/collections/c/points/scroll",
            "{\"filter\":{\"must\":[{\"key\":\"location\",\"geo_polygon\":{\"exterior\":"
                + "{\"points\":[{\"lon\":1,\"lat\":1},{\"lon\":2,\"lat\":1},{\"lon\":1,\"lat\":1}]}}}]}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(400);
    assertThat(r.error()).contains("the size must be at least 4, got 3");
    r =
        http.post(
            "/collections/c/points/scroll",
            "{\"filter\":{\"must\":[{\"slice\":{\"total\":4,\"index\":4}}]}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(422);
    assertThat(r.error()).contains("Slice index must be less than the total number of slices");
    r = http.post("/collections/c/points/count", "{\"filter\":{\"must\":[{\"key\":\"city\"}]}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(422);
    assertThat(r.error()).contains("At least one field condition must be specified");
    r =
        http.put(
            "/collections/c/index?wait=true",
            "{\"field_name\":\"n\",\"field_schema\":{\"type\":\"integer\",\"prefix\":true}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(400);
    assertThat(r.error()).contains("[prefix=true]");
  }
}
