package io.flashvec.loadgen.metrics;

import io.flashvec.loadgen.client.VectorDbClient;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where a benchmark point's server metrics come from: one node (the system under test's own
 * endpoint) or several (every node of a cluster), all scraped just before and just after the point.
 * Implementations are used from one thread at a time.
 */
public interface MetricsSource {

  /** The node name of the system under test's own endpoint. */
  String SERVER = "server";

  /**
   * Scrapes every node now: node name → snapshot, always the same names in the same order ({@link
   * MetricSnapshot#EMPTY} for a node that did not answer).
   */
  Map<String, MetricSnapshot> scrape();

  /** The client's own metrics endpoint (the --url), as one node named {@link #SERVER}. */
  static MetricsSource of(VectorDbClient client) {
    return () -> {
      String text = client.metricsText();
      Map<String, MetricSnapshot> m = new LinkedHashMap<>();
      m.put(SERVER, text == null ? MetricSnapshot.EMPTY : PrometheusText.parse(text));
      return m;
    };
  }
}
