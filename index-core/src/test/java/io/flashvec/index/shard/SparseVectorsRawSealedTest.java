package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.index.diskann.DiskAnnSegment;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.filter.FilterPlanner;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The sparse vector contract with segments sealed raw every 40 points (a live graph that never
 * takes a point, as in a bulk load or a WAL replay): their vectors file is written beside vectors
 * without edges, they are searched by a scan and merged by no one, and read back on reopen, with
 * their payloads on the heap.
 */
class SparseVectorsRawSealedTest extends SparseVectorsContractTest {

  private final ExecutorService builds =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("diskann-build").factory());

  /** Runs nothing: the live graphs stay empty (so seals are raw) and no merge builds them. */
  private static final Executor NEVER = task -> {};

  @AfterEach
  void stopBuilds() throws InterruptedException {
    builds.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).as("builds stopped").isTrue();
  }

  private int seal = 40;

  @Override
  protected int sealThreshold() {
    return seal;
  }

  /**
   * A raw segment large enough for the PQ scan (more points with the dense vector than the exact
   * plan takes), its placeholders closest to the query: the scan and its rerank, filtered or not,
   * return only points with the dense vector, and the exact scan returns what brute force does.
   */
  @Test
  void aLargeRawSegmentScansOnlyThePointsWithTheDenseVector() throws Exception {
    seal = 3000;
    Random r = TestSeeds.random("SparseVectorsRawSealedTest.large");
    Map<PointId, float[]> dense = new HashMap<>();
    Map<PointId, float[]> denseKept = new HashMap<>();
    try (Shard s = open()) {
      for (int from = 0; from < 3600; from += 400) {
        List<Point> batch = new ArrayList<>();
        for (int i = from; i < from + 400; i++) {
          PointId id = PointId.of(i);
          byte[] payload = ("{\"k\":" + (i % 5) + "}").getBytes(StandardCharsets.UTF_8);
          if (i % 3 == 0) {
            batch.add(new Point(id, null, payload, Map.of("a", randomSparse(r))));
            continue;
          }
          // short vectors: the placeholders (unit e0) score above every one of them
          float[] v = TestVectors.gaussian(r, DIM);
          for (int j = 0; j < DIM; j++) {
            v[j] *= 0.05f;
          }
          batch.add(new Point(id, v, payload));
          dense.put(id, v);
          if (i % 5 != 0) {
            denseKept.put(id, v);
          }
        }
        s.upsert(batch);
      }
      s.flush();
      settle(s);
      // sealed at the threshold, then flushed; the first has more points with the dense vector
      // than an exact plan takes, even filtered
      assertThat(s.snapshot().sealed())
          .as("raw segments with placeholders")
          .hasSize(2)
          .allMatch(seg -> !seg.hasGraph())
          .anyMatch(
              seg ->
                  seg.withoutVector() > 0
                      && 0.8 * (seg.size() - seg.withoutVector()) > 1.2 * FilterPlanner.MIN_EXACT);
      float[] q = new float[DIM];
      q[0] = 1f;
      FilterEvaluator notK0 =
          new FilterEvaluator(
              FilterParser.parse(
                  JsonMapper.builder()
                      .build()
                      .readTree("{\"must_not\": [{\"key\": \"k\", \"match\": {\"value\": 0}}]}"),
                  "filter"));
      for (boolean exact : new boolean[] {false, true}) {
        SearchParams params = exact ? new SearchParams(0, 0, 0, true) : SearchParams.DEFAULT;
        for (FilterEvaluator f : java.util.Arrays.asList(null, notK0)) {
          Map<PointId, float[]> among = f == null ? dense : denseKept;
          List<Record> got =
              Searches.search(s, q, 10, params, null, false, false, f, new SearchStats());
          var want = TestVectors.bruteForce(among, q, Distance.DOT, 10, null);
          String what = "exact=" + exact + ", filtered=" + (f != null);
          assertThat(got).as(what).hasSize(10);
          for (int i = 0; i < got.size(); i++) {
            assertThat(among).as(what).containsKey(got.get(i).id());
            if (exact) {
              assertThat(got.get(i).id()).as(what + ", rank " + i).isEqualTo(want.get(i).id());
            }
          }
        }
      }
    }
  }

  @Override
  protected Executor buildExecutor() {
    return builds;
  }

  @Override
  protected Shard.Options options(Shard.Options o) {
    return o.withLiveIndexer(LiveIndexer.of(NEVER))
        .withCompaction(
            new Shard.Compaction(
                NEVER,
                null,
                0.2,
                Shard.Compaction.DEFAULT_SEGMENTS_PER_TIER,
                Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS,
                true));
  }

  /** Raw segments opened with their payloads on the heap: the payload filters read those. */
  @Override
  protected boolean payloadsOnHeap() {
    return true;
  }

  @Override
  protected void checkLayout(Shard s) {
    var sealed = s.snapshot().sealed();
    assertThat(sealed).isNotEmpty().allMatch(seg -> !seg.hasGraph());
    assertThat(sealed).allMatch(seg -> ((DiskAnnSegment) seg).payloadsOnHeap());
    assertThat(sealed).anyMatch(seg -> seg.hasSparse());
    assertThat(sealed).anyMatch(seg -> seg.hasDense());
    assertThat(sealed).anyMatch(seg -> seg.withoutVector() > 0);
  }

  @Override
  protected void settle(Shard s) {
    Await.until(
        Duration.ofSeconds(60),
        "raw seals finished",
        () -> {
          assertThat(s.buildFailure()).as("index build failure").isNull();
          return !s.indexing();
        });
  }
}
