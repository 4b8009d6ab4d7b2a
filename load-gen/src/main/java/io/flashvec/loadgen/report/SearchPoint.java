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
 * @param quality how the figures were measured (warm-up, recall coverage, steadiness)
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
    Map<String, Double> device,
    Quality quality) {

  /**
   * How far a point's figures can be trusted.
   *
   * @param recallQueries distinct queries the recall is the mean over (each counted once), 0 when
   *     unknown (results written before this was recorded)
   * @param recallExtraQueries of those, queries the measured window did not reach and that were run
   *     once after it, outside the timings, so that recall covers the whole query set
   * @param warmupSeconds how long the point was warmed up, NaN when unknown
   * @param warmupStable whether the warm-up ended with a steady QPS (false: it hit its cap), null
   *     when unknown or without warm-up
   * @param qpsVariation coefficient of variation of the QPS of the point's one-second windows, NaN
   *     when unknown or shorter than three windows
   */
  public record Quality(
      long recallQueries,
      long recallExtraQueries,
      double warmupSeconds,
      Boolean warmupStable,
      double qpsVariation) {
    /** Nothing known (an old result). */
    public static final Quality UNKNOWN = new Quality(0, 0, Double.NaN, null, Double.NaN);
  }

  public SearchPoint {
    if (quality == null) {
      quality = Quality.UNKNOWN;
    }
  }

  /** Whether this point has a recall figure. */
  public boolean hasRecall() {
    return !Double.isNaN(recallAtK);
  }

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
