package io.flashvec.cluster.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.cluster.Aliases;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.testing.InMemoryClusterMetadata;
import io.flashvec.cluster.testing.InProcessNodes;
import io.flashvec.cluster.testing.TestPoints;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The proxy over three in-process query nodes with real replicas: collection {@code c} has shard 0
 * on {@code n1, n2} and shard 1 on {@code n2, n3}. Nodes are taken down (every call fails at once)
 * or held (calls wait past any deadline) to check failover, the search deadline, partial results
 * and the merge.
 */
@ExtendWith(TestSeeds.Reporter.class)
class ClusterProxyTest {

  private static final int DIM = 6;
  private static final Duration SEARCH_DEADLINE = Duration.ofMillis(400);
  private static final Duration WRITE_DEADLINE = Duration.ofSeconds(1);
  private static final SearchParams EXACT = new SearchParams(0, 0, 0, true);

  @TempDir Path dir;

  private final Random random = TestSeeds.random("ClusterProxyTest");
  private final InMemoryClusterMetadata meta = new InMemoryClusterMetadata("proxy");
  private InProcessNodes nodes;
  private ClusterProxy proxy;

  @BeforeEach
  void start() {
    nodes = new InProcessNodes(dir, meta, WRITE_DEADLINE, "n1", "n2", "n3");
    proxy = new ClusterProxy(meta, nodes.clients(), SEARCH_DEADLINE, WRITE_DEADLINE, () -> true);
    meta.placeNext(List.of(List.of("n1", "n2"), List.of("n2", "n3")));
    proxy.createCollection("c", new CollectionConfig(DIM, Distance.DOT, 2, 2, IndexParams.DEFAULT));
  }

  @AfterEach
  void stop() {
    proxy.close();
    nodes.close();
  }

  private List<Record> search(float[] q, int limit, int offset, SearchStats stats) {
    return proxy.search(
        "c", new SearchRequest(q, limit, offset, null, EXACT, false, false, null), stats);
  }

  private static List<PointId> ids(List<Record> records) {
    return records.stream().map(Record::id).toList();
  }

  private static List<Point> onShard(List<Point> points, int shard) {
    return points.stream().filter(p -> p.id().shard(2) == shard).toList();
  }

  @Test
  void peersAreTheRegisteredNodes() {
    CollectionService.Peers peers = proxy.peers();
    assertThat(peers.self()).isEqualTo(CollectionService.peerId("proxy"));
    assertThat(peers.peers())
        .extracting(CollectionService.Peer::nodeId)
        .containsExactly("n1", "n2", "n3");
    assertThat(peers.peers().getFirst().peerId()).isEqualTo(CollectionService.peerId("n1"));
    assertThat(peers.peers().getFirst().uri()).isEqualTo("127.0.0.1:0");
    assertThat(peers.peers().getFirst().roles()).containsExactly("query");
  }

  @Test
  void strictModeAndMetadataAreKeptInTheClusterMetadataAndReadWithoutStatistics() {
    proxy.updateAliases(List.of(new Aliases.Create("a", "c")));
    proxy.updateCollection(
        "a", t -> t.withStrictMode("{\"enabled\":true}").withMetadata("{\"team\":\"search\"}"));
    assertThat(meta.placed("c").orElseThrow().meta().tuning().strictMode())
        .isEqualTo("{\"enabled\":true}");
    CollectionService.Settings s = proxy.settings("a");
    assertThat(s.tuning().metadata()).isEqualTo("{\"team\":\"search\"}");
    assertThat(s.config().dimension()).isEqualTo(DIM);
    assertThat(proxy.describe("c").info().tuning().strictMode()).isEqualTo("{\"enabled\":true}");
    // another change keeps them
    proxy.updateCollection("c", 0, null, null);
    assertThat(proxy.settings("c").tuning().metadata()).isEqualTo("{\"team\":\"search\"}");
    // the payload bytes of a cluster's collection are not known to its proxy
    assertThat(proxy.payloadBytes("c")).isEqualTo(-1);
  }

  @Test
  void optimizationsAreRefusedAsStandaloneOnlyAfterA404ForAnUnknownCollection() {
    assertThatThrownBy(() -> proxy.optimizations("c", 16))
        .isInstanceOf(io.flashvec.index.InvalidInputException.class)
        .hasMessage(
            "Wrong input: optimizations are reported by a standalone server only, not in cluster"
                + " mode yet [collection=c]");
    assertThatThrownBy(() -> proxy.optimizations("nope", 16))
        .isInstanceOf(io.flashvec.index.NotFoundException.class);
  }

