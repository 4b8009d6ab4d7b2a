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
 * nothing fetched). It leads with a headline (per run and concurrency, the best QPS at recall@k ≥
 * 0.95 and ≥ 0.99 with its P99, or "not reached" with the best recall seen) and the warnings about
 * figures that should not be taken at face value ({@link Warnings}); then the charts: recall vs QPS
 * as a Pareto frontier on a log QPS axis (only non-dominated points joined, the others faint), QPS
 * and latency percentiles vs concurrency, and, when the server exported them, bytes and pages read
 * per query, read bandwidth and CPU per query vs concurrency; when the block device was sampled,
 * QPS and the device's read MB/s against concurrency on two axes, the device's reads/s, and its 4
 * KiB pages per query beside the server's own. A chart whose series are all zero or absent (pages
 * read when the data is in memory) is left out, and one line says which and why. Ingest results get
 * their upload throughput over time with the times to searchable and to green. Each run's machine
 * and settings follow as text ({@link Settings}), then a table of every point.
 *
 * <p>Several results are drawn together, one colour per run (system and file), its series in shades
 * of it, with a legend. Stateless.
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

  /** A chart and why it would be left out when it has nothing to show. */
  record Candidate(SvgChart chart, String whenAllZero, String whenEmpty) {
    Candidate(SvgChart chart) {
      this(chart, "0 at every point", "no point has this figure");
    }
  }

  /** The charts drawn and the sentences naming the ones left out. */
  record Charts(List<SvgChart> drawn, List<String> leftOut) {}

  private static final String IO_ZERO =
      "0 at every point: nothing was read from storage, the data was served from memory";
  private static final String IO_EMPTY = "the server does not export this metric";

  /** Renders the report. */
  public static String render(List<Named> results) {
    List<Named> search = new ArrayList<>();
    List<Named> ingest = new ArrayList<>();
    for (Named n : results) {
      (isIngest(n.result) ? ingest : search).add(n);
    }
    StringBuilder sb = new StringBuilder();
    sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
        .append("<title>FlashVec load-gen report</title>\n<style>\n")
        .append("body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}")
        .append("h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:30px}")
        .append("h3{font-size:14px;margin:14px 0 4px}")
        .append(".sub{color:#666;margin-top:0}")
        .append(".headline{font-size:18px;margin:6px 0}.headline b{color:#111}")
        .append(".swatch{display:inline-block;width:12px;height:12px;border-radius:2px;")
        .append("margin-right:6px;vertical-align:-1px}")
        .append(".charts{display:flex;flex-wrap:wrap;gap:16px}")
        .append(".warn{background:#fff6e0;border-left:4px solid #e0a000;padding:6px 12px;")
        .append("margin:6px 0;list-style:none}.warn li{margin:4px 0}")
        .append(".omitted{color:#666;font-size:13px}")
        .append("table{border-collapse:collapse;font-size:12px;margin:8px 0}")
        .append("td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}")
        .append("th{background:#f3f3f3}td.l,th.l{text-align:left}td.no{color:#a33}")
        .append("dl.settings{display:grid;grid-template-columns:max-content auto;gap:2px 12px;")
        .append("font-size:13px;margin:4px 0}dl.settings dt{font-weight:bold;color:#555}")
        .append("dl.settings dd{margin:0}\n</style></head><body>\n")
        .append("<h1>FlashVec load-gen report</h1>\n")
        .append(subtitle(results));
    // colours follow a run's place among all the results, so every section uses the whole list
    headline(sb, results);
    warnings(sb, results);
    Charts charts = charts(results);
    sb.append("<h2>Charts</h2>\n<div class=\"charts\">\n");
    for (SvgChart c : charts.drawn) {
      sb.append(c.render(560, 420));
    }
    if (charts.drawn.isEmpty()) {
      sb.append("<p>No points to chart.</p>\n");
    }
    sb.append("</div>\n");
    if (!charts.leftOut.isEmpty()) {
      sb.append("<p class=\"omitted\">Left out, nothing to show: ")
          .append(escape(String.join("; ", charts.leftOut)))
          .append(".</p>\n");
    }
    if (!ingest.isEmpty()) {
      ingest(sb, ingest, results);
    }
    sb.append("<h2>Machine and settings</h2>\n");
    for (int i = 0; i < results.size(); i++) {
      Named n = results.get(i);
      sb.append("<h3>")
          .append(swatch(i, results.size()))
          .append(escape(n.name))
          .append("</h3>\n<dl class=\"settings\">");
      for (Settings.Line l : Settings.lines(n.result)) {
        sb.append("<dt>")
            .append(escape(l.label()))
            .append("</dt><dd>")
            .append(escape(l.text()))
            .append("</dd>");
      }
      sb.append("</dl>\n");
    }
    if (search.stream().anyMatch(n -> !n.result.points().isEmpty())) {
      sb.append("<h2>Points</h2>\n");
      for (Named n : search) {
        sb.append(table(n));
      }
    }
    sb.append("</body></html>\n");
    return sb.toString();
  }

  private static boolean isIngest(BenchmarkResult r) {
    return "ingest".equals(r.metadata().get("kind"))
        || (r.points().isEmpty() && r.metadata().containsKey("upload_seconds"));
  }

  /** Datasets and dates of the results, one line. */
  private static String subtitle(List<Named> results) {
    java.util.Set<String> datasets = new java.util.LinkedHashSet<>();
    java.util.Set<String> dates = new java.util.TreeSet<>();
    for (Named n : results) {
      Object d = n.result.metadata().get("dataset_name");
      if (d == null) {
        d = n.result.metadata().get("dataset");
      }
      if (d != null) {
        datasets.add(String.valueOf(d));
      }
      if (n.result.metadata().get("date") != null) {
        dates.add(String.valueOf(n.result.metadata().get("date")));
      }
    }
    StringBuilder sb = new StringBuilder();
    sb.append(results.size()).append(results.size() == 1 ? " run" : " runs");
    if (!datasets.isEmpty()) {
      sb.append(" on ").append(String.join(", ", datasets));
    }
    if (!dates.isEmpty()) {
      sb.append(", ")
          .append(
              dates.size() == 1
                  ? ((java.util.TreeSet<String>) dates).first()
                  : ((java.util.TreeSet<String>) dates).first()
                      + " to "
                      + ((java.util.TreeSet<String>) dates).last());
    }
    return "<p class=\"sub\">" + escape(sb.toString()) + "</p>\n";
  }

  /** The name a run is shown under in legends: its system and its file name. */
  static String runName(Named n) {
    String system = Settings.system(n.result);
    return system.equals("unknown") ? n.name : system + " · " + n.name;
  }

  private static void headline(StringBuilder sb, List<Named> search) {
    boolean any =
        search.stream().anyMatch(n -> n.result.points().stream().anyMatch(SearchPoint::hasRecall));
    if (!any) {
      return;
    }
    int k =
        search.stream()
            .flatMap(n -> n.result.points().stream())
            .mapToInt(SearchPoint::k)
            .max()
            .orElse(10);
    // one sentence per run: its best QPS at the first target over every concurrency
    for (int i = 0; i < search.size(); i++) {
      Named n = search.get(i);
      if (n.result.points().stream().noneMatch(SearchPoint::hasRecall)) {
        continue;
      }
      sb.append("<p class=\"headline\">").append(swatch(i, search.size()));
      Headline.Pick p = Headline.pick(n.result.points(), Headline.TARGETS[0]);
      sb.append("<b>").append(escape(runName(n))).append("</b>: ");
      if (p.reached()) {
        sb.append("<b>")
            .append(escape(String.format(Locale.ROOT, "%,.0f QPS", p.best().qps())))
            .append("</b>")
            .append(
                escape(
                    String.format(
                        Locale.ROOT,
                        " at recall@%d ≥ %.2f (recall %.4f, P99 %s ms, %d clients, %s)",
                        p.best().k(),
                        p.target(),
                        p.best().recallAtK(),
                        SvgChart.fmt(p.best().p99Ms()),
                        p.best().concurrency(),
                        p.best().paramsLabel())));
      } else {
        sb.append(
            escape(
                String.format(
                    Locale.ROOT,
                    "recall@%d ≥ %.2f not reached (best recall %.4f)",
                    k,
                    p.target(),
                    p.bestRecall())));
      }
      sb.append("</p>\n");
    }
    sb.append("<table><tr><th class=\"l\">run</th><th>clients</th>");
    for (double t : Headline.TARGETS) {
      sb.append(
          String.format(
              Locale.ROOT,
              "<th>QPS at recall@%d ≥ %.2f</th><th>P99 ms</th><th class=\"l\">at</th>",
              k,
              t));
    }
    sb.append("</tr>\n");
    for (int i = 0; i < search.size(); i++) {
      Named n = search.get(i);
      for (Headline.Row row : Headline.rows(n.result.points())) {
        if (row.picks().stream().allMatch(p -> Double.isNaN(p.bestRecall()))) {
          continue;
        }
        sb.append("<tr><td class=\"l\">")
            .append(swatch(i, search.size()))
            .append(escape(runName(n) + (row.label().isEmpty() ? "" : " " + row.label())))
            .append("</td><td>")
            .append(row.concurrency())
            .append("</td>");
        for (Headline.Pick p : row.picks()) {
          if (p.reached()) {
            sb.append("<td><b>")
                .append(String.format(Locale.ROOT, "%,.0f", p.best().qps()))
                .append("</b></td><td>")
                .append(SvgChart.fmt(p.best().p99Ms()))
                .append("</td><td class=\"l\">")
                .append(
                    escape(
                        String.format(
                            Locale.ROOT,
                            "%s (recall %.4f)",
                            p.best().paramsLabel(),
                            p.best().recallAtK())))
                .append("</td>");
          } else {
            sb.append("<td class=\"no\" colspan=\"3\">")
                .append(
                    escape(
                        String.format(
                            Locale.ROOT, "not reached (best recall %.4f)", p.bestRecall())))
                .append("</td>");
          }
        }
        sb.append("</tr>\n");
      }
    }
    sb.append("</table>\n");
  }

  private static void warnings(StringBuilder sb, List<Named> search) {
    StringBuilder list = new StringBuilder();
    for (Named n : search) {
      long nq = n.result.metadata().get("queries") instanceof Number q ? q.longValue() : 0;
      for (String w : Warnings.of(n.result.points(), nq)) {
        list.append("<li>⚠ ")
            .append(search.size() > 1 ? "<b>" + escape(runName(n)) + "</b>: " : "")
            .append(escape(w))
            .append("</li>\n");
      }
    }
    if (!list.isEmpty()) {
      sb.append("<h2>Check before quoting</h2>\n<ul class=\"warn\">\n")
          .append(list)
          .append("</ul>\n");
    }
  }

  /** Upload throughput over time and the times to searchable and green of the ingest results. */
  private static void ingest(StringBuilder sb, List<Named> ingest, List<Named> all) {
    sb.append("<h2>Ingest</h2>\n");
    SvgChart chart =
        new SvgChart(
            "Ingest throughput over time",
            "seconds since the upload started",
            "vectors/s",
            SvgChart.Scale.LINEAR,
            SvgChart.Scale.LINEAR);
    for (Named n : ingest) {
      int run = all.indexOf(n);
      Map<String, Object> m = n.result.metadata();
      String color = runColor(run, all.size(), 0, 1);
      sb.append("<p>")
          .append(swatch(run, all.size()))
          .append("<b>")
          .append(escape(runName(n)))
          .append("</b>: ");
      sb.append(
          escape(
              String.format(
                  Locale.ROOT,
                  "%,d vectors uploaded in %s s (%,.0f vectors/s, batches of %s from %s clients)",
                  number(m.get("uploaded")).longValue(),
                  SvgChart.fmt(number(m.get("upload_seconds")).doubleValue()),
                  number(m.get("vectors_per_second")).doubleValue(),
                  m.get("batch"),
                  m.get("clients"))));
      double searchable = number(m.get("searchable_seconds")).doubleValue();
      double green = number(m.get("indexed_seconds")).doubleValue();
      sb.append(
          escape(
              Double.isNaN(searchable)
                  ? "; never searchable"
                  : "; searchable after " + SvgChart.fmt(searchable) + " s"));
      sb.append(
          escape(
              Double.isNaN(green)
                  ? "; not green (final status " + m.get("final_status") + ")"
                  : "; green (fully indexed) after " + SvgChart.fmt(green) + " s"));
      if (m.get("write_amplification") instanceof Number wa) {
        sb.append(escape("; write amplification " + SvgChart.fmt(wa.doubleValue())));
      }
      sb.append(".</p>\n");
      List<double[]> rate = uploadRate(m.get("timeline"));
      double peak = rate.stream().mapToDouble(p -> p[1]).max().orElse(0);
      String name = ingest.size() > 1 || all.size() > 1 ? runName(n) + " " : "";
      chart.add(new SvgChart.Series(name + "upload", color, "", rate));
      if (!rate.isEmpty()) {
        if (!Double.isNaN(searchable)) {
          chart.add(
              new SvgChart.Series(
                  name + "searchable at " + SvgChart.fmt(searchable) + " s",
                  color,
                  SvgChart.DASHES[1],
                  List.of(new double[] {searchable, 0}, new double[] {searchable, peak})));
        }
        if (!Double.isNaN(green)) {
          chart.add(
              new SvgChart.Series(
                  name + "green at " + SvgChart.fmt(green) + " s",
                  color,
                  SvgChart.DASHES[2],
                  List.of(new double[] {green, 0}, new double[] {green, peak})));
        }
      }
    }
    if (chart.isEmpty()) {
      sb.append(
          "<p class=\"omitted\">No throughput chart: these ingest results carry no timeline"
              + " (written by an older load-gen).</p>\n");
    } else {
      sb.append("<div class=\"charts\">").append(chart.render(560, 420)).append("</div>\n");
    }
  }

  /** Shortest interval a rate of the ingest chart is taken over. */
  static final double MIN_RATE_SECONDS = 0.5;

  /**
   * Vectors/s between the (seconds, vectors uploaded) samples of an ingest timeline, each rate
   * taken over at least {@link #MIN_RATE_SECONDS}: the last sample comes when the upload ends,
   * often a moment after the one before, and a few batches finishing in that moment would otherwise
   * draw a spike no client ever sustained.
   */
  static List<double[]> uploadRate(Object timeline) {
    List<double[]> samples = new ArrayList<>();
    if (timeline instanceof List<?> t) {
      for (Object o : t) {
        if (o instanceof List<?> pair
            && pair.size() == 2
            && pair.get(0) instanceof Number ts
            && pair.get(1) instanceof Number c) {
          samples.add(new double[] {ts.doubleValue(), c.doubleValue()});
        }
      }
    }
    List<double[]> anchors = new ArrayList<>();
    List<double[]> out = new ArrayList<>();
    if (samples.isEmpty()) {
      return out;
    }
    anchors.add(samples.get(0));
    for (int i = 1; i < samples.size(); i++) {
      double[] cur = samples.get(i);
      double[] from = anchors.getLast();
      boolean last = i == samples.size() - 1;
      if (cur[0] - from[0] >= MIN_RATE_SECONDS) {
        out.add(new double[] {cur[0], (cur[1] - from[1]) / (cur[0] - from[0])});
        anchors.add(cur);
      } else if (last && !out.isEmpty()) {
        // too short a tail: fold it into the interval before
        out.removeLast();
        anchors.removeLast();
        double[] start = anchors.getLast();
        out.add(new double[] {cur[0], (cur[1] - start[1]) / (cur[0] - start[0])});
      } else if (last && cur[0] > from[0]) {
        // an upload shorter than the shortest interval: its one rate
        out.add(new double[] {cur[0], (cur[1] - from[1]) / (cur[0] - from[0])});
      }
    }
    return out;
  }

  private static Number number(Object o) {
    return o instanceof Number n ? n : Double.NaN;
  }

  private static Charts charts(List<Named> results) {
    List<Candidate> out = new ArrayList<>();
    out.add(new Candidate(recallChart(results)));
    out.add(
        new Candidate(
            perConcurrency(
                results,
                "QPS vs concurrency",
                "QPS",
                List.of(new Metric("", "", SearchPoint::qps)))));
    // several runs: P99 alone, or three lines per series would bury the comparison
    out.add(
        new Candidate(
            results.size() > 1
                ? perConcurrency(
                    results,
                    "P99 latency vs concurrency",
                    "P99 latency (ms)",
                    List.of(new Metric("", "", SearchPoint::p99Ms)))
                : perConcurrency(
                    results,
                    "Latency percentiles vs concurrency",
                    "latency (ms)",
                    List.of(
                        new Metric("P50", SvgChart.DASHES[0], SearchPoint::p50Ms),
                        new Metric("P95", SvgChart.DASHES[1], SearchPoint::p95Ms),
                        new Metric("P99", SvgChart.DASHES[2], SearchPoint::p99Ms)))));
    out.add(
        new Candidate(
            ioChart(
                results,
                "Bytes read per query vs concurrency",
                "bytes/query",
                "bytes_read_per_query"),
            IO_ZERO,
            IO_EMPTY));
    out.add(
        new Candidate(
            ioChart(
                results,
                "Pages read per query vs concurrency",
                "pages/query",
                "pages_read_per_query"),
            IO_ZERO,
            IO_EMPTY));
    out.add(
        new Candidate(
            ioChart(results, "Read bandwidth vs concurrency", "MB/s", "read_mb_per_s"),
            IO_ZERO,
            IO_EMPTY));
    out.add(
        new Candidate(
            ioChart(
                results, "Server CPU per query vs concurrency", "CPU ms/query", "cpu_ms_per_query"),
            "0 at every point",
            IO_EMPTY));
    if (results.stream().anyMatch(n -> hasDevice(n.result))) {
      out.add(new Candidate(saturation(results)));
      SvgChart reads =
          perConcurrency(
              results,
              "Device reads/s vs concurrency",
              "reads/s",
              List.of(new Metric("", "", p -> device(p, "reads_per_s"))));
      addFioReference(reads, results);
      out.add(new Candidate(reads));
      out.add(
          new Candidate(
              perConcurrency(
                  results,
                  "4 KiB pages per query: device vs server",
                  "pages/query",
                  List.of(
                      new Metric("device", "", p -> device(p, "pages_per_query")),
                      new Metric(
                          "server", SvgChart.DASHES[1], p -> io(p, "pages_read_per_query"))))));
    }
    return select(out, results.stream().anyMatch(n -> !n.result.points().isEmpty()));
  }

  /**
   * Keeps the charts with something to show; the others are named, grouped by the reason. Without
   * any point at all nothing is named (there is nothing to explain).
   */
  static Charts select(List<Candidate> candidates, boolean anyPoints) {
    List<SvgChart> drawn = new ArrayList<>();
    Map<String, List<String>> byReason = new LinkedHashMap<>();
    for (Candidate c : candidates) {
      if (c.chart.isEmpty()) {
        if (anyPoints) {
          byReason.computeIfAbsent(c.whenEmpty, r -> new ArrayList<>()).add(c.chart.title());
        }
      } else if (c.chart.allZero()) {
        byReason.computeIfAbsent(c.whenAllZero, r -> new ArrayList<>()).add(c.chart.title());
      } else {
        drawn.add(c.chart);
      }
    }
    List<String> leftOut = new ArrayList<>();
    for (var e : byReason.entrySet()) {
      leftOut.add(String.join(", ", e.getValue()) + " (" + e.getKey() + ")");
    }
    return new Charts(drawn, leftOut);
  }

  /**
   * Recall vs QPS as ann-benchmarks draws it: per (run, concurrency) the Pareto frontier joined on
   * a log QPS axis, the dominated points as faint markers.
   */
  private static SvgChart recallChart(List<Named> results) {
    SvgChart recall =
        new SvgChart(
                "Recall vs QPS (Pareto frontier)",
                "recall@k",
                "QPS",
                SvgChart.Scale.LINEAR,
                SvgChart.Scale.LOG10)
            .xMax(1.0);
    boolean multi = results.size() > 1;
    for (int run = 0; run < results.size(); run++) {
      Named n = results.get(run);
      Map<String, List<SearchPoint>> byC = new LinkedHashMap<>();
      for (SearchPoint p : n.result.points()) {
        if (p.hasRecall()) {
          byC.computeIfAbsent(
                  (p.label() == null ? "" : p.label() + " ") + "c=" + p.concurrency(),
                  c -> new ArrayList<>())
              .add(p);
        }
      }
      int j = 0;
      for (var e : byC.entrySet()) {
        String color = runColor(run, results.size(), j++, byC.size());
        String name = (multi ? runName(n) + " " : "") + e.getKey();
        List<double[]> front = new ArrayList<>();
        for (SearchPoint p : Pareto.frontier(e.getValue())) {
          front.add(new double[] {p.recallAtK(), p.qps()});
        }
        recall.add(new SvgChart.Series(name, color, "", front));
        List<double[]> rest = new ArrayList<>();
        for (SearchPoint p : Pareto.dominated(e.getValue())) {
          rest.add(new double[] {p.recallAtK(), p.qps()});
        }
        recall.add(new SvgChart.Series(name + " (dominated)", color, "", rest, false, true));
      }
    }
    return recall;
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
    for (int run = 0; run < results.size(); run++) {
      Named n = results.get(run);
      Map<String, List<SearchPoint>> groups = byParams(n.result);
      int j = 0;
      for (var e : groups.entrySet()) {
        String c = runColor(run, results.size(), j++, groups.size());
        String name = (multi ? runName(n) + " " : "") + e.getKey();
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
              (multi ? runName(n) + " " : "") + "fio 4 KiB random reads, QD32",
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
    for (int run = 0; run < results.size(); run++) {
      Named n = results.get(run);
      Map<String, List<SearchPoint>> groups = byParams(n.result);
      int j = 0;
      for (var e : groups.entrySet()) {
        String c = runColor(run, results.size(), j++, groups.size());
        for (Metric m : metrics) {
          List<double[]> pts = new ArrayList<>();
          e.getValue().stream()
              .sorted(Comparator.comparingInt(SearchPoint::concurrency))
              .forEach(p -> pts.add(new double[] {p.concurrency(), m.value.applyAsDouble(p)}));
          String name =
              (multi ? runName(n) + " " : "") + e.getKey() + (m.name.isEmpty() ? "" : " " + m.name);
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

  /**
   * The colour of series {@code j} of {@code m} of run {@code run} of {@code runs}: with one run, a
   * palette colour per series; with several, one palette colour per run and its series in lighter
   * shades of it, so that a run reads as one colour across every chart.
   */
  static String runColor(int run, int runs, int j, int m) {
    if (runs == 1) {
      return SvgChart.PALETTE[j % SvgChart.PALETTE.length];
    }
    String base = SvgChart.PALETTE[run % SvgChart.PALETTE.length];
    if (m <= 1) {
      return base;
    }
    double white = 0.6 * j / (m - 1);
    StringBuilder sb = new StringBuilder("#");
    for (int i = 1; i < 7; i += 2) {
      int c = Integer.parseInt(base.substring(i, i + 2), 16);
      sb.append(String.format(Locale.ROOT, "%02x", (int) Math.round(c + (255 - c) * white)));
    }
    return sb.toString();
  }

  /** A small square in the run's colour, as in the charts' legends. */
  private static String swatch(int run, int runs) {
    return "<span class=\"swatch\" style=\"background:" + runColor(run, runs, 0, 1) + "\"></span>";
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
