package io.flashvec.loadgen.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HtmlReportTest {
  @TempDir Path dir;

  static final String RESULT =
      """
      {
        "dataset": "/data/synthetic-96",
        "n": 10000,
        "dim": 96,
        "url": "http://127.0.0.1:8080",
        "collection": "bench<&>",
        "date": "2026-11-22T07:00:00Z",
        "machine": {"cpu_model": "Test CPU", "nproc": 2},
        "points": [
          {"concurrency": 1, "k": 10, "params": {"search_list": 20}, "queries": 1000, "errors": 0,
           "qps": 800.5, "p50_ms": 1.1, "p95_ms": 1.9, "p99_ms": 2.5, "max_ms": 9.0,
           "recall_at_k": 0.91, "server": {"flashvec_io_bytes_read_total": 4096000},
           "io": {"bytes_read_per_query": 4096, "pages_read_per_query": 1.0}},
          {"concurrency": 2, "k": 10, "params": {"search_list": 20}, "queries": 1500, "errors": 1,
           "qps": 1400, "p50_ms": 1.3, "p95_ms": 2.2, "p99_ms": 3.1, "max_ms": 12.0,
           "recall_at_k": 0.91, "io": {"bytes_read_per_query": 4100, "pages_read_per_query": 1.0}},
          {"concurrency": 1, "k": 10, "params": {"search_list": 80}, "queries": 500, "errors": 0,
           "qps": 400, "p50_ms": 2.4, "p95_ms": 3.0, "p99_ms": 4.0, "max_ms": 10.0,
           "recall_at_k": 0.99, "future_field": [1, 2, 3]},
          {"concurrency": 2, "k": 10, "params": {"search_list": 80}, "queries": 700, "errors": 0,
           "qps": 700, "p50_ms": 2.8, "p95_ms": 3.5, "p99_ms": 5.0, "max_ms": 11.0,
           "recall_at_k": null}
        ]
      }
      """;

  @Test
  void readsAHandMadeResult() throws Exception {
    Path f = dir.resolve("run.json");
    Files.writeString(f, RESULT);

    BenchmarkResult r = BenchmarkResult.read(f);

    assertThat(r.metadata()).containsEntry("n", 10000).containsKey("machine");
    assertThat(r.points()).hasSize(4);
    SearchPoint p = r.points().get(0);
    assertThat(p.concurrency()).isEqualTo(1);
    assertThat(p.params()).containsEntry("search_list", 20);
    assertThat(p.qps()).isEqualTo(800.5);
    assertThat(p.recallAtK()).isEqualTo(0.91);
    assertThat(p.io()).containsEntry("bytes_read_per_query", 4096.0);
    assertThat(r.points().get(3).recallAtK()).isNaN();
    assertThat(p.paramsLabel()).isEqualTo("search_list=20");
  }

  @Test
  void rendersSelfContainedHtmlWithSvgChartsAndOverlays() throws Exception {
    Path f = dir.resolve("run.json");
    Files.writeString(f, RESULT);
    BenchmarkResult r = BenchmarkResult.read(f);
    // write it back out and read again: the writer's JSON is what the reader expects
    Path again = dir.resolve("again.json");
    r.write(again);
    BenchmarkResult r2 = BenchmarkResult.read(again);
    assertThat(r2.points()).isEqualTo(r.points());

    Path html = dir.resolve("report.html");
    HtmlReport.write(
        html, List.of(new HtmlReport.Named("run.json", r), new HtmlReport.Named("again.json", r2)));

    String s = Files.readString(html);
    assertThat(s).startsWith("<!DOCTYPE html>").contains("<svg").contains("</svg>");
    assertThat(s).contains("Recall vs QPS").contains("Latency percentiles vs concurrency");
    assertThat(s).contains("Bytes read per query vs concurrency").contains("Pages read per query");
    // legend entries of both overlaid results
    assertThat(s).contains("run.json search_list=20 P99").contains("again.json c=1");
    // escaped metadata, nothing fetched from elsewhere, no scripts
    assertThat(s).contains("bench&lt;&amp;&gt;").doesNotContain("bench<&>");
    assertThat(s)
        .doesNotContain("<script")
        .doesNotContain("src=\"http")
        .doesNotContain("href=\"http");
    assertThat(s.split("<svg", -1).length - 1).isGreaterThanOrEqualTo(5);
  }

  @Test
  void rendersWithoutPoints() {
    String s =
        HtmlReport.render(
            List.of(
                new HtmlReport.Named("empty", new BenchmarkResult(java.util.Map.of(), List.of()))));
    assertThat(s).contains("No points to chart.");
  }
}
