package io.flashvec.loadgen.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.loadgen.client.SearchParams;
import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.client.VectorDbClient.PreparedVector;
import io.flashvec.loadgen.dataset.Distance;
import io.flashvec.loadgen.report.SearchPoint;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A point that does not reach every query still reports recall over the whole query set: the
 * queries it missed are run once after it, outside its timings.
 */
class SearchBenchRecallTest {

  /**
   * Answers query {@code q} (its vector's first component) with the ground truth when q is even.
   */
  private static final class HalfRightClient implements VectorDbClient {
    final AtomicInteger searches = new AtomicInteger();

    @Override
    public long[] search(String collection, PreparedVector vector, int k, SearchParams params) {
      searches.incrementAndGet();
      int q = (int) vector.vector()[0];
      long[] ids = new long[k];
      for (int i = 0; i < k; i++) {
        ids[i] = q % 2 == 0 ? q * 100L + i : -1 - i;
      }
      return ids;
    }

    @Override
    public PreparedVector prepare(float[] vector) {
      return new PreparedVector(vector, "");
    }

    @Override
    public boolean collectionExists(String collection) {
      return true;
    }

    @Override
    public void createCollection(
        String collection,
        int dim,
        Distance distance,
        String indexType,
        Map<String, String> indexParams) {}

    @Override
    public void deleteCollection(String collection) {}

    @Override
    public void upsert(String collection, long[] ids, float[][] vectors) {}

    @Override
    public void delete(String collection, long[] ids) {}

    @Override
    public CollectionInfo collectionInfo(String collection) {
      return new CollectionInfo("green", 0, 0);
    }

    @Override
    public String metricsText() {
      return null;
    }

    @Override
    public String target() {
      return "fake";
    }

    @Override
    public void close() {}
  }

  private static SearchPoint run(long queriesPerPoint, int concurrency, HalfRightClient client) {
    int nq = 10;
    PreparedVector[] queries = new PreparedVector[nq];
    int[][] gt = new int[nq][];
    for (int q = 0; q < nq; q++) {
      queries[q] = client.prepare(new float[] {q});
      gt[q] = new int[10];
      for (int i = 0; i < 10; i++) {
        gt[q][i] = q * 100 + i;
      }
    }
    SearchBench bench =
        new SearchBench(
            client,
            new SearchBench.Config(
                "c",
                10,
                List.of(concurrency),
                List.of(new SearchParams(null, null, null)),
                Duration.ZERO,
                queriesPerPoint,
                WarmUp.Policy.NONE,
                List.of(),
                null,
                null,
                null,
                null),
            io.flashvec.loadgen.metrics.MetricsSource.of(client));
    return bench.runPoint(
        queries, gt, concurrency, new SearchParams(null, null, null), null, SearchBench.IDENTITY);
  }

  @Test
  void aPointThatReachesFewerQueriesThanTheSetStillMeasuresRecallOverAllOfThem() {
    HalfRightClient client = new HalfRightClient();

    // 3 timed queries: 0, 1, 2 (recall 1, 0, 1); over them alone recall would be 2/3
    SearchPoint p = run(3, 1, client);

    assertThat(p.queries()).isEqualTo(3);
    assertThat(p.recallAtK()).isCloseTo(0.5, within(1e-12));
    assertThat(p.quality().recallQueries()).isEqualTo(10);
    assertThat(p.quality().recallExtraQueries()).isEqualTo(7);
    assertThat(client.searches.get()).isEqualTo(10);
  }

  @Test
  void queriesRunMoreThanOnceCountOnceInTheRecall() {
    HalfRightClient client = new HalfRightClient();

    // 15 timed queries: 0..9 then 0..4 again; weighting each run would give 8/15
    SearchPoint p = run(15, 2, client);

    assertThat(p.queries()).isEqualTo(15);
    assertThat(p.recallAtK()).isCloseTo(0.5, within(1e-12));
    assertThat(p.quality().recallQueries()).isEqualTo(10);
    assertThat(p.quality().recallExtraQueries()).isZero();
    assertThat(client.searches.get()).isEqualTo(15);
  }

  @Test
  void theProgressLineGivesQueriesOrSecondsAndTheCurrentQps() {
    assertThat(SearchBench.progressLine("search c=4 search_list=40", 250, 1000, 0, 0, 812.4))
        .isEqualTo("search c=4 search_list=40: 250/1000 queries (25%), 812 QPS");
    assertThat(
            SearchBench.progressLine(
                "search c=1 default", 4200, 0, 2_500_000_000L, 10_000_000_000L, 1680))
        .isEqualTo("search c=1 default: 2.5/10.0 s, 4200 queries, 1680 QPS");
  }
}
