package io.flashvec.api.metrics;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * Qdrant's request series in the Prometheus text formats, from {@link RestResponses}: {@code
 * rest_responses_total} (a counter per method, endpoint and status) and, for status 200, {@code
 * rest_responses_avg_duration_seconds}, {@code rest_responses_min_duration_seconds} and {@code
 * rest_responses_max_duration_seconds} (gauges), for the point routes Qdrant reports (search,
 * query, recommend, scroll, upsert and the like; {@link #ENDPOINTS}). With {@code perCollection}
 * every series has a {@code collection} label instead of being summed over collections.
 *
 * <p>Qdrant's {@code rest_responses_duration_seconds} histogram is left out: {@code
 * http_server_requests_seconds} has the same requests' latency buckets (ADR 0033), and a second set
 * would double the largest part of the output.
 */
public final class RestResponseMetrics {

  /** The endpoints with request series, as Qdrant's: the point routes clients call most. */
  static final Set<String> ENDPOINTS =
      Set.of(
          "/collections/{collection_name}/index",
          "/collections/{collection_name}/points",
          "/collections/{collection_name}/points/batch",
          "/collections/{collection_name}/points/count",
          "/collections/{collection_name}/points/delete",
          "/collections/{collection_name}/points/discover",
          "/collections/{collection_name}/points/discover/batch",
          "/collections/{collection_name}/points/facet",
          "/collections/{collection_name}/points/payload",
          "/collections/{collection_name}/points/payload/clear",
          "/collections/{collection_name}/points/payload/delete",
          "/collections/{collection_name}/points/query",
          "/collections/{collection_name}/points/query/batch",
          "/collections/{collection_name}/points/query/groups",
          "/collections/{collection_name}/points/recommend",
          "/collections/{collection_name}/points/recommend/batch",
          "/collections/{collection_name}/points/recommend/groups",
          "/collections/{collection_name}/points/scroll",
          "/collections/{collection_name}/points/search",
          "/collections/{collection_name}/points/search/batch",
          "/collections/{collection_name}/points/search/groups",
          "/collections/{collection_name}/points/search/matrix/offsets",
          "/collections/{collection_name}/points/search/matrix/pairs",
          "/collections/{collection_name}/points/vectors",
          "/collections/{collection_name}/points/vectors/delete");

  /** The status whose timings are reported, as Qdrant's. */
  static final int TIMED_STATUS = 200;

  private record Series(String labels, RestResponses.Stats stats, boolean timed) {}

  private RestResponseMetrics() {}

  /**
   * The series as text: the Prometheus format 0.0.4, or OpenMetrics when {@code openMetrics}.
   * {@code includedNames}: only these sample names (all when {@code null}).
   */
  public static String render(
      RestResponses responses,
      boolean perCollection,
      boolean openMetrics,
      Set<String> includedNames) {
    List<Series> series = new java.util.ArrayList<>();
    if (perCollection) {
      responses
          .byCollection()
          .forEach(
              (collection, endpoints) ->
                  add(series, endpoints, ",collection=\"" + escape(collection) + "\""));
    } else {
      add(series, responses.byEndpoint(), "");
    }
    if (series.isEmpty()) {
      return "";
    }
    StringBuilder out = new StringBuilder();
    family(
        out,
        "rest_responses",
        "_total",
        "counter",
        "total number of responses",
        series,
        false,
        s -> s.count(),
        openMetrics,
        includedNames);
    family(
        out,
        "rest_responses_avg_duration_seconds",
        "",
        "gauge",
        "average response duration",
        series,
        true,
        s -> s.avgMicros() / 1e6,
        openMetrics,
        includedNames);
    family(
        out,
        "rest_responses_min_duration_seconds",
        "",
        "gauge",
        "minimum response duration",
        series,
        true,
        s -> s.minMicros() / 1e6,
        openMetrics,
        includedNames);
    family(
        out,
        "rest_responses_max_duration_seconds",
        "",
        "gauge",
        "maximum response duration",
        series,
        true,
        s -> s.maxMicros() / 1e6,
        openMetrics,
        includedNames);
    return out.toString();
  }

  private static void add(
      List<Series> series, Map<String, Map<Integer, RestResponses.Stats>> endpoints, String extra) {
    endpoints.forEach(
        (endpoint, statuses) -> {
          int space = endpoint.indexOf(' ');
          String path = endpoint.substring(space + 1);
          if (space < 0 || !ENDPOINTS.contains(path)) {
            return;
          }
          String method = endpoint.substring(0, space);
          statuses.forEach(
              (status, stats) ->
                  series.add(
                      new Series(
                          "method=\""
                              + method
                              + "\",endpoint=\""
                              + escape(path)
                              + "\",status=\""
                              + status
                              + "\""
                              + extra,
                          stats,
                          status == TIMED_STATUS)));
        });
  }

  private static void family(
      StringBuilder out,
      String name,
      String sampleSuffix,
      String type,
      String help,
      List<Series> series,
      boolean timedOnly,
      ToDoubleFunction<RestResponses.Stats> value,
      boolean openMetrics,
      Set<String> includedNames) {
    String sample = name + sampleSuffix;
    if (includedNames != null && !includedNames.contains(sample)) {
      return;
    }
    if (series.stream().noneMatch(s -> s.timed() || !timedOnly)) {
      return;
    }
    String typeName = openMetrics ? name : sample;
    out.append("# HELP ").append(typeName).append(' ').append(help).append('\n');
    out.append("# TYPE ").append(typeName).append(' ').append(type).append('\n');
    for (Series s : series) {
      if (timedOnly && !s.timed()) {
        continue;
      }
      out.append(sample)
          .append('{')
          .append(s.labels())
          .append("} ")
          .append(format(value.applyAsDouble(s.stats())))
          .append('\n');
    }
  }

  private static String format(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
  }

  /** A label value as the text formats want it: backslash, quote and newline escaped. */
  static String escape(String v) {
    return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
