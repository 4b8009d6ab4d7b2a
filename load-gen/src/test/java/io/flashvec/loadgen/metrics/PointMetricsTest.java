package io.flashvec.loadgen.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Summing server metrics over several nodes (a cluster's proxy and query nodes); no network. */
class PointMetricsTest {

  private static final String DIST = "flashvec_search_distance_computations_total";
  private static final String PAGES = "flashvec_io_pages_read_total";
  private static final String SHARD = "flashvec_search_shard_searches_total";
  private static final String CPU = "process_cpu_time_ns_total";

  /** One node's counters before and after a point, as Prometheus text. */
  private record Node(String before, String after, Map<String, Double> increments) {}

  /**
   * A node with random counters: some series exist before the point, some appear during it (a
   * counter created by the first search), some are not exported at all.
   */
  private static Node randomNode(SplittableRandom r) {
    StringBuilder before = new StringBuilder();
    StringBuilder after = new StringBuilder();
    Map<String, Double> inc = new HashMap<>();
    for (String name : List.of(DIST, PAGES, SHARD, CPU)) {
      int presence = r.nextInt(4); // 0: absent, 1: appears during the point, 2-3: present before
      if (presence == 0) {
        continue;
      }
      String series = name + "{application=\"flashvec\"}";
      double b = presence == 1 ? 0 : r.nextInt(1_000_000);
      double d = r.nextInt(100_000);
      String type = "# TYPE " + name + " counter\n";
      if (presence >= 2) {
        before.append(type).append(series).append(' ').append(b).append('\n');
      }
      after.append(type).append(series).append(' ').append(b + d).append('\n');
      inc.put(series, d);
    }
    double gauge = r.nextInt(100) / 100.0;
    before.append("# TYPE process_cpu_usage gauge\nprocess_cpu_usage 0.9\n");
    after.append("# TYPE process_cpu_usage gauge\nprocess_cpu_usage ").append(gauge).append('\n');
    inc.put("gauge", gauge);
    return new Node(before.toString(), after.toString(), inc);
  }

  @Test
  void sumsEveryNodesDeltasSeriesBySeriesAndDerivesPerQueryWorkFromTheSums() {
    SplittableRandom r = TestSeeds.splittableRandom("PointMetricsTest.sums");
    for (int round = 0; round < 200; round++) {
      int n = 2 + r.nextInt(5);
      long queries = 1 + r.nextInt(10_000);
      double seconds = 0.5 + r.nextDouble() * 10;
      Map<String, MetricSnapshot> before = new LinkedHashMap<>();
      Map<String, MetricSnapshot> after = new LinkedHashMap<>();
      List<Node> nodes = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        Node node = randomNode(r);
        nodes.add(node);
        String name = i == 0 ? "proxy-1" : "query-" + i;
        before.put(name, PrometheusText.parse(node.before()));
        after.put(name, PrometheusText.parse(node.after()));
      }
      PointMetrics m = PointMetrics.of(before, after, ServerIo.DEFAULT_PREFIXES, queries, seconds);

      Map<String, Double> expected = new HashMap<>();
      for (Node node : nodes) {
        node.increments().forEach((k, v) -> expected.merge(k, v, Double::sum));
      }
      for (String name : List.of(DIST, PAGES, SHARD, CPU)) {
        String series = name + "{application=\"flashvec\"}";
        Double want = expected.get(series);
        if (want == null) {
          assertThat(m.deltas()).as(series).doesNotContainKey(series);
        } else if (want != 0 || name.startsWith("flashvec_")) {
          assertThat(m.deltas().get(series)).as(series).isEqualTo(want);
        }
      }
      assertThat(m.gauges().get("process_cpu_usage"))
          .isCloseTo(expected.get("gauge"), within(1e-9));

      // per query: the sums over the nodes divided by the client's successful queries
      String distSeries = DIST + "{application=\"flashvec\"}";
      if (expected.containsKey(distSeries)) {
        assertThat(m.io().get("search_distance_computations_per_query"))
            .isCloseTo(expected.get(distSeries) / queries, within(1e-6));
      }
      String cpuSeries = CPU + "{application=\"flashvec\"}";
      if (expected.getOrDefault(cpuSeries, 0.0) != 0) {
        assertThat(m.io().get("cpu_ms_per_query"))
            .isCloseTo(expected.get(cpuSeries) / 1e6 / queries, within(1e-6));
        assertThat(m.io().get("cpu_cores_busy"))
            .isCloseTo(expected.get(cpuSeries) / 1e9 / seconds, within(1e-6));
      }

      // per node: every node in order, and the nodes' figures add up to the total
      assertThat(m.nodes().keySet()).containsExactlyElementsOf(after.keySet());
      for (String key :
          List.of(
              "search_distance_computations_per_query",
              "pages_read_per_query",
              "search_shard_searches_per_query",
              "cpu_ms_per_query")) {
        double total = m.io().getOrDefault(key, 0.0);
        double sum = m.nodes().values().stream().mapToDouble(io -> io.getOrDefault(key, 0.0)).sum();
        assertThat(sum).as(key).isCloseTo(total, within(1e-6 * Math.max(1, total)));
      }
    }
  }

  @Test
  void oneNodeGivesTheSameFiguresAsBeforeAndNoPerNodeBlock() {
    MetricSnapshot b = PrometheusText.parse(PrometheusTextTest.BEFORE);
    MetricSnapshot a = PrometheusText.parse(PrometheusTextTest.AFTER);
    PointMetrics m =
        PointMetrics.of(
            Map.of(MetricsSource.SERVER, b),
            Map.of(MetricsSource.SERVER, a),
            ServerIo.DEFAULT_PREFIXES,
            100,
            2.0);
    Map<String, Double> deltas = MetricSnapshot.deltas(b, a, ServerIo.DEFAULT_PREFIXES);
    assertThat(m.deltas()).isEqualTo(deltas);
    assertThat(m.gauges()).isEqualTo(MetricSnapshot.gauges(a, ServerIo.DEFAULT_PREFIXES));
    assertThat(m.io()).isEqualTo(ServerIo.derive(deltas, 100, 2.0));
    assertThat(m.nodes()).isEmpty();
  }

  @Test
  void aNodeThatDidNotAnswerAddsNothingAndANewNodeCountsFromZero() {
    String text = "# TYPE " + DIST + " counter\n" + DIST + " 500\n";
    String later = "# TYPE " + DIST + " counter\n" + DIST + " 800\n";
    Map<String, MetricSnapshot> before = new LinkedHashMap<>();
    before.put("query-1", PrometheusText.parse(text));
    before.put("query-2", PrometheusText.parse(text));
    Map<String, MetricSnapshot> after = new LinkedHashMap<>();
    after.put("query-1", PrometheusText.parse(later));
    after.put("query-2", MetricSnapshot.EMPTY); // scrape failed after the point
    after.put("query-3", PrometheusText.parse(text)); // not scraped before: counts from 0
    PointMetrics m = PointMetrics.of(before, after, List.of("flashvec_"), 10, 1.0);
    assertThat(m.deltas()).containsEntry(DIST, 300.0 + 500.0);
    assertThat(m.io()).containsEntry("search_distance_computations_per_query", 80.0);
    assertThat(m.nodes().get("query-1"))
        .containsEntry("search_distance_computations_per_query", 30.0);
    assertThat(m.nodes().get("query-2")).isEmpty();
    assertThat(m.nodes().get("query-3"))
        .containsEntry("search_distance_computations_per_query", 50.0);
  }
}
