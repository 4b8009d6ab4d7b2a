package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.api.metrics.RestResponses;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class RestResponsesTest {

  private static RestResponses sample() {
    RestResponses r = new RestResponses();
    String put = "PUT " + RestResponses.qdrantTemplate("/collections/{name}/points");
    r.record("a", put, 200, 2000);
    r.record("b", put, 200, 4000);
    r.record("a", put, 400, 1000);
    r.record("a", put, 400, 3000);
    r.record(
        RestResponses.NONE,
        "DELETE " + RestResponses.qdrantTemplate("/collections/{name}/index/{field}"),
        404,
        1000);
    return r;
  }

  @Test
  void responsesAreSummedByEndpointAndStatusWithQdrantsTemplateNames() {
    JsonNode rest = ServiceInfoController.restResponses(sample(), false);
    JsonNode put = rest.at("/responses/PUT ~1collections~1{collection_name}~1points");
    assertThat(put.at("/200/count").asLong()).isEqualTo(2);
    assertThat(put.at("/200/avg_duration_micros").asDouble()).isEqualTo(3000.0);
    assertThat(put.at("/200/min_duration_micros").asDouble()).isEqualTo(2000.0);
    assertThat(put.at("/200/total_duration_micros").asLong()).isEqualTo(6000);
    assertThat(put.at("/200/last_responded").asString()).endsWith("Z");
    assertThat(put.at("/400/count").asLong()).isEqualTo(2);
    assertThat(put.at("/400/max_duration_micros").asDouble()).isEqualTo(3000.0);
    assertThat(
            rest.at("/responses").has("DELETE /collections/{collection_name}/index/{field_name}"))
        .isTrue();
    assertThat(rest.has("per_collection_responses")).as("only when asked").isFalse();
  }

  @Test
  void perCollectionResponsesKeepEachCollectionApartAndLeaveOutRoutesWithoutOne() {
    JsonNode per =
        ServiceInfoController.restResponses(sample(), true).get("per_collection_responses");
    assertThat(per.propertyNames()).containsExactly("a", "b");
    String put = "PUT /collections/{collection_name}/points";
    assertThat(per.get("a").get(put).get("200").get("count").asLong()).isEqualTo(1);
    assertThat(per.get("a").get(put).get("400").get("count").asLong()).isEqualTo(2);
    assertThat(per.get("b").get(put).get("200").get("total_duration_micros").asLong())
        .isEqualTo(4000);
  }

  @Test
  void anonymizedSizesKeepTheirLeadingDigitsAsQdrantRoundsThem() {
    assertThat(ServiceInfoController.anonymized(0)).isZero();
    assertThat(ServiceInfoController.anonymized(9_999)).isEqualTo(9_999);
    assertThat(ServiceInfoController.anonymized(123_456)).isEqualTo(123_450);
    assertThat(ServiceInfoController.anonymized(16_384_123)).isEqualTo(16_384_000);
  }
}
