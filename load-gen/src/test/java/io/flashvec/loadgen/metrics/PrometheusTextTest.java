package io.flashvec.loadgen.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {
  static final String BEFORE =
      """
      # HELP flashvec_io_bytes_read_total Bytes read from the device
      # TYPE flashvec_io_bytes_read_total counter
      flashvec_io_bytes_read_total{shard="0",collection="c"} 1000.0
      flashvec_io_bytes_read_total{collection="c",shard="1"} 500
      # TYPE flashvec_io_pages_read_total counter
      flashvec_io_pages_read_total 10
      # TYPE process_cpu_time_ns_total counter
      process_cpu_time_ns_total 2.0E9
      # TYPE process_cpu_usage gauge
      process_cpu_usage 0.25
      # TYPE http_server_requests_seconds histogram
      http_server_requests_seconds_bucket{le="0.1",uri="/search"} 3
      http_server_requests_seconds_count{uri="/search"} 4
      http_server_requests_seconds_count{uri="/idle"} 2
      http_server_requests_seconds_sum{uri="/search"} 0.5
      # TYPE jvm_memory_used_bytes gauge
      jvm_memory_used_bytes{area="heap",id="G1 \\"Eden\\" Space"} 1.5e8
      weird line without value
      """;

  static final String AFTER =
      """
      # TYPE flashvec_io_bytes_read_total counter
      flashvec_io_bytes_read_total{collection="c",shard="0"} 5096 1700000000000
      flashvec_io_bytes_read_total{collection="c",shard="1"} 4596
      # TYPE flashvec_io_pages_read_total counter
      flashvec_io_pages_read_total 12
      # TYPE process_cpu_time_ns_total counter
      process_cpu_time_ns_total 3.5E9
      # TYPE process_cpu_usage gauge
      process_cpu_usage 0.75
      # TYPE http_server_requests_seconds histogram
      http_server_requests_seconds_bucket{le="0.1",uri="/search"} 7
      http_server_requests_seconds_count{uri="/search"} 8
      http_server_requests_seconds_count{uri="/idle"} 2
      http_server_requests_seconds_sum{uri="/search"} 0.9
      # TYPE flashvec_new_total counter
      flashvec_new_total 3
      # TYPE flashvec_ratio gauge
      flashvec_ratio NaN
      # TYPE flashvec_zero_total counter
      flashvec_zero_total 0
      """;

  @Test
  void parsesSeriesWithSortedLabelsEscapesTimestampsAndTypes() {
    MetricSnapshot s = PrometheusText.parse(BEFORE);
    assertThat(s.values())
        .containsEntry("flashvec_io_bytes_read_total{collection=\"c\",shard=\"0\"}", 1000.0)
        .containsEntry("flashvec_io_bytes_read_total{collection=\"c\",shard=\"1\"}", 500.0)
        .containsEntry("process_cpu_time_ns_total", 2.0e9)
        .containsEntry("jvm_memory_used_bytes{area=\"heap\",id=\"G1 \\\"Eden\\\" Space\"}", 1.5e8)
        .hasSize(10);
    assertThat(s.types()).containsEntry("process_cpu_usage", "gauge");
    assertThat(s.isMonotonic("http_server_requests_seconds_count{uri=\"/search\"}")).isTrue();
    assertThat(s.isMonotonic("process_cpu_usage")).isFalse();
    assertThat(PrometheusText.parse(AFTER).values())
        .containsEntry("flashvec_io_bytes_read_total{collection=\"c\",shard=\"0\"}", 5096.0);
  }

  @Test
  void deltasOfCountersAndGaugeValues() {
    MetricSnapshot before = PrometheusText.parse(BEFORE);
    MetricSnapshot after = PrometheusText.parse(AFTER);
    List<String> prefixes = List.of("flashvec_", "process_cpu", "http_server_requests");

    Map<String, Double> d = MetricSnapshot.deltas(before, after, prefixes);

    assertThat(d)
        .containsEntry("flashvec_io_bytes_read_total{collection=\"c\",shard=\"0\"}", 4096.0)
        .containsEntry("flashvec_io_bytes_read_total{collection=\"c\",shard=\"1\"}", 4096.0)
        .containsEntry("flashvec_io_pages_read_total", 2.0)
        .containsEntry("process_cpu_time_ns_total", 1.5e9)
        .containsEntry("http_server_requests_seconds_count{uri=\"/search\"}", 4.0)
        .containsEntry("flashvec_new_total", 3.0)
        .doesNotContainKey("http_server_requests_seconds_count{uri=\"/idle\"}")
        .containsEntry("flashvec_zero_total", 0.0)
        .doesNotContainKey("process_cpu_usage")
        .doesNotContainKey("http_server_requests_seconds_bucket{le=\"0.1\",uri=\"/search\"}");
    assertThat(d.get("http_server_requests_seconds_sum{uri=\"/search\"}"))
        .isCloseTo(0.4, within(1e-9));
    assertThat(MetricSnapshot.sumByName(d, "flashvec_io_bytes_read_total")).isEqualTo(8192.0);
    assertThat(MetricSnapshot.sumByName(d, "absent")).isNaN();

    assertThat(MetricSnapshot.gauges(after, prefixes))
        .containsEntry("process_cpu_usage", 0.75)
        .doesNotContainKey("flashvec_ratio");
    assertThat(MetricSnapshot.deltas(before, after, List.of("flashvec_io_pages"))).hasSize(1);
  }

  @Test
  void derivesPerQueryFigures() {
    Map<String, Double> d =
        MetricSnapshot.deltas(
            PrometheusText.parse(BEFORE), PrometheusText.parse(AFTER), ServerIo.DEFAULT_PREFIXES);

    Map<String, Double> io = ServerIo.derive(d, 4, 2.0);

    assertThat(io)
        .containsEntry("bytes_read_per_query", 2048.0)
        .containsEntry("pages_read_per_query", 0.5)
        .containsEntry("cpu_ms_per_query", 375.0)
        .containsEntry("cpu_cores_busy", 0.75);
    assertThat(io.get("read_mb_per_s")).isCloseTo(0.004096, within(1e-12));
    assertThat(ServerIo.derive(Map.of(), 10, 1.0)).isEmpty();
    assertThat(
            ServerIo.derive(
                Map.of(
                    "flashvec_search_distance_computations_total{shard=\"0\"}", 3000.0,
                    "flashvec_search_distance_computations_total{shard=\"1\"}", 1000.0,
                    "flashvec_search_queries_total", 10.0),
                10,
                1.0))
        .containsExactly(Map.entry("search_distance_computations_per_query", 400.0));
  }

  @Test
  void openMetricsCounterFamilyWithoutTotalSuffix() {
    MetricSnapshot a = PrometheusText.parse("# TYPE foo counter\nfoo_total 1\n# EOF\n");
    MetricSnapshot b = PrometheusText.parse("# TYPE foo counter\nfoo_total 5\n# EOF\n");
    assertThat(MetricSnapshot.deltas(a, b, List.of())).containsEntry("foo_total", 4.0);
  }
}