  @Test
  void aliasesNameTheirCollectionOnEveryCallAndGoWithIt() {
    proxy.updateAliases(List.of(new Aliases.Create("a", "c")));
    assertThat(proxy.aliases()).containsExactly(java.util.Map.entry("a", "c"));
    proxy.upsert("a", TestPoints.random(random, 1, 20, DIM), true);
    assertThat(proxy.count("c")).isEqualTo(20);
    assertThat(proxy.count("a")).isEqualTo(20);
    assertThat(proxy.exists("a")).isTrue();
    assertThat(proxy.describe("a").name()).isEqualTo("c");
    assertThat(proxy.clusterInfo("a").shardCount()).isEqualTo(2);
    assertThat(search(new float[DIM], 5, 0, new SearchStats())).hasSize(5);
    assertThat(
            proxy.search(
                "a",
                new SearchRequest(new float[DIM], 5, 0, null, EXACT, false, false, null),
                new SearchStats()))
        .hasSize(5);
    assertThatThrownBy(() -> proxy.updateAliases(List.of(new Aliases.Create("b", "nope"))))
        .isInstanceOf(io.flashvec.index.NotFoundException.class)
        .hasMessage("Not found: Collection `nope` doesn't exist!");
    assertThatThrownBy(
            () ->
                proxy.createCollection(
                    "a", new CollectionConfig(DIM, Distance.DOT, 1, 1, IndexParams.DEFAULT)))
        .isInstanceOf(io.flashvec.index.InvalidInputException.class)
        .hasMessageContaining("Alias with the same name already exists");
    assertThat(proxy.deleteCollection("a")).as("collections are deleted by name").isFalse();
    assertThat(proxy.deleteCollection("c")).isTrue();
    assertThat(proxy.aliases()).isEmpty();
  }

  /** The shard protocol carries one unnamed vector per point: other vectors are refused. */
  @Test
  void namedAndSparseVectorsAreRefusedAndNothingIsCreated() {
    assertThatThrownBy(
            () ->
                proxy.createCollection(
                    "named",
                    new CollectionConfig(
                        DIM,
                        Distance.DOT,
                        1,
                        1,
                        IndexParams.DEFAULT,
                        java.util.Map.of(),
                        "text",
                        java.util.Map.of(
                            "image", new io.flashvec.index.DenseVectorParams(2, Distance.DOT)))))
        .isInstanceOf(io.flashvec.index.InvalidInputException.class)
        .hasMessageContaining("named vectors are not supported in cluster mode")
        .hasMessageContaining("vectors=text");
    assertThatThrownBy(
            () ->
                proxy.createCollection(
                    "sparse",
                    new CollectionConfig(
                        DIM,
                        Distance.DOT,
                        1,
                        1,
                        IndexParams.DEFAULT,
                        java.util.Map.of("s", io.flashvec.index.SparseVectorParams.DEFAULT))))
        .isInstanceOf(io.flashvec.index.InvalidInputException.class)
        .hasMessageContaining("sparse_vectors are not supported in cluster mode");
    assertThatThrownBy(
            () ->
                proxy.createCollection(
                    "sparse-only",
                    CollectionConfig.withoutPrimary(
                        1,
                        1,
                        IndexParams.DEFAULT,
                        java.util.Map.of("s", io.flashvec.index.SparseVectorParams.DEFAULT),
                        java.util.Map.of())))
        .isInstanceOf(io.flashvec.index.InvalidInputException.class)
        .hasMessage(
            "Wrong input: collections without a dense vector are not supported in cluster mode"
                + " yet, only in standalone mode [sparse_vectors=[s]]");
    assertThat(proxy.exists("named")).isFalse();
    assertThat(proxy.exists("sparse")).isFalse();
    assertThat(proxy.exists("sparse-only")).isFalse();
  }

  @Test
  void searchMergesTheShardsBestFirstAfterTheOffset() {
    List<Point> points = TestPoints.random(random, 1, 300, DIM);
    proxy.upsert("c", points, true);
    assertThat(onShard(points, 0)).isNotEmpty();
    assertThat(onShard(points, 1)).isNotEmpty();

    for (int i = 0; i < 5; i++) {
      float[] q = TestPoints.vector(random, DIM);
      SearchStats stats = new SearchStats();
      List<Record> hits = search(q, 10, 5, stats);
      assertThat(ids(hits)).isEqualTo(TestPoints.bestByDot(points, q, 5, 10));
      assertThat(hits).isSortedAccordingTo((a, b) -> Float.compare(b.score(), a.score()));
      assertThat(stats.partial).isFalse();
      assertThat(stats.distanceComputations).as("both shards' costs").isGreaterThanOrEqualTo(300);
    }
    assertThat(proxy.count("c", null)).isEqualTo(300);

    List<PointId> scrolled = new ArrayList<>();
    ScrollRequest page = ScrollRequest.of(null, 40, false, false);
    while (page != null) {
      ScrollPage got = proxy.scroll("c", page);
      got.points().forEach(r -> scrolled.add(r.id()));
      page = got.nextOffset() == null ? null : page.from(got.nextOffset());
    }
    assertThat(scrolled).isEqualTo(points.stream().map(Point::id).sorted().toList());

    List<PointId> asked = List.of(PointId.of(7), PointId.of(9999), PointId.of(2), PointId.of(7));
    assertThat(ids(proxy.retrieve("c", asked, true, true)))
        .containsExactly(PointId.of(7), PointId.of(2));
  }

