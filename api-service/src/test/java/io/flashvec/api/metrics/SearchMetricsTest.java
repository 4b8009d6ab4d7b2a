package io.flashvec.api.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.SearchStats;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** Where search work is counted: standalone in the one process, in a cluster on query nodes. */
class SearchMetricsTest {

  private static SearchStats stats(long distances, long pages) {
    SearchStats s = new SearchStats();
    s.visited = 7;
    s.expanded = 3;
    s.reranked = 3;
    s.distanceComputations = distances;
    s.pagesRead = pages;
    return s;
  }

  private static double count(SimpleMeterRegistry r, String name) {
    return r.get(name).counter().count();
  }

  @Test
  void standaloneCountsTheWorkOfEverySearchItRan() {
    SimpleMeterRegistry r = new SimpleMeterRegistry();
    SearchMetrics m = new SearchMetrics(r, false);
    m.record(2, stats(100, 4));
    assertThat(count(r, "flashvec.search.queries")).isEqualTo(2);
    assertThat(count(r, "flashvec.search.distance.computations")).isEqualTo(100);
    assertThat(count(r, "flashvec.search.nodes.visited")).isEqualTo(7);
    assertThat(count(r, "flashvec.io.pages.read")).isEqualTo(4);
    assertThat(count(r, "flashvec.io.bytes.read")).isEqualTo(4 * 4096);
    assertThat(count(r, "flashvec.search.shard.searches")).isZero();
  }

  @Test
  void aClusterProxyCountsQueriesAndLeavesTheWorkToTheQueryNodes() {
    SimpleMeterRegistry proxyRegistry = new SimpleMeterRegistry();
    SimpleMeterRegistry nodeRegistry = new SimpleMeterRegistry();
    SearchMetrics proxy = new SearchMetrics(proxyRegistry, true);
    SearchMetrics node = new SearchMetrics(nodeRegistry, true);
    // one query over two shards, both on this node: the proxy gets the summed stats back
    node.recordShardSearch(stats(60, 1));
    node.recordShardSearch(stats(40, 2));
    SearchStats summed = stats(60, 1);
    summed.add(stats(40, 2));
    proxy.record(1, summed);

    assertThat(count(proxyRegistry, "flashvec.search.queries")).isEqualTo(1);
    assertThat(count(proxyRegistry, "flashvec.search.distance.computations")).isZero();
    assertThat(count(proxyRegistry, "flashvec.io.pages.read")).isZero();
    assertThat(count(nodeRegistry, "flashvec.search.queries")).isZero();
    assertThat(count(nodeRegistry, "flashvec.search.shard.searches")).isEqualTo(2);
    assertThat(count(nodeRegistry, "flashvec.search.distance.computations")).isEqualTo(100);
    assertThat(count(nodeRegistry, "flashvec.search.nodes.expanded")).isEqualTo(6);
    assertThat(count(nodeRegistry, "flashvec.io.pages.read")).isEqualTo(3);
  }
}
