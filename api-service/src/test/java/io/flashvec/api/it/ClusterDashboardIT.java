package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.TestSeeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard's cluster view in a real browser (headless Chromium) against a proxy and two query
 * nodes: the nodes and every shard's replicas with their states, and how the view follows a node
 * that dies. Needs Debian's etcd, as {@code ClusterIT} (skipped without it, saying why).
 */
class ClusterDashboardIT {

  private static final int DIM = 4;

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path tmp;

  @Test
  void showsNodesShardsAndReplicaStates() throws Exception {
    System.out.println("[flashvec] ClusterDashboardIT: logs in " + tmp + " (kept when it fails)");
    String etcdBin = EtcdProcess.find();
    Assumptions.assumeTrue(
        etcdBin != null,
        "etcd binary not found: install Debian's etcd-server (./flashvec test does) to run"
            + " ClusterDashboardIT");
    SplittableRandom random = new SplittableRandom(TestSeeds.seed("ClusterDashboardIT"));
    List<ServerProcess> nodes = new ArrayList<>();
    try (EtcdProcess etcd = EtcdProcess.start(etcdBin, tmp)) {
      try {
        run(etcd, nodes, random);
      } finally {
        for (ServerProcess n : nodes) {
          n.kill();
        }
      }
    }
  }

  private void run(EtcdProcess etcd, List<ServerProcess> nodes, SplittableRandom random)
      throws Exception {
    for (int i = 1; i <= 2; i++) {
      nodes.add(
          new ServerProcess(
                  tmp.resolve("query-" + i),
                  tmp.resolve("query-" + i + ".log"),
                  "--flashvec.roles=query",
                  "--flashvec.cluster.etcd-endpoints=" + etcd.url(),
                  "--flashvec.cluster.node-id=query-" + i,
                  "--flashvec.cluster.grpc-port=" + ServerProcess.freePort(),
                  "--flashvec.cluster.lease-ttl=3s")
              .start());
    }
    ServerProcess proxy =
        new ServerProcess(
                tmp.resolve("proxy"),
                tmp.resolve("proxy.log"),
                "--flashvec.roles=proxy",
                "--flashvec.cluster.etcd-endpoints=" + etcd.url(),
                "--flashvec.cluster.node-id=proxy-1")
            .start();
    nodes.add(proxy);
    Http api = new Http(proxy.url());
    Http.Response created =
        api.put(
            "/collections/docs",
            "{\"vectors\":{\"size\":"
                + DIM
                + ",\"distance\":\"Cosine\"},\"shard_number\":2,\"replication_factor\":2}");
    assertThat(created.status()).as(created.raw()).isEqualTo(200);
    StringBuilder b = new StringBuilder("{\"points\":[");
    for (int i = 0; i < 40; i++) {
      b.append(i > 0 ? "," : "").append("{\"id\":").append(i).append(",\"vector\":[");
      for (int d = 0; d < DIM; d++) {
        b.append(d > 0 ? "," : "")
            .append(String.format(Locale.ROOT, "%.4f", random.nextDouble(-1, 1)));
      }
      b.append("]}");
    }
    Http.Response upsert = api.put("/collections/docs/points?wait=true", b.append("]}").toString());
    assertThat(upsert.status()).as(upsert.raw()).isEqualTo(200);

    try (Chromium browser = Chromium.start(tmp)) {
      Chromium.Page page = browser.open(proxy.url() + "/dashboard/#cluster");
      page.waitFor(
          "three nodes", "document.querySelectorAll('#nodes-table tbody tr').length === 3");
      String table = page.text("#nodes-table");
      assertThat(table).contains("query-1").contains("query-2").contains("proxy-1 (this node)");
      // two shards, each on both query nodes
      page.waitFor(
          "four active replicas",
          "[...document.querySelectorAll('.collection-shards .replica-state')]"
              + ".filter(e => e.innerText === 'Active').length === 4");
      String dir = System.getProperty("flashvec.dashboard.screenshots", "");
      if (!dir.isBlank()) {
        page.screenshot(
            Files.createDirectories(Path.of(dir)).resolve("dashboard-cluster.png"), 800);
      }

      // a query node dies: its lease expires, the view drops it and its replicas' states change
      nodes.get(1).kill();
      page.waitFor(
          "two nodes left", "document.querySelectorAll('#nodes-table tbody tr').length === 2");
      page.waitFor(
          "replicas no longer all active",
          "[...document.querySelectorAll('.collection-shards .replica-state')]"
              + ".filter(e => e.innerText === 'Active').length < 4");
      assertThat(page.text("#nodes-table")).doesNotContain("query-2");

      page.show("#collections");
      page.waitFor(
          "the collection through the proxy",
          "(document.querySelector('#collections-table') || {}).innerText.includes('docs')");
    }
  }
}
