package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Collection aliases in cluster mode, with real processes on 127.0.0.1: etcd, two query nodes and
 * two proxies. An alias made through one proxy works through the other (etcd's watch), goes with
 * its collection, survives a proxy's restart, and {@code GET /cluster} lists the nodes.
 *
 * <p>Needs the {@code etcd} binary; skipped with a message when it is missing.
 */
class ClusterAliasesIT {

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path tmp;

  private static final String VECTORS =
      "{\"vectors\":{\"size\":2,\"distance\":\"Dot\"},\"shard_number\":2}";

  private static long count(Http h, String collection) {
    Http.Response r = h.post("/collections/" + collection + "/points/count", "{}");
    return r.status() == 200 ? r.result().get("count").asLong() : -r.status();
  }

  private static String aliases(Http h) {
    return h.get("/aliases").result().get("aliases").toString();
  }

  @Test
  void aliasesLiveInEtcdAndWorkThroughEveryProxy() throws Exception {
    String etcdBin = EtcdProcess.find();
    Assumptions.assumeTrue(
        etcdBin != null, "etcd binary not found: install Debian's etcd-server to run this test");
    List<ServerProcess> processes = new ArrayList<>();
    try (EtcdProcess etcd = EtcdProcess.start(etcdBin, tmp)) {
      for (int i = 1; i <= 2; i++) {
        processes.add(
            new ServerProcess(
                    tmp.resolve("query-" + i),
                    tmp.resolve("query-" + i + ".log"),
                    "--flashvec.roles=query",
                    "--flashvec.cluster.etcd-endpoints=" + etcd.url(),
                    "--flashvec.cluster.node-id=query-" + i,
                    "--flashvec.cluster.grpc-port=" + ServerProcess.freePort())
                .start());
      }
      ServerProcess proxy1 = proxy(etcd, "proxy-1");
      ServerProcess proxy2 = proxy(etcd, "proxy-2");
      processes.add(proxy1);
      processes.add(proxy2);
      Http one = new Http(proxy1.url());
      Http two = new Http(proxy2.url());

      JsonNode cluster = one.get("/cluster").result();
      assertThat(cluster.get("status").asString()).isEqualTo("enabled");
      assertThat(cluster.get("peers").size()).isEqualTo(4);
      assertThat(cluster.get("peers").toString()).contains("query-1").contains("proxy-2");

      assertThat(one.put("/collections/v1", VECTORS).status()).isEqualTo(200);
      assertThat(one.put("/collections/v2", VECTORS).status()).isEqualTo(200);
      Http.Response made =
          one.post(
              "/collections/aliases",
              "{\"actions\":[{\"create_alias\":{\"collection_name\":\"v1\",\"alias_name\":\"prod\"}}]}");
      assertThat(made.status()).as(made.raw()).isEqualTo(200);
      assertThat(
              one.put(
                      "/collections/prod/points?wait=true",
                      "{\"points\":[{\"id\":1,\"vector\":[1,0]},{\"id\":2,\"vector\":[0,1]}]}")
                  .status())
          .isEqualTo(200);
      assertThat(count(one, "v1")).isEqualTo(2);
      Await.until(
          Duration.ofSeconds(10),
          "the alias reaches the other proxy",
          () -> count(two, "prod") == 2);
      JsonNode hits =
          two.post("/collections/prod/points/search", "{\"vector\":[1,0],\"limit\":1}").result();
      assertThat(hits.get(0).get("id").asLong()).isEqualTo(1);

      Http.Response shadow = two.put("/collections/prod", VECTORS);
      assertThat(shadow.status()).isEqualTo(400);
      assertThat(shadow.error()).contains("Alias with the same name already exists");
      Http.Response taken =
          two.post(
              "/collections/aliases",
              "{\"actions\":[{\"create_alias\":{\"collection_name\":\"v1\",\"alias_name\":\"v2\"}}]}");
      assertThat(taken.status()).isEqualTo(409);

      // switch through the second proxy, in one change
      Http.Response moved =
          two.post(
              "/collections/aliases",
              "{\"actions\":[{\"delete_alias\":{\"alias_name\":\"prod\"}},"
                  + "{\"create_alias\":{\"collection_name\":\"v2\",\"alias_name\":\"prod\"}},"
                  + "{\"create_alias\":{\"collection_name\":\"v1\",\"alias_name\":\"old\"}}]}");
      assertThat(moved.status()).as(moved.raw()).isEqualTo(200);
      assertThat(count(two, "prod")).isZero();
      Await.until(
          Duration.ofSeconds(10),
          "the switch reaches the first proxy",
          () -> count(one, "prod") == 0);

      proxy1.restart();
      assertThat(aliases(one))
          .isEqualTo(
              "[{\"alias_name\":\"old\",\"collection_name\":\"v1\"},"
                  + "{\"alias_name\":\"prod\",\"collection_name\":\"v2\"}]");

      assertThat(one.delete("/collections/v1").result().asBoolean()).isTrue();
      assertThat(aliases(one)).isEqualTo("[{\"alias_name\":\"prod\",\"collection_name\":\"v2\"}]");
      Await.until(
          Duration.ofSeconds(10),
          "the delete reaches the second proxy",
          () -> aliases(two).equals("[{\"alias_name\":\"prod\",\"collection_name\":\"v2\"}]"));
      assertThat(count(two, "old")).isEqualTo(-404);
    } finally {
      processes.forEach(ServerProcess::kill);
    }
  }

  private ServerProcess proxy(EtcdProcess etcd, String id) {
    return new ServerProcess(
            tmp.resolve(id),
            tmp.resolve(id + ".log"),
            "--flashvec.roles=proxy",
            "--flashvec.cluster.etcd-endpoints=" + etcd.url(),
            "--flashvec.cluster.node-id=" + id)
        .start();
  }
}
