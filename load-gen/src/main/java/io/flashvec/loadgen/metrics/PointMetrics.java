package io.flashvec.loadgen.metrics;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The server side of one benchmark point, from scrapes of one or more nodes before and after it:
 * the metric deltas and gauges summed over the nodes (series by series: the same series on two
 * nodes adds up), the per-query figures derived from those sums ({@link ServerIo#derive}), and —
 * with more than one node — the same figures per node. In a cluster the sum over the query nodes is
 * the total work of a query (each node counts the shard searches it ran) and the sum of {@code
 * cpu_ms_per_query} is the CPU of a query over every scraped process.
 *
 * @param deltas monotonic series deltas, summed over the nodes
 * @param gauges gauge values after the point, summed over the nodes
 * @param io per-query figures of the sums
 * @param nodes node → its own per-query figures (empty with a single node)
 */
public record PointMetrics(
    Map<String, Double> deltas,
    Map<String, Double> gauges,
    Map<String, Double> io,
    Map<String, Map<String, Double>> nodes) {

  /**
   * Computes a point's figures.
   *
   * @param before node → scrape before the point (a node missing here counts from 0)
   * @param after node → scrape after the point; its order is the order of {@link #nodes}
   * @param prefixes metric name prefixes to keep
   * @param queries successful queries of the point
   * @param seconds wall-clock duration of the point
   */
  public static PointMetrics of(
      Map<String, MetricSnapshot> before,
      Map<String, MetricSnapshot> after,
      List<String> prefixes,
      long queries,
      double seconds) {
    Map<String, Map<String, Double>> deltasByNode = new LinkedHashMap<>();
    Map<String, Map<String, Double>> gaugesByNode = new LinkedHashMap<>();
    for (var e : after.entrySet()) {
      MetricSnapshot b = before.getOrDefault(e.getKey(), MetricSnapshot.EMPTY);
      deltasByNode.put(e.getKey(), MetricSnapshot.deltas(b, e.getValue(), prefixes));
      gaugesByNode.put(e.getKey(), MetricSnapshot.gauges(e.getValue(), prefixes));
    }
    Map<String, Double> deltas = sum(deltasByNode.values());
    Map<String, Double> gauges = sum(gaugesByNode.values());
    Map<String, Map<String, Double>> nodes = new LinkedHashMap<>();
    if (after.size() > 1) {
      for (var e : deltasByNode.entrySet()) {
        nodes.put(e.getKey(), ServerIo.derive(e.getValue(), queries, seconds));
      }
    }
    return new PointMetrics(deltas, gauges, ServerIo.derive(deltas, queries, seconds), nodes);
  }

  /** Sums maps series by series (a series missing from a map counts as 0 there). */
  public static Map<String, Double> sum(Collection<Map<String, Double>> maps) {
    Map<String, Double> out = new TreeMap<>();
    for (Map<String, Double> m : maps) {
      for (var e : m.entrySet()) {
        out.merge(e.getKey(), e.getValue(), Double::sum);
      }
    }
    return out;
  }
}
