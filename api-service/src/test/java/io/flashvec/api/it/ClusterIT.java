package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Cluster mode with real processes on 127.0.0.1: etcd, three query nodes and a proxy, plus a
 * standalone server holding the same data as the reference. The tests run in order and share the
 * cluster: routing first (all nodes up), then a node is SIGKILLed (partial results for a
 * replication factor of 1, failover for 2), then it restarts and catches up from the primaries.
 *
 * <p>Needs the {@code etcd} binary ({@code ./flashvec test} installs Debian's etcd-server); skipped
 * with a message when it is missing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterIT {

  private static final int DIM = 16;
  private static final int POINTS = 600;

  private Path tmp;

  private EtcdProcess etcd;
  private final List<ServerProcess> queries = new ArrayList<>();
  private ServerProcess proxy;
  private ServerProcess proxy2;
  private ServerProcess standalone;
  private Http api;
  private Http reference;
  private SplittableRandom random;
  private final List<float[]> queryVectors = new ArrayList<>();
  private int points;

  @BeforeAll
  void startCluster(@TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir) throws Exception {
    tmp = dir;
    System.out.println("[flashvec] ClusterIT: node logs in " + dir + " (kept when a test fails)");
    random = new SplittableRandom(TestSeeds.seed("ClusterIT"));
    String etcdBin = EtcdProcess.find();
    Assumptions.assumeTrue(
        etcdBin != null,
        "etcd binary not found: install Debian's etcd-server (./flashvec test does) to run ClusterIT");
    etcd = EtcdProcess.start(etcdBin, tmp);
    String url = etcd.url();
    for (int i = 1; i <= 3; i++) {
      queries.add(
          new ServerProcess(
                  tmp.resolve("query-" + i),
                  tmp.resolve("query-" + i + ".log"),
                  "--flashvec.roles=query",
                  "--flashvec.cluster.etcd-endpoints=" + url,
                  "--flashvec.cluster.node-id=query-" + i,
                  "--flashvec.cluster.grpc-port=" + ServerProcess.freePort(),
                  "--flashvec.cluster.lease-ttl=3s")
              .start());
    }
    proxy =
        new ServerProcess(
                tmp.resolve("proxy"),
                tmp.resolve("proxy.log"),
                "--flashvec.roles=proxy",
                "--flashvec.cluster.etcd-endpoints=" + url,
                "--flashvec.cluster.node-id=proxy-1",
                "--flashvec.cluster.search-deadline=2s")
            .start();
    proxy2 =
        new ServerProcess(
                tmp.resolve("proxy2"),
                tmp.resolve("proxy2.log"),
                "--flashvec.roles=proxy",
                "--flashvec.cluster.etcd-endpoints=" + url,
                "--flashvec.cluster.node-id=proxy-2")
            .start();
    standalone =
        new ServerProcess(tmp.resolve("standalone"), tmp.resolve("standalone.log")).start();
    api = new Http(proxy.url());
    reference = new Http(standalone.url());
  }

  @AfterAll
  void stopCluster() {
    for (ServerProcess s : queries) {
      s.kill();
    }
    if (proxy != null) {
      proxy.kill();
    }
    if (proxy2 != null) {
      proxy2.kill();
    }
    if (standalone != null) {
      standalone.kill();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  // ---------------------------------------------------------------- tests

  @Test
  @Order(1)
  void routesEveryPointAndSearchesLikeStandalone() {
    create(api, "docs", 4, 2);
    create(reference, "docs", 4, 1);
    create(api, "solo", 3, 1);
    String batch = pointsJson(0, POINTS);
    for (Http h : List.of(api, reference)) {
      assertThat(h.put("/collections/docs/points?wait=true", batch).status()).isEqualTo(200);
    }
    assertThat(api.put("/collections/solo/points?wait=true", batch).status()).isEqualTo(200);
    points = POINTS;
    for (int i = 0; i < 20; i++) {
      queryVectors.add(vector());
    }

    assertThat(count(api, "docs")).isEqualTo(POINTS);
    assertThat(count(api, "solo")).isEqualTo(POINTS);
    assertThat(scrollAll(api, "docs")).isEqualTo(ids(0, POINTS));
    ArrayNode all = Http.JSON.createArrayNode();
    for (int i = 0; i < POINTS; i++) {
      all.add(i);
    }
    Http.Response got = api.post("/collections/docs/points", "{\"ids\":" + all + "}");
    assertThat(got.result().size()).isEqualTo(POINTS);
    assertSearchesMatchReference("docs");
    assertSearchWorkIsCountedOnTheQueryNodes();

    // update_vectors runs on each shard's primary: new vectors, the payloads kept
    String vectors =
        "{\"points\":[{\"id\":55,\"vector\":"
            + json(vector())
            + "},{\"id\":66,\"vector\":"
            + json(vector())
            + "}]}";
    for (Http h : List.of(api, reference)) {
      Http.Response r = h.put("/collections/docs/points/vectors?wait=true", vectors);
      assertThat(r.status()).as(r.raw()).isEqualTo(200);
    }
    String both = "{\"ids\":[55,66],\"with_payload\":true,\"with_vector\":true}";
    JsonNode updated = api.post("/collections/docs/points", both).result();
    assertThat(updated).isEqualTo(reference.post("/collections/docs/points", both).result());
    assertThat(updated.get(0).at("/payload/i").asInt()).isEqualTo(55);
    Http.Response missing =
        api.put(
            "/collections/docs/points/vectors?wait=true",
            "{\"points\":[{\"id\":55,\"vector\":"
                + json(vector())
                + "},{\"id\":100000,\"vector\":"
                + json(vector())
                + "}]}");
    assertThat(missing.status()).as(missing.raw()).isEqualTo(404);
    assertThat(missing.error()).isEqualTo("Not found: No point with id 100000 found");
    assertThat(api.post("/collections/docs/points", both).result()).isEqualTo(updated);
  }

  /**
   * The work of a search is counted in the metrics of the query nodes that ran its shard searches
   * (summed over them it equals the {@code flashvec_stats} the proxy returns); the proxy counts
   * only the query, so adding its metrics does not count the work twice.
   */
  private void assertSearchWorkIsCountedOnTheQueryNodes() {
    String dist = "flashvec_search_distance_computations_total";
    String shardSearches = "flashvec_search_shard_searches_total";
    String body = "{\"vector\":" + json(vector()) + ",\"limit\":10,\"with_stats\":true}";
    double distBefore = sumOverQueryNodes(dist);
    double shardsBefore = sumOverQueryNodes(shardSearches);
    double proxyDistBefore = metric(proxy, dist);
    double proxyQueriesBefore = metric(proxy, "flashvec_search_queries_total");
    Http.Response r = api.post("/collections/solo/points/search", body);
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    long reported = r.body().path("flashvec_stats").path("distance_computations").asLong();
    assertThat(reported).isPositive();
    assertThat(sumOverQueryNodes(dist) - distBefore).isEqualTo((double) reported);
    assertThat(sumOverQueryNodes(shardSearches) - shardsBefore).isEqualTo(3.0);
    assertThat(metric(proxy, dist)).isEqualTo(proxyDistBefore);
    assertThat(metric(proxy, "flashvec_search_queries_total") - proxyQueriesBefore).isEqualTo(1.0);
  }

  private double sumOverQueryNodes(String name) {
    double sum = 0;
    for (ServerProcess q : queries) {
      sum += metric(q, name);
    }
    return sum;
  }

  /** The value of an unlabelled-but-for-{@code application} counter on a node's /metrics. */
  private static double metric(ServerProcess node, String name) {
    Http.Response r = new Http(node.url()).get("/metrics");
    assertThat(r.status()).isEqualTo(200);
    for (String line : r.raw().split("\n")) {
      if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    throw new AssertionError("no " + name + " on " + node.url() + "/metrics");
  }

  /**
   * A node that stops answering without closing its connections (SIGSTOP: the network-deadline
   * case) costs one search deadline: the shard call times out and the shard's other replica answers
   * (replication 2), or the result is marked partial (replication 1). Then the node resumes.
   */
  @Test
  @Order(2)
  void stalledNodeCostsOneDeadlineThenFailsOver() throws Exception {
    ServerProcess stalled = queries.get(2);
    signal(stalled, "STOP");
    try {
      long t0 = System.nanoTime();
      HttpResponse<String> solo = rawSearch("solo", queryVectors.get(0));
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertThat(solo.statusCode()).isEqualTo(200);
      assertThat(solo.headers().firstValue("x-flashvec-partial")).contains("true");
      // Waited for the 2 s deadline (not a refused connection), and not much longer.
      assertThat(ms).isBetween(1_500L, 10_000L);
      assertThat(proxy.logTail()).contains("DEADLINE_EXCEEDED");
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> full = rawSearch("docs", queryVectors.get(i));
        assertThat(full.statusCode()).isEqualTo(200);
        assertThat(full.headers().firstValue("x-flashvec-partial")).isEmpty();
      }
    } finally {
      signal(stalled, "CONT");
    }
    // Its lease may expire meanwhile, even after it answers again (a keep-alive overdue at
    // SIGCONT loses the race with the TTL): the proxy then drops it until it registers anew, a
    // second or two later. So wait until it has answered in full for longer than the lease TTL
    // (3 s), any partial answer restarting the wait; else the next test may find it gone.
    long[] stableSince = {System.nanoTime()};
    Await.until(
        Duration.ofSeconds(30),
        "the stalled node answers in full for 5 s after SIGCONT",
        () -> {
          boolean full = true;
          for (int i = 0; i < 3 && full; i++) {
            full =
                rawSearch("solo", queryVectors.get(i))
                    .headers()
                    .firstValue("x-flashvec-partial")
                    .isEmpty();
          }
          if (!full) {
            stableSince[0] = System.nanoTime();
          }
          return full && System.nanoTime() - stableSince[0] > TimeUnit.SECONDS.toNanos(5);
        });
    assertSearchesMatchReference("docs");
  }

  /** {@code GET /collections/{name}/cluster} once it reports a replica as {@code Dead}. */
  private JsonNode awaitDeadReplica(String collection) {
    JsonNode[] info = new JsonNode[1];
    Await.until(
        Duration.ofSeconds(15),
        "a Dead replica",
        () -> String.valueOf(info[0]),
        () -> {
          info[0] = api.get("/collections/" + collection + "/cluster").result();
          return remoteShardIn(info[0], "Dead");
        });
    return info[0];
  }

  private static boolean remoteShardIn(JsonNode clusterInfo, String state) {
    for (JsonNode r : clusterInfo.get("remote_shards")) {
      if (r.get("state").asString().equals(state)) {
        return true;
      }
    }
    return false;
  }

  private static void signal(ServerProcess p, String sig) throws Exception {
    Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).inheritIO().start();
    assertThat(k.waitFor()).isZero();
  }

  @Test
  @Order(3)
  void deadNodeGivesPartialResultsWithoutReplicaAndCompleteOnesWithReplica() throws Exception {
    queries.get(0).kill(); // SIGKILL: its lease lives on for up to 3 s; calls fail over at once
    for (float[] q : queryVectors) {
      HttpResponse<String> r = rawSearch("solo", q);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("x-flashvec-partial")).contains("true");
      assertThat(Http.JSON.readTree(r.body()).path("partial").asBoolean()).isTrue();

      HttpResponse<String> full = rawSearch("docs", q);
      assertThat(full.headers().firstValue("x-flashvec-partial"))
          .as(() -> "replication 2 answers in full; proxy log:\n" + proxy.logTail())
          .isEmpty();
      assertThat(Http.JSON.readTree(full.body()).has("partial")).isFalse();
    }
    assertSearchesMatchReference("docs");
    assertThat(count(api, "docs")).isEqualTo(POINTS);
    // Qdrant's cluster info shows every replica, the dead node's as Dead once its lease is gone
    JsonNode info = awaitDeadReplica("docs");
    assertThat(info.get("local_shards").isEmpty()).isTrue();
    assertThat(info.get("remote_shards")).hasSize(info.get("shard_count").asInt() * 2);
    Http.Response c = api.post("/collections/solo/points/count", "{}");
    assertThat(c.status()).isEqualTo(503);
    assertThat(c.error()).contains("collection=solo").contains("shard=").contains("node=query-1");
  }

  @Test
  @Order(4)
  void restartedNodeCatchesUpFromThePrimaries() {
    String more = pointsJson(POINTS, 200);
    for (Http h : List.of(api, reference)) {
      assertThat(h.put("/collections/docs/points?wait=true", more).status()).isEqualTo(200);
    }
    points = POINTS + 200;
    // Shard 0 (query-1, query-2) was led by query-1; once its lease expired query-2 took over and
    // acknowledged the writes above.
    assertThat(queries.get(1).logTail())
        .contains("primary of a shard now [collection=docs, shard=0, node=query-2, epoch=");
    queries.get(0).start();
    // query-1 holds shards 0, 2 and 3 of `docs` (placement (s + r) mod 3 over the sorted node
    // ids); all three missed writes, were marked stale and must be copied back.
    Await.until(
        Duration.ofSeconds(60),
        "query-1 caught up on its three shards",
        () -> caughtUp(queries.get(0).logTail()) >= 3);
    assertThat(caughtUp(queries.get(0).logTail())).isEqualTo(3);
    // the cleared stale marks reach the proxy through its etcd watch
    Await.until(
        Duration.ofSeconds(30),
        "the proxy sees no replica of docs as stale",
        () -> !remoteShardIn(api.get("/collections/docs/cluster").result(), "Partial"));
    // Shards 0 and 3 of `docs` live on query-1 and query-2: with query-2 gone only the restarted
    // node can answer for them, so complete answers prove it caught up.
    queries.get(1).kill();
    assertThat(count(api, "docs")).isEqualTo(points);
    assertThat(scrollAll(api, "docs")).isEqualTo(ids(0, points));
    assertSearchesMatchReference("docs");
  }

  /**
   * Filters, payload indexes, BM25 and hybrid queries, order_by and writes by filter give what a
   * standalone server with the same shard count gives (same hash routing, so the same per-shard
   * BM25 statistics). Runs with query-2 dead: every shard still has one live replica.
   */
  @Test
  @Order(5)
  void filtersPayloadIndexesAndTextQueriesMatchStandalone() {
    create(api, "kb", 3, 2);
    create(reference, "kb", 3, 1);
    String[] words = {"quick", "brown", "fox", "lazy", "dog", "river", "stone", "cloud"};
    ObjectNode root = Http.JSON.createObjectNode();
    ArrayNode arr = root.putArray("points");
    for (int i = 0; i < 300; i++) {
      ObjectNode p = arr.addObject();
      p.put("id", i);
      ArrayNode v = p.putArray("vector");
      for (float f : vector()) {
        v.add(f);
      }
      StringBuilder text = new StringBuilder();
      for (int w = 0, n = 2 + random.nextInt(6); w < n; w++) {
        text.append(words[random.nextInt(words.length)]).append(' ');
      }
      p.putObject("payload")
          .put("i", i)
          .put("group", "g" + (i % 10))
          .put("body", text.toString().trim());
    }
    String indexes =
        "[{\"field_name\":\"group\",\"field_schema\":\"keyword\"},"
            + "{\"field_name\":\"i\",\"field_schema\":\"integer\"},"
            + "{\"field_name\":\"body\",\"field_schema\":{\"type\":\"text\"}}]";
    for (Http h : List.of(api, reference)) {
      assertThat(h.put("/collections/kb/points?wait=true", root.toString()).status())
          .isEqualTo(200);
      for (JsonNode ix : Http.JSON.readTree(indexes)) {
        Http.Response r = h.put("/collections/kb/index?wait=true", ix.toString());
        assertThat(r.status()).as(r.raw()).isEqualTo(200);
      }
    }
    Http.Response described = api.get("/collections/kb");
    assertThat(described.status()).as(described.raw()).isEqualTo(200);
    JsonNode schema = described.result().get("payload_schema");
    assertThat(schema).isEqualTo(reference.get("/collections/kb").result().get("payload_schema"));
    assertThat(schema.at("/group/points").asLong()).isEqualTo(300);

    String g3 = "{\"must\":[{\"key\":\"group\",\"match\":{\"any\":[\"g3\",\"g4\"]}}]}";
    String range =
        "{\"must\":[{\"key\":\"i\",\"range\":{\"gte\":50,\"lt\":120}}],"
            + "\"must_not\":[{\"key\":\"body\",\"match\":{\"text\":\"fox\"}}]}";
    for (String f : List.of(g3, range)) {
      assertSame("/collections/kb/points/count", "{\"filter\":" + f + "}");
      assertSame("/collections/kb/points/scroll", "{\"limit\":500,\"filter\":" + f + "}");
      for (int q = 0; q < 5; q++) {
        assertSameHits(
            "/collections/kb/points/search",
            "{\"vector\":" + json(queryVectors.get(q)) + ",\"limit\":10,\"filter\":" + f + "}",
            "");
      }
      assertSame(
          "/collections/kb/points/scroll",
          "{\"limit\":15,\"order_by\":{\"key\":\"i\",\"direction\":\"desc\"},\"filter\":"
              + f
              + "}");
    }
    assertSameHits(
        "/collections/kb/points/query",
        "{\"query\":{\"text\":\"quick fox\"},\"using\":\"body\",\"limit\":10}",
        "/points");
    assertSameHits(
        "/collections/kb/points/query",
        "{\"prefetch\":[{\"query\":"
            + json(queryVectors.get(0))
            + ",\"limit\":20},{\"query\":{\"text\":\"lazy dog\"},\"using\":\"body\","
            + "\"limit\":20}],\"query\":{\"fusion\":\"rrf\"},\"limit\":10}",
        "/points");

    // Writes by filter, then the same reads again.
    for (Http h : List.of(api, reference)) {
      Http.Response r =
          h.post("/collections/kb/points/delete?wait=true", "{\"filter\":" + g3 + "}");
      assertThat(r.status()).as(r.raw()).isEqualTo(200);
      r =
          h.post(
              "/collections/kb/points/payload?wait=true",
              "{\"payload\":{\"flag\":true},\"filter\":" + range + "}");
      assertThat(r.status()).as(r.raw()).isEqualTo(200);
    }
    assertThat(count(api, "kb")).isEqualTo(240);
    assertSame(
        "/collections/kb/points/count",
        "{\"filter\":{\"must\":{\"key\":\"flag\",\"match\":{\"value\":true}}}}");
    assertSame("/collections/kb/points/scroll", "{\"limit\":500,\"filter\":" + range + "}");

    // A bad filter is a 400 naming the bad part, as standalone.
    Http.Response bad =
        api.post(
            "/collections/kb/points/count",
            "{\"filter\":{\"must\":[{\"key\":\"i\",\"range\":{\"gtx\":1}}]}}");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.error()).contains("filter.must[0].range").contains("gtx");
    Http.Response noIndex = api.post("/collections/kb/points/scroll", "{\"order_by\":\"group\"}");
    assertThat(noIndex.status()).isEqualTo(400);
    assertThat(noIndex.error()).contains("[key=group]").contains("/collections/kb/index");

    Http.Response drop = api.delete("/collections/kb/index/body?wait=true");
    assertThat(drop.status()).as(drop.raw()).isEqualTo(200);
    assertThat(api.get("/collections/kb").result().get("payload_schema").has("body")).isFalse();
  }

  /**
   * A replica whose node is down when a payload index is created gets it when the node is back
   * (from etcd, not from the proxy's call it missed): with the other nodes gone, the restarted node
   * alone answers a text query and an order_by scroll like standalone.
   */
  @Test
  @Order(6)
  void replicaThatMissedAnIndexChangeAppliesItWhenBack() {
    queries.get(1).start();
    create(api, "late", 3, 3);
    create(reference, "late", 3, 1);
    ObjectNode root = Http.JSON.createObjectNode();
    ArrayNode arr = root.putArray("points");
    for (int i = 0; i < 60; i++) {
      ObjectNode p = arr.addObject();
      p.put("id", i);
      ArrayNode v = p.putArray("vector");
      for (float f : vector()) {
        v.add(f);
      }
      p.putObject("payload").put("n", i * 7 % 60).put("body", i % 3 == 0 ? "red fox" : "blue");
    }
    for (Http h : List.of(api, reference)) {
      assertThat(h.put("/collections/late/points?wait=true", root.toString()).status())
          .isEqualTo(200);
    }
    queries.get(2).kill();
    for (Http h : List.of(api, reference)) {
      for (String ix :
          List.of(
              "{\"field_name\":\"body\",\"field_schema\":\"text\"}",
              "{\"field_name\":\"n\",\"field_schema\":\"integer\"}")) {
        Http.Response r = h.put("/collections/late/index?wait=true", ix);
        assertThat(r.status()).as(r.raw()).isEqualTo(200);
      }
    }
    queries.get(2).start();
    queries.get(0).kill();
    queries.get(1).kill();
    String text = "{\"query\":{\"text\":\"fox\"},\"using\":\"body\",\"limit\":30}";
    Await.until(
        Duration.ofSeconds(30),
        "the late collection answers",
        () -> api.post("/collections/late/points/query", text).status() == 200);
    assertSameHits("/collections/late/points/query", text, "/points");
    assertSame(
        "/collections/late/points/scroll",
        "{\"limit\":10,\"order_by\":{\"key\":\"n\",\"direction\":\"desc\"}}");
    assertThat(queries.get(2).logTail()).contains("payload indexes replaced [collection=late.s");
  }

  /**
   * Proxies are stateless: with the first one SIGKILLed a client that retries the second gets the
   * same answers. Then etcd goes away: reads keep working from the proxy's cached routing table,
   * and a change that needs the metadata store fails with 503 saying so.
   */
  @Test
  @Order(7)
  void anotherProxyAnswersAndReadsSurviveEtcdLoss() {
    Http other = new Http(proxy2.url());
    String text = "{\"query\":{\"text\":\"fox\"},\"using\":\"body\",\"limit\":30}";
    Http.Response before = api.post("/collections/late/points/query", text);
    assertThat(before.status()).as(before.raw()).isEqualTo(200);
    proxy.kill();
    assertThat(count(other, "late")).isEqualTo(60);
    Http.Response viaOther = other.post("/collections/late/points/query", text);
    assertThat(viaOther.result()).isEqualTo(before.result());

    etcd.close();
    assertThat(count(other, "late")).isEqualTo(60);
    assertThat(other.post("/collections/late/points/query", text).result())
        .isEqualTo(before.result());
    Http.Response create =
        other.put(
            "/collections/after_etcd",
            "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"}}");
    assertThat(create.status()).as(create.raw()).isEqualTo(503);
    assertThat(create.error()).contains("etcd");
  }

  /** The proxy and the standalone reference give the same {@code result}. */
  private void assertSame(String path, String body) {
    Http.Response a = api.post(path, body);
    Http.Response b = reference.post(path, body);
    assertThat(a.status()).as(a.raw()).isEqualTo(200);
    assertThat(b.status()).as(b.raw()).isEqualTo(200);
    assertThat(a.result()).as(body).isEqualTo(b.result());
    JsonNode r = a.result();
    assertThat(r.has("count") ? r.get("count").asLong() : r.path("points").size())
        .as("something matched: " + body)
        .isPositive();
  }

  /** The same ids in the same order with the same scores (within float rounding). */
  private void assertSameHits(String path, String body, String pointer) {
    Http.Response a = api.post(path, body);
    Http.Response b = reference.post(path, body);
    assertThat(a.status()).as(a.raw()).isEqualTo(200);
    assertThat(b.status()).as(b.raw()).isEqualTo(200);
    JsonNode ha = pointer.isEmpty() ? a.result() : a.result().at(pointer);
    JsonNode hb = pointer.isEmpty() ? b.result() : b.result().at(pointer);
    assertThat(ha.size()).as(body).isEqualTo(hb.size()).isPositive();
    for (int i = 0; i < ha.size(); i++) {
      assertThat(ha.get(i).path("id").asLong()).as(body).isEqualTo(hb.get(i).path("id").asLong());
      assertThat(ha.get(i).path("score").asDouble())
          .isCloseTo(hb.get(i).path("score").asDouble(), within(1e-4));
    }
  }

  // ---------------------------------------------------------------- helpers

  private static int caughtUp(String log) {
    return log.split("replica caught up from the primary \\[collection=docs", -1).length - 1;
  }

  private void assertSearchesMatchReference(String coll) {
    for (float[] q : queryVectors) {
      String body = "{\"vector\":" + json(q) + ",\"limit\":10}";
      Http.Response a = api.post("/collections/" + coll + "/points/search", body);
      Http.Response b = reference.post("/collections/" + coll + "/points/search", body);
      assertThat(a.status()).as(a.raw()).isEqualTo(200);
      assertThat(a.body().has("partial")).isFalse();
      assertThat(a.result().size()).isEqualTo(b.result().size());
      for (int i = 0; i < a.result().size(); i++) {
        assertThat(a.result().get(i).path("score").asDouble())
            .isCloseTo(b.result().get(i).path("score").asDouble(), within(1e-5));
      }
      assertThat(idsOf(a.result())).isEqualTo(idsOf(b.result()));
    }
  }

  private static Set<Long> idsOf(JsonNode arr) {
    Set<Long> s = new HashSet<>();
    for (JsonNode n : arr) {
      s.add(n.path("id").asLong());
    }
    return s;
  }

  private static void create(Http h, String name, int shards, int rf) {
    Http.Response r =
        h.put(
            "/collections/" + name,
            "{\"vectors\":{\"size\":"
                + DIM
                + ",\"distance\":\"Cosine\"},\"shard_number\":"
                + shards
                + ",\"replication_factor\":"
                + rf
                + "}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }

  private String pointsJson(int from, int n) {
    ObjectNode root = Http.JSON.createObjectNode();
    ArrayNode arr = root.putArray("points");
    for (int i = from; i < from + n; i++) {
      ObjectNode p = arr.addObject();
      p.put("id", i);
      ArrayNode v = p.putArray("vector");
      for (float f : vector()) {
        v.add(f);
      }
      p.putObject("payload").put("i", i);
    }
    return root.toString();
  }

  private float[] vector() {
    float[] v = new float[DIM];
    for (int i = 0; i < DIM; i++) {
      v[i] = (float) random.nextGaussian();
    }
    return v;
  }

  private static String json(float[] v) {
    ArrayNode a = Http.JSON.createArrayNode();
    for (float f : v) {
      a.add(f);
    }
    return a.toString();
  }

  private static long count(Http h, String coll) {
    Http.Response r = h.post("/collections/" + coll + "/points/count", "{}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    return r.result().path("count").asLong();
  }

  private static List<Long> ids(int from, int n) {
    List<Long> out = new ArrayList<>();
    for (long i = from; i < from + n; i++) {
      out.add(i);
    }
    return out;
  }

  private static List<Long> scrollAll(Http h, String coll) {
    List<Long> out = new ArrayList<>();
    JsonNode offset = null;
    do {
      String body = "{\"limit\":97" + (offset == null ? "" : ",\"offset\":" + offset) + "}";
      Http.Response r = h.post("/collections/" + coll + "/points/scroll", body);
      assertThat(r.status()).as(r.raw()).isEqualTo(200);
      for (JsonNode p : r.result().path("points")) {
        out.add(p.path("id").asLong());
      }
      offset = r.result().get("next_page_offset");
      if (offset != null && offset.isNull()) {
        offset = null;
      }
    } while (offset != null);
    return out;
  }

  private HttpResponse<String> rawSearch(String coll, float[] q) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(
                    URI.create(proxy.url() + "/collections/" + coll + "/points/search"))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(30))
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"vector\":" + json(q) + ",\"limit\":10}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }
}
