package io.flashvec.loadgen.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The recall/QPS Pareto frontier of a set of points, as ann-benchmarks draws it: the points no
 * other point beats on both recall and QPS. Walking from the highest recall down, a point is kept
 * when its QPS is above every QPS seen so far; the others are dominated (some point has at least
 * their recall and at least their QPS). Points without recall are ignored. Stateless.
 */
public final class Pareto {
  private Pareto() {}

  /** The non-dominated points, by recall ascending (so also by QPS descending). */
  public static List<SearchPoint> frontier(List<SearchPoint> points) {
    List<SearchPoint> sorted = new ArrayList<>();
    for (SearchPoint p : points) {
      if (p.hasRecall() && Double.isFinite(p.qps())) {
        sorted.add(p);
      }
    }
    sorted.sort(
        Comparator.comparingDouble(SearchPoint::recallAtK)
            .reversed()
            .thenComparing(Comparator.comparingDouble(SearchPoint::qps).reversed()));
    List<SearchPoint> out = new ArrayList<>();
    double best = Double.NEGATIVE_INFINITY;
    for (SearchPoint p : sorted) {
      if (p.qps() > best) {
        out.add(p);
        best = p.qps();
      }
    }
    return out.reversed();
  }

  /** The points with recall that are not on the {@link #frontier}. */
  public static List<SearchPoint> dominated(List<SearchPoint> points) {
    List<SearchPoint> front = frontier(points);
    List<SearchPoint> out = new ArrayList<>();
    for (SearchPoint p : points) {
      if (p.hasRecall() && Double.isFinite(p.qps()) && !containsSame(front, p)) {
        out.add(p);
      }
    }
    return out;
  }

  private static boolean containsSame(List<SearchPoint> list, SearchPoint p) {
    for (SearchPoint q : list) {
      if (q == p) {
        return true;
      }
    }
    return false;
  }
}
