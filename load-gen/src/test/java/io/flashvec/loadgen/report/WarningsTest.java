package io.flashvec.loadgen.report;

import static io.flashvec.loadgen.report.Points.point;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WarningsTest {
  private static final SearchPoint.Quality WHOLE = new SearchPoint.Quality(1000, 0, 5, true, 0.02);

  private static SearchPoint good(int c, int sl, double qps) {
    return point(c, sl, qps, 0.95, 2, 4, 5000, WHOLE, Map.of());
  }

  @Test
  void aCleanSweepHasNoWarnings() {
    assertThat(Warnings.of(List.of(good(1, 10, 3000), good(1, 100, 900), good(2, 10, 5000)), 1000))
        .isEmpty();
  }

  @Test
  void qpsRisingWithSearchListIsFlaggedAsAWarmUpProblem() {
    // the first point after a server start: search_list=10 slower than 100
    List<String> w =
        Warnings.of(List.of(good(1, 10, 700), good(1, 40, 1500), good(1, 100, 900)), 1000);

    assertThat(w).hasSize(1);
    assertThat(w.get(0))
        .contains("QPS rises with search_list")
        .contains("warm-up too short")
        .contains("c=1: search_list=10 700 QPS < search_list=40 1500 QPS")
        .doesNotContain("search_list=100");
  }

  @Test
  void withinFivePercentIsNoise() {
    assertThat(Warnings.of(List.of(good(1, 10, 980), good(1, 40, 1000)), 1000)).isEmpty();
  }

  @Test
  void recallOnASubsetOfTheQueriesIsFlagged() {
    SearchPoint subset =
        point(
            1, 10, 900, 0.99, 2, 4, 5000, new SearchPoint.Quality(400, 0, 5, true, 0.01), Map.of());
    // an old result: no coverage recorded, fewer queries run than the set holds
    SearchPoint old = point(1, 20, 800, 0.97, 2, 4, 3000, SearchPoint.Quality.UNKNOWN, Map.of());

    List<String> w = Warnings.of(List.of(subset, old), 10_000);

    assertThat(w)
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("Recall measured on a subset of the 10000 queries")
                    .contains("c=1 search_list=10 (400)")
                    .contains("c=1 search_list=20 (at most 3000)"));
  }

  @Test
  void fewQueriesUnsteadyThroughputUnsettledWarmUpLongTailsAndErrorsAreFlagged() {
    SearchPoint few = point(1, 10, 900, 0.9, 2, 4, 200, WHOLE, Map.of());
    SearchPoint unsteady =
        point(
            2, 10, 900, 0.9, 2, 4, 5000, new SearchPoint.Quality(1000, 0, 5, true, 0.25), Map.of());
    SearchPoint cold =
        point(
            4,
            10,
            900,
            0.9,
            2,
            4,
            5000,
            new SearchPoint.Quality(1000, 0, 30, false, 0.02),
            Map.of());
    SearchPoint tail = point(8, 10, 900, 0.9, 2, 25, 5000, WHOLE, Map.of());
    SearchPoint failing =
        new SearchPoint(
            null,
            16,
            10,
            Map.of("search_list", 10),
            990,
            10,
            1,
            990,
            2,
            3,
            4,
            5,
            6,
            2,
            0.9,
            Map.of(),
            Map.of(),
            Map.of(),
            Map.of(),
            Map.of(),
            WHOLE);

    List<String> w = Warnings.of(List.of(few, unsteady, cold, tail, failing), 1000);

    assertThat(w)
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("Fewer than 1000 queries")
                    .contains("c=1 search_list=10 (200)"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("Throughput not steady")
                    .contains("c=2 search_list=10 (±25%)"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("Warm-up stopped at its cap")
                    .contains("c=4 search_list=10 (after 30 s)"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("P99 more than 10× the median")
                    .contains("c=8 search_list=10 (P99 25 ms, P50 2 ms)"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("Failed queries")
                    .contains("c=16 search_list=10 (10 of 1000)"));
  }

  @Test
  void theReportShowsTheWarnings() {
    BenchmarkResult r =
        new BenchmarkResult(Map.of("queries", 1000), List.of(good(1, 10, 700), good(1, 40, 1500)));

    String html = HtmlReport.render(List.of(new HtmlReport.Named("run.json", r)));

    assertThat(html).contains("Check before quoting").contains("QPS rises with search_list");
  }
}
