package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.filter.FilterPlanner;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

/**
 * Filtered search on a sealed DiskANN segment against brute force over the accepted points, at 50%,
 * 10%, 1% and 0.1% selectivity (a uniformly random payload field, independent of the vectors):
 * recall@10 must stay at least 0.95 with the planner's choice and, where the graph is usable at all
 * (≥ 10%), also when the graph search is forced.
 */
@ExtendWith(TestSeeds.Reporter.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FilteredSearchTest {

  static final int DIM = 32;
  static final int N = 20_000;
  static final int K = 10;
  static final int QUERIES = 40;

  private GrowingSegment src;
  private DiskAnnSegment seg;
  private float[][] queries;

  /** The filter of the running test. */
  private FilterEvaluator filter;

  @BeforeAll
  void build(@TempDir Path tmp) throws IOException {
    Random r = TestSeeds.random("filtered-search");
    float[][] data = TestVectors.latent(r, N + QUERIES, DIM);
    src = new GrowingSegment(0, DIM);
    for (int i = 0; i < N; i++) {
      // bucket: uniform in [0, 1000), so "bucket < b" accepts b/1000 of the points
      String payload = "{\"bucket\":" + r.nextInt(1000) + ",\"name\":\"p" + i + "\"}";
      src.append(
          PointId.of(i),
          Distance.COSINE.prepare(data[i]),
          payload.getBytes(StandardCharsets.UTF_8));
    }
    src.freeze();
    queries = new float[QUERIES][];
    for (int q = 0; q < QUERIES; q++) {
      queries[q] = Distance.COSINE.prepare(data[N + q]);
    }
    int[] all = new int[N];
    for (int i = 0; i < N; i++) {
      all[i] = i;
    }
    Path dir = tmp.resolve("seg");
    DiskAnnWriter.write(
        FileIO.DEFAULT,
        dir,
        1,
        src,
        all,
        Distance.COSINE,
        new IndexParams("diskann", 32, 64, 1.2f, 0));
    seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 1, 64);
  }

  @AfterAll
  void close() {
    if (seg != null) {
      seg.close();
    }
  }

  /** The ids of the results (the segment's ordinals are in its own order, not the source's). */
  private static Set<PointId> ids(TopK top, io.flashvec.index.segment.Segment from) {
    int n = top.size();
    float[] s = new float[n];
    int[] slots = new int[n];
    int[] ords = new int[n];
    top.drainBestFirst(s, slots, ords);
    Set<PointId> out = new HashSet<>();
    for (int o : ords) {
      out.add(from.idAt(o));
    }
    return out;
  }

  private double recall(AcceptedOrdinals accept, FilterPlanner.Plan plan, SearchStats stats) {
    int hits = 0;
    int total = 0;
    AcceptedOrdinals acceptSrc = AcceptedOrdinals.evaluate(src, filter::matches);
    for (float[] q : queries) {
      TopK exact = new TopK(Distance.COSINE, K);
      Searches.search(src, q, SearchParams.DEFAULT, acceptSrc, exact, 0, new SearchStats(), 1.0);
      Set<PointId> truth = ids(exact, src);
      TopK got = new TopK(Distance.COSINE, K);
      seg.search(q, SearchParams.DEFAULT, accept, got, 0, stats, plan);
      int n = got.size();
      int[] ords = new int[n];
      got.drainBestFirst(new float[n], new int[n], ords);
      Set<PointId> found = new HashSet<>();
      for (int o : ords) {
        assertThat(accept.get(o)).as("result %d is accepted", o).isTrue();
        found.add(seg.idAt(o));
      }
      found.retainAll(truth);
      hits += found.size();
      total += truth.size();
    }
    return total == 0 ? 1.0 : (double) hits / total;
  }

  @ParameterizedTest
  @ValueSource(ints = {500, 100, 10, 1})
  void recallAtSelectivity(int bucketsOf1000) {
    String json = "{\"must\":[{\"key\":\"bucket\",\"range\":{\"lt\":" + bucketsOf1000 + "}}]}";
    FilterEvaluator f =
        new FilterEvaluator(FilterParser.parse(JsonMapper.builder().build().readTree(json), "f"));
    filter = f;
    AcceptedOrdinals accept = AcceptedOrdinals.evaluate(seg, f::matches);
    double selectivity = (double) accept.count() / N;
    FilterPlanner.Plan plan = FilterPlanner.choose(accept.count(), N, 64, true);
    boolean plannedExact = plan == FilterPlanner.Plan.EXACT;
    SearchStats planned = new SearchStats();
    double plannedRecall = recall(accept, null, planned);
    System.out.printf(
        Locale.ROOT,
        "filtered recall@%d selectivity=%.4f accepted=%d plan=%s recall=%.3f visited/q=%d dist/q=%d%n",
        K,
        selectivity,
        accept.count(),
        plan,
        plannedRecall,
        planned.visited / QUERIES,
        planned.distanceComputations / QUERIES);
    assertThat(plannedRecall).as("planned recall at %s", selectivity).isGreaterThanOrEqualTo(0.95);
    SearchStats pqStats = new SearchStats();
    double pqRecall = recall(accept, FilterPlanner.Plan.PQ_SCAN, pqStats);
    System.out.printf(
        Locale.ROOT,
        "  forced PQ scan: recall=%.3f PQ distances/q=%d%n",
        pqRecall,
        pqStats.visited / QUERIES);
    assertThat(pqRecall).as("PQ scan recall at %s", selectivity).isGreaterThanOrEqualTo(0.95);
    assertThat(pqStats.visited / QUERIES)
        .as("PQ scan scores every accepted point")
        .isEqualTo(accept.count());
    if (bucketsOf1000 >= 100) {
      SearchStats graph = new SearchStats();
      double graphRecall = recall(accept, FilterPlanner.Plan.GRAPH, graph);
      System.out.printf(
          Locale.ROOT,
          "  forced graph: recall=%.3f visited/q=%d%n",
          graphRecall,
          graph.visited / QUERIES);
      assertThat(graphRecall).as("graph recall at %s", selectivity).isGreaterThanOrEqualTo(0.95);
    }
    if (bucketsOf1000 <= 10) {
      assertThat(plannedExact).as("selective filters are scored exactly").isTrue();
      assertThat(plannedRecall).isEqualTo(1.0);
    }
  }
}
