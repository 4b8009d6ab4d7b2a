package io.flashvec.loadgen.report;

import static io.flashvec.loadgen.report.Points.point;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class HeadlineTest {

  @Test
  void picksTheFastestPointReachingEachTargetPerConcurrency() {
    SearchPoint c1low = point(1, 20, 2000, 0.93);
    SearchPoint c1mid = point(1, 40, 1500, 0.955);
    SearchPoint c1mid2 = point(1, 50, 1600, 0.96); // faster and more recall: the pick at 0.95
    SearchPoint c1high = point(1, 100, 700, 0.991);
    SearchPoint c4mid = point(4, 40, 5000, 0.955);
    SearchPoint c4low = point(4, 20, 7000, 0.93);

    List<Headline.Row> rows = Headline.rows(List.of(c4low, c1high, c1low, c1mid, c4mid, c1mid2));

    assertThat(rows).hasSize(2);
    Headline.Row c1 = rows.get(0);
    assertThat(c1.concurrency()).isEqualTo(1);
    assertThat(c1.picks().get(0).target()).isEqualTo(0.95);
    assertThat(c1.picks().get(0).best()).isSameAs(c1mid2);
    assertThat(c1.picks().get(1).target()).isEqualTo(0.99);
    assertThat(c1.picks().get(1).best()).isSameAs(c1high);

    Headline.Row c4 = rows.get(1);
    assertThat(c4.concurrency()).isEqualTo(4);
    assertThat(c4.picks().get(0).best()).isSameAs(c4mid);
    assertThat(c4.picks().get(1).reached()).isFalse();
    assertThat(c4.picks().get(1).bestRecall()).isEqualTo(0.955);
  }

  @Test
  void withoutRecallNothingIsReachedAndTheBestRecallIsUnknown() {
    Headline.Pick p = Headline.pick(List.of(point(1, 20, 2000, Double.NaN)), 0.95);

    assertThat(p.reached()).isFalse();
    assertThat(p.bestRecall()).isNaN();
  }

  @Test
  void theReportLeadsWithTheHeadline() {
    BenchmarkResult r =
        new BenchmarkResult(
            java.util.Map.of("target", "rest"),
            List.of(point(2, 20, 2000, 0.93), point(2, 60, 1234, 0.97)));

    String html = HtmlReport.render(List.of(new HtmlReport.Named("qdrant.json", r)));

    assertThat(html.indexOf("1,234 QPS")).isPositive().isLessThan(html.indexOf("<svg"));
    assertThat(html)
        .contains("at recall@10 ≥ 0.95 (recall 0.9700, P99 4 ms, 2 clients, search_list=60)")
        .contains("not reached (best recall 0.9700)")
        .contains("Qdrant-compatible REST · qdrant.json");
  }
}
