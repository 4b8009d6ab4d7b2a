package io.flashvec.loadgen.metrics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses the Prometheus text exposition format (0.0.4, and the OpenMetrics subset servers print for
 * it) into a {@link MetricSnapshot}. Generic: every sample line becomes one series, keyed by name
 * and sorted labels; {@code # TYPE} lines give the family types. Unparseable lines are skipped
 * rather than failing the benchmark. Stateless; thread-safe.
 */
public final class PrometheusText {
  private PrometheusText() {}

  /** Parses a whole scrape. */
  public static MetricSnapshot parse(String text) {
    Map<String, Double> values = new HashMap<>();
    Map<String, String> types = new HashMap<>();
    for (String raw : text.split("\n")) {
      String line = raw.strip();
      if (line.isEmpty()) {
        continue;
      }
      if (line.startsWith("#")) {
        String[] p = line.split("\\s+");
        if (p.length >= 4 && p[1].equals("TYPE")) {
          types.put(p[2], p[3]);
        }
        continue;
      }
      try {
        parseSample(line, values);
      } catch (RuntimeException e) {
        // one odd line (a new exposition feature) must not lose the whole scrape
      }
    }
    return new MetricSnapshot(values, types);
  }

  private static void parseSample(String line, Map<String, Double> values) {
    int i = 0;
    int n = line.length();
    while (i < n && line.charAt(i) != '{' && !Character.isWhitespace(line.charAt(i))) {
      i++;
    }
    String name = line.substring(0, i);
    List<String[]> labels = new ArrayList<>();
    if (i < n && line.charAt(i) == '{') {
      i++;
      while (true) {
        while (i < n && (line.charAt(i) == ',' || line.charAt(i) == ' ')) {
          i++;
        }
        if (line.charAt(i) == '}') {
          i++;
          break;
        }
        int eq = line.indexOf('=', i);
        String label = line.substring(i, eq).strip();
        i = eq + 1;
        if (line.charAt(i) != '"') {
          throw new IllegalArgumentException("label value not quoted");
        }
        i++;
        StringBuilder v = new StringBuilder();
        while (line.charAt(i) != '"') {
          char c = line.charAt(i);
          if (c == '\\') {
            char next = line.charAt(i + 1);
            v.append(next == 'n' ? '\n' : next);
            i += 2;
          } else {
            v.append(c);
            i++;
          }
        }
        i++;
        labels.add(new String[] {label, v.toString()});
      }
    }
    String rest = line.substring(i).strip();
    String valueText = rest.split("\\s+")[0];
    double value =
        switch (valueText) {
          case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
          case "-Inf" -> Double.NEGATIVE_INFINITY;
          case "NaN" -> Double.NaN;
          default -> Double.parseDouble(valueText);
        };
    values.put(key(name, labels), value);
  }

  /** The canonical series key: name, then labels sorted by name, values escaped. */
  static String key(String name, List<String[]> labels) {
    if (labels.isEmpty()) {
      return name;
    }
    labels.sort((a, b) -> a[0].compareTo(b[0]));
    StringBuilder sb = new StringBuilder(name).append('{');
    for (int j = 0; j < labels.size(); j++) {
      if (j > 0) {
        sb.append(',');
      }
      String v = labels.get(j)[1].replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
      sb.append(labels.get(j)[0]).append("=\"").append(v).append('"');
    }
    return sb.append('}').toString();
  }
}
