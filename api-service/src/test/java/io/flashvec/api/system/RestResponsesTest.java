package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class RestResponsesTest {

  private static void record(
      SimpleMeterRegistry r, String method, String uri, String status, String exception, int ms) {
    Timer.builder("http.server.requests")
        .tags("method", method, "uri", uri, "status", status, "exception", exception)
        .register(r)
        .record(Duration.ofMillis(ms));
  }

  @Test
  void requestTimersAreSummedByEndpointAndStatusWithQdrantsTemplateNames() {
    SimpleMeterRegistry r = new SimpleMeterRegistry();
    record(r, "PUT", "/collections/{name}/points", "200", "none", 2);
    record(r, "PUT", "/collections/{name}/points", "200", "none", 4);
    record(r, "PUT", "/collections/{name}/points", "400", "none", 1);
    record(r, "PUT", "/collections/{name}/points", "400", "InvalidInputException", 3);
    record(r, "DELETE", "/collections/{name}/index/{field}", "200", "none", 1);
    record(r, "POST", "NOT_FOUND", "404", "none", 1);
    JsonNode rest = ServiceInfoController.restResponses(r.find("http.server.requests").timers());
    JsonNode put = rest.at("/responses/PUT ~1collections~1{collection_name}~1points");
    assertThat(put.at("/200/count").asLong()).isEqualTo(2);
    assertThat(put.at("/200/avg_duration_micros").asDouble()).isEqualTo(3000.0);
    assertThat(put.at("/200/total_duration_micros").asLong()).isEqualTo(6000);
    assertThat(put.at("/400/count").asLong()).isEqualTo(2);
    assertThat(put.at("/400/max_duration_micros").asDouble()).isEqualTo(3000.0);
    assertThat(
            rest.at("/responses").has("DELETE /collections/{collection_name}/index/{field_name}"))
        .isTrue();
    assertThat(rest.at("/responses").size()).as("no endpoint for an unknown route").isEqualTo(2);
  }

  @Test
  void anonymizedSizesKeepTheirLeadingDigitsAsQdrantRoundsThem() {
    assertThat(ServiceInfoController.anonymized(0)).isZero();
    assertThat(ServiceInfoController.anonymized(9_999)).isEqualTo(9_999);
    assertThat(ServiceInfoController.anonymized(123_456)).isEqualTo(123_450);
    assertThat(ServiceInfoController.anonymized(16_384_123)).isEqualTo(16_384_000);
  }
}
