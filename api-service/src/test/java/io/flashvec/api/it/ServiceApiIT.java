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

  @Test
  void telemetryCountsRequestsByEndpointInQdrantsShape() {
    assertThat(
            http.put("/collections/tele", "{\"vectors\":{\"size\":2,\"distance\":\"Dot\"}}")
                .status())
        .isEqualTo(200);
    for (int i = 0; i < 3; i++) {
      assertThat(
              http.put(
                      "/collections/tele/points?wait=true",
                      "{\"points\":[{\"id\":" + i + ",\"vector\":[1,2]}]}")
                  .status())
          .isEqualTo(200);
    }
    JsonNode t = http.get("/telemetry").result();
    assertThat(t.get("id").asString()).hasSize(36);
    assertThat(t.at("/app/name").asString()).isEqualTo("flashvec");
    assertThat(t.at("/app/version").asString()).isEqualTo("0.1.0");
    assertThat(t.at("/app").has("system")).as("level 0, as Qdrant's default").isFalse();
    assertThat(t.at("/collections/number_of_collections").asInt()).isGreaterThanOrEqualTo(1);
    assertThat(t.at("/collections").has("collections")).isFalse();
    JsonNode detailed = http.get("/telemetry?details_level=1&anonymize=true").result();
    assertThat(detailed.at("/app/system/cores").asInt()).isPositive();
    assertThat(detailed.at("/app/system/ram_size").asLong() % 10)
        .as("anonymized sizes keep their leading digits")
        .isZero();
    assertThat(detailed.at("/collections/collections"))
        .anySatisfy(c -> assertThat(c.at("/params/vectors/size").asInt()).isEqualTo(2));
    Http.Response deeper = http.get("/telemetry?details_level=2");
    assertThat(deeper.status()).isEqualTo(400);
    assertThat(deeper.error()).contains("[details_level=2]");
    assertThat(t.at("/cluster/enabled").asBoolean()).isFalse();
    JsonNode upserts =
        t.at("/requests/rest/responses")
            .get("PUT /collections/{collection_name}/points")
            .get("200");
    assertThat(upserts.get("count").asLong()).isGreaterThanOrEqualTo(3);
    assertThat(upserts.get("avg_duration_micros").asDouble()).isPositive();
    assertThat(t.at("/requests/grpc/responses").isObject()).isTrue();
    assertThat(t.at("/requests/rest").has("per_collection_responses")).isFalse();
    Http.Response perCollection = http.get("/telemetry?per_collection=true");
    assertThat(perCollection.status()).isEqualTo(400);
    assertThat(perCollection.error()).contains("per_collection");
    assertThat(http.get("/telemetry?details_level=-1").status()).isEqualTo(400);
  }

  @Test
  void aStandaloneServerSaysItHasNoClusterAndNoIssues() {
    Http.Response cluster = http.get("/cluster");
    assertThat(cluster.status()).isEqualTo(200);
    assertThat(cluster.result().toString()).isEqualTo("{\"status\":\"disabled\"}");
    assertThat(http.get("/issues").result().toString()).isEqualTo("{\"issues\":[]}");
    assertThat(http.delete("/issues").result().asBoolean()).isTrue();
    for (Http.Response r :
        new Http.Response[] {http.post("/cluster/recover", null), http.delete("/cluster/peer/7")}) {
      assertThat(r.status()).isEqualTo(405);
      assertThat(r.error()).isEqualTo("FlashVec is running in standalone mode");
    }
  }
}
