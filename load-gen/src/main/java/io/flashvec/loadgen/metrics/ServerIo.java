package io.flashvec.loadgen.metrics;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Derives per-query server figures from the metric deltas of one benchmark point: bytes and pages
 * read per query, read bandwidth, CPU per query and CPU cores busy. A figure whose counter the
 * server does not export is left out.
 */
public final class ServerIo {
  /** Counters of bytes read from the device, first present wins. */
  static final List<String> BYTES_READ =
      List.of("flashvec_io_bytes_read_total", "flashvec_io_read_bytes_total");

  /** Counters of pages read from the device. */
  static final List<String> PAGES_READ =
      List.of("flashvec_io_pages_read_total", "flashvec_io_read_pages_total");

  /** Counters of graph nodes visited by searches. */
  static final List<String> VISITED =
      List.of("flashvec_search_visited_nodes_total", "flashvec_search_nodes_visited_total");

  /** Default metric name prefixes whose deltas a point reports. */
  public static final List<String> DEFAULT_PREFIXES =
      List.of(
          "flashvec_",
          "process_cpu",
          "system_cpu",
          "http_server_requests",
          "jvm_memory_used_bytes",
          "process_resident_memory_bytes");

  private ServerIo() {}

  /** Per-query figures for a point with {@code queries} successful queries over {@code seconds}. */
  public static Map<String, Double> derive(
      Map<String, Double> deltas, long queries, double seconds) {
    Map<String, Double> out = new LinkedHashMap<>();
    double q = Math.max(1, queries);
    double bytes = first(deltas, BYTES_READ);
    if (!Double.isNaN(bytes)) {
      out.put("bytes_read", bytes);
      out.put("bytes_read_per_query", bytes / q);
      if (seconds > 0) {
        out.put("read_mb_per_s", bytes / seconds / 1e6);
      }
    }
    double pages = first(deltas, PAGES_READ);
    if (!Double.isNaN(pages)) {
      out.put("pages_read", pages);
      out.put("pages_read_per_query", pages / q);
    }
    double visited = first(deltas, VISITED);
    if (!Double.isNaN(visited)) {
      out.put("visited_nodes_per_query", visited / q);
      if (!Double.isNaN(pages) && visited > 0) {
        out.put("pages_per_visited_node", pages / visited);
      }
    }
    // every other search counter the server exports, per query (distance computations, nodes
    // expanded, reranked, ...), named without the flashvec_ prefix and the _total suffix
    for (var e : MetricSnapshot.sumAllByName(deltas).entrySet()) {
      String name = e.getKey();
      if (name.startsWith("flashvec_search_")
          && name.endsWith("_total")
          && !name.equals("flashvec_search_queries_total")) {
        String key = name.substring("flashvec_".length(), name.length() - "_total".length());
        out.putIfAbsent(key + "_per_query", e.getValue() / q);
      }
    }
    double cpuSeconds = Double.NaN;
    double ns = MetricSnapshot.sumByName(deltas, "process_cpu_time_ns_total");
    if (!Double.isNaN(ns)) {
      cpuSeconds = ns / 1e9;
    } else {
      double s = MetricSnapshot.sumByName(deltas, "process_cpu_seconds_total");
      cpuSeconds =
          Double.isNaN(s) ? MetricSnapshot.sumByName(deltas, "process_cpu_time_seconds_total") : s;
    }
    if (!Double.isNaN(cpuSeconds)) {
      out.put("cpu_ms_per_query", cpuSeconds * 1e3 / q);
      if (seconds > 0) {
        out.put("cpu_cores_busy", cpuSeconds / seconds);
      }
    }
    return out;
  }

  private static double first(Map<String, Double> deltas, List<String> names) {
    for (String n : names) {
      double v = MetricSnapshot.sumByName(deltas, n);
      if (!Double.isNaN(v)) {
        return v;
      }
    }
    return Double.NaN;
  }
}
