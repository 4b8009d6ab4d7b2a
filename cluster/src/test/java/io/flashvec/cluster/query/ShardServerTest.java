package io.flashvec.cluster.query;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.cluster.testing.InMemoryClusterMetadata;
import io.flashvec.cluster.testing.InProcessNodes;
import io.flashvec.cluster.testing.TestPoints;
import io.flashvec.cluster.transport.Protos;
import io.flashvec.cluster.transport.grpc.CountRequest;
import io.flashvec.cluster.transport.grpc.CreateShardRequest;
import io.flashvec.cluster.transport.grpc.DeleteRequest;
import io.flashvec.cluster.transport.grpc.GetRequest;
import io.flashvec.cluster.transport.grpc.RecordMsg;
import io.flashvec.cluster.transport.grpc.ShardRef;
import io.flashvec.cluster.transport.grpc.ShardSearchReply;
import io.flashvec.cluster.transport.grpc.ShardServiceGrpc.ShardServiceBlockingStub;
import io.flashvec.cluster.transport.grpc.UpsertRequest;
import io.flashvec.cluster.transport.grpc.WriteReply;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchParams;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.testing.TestSeeds;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The query role's gRPC service over real replicas on disk, called through in-process gRPC: a shard
 * of collection {@code c} with replicas on nodes {@code a} (the preferred primary) and {@code b}.
 */
@ExtendWith(TestSeeds.Reporter.class)
class ShardServerTest {

  private static final int DIM = 8;
  private static final CollectionConfig CONFIG =
      new CollectionConfig(DIM, Distance.DOT, 1, 2, IndexParams.DEFAULT);
  private static final ShardRef SHARD =
      ShardRef.newBuilder().setCollection("c").setShard(0).build();

  @TempDir Path dir;

  private final Random random = TestSeeds.random("ShardServerTest");
  private final InMemoryClusterMetadata meta = new InMemoryClusterMetadata("test");
  private InProcessNodes nodes;

  @BeforeEach
  void start() {
    nodes = new InProcessNodes(dir, meta, Duration.ofSeconds(5), "a", "b");
    meta.placeNext(List.of(List.of("a", "b")));
    assertThat(meta.createIfAbsent(new CollectionMeta("c", CONFIG, 0))).isTrue();
    for (String n : List.of("a", "b")) {
      assertThat(stub(n).createShard(create()).getCreated()).isTrue();
    }
  }

  @AfterEach
  void stop() {
    nodes.close();
  }

