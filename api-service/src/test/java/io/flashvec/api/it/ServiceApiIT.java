package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's service endpoints against a real server: the version clients check, the plain-text
 * health probes, unknown routes answered 404 in Qdrant's error shape, telemetry at its detail
 * levels and Qdrant's request series in the metrics.
 */
class ServiceApiIT extends OneServerPerClass {

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
    // a response is counted when it has been sent: wait for the last one to be recorded
    Await.until(
        java.time.Duration.ofSeconds(10),
        "the upserts counted",
        () ->
            http.get("/telemetry")
                    .result()
                    .at("/requests/rest/responses")
                    .path("PUT /collections/{collection_name}/points")
                    .path("200")
                    .path("count")
                    .asLong()
                >= 3);
    JsonNode t = http.get("/telemetry").result();
    assertThat(t.get("id").asString()).hasSize(36);
    assertThat(t.at("/app/name").asString()).isEqualTo("flashvec");
    assertThat(t.at("/app/version").asString()).isEqualTo("0.1.0");
    assertThat(t.at("/app").has("system")).as("level 0, as Qdrant's default").isFalse();
    assertThat(t.propertyNames())
        .containsExactlyInAnyOrder("id", "app", "collections", "cluster", "requests", "quota");
    assertThat(t.at("/collections/number_of_collections").asInt()).isGreaterThanOrEqualTo(1);
    assertThat(t.at("/collections").has("collections")).isFalse();
    JsonNode detailed = http.get("/telemetry?details_level=1&anonymize=true").result();
    assertThat(detailed.at("/app/system/cores").asInt()).isPositive();
    assertThat(detailed.at("/app/system/ram_size").asLong() % 10)
        .as("anonymized sizes keep their leading digits")
        .isZero();
    assertThat(detailed.at("/collections/collections"))
        .anySatisfy(c -> assertThat(c.at("/params/vectors/size").asInt()).isEqualTo(2));
    assertThat(t.at("/cluster/enabled").asBoolean()).isFalse();
    JsonNode upserts =
        t.at("/requests/rest/responses")
            .get("PUT /collections/{collection_name}/points")
            .get("200");
    assertThat(upserts.get("count").asLong()).isGreaterThanOrEqualTo(3);
    assertThat(upserts.get("avg_duration_micros").asDouble()).isPositive();
    assertThat(upserts.get("min_duration_micros").asDouble())
        .isLessThanOrEqualTo(upserts.get("max_duration_micros").asDouble());
    assertThat(java.time.Instant.parse(upserts.get("last_responded").asString()))
        .isAfter(java.time.Instant.now().minusSeconds(600));
    assertThat(t.at("/requests/grpc/responses").isObject()).isTrue();
    assertThat(t.at("/requests/rest").has("per_collection_responses")).isFalse();
    JsonNode perCollection = http.get("/telemetry?per_collection=true").result();
    assertThat(
            perCollection
                .at("/requests/rest/per_collection_responses/tele")
                .path("PUT /collections/{collection_name}/points")
                .path("200")
                .path("count")
                .asLong())
        .isGreaterThanOrEqualTo(3);
    assertThat(http.get("/telemetry?details_level=-1").status()).isEqualTo(400);
  }

  @Test
  void telemetryLevelsAddMemorySearchThreadsQuotaAndThenCollectionsShardsAndSegments() {
    assertThat(
            http.put("/collections/levels", "{\"vectors\":{\"size\":3,\"distance\":\"Cosine\"}}")
                .status())
        .isEqualTo(200);
    assertThat(
            http.put(
                    "/collections/levels/points?wait=true",
                    "{\"points\":[{\"id\":1,\"vector\":[1,2,3],\"payload\":{\"a\":1}},"
                        + "{\"id\":2,\"vector\":[3,2,1]}]}")
                .status())
        .isEqualTo(200);
    assertThat(
            http.post("/collections/levels/points/search", "{\"vector\":[1,0,0],\"limit\":2}")
                .status())
        .isEqualTo(200);

    JsonNode one = http.get("/telemetry?details_level=1").result();
    assertThat(one.propertyNames())
        .containsExactlyInAnyOrder(
            "id",
            "app",
            "collections",
            "cluster",
            "requests",
            "memory",
            "hardware",
            "search_pool",
            "quota");
    assertThat(one.at("/memory/resident_bytes").asLong()).isPositive();
    assertThat(one.at("/memory/allocated_bytes").asLong())
        .isLessThanOrEqualTo(one.at("/memory/active_bytes").asLong());
    assertThat(one.at("/hardware/collection_data/levels/cpu").asLong())
        .as("the search's distance computations")
        .isPositive();
    assertThat(one.at("/search_pool/high_cpu_threads").asInt())
        .isEqualTo(Runtime.getRuntime().availableProcessors());
    assertThat(one.at("/search_pool/high_io_threads").asInt()).isPositive();
    assertThat(one.at("/quota/config/min_free_bytes").asLong()).isPositive();
    assertThat(one.at("/quota/config/enabled").asBoolean()).isTrue();
    assertThat(one.at("/quota/exceeded/disk_usage").asBoolean()).isFalse();
    assertThat(one.at("/collections/snapshots").isArray()).isTrue();

    JsonNode two = levels(http.get("/telemetry?details_level=2").result());
    assertThat(two.propertyNames()).containsExactlyInAnyOrder("id", "init_time_ms", "config");
    assertThat(two.at("/config/params/vectors/size").asInt()).isEqualTo(3);
    assertThat(two.at("/config/hnsw_config").isObject()).isTrue();

    JsonNode three = levels(http.get("/telemetry?details_level=3").result());
    assertThat(three.get("shards")).hasSize(1);
    JsonNode shard = three.at("/shards/0");
    assertThat(shard.get("replicate_states").size()).isEqualTo(1);
    JsonNode local = shard.get("local");
    assertThat(local.get("num_points").asLong()).isEqualTo(2);
    assertThat(local.get("payloads_size_bytes").asLong()).isPositive();
    assertThat(local.get("vectors_size_bytes").asLong()).isEqualTo(2 * 3 * 4);
    assertThat(local.has("segments")).isFalse();

    JsonNode four = levels(http.get("/telemetry?details_level=10").result());
    JsonNode segments = four.at("/shards/0/local/segments");
    assertThat(segments.size()).isPositive();
    long points = 0;
    for (JsonNode seg : segments) {
      assertThat(seg.propertyNames())
          .containsExactlyInAnyOrder(
              "info", "config", "vector_index_searches", "payload_field_indices");
      points += seg.at("/info/num_points").asLong();
      assertThat(seg.at("/info/disk_usage_bytes").isIntegralNumber()).isTrue();
    }
    assertThat(points).isEqualTo(2);
    assertThat(four.at("/shards/0/local/indexed_only_excluded_vectors").isObject()).isTrue();
  }

  /**
   * Qdrant's update queue: a shard's {@code op_num} is its newest applied write, and the queue of
   * writes not applied yet is empty once they are answered, with or without {@code wait}.
   */
  @Test
  void theUpdateQueueShowsTheNewestAppliedWriteAndNothingPendingOnceAnswered() {
    assertThat(
            http.put("/collections/queue", "{\"vectors\":{\"size\":2,\"distance\":\"Dot\"}}")
                .status())
        .isEqualTo(200);
    assertThat(http.get("/collections/queue").result().at("/update_queue/length").asLong())
        .isZero();
    assertThat(shardQueue().get("op_num").asLong()).isZero();
    String point = "{\"points\":[{\"id\":1,\"vector\":[1,2]}]}";
    assertThat(http.put("/collections/queue/points?wait=true", point).status()).isEqualTo(200);
    assertThat(shardQueue().get("op_num").asLong()).isEqualTo(1);
    assertThat(http.put("/collections/queue/points?wait=false", point).status()).isEqualTo(200);
    JsonNode queue = shardQueue();
    assertThat(queue.get("op_num").asLong()).isEqualTo(2);
    assertThat(queue.get("length").asLong()).isZero();
    assertThat(http.get("/collections/queue").result().at("/update_queue/length").asLong())
        .isZero();
    // a delete by ids is logged even when no point has them, as every write is in Qdrant
    assertThat(http.post("/collections/queue/points/delete?wait=true", "{\"points\":[7]}").status())
        .isEqualTo(200);
    assertThat(shardQueue().get("op_num").asLong()).isEqualTo(3);
    // a write by a filter that matches no point changes nothing and logs nothing
    assertThat(
            http.post(
                    "/collections/queue/points/delete?wait=true",
                    "{\"filter\":{\"must\":[{\"has_id\":[9]}]}}")
                .status())
        .isEqualTo(200);
    assertThat(shardQueue().get("op_num").asLong()).isEqualTo(3);
    JsonNode features = http.get("/telemetry?details_level=1").result().at("/app/features");
    assertThat(features.get("staging").asBoolean(true)).isFalse();
  }

  private static JsonNode shardQueue() {
    for (JsonNode c :
        http.get("/telemetry?details_level=3").result().at("/collections/collections")) {
      if (c.path("id").asString("").equals("queue")) {
        return c.at("/shards/0/local/update_queue");
      }
    }
    throw new AssertionError("no collection queue in the telemetry");
  }

  /** The collection {@code levels} in a telemetry answer. */
  private static JsonNode levels(JsonNode telemetry) {
    for (JsonNode c : telemetry.at("/collections/collections")) {
      if (c.path("id").asString("").equals("levels")) {
        return c;
      }
    }
    throw new AssertionError("no collection levels in " + telemetry);
  }

  @Test
  void metricsHaveQdrantsRequestSeriesWithACollectionLabelOnlyWhenAsked() {
    assertThat(
            http.put("/collections/scrolled", "{\"vectors\":{\"size\":2,\"distance\":\"Dot\"}}")
                .status())
        .isEqualTo(200);
    assertThat(http.send("GET", "/metrics", null).raw())
        .as("a collection's gauges at the first scrape after its creation")
        .contains("collection_points{application=\"flashvec\",id=\"scrolled\"}")
        .contains("flashvec_collection_points{application=\"flashvec\",collection=\"scrolled\"}");
    assertThat(http.post("/collections/scrolled/points/scroll", "{\"limit\":1}").status())
        .isEqualTo(200);
    String scroll =
        "rest_responses_total{method=\"POST\",endpoint=\"/collections/{collection_name}/points/scroll\",status=\"200\"";
    Await.until(
        java.time.Duration.ofSeconds(10),
        "the scroll counted",
        () -> {
          String m = http.send("GET", "/metrics", null).raw();
          return m.contains(scroll)
              && m.contains("collection_points{application=\"flashvec\",id=\"scrolled\"}");
        });
    String global = http.send("GET", "/metrics", null).raw();
    assertThat(global.lines().filter(l -> l.startsWith("rest_responses_")))
        .isNotEmpty()
        .noneMatch(l -> l.contains("collection="));
    String per = http.send("GET", "/metrics?per_collection=true", null).raw();
    assertThat(per.lines().filter(l -> l.startsWith("rest_responses_total{")))
        .anyMatch(l -> l.startsWith(scroll + ",collection=\"scrolled\"}"))
        .allMatch(l -> l.contains("collection="));
    assertThat(per).doesNotContain("app_info");
    Http.Response anonymized = http.send("GET", "/metrics?anonymize=true", null);
    assertThat(anonymized.status()).isEqualTo(400);
    assertThat(http.send("GET", "/metrics?timeout=0", null).status()).isEqualTo(400);
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
