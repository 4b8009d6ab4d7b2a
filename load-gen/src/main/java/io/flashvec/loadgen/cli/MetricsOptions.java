package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.metrics.HttpMetricsSource;
import io.flashvec.loadgen.metrics.MetricsSource;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** Where server metrics are read from; a picocli mixin. */
public final class MetricsOptions {
  @Option(
      names = "--metrics-url",
      paramLabel = "[NAME=]URL",
      description =
          "Read server metrics from this node instead of the --url; repeat it for every node of a"
              + " cluster (proxy and query nodes): deltas and per-query work are then summed over"
              + " the nodes and reported per node too. A base URL (its /metrics is read) or a full"
              + " URL; NAME labels the node in reports (default host:port). Default: the --url.")
  List<String> metricsUrls;

  /** The metrics source: the given nodes, or the client's own endpoint. */
  MetricsSource open(VectorDbClient client, ClientOptions c, PrintStream log) {
    if (metricsUrls == null || metricsUrls.isEmpty()) {
      return MetricsSource.of(client);
    }
    return new HttpMetricsSource(
        HttpMetricsSource.parseAll(metricsUrls),
        c.apiKey,
        c.timeout.compareTo(Duration.ofSeconds(10)) < 0 ? c.timeout : Duration.ofSeconds(10),
        log);
  }

  /** Records the metrics endpoints in a result's metadata (when given). */
  void describe(Map<String, Object> meta) {
    if (metricsUrls != null && !metricsUrls.isEmpty()) {
      Map<String, String> nodes = new java.util.LinkedHashMap<>();
      for (HttpMetricsSource.Endpoint e : HttpMetricsSource.parseAll(metricsUrls)) {
        nodes.put(e.name(), e.url().toString());
      }
      meta.put("metrics_nodes", nodes);
    }
  }
}
