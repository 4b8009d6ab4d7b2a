package io.flashvec.loadgen.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.loadgen.metrics.HttpMetricsSource.Endpoint;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HttpMetricsSourceTest {

  @Test
  void parsesNamedAndUnnamedEndpoints() {
    Endpoint named = Endpoint.parse("query-1=http://127.0.0.1:8081");
    assertThat(named.name()).isEqualTo("query-1");
    assertThat(named.url()).hasToString("http://127.0.0.1:8081/metrics");

    Endpoint bare = Endpoint.parse("http://127.0.0.1:8082/");
    assertThat(bare.name()).isEqualTo("127.0.0.1:8082");
    assertThat(bare.url()).hasToString("http://127.0.0.1:8082/metrics");

    Endpoint full = Endpoint.parse("etcd=http://127.0.0.1:2379/metrics?x=1");
    assertThat(full.name()).isEqualTo("etcd");
    assertThat(full.url()).hasToString("http://127.0.0.1:2379/metrics?x=1");

    assertThat(Endpoint.parse("http://host").name()).isEqualTo("host");
    assertThatThrownBy(() -> Endpoint.parse("127.0.0.1:8081"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("127.0.0.1:8081");
    assertThatThrownBy(() -> Endpoint.parse("localhost:8081"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("scheme and a host");
  }

  @Test
  void rejectsTwoNodesWithTheSameName() {
    List<Endpoint> twice =
        HttpMetricsSource.parseAll(List.of("http://127.0.0.1:1", "http://127.0.0.1:1/"));
    assertThatThrownBy(() -> new HttpMetricsSource(twice, null, Duration.ofSeconds(1), null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("named alike");
  }

  @Test
  void aNodeThatDoesNotAnswerGivesAnEmptySnapshotAndOneWarning() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: connections are refused
    }
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    HttpMetricsSource src =
        new HttpMetricsSource(
            HttpMetricsSource.parseAll(List.of("gone=http://127.0.0.1:" + port)),
            null,
            Duration.ofSeconds(2),
            new PrintStream(log, true, StandardCharsets.UTF_8));
    Map<String, MetricSnapshot> first = src.scrape();
    Map<String, MetricSnapshot> second = src.scrape();
    assertThat(first).containsEntry("gone", MetricSnapshot.EMPTY);
    assertThat(second).containsEntry("gone", MetricSnapshot.EMPTY);
    String warnings = log.toString(StandardCharsets.UTF_8);
    assertThat(warnings).contains("cannot read metrics of node gone");
    assertThat(warnings.lines().count()).isEqualTo(1);
  }

  @Test
  void aFailedScrapeIsTriedAgain() throws Exception {
    java.util.concurrent.atomic.AtomicInteger calls =
        new java.util.concurrent.atomic.AtomicInteger();
    com.sun.net.httpserver.HttpServer server =
        com.sun.net.httpserver.HttpServer.create(
            new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/metrics",
        ex -> {
          boolean fail = calls.getAndIncrement() == 0; // the first scrape gets a 500
          byte[] body =
              (fail ? "busy" : "# TYPE x_total counter\nx_total 7\n")
                  .getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(fail ? 500 : 200, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    server.start();
    try {
      ByteArrayOutputStream log = new ByteArrayOutputStream();
      HttpMetricsSource src =
          new HttpMetricsSource(
              HttpMetricsSource.parseAll(
                  List.of("n=http://127.0.0.1:" + server.getAddress().getPort())),
              "k",
              Duration.ofSeconds(5),
              new PrintStream(log, true, StandardCharsets.UTF_8));
      assertThat(src.scrape().get("n").values()).containsEntry("x_total", 7.0);
      assertThat(calls.get()).isEqualTo(2);
      assertThat(log.toString(StandardCharsets.UTF_8)).isEmpty();
    } finally {
      server.stop(0);
    }
  }
}
