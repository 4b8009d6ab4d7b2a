package io.flashvec.loadgen.report;

import java.util.Map;

/**
 * One measured point of a sweep: a concurrency and a set of search parameters.
 *
 * @param label free text (e.g. {@code queries-only} in a mixed run), may be null
 * @param concurrency closed-loop clients, each with one request in flight
 * @param k results asked per query
 * @param params the search parameters sent ({@code search_list}, {@code beam_width}, ...)
 * @param queries successful queries
 * @param errors failed queries
 * @param seconds wall-clock duration of the point
 * @param qps successful queries per second
 * @param recallAtK mean recall@k, NaN without ground truth
 * @param server deltas of the server's monotonic metrics over the point (series key → delta)
 * @param serverGauges values of the server's gauges after the point
 * @param io derived per-query server figures ({@code bytes_read_per_query}, {@code
 *     pages_read_per_query}, {@code read_mb_per_s}, {@code cpu_ms_per_query}), when present; with
 *     several metrics endpoints (a cluster's nodes) {@code server}, {@code serverGauges} and {@code
 *     io} are sums over the nodes
 * @param nodes with several metrics endpoints: node name → its own derived figures, else empty
 * @param device the block device's figures over the measured window ({@code reads_per_s}, {@code
 *     read_mb_per_s}, {@code pages_per_query}, the ratio to the server's own counts, ...; see
 *     {@code BlockDevice.derive}), empty when no device was sampled; the device's counters include
 *     every process on the machine
 */
public record SearchPoint(
    String label,
    int concurrency,
    int k,
    Map<String, Integer> params,
    long queries,
    long errors,
    double seconds,
    double qps,
    double p50Ms,
    double p95Ms,
    double p99Ms,
    double p999Ms,
    double maxMs,
    double meanMs,
    double recallAtK,
    Map<String, Double> server,
    Map<String, Double> serverGauges,
    Map<String, Double> io,
    Map<String, Map<String, Double>> nodes,
    Map<String, Double> device) {

  /** A short label of the parameters, e.g. {@code search_list=40,beam_width=4}, or "default". */
  public String paramsLabel() {
    if (params == null || params.isEmpty()) {
      return "default";
    }
    StringBuilder sb = new StringBuilder();
    for (var e : params.entrySet()) {
      sb.append(sb.isEmpty() ? "" : ",").append(e.getKey()).append('=').append(e.getValue());
    }
    return sb.toString();
  }
}
