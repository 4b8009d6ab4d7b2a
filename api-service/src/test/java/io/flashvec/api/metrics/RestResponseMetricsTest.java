package io.flashvec.api.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RestResponseMetricsTest {

  private static final String SCROLL = "POST /collections/{collection_name}/points/scroll";

  private static RestResponses sample() {
    RestResponses r = new RestResponses();
    r.record("a", SCROLL, 200, 1000);
    r.record("b", SCROLL, 200, 3000);
    r.record("a", SCROLL, 404, 500);
    r.record(RestResponses.NONE, "GET /collections", 200, 100);
    return r;
  }

  private static List<String> samples(String text) {
    return text.lines().filter(l -> !l.startsWith("#")).toList();
  }

  @Test
  void summedOverCollectionsByDefaultWithQdrantsLabels() {
    String text = RestResponseMetrics.render(sample(), false, false, null);
    assertThat(samples(text))
        .contains(
            "rest_responses_total{method=\"POST\",endpoint=\"/collections/{collection_name}/points/scroll\",status=\"200\"} 2",
            "rest_responses_total{method=\"POST\",endpoint=\"/collections/{collection_name}/points/scroll\",status=\"404\"} 1",
            "rest_responses_min_duration_seconds{method=\"POST\",endpoint=\"/collections/{collection_name}/points/scroll\",status=\"200\"} 0.001",
            "rest_responses_max_duration_seconds{method=\"POST\",endpoint=\"/collections/{collection_name}/points/scroll\",status=\"200\"} 0.003",
            "rest_responses_avg_duration_seconds{method=\"POST\",endpoint=\"/collections/{collection_name}/points/scroll\",status=\"200\"} 0.002");
    assertThat(text).doesNotContain("collection=").doesNotContain("endpoint=\"/collections\"");
    assertThat(samples(text)).as("timings for 200 only, as Qdrant").hasSize(5);
    assertThat(text).contains("# TYPE rest_responses_total counter");
  }

  @Test
  void perCollectionLabelsEachSeriesWithItsCollection() {
    String text = RestResponseMetrics.render(sample(), true, false, null);
    assertThat(samples(text))
        .contains(
            "rest_responses_total{method=\"POST\",endpoint=\"/collections/{collection_name}/points/scroll\",status=\"200\",collection=\"a\"} 1",
            "rest_responses_total{method=\"POST\",endpoint=\"/collections/{collection_name}/points/scroll\",status=\"200\",collection=\"b\"} 1");
    assertThat(samples(text)).allMatch(l -> l.contains("collection=\""));
  }

  @Test
  void openMetricsNamesTheCounterFamilyWithoutItsSuffixAndNamesCanBeSelected() {
    String open = RestResponseMetrics.render(sample(), false, true, null);
    assertThat(open).contains("# TYPE rest_responses counter").contains("rest_responses_total{");
    String only =
        RestResponseMetrics.render(sample(), false, false, Set.of("rest_responses_total"));
    assertThat(only).doesNotContain("duration_seconds");
    assertThat(MetricsController.scrape("a 1\n# EOF\n", "b 2\n", true))
        .isEqualTo("a 1\nb 2\n# EOF\n");
    assertThat(RestResponseMetrics.render(new RestResponses(), false, false, null)).isEmpty();
  }
}
