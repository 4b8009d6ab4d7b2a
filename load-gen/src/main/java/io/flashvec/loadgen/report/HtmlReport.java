package io.flashvec.loadgen.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IntSummaryStatistics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Renders one or more JSON results as a self-contained HTML page (inline CSS and SVG, no scripts,
 * nothing fetched): recall vs QPS, QPS and latency percentiles vs concurrency, and, when the server
 * exported them, bytes and pages read per query and read bandwidth vs concurrency; when the block
 * device was sampled, QPS and the device's read MB/s against concurrency on two axes (where the QPS
 * curve flattens while the bandwidth stops growing, the disk is saturated), the device's reads/s,
 * and its 4 KiB pages per query beside the server's own; followed by a table of every point.
 * Several results are overlaid, one colour per (result, params) or (result, concurrency) series,
 * with a legend. Stateless.
 */
public final class HtmlReport {
  private HtmlReport() {}

  /** A result and the name it is shown under (usually its file name). */
  public record Named(String name, BenchmarkResult result) {}

  /** Renders and writes the report. */
  public static void write(Path file, List<Named> results) {
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(file, render(results));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write report [file=" + file + "]", e);
    }
  }

  /** Renders the report. */
  public static String render(List<Named> results) {
    StringBuilder sb = new StringBuilder();
    sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
        .append("<title>FlashVec load-gen report</title>\n<style>\n")
        .append("body{font-family:sans-serif;margin:24px;color:#222}")
        .append("h1{font-size:20px}h2{font-size:16px;margin-top:28px}")
        .append(".charts{display:flex;flex-wrap:wrap;gap:16px}")
        .append("table{border-collapse:collapse;font-size:12px;margin:8px 0}")
        .append("td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}")
        .append("th{background:#f3f3f3}td.l,th.l{text-align:left}")
        .append(".meta td{text-align:left}\n</style></head><body>\n")
        .append("<h1>FlashVec load-gen report</h1>\n");
    for (Named n : results) {
      sb.append("<h2>").append(escape(n.name)).append("</h2>\n<table class=\"meta\">");
      for (var e : n.result.metadata().entrySet()) {
        sb.append("<tr><th class=\"l\">")
            .append(escape(e.getKey()))
            .append("</th><td>")
            .append(escape(String.valueOf(e.getValue())))
            .append("</td></tr>");
      }
      sb.append("</table>\n");
    }
    sb.append("<h2>Charts</h2>\n<div class=\"charts\">\n");
    int charts = 0;
    for (SvgChart c : charts(results)) {
      if (!c.isEmpty()) {
        sb.append(c.render(560, 420));
        charts++;
      }
    }
    if (charts == 0) {
      sb.append("<p>No points to chart.</p>\n");
    }
    sb.append("</div>\n<h2>Points</h2>\n");
    for (Named n : results) {
      sb.append(table(n));
    }
    sb.append("</body></html>\n");
    return sb.toString();
  }

  private static List<SvgChart> charts(List<Named> results) {
    List<SvgChart> out = new ArrayList<>();
    boolean multi = results.size() > 1;

    // recall vs QPS: one series per (result, concurrency), the params sweep along the curve
    SvgChart recall =
        new SvgChart(
                "Recall vs QPS", "recall@k", "QPS", SvgChart.Scale.LINEAR, SvgChart.Scale.LINEAR)
            .xMax(1.0);
    int color = 0;
    for (Named n : results) {
      Map<Integer, List<SearchPoint>> byC = new LinkedHashMap<>();
      for (SearchPoint p : n.result.points()) {
        if (!Double.isNaN(p.recallAtK())) {
          byC.computeIfAbsent(p.concurrency(), c -> new ArrayList<>()).add(p);
        }
      }
      for (var e : byC.entrySet()) {
        List<double[]> pts = new ArrayList<>();
        e.getValue().stream()
            .sorted(Comparator.comparingDouble(SearchPoint::recallAtK))
            .forEach(p -> pts.add(new double[] {p.recallAtK(), p.qps()}));
        recall.add(
            new SvgChart.Series(
                (multi ? n.name + " " : "") + "c=" + e.getKey(), color(color++), "", pts));
      }
    }
    out.add(recall);

    out.add(
        perConcurrency(
            results, "QPS vs concurrency", "QPS", List.of(new Metric("", "", SearchPoint::qps))));
    out.add(
        perConcurrency(
            results,
            "Latency percentiles vs concurrency",
            "latency (ms)",
            List.of(
                new Metric("P50", SvgChart.DASHES[0], SearchPoint::p50Ms),
                new Metric("P95", SvgChart.DASHES[1], SearchPoint::p95Ms),
                new Metric("P99", SvgChart.DASHES[2], SearchPoint::p99Ms))));
    out.add(
        ioChart(
            results, "Bytes read per query vs concurrency", "bytes/query", "bytes_read_per_query"));
    out.add(
        ioChart(
            results, "Pages read per query vs concurrency", "pages/query", "pages_read_per_query"));
    out.add(ioChart(results, "Read bandwidth vs concurrency", "MB/s", "read_mb_per_s"));
    out.add(
        ioChart(
            results, "Server CPU per query vs concurrency", "CPU ms/query", "cpu_ms_per_query"));
    if (results.stream().anyMatch(n -> hasDevice(n.result))) {
      out.add(saturation(results));
      SvgChart reads =
          perConcurrency(
              results,
              "Device reads/s vs concurrency",
              "reads/s",
              List.of(new Metric("", "", p -> device(p, "reads_per_s"))));
      addFioReference(reads, results);
      out.add(reads);
      out.add(
          perConcurrency(
              results,
              "4 KiB pages per query: device vs server",
              "pages/query",
              List.of(
                  new Metric("device", "", p -> device(p, "pages_per_query")),
                  new Metric("server", SvgChart.DASHES[1], p -> io(p, "pages_read_per_query")))));
    }
    return out;
  }

  /**
   * QPS (left axis, solid) and the device's read MB/s (right axis, dashed) against concurrency, one
   * colour per (result, params): where QPS stops growing with the bandwidth flat too, the disk is
   * the limit; where QPS stops with bandwidth to spare, something else is.
   */
  private static SvgChart saturation(List<Named> results) {
    SvgChart chart =
        new SvgChart(
                "QPS and device read bandwidth vs concurrency",
                "concurrency",
                "QPS (solid)",
                SvgChart.Scale.LOG2,
                SvgChart.Scale.LINEAR)
            .y2("device read MB/s (dashed, right axis)");
    boolean multi = results.size() > 1;
    int color = 0;
    for (Named n : results) {
      for (var e : byParams(n.result).entrySet()) {
        String c = color(color++);
        String name = (multi ? n.name + " " : "") + e.getKey();
        List<double[]> qps = new ArrayList<>();
        List<double[]> mbs = new ArrayList<>();
        for (SearchPoint p : e.getValue()) {
          qps.add(new double[] {p.concurrency(), p.qps()});
          mbs.add(new double[] {p.concurrency(), device(p, "read_mb_per_s")});
        }
        chart.add(new SvgChart.Series(name + " QPS", c, "", qps, false));
        chart.add(new SvgChart.Series(name + " device MB/s", c, SvgChart.DASHES[1], mbs, true));
      }
    }
    return chart;
  }

  /**
   * Draws each result's fio QD32 IOPS (metadata {@code fio.qd32.iops}, from {@code --fio}) as a
   * flat grey line across its concurrency range: the reads/s the disk itself sustains.
   */
  private static void addFioReference(SvgChart chart, List<Named> results) {
    boolean multi = results.size() > 1;
    for (Named n : results) {
      double iops = fioQd32Iops(n.result);
      if (Double.isNaN(iops) || n.result.points().isEmpty()) {
        continue;
      }
      IntSummaryStatistics c =
          n.result.points().stream().mapToInt(SearchPoint::concurrency).summaryStatistics();
      chart.add(
          new SvgChart.Series(
              (multi ? n.name + " " : "") + "fio 4 KiB random reads, QD32",
              "#555555",
              SvgChart.DASHES[2],
              List.of(new double[] {c.getMin(), iops}, new double[] {c.getMax(), iops})));
    }
  }

  /** The {@code fio.qd32.iops} of a result's metadata, NaN when absent. */
  static double fioQd32Iops(BenchmarkResult r) {
    if (r.metadata().get("fio") instanceof Map<?, ?> fio
        && fio.get("qd32") instanceof Map<?, ?> qd32
        && qd32.get("iops") instanceof Number iops) {
      return iops.doubleValue();
    }
    return Double.NaN;
  }

  /** A result's points grouped by (label, params), each group sorted by concurrency. */
  private static Map<String, List<SearchPoint>> byParams(BenchmarkResult r) {
    Map<String, List<SearchPoint>> byParams = new LinkedHashMap<>();
    for (SearchPoint p : r.points()) {
      String key = (p.label() == null ? "" : p.label() + " ") + p.paramsLabel();
      byParams.computeIfAbsent(key, k -> new ArrayList<>()).add(p);
    }
    byParams.values().forEach(l -> l.sort(Comparator.comparingInt(SearchPoint::concurrency)));
    return byParams;
  }

  private static boolean hasDevice(BenchmarkResult r) {
    return r.points().stream().anyMatch(p -> p.device() != null && !p.device().isEmpty());
  }

  private static double device(SearchPoint p, String key) {
    return p.device() == null ? Double.NaN : p.device().getOrDefault(key, Double.NaN);
  }

  private record Metric(String name, String dash, ToDoubleFunction<SearchPoint> value) {}

  private static SvgChart ioChart(List<Named> results, String title, String y, String key) {
    return perConcurrency(
        results,
        title,
        y,
        List.of(
            new Metric(
                "", "", p -> p.io() == null ? Double.NaN : p.io().getOrDefault(key, Double.NaN))));
  }

  /** One series per (result, params[, metric]) with concurrency on a log2 x axis. */
  private static SvgChart perConcurrency(
      List<Named> results, String title, String yLabel, List<Metric> metrics) {
    SvgChart chart =
        new SvgChart(title, "concurrency", yLabel, SvgChart.Scale.LOG2, SvgChart.Scale.LINEAR);
    boolean multi = results.size() > 1;
    int color = 0;
    for (Named n : results) {
      for (var e : byParams(n.result).entrySet()) {
        String c = color(color++);
        for (Metric m : metrics) {
          List<double[]> pts = new ArrayList<>();
          e.getValue().stream()
              .sorted(Comparator.comparingInt(SearchPoint::concurrency))
              .forEach(p -> pts.add(new double[] {p.concurrency(), m.value.applyAsDouble(p)}));
          String name =
              (multi ? n.name + " " : "") + e.getKey() + (m.name.isEmpty() ? "" : " " + m.name);
          chart.add(new SvgChart.Series(name, c, m.dash, pts));
        }
      }
    }
    return chart;
  }

  /** Device columns of the table: header → key of {@link SearchPoint#device}. */
  private static final String[][] DEVICE_COLUMNS = {
    {"device reads/s", "reads_per_s"},
    {"of fio QD32 IOPS", "reads_of_reference_iops"},
    {"device MB/s", "read_mb_per_s"},
    {"device busy", "busy"},
    {"device pages/query", "pages_per_query"},
    {"device / server pages", "device_to_server_pages"},
    {"device / server bytes", "device_to_server_bytes"}
  };

  private static String table(Named n) {
    StringBuilder sb = new StringBuilder();
    sb.append("<h3>").append(escape(n.name)).append("</h3>\n");
    boolean dev = hasDevice(n.result);
    if (dev) {
      sb.append(
          "<p>Device columns count every process's reads on the disk, not only the server's.</p>\n");
    }
    sb.append("<table><tr>");
    List<String> headers =
        new ArrayList<>(
            List.of(
                "label",
                "concurrency",
                "params",
                "k",
                "queries",
                "errors",
                "QPS",
                "P50 ms",
                "P95 ms",
                "P99 ms",
                "max ms",
                "recall@k",
                "bytes/query",
                "pages/query",
                "read MB/s",
                "CPU ms/query"));
    if (dev) {
      for (String[] c : DEVICE_COLUMNS) {
        headers.add(c[0]);
      }
    }
    for (String h : headers) {
      sb.append("<th>").append(escape(h)).append("</th>");
    }
    sb.append("</tr>\n");
    for (SearchPoint p : n.result.points()) {
      sb.append("<tr><td class=\"l\">")
          .append(escape(p.label() == null ? "" : p.label()))
          .append("</td><td>")
          .append(p.concurrency())
          .append("</td><td class=\"l\">")
          .append(escape(p.paramsLabel()))
          .append("</td><td>")
          .append(p.k())
          .append("</td><td>")
          .append(p.queries())
          .append("</td><td>")
          .append(p.errors())
          .append("</td>");
      for (double v :
          new double[] {
            p.qps(),
            p.p50Ms(),
            p.p95Ms(),
            p.p99Ms(),
            p.maxMs(),
            p.recallAtK(),
            io(p, "bytes_read_per_query"),
            io(p, "pages_read_per_query"),
            io(p, "read_mb_per_s"),
            io(p, "cpu_ms_per_query")
          }) {
        sb.append("<td>").append(Double.isNaN(v) ? "" : cell(v)).append("</td>");
      }
      if (dev) {
        for (String[] c : DEVICE_COLUMNS) {
          double v = device(p, c[1]);
          sb.append("<td>").append(Double.isNaN(v) ? "" : cell(v)).append("</td>");
        }
      }
      sb.append("</tr>\n");
    }
    return sb.append("</table>\n").toString();
  }

  private static double io(SearchPoint p, String key) {
    return p.io() == null ? Double.NaN : p.io().getOrDefault(key, Double.NaN);
  }

  private static String cell(double v) {
    return Math.abs(v) >= 100
        ? String.format(Locale.ROOT, "%.1f", v)
        : String.format(Locale.ROOT, "%.4f", v);
  }

  private static String color(int i) {
    return SvgChart.PALETTE[i % SvgChart.PALETTE.length];
  }

  /** Escapes text for HTML and SVG. */
  static String escape(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '&' -> sb.append("&amp;");
        case '"' -> sb.append("&quot;");
        case '\'' -> sb.append("&#39;");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }
}