  private ShardServiceBlockingStub stub(String node) {
    return nodes
        .clients()
        .stub(nodes.node(node).grpcAddress())
        .withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static CreateShardRequest create() {
    return CreateShardRequest.newBuilder()
        .setShard(SHARD)
        .setConfig(Protos.config(CONFIG, CollectionTuning.DEFAULT, PayloadSchema.EMPTY))
        .build();
  }

  private static UpsertRequest upsert(List<Point> points, boolean replicate, long epoch) {
    return UpsertRequest.newBuilder()
        .setShard(SHARD)
        .addAllPoints(Protos.pointMsgs(points))
        .setWait(true)
        .setReplicate(replicate)
        .setEpoch(epoch)
        .build();
  }

  private long count(String node) {
    return stub(node).count(CountRequest.newBuilder().setShard(SHARD).build()).getCount();
  }

  private List<Record> get(String node, List<PointId> ids) {
    List<RecordMsg> got =
        stub(node)
            .get(
                GetRequest.newBuilder()
                    .setShard(SHARD)
                    .addAllIds(Protos.ids(ids))
                    .setWithPayload(true)
                    .setWithVector(true)
                    .build())
            .getRecordsList();
    return Protos.records(got);
  }

  private static StatusRuntimeException status(Runnable call) {
    try {
      call.run();
    } catch (StatusRuntimeException e) {
      return e;
    }
    throw new AssertionError("the call succeeded");
  }

  @Test
  void onDiskPayloadTravelsWithTheConfigAndTheTuneAction() {
    CollectionTuning heap = new CollectionTuning(-1, null, false);
    assertThat(Protos.tuning(Protos.config(CONFIG, heap, PayloadSchema.EMPTY))).isEqualTo(heap);
    assertThat(Protos.tuning(Protos.config(CONFIG, CollectionTuning.DEFAULT, PayloadSchema.EMPTY)))
        .isEqualTo(CollectionTuning.DEFAULT);
    ReplicaKey key = new ReplicaKey(SHARD.getCollection(), SHARD.getShard());
    io.flashvec.cluster.transport.grpc.MaintainRequest.Builder tune =
        io.flashvec.cluster.transport.grpc.MaintainRequest.newBuilder()
            .setShard(SHARD)
            .setAction(io.flashvec.cluster.transport.grpc.MaintainRequest.Action.TUNE)
            .setIndexingThreshold(-2);
    stub("a").maintain(tune.clone().setOnDiskPayload(false).build());
    assertThat(nodes.replicas("a").get(key).tuning().onDiskPayload()).isFalse();
    stub("a").maintain(tune.clone().setIndexingThreshold(500).build());
    assertThat(nodes.replicas("a").get(key).tuning())
        .as("a tune without on_disk_payload keeps it")
        .isEqualTo(new CollectionTuning(500, null, false));
    assertThat(nodes.replicas("b").get(key).tuning().onDiskPayload()).isTrue();
  }

  @Test
  void writesOnThePrimaryReachEveryReplicaAndAreReadBack() {
    List<Point> points = TestPoints.random(random, 1, 120, DIM);

    WriteReply reply = stub("a").upsert(upsert(points, true, 0));

    assertThat(reply.getStaleReplicasList()).isEmpty();
    assertThat(reply.getLaggingList()).isEmpty();
    assertThat(meta.leader("c", 0)).contains("a");
    for (String n : List.of("a", "b")) {
      assertThat(count(n)).as("points on %s", n).isEqualTo(120);
      Point p = points.get(random.nextInt(points.size()));
      Record r = get(n, List.of(p.id())).getFirst();
      assertThat(r.vector()).containsExactly(p.vector());
      assertThat(new String(r.payload(), UTF_8)).isEqualTo(new String(p.payload(), UTF_8));
    }

    // search: the replica's exact answer is the brute-force one, scores included
    float[] q = TestPoints.vector(random, DIM);
    SearchRequest search =
        new SearchRequest(q, 10, 0, null, new SearchParams(0, 0, 0, true), false, false, null);
    ShardSearchReply found = stub("b").search(Protos.search(SHARD, search, 10));
    List<Record> hits = Protos.records(found.getRecordsList());
    assertThat(hits).extracting(Record::id).isEqualTo(TestPoints.bestByDot(points, q, 0, 10));
    Point best = points.stream().filter(p -> p.id().equals(hits.getFirst().id())).findFirst().get();
    assertThat(hits.getFirst().score()).isCloseTo(TestPoints.dot(best.vector(), q), within());

    // scroll: pages of 7 in id order, each starting where the last one said
    List<PointId> scrolled = new ArrayList<>();
    ScrollRequest page = ScrollRequest.of(null, 7, false, false);
    int pages = 0;
    while (page != null) {
      ScrollPage got = Protos.page(stub("b").scroll(Protos.scroll(SHARD, page)));
      assertThat(got.points().size()).isLessThanOrEqualTo(7);
      got.points().forEach(r -> scrolled.add(r.id()));
      page = got.nextOffset() == null ? null : page.from(got.nextOffset());
      pages++;
    }
    assertThat(pages).isEqualTo(18); // 120 / 7 = 17.1
    assertThat(scrolled).isEqualTo(points.stream().map(Point::id).sorted().toList());

    // delete through the primary: gone from both replicas
    List<PointId> gone = List.of(points.get(3).id(), points.get(77).id());
    WriteReply deleted =
        stub("a")
            .delete(
                DeleteRequest.newBuilder()
                    .setShard(SHARD)
                    .addAllIds(Protos.ids(gone))
                    .setWait(true)
                    .setReplicate(true)
                    .build());
    assertThat(deleted.getStaleReplicasList()).isEmpty();
    for (String n : List.of("a", "b")) {
      assertThat(count(n)).isEqualTo(118);
      assertThat(get(n, gone)).isEmpty();
    }
  }

  private static org.assertj.core.data.Offset<Float> within() {
    return org.assertj.core.data.Offset.offset(1e-4f);
  }

  @Test
  void aClientWriteToAReplicaThatIsNotThePrimaryIsRefused() {
    stub("a").upsert(upsert(TestPoints.random(random, 1, 5, DIM), true, 0));
    assertThat(meta.leader("c", 0)).contains("a");

    StatusRuntimeException e =
        status(() -> stub("b").upsert(upsert(TestPoints.random(random, 100, 1, DIM), true, 0)));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.getStatus().getDescription())
        .contains("not the shard's primary [primary=a]")
        .contains("[collection=c, shard=0, node=b]");
    assertThat(count("a")).isEqualTo(5);
    assertThat(count("b")).isEqualTo(5);
  }

