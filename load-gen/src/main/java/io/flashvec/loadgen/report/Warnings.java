package io.flashvec.loadgen.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Checks a result's points for figures that should not be taken at face value, each check giving
 * one sentence naming the points concerned: QPS that rises with {@code search_list} (a larger list
 * does more work per query, so an earlier, cheaper point that ran slower was most likely measured
 * before the server was warm), recall measured on a subset of the queries, points with too few
 * queries for a P99, a throughput that did not hold steady during the point or its warm-up, a P99
 * more than {@value #TAIL_RATIO} times the median, and failed queries. Stateless.
 */
public final class Warnings {
  private Warnings() {}

  /** Below this many queries a P99 rests on fewer than ten samples. */
  static final long FEW_QUERIES = 1000;

  /** A QPS this much below the next larger search_list's counts as a break of monotonicity. */
  static final double QPS_SLACK = 0.05;

  /** A coefficient of variation of one-second QPS windows above this counts as unsteady. */
  static final double UNSTEADY = 0.10;

  static final double TAIL_RATIO = 10;

  /** At most this many points are named per warning. */
  private static final int NAMED = 4;

  /**
   * The warnings of one result.
   *
   * @param querySetSize the number of queries in the set (metadata {@code queries}), 0 if unknown
   */
  public static List<String> of(List<SearchPoint> points, long querySetSize) {
    List<String> out = new ArrayList<>();
    monotonicity(points, out);

    List<String> subset = new ArrayList<>();
    for (SearchPoint p : points) {
      if (!p.hasRecall()) {
        continue;
      }
      long over = p.quality().recallQueries();
      if (over == 0 && querySetSize > 0 && p.queries() < querySetSize) {
        subset.add(name(p) + " (at most " + p.queries() + ")");
      } else if (over > 0 && querySetSize > 0 && over < querySetSize) {
        subset.add(name(p) + " (" + over + ")");
      }
    }
    add(
        out,
        subset,
        "Recall measured on a subset of the "
            + querySetSize
            + " queries, so points are not compared on the same queries: ");

    List<String> few = new ArrayList<>();
    for (SearchPoint p : points) {
      if (p.queries() > 0 && p.queries() < FEW_QUERIES) {
        few.add(name(p) + " (" + p.queries() + ")");
      }
    }
    add(
        out,
        few,
        "Fewer than " + FEW_QUERIES + " queries, so the P99 rests on fewer than 10 samples: ");

    List<String> unsteady = new ArrayList<>();
    for (SearchPoint p : points) {
      double v = p.quality().qpsVariation();
      if (v > UNSTEADY) {
        unsteady.add(name(p) + String.format(Locale.ROOT, " (±%.0f%%)", v * 100));
      }
    }
    add(
        out,
        unsteady,
        "Throughput not steady during the point (QPS of its one-second windows varies by more than"
            + " "
            + Math.round(UNSTEADY * 100)
            + "%): ");

    List<String> cold = new ArrayList<>();
    for (SearchPoint p : points) {
      if (Boolean.FALSE.equals(p.quality().warmupStable())) {
        cold.add(
            name(p) + String.format(Locale.ROOT, " (after %.0f s)", p.quality().warmupSeconds()));
      }
    }
    add(out, cold, "Warm-up stopped at its cap before QPS settled: ");

    List<String> tail = new ArrayList<>();
    for (SearchPoint p : points) {
      if (p.p50Ms() > 0 && p.p99Ms() > TAIL_RATIO * p.p50Ms()) {
        tail.add(
            name(p)
                + String.format(
                    Locale.ROOT,
                    " (P99 %s ms, P50 %s ms)",
                    SvgChart.fmt(p.p99Ms()),
                    SvgChart.fmt(p.p50Ms())));
      }
    }
    add(
        out,
        tail,
        "P99 more than "
            + (int) TAIL_RATIO
            + "× the median (stalls: GC, I/O or a saturated CPU?): ");

    List<String> failed = new ArrayList<>();
    for (SearchPoint p : points) {
      if (p.errors() > 0) {
        failed.add(name(p) + " (" + p.errors() + " of " + (p.errors() + p.queries()) + ")");
      }
    }
    add(out, failed, "Failed queries (not counted in QPS or latency): ");
    return out;
  }

  /**
   * Within each (label, concurrency, other parameters), QPS should not rise as {@code search_list}
   * grows; each pair of neighbours where it rises by more than {@link #QPS_SLACK} is named.
   */
  private static void monotonicity(List<SearchPoint> points, List<String> out) {
    Map<String, List<SearchPoint>> groups = new LinkedHashMap<>();
    for (SearchPoint p : points) {
      if (p.params() == null || !p.params().containsKey("search_list") || p.queries() == 0) {
        continue;
      }
      Map<String, Integer> rest = new TreeMap<>(p.params());
      rest.remove("search_list");
      groups
          .computeIfAbsent(p.label() + "|" + p.concurrency() + "|" + rest, k -> new ArrayList<>())
          .add(p);
    }
    List<String> broken = new ArrayList<>();
    for (List<SearchPoint> g : groups.values()) {
      g.sort(Comparator.comparingInt(p -> p.params().get("search_list")));
      for (int i = 1; i < g.size(); i++) {
        SearchPoint smaller = g.get(i - 1);
        SearchPoint larger = g.get(i);
        if (smaller.qps() < larger.qps() * (1 - QPS_SLACK)) {
          broken.add(
              String.format(
                  Locale.ROOT,
                  "c=%d: search_list=%d %s QPS < search_list=%d %s QPS",
                  larger.concurrency(),
                  smaller.params().get("search_list"),
                  SvgChart.fmt(Math.round(smaller.qps())),
                  larger.params().get("search_list"),
                  SvgChart.fmt(Math.round(larger.qps()))));
        }
      }
    }
    add(
        out,
        broken,
        "QPS rises with search_list, which does more work per query; the slower, cheaper point"
            + " probably ran before the server was warm (warm-up too short?): ");
  }

  private static void add(List<String> out, List<String> items, String what) {
    if (items.isEmpty()) {
      return;
    }
    StringBuilder sb = new StringBuilder(what);
    for (int i = 0; i < Math.min(NAMED, items.size()); i++) {
      sb.append(i == 0 ? "" : "; ").append(items.get(i));
    }
    if (items.size() > NAMED) {
      sb.append("; and ").append(items.size() - NAMED).append(" more");
    }
    out.add(sb.append('.').toString());
  }

  private static String name(SearchPoint p) {
    return (p.label() == null ? "" : p.label() + " ")
        + "c="
        + p.concurrency()
        + " "
        + p.paramsLabel();
  }
}
