package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The REST API against a real server process: Qdrant's shapes, exact errors with the right
 * statuses, rejected requests that change nothing, and data that survives a restart.
 */
class RestApiIT {

  @TempDir static Path tmp;
  static ServerProcess server;
  static Http http;

  @BeforeAll
  static void start() {
    server =
        new ServerProcess(
                tmp.resolve("data"),
                tmp.resolve("server.log"),
                "--flashvec.limits.max-batch-points=1000")
            .start();
    http = new Http(server.url());
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.stop();
    }
  }

  private static void create(String name, int dim, String distance) {
    Http.Response r =
        http.put(
            "/collections/" + name,
            "{\"vectors\":{\"size\":" + dim + ",\"distance\":\"" + distance + "\"}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    assertThat(r.body().get("status").asString()).isEqualTo("ok");
    assertThat(r.body().get("time").isNumber()).isTrue();
  }

  @Test
  void rootHealthReadinessAndMetrics() {
    assertThat(http.get("/").body().get("version").asString()).isNotEmpty();
    assertThat(http.get("/healthz").status()).isEqualTo(200);
    assertThat(http.get("/readyz").status()).isEqualTo(200);
    create("metrics_probe", 2, "Dot");
    http.put(
        "/collections/metrics_probe/points?wait=true",
        "{\"points\":[{\"id\":1,\"vector\":[1,2]}]}");
    Http.Response stats =
        http.post(
            "/collections/metrics_probe/points/search",
            "{\"vector\":[1,0],\"limit\":1,\"with_stats\":true}");
    assertThat(stats.body().at("/flashvec_stats/distance_computations").asLong()).isEqualTo(1);
    assertThat(stats.body().at("/flashvec_stats/segments").asLong()).isEqualTo(1);
    // a growing segment has no hot node cache
    assertThat(stats.body().at("/flashvec_stats/node_cache_hits").isIntegralNumber()).isTrue();
    assertThat(stats.body().at("/flashvec_stats/node_cache_hits").asLong()).isZero();
    assertThat(
            http.post("/collections/metrics_probe/points/search", "{\"vector\":[1,0],\"limit\":1}")
                .body()
                .has("flashvec_stats"))
        .as("statistics only when asked")
        .isFalse();
    Http.Response m = http.send("GET", "/metrics", null);
    assertThat(m.status()).isEqualTo(200);
    assertThat(m.raw())
        .contains("http_server_requests_seconds_bucket")
        .contains("flashvec_wal_fsync_seconds_count")
        .contains("flashvec_wal_appended_bytes_total")
        .contains("flashvec_search_distance_computations_total")
        .contains("flashvec_io_pages_read_total")
        .contains("flashvec_search_node_cache_hits_total")
        .contains("process_cpu_seconds_total")
        .doesNotContain("process_cpu_time_ns_total")
        .doesNotContain("jvm_compilation_time_ms_total")
        .doesNotContain("http_server_requests_active_seconds_bucket");
    // request metrics carry the collection; the buckets are the fixed ones a dashboard draws
    String searchBuckets =
        m.raw()
            .lines()
            .filter(l -> l.startsWith("http_server_requests_seconds_bucket{"))
            .filter(l -> l.contains("collection=\"metrics_probe\""))
            .filter(l -> l.contains("uri=\"/collections/{name}/points/search\""))
            .filter(l -> l.contains("status=\"200\""))
            .map(l -> l.replaceAll(".*le=\"([^\"]+)\".*", "$1"))
            .collect(java.util.stream.Collectors.joining(","));
    assertThat(searchBuckets)
        .isEqualTo("0.001,0.0025,0.005,0.01,0.025,0.05,0.1,0.25,0.5,1.0,2.5,5.0,10.0,30.0,+Inf");
    Await.until(
        java.time.Duration.ofSeconds(10),
        "per-collection index gauges",
        () ->
            http.send("GET", "/metrics", null)
                .raw()
                .contains(
                    "flashvec_collection_indexed_points{application=\"flashvec\",collection=\"metrics_probe\"} 1.0"));
    assertThat(http.send("GET", "/metrics", null).raw())
        .contains("flashvec_collection_index_backlog_points{")
        .contains("flashvec_collection_builds_pending{")
        .contains("flashvec_collection_merges_running{")
        .contains("flashvec_collection_disk_bytes{");
  }

  /**
   * The Helm chart's alert rules and Grafana dashboard name only metrics this server exports: a
   * renamed metric would otherwise leave an alert that never fires and an empty panel.
   */
  @Test
  void theChartsAlertsAndDashboardUseOnlyMetricsTheServerExports() throws Exception {
    create("chart_probe", 2, "Dot");
    http.put(
        "/collections/chart_probe/points?wait=true", "{\"points\":[{\"id\":1,\"vector\":[1,2]}]}");
    http.post("/collections/chart_probe/points/search", "{\"vector\":[1,0],\"limit\":1}");
    http.post("/collections/chart_probe/points/search", "{\"vector\":[1,0,3],\"limit\":1}");
    Path chart = Path.of("..", "helm", "flashvec");
    String sources =
        java.nio.file.Files.readString(chart.resolve("templates/prometheusrule.yaml"))
            + java.nio.file.Files.readString(chart.resolve("files/grafana-dashboard.json"));
    java.util.Set<String> used = new java.util.TreeSet<>();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("([a-z][a-z0-9_]*)(?:\\{|, job\\))").matcher(sources);
    while (m.find()) {
      used.add(m.group(1));
    }
    used.remove("up"); // Prometheus' own, per scrape target
    assertThat(used).as("metrics the chart uses").hasSizeGreaterThan(15);
    Await.until(
        java.time.Duration.ofSeconds(10),
        "per-collection gauges of chart_probe",
        () ->
            http.send("GET", "/metrics", null)
                .raw()
                .contains(
                    "flashvec_collection_points{application=\"flashvec\",collection=\"chart_probe\"}"));
    java.util.Set<String> exported =
        http.send("GET", "/metrics", null)
            .raw()
            .lines()
            .filter(l -> !l.startsWith("#") && !l.isBlank())
            .map(l -> l.replaceAll("[{ ].*", ""))
            .collect(java.util.stream.Collectors.toSet());
    assertThat(exported).containsAll(used);
  }

  @Test
  void aSealedGraphServesItsFirstHopsFromTheHotNodeCache() {
    create("hot_nodes", 8, "Cosine");
    java.util.Random r = io.flashvec.testing.TestSeeds.random("rest-hot-nodes");
    StringBuilder points = new StringBuilder("{\"points\":[");
    for (int i = 0; i < 500; i++) {
      points.append(i == 0 ? "" : ",").append("{\"id\":").append(i).append(",\"vector\":[");
      for (int j = 0; j < 8; j++) {
        points
            .append(j == 0 ? "" : ",")
            .append(String.format(Locale.ROOT, "%.4f", r.nextGaussian()));
      }
      points.append("]}");
    }
    points.append("]}");
    assertThat(http.put("/collections/hot_nodes/points?wait=true", points.toString()).status())
        .isEqualTo(200);
    assertThat(http.post("/collections/hot_nodes/flush", "{}").status()).isEqualTo(200);
    io.flashvec.testing.Await.until(
        java.time.Duration.ofSeconds(120),
        "the collection is green with a sealed segment",
        () -> {
          JsonNode info = http.get("/collections/hot_nodes").result();
          return info.path("status").asString().equals("green")
              && info.path("segments_count").asInt() > 0
              && info.path("indexed_vectors_count").asLong() == 500;
        });
    Http.Response stats =
        http.post(
            "/collections/hot_nodes/points/search",
            "{\"vector\":[1,0,0,0,0,0,0,1],\"limit\":3,\"with_stats\":true}");
    assertThat(stats.status()).as(stats.raw()).isEqualTo(200);
    // every graph search expands the entry first, and the entry is the first node cached
    assertThat(stats.body().at("/flashvec_stats/node_cache_hits").asLong())
        .as(stats.raw())
        .isPositive()
        .isLessThanOrEqualTo(stats.body().at("/flashvec_stats/nodes_expanded").asLong());
    assertThat(http.send("GET", "/metrics", null).raw())
        .containsPattern("flashvec_search_node_cache_hits_total\\{[^}]*} [1-9]");
  }

  /**
   * Qdrant's {@code on_disk_payload: false}: accepted, shown, kept across restarts, and honoured
   * (the sealed segment's payloads are on the heap: the collection's memory grows by about their
   * size, and shrinks when a PATCH sets it back to true and the segment is reopened).
   */
  @Test
  void payloadsHeldInMemoryAreShownHonouredAndSurviveARestart() {
    Http.Response created =
        http.put(
            "/collections/in_ram",
            "{\"vectors\":{\"size\":4,\"distance\":\"Dot\"},\"on_disk_payload\":false}");
    assertThat(created.status()).as(created.raw()).isEqualTo(200);
    assertThat(http.get("/collections/in_ram").result().at("/config/params/on_disk_payload"))
        .hasToString("false");
    // set by the boolean, the memory placement is not shown (as Qdrant)
    assertThat(http.get("/collections/in_ram").result().at("/config/params").has("payload"))
        .isFalse();
    int n = 400;
    String filler = "p".repeat(2000);
    StringBuilder points = new StringBuilder("{\"points\":[");
    for (int i = 0; i < n; i++) {
      points
          .append(i == 0 ? "" : ",")
          .append("{\"id\":")
          .append(i)
          .append(",\"vector\":[")
          .append(i % 7)
          .append(",1,")
          .append(i % 3)
          .append(",0.5],\"payload\":{\"i\":")
          .append(i)
          .append(",\"s\":\"")
          .append(filler)
          .append("\"}}");
    }
    points.append("]}");
    assertThat(http.put("/collections/in_ram/points?wait=true", points.toString()).status())
        .isEqualTo(200);
    assertThat(http.post("/collections/in_ram/flush", "{}").status()).isEqualTo(200);
    io.flashvec.testing.Await.until(
        java.time.Duration.ofSeconds(120),
        "the collection is green with a sealed segment",
        () -> {
          JsonNode info = http.get("/collections/in_ram").result();
          return info.path("status").asString().equals("green")
              && info.path("segments_count").asInt() > 0
              && info.path("indexed_vectors_count").asLong() == n;
        });
    server.restart();
    JsonNode info = http.get("/collections/in_ram").result();
    assertThat(info.at("/config/params/on_disk_payload")).hasToString("false");
    long onHeap = info.at("/flashvec/memory_bytes").asLong();
    assertThat(http.get("/collections/in_ram/points/123").result().at("/payload/i").asInt())
        .isEqualTo(123);
    Http.Response patched =
        http.send(
            "PATCH", "/collections/in_ram", "{\"params\":{\"payload\":{\"memory\":\"cold\"}}}");
    assertThat(patched.status()).as(patched.raw()).isEqualTo(200);
    server.restart();
    info = http.get("/collections/in_ram").result();
    assertThat(info.at("/config/params/on_disk_payload")).hasToString("true");
    // given as a memory placement, it is shown as one from then on, across restarts
    assertThat(info.at("/config/params/payload/memory").asString()).isEqualTo("cold");
    long mapped = info.at("/flashvec/memory_bytes").asLong();
    assertThat(onHeap - mapped).as("payload bytes on the heap").isGreaterThan((long) n * 2000);
    JsonNode p = http.get("/collections/in_ram/points/321").result();
    assertThat(p.at("/payload/i").asInt()).isEqualTo(321);
    assertThat(p.at("/payload/s").asString()).isEqualTo(filler);
    Http.Response pinned =
        http.send(
            "PATCH", "/collections/in_ram", "{\"params\":{\"payload\":{\"memory\":\"pinned\"}}}");
    assertThat(pinned.status()).as(pinned.raw()).isEqualTo(422);
  }

  /**
   * Qdrant's {@code memory} placements are shown once given, at creation or by an update, and not
   * otherwise: the graph's vectors are {@code cold} (on disk, read on demand), payloads as set.
   */
  @Test
  void memoryPlacementsAreShownOnceGiven() {
    Http.Response created =
        http.put(
            "/collections/placed",
            "{\"vectors\":{\"size\":4,\"distance\":\"Dot\",\"memory\":\"cold\"},"
                + "\"payload\":{\"memory\":\"cached\"}}");
    assertThat(created.status()).as(created.raw()).isEqualTo(200);
    JsonNode params = http.get("/collections/placed").result().at("/config/params");
    assertThat(params.at("/vectors/memory").asString()).isEqualTo("cold");
    assertThat(params.at("/payload/memory").asString()).isEqualTo("cached");
    assertThat(params.get("on_disk_payload").asBoolean()).isFalse();

    create("unplaced", 4, "Dot");
    params = http.get("/collections/unplaced").result().at("/config/params");
    assertThat(params.get("vectors").has("memory")).isFalse();
    assertThat(params.has("payload")).isFalse();
    Http.Response patched =
        http.send(
            "PATCH",
            "/collections/unplaced",
            "{\"vectors\":{\"\":{\"memory\":\"cold\"}},\"params\":{\"payload\":{\"memory\":\"cached\"}}}");
    assertThat(patched.status()).as(patched.raw()).isEqualTo(200);
    params = http.get("/collections/unplaced").result().at("/config/params");
    assertThat(params.at("/vectors/memory").asString()).isEqualTo("cold");
    assertThat(params.at("/payload/memory").asString()).isEqualTo("cached");
    assertThat(params.get("on_disk_payload").asBoolean()).isFalse();
    // the boolean form changes the placement shown
    patched =
        http.send("PATCH", "/collections/unplaced", "{\"params\":{\"on_disk_payload\":true}}");
    assertThat(patched.status()).as(patched.raw()).isEqualTo(200);
    params = http.get("/collections/unplaced").result().at("/config/params");
    assertThat(params.at("/payload/memory").asString()).isEqualTo("cold");
    assertThat(http.delete("/collections/placed").status()).isEqualTo(200);
    assertThat(http.delete("/collections/unplaced").status()).isEqualTo(200);
  }

  @Test
  void aConfigCopiedFromQdrantKeepsItsGraphInMemoryAndItsClosedWalSegments() {
    // what GET of a default Qdrant 1.x collection shows and qdrant-client's migrate sends back
    String qdrantDefaults =
        "{\"vectors\":{\"size\":4,\"distance\":\"Cosine\"},\"shard_number\":1,"
            + "\"replication_factor\":1,\"write_consistency_factor\":1,\"on_disk_payload\":true,"
            + "\"hnsw_config\":{\"m\":16,\"ef_construct\":100,\"full_scan_threshold\":10000,"
            + "\"max_indexing_threads\":0,\"on_disk\":false},"
            + "\"optimizers_config\":{\"deleted_threshold\":0.2,\"vacuum_min_vector_number\":1000,"
            + "\"default_segment_number\":0,\"max_segment_size\":null,\"memmap_threshold\":null,"
            + "\"indexing_threshold\":10000,\"flush_interval_sec\":5,"
            + "\"max_optimization_threads\":null},"
            + "\"wal_config\":{\"wal_capacity_mb\":32,\"wal_segments_ahead\":0,"
            + "\"wal_retain_closed\":1},\"quantization_config\":null}";
    Http.Response created = http.put("/collections/migrated", qdrantDefaults);
    assertThat(created.status()).as(created.raw()).isEqualTo(200);
    JsonNode config = http.get("/collections/migrated").result().get("config");
    // Qdrant's graph in RAM: FlashVec's in-memory index, shown as Qdrant shows it
    assertThat(config.at("/hnsw_config/on_disk").asBoolean()).isFalse();
    assertThat(config.at("/params/vectors/on_disk").asBoolean()).isFalse();
    assertThat(config.at("/hnsw_config/m").asInt()).isEqualTo(16);
    assertThat(config.at("/wal_config/wal_retain_closed").asInt()).isEqualTo(1);
    assertThat(config.at("/wal_config/wal_capacity_mb").asInt()).isEqualTo(32);
    // set at creation
    Http.Response changed =
        http.send("PATCH", "/collections/migrated", "{\"wal_config\":{\"wal_retain_closed\":3}}");
    assertThat(changed.status()).isEqualTo(400);
    assertThat(changed.error()).contains("wal_config.wal_retain_closed=3");
    Http.Response same =
        http.send("PATCH", "/collections/migrated", "{\"wal_config\":{\"wal_retain_closed\":1}}");
    assertThat(same.status()).as(same.raw()).isEqualTo(200);
    Http.Response negative =
        http.put(
            "/collections/migrated_bad",
            "{\"vectors\":{\"size\":4,\"distance\":\"Dot\"},"
                + "\"wal_config\":{\"wal_retain_closed\":-1}}");
    assertThat(negative.status()).isEqualTo(400);
    assertThat(negative.error()).contains("wal_config.wal_retain_closed");
    assertThat(http.get("/collections/migrated_bad").status()).isEqualTo(404);
    assertThat(http.delete("/collections/migrated").status()).isEqualTo(200);
    // what qdrant-client's local mode shows: one optimization at a time per shard
    Http.Response one =
        http.put(
            "/collections/migrated_local",
            "{\"vectors\":{\"size\":4,\"distance\":\"Dot\"},"
                + "\"optimizers_config\":{\"max_optimization_threads\":1}}");
    assertThat(one.status()).as(one.raw()).isEqualTo(200);
    assertThat(
            http.get("/collections/migrated_local")
                .result()
                .at("/config/optimizer_config/max_optimization_threads")
                .asInt())
        .isEqualTo(1);
    Http.Response more =
        http.send(
            "PATCH",
            "/collections/migrated_local",
            "{\"optimizers_config\":{\"max_optimization_threads\":4}}");
    assertThat(more.status()).isEqualTo(400);
    assertThat(more.error()).contains("optimizers_config.max_optimization_threads=4");
    Http.Response none =
        http.put(
            "/collections/migrated_none",
            "{\"vectors\":{\"size\":4,\"distance\":\"Dot\"},"
                + "\"optimizers_config\":{\"max_optimization_threads\":0}}");
    assertThat(none.status()).isEqualTo(400);
    assertThat(none.error()).contains("indexing_threshold");
    assertThat(http.delete("/collections/migrated_local").status()).isEqualTo(200);
  }

  @Test
  void collectionLifecycleInQdrantShapes() {
    create("life", 3, "Cosine");
    assertThat(http.get("/collections/life/exists").result().get("exists").asBoolean()).isTrue();
    List<String> names = new ArrayList<>();
    http.get("/collections")
        .result()
        .get("collections")
        .forEach(c -> names.add(c.get("name").asString()));
    assertThat(names).contains("life");
    JsonNode info = http.get("/collections/life").result();
    assertThat(info.get("status").asString()).isEqualTo("green");
    assertThat(info.get("optimizer_status").asString()).isEqualTo("ok");
    assertThat(info.get("segments_count").asInt()).isEqualTo(1);
    assertThat(info.get("points_count").asLong()).isZero();
    assertThat(info.at("/config/params/vectors/size").asInt()).isEqualTo(3);
    assertThat(info.at("/config/params/vectors/distance").asString()).isEqualTo("Cosine");
    assertThat(info.at("/config/params/shard_number").asInt()).isEqualTo(1);
    assertThat(info.at("/config/hnsw_config").isObject()).isTrue();
    assertThat(info.at("/config/optimizer_config/flush_interval_sec").isNumber()).isTrue();
    assertThat(info.get("payload_schema").isObject()).isTrue();
    // the config collection info reports is accepted back, as qdrant-client's migrate sends it
    JsonNode config = info.get("config");
    var copy = tools.jackson.databind.json.JsonMapper.builder().build().createObjectNode();
    copy.set("vectors", config.at("/params/vectors"));
    copy.set("shard_number", config.at("/params/shard_number"));
    copy.set("replication_factor", config.at("/params/replication_factor"));
    copy.set("write_consistency_factor", config.at("/params/write_consistency_factor"));
    copy.set("on_disk_payload", config.at("/params/on_disk_payload"));
    copy.set("hnsw_config", config.get("hnsw_config"));
    copy.set("optimizers_config", config.get("optimizer_config"));
    copy.set("wal_config", config.get("wal_config"));
    copy.set("quantization_config", config.get("quantization_config"));
    assertThat(http.put("/collections/life_copy", copy.toString()).status()).isEqualTo(200);
    assertThat(http.get("/collections/life_copy").result().get("config")).isEqualTo(config);
    assertThat(http.delete("/collections/life_copy").status()).isEqualTo(200);
    JsonNode cluster = http.get("/collections/life/cluster").result();
    assertThat(cluster.get("peer_id").asLong()).isPositive();
    assertThat(cluster.get("shard_count").asInt()).isEqualTo(1);
    assertThat(cluster.at("/local_shards/0/shard_id").asInt()).isZero();
    assertThat(cluster.at("/local_shards/0/points_count").asLong()).isZero();
    assertThat(cluster.at("/local_shards/0/state").asString()).isEqualTo("Active");
    assertThat(cluster.get("remote_shards").isEmpty()).isTrue();
    assertThat(cluster.get("shard_transfers").isArray()).isTrue();
    assertThat(http.delete("/collections/life").result().asBoolean()).isTrue();
    assertThat(http.get("/collections/life").status()).isEqualTo(404);
    assertThat(http.get("/collections/life/cluster").status()).isEqualTo(404);
    assertThat(http.delete("/collections/life").result().asBoolean()).isFalse();
  }

  @Test
  void pointsUpsertGetScrollSearchAndDelete() {
    create("pts", 2, "Euclid");
    String uuid = "550e8400-e29b-41d4-a716-446655440000";
    Http.Response up =
        http.put(
            "/collections/pts/points?wait=true",
            "{\"points\":[{\"id\":1,\"vector\":[0,0],\"payload\":{\"a\":1}},"
                + "{\"id\":18446744073709551615,\"vector\":[3,4]},"
                + "{\"id\":\""
                + uuid
                + "\",\"vector\":[1,1],\"payload\":{\"tags\":[\"x\",\"y\"]}}]}");
    assertThat(up.status()).as(up.raw()).isEqualTo(200);
    assertThat(up.result().get("status").asString()).isEqualTo("completed");
    Http.Response batch =
        http.put(
            "/collections/pts/points?wait=true",
            "{\"batch\":{\"ids\":[2,3],\"vectors\":[[10,10],[-1,0]],\"payloads\":[{\"b\":2},null]}}");
    assertThat(batch.status()).as(batch.raw()).isEqualTo(200);

    JsonNode one = http.get("/collections/pts/points/18446744073709551615").result();
    assertThat(one.get("id").bigIntegerValue().toString()).isEqualTo("18446744073709551615");
    assertThat(one.get("vector").get(1).floatValue()).isEqualTo(4f);
    assertThat(http.get("/collections/pts/points/99").status()).isEqualTo(404);

    JsonNode many =
        http.post(
                "/collections/pts/points", "{\"ids\":[\"" + uuid + "\",2,77],\"with_vector\":true}")
            .result();
    assertThat(many).hasSize(2);
    assertThat(many.get(0).get("payload").toString()).isEqualTo("{\"tags\":[\"x\",\"y\"]}");

    assertThat(
            http.post("/collections/pts/points/count", "{\"exact\":true}")
                .result()
                .get("count")
                .asLong())
        .isEqualTo(5);

    // Scroll in id order: numbers (unsigned) first, then UUIDs.
    List<String> order = new ArrayList<>();
    JsonNode offset = null;
    do {
      String body = "{\"limit\":2" + (offset == null ? "" : ",\"offset\":" + offset) + "}";
      JsonNode page = http.post("/collections/pts/points/scroll", body).result();
      page.get("points").forEach(p -> order.add(p.get("id").asString()));
      offset = page.get("next_page_offset");
    } while (offset != null && !offset.isNull());
    assertThat(order).containsExactly("1", "2", "3", "18446744073709551615", uuid);

    // Euclid: the score is the distance, ascending.
    JsonNode hits =
        http.post(
                "/collections/pts/points/search",
                "{\"vector\":[0,0],\"limit\":3,\"with_payload\":true}")
            .result();
    assertThat(hits.get(0).get("id").asLong()).isEqualTo(1);
    assertThat(hits.get(0).get("score").floatValue()).isZero();
    assertThat(hits.get(0).get("payload").get("a").asInt()).isEqualTo(1);
    assertThat(hits.get(1).get("id").asLong()).isEqualTo(3);
    assertThat(hits.get(2).get("id").asString()).isEqualTo(uuid);
    JsonNode offsetHits =
        http.post("/collections/pts/points/search", "{\"vector\":[0,0],\"limit\":2,\"offset\":1}")
            .result();
    assertThat(offsetHits.get(0).get("id").asLong()).isEqualTo(3);
    JsonNode near =
        http.post(
                "/collections/pts/points/search",
                "{\"vector\":[0,0],\"limit\":10,\"score_threshold\":1.5}")
            .result();
    assertThat(near).hasSize(3);

    JsonNode q =
        http.post("/collections/pts/points/query", "{\"query\":{\"nearest\":[10,9]},\"limit\":1}")
            .result();
    assertThat(q.get("points").get(0).get("id").asLong()).isEqualTo(2);
    JsonNode qb =
        http.post(
                "/collections/pts/points/search/batch",
                "{\"searches\":[{\"vector\":[0,0],\"limit\":1},{\"vector\":[3,4],\"limit\":1}]}")
            .result();
    assertThat(qb.get(0).get(0).get("id").asLong()).isEqualTo(1);
    assertThat(qb.get(1).get(0).get("id").asString()).isEqualTo("18446744073709551615");

    // Upsert of an existing id replaces it everywhere.
    http.put("/collections/pts/points?wait=true", "{\"points\":[{\"id\":1,\"vector\":[100,100]}]}");
    JsonNode after =
        http.post("/collections/pts/points/search", "{\"vector\":[0,0],\"limit\":1}").result();
    assertThat(after.get(0).get("id").asLong()).isEqualTo(3);
    assertThat(http.post("/collections/pts/points/count", "{}").result().get("count").asLong())
        .isEqualTo(5);

    Http.Response del =
        http.post("/collections/pts/points/delete?wait=true", "{\"points\":[1,\"" + uuid + "\"]}");
    assertThat(del.status()).isEqualTo(200);
    assertThat(http.post("/collections/pts/points/count", "{}").result().get("count").asLong())
        .isEqualTo(3);
    assertThat(http.get("/collections/pts/points/1").status()).isEqualTo(404);
  }

  @Test
  void payloadUpdatesKeepVectorsAndSurviveInTheWal() {
    create("pay", 2, "Dot");
    http.put(
        "/collections/pay/points?wait=true",
        "{\"points\":[{\"id\":1,\"vector\":[1,2],\"payload\":{\"a\":1,\"b\":2}},{\"id\":2,\"vector\":[3,4]}]}");
    // as Qdrant: an id that does not exist is a 404, and nothing changes
    Http.Response missing =
        http.post(
            "/collections/pay/points/payload?wait=true",
            "{\"payload\":{\"c\":3},\"points\":[1,2,99]}");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.error()).contains("No point with id 99 found");
    assertThat(http.get("/collections/pay/points/1").result().get("payload").toString())
        .doesNotContain("\"c\"");
    assertThat(
            http.post(
                    "/collections/pay/points/payload?wait=true",
                    "{\"payload\":{\"c\":3},\"points\":[1,2]}")
                .status())
        .isEqualTo(200);
    JsonNode p1 = http.get("/collections/pay/points/1").result();
    assertThat(p1.get("payload").toString()).isEqualTo("{\"a\":1,\"b\":2,\"c\":3}");
    assertThat(p1.get("vector").get(1).floatValue()).isEqualTo(2f);
    assertThat(http.get("/collections/pay/points/2").result().get("payload").toString())
        .isEqualTo("{\"c\":3}");
    http.put("/collections/pay/points/payload?wait=true", "{\"payload\":{\"z\":0},\"points\":[1]}");
    assertThat(http.get("/collections/pay/points/1").result().get("payload").toString())
        .isEqualTo("{\"z\":0}");
    http.post(
        "/collections/pay/points/payload/delete?wait=true", "{\"keys\":[\"z\"],\"points\":[1]}");
    assertThat(http.get("/collections/pay/points/1").result().get("payload").toString())
        .isEqualTo("{}");
    // a nested key: merged into the object there, created on the way (Qdrant's set_payload key)
    Http.Response nested =
        http.post(
            "/collections/pay/points/payload?wait=true",
            "{\"payload\":{\"city\":\"Rome\"},\"key\":\"meta.geo\",\"points\":[1]}");
    assertThat(nested.status()).as(nested.raw()).isEqualTo(200);
    assertThat(http.get("/collections/pay/points/1").result().get("payload").toString())
        .isEqualTo("{\"meta\":{\"geo\":{\"city\":\"Rome\"}}}");
    Http.Response overwriteWithKey =
        http.put(
            "/collections/pay/points/payload?wait=true",
            "{\"payload\":{\"x\":1},\"key\":\"meta\",\"points\":[1]}");
    assertThat(overwriteWithKey.status()).isEqualTo(400);
    assertThat(overwriteWithKey.error()).contains("takes no `key`");
    http.post(
        "/collections/pay/points/payload/delete?wait=true", "{\"keys\":[\"meta\"],\"points\":[1]}");
    http.post("/collections/pay/points/payload/clear?wait=true", "{\"points\":[2]}");
    assertThat(http.get("/collections/pay/points/2").result().get("payload").toString())
        .isEqualTo("{}");
    assertThat(http.post("/collections/pay/points/count", "{}").result().get("count").asLong())
        .isEqualTo(2);
    Http.Response bad =
        http.post("/collections/pay/points/payload", "{\"payload\":[1],\"points\":[1]}");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.error()).contains("payload");
    Http.Response byFilter =
        http.post(
            "/collections/pay/points/payload?wait=true",
            "{\"payload\":{\"a\":7},\"filter\":{\"must\":[{\"has_id\":[2]}]}}");
    assertThat(byFilter.status()).as(byFilter.raw()).isEqualTo(200);
    assertThat(http.get("/collections/pay/points/2").result().get("payload").toString())
        .isEqualTo("{\"a\":7}");
    assertThat(http.get("/collections/pay/points/1").result().get("payload").toString())
        .isEqualTo("{}");
    Http.Response both =
        http.post(
            "/collections/pay/points/payload",
            "{\"payload\":{\"a\":1},\"points\":[1],\"filter\":{}}");
    assertThat(both.status()).isEqualTo(400);
    assertThat(both.error()).contains("either `points`");
  }

  /** Qdrant's update_vectors, delete_vectors and batch update endpoints. */
  @Test
  void aCollectionsWalCapacityIsHonouredShownAndFixed() throws Exception {
    Http.Response bad =
        http.put(
            "/collections/walcap",
            "{\"vectors\":{\"size\":128,\"distance\":\"Dot\"},\"wal_config\":{\"wal_capacity_mb\":0}}");
    assertThat(bad.status()).isEqualTo(422);
    assertThat(bad.error()).contains("wal_capacity_mb");
    Http.Response r =
        http.put(
            "/collections/walcap",
            "{\"vectors\":{\"size\":128,\"distance\":\"Dot\"},\"wal_config\":{\"wal_capacity_mb\":1}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    assertThat(
            http.get("/collections/walcap")
                .result()
                .at("/config/wal_config/wal_capacity_mb")
                .asInt())
        .isEqualTo(1);
    // 3 MiB of vectors (6,000 x 128 floats): the log rolls into several 1 MiB segments
    Random random = TestSeeds.random("RestApiIT.walcap");
    for (int batch = 0; batch < 12; batch++) {
      StringBuilder body = new StringBuilder("{\"points\":[");
      for (int i = 0; i < 500; i++) {
        body.append(i == 0 ? "" : ",")
            .append("{\"id\":")
            .append(batch * 500 + i)
            .append(",\"vector\":[");
        for (int d = 0; d < 128; d++) {
          body.append(d == 0 ? "" : ",").append(random.nextFloat());
        }
        body.append("]}");
      }
      assertThat(http.put("/collections/walcap/points?wait=true", body + "]}").status())
          .isEqualTo(200);
    }
    long segments;
    try (var files =
        java.nio.file.Files.walk(tmp.resolve("data").resolve("collections").resolve("walcap"))) {
      segments =
          files.filter(f -> f.toString().contains("wal") && f.toString().endsWith(".log")).count();
    }
    assertThat(segments).as("WAL segments of a 1 MiB capacity").isGreaterThan(1);
    Http.Response change =
        http.send("PATCH", "/collections/walcap", "{\"wal_config\":{\"wal_capacity_mb\":64}}");
    assertThat(change.status()).isEqualTo(400);
    assertThat(change.error()).contains("wal_capacity_mb").contains("cannot be changed");
    assertThat(
            http.send("PATCH", "/collections/walcap", "{\"wal_config\":{\"wal_capacity_mb\":1}}")
                .status())
        .isEqualTo(200);
  }

  @Test
  void upsertModesAndUpdateFiltersWriteOnlyThePointsTheyAllow() {
    create("um", 2, "Dot");
    http.put(
        "/collections/um/points?wait=true",
        "{\"points\":[{\"id\":1,\"vector\":[1,0],\"payload\":{\"v\":1}},"
            + "{\"id\":2,\"vector\":[0,1],\"payload\":{\"v\":5}}]}");
    // insert_only: point 1 exists and stays, point 3 is new and is written
    Http.Response ins =
        http.put(
            "/collections/um/points?wait=true",
            "{\"update_mode\":\"insert_only\",\"points\":[{\"id\":1,\"vector\":[9,9],"
                + "\"payload\":{\"v\":9}},{\"id\":3,\"vector\":[1,1],\"payload\":{\"v\":3}}]}");
    assertThat(ins.status()).as(ins.raw()).isEqualTo(200);
    assertThat(http.get("/collections/um/points/1").result().at("/payload/v").asInt()).isEqualTo(1);
    assertThat(http.get("/collections/um/points/3").result().at("/payload/v").asInt()).isEqualTo(3);
    // update_only: point 1 is overwritten, point 4 is not created
    Http.Response upd =
        http.put(
            "/collections/um/points?wait=true",
            "{\"update_mode\":\"update_only\",\"points\":[{\"id\":1,\"vector\":[2,2],"
                + "\"payload\":{\"v\":2}},{\"id\":4,\"vector\":[1,1]}]}");
    assertThat(upd.status()).as(upd.raw()).isEqualTo(200);
    assertThat(http.get("/collections/um/points/1").result().at("/vector/0").floatValue())
        .isEqualTo(2f);
    assertThat(http.get("/collections/um/points/4").status()).isEqualTo(404);
    // update_filter: an existing point is overwritten only if it matches; new points are inserted
    Http.Response cond =
        http.put(
            "/collections/um/points?wait=true",
            "{\"update_filter\":{\"must\":{\"key\":\"v\",\"range\":{\"lt\":4}}},"
                + "\"points\":[{\"id\":1,\"vector\":[3,3],\"payload\":{\"v\":4}},"
                + "{\"id\":2,\"vector\":[3,3],\"payload\":{\"v\":6}},"
                + "{\"id\":5,\"vector\":[3,3],\"payload\":{\"v\":5}}]}");
    assertThat(cond.status()).as(cond.raw()).isEqualTo(200);
    assertThat(http.get("/collections/um/points/1").result().at("/payload/v").asInt()).isEqualTo(4);
    assertThat(http.get("/collections/um/points/2").result().at("/payload/v").asInt()).isEqualTo(5);
    assertThat(http.get("/collections/um/points/5").result().at("/payload/v").asInt()).isEqualTo(5);
    // update_vectors with update_filter: only the matching point's vector changes
    Http.Response uv =
        http.put(
            "/collections/um/points/vectors?wait=true",
            "{\"update_filter\":{\"must\":{\"key\":\"v\",\"range\":{\"gte\":5}}},"
                + "\"points\":[{\"id\":1,\"vector\":[7,7]},{\"id\":2,\"vector\":[7,7]}]}");
    assertThat(uv.status()).as(uv.raw()).isEqualTo(200);
    assertThat(http.get("/collections/um/points/1").result().at("/vector/0").floatValue())
        .isEqualTo(3f);
    assertThat(http.get("/collections/um/points/2").result().at("/vector/0").floatValue())
        .isEqualTo(7f);
    // a mode it does not know and a field it does not know are refused, naming them
    Http.Response badMode =
        http.put(
            "/collections/um/points?wait=true",
            "{\"update_mode\":\"replace\",\"points\":[{\"id\":6,\"vector\":[1,1]}]}");
    assertThat(badMode.status()).isEqualTo(400);
    assertThat(badMode.error()).contains("replace").contains("insert_only");
    Http.Response badField =
        http.put(
            "/collections/um/points?wait=true",
            "{\"upsert_mode\":\"x\",\"points\":[{\"id\":6,\"vector\":[1,1]}]}");
    assertThat(badField.status()).isEqualTo(400);
    assertThat(badField.error()).contains("upsert_mode");
    assertThat(http.get("/collections/um/points/6").status()).isEqualTo(404);
    assertThat(
            http.post("/collections/um/points/count", "{\"exact\":true}")
                .result()
                .get("count")
                .asLong())
        .isEqualTo(4);
  }

  @Test
  void vectorUpdatesAndBatchUpdatesInQdrantShapes() {
    create("vb", 2, "Dot");
    http.put(
        "/collections/vb/points?wait=true",
        "{\"points\":[{\"id\":1,\"vector\":[1,0],\"payload\":{\"k\":1}},"
            + "{\"id\":2,\"vector\":[0,1],\"payload\":{\"k\":2}}]}");
    // update_vectors: the vector changes, the payload stays; an unknown id is a 404, no change
    Http.Response u =
        http.put(
            "/collections/vb/points/vectors?wait=true",
            "{\"points\":[{\"id\":1,\"vector\":[0.5,0.5]}]}");
    assertThat(u.status()).as(u.raw()).isEqualTo(200);
    JsonNode p1 = http.get("/collections/vb/points/1").result();
    assertThat(p1.get("vector").get(0).floatValue()).isEqualTo(0.5f);
    assertThat(p1.get("payload").toString()).isEqualTo("{\"k\":1}");
    Http.Response missing =
        http.put(
            "/collections/vb/points/vectors?wait=true",
            "{\"points\":[{\"id\":2,\"vector\":[9,9]},{\"id\":77,\"vector\":[1,1]}]}");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.error()).contains("77");
    assertThat(http.get("/collections/vb/points/2").result().at("/vector/0").floatValue())
        .isEqualTo(0f);
    Http.Response dv =
        http.post("/collections/vb/points/vectors/delete", "{\"points\":[1],\"vector\":[\"\"]}");
    assertThat(dv.status()).isEqualTo(400);
    assertThat(dv.error())
        .contains("the default vector can only be deleted in a collection with sparse");

    // batch: in order, one result per operation
    Http.Response b =
        http.post(
            "/collections/vb/points/batch?wait=true",
            "{\"operations\":["
                + "{\"upsert\":{\"points\":[{\"id\":3,\"vector\":[1,1]}]}},"
                + "{\"set_payload\":{\"payload\":{\"x\":1},\"points\":[3]}},"
                + "{\"overwrite_payload\":{\"payload\":{\"y\":{\"z\":1,\"w\":2}},\"points\":[2]}},"
                + "{\"delete_payload\":{\"keys\":[\"y.z\"],\"points\":[2]}},"
                + "{\"update_vectors\":{\"points\":[{\"id\":2,\"vector\":[0,2]}]}},"
                + "{\"clear_payload\":{\"points\":[1]}},"
                + "{\"delete\":{\"filter\":{\"must\":[{\"key\":\"x\",\"match\":{\"value\":1}}]}}}"
                + "]}");
    assertThat(b.status()).as(b.raw()).isEqualTo(200);
    assertThat(b.result()).hasSize(7);
    assertThat(b.result().get(6).get("status").asString()).isEqualTo("completed");
    assertThat(http.get("/collections/vb/points/3").status()).isEqualTo(404);
    JsonNode p2 = http.get("/collections/vb/points/2").result();
    assertThat(p2.get("payload").toString()).isEqualTo("{\"y\":{\"w\":2}}");
    assertThat(p2.at("/vector/1").floatValue()).isEqualTo(2f);
    assertThat(http.get("/collections/vb/points/1").result().get("payload").toString())
        .isEqualTo("{}");

    // a bad operation is refused before anything is applied, and named
    Http.Response bad =
        http.post(
            "/collections/vb/points/batch?wait=true",
            "{\"operations\":[{\"upsert\":{\"points\":[{\"id\":4,\"vector\":[1,0]}]}},"
                + "{\"frobnicate\":{}}]}");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.error()).contains("operations[1]=frobnicate");
    assertThat(http.get("/collections/vb/points/4").status()).isEqualTo(404);
    // one that fails when applied stops the batch there, naming it
    Http.Response stop =
        http.post(
            "/collections/vb/points/batch?wait=true",
            "{\"operations\":[{\"upsert\":{\"points\":[{\"id\":5,\"vector\":[1,0]}]}},"
                + "{\"set_payload\":{\"payload\":{\"a\":1},\"points\":[404]}},"
                + "{\"upsert\":{\"points\":[{\"id\":6,\"vector\":[1,0]}]}}]}");
    assertThat(stop.status()).isEqualTo(404);
    assertThat(stop.error()).contains("operations[1].set_payload").contains("404");
    assertThat(http.get("/collections/vb/points/5").status()).isEqualTo(200);
    assertThat(http.get("/collections/vb/points/6").status()).isEqualTo(404);
  }

  @Test
  void filtersInSearchQueryScrollCountAndDeleteSurviveARestart() {
    create("flt", 2, "Dot");
    StringBuilder pts = new StringBuilder("{\"points\":[");
    String[] cities = {"Berlin", "London", "Paris"};
    for (int i = 1; i <= 30; i++) {
      pts.append(i == 1 ? "" : ",")
          .append("{\"id\":")
          .append(i)
          .append(",\"vector\":[1,")
          .append(i)
          .append("],\"payload\":{\"city\":\"")
          .append(cities[i % 3])
          .append("\",\"n\":")
          .append(i)
          .append(",\"meta\":{\"tags\":[\"t")
          .append(i % 5)
          .append("\"]},\"at\":\"2024-05-")
          .append(String.format(Locale.ROOT, "%02d", i))
          .append("T12:00:00Z\"}}");
    }
    assertThat(http.put("/collections/flt/points?wait=true", pts.append("]}").toString()).status())
        .isEqualTo(200);
    String berlin = "{\"must\":[{\"key\":\"city\",\"match\":{\"value\":\"Berlin\"}}]}";

    Http.Response search =
        http.post(
            "/collections/flt/points/search",
            "{\"vector\":[0,1],\"limit\":3,\"with_payload\":true,\"filter\":" + berlin + "}");
    assertThat(search.status()).as(search.raw()).isEqualTo(200);
    List<Long> ids = new ArrayList<>();
    search.result().forEach(h -> ids.add(h.get("id").asLong()));
    assertThat(ids).containsExactly(30L, 27L, 24L); // i % 3 == 0 is Berlin; largest dot first

    Http.Response query =
        http.post(
            "/collections/flt/points/query",
            "{\"query\":[0,1],\"limit\":2,\"filter\":{\"must\":[{\"key\":\"meta.tags\","
                + "\"match\":{\"any\":[\"t1\"]}},{\"key\":\"n\",\"range\":{\"lt\":20}}]}}");
    assertThat(query.status()).as(query.raw()).isEqualTo(200);
    assertThat(query.result().get("points").get(0).get("id").asLong()).isEqualTo(16);
    assertThat(query.result().get("points").get(1).get("id").asLong()).isEqualTo(11);

    Http.Response batch =
        http.post(
            "/collections/flt/points/search/batch",
            "{\"searches\":[{\"vector\":[0,1],\"limit\":1,\"filter\":"
                + berlin
                + "},{\"vector\":[0,1],\"limit\":1,\"filter\":{\"must_not\":[{\"key\":\"n\","
                + "\"range\":{\"gte\":10}}]}}]}");
    assertThat(batch.result().get(0).get(0).get("id").asLong()).isEqualTo(30);
    assertThat(batch.result().get(1).get(0).get("id").asLong()).isEqualTo(9);

    Http.Response scroll =
        http.post(
            "/collections/flt/points/scroll",
            "{\"limit\":4,\"filter\":{\"must\":[{\"key\":\"at\",\"range\":"
                + "{\"gte\":\"2024-05-10T00:00:00Z\",\"lt\":\"2024-05-20\"}}]}}");
    assertThat(scroll.status()).as(scroll.raw()).isEqualTo(200);
    List<Long> page = new ArrayList<>();
    scroll.result().get("points").forEach(p -> page.add(p.get("id").asLong()));
    assertThat(page).containsExactly(10L, 11L, 12L, 13L);
    assertThat(scroll.result().get("next_page_offset").asLong()).isEqualTo(14);

    assertThat(
            http.post("/collections/flt/points/count", "{\"exact\":true,\"filter\":" + berlin + "}")
                .result()
                .get("count")
                .asLong())
        .isEqualTo(10);

    Http.Response bad =
        http.post(
            "/collections/flt/points/search",
            "{\"vector\":[0,1],\"limit\":3,\"filter\":{\"must\":[{\"key\":\"n\",\"range\":{\"gtx\":1}}]}}");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.error()).isEqualTo("Wrong input: filter.must[0].range: unknown field 'gtx'");
    Http.Response badBatch =
        http.post(
            "/collections/flt/points/query/batch",
            "{\"searches\":[{\"query\":[0,1]},{\"query\":[0,1],\"filter\":{\"should\":[{\"has_id\":[-1]}]}}]}");
    assertThat(badBatch.status()).isEqualTo(400);
    assertThat(badBatch.error()).startsWith("Wrong input: searches[1].filter.should[0].has_id[0]:");
    assertThat(http.post("/collections/flt/points/delete", "{\"filter\":{\"must\":1}}").status())
        .isEqualTo(400);
    assertThat(http.post("/collections/flt/points/count", "{}").result().get("count").asLong())
        .as("rejected requests deleted nothing")
        .isEqualTo(30);

    Http.Response del =
        http.post("/collections/flt/points/delete?wait=true", "{\"filter\":" + berlin + "}");
    assertThat(del.status()).as(del.raw()).isEqualTo(200);
    assertThat(del.result().get("status").asString()).isEqualTo("completed");
    // New Berlin points written after the delete must not be deleted by the WAL replay.
    http.put(
        "/collections/flt/points?wait=true",
        "{\"points\":[{\"id\":100,\"vector\":[1,1],\"payload\":{\"city\":\"Berlin\"}}]}");
    server.restart();
    assertThat(http.post("/collections/flt/points/count", "{}").result().get("count").asLong())
        .isEqualTo(21);
    assertThat(
            http.post("/collections/flt/points/count", "{\"filter\":" + berlin + "}")
                .result()
                .get("count")
                .asLong())
        .isEqualTo(1);
    assertThat(http.get("/collections/flt/points/30").status()).isEqualTo(404);
    assertThat(http.get("/collections/flt/points/100").status()).isEqualTo(200);
  }

  @Test
  void badInputGetsTheRightStatusAndChangesNothing() {
    create("bad", 4, "Dot");
    http.put("/collections/bad/points?wait=true", "{\"points\":[{\"id\":1,\"vector\":[1,2,3,4]}]}");

    Http.Response dim =
        http.put(
            "/collections/bad/points?wait=true",
            "{\"points\":[{\"id\":2,\"vector\":[1,2,3,4]},{\"id\":3,\"vector\":[1,2,3]}]}");
    assertThat(dim.status()).isEqualTo(400);
    assertThat(dim.error())
        .isEqualTo("Wrong input: Vector dimension error: expected dim: 4, got 3 [id=3]");

    Http.Response nan =
        http.put(
            "/collections/bad/points?wait=true",
            "{\"points\":[{\"id\":2,\"vector\":[1,NaN,3,4]}]}");
    assertThat(nan.status()).isEqualTo(400);
    assertThat(nan.error()).contains("NaN, infinite").contains("index=1").contains("value=NaN");
    Http.Response inf =
        http.put(
            "/collections/bad/points?wait=true",
            "{\"points\":[{\"id\":2,\"vector\":[1,1e39,3,4]}]}");
    assertThat(inf.status()).isEqualTo(400);
    assertThat(inf.error()).contains("index=1").contains("1.0E39");

    Http.Response q = http.post("/collections/bad/points/search", "{\"vector\":[1,2],\"limit\":1}");
    assertThat(q.status()).isEqualTo(400);
    assertThat(q.error()).contains("expected dim: 4, got 2");

    assertThat(http.put("/collections/missing/points?wait=true", "{\"points\":[]}").status())
        .isEqualTo(404);
    assertThat(http.get("/collections/missing").error())
        .isEqualTo("Not found: Collection `missing` doesn't exist!");

    Http.Response exists =
        http.put("/collections/bad", "{\"vectors\":{\"size\":4,\"distance\":\"Dot\"}}");
    assertThat(exists.status()).isEqualTo(409);
    assertThat(exists.error()).isEqualTo("Wrong input: Collection `bad` already exists!");

    for (String name : List.of("..%2Fx", "a%2Fb", ".hidden", "x%00y", "a%20b")) {
      Http.Response r =
          http.put("/collections/" + name, "{\"vectors\":{\"size\":4,\"distance\":\"Dot\"}}");
      // Qdrant's answer to a path parameter its validation refuses
      assertThat(r.status()).as(name + ": " + r.raw()).isEqualTo(422);
      assertThat(r.error())
          .startsWith(
              "Validation error in path parameters: [collection_name: invalid collection name");
    }
    assertThat(http.put("/collections/x", "{\"vectors\":{\"size\":4,").status()).isEqualTo(400);
    Http.Response dist =
        http.put("/collections/x", "{\"vectors\":{\"size\":4,\"distance\":\"Chebyshev\"}}");
    assertThat(dist.status()).isEqualTo(400);
    assertThat(dist.error()).contains("Chebyshev");
    assertThat(
            http.put("/collections/x", "{\"vectors\":{\"size\":0,\"distance\":\"Dot\"}}").status())
        .isEqualTo(400);
    assertThat(http.get("/collections/x").status())
        .as("rejected creates create nothing")
        .isEqualTo(404);

    Http.Response badId =
        http.put("/collections/bad/points", "{\"points\":[{\"id\":-5,\"vector\":[1,2,3,4]}]}");
    assertThat(badId.status()).isEqualTo(400);
    assertThat(badId.error()).contains("-5");

    StringBuilder big = new StringBuilder("{\"points\":[");
    for (int i = 0; i < 1001; i++) {
      big.append(i == 0 ? "" : ",")
          .append("{\"id\":")
          .append(100 + i)
          .append(",\"vector\":[1,2,3,4]}");
    }
    Http.Response tooMany =
        http.put("/collections/bad/points?wait=true", big.append("]}").toString());
    assertThat(tooMany.status()).isEqualTo(413);
    assertThat(tooMany.error()).contains("1001").contains("1000");

    assertThat(http.post("/collections/bad/points/count", "{}").result().get("count").asLong())
        .as("rejected writes stored nothing")
        .isEqualTo(1);
    assertThat(http.get("/no/such/endpoint").status()).isEqualTo(404);
  }

  @Test
  void dataSurvivesAGracefulRestart() {
    create("durable", 2, "Dot");
    http.put(
        "/collections/durable/points?wait=true",
        "{\"points\":[{\"id\":7,\"vector\":[1,2],\"payload\":{\"k\":\"v\"}}]}");
    server.restart();
    JsonNode p = http.get("/collections/durable/points/7").result();
    assertThat(p.get("payload").get("k").asString()).isEqualTo("v");
    assertThat(server.logTail()).contains("WAL recovered");
  }
}
