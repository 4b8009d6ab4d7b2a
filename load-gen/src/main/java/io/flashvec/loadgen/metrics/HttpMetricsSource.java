package io.flashvec.loadgen.metrics;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Scrapes the Prometheus endpoints of several nodes (e.g. a cluster's proxy and query nodes) over
 * HTTP, one after another. A failed scrape is tried again twice; a node that still does not answer
 * gives an empty snapshot and one warning, so a flaky node does not fail the benchmark; its figures
 * are then missing from the sums.
 */
public final class HttpMetricsSource implements MetricsSource {

  /**
   * One node's metrics endpoint.
   *
   * @param name how reports name the node (e.g. {@code query-1})
   * @param url the full URL of its Prometheus text
   */
  public record Endpoint(String name, URI url) {

    private static final Pattern NAMED = Pattern.compile("^([A-Za-z0-9_.-]+)=(.+)$");

    /**
     * Parses {@code [name=]url}: a server base URL (its {@code /metrics} is read) or a URL with a
     * path, used as it is. Without a name the node is named {@code host:port}.
     */
    public static Endpoint parse(String spec) {
      String s = spec.strip();
      String name = null;
      var m = NAMED.matcher(s);
      if (m.matches() && !m.group(1).contains(":")) {
        name = m.group(1);
        s = m.group(2).strip();
      }
      URI u;
      try {
        u = URI.create(s);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("bad metrics URL [value=" + spec + "]", e);
      }
      if (u.getScheme() == null || u.getHost() == null) {
        throw new IllegalArgumentException(
            "metrics URL needs a scheme and a host, e.g. http://127.0.0.1:8081 [value="
                + spec
                + "]");
      }
      String path = u.getPath() == null ? "" : u.getPath();
      if (path.isEmpty() || path.equals("/")) {
        u = URI.create(s.replaceAll("/+$", "") + "/metrics");
      }
      if (name == null) {
        name = u.getPort() < 0 ? u.getHost() : u.getHost() + ":" + u.getPort();
      }
      return new Endpoint(name, u);
    }
  }

  /** Tries per scrape: a node's /metrics can fail once in a while (a 500 while it is busy). */
  static final int ATTEMPTS = 3;

  private static final long RETRY_PAUSE_MS = 200;

  private final List<Endpoint> endpoints;
  private final String apiKey;
  private final PrintStream log;
  private final HttpClient http;
  private final Duration timeout;
  private final Set<String> warned = new HashSet<>();

  /**
   * @param endpoints the nodes, in report order; names must be distinct
   * @param apiKey sent as header {@code api-key} when not null
   * @param timeout per scrape
   * @param log where warnings go (once per node); may be null
   */
  public HttpMetricsSource(
      List<Endpoint> endpoints, String apiKey, Duration timeout, PrintStream log) {
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("no metrics endpoints");
    }
    Set<String> names = new HashSet<>();
    for (Endpoint e : endpoints) {
      if (!names.add(e.name())) {
        throw new IllegalArgumentException(
            "two metrics endpoints are named alike; name them (name=url) [name=" + e.name() + "]");
      }
    }
    this.endpoints = List.copyOf(endpoints);
    this.apiKey = apiKey;
    this.timeout = timeout;
    this.log = log;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  /** The nodes, in report order. */
  public List<Endpoint> endpoints() {
    return endpoints;
  }

  @Override
  public Map<String, MetricSnapshot> scrape() {
    Map<String, MetricSnapshot> out = new LinkedHashMap<>();
    for (Endpoint e : endpoints) {
      out.put(e.name(), scrape(e));
    }
    return out;
  }

  private MetricSnapshot scrape(Endpoint e) {
    String why = null;
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (attempt > 0 && !pause()) {
        break;
      }
      HttpRequest.Builder b = HttpRequest.newBuilder(e.url()).timeout(timeout).GET();
      if (apiKey != null) {
        b.header("api-key", apiKey);
      }
      try {
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return PrometheusText.parse(r.body());
        }
        why = "HTTP " + r.statusCode();
      } catch (IOException ex) {
        why = ex.toString();
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        why = "interrupted";
        break;
      }
    }
    warn(e, why + " (" + ATTEMPTS + " attempts)");
    return MetricSnapshot.EMPTY;
  }

  private static boolean pause() {
    try {
      Thread.sleep(RETRY_PAUSE_MS);
      return true;
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void warn(Endpoint e, String why) {
    if (log != null && warned.add(e.name())) {
      log.printf(
          Locale.ROOT,
          "warning: cannot read metrics of node %s (%s): %s; its figures are left out%n",
          e.name(),
          e.url(),
          why);
    }
  }

  /** Parses several {@code [name=]url} specs. */
  public static List<Endpoint> parseAll(List<String> specs) {
    List<Endpoint> out = new ArrayList<>();
    for (String s : specs) {
      out.add(Endpoint.parse(s));
    }
    return out;
  }
}
