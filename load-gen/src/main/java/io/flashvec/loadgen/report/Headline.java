package io.flashvec.loadgen.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The figures a report leads with: for each run and concurrency, the highest QPS among the points
 * whose recall@k reaches a target ({@link #TARGETS}), with that point's P99 latency, or, when none
 * reaches it, the best recall seen. Stateless.
 */
public final class Headline {
  private Headline() {}

  /** The recall targets of the headline. */
  public static final double[] TARGETS = {0.95, 0.99};

  /**
   * The best point for one target.
   *
   * @param target the recall the point had to reach
   * @param best the fastest point reaching it, null when none did
   * @param bestRecall the highest recall among the points (NaN without recall)
   */
  public record Pick(double target, SearchPoint best, double bestRecall) {
    public boolean reached() {
      return best != null;
    }
  }

  /**
   * One row: a run's points at one concurrency (and label, when the points carry one).
   *
   * @param picks one per target of {@link #TARGETS}
   */
  public record Row(String label, int concurrency, List<Pick> picks) {}

  /** The fastest point among {@code points} with recall at least {@code target}. */
  public static Pick pick(List<SearchPoint> points, double target) {
    SearchPoint best = null;
    double bestRecall = Double.NaN;
    for (SearchPoint p : points) {
      if (!p.hasRecall() || p.queries() == 0) {
        continue;
      }
      if (Double.isNaN(bestRecall) || p.recallAtK() > bestRecall) {
        bestRecall = p.recallAtK();
      }
      if (p.recallAtK() >= target && (best == null || p.qps() > best.qps())) {
        best = p;
      }
    }
    return new Pick(target, best, bestRecall);
  }

  /** One row per (label, concurrency) of the points, by concurrency. */
  public static List<Row> rows(List<SearchPoint> points) {
    Map<String, Map<Integer, List<SearchPoint>>> groups = new TreeMap<>();
    for (SearchPoint p : points) {
      groups
          .computeIfAbsent(p.label() == null ? "" : p.label(), l -> new TreeMap<>())
          .computeIfAbsent(p.concurrency(), c -> new ArrayList<>())
          .add(p);
    }
    List<Row> out = new ArrayList<>();
    for (var byLabel : groups.entrySet()) {
      for (var byC : byLabel.getValue().entrySet()) {
        List<Pick> picks = new ArrayList<>();
        for (double t : TARGETS) {
          picks.add(pick(byC.getValue(), t));
        }
        out.add(new Row(byLabel.getKey(), byC.getKey(), picks));
      }
    }
    return out;
  }
}
