package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Cluster mode from the container image: etcd, a proxy and two query nodes, each a container
 * started by Testcontainers the way our machines need it (no bridge network and no registry: host
 * network with loopback ports, never pull, Ryuk off). etcd runs from {@code -Dflashvec.etcd.image}
 * ({@code ./flashvec test} passes {@code flashvec/etcd:local}, Debian's etcd in our base image), or
 * as a local process when that is not given. Through the proxy: a collection with 2 shards and
 * replication factor 2, an upsert, exact searches equal to brute force, a count; then one query
 * node's container is killed and searches and counts stay complete from the other replicas.
 */
class ClusterImageIT {

  private static final int DIM = 8;
  private static final int POINTS = 300;

  @Test
  void clusterFromTheImageServesAShardedReplicatedCollection(@TempDir Path tmp) throws Exception {
    String image = System.getProperty("flashvec.image", "");
    assumeTrue(
        !image.isBlank(),
        "no -Dflashvec.image given (./flashvec test builds the image and sets it); skipping");
    SplittableRandom random = new SplittableRandom(TestSeeds.seed("ClusterImageIT"));
    String etcdImage = System.getProperty("flashvec.etcd.image", "");
    List<AutoCloseable> started = new ArrayList<>();
    try {
      String etcdUrl;
      if (etcdImage.isBlank()) {
        String bin = EtcdProcess.find();
        assumeTrue(bin != null, "no -Dflashvec.etcd.image and no etcd binary; skipping");
        EtcdProcess etcd = EtcdProcess.start(bin, tmp);
        started.add(etcd);
        etcdUrl = etcd.url();
      } else {
        int client = ServerProcess.freePort();
        int peer = ServerProcess.freePort();
        etcdUrl = "http://127.0.0.1:" + client;
        String peerUrl = "http://127.0.0.1:" + peer;
        GenericContainer<?> etcd =
            new GenericContainer<>(DockerImageName.parse(etcdImage))
                .withNetworkMode("host")
                .withImagePullPolicy(name -> false)
                .withCommand(
                    "/usr/local/bin/etcd",
                    "--name=etcd",
                    "--data-dir=/var/lib/etcd/data",
                    "--listen-client-urls=" + etcdUrl,
                    "--advertise-client-urls=" + etcdUrl,
                    "--listen-peer-urls=" + peerUrl,
                    "--initial-advertise-peer-urls=" + peerUrl,
                    "--initial-cluster=etcd=" + peerUrl)
                .waitingFor(
                    Wait.forLogMessage(".*ready to serve client requests.*", 1)
                        .withStartupTimeout(Duration.ofSeconds(60)));
        started.add(etcd);
        etcd.start();
      }

      GenericContainer<?> query1 = node(image, etcdUrl, "query-1", "query");
      GenericContainer<?> query2 = node(image, etcdUrl, "query-2", "query");
      started.add(query1);
      started.add(query2);
      query1.start();
      query2.start();
      GenericContainer<?> proxy = node(image, etcdUrl, "proxy-1", "proxy");
      started.add(proxy);
      proxy.start();
      Http api = new Http("http://127.0.0.1:" + proxy.getEnvMap().get("FLASHVEC_PORT"));
      waitReady(api);

      Http.Response r =
          api.put(
              "/collections/docs",
              "{\"vectors\":{\"size\":"
                  + DIM
                  + ",\"distance\":\"Dot\"},\"shard_number\":2,\"replication_factor\":2}");
      assertThat(r.status()).as(r.raw()).isEqualTo(200);
      List<float[]> vectors = new ArrayList<>();
      ObjectNode body = Http.JSON.createObjectNode();
      ArrayNode points = body.putArray("points");
      for (int i = 0; i < POINTS; i++) {
        float[] v = vector(random);
        vectors.add(v);
        ObjectNode p = points.addObject();
        p.put("id", i);
        ArrayNode a = p.putArray("vector");
        for (float f : v) {
          a.add(f);
        }
        p.putObject("payload").put("i", i);
      }
      r = api.put("/collections/docs/points?wait=true", body.toString());
      assertThat(r.status()).as(r.raw()).isEqualTo(200);

      assertSearchAndCount(api, vectors, random);
      for (GenericContainer<?> q : List.of(query1, query2)) {
        assertThat(q.execInContainer("id", "-u").getStdout().trim()).isEqualTo("10001");
        // replication factor 2 on two nodes: each holds a replica of both shards in /data
        assertThat(q.execInContainer("ls", "/data/collections").getStdout().split("\\s+"))
            .containsExactlyInAnyOrder("docs.s0", "docs.s1");
      }

      // One query node gone: the other replicas answer, nothing is partial.
      query1.getDockerClient().killContainerCmd(query1.getContainerId()).exec();
      assertSearchAndCount(api, vectors, random);
    } finally {
      for (AutoCloseable c : started.reversed()) {
        try {
          c.close();
        } catch (Exception e) {
          // a killed container is already gone
        }
      }
    }
  }

  /** A FlashVec container with {@code roles}, on free loopback ports of the host network. */
  private static GenericContainer<?> node(String image, String etcdUrl, String id, String roles) {
    return new GenericContainer<>(DockerImageName.parse(image))
        .withNetworkMode("host")
        .withImagePullPolicy(name -> false)
        .withEnv("FLASHVEC_PORT", Integer.toString(ServerProcess.freePort()))
        .withEnv("FLASHVEC_BIND", "127.0.0.1")
        .withEnv("FLASHVEC_ROLES", roles)
        .withEnv("FLASHVEC_CLUSTER_ETCD_ENDPOINTS", etcdUrl)
        .withEnv("FLASHVEC_CLUSTER_NODE_ID", id)
        .withEnv("FLASHVEC_CLUSTER_GRPC_PORT", Integer.toString(ServerProcess.freePort()))
        .withEnv("FLASHVEC_CLUSTER_LEASE_TTL", "3s")
        .withEnv("JAVA_OPTS", "-Xmx384m -XX:TieredStopAtLevel=1")
        .waitingFor(
            Wait.forLogMessage(".*joined the cluster.*", 1)
                .withStartupTimeout(Duration.ofSeconds(120)));
  }

  private static void waitReady(Http api) {
    Await.until(Duration.ofSeconds(60), "ready", () -> api.get("/readyz").status() == 200);
  }

  private static void assertSearchAndCount(
      Http api, List<float[]> vectors, SplittableRandom random) {
    Http.Response c = api.post("/collections/docs/points/count", "{\"exact\":true}");
    assertThat(c.status()).as(c.raw()).isEqualTo(200);
    assertThat(c.result().path("count").asLong()).isEqualTo(vectors.size());
    for (int q = 0; q < 5; q++) {
      float[] qv = vector(random);
      Http.Response s =
          api.post(
              "/collections/docs/points/search",
              "{\"vector\":" + json(qv) + ",\"limit\":5,\"with_payload\":true}");
      assertThat(s.status()).as(s.raw()).isEqualTo(200);
      assertThat(s.body().path("partial").asBoolean(false)).as(s.raw()).isFalse();
      List<Integer> expected = best(qv, vectors, 5);
      for (int i = 0; i < 5; i++) {
        assertThat(s.result().get(i).path("id").asInt()).as(s.raw()).isEqualTo(expected.get(i));
        assertThat(s.result().get(i).at("/payload/i").asInt()).isEqualTo(expected.get(i));
      }
    }
  }

  private static float[] vector(SplittableRandom random) {
    float[] v = new float[DIM];
    for (int d = 0; d < DIM; d++) {
      v[d] = (float) random.nextGaussian();
    }
    return v;
  }

  private static List<Integer> best(float[] q, List<float[]> vectors, int k) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < vectors.size(); i++) {
      ids.add(i);
    }
    ids.sort(Comparator.comparingDouble((Integer i) -> -dot(q, vectors.get(i))));
    return ids.subList(0, k);
  }

  private static double dot(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
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