  @Test
  void readsFailOverToAnotherReplicaOfTheShard() {
    List<Point> points = TestPoints.random(random, 1, 100, DIM);
    proxy.upsert("c", points, true);
    nodes.down("n1", true);

    for (int i = 0; i < 6; i++) {
      float[] q = TestPoints.vector(random, DIM);
      SearchStats stats = new SearchStats();
      assertThat(ids(search(q, 5, 0, stats))).isEqualTo(TestPoints.bestByDot(points, q, 0, 5));
      assertThat(stats.partial).isFalse();
      assertThat(proxy.count("c", null)).isEqualTo(100);
    }
    // reads round-robin over the replicas: some went to n1 first and were answered by n2
    assertThat(nodes.calls("n1", "Search")).isPositive();
    assertThat(nodes.calls("n1", "Count")).isPositive();
  }

  @Test
  void writesFailOverToTheNextReplicaWhichMarksTheMissingOneStale() {
    nodes.down("n1", true);

    List<Point> points = TestPoints.random(random, 1, 50, DIM);
    proxy.upsert("c", points, true);

    assertThat(meta.leader("c", 0)).contains("n2");
    assertThat(meta.isStale("c", 0, "n1")).isTrue();
    assertThat(meta.isStale("c", 1, "n3")).isFalse();
    // n1 is back, but stale: no read goes to it until it is resynced
    nodes.down("n1", false);
    long before = nodes.calls("n1", "Get");
    List<PointId> all = points.stream().map(Point::id).toList();
    for (int i = 0; i < 4; i++) {
      assertThat(ids(proxy.retrieve("c", all, false, false))).isEqualTo(all);
    }
    assertThat(nodes.calls("n1", "Get")).isEqualTo(before);
  }

  @Test
  void aShardThatMissesTheSearchDeadlineMakesTheResultPartialAndOtherReadsFail() {
    List<Point> points = TestPoints.random(random, 1, 200, DIM);
    proxy.upsert("c", points, true);
    nodes.hold("n2");
    nodes.hold("n3");

    float[] q = TestPoints.vector(random, DIM);
    SearchStats stats = new SearchStats();
    List<Record> hits = search(q, 8, 0, stats);

    // shard 0 answered from n1 once n2 missed the deadline; shard 1 did not answer at all
    assertThat(stats.partial).isTrue();
    assertThat(ids(hits)).isEqualTo(TestPoints.bestByDot(onShard(points, 0), q, 0, 8));
    assertThatThrownBy(() -> proxy.count("c", null))
        .isInstanceOf(ShardUnavailableException.class)
        .hasMessageContaining("[collection=c, shard=1, node=")
        .hasMessageContaining("DEADLINE_EXCEEDED");

    nodes.release("n2");
    nodes.release("n3");
    SearchStats after = new SearchStats();
    assertThat(ids(search(q, 8, 0, after))).isEqualTo(TestPoints.bestByDot(points, q, 0, 8));
    assertThat(after.partial).isFalse();
  }

  @Test
  void aWriteNoPrimaryAnswersIsRetriedUntilTheWriteDeadlineThenFails() {
    nodes.down("n2", true);
    nodes.down("n3", true);
    Point p =
        TestPoints.random(random, 1, 40, DIM).stream()
            .filter(pt -> pt.id().shard(2) == 1)
            .findFirst()
            .orElseThrow();

    assertThatThrownBy(() -> proxy.upsert("c", List.of(p), true))
        .isInstanceOf(ShardUnavailableException.class)
        .hasMessageContaining("[collection=c, shard=1, node=n3")
        .hasMessageContaining("UNAVAILABLE");
    // retried every 250 ms within the 1 s write deadline
    assertThat(nodes.calls("n2", "Upsert")).isGreaterThan(1);
    assertThat(nodes.calls("n3", "Upsert")).isGreaterThan(1);
  }
}
