package io.flashvec.loadgen.report;

import static io.flashvec.loadgen.report.Points.point;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChartSelectionTest {

  private static SvgChart chart(String title, double... ys) {
    SvgChart c = new SvgChart(title, "x", "y", SvgChart.Scale.LINEAR, SvgChart.Scale.LINEAR);
    List<double[]> pts = new java.util.ArrayList<>();
    for (int i = 0; i < ys.length; i++) {
      pts.add(new double[] {i + 1, ys[i]});
    }
    c.add(new SvgChart.Series("s", "#000000", "", pts));
    return c;
  }

  @Test
  void chartsOfZerosOrOfNothingAreLeftOutWithTheReason() {
    HtmlReport.Charts charts =
        HtmlReport.select(
            List.of(
                new HtmlReport.Candidate(chart("QPS", 100, 200)),
                new HtmlReport.Candidate(chart("Pages", 0, 0, 0), "all zero here", "absent here"),
                new HtmlReport.Candidate(
                    chart("Bytes", Double.NaN, Double.NaN), "z", "absent here"),
                new HtmlReport.Candidate(chart("Some zeros", 0, 3)),
                new HtmlReport.Candidate(chart("Reads", 0), "all zero here", "absent here")),
            true);

    assertThat(charts.drawn()).extracting(SvgChart::title).containsExactly("QPS", "Some zeros");
    assertThat(charts.leftOut())
        .containsExactly("Pages, Reads (all zero here)", "Bytes (absent here)");
  }

  @Test
  void pagesReadFromMemoryAreNotDrawnAsFlatLinesAndTheReportSaysWhy() {
    Map<String, Double> inMemory =
        Map.of(
            "bytes_read_per_query", 0.0,
            "pages_read_per_query", 0.0,
            "read_mb_per_s", 0.0,
            "cpu_ms_per_query", 0.8);
    BenchmarkResult r =
        new BenchmarkResult(
            Map.of(),
            List.of(
                point(1, 20, 1000, 0.9, 1, 2, 5000, SearchPoint.Quality.UNKNOWN, inMemory),
                point(2, 20, 1800, 0.9, 1, 2, 5000, SearchPoint.Quality.UNKNOWN, inMemory)));

    String html = HtmlReport.render(List.of(new HtmlReport.Named("mem.json", r)));

    assertThat(html)
        .doesNotContain(">Pages read per query vs concurrency</text>")
        .doesNotContain(">Bytes read per query vs concurrency</text>")
        .doesNotContain(">Read bandwidth vs concurrency</text>")
        .contains(">Server CPU per query vs concurrency</text>")
        .contains(
            "Left out, nothing to show: Bytes read per query vs concurrency, Pages read per query"
                + " vs concurrency, Read bandwidth vs concurrency (0 at every point:")
        .contains("the data was served from memory");
  }

  @Test
  void logQpsTicksAreShortAndStayWithinTheData() {
    SvgChart c =
        new SvgChart("Recall vs QPS", "recall", "QPS", SvgChart.Scale.LINEAR, SvgChart.Scale.LOG10);
    c.add(
        new SvgChart.Series(
            "s", "#000000", "", List.of(new double[] {0.9, 800}, new double[] {0.99, 1400})));

    String svg = c.render(560, 420);

    // 800..1400 QPS spans no whole decade: ticks at every multiple, labelled 1k, not 1000.0
    assertThat(svg).contains(">700</text>").contains(">900</text>").contains(">1k</text>");
    assertThat(svg).doesNotContain(">100</text>").doesNotContain(">10k</text>");
    assertThat(SvgChart.shortNumber(1500)).isEqualTo("1.5k");
    assertThat(SvgChart.shortNumber(2_000_000)).isEqualTo("2M");
  }

  @Test
  void dominatedPointsAreFaintAndLeftOutOfTheLegend() {
    BenchmarkResult r =
        new BenchmarkResult(
            Map.of(),
            List.of(point(1, 10, 800, 0.85), point(1, 20, 1200, 0.92), point(1, 40, 900, 0.97)));

    String html = HtmlReport.render(List.of(new HtmlReport.Named("run.json", r)));

    assertThat(html)
        .contains("c=1 (dominated): x=0.850, y=800")
        .contains("stroke-opacity=\"0.45\"");
    assertThat(html).doesNotContain(">c=1 (dominated)</text>");
    // the frontier is joined from the highest QPS down: 0.92 → 0.97, not through the cold point
    assertThat(html)
        .containsPattern(
            "<polyline[^>]*points=\"[0-9.]+,[0-9.]+ [0-9.]+,[0-9.]+\"/><circle[^>]*><title>c=1: x=0.920");
  }

  @Test
  void ingestRatesSpanHalfASecondAtLeastSoTheUploadsLastMomentDrawsNoSpike() {
    // one sample a second, then the upload ends 0.1 s after the last one with a few batches
    List<double[]> rate =
        HtmlReport.uploadRate(
            List.of(
                List.of(0.0, 0.0),
                List.of(1.0, 1000.0),
                List.of(2.0, 2000.0),
                List.of(2.1, 2300.0)));

    assertThat(rate).hasSize(2);
    assertThat(rate.get(0)).containsExactly(1.0, 1000.0);
    assertThat(rate.get(1)[0]).isEqualTo(2.1);
    assertThat(rate.get(1)[1]).isCloseTo(1300 / 1.1, org.assertj.core.api.Assertions.within(1e-9));
    assertThat(HtmlReport.uploadRate(null)).isEmpty();
    // an upload shorter than that: its one rate
    assertThat(HtmlReport.uploadRate(List.of(List.of(0.0, 0.0), List.of(0.2, 500.0))))
        .singleElement()
        .satisfies(p -> assertThat(p).containsExactly(0.2, 2500.0));
  }
}
