package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's service endpoints against a real server: the version clients check, the plain-text
 * health probes, and unknown routes answered 404 in Qdrant's error shape.
 */
class ServiceApiIT {

  @TempDir static Path tmp;
  static ServerProcess server;
  static Http http;

  @BeforeAll
  static void start() {
    server = new ServerProcess(tmp.resolve("data"), tmp.resolve("server.log")).start();
    http = new Http(server.url());
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.stop();
    }
  }

  private static HttpResponse<String> raw(String path) throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(server.url() + path)).build(),
            HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void rootReportsAQdrantApiVersionClientsAcceptAndFlashVecsOwn() {
    JsonNode root = http.get("/").body();
    assertThat(root.get("title").asString()).isEqualTo("flashvec - vector search engine");
    // Qdrant's clients warn unless major matches and minor is within one of theirs (1.x)
    assertThat(root.get("version").asString()).matches("1\\.(19|20)\\.\\d+");
    assertThat(root.get("flashvec_version").asString()).isEqualTo("0.1.0");
  }

  @Test
  void healthProbesAnswerQdrantsPlainText() throws Exception {
    for (String probe : new String[] {"/healthz", "/livez"}) {
      HttpResponse<String> r = raw(probe);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("healthz check passed");
      assertThat(r.headers().firstValue("content-type")).hasValue("text/plain;charset=UTF-8");
    }
    HttpResponse<String> ready = raw("/readyz");
    assertThat(ready.statusCode()).isEqualTo(200);
    assertThat(ready.body()).isEqualTo("all shards are ready");
    assertThat(ready.headers().firstValue("content-type")).hasValue("text/plain;charset=UTF-8");
  }

  @Test
  void unknownRoutesAndWrongMethodsAnswer404NoSuchEndpoint() {
    Http.Response unknown = http.post("/foo", "{}");
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.error()).isEqualTo("Not found: no such endpoint [method=POST, path=/foo]");
    assertThat(unknown.body().get("time").isNumber()).isTrue();
    Http.Response wrongMethod = http.send("PATCH", "/collections/c/points", "{}");
    assertThat(wrongMethod.status()).isEqualTo(404);
    assertThat(wrongMethod.error())
        .isEqualTo("Not found: no such endpoint [method=PATCH, path=/collections/c/points]");
    assertThat(http.send("DELETE", "/healthz", null).status()).isEqualTo(404);
  }
}
