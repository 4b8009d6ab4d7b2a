package io.flashvec.loadgen.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
        "fio": {"device": "vda", "qd1": {"iops": 18000}, "qd32": {"iops": 59258.0}},
        "points": [
          {"concurrency": 1, "k": 10, "params": {"search_list": 20}, "queries": 1000, "errors": 0,
           "qps": 800.5, "p50_ms": 1.1, "p95_ms": 1.9, "p99_ms": 2.5, "max_ms": 9.0,
           "recall_at_k": 0.91, "server": {"flashvec_io_bytes_read_total": 4096000},
           "io": {"bytes_read_per_query": 4096, "pages_read_per_query": 1.0},
           "device": {"reads_per_s": 850.0, "read_mb_per_s": 3.48, "busy": 0.5,
                      "pages_per_query": 1.06, "device_to_server_pages": 1.06}},
          {"concurrency": 2, "k": 10, "params": {"search_list": 20}, "queries": 1500, "errors": 1,
           "qps": 1400, "p50_ms": 1.3, "p95_ms": 2.2, "p99_ms": 3.1, "max_ms": 12.0,
           "recall_at_k": 0.91, "io": {"bytes_read_per_query": 4100, "pages_read_per_query": 1.0},
           "device": {"reads_per_s": 1490.0, "read_mb_per_s": 6.1, "busy": 0.9,
                      "pages_per_query": 1.04, "device_to_server_pages": 1.04}},
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
    assertThat(p.device()).containsEntry("read_mb_per_s", 3.48).containsEntry("busy", 0.5);
    assertThat(r.points().get(2).device()).isEmpty();
  }

  @Test
  void deviceFiguresSurviveTheJsonRoundTripAndAreLeftOutWhenAbsent() throws Exception {
    Map<String, Double> dev = new LinkedHashMap<>();
    dev.put("reads_per_s", 20_000.0);
    dev.put("read_mb_per_s", 81.92);
    dev.put("pages_per_query", 40.0);
    dev.put("device_to_server_pages", 1.0 / 0.9);
    SearchPoint with = point(4, 1000, dev);
    SearchPoint without = point(8, 1500, Map.of());
    Path f = dir.resolve("dev.json");

    new BenchmarkResult(Map.of("device", Map.of("name", "vda")), List.of(with, without)).write(f);
    BenchmarkResult back = BenchmarkResult.read(f);

    assertThat(back.points().get(0).device()).isEqualTo(dev);
    assertThat(back.points().get(1).device()).isEmpty();
    assertThat(Files.readString(f)).containsOnlyOnce("\"read_mb_per_s\"");
    assertThat(back.metadata()).containsEntry("device", Map.of("name", "vda"));
  }

  /** The y of the marker whose tooltip starts with {@code title}. */
  private static double cy(String html, String title) {
    Matcher m =
        Pattern.compile("cy=\"([0-9.]+)\"[^>]*><title>" + Pattern.quote(title)).matcher(html);
    assertThat(m.find()).as("marker %s", title).isTrue();
    return Double.parseDouble(m.group(1));
  }

  private static SearchPoint point(int c, double qps, Map<String, Double> device) {
    return new SearchPoint(
        null,
        c,
        10,
        Map.of("search_list", 60),
        1000,
        0,
        1.0,
        qps,
        1,
        2,
        3,
        4,
        5,
        1.5,
        0.9,
        Map.of(),
        Map.of(),
        Map.of("pages_read_per_query", 36.0),
        Map.of(),
        device,
        null);
  }

  @Test
  void drawsQpsAndDeviceBandwidthOnTwoAxesOnlyWhenTheDeviceWasSampled() throws Exception {
    Path f = dir.resolve("run.json");
    Files.writeString(f, RESULT);
    BenchmarkResult r = BenchmarkResult.read(f);

    String s = HtmlReport.render(List.of(new HtmlReport.Named("run.json", r)));

    assertThat(s)
        .contains("QPS and device read bandwidth vs concurrency")
        .contains("device read MB/s (dashed, right axis)")
        .contains("search_list=20 device MB/s")
        .contains("search_list=20 QPS")
        .contains("Device reads/s vs concurrency")
        .contains("4 KiB pages per query: device vs server")
        .contains("<th>device MB/s</th>")
        .contains("<td>1490.0</td>")
        .contains("count every process")
        .contains("<th>of fio QD32 IOPS</th>");
    // the disk's own QD32 IOPS as a flat reference across the concurrency range
    assertThat(s)
        .contains("fio 4 KiB random reads, QD32: x=1, y=59258")
        .contains("fio 4 KiB random reads, QD32: x=2, y=59258");
    assertThat(HtmlReport.fioQd32Iops(r)).isEqualTo(59258.0);
    // the dashed bandwidth series: c=1 at 3.48 MB/s, c=2 at 6.1 MB/s, scaled on the right axis
    assertThat(s).contains("search_list=20 device MB/s: x=1, y=3.480").contains("x=2, y=6.1");
    // each axis is scaled to its own series: both maxima (1400 QPS, 6.1 MB/s at c=2) sit at the
    // same height, and the 3.48 MB/s point sits at 3.48/6.1 of it, not at the bottom of a QPS axis
    double qpsTop = cy(s, "search_list=20 QPS: x=2,");
    double mbTop = cy(s, "search_list=20 device MB/s: x=2,");
    double mbLow = cy(s, "search_list=20 device MB/s: x=1,");
    double bottom = 420 - 50 - 16 * 2; // height - bottom margin with two legend rows
    assertThat(mbTop).isCloseTo(qpsTop, within(0.11));
    assertThat((bottom - mbLow) / (bottom - mbTop)).isCloseTo(3.48 / 6.1, within(0.01));

    String plain =
        HtmlReport.render(
            List.of(
                new HtmlReport.Named(
                    "plain", new BenchmarkResult(Map.of(), List.of(point(1, 100, Map.of()))))));
    assertThat(plain)
        .doesNotContain("device read bandwidth")
        .doesNotContain("device MB/s")
        .doesNotContain("right axis");
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
    // two runs: recall as a frontier on a log QPS axis, P99 alone against concurrency
    assertThat(s).contains("Recall vs QPS (Pareto frontier)").contains("QPS (log)");
    assertThat(s).contains("P99 latency vs concurrency");
    assertThat(s).contains("Bytes read per query vs concurrency").contains("Pages read per query");
    // legend entries of both overlaid results, named by system and file
    assertThat(s)
        .contains("FlashVec · run.json search_list=20</text>")
        .contains("FlashVec · again.json c=1</text>");
    // one run alone gets all three percentiles
    String single = HtmlReport.render(List.of(new HtmlReport.Named("run.json", r)));
    assertThat(single)
        .contains("Latency percentiles vs concurrency")
        .contains("search_list=20 P95</text>");
    // readable settings instead of the raw metadata map
    assertThat(s).contains("<dt>Machine</dt><dd>Test CPU, 2 cores</dd>");
    assertThat(s).doesNotContain("{cpu_model=");
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
