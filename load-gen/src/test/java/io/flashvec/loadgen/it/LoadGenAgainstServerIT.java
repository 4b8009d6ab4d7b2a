package io.flashvec.loadgen.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.loadgen.LoadGen;
import io.flashvec.testing.Await;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * load-gen against a real FlashVec server process (the packaged {@code api-service} jar, bound to
 * 127.0.0.1 on a free port): generate a small synthetic set, ingest it into a diskann collection
 * small enough to seal and index, search a concurrency and search-list sweep, and render the
 * report. Checks that the JSON and HTML carry sane values.
 */
class LoadGenAgainstServerIT {

  @TempDir Path tmp;

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void ingestSearchAndReportAgainstARealServer() throws Exception {
    Path jar =
        Path.of(System.getProperty("flashvec.server.jar", "../api-service/target/flashvec.jar"));
    assertThat(jar).as("the server jar is built before load-gen's integration tests").exists();
    int port = freePort();
    Process server =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules",
                "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx512m",
                "-jar",
                jar.toString(),
                "--flashvec.port=" + port,
                "--flashvec.bind=127.0.0.1",
                "--flashvec.data-dir=" + tmp.resolve("data"),
                "--flashvec.segment.seal-threshold-points=1500")
            .redirectErrorStream(true)
            .redirectOutput(tmp.resolve("server.log").toFile())
            .start();
    try {
      String url = "http://127.0.0.1:" + port;
      awaitReady(url, server);
      Path ds = tmp.resolve("ds");
      assertThat(
              run(
                  "generate",
                  "--out",
                  ds.toString(),
                  "--n",
                  "3000",
                  "--dim",
                  "32",
                  "--clusters",
                  "20",
                  "--normalize",
                  "--queries",
                  "100",
                  "--seed",
                  "7"))
          .isZero();
      Path ingest = tmp.resolve("ingest.json");
      assertThat(
              run(
                  "ingest",
                  "--url",
                  url,
                  "--collection",
                  "lg",
                  "--dataset",
                  ds.toString(),
                  "--index",
                  "diskann",
                  "--batch",
                  "500",
                  "--clients",
                  "2",
                  "--no-progress",
                  "--index-timeout",
                  "2m",
                  "--out",
                  ingest.toString()))
          .isZero();
      Path out = tmp.resolve("result.json");
      Path html = tmp.resolve("report.html");
      assertThat(
              run(
                  "search",
                  "--url",
                  url,
                  "--collection",
                  "lg",
                  "--dataset",
                  ds.toString(),
                  "--concurrency",
                  "1,2",
                  "--queries",
                  "200",
                  "--search-list",
                  "20,100",
                  "--out",
                  out.toString(),
                  "--html",
                  html.toString()))
          .isZero();
      JsonNode result = JsonMapper.builder().build().readTree(Files.readAllBytes(out));
      JsonNode points = result.get("points");
      assertThat(points).hasSize(4);
      for (JsonNode p : points) {
        assertThat(p.get("concurrency").asInt()).isIn(1, 2);
        assertThat(p.get("qps").asDouble()).isPositive();
        assertThat(p.get("p50_ms").asDouble()).isPositive();
        assertThat(p.get("p99_ms").asDouble()).isGreaterThanOrEqualTo(p.get("p50_ms").asDouble());
        assertThat(p.get("k").asInt()).isEqualTo(10);
        assertThat(p.get("errors").asLong()).isZero();
        assertThat(p.get("recall_at_k").asDouble()).isBetween(0.5, 1.0);
      }
      JsonNode best = points.get(points.size() - 1);
      assertThat(best.get("recall_at_k").asDouble()).as("search_list 100").isGreaterThan(0.9);
      String page = Files.readString(html);
      assertThat(page).contains("<svg").contains("lg");
      assertThat(Files.readString(tmp.resolve("server.log"))).contains("segment indexed");
    } finally {
      server.destroy();
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    }
  }

  private static int run(String... args) {
    System.out.println("[flashvec] loadgen " + String.join(" ", List.of(args)));
    return LoadGen.commandLine().execute(args);
  }

  private static void awaitReady(String url, Process server) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    Await.until(
        Duration.ofSeconds(60),
        "the server is ready",
        () -> {
          assertThat(server.isAlive()).as("server process is running").isTrue();
          try {
            return http.send(
                        HttpRequest.newBuilder(URI.create(url + "/readyz")).build(),
                        HttpResponse.BodyHandlers.discarding())
                    .statusCode()
                == 200;
          } catch (IOException e) {
            return false; // not up yet
          }
        });
  }
}
