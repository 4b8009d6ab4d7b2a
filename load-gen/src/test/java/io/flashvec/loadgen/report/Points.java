package io.flashvec.loadgen.report;

import java.util.Map;

/** Search points for the report tests. */
final class Points {
  private Points() {}

  static SearchPoint point(int c, int searchList, double qps, double recall) {
    return point(c, searchList, qps, recall, 2.0, 4.0, 5000, SearchPoint.Quality.UNKNOWN, Map.of());
  }

  static SearchPoint point(
      int c,
      int searchList,
      double qps,
      double recall,
      double p50,
      double p99,
      long queries,
      SearchPoint.Quality quality,
      Map<String, Double> io) {
    return new SearchPoint(
        null,
        c,
        10,
        Map.of("search_list", searchList),
        queries,
        0,
        queries / qps,
        qps,
        p50,
        p50 * 1.5,
        p99,
        p99 * 1.2,
        p99 * 2,
        p50 * 1.1,
        recall,
        Map.of(),
        Map.of(),
        io,
        Map.of(),
        Map.of(),
        quality);
  }
}
