package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.cluster.testing.TestCertificates;
import io.flashvec.cluster.transport.grpc.HealthRequest;
import io.flashvec.cluster.transport.grpc.ShardServiceGrpc;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
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
 * A cluster whose internal gRPC runs over mutual TLS ({@code flashvec.cluster.tls.*}) with
 * certificates made in the test by keytool: etcd, an index node, two query nodes and a proxy, each
 * with its own certificate signed by one CA. A collection with 2 shards and replication factor 2 is
 * written, sealed (the segments built on the index node, i.e. over the index role's TLS too),
 * searched and counted through the proxy. A plaintext client and a TLS client without a certificate
 * are refused by the query and index nodes, and a node whose TLS setting is incomplete does not
 * start and says which setting is missing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterTlsIT {

  private static final int DIM = 8;

  private Path tmp;
  private TestCertificates ca;
  private EtcdProcess etcd;
  private final List<ServerProcess> nodes = new ArrayList<>();
  private int queryGrpc;
  private int indexGrpc;
  private ServerProcess query1;
  private ServerProcess query2;
  private ServerProcess index;
  private Http api;
  private SplittableRandom random;
  private final List<float[]> vectors = new ArrayList<>();

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    tmp = dir;
    random = new SplittableRandom(TestSeeds.seed("ClusterTlsIT"));
    String bin = EtcdProcess.find();
    Assumptions.assumeTrue(bin != null, "etcd binary not found: ./flashvec test installs it");
    ca = TestCertificates.create(tmp.resolve("pki"), "flashvec-it-ca");
    etcd = EtcdProcess.start(bin, tmp);
    indexGrpc = ServerProcess.freePort();
    index = node("index-1", "--flashvec.roles=index", "--flashvec.cluster.grpc-port=" + indexGrpc);
    queryGrpc = ServerProcess.freePort();
    query1 =
        node(
            "query-1",
            "--flashvec.roles=query",
            "--flashvec.cluster.grpc-port=" + queryGrpc,
            "--flashvec.segment.seal-threshold-points=300",
            // seals of live graphs are written locally (ADR 0011); the builds checked here go
            // over TLS to the index node, as compactions and graph-less seals do
            "--flashvec.segment.live-graph=false");
    query2 =
        node(
            "query-2",
            "--flashvec.roles=query",
            "--flashvec.cluster.grpc-port=" + ServerProcess.freePort(),
            "--flashvec.segment.seal-threshold-points=300",
            // seals of live graphs are written locally (ADR 0011); the builds checked here go
            // over TLS to the index node, as compactions and graph-less seals do
            "--flashvec.segment.live-graph=false");
    api = new Http(node("proxy-1", "--flashvec.roles=proxy").url());
  }

  /** A node with its own certificate (SAN 127.0.0.1, the address every node advertises). */
  private ServerProcess node(String id, String... args) {
    TestCertificates.Pem pem = ca.issue(id, "ip:127.0.0.1,dns:localhost");
    List<String> all =
        new ArrayList<>(
            List.of(
                "--flashvec.cluster.etcd-endpoints=" + etcd.url(),
                "--flashvec.cluster.node-id=" + id,
                "--flashvec.cluster.lease-ttl=3s",
                "--flashvec.cluster.tls.enabled=true",
                "--flashvec.cluster.tls.cert=" + pem.cert(),
                "--flashvec.cluster.tls.key=" + pem.key(),
                "--flashvec.cluster.tls.ca=" + ca.caPem()));
    all.addAll(List.of(args));
    ServerProcess p =
        new ServerProcess(tmp.resolve(id), tmp.resolve(id + ".log"), all.toArray(String[]::new));
    nodes.add(p);
    return p.start();
  }

  @AfterAll
  void stop() {
    for (ServerProcess p : nodes.reversed()) {
      p.kill();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  @Test
  void shardedReplicatedCollectionWorksOverTlsAndPlaintextIsRefused() {
    assertThat(query1.logTail()).contains("internal gRPC uses TLS").contains("tls=true");
    Http.Response r =
        api.put(
            "/collections/docs",
            "{\"vectors\":{\"size\":"
                + DIM
                + ",\"distance\":\"Euclid\"},\"shard_number\":2,\"replication_factor\":2}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    insert(0, 900);
    assertThat(api.post("/collections/docs/flush", "{}").status()).isEqualTo(200);
    waitGreen();
    assertThat(index.logTail()).contains("segment built for a query node");
    assertThat(query1.logTail()).contains("segment built remotely");

    assertThat(
            api.post("/collections/docs/points/count", "{\"exact\":true}")
                .result()
                .path("count")
                .asLong())
        .isEqualTo(vectors.size());
    for (int q = 0; q < 5; q++) {
      float[] qv = vector();
      Http.Response s =
          api.post(
              "/collections/docs/points/search",
              "{\"vector\":" + json(qv) + ",\"limit\":5,\"params\":{\"exact\":true}}");
      assertThat(s.status()).as(s.raw()).isEqualTo(200);
      assertThat(s.body().path("partial").asBoolean(false)).isFalse();
      List<Integer> expected = nearest(qv, 5);
      for (int i = 0; i < 5; i++) {
        assertThat(s.result().get(i).path("id").asInt()).isEqualTo(expected.get(i));
      }
    }

    // Primaries replicated every write over TLS: no replica was marked stale, and with query-1
    // gone query-2's replicas alone hold every point.
    for (ServerProcess n : nodes) {
      assertThat(n.logTail()).doesNotContain("replica missed a write");
    }
    assertThat(query2.logTail()).contains("internal gRPC uses TLS");

    // Plaintext and certificate-less TLS clients are refused by both gRPC servers.
    for (int port : new int[] {queryGrpc, indexGrpc}) {
      assertRefused(NettyChannelBuilder.forTarget("127.0.0.1:" + port).usePlaintext().build());
      ChannelCredentials noClientCert;
      try {
        noClientCert = TlsChannelCredentials.newBuilder().trustManager(ca.caPem().toFile()).build();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      assertRefused(NettyChannelBuilder.forTarget("127.0.0.1:" + port, noClientCert).build());
    }

    query1.kill();
    Http.Response c = api.post("/collections/docs/points/count", "{\"exact\":true}");
    assertThat(c.status()).as(c.raw()).isEqualTo(200);
    assertThat(c.result().path("count").asLong()).isEqualTo(vectors.size());
  }

  @Test
  void incompleteTlsSettingStopsTheNodeWithTheMissingSetting() {
    TestCertificates.Pem pem = ca.issue("broken", "ip:127.0.0.1");
    ServerProcess broken =
        new ServerProcess(
            tmp.resolve("broken"),
            tmp.resolve("broken.log"),
            "--flashvec.roles=query",
            "--flashvec.cluster.etcd-endpoints=" + etcd.url(),
            "--flashvec.cluster.grpc-port=" + ServerProcess.freePort(),
            "--flashvec.cluster.tls.enabled=true",
            "--flashvec.cluster.tls.cert=" + pem.cert());
    nodes.add(broken);
    assertThatThrownBy(broken::start)
        .hasMessageContaining("server exited during start-up")
        .hasMessageContaining(
            "flashvec.cluster.tls.enabled is true but flashvec.cluster.tls.key"
                + " (FLASHVEC_CLUSTER_TLS_KEY), flashvec.cluster.tls.ca (FLASHVEC_CLUSTER_TLS_CA)"
                + " not set");
  }

  private static void assertRefused(ManagedChannel ch) {
    try {
      assertThatThrownBy(
              () ->
                  ShardServiceGrpc.newBlockingStub(ch)
                      .withDeadlineAfter(10, TimeUnit.SECONDS)
                      .health(HealthRequest.getDefaultInstance()))
          .isInstanceOfSatisfying(
              StatusRuntimeException.class,
              e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    } finally {
      ch.shutdownNow();
    }
  }

  private float[] vector() {
    float[] v = new float[DIM];
    for (int d = 0; d < DIM; d++) {
      v[d] = (float) random.nextGaussian();
    }
    return v;
  }

  private void insert(int from, int n) {
    ObjectNode root = Http.JSON.createObjectNode();
    ArrayNode arr = root.putArray("points");
    for (int i = from; i < from + n; i++) {
      float[] v = vector();
      vectors.add(v);
      ObjectNode p = arr.addObject();
      p.put("id", i);
      ArrayNode a = p.putArray("vector");
      for (float f : v) {
        a.add(f);
      }
    }
    Http.Response r = api.put("/collections/docs/points?wait=true", root.toString());
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }

  private void waitGreen() {
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

  private List<Integer> nearest(float[] q, int k) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < vectors.size(); i++) {
      ids.add(i);
    }
    ids.sort(Comparator.comparingDouble(i -> l2(q, vectors.get(i))));
    return ids.subList(0, k);
  }

  private static double l2(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      double d = a[i] - b[i];
      s += d * d;
    }
    return s;
  }

  private static String json(float[] v) {
    ArrayNode a = Http.JSON.createArrayNode();
    for (float f : v) {
      a.add(f);
    }
    return a.toString();
  }
}
