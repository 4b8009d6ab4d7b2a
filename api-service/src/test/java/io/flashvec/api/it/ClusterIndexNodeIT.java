package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The index role with real processes: a query node sends its segment builds to an index node
 * (points streamed over gRPC, files streamed back with CRC-32C checks) and installs them; exact and
 * graph searches over those segments give the brute-force answers, and they reopen after a restart.
 * With the index node SIGKILLed, the query node builds locally.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterIndexNodeIT {

  private static final int DIM = 16;

  private EtcdProcess etcd;
  private ServerProcess query;
  private ServerProcess index;
  private ServerProcess proxy;
  private Http api;
  private SplittableRandom random;
  private final List<float[]> vectors = new ArrayList<>();

  @BeforeAll
  void start(@TempDir Path tmp) throws Exception {
    random = new SplittableRandom(TestSeeds.seed("ClusterIndexNodeIT"));
    String bin = EtcdProcess.find();
    Assumptions.assumeTrue(bin != null, "etcd binary not found: ./flashvec test installs it");
    etcd = EtcdProcess.start(bin, tmp);
    String[] common = {
      "--flashvec.cluster.etcd-endpoints=" + etcd.url(), "--flashvec.cluster.lease-ttl=3s"
    };
    index =
        new ServerProcess(
                tmp.resolve("index-1"),
                tmp.resolve("index-1.log"),
                concat(
                    common,
                    "--flashvec.roles=index",
                    "--flashvec.cluster.node-id=index-1",
                    "--flashvec.cluster.grpc-port=" + ServerProcess.freePort()))
            .start();
    query =
        new ServerProcess(
                tmp.resolve("query-1"),
                tmp.resolve("query-1.log"),
                concat(
                    common,
                    "--flashvec.roles=query",
                    "--flashvec.cluster.node-id=query-1",
                    "--flashvec.cluster.grpc-port=" + ServerProcess.freePort(),
                    "--flashvec.segment.seal-threshold-points=400",
                    // seals of live graphs are written locally (ADR 0011); this test is about
                    // segments built on the index node, as compactions and graph-less seals are
                    "--flashvec.segment.live-graph=false"))
            .start();
    proxy =
        new ServerProcess(
                tmp.resolve("proxy-1"),
                tmp.resolve("proxy-1.log"),
                concat(common, "--flashvec.roles=proxy", "--flashvec.cluster.node-id=proxy-1"))
            .start();
    api = new Http(proxy.url());
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @AfterAll
  void stop() {
    for (ServerProcess p : new ServerProcess[] {proxy, query, index}) {
      if (p != null) {
        p.kill();
      }
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  @Test
  void queryNodeInstallsSegmentsBuiltByTheIndexNode() {
    Http.Response r =
        api.put(
            "/collections/docs",
            "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"},\"shard_number\":2}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    insert(0, 1500);
    flushAndWaitGreen();
    assertThat(index.logTail()).contains("segment built for a query node");
    assertThat(query.logTail()).contains("segment built remotely");
    assertThat(query.logTail()).doesNotContain("building locally");
    assertMatchesBruteForce();

    // Without an index node the query node builds itself.
    index.kill();
    insert(1500, 600);
    flushAndWaitGreen();
    assertThat(query.logTail()).contains("building locally");
    assertMatchesBruteForce();

    // Remotely built segments reopen like local ones.
    query.kill();
    query.start();
    waitReady();
    assertMatchesBruteForce();
  }

  private void insert(int from, int n) {
    ObjectNode root = Http.JSON.createObjectNode();
    ArrayNode arr = root.putArray("points");
    for (int i = from; i < from + n; i++) {
      float[] v = new float[DIM];
      for (int d = 0; d < DIM; d++) {
        v[d] = (float) random.nextGaussian();
      }
      vectors.add(v);
      ObjectNode p = arr.addObject();
      p.put("id", i);
      ArrayNode a = p.putArray("vector");
      for (float f : v) {
        a.add(f);
      }
      p.putObject("payload").put("i", i);
    }
    Http.Response r = api.put("/collections/docs/points?wait=true", root.toString());
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }

  private void flushAndWaitGreen() {
    assertThat(api.post("/collections/docs/flush", "{}").status()).isEqualTo(200);
    String[] status = {""};
    Await.until(
        Duration.ofSeconds(120),
        "the collection is green",
        () -> "status=" + status[0],
        () -> {
          JsonNode info = api.get("/collections/docs").result();
          status[0] = info.path("status").asString();
          return status[0].equals("green") && info.path("segments_count").asInt() > 0;
        });
  }

  private void waitReady() {
    Await.until(
        Duration.ofSeconds(60),
        "the query node serves again",
        () -> api.post("/collections/docs/points/count", "{}").status() == 200);
  }

  /** Count, exact search, graph search of stored vectors, and payloads. */
  private void assertMatchesBruteForce() {
    Http.Response c = api.post("/collections/docs/points/count", "{}");
    assertThat(c.result().path("count").asLong()).isEqualTo(vectors.size());
    for (int q = 0; q < 10; q++) {
      float[] qv = new float[DIM];
      for (int d = 0; d < DIM; d++) {
        qv[d] = (float) random.nextGaussian();
      }
      List<double[]> expected = bruteForce(qv, 10);
      Http.Response r =
          api.post(
              "/collections/docs/points/search",
              "{\"vector\":" + json(qv) + ",\"limit\":10,\"params\":{\"exact\":true}}");
      assertThat(r.status()).as(r.raw()).isEqualTo(200);
      for (int i = 0; i < 10; i++) {
        assertThat(r.result().get(i).path("id").asLong()).isEqualTo((long) expected.get(i)[0]);
        assertThat(r.result().get(i).path("score").asDouble())
            .isCloseTo(expected.get(i)[1], within(1e-4));
      }
    }
    for (int i = 0; i < vectors.size(); i += vectors.size() / 20) {
      Http.Response r =
          api.post(
              "/collections/docs/points/search",
              "{\"vector\":" + json(vectors.get(i)) + ",\"limit\":1,\"with_payload\":true}");
      assertThat(r.result().get(0).path("id").asLong()).isEqualTo(i);
      assertThat(r.result().get(0).at("/payload/i").asLong()).isEqualTo(i);
    }
  }

  private List<double[]> bruteForce(float[] q, int k) {
    List<double[]> all = new ArrayList<>();
    for (int i = 0; i < vectors.size(); i++) {
      all.add(new double[] {i, cosine(q, vectors.get(i))});
    }
    all.sort(Comparator.comparingDouble((double[] a) -> a[1]).reversed());
    return all.subList(0, k);
  }

  private static double cosine(float[] a, float[] b) {
    double dot = 0;
    double na = 0;
    double nb = 0;
    for (int i = 0; i < a.length; i++) {
      dot += a[i] * b[i];
      na += a[i] * a[i];
      nb += b[i] * b[i];
    }
    return dot / Math.sqrt(na * nb);
  }

  private static String json(float[] v) {
    ArrayNode a = Http.JSON.createArrayNode();
    for (float f : v) {
      a.add(f);
    }
    return a.toString();
  }
}
