package io.flashvec.loadgen.metrics;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One scrape of a Prometheus endpoint: series key → value, plus the declared family types.
 *
 * <p>A series key is the metric name followed by its labels sorted by name, as Prometheus prints
 * them: {@code flashvec_io_bytes_read_total{segment="3",shard="0"}}; a series without labels is
 * just its name. Immutable.
 */
public record MetricSnapshot(Map<String, Double> values, Map<String, String> types) {

  /** An empty snapshot (the server had no metrics endpoint). */
  public static final MetricSnapshot EMPTY = new MetricSnapshot(Map.of(), Map.of());

  /** Makes an unmodifiable copy. */
  public MetricSnapshot {
    values = Collections.unmodifiableMap(new TreeMap<>(values));
    types = Collections.unmodifiableMap(new TreeMap<>(types));
  }

  /** The metric name of a series key (the part before '{'). */
  public static String nameOf(String seriesKey) {
    int b = seriesKey.indexOf('{');
    return b < 0 ? seriesKey : seriesKey.substring(0, b);
  }

  /**
   * True if the series only grows (counters and the {@code _count}/{@code _sum}/{@code _bucket}
   * series of histograms and summaries), so a delta between scrapes is meaningful.
   */
  public boolean isMonotonic(String seriesKey) {
    String name = nameOf(seriesKey);
    String type = types.get(name);
    if (type == null && name.endsWith("_total")) {
      type = types.get(name.substring(0, name.length() - "_total".length()));
    }
    if ("counter".equals(type)) {
      return true;
    }
    for (String suffix : List.of("_count", "_sum", "_bucket")) {
      if (name.endsWith(suffix)) {
        String family = types.get(name.substring(0, name.length() - suffix.length()));
        if ("histogram".equals(family) || "summary".equals(family)) {
          return true;
        }
      }
    }
    return type == null && name.endsWith("_total");
  }

  /**
   * Deltas {@code after − before} of the monotonic series whose name starts with one of {@code
   * prefixes} and that appear in {@code after} ({@code _bucket} series are left out: too many and
   * rarely useful here). A series missing from {@code before} counts from 0 (it was created during
   * the point).
   */
  public static Map<String, Double> deltas(
      MetricSnapshot before, MetricSnapshot after, List<String> prefixes) {
    Map<String, Double> out = new TreeMap<>();
    for (var e : after.values.entrySet()) {
      String key = e.getKey();
      String name = nameOf(key);
      if (!matches(name, prefixes) || name.endsWith("_bucket") || !after.isMonotonic(key)) {
        continue;
      }
      double b = before.values.getOrDefault(key, 0.0);
      double d = e.getValue() - b;
      if (Double.isFinite(d) && (d != 0 || name.startsWith("flashvec_"))) {
        out.put(key, d);
      }
    }
    return out;
  }

  /** The values in {@code after} of the non-monotonic series (gauges) matching {@code prefixes}. */
  public static Map<String, Double> gauges(MetricSnapshot after, List<String> prefixes) {
    Map<String, Double> out = new TreeMap<>();
    for (var e : after.values.entrySet()) {
      String name = nameOf(e.getKey());
      if (matches(name, prefixes)
          && !after.isMonotonic(e.getKey())
          && Double.isFinite(e.getValue())) {
        out.put(e.getKey(), e.getValue());
      }
    }
    return out;
  }

  /** Sums the series of {@code map} whose metric name is {@code name} (over all label sets). */
  public static double sumByName(Map<String, Double> map, String name) {
    double sum = 0;
    boolean any = false;
    for (var e : map.entrySet()) {
      if (nameOf(e.getKey()).equals(name)) {
        sum += e.getValue();
        any = true;
      }
    }
    return any ? sum : Double.NaN;
  }

  /** Sums by metric name, dropping labels: handy for printing. */
  public static Map<String, Double> sumAllByName(Map<String, Double> map) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (var e : map.entrySet()) {
      out.merge(nameOf(e.getKey()), e.getValue(), Double::sum);
    }
    return out;
  }

  private static boolean matches(String name, List<String> prefixes) {
    if (prefixes.isEmpty()) {
      return true;
    }
    for (String p : prefixes) {
      if (name.startsWith(p)) {
        return true;
      }
    }
    return false;
  }
}