  @Test
  void aForwardedWriteFromAReplacedPrimaryIsRefused() {
    Point newer = TestPoints.random(random, 1, 1, DIM).getFirst();
    stub("b").upsert(upsert(List.of(newer), false, 50));

    Point older = new Point(newer.id(), TestPoints.vector(random, DIM), TestPoints.payload(9));
    StatusRuntimeException e = status(() -> stub("b").upsert(upsert(List.of(older), false, 10)));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(e.getStatus().getDescription()).contains("[epoch=10, current=50]");
    assertThat(get("b", List.of(newer.id())).getFirst().vector()).containsExactly(newer.vector());
  }

  @Test
  void aPrimaryThatFindsALaterOneDoesNotAcknowledgeTheWrite() {
    stub("a").upsert(upsert(TestPoints.random(random, 1, 1, DIM), true, 0));
    long epoch = meta.leaderOf("c", 0).orElseThrow().epoch();
    // b has since accepted writes of a later primary, which a has not heard of
    stub("b").upsert(upsert(TestPoints.random(random, 2, 1, DIM), false, epoch + 100));

    StatusRuntimeException e =
        status(() -> stub("a").upsert(upsert(TestPoints.random(random, 3, 1, DIM), true, 0)));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.getStatus().getDescription())
        .contains("no longer the shard's primary [epoch=" + epoch + "]");
    assertThat(get("b", List.of(PointId.of(3)))).isEmpty();
  }

  @Test
  void aReplicaThatMissesAWriteIsMarkedStaleBeforeTheWriteIsAcknowledged() {
    nodes.down("b", true);

    WriteReply reply = stub("a").upsert(upsert(TestPoints.random(random, 1, 4, DIM), true, 0));

    assertThat(reply.getStaleReplicasList()).containsExactly("b");
    assertThat(meta.isStale("c", 0, "b")).isTrue();
    assertThat(reply.getLaggingList())
        .singleElement()
        .satisfies(
            l -> {
              assertThat(l.getNode()).isEqualTo("b");
              assertThat(l.getRevision()).isEqualTo(meta.staleRevision("c", 0, "b"));
            });
    assertThat(count("a")).isEqualTo(4);

    // the next write does not try b again, and still reports it as lagging
    long calls = nodes.calls("b", "Upsert");
    WriteReply next = stub("a").upsert(upsert(TestPoints.random(random, 5, 1, DIM), true, 0));
    assertThat(nodes.calls("b", "Upsert")).isEqualTo(calls);
    assertThat(next.getStaleReplicasList()).isEmpty();
    assertThat(next.getLaggingList()).extracting(l -> l.getNode()).containsExactly("b");
  }

  @Test
  void badRequestsAnswerClientStatusesNamingTheValue() {
    StatusRuntimeException dim =
        status(
            () ->
                stub("a")
                    .search(
                        Protos.search(
                            SHARD,
                            new SearchRequest(new float[3], 5, 0, null, null, false, false, null),
                            5)));
    assertThat(dim.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(dim.getStatus().getDescription()).contains("expected dim: 8, got 3");

    StatusRuntimeException limit =
        status(
            () ->
                stub("a")
                    .scroll(
                        Protos.scroll(SHARD, ScrollRequest.of(null, 1, false, false)).toBuilder()
                            .setLimit(0)
                            .build()));
    assertThat(limit.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(limit.getStatus().getDescription()).contains("[limit=0]");

    ShardRef other = SHARD.toBuilder().setShard(4).build();
    StatusRuntimeException missing =
        status(() -> stub("a").count(CountRequest.newBuilder().setShard(other).build()));
    assertThat(missing.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(missing.getStatus().getDescription()).contains("no replica of the shard here");

    // creating a replica that exists is not an error, and keeps its points
    stub("a").upsert(upsert(TestPoints.random(random, 1, 3, DIM), true, 0));
    assertThat(stub("a").createShard(create()).getCreated()).isFalse();
    assertThat(count("a")).isEqualTo(3);
  }
}
