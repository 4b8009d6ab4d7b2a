package io.flashvec.loadgen.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A small line chart rendered as inline SVG: axes with "nice" ticks (linear, log2 for concurrency
 * or log10), grid lines, one polyline with markers per series, a tooltip ({@code <title>}) per
 * point and a legend. With {@link #y2} a second, linear y axis on the right carries the series
 * marked {@code right} (e.g. read bandwidth beside QPS). No scripts, no external resources. Not
 * thread-safe; build, render, drop.
 */
final class SvgChart {
  /** Line styles for up to three overlaid families (e.g. P50/P95/P99). */
  static final String[] DASHES = {"", "6 3", "2 3"};

  static final String[] PALETTE = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"
  };

  /**
   * A named series of (x, y) points drawn in {@code color} with a dash pattern, against the left y
   * axis or (with {@code right}) the second one; a {@code faint} series is drawn as pale markers
   * without a line and without a legend entry (e.g. the dominated points beside a Pareto frontier).
   */
  record Series(
      String name, String color, String dash, List<double[]> points, boolean right, boolean faint) {
    Series(String name, String color, String dash, List<double[]> points) {
      this(name, color, dash, points, false, false);
    }

    Series(String name, String color, String dash, List<double[]> points, boolean right) {
      this(name, color, dash, points, right, false);
    }
  }

  enum Scale {
    LINEAR,
    LOG2,
    LOG10
  }

  private final String title;
  private final String xLabel;
  private final String yLabel;
  private final Scale xScale;
  private Scale yScale;
  private final List<Series> series = new ArrayList<>();
  private double xMax = Double.NaN;
  private String y2Label;

  SvgChart(String title, String xLabel, String yLabel, Scale xScale, Scale yScale) {
    this.title = title;
    this.xLabel = xLabel;
    this.yLabel = yLabel;
    this.xScale = xScale;
    this.yScale = yScale;
  }

  /** Caps the x axis (recall never exceeds 1). */
  SvgChart xMax(double max) {
    this.xMax = max;
    return this;
  }

  /** Adds a second, linear y axis on the right for the series marked {@code right}. */
  SvgChart y2(String label) {
    this.y2Label = label;
    return this;
  }

  void add(Series s) {
    List<double[]> finite = new ArrayList<>();
    for (double[] p : s.points) {
      if (Double.isFinite(p[0]) && Double.isFinite(p[1])) {
        finite.add(p);
      }
    }
    if (!finite.isEmpty()) {
      series.add(new Series(s.name, s.color, s.dash, finite, s.right && y2Label != null, s.faint));
    }
  }

  boolean isEmpty() {
    return series.isEmpty();
  }

  /** Whether every y value of every series is zero: a flat line with nothing to show. */
  boolean allZero() {
    for (Series s : series) {
      for (double[] p : s.points) {
        if (p[1] != 0) {
          return false;
        }
      }
    }
    return true;
  }

  String title() {
    return title;
  }

  /** Series drawn with a legend entry. */
  private List<Series> legend() {
    List<Series> out = new ArrayList<>();
    for (Series s : series) {
      if (!s.faint) {
        out.add(s);
      }
    }
    return out;
  }

  /**
   * The chart as an SVG element {@code width} wide and {@code height} high with up to two legend
   * rows, taller with more.
   */
  String render(int width, int height) {
    List<Series> legend = legend();
    int columns = legend.stream().anyMatch(s -> s.name.length() > 34) ? 1 : 2;
    int legendRows = (legend.size() + columns - 1) / columns;
    int left = 70;
    int right = y2Label == null ? 20 : 70;
    int top = 30;
    // the plot keeps the height it has with two legend rows; a longer legend makes the chart taller
    int ph = height - top - 50 - 2 * 16;
    height = top + ph + 50 + Math.max(2, legendRows) * 16;
    int pw = width - left - right;
    double[] xr = range(0, xScale, Side.ANY);
    if (!Double.isNaN(xMax) && xScale == Scale.LINEAR) {
      xr[1] = Math.min(xr[1], xMax);
      if (xr[1] - xr[0] < 0.05) {
        xr[0] = xr[1] - 0.05;
      }
    }
    if (yScale == Scale.LINEAR) {
      double[] raw = range(1, Scale.LINEAR, Side.LEFT);
      if (raw[0] > 0 && raw[1] / raw[0] > 50) {
        yScale = Scale.LOG10;
      }
    }
    double[] yr = range(1, yScale, Side.LEFT);
    double[] yr2 = range(1, Scale.LINEAR, Side.RIGHT);
    StringBuilder sb = new StringBuilder();
    sb.append(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                + " font-family=\"sans-serif\" font-size=\"11\">%n",
            width,
            height,
            width,
            height));
    sb.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"18\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">%s</text>%n",
            width / 2,
            HtmlReport.escape(title)));
    sb.append(
        String.format(
            Locale.ROOT,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" stroke=\"#999\"/>%n",
            left,
            top,
            pw,
            ph));
    List<Double> xt = ticks(xr, xScale);
    for (double t : xt) {
      double x = left + pos(t, xr, xScale) * pw;
      sb.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                  + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
              x,
              top,
              x,
              top + ph,
              x,
              top + ph + 14,
              tickLabel(t, xt, xScale)));
    }
    List<Double> yt = ticks(yr, yScale);
    for (double t : yt) {
      double y = top + ph - pos(t, yr, yScale) * ph;
      sb.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                  + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
              left,
              y,
              left + pw,
              y,
              left - 4,
              y + 4,
              tickLabel(t, yt, yScale)));
    }
    if (y2Label != null) {
      List<Double> yt2 = ticks(yr2, Scale.LINEAR);
      for (double t : yt2) {
        double y = top + ph - pos(t, yr2, Scale.LINEAR) * ph;
        sb.append(
            String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"start\">%s</text>%n",
                left + pw + 4,
                y + 4,
                tickLabel(t, yt2, Scale.LINEAR)));
      }
      sb.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(90 %d %d)\">%s</text>%n",
              width - 12,
              top + ph / 2,
              width - 12,
              top + ph / 2,
              HtmlReport.escape(y2Label)));
    }
    sb.append(
        String.format(
            Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
            left + pw / 2,
            top + ph + 30,
            HtmlReport.escape(xLabel + (xScale == Scale.LINEAR ? "" : " (log)"))));
    sb.append(
        String.format(
            Locale.ROOT,
            "<text x=\"14\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">%s</text>%n",
            top + ph / 2,
            top + ph / 2,
            HtmlReport.escape(yLabel + (yScale == Scale.LINEAR ? "" : " (log)"))));
    for (Series s : series) {
      List<double[]> pts = new ArrayList<>(s.points);
      if (s.faint) {
        StringBuilder marks = new StringBuilder();
        for (double[] p : pts) {
          double x = left + pos(p[0], xr, xScale) * pw;
          double y =
              top + ph - (s.right ? pos(p[1], yr2, Scale.LINEAR) : pos(p[1], yr, yScale)) * ph;
          marks.append(
              String.format(
                  Locale.ROOT,
                  "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"none\" stroke=\"%s\""
                      + " stroke-opacity=\"0.45\"><title>%s: x=%s, y=%s</title></circle>",
                  x,
                  y,
                  s.color,
                  HtmlReport.escape(s.name),
                  fmt(p[0]),
                  fmt(p[1])));
        }
        sb.append(marks).append('\n');
        continue;
      }
      StringBuilder poly = new StringBuilder();
      StringBuilder marks = new StringBuilder();
      for (double[] p : pts) {
        double x = left + pos(p[0], xr, xScale) * pw;
        double y = top + ph - (s.right ? pos(p[1], yr2, Scale.LINEAR) : pos(p[1], yr, yScale)) * ph;
        poly.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        marks.append(
            String.format(
                Locale.ROOT,
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s: x=%s, y=%s</title></circle>",
                x,
                y,
                s.color,
                HtmlReport.escape(s.name),
                fmt(p[0]),
                fmt(p[1])));
      }
      sb.append(
          String.format(
              Locale.ROOT,
              "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"%s\"/>%s%n",
              s.color,
              s.dash.isEmpty() ? "" : " stroke-dasharray=\"" + s.dash + "\"",
              poly.toString().trim(),
              marks));
    }
    int ly = top + ph + 46;
    for (int i = 0; i < legend.size(); i++) {
      Series s = legend.get(i);
      int lx = left + (i % columns) * (pw / columns);
      int y = ly + (i / columns) * 16;
      sb.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                  + "<text x=\"%d\" y=\"%d\">%s</text>%n",
              lx,
              y - 4,
              lx + 24,
              y - 4,
              s.color,
              s.dash.isEmpty() ? "" : " stroke-dasharray=\"" + s.dash + "\"",
              lx + 30,
              y,
              HtmlReport.escape(s.name)));
    }
    sb.append("</svg>\n");
    return sb.toString();
  }

  /** Which series an axis range is computed over. */
  private enum Side {
    ANY,
    LEFT,
    RIGHT
  }

  private double[] range(int axis, Scale scale, Side side) {
    double lo = Double.POSITIVE_INFINITY;
    double hi = Double.NEGATIVE_INFINITY;
    for (Series s : series) {
      if (side == Side.LEFT && s.right || side == Side.RIGHT && !s.right) {
        continue;
      }
      for (double[] p : s.points) {
        double v = p[axis];
        if (scale != Scale.LINEAR && v <= 0) {
          continue;
        }
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
    if (lo > hi) {
      return scale == Scale.LINEAR ? new double[] {0, 1} : new double[] {1, 10};
    }
    if (scale == Scale.LINEAR) {
      if (lo >= 0 && axis == 1) {
        lo = 0;
      }
      if (hi == lo) {
        hi = lo + (lo == 0 ? 1 : Math.abs(lo) * 0.1);
      }
      double pad = (hi - lo) * 0.05;
      return new double[] {axis == 1 && lo == 0 ? 0 : lo - pad, hi + pad};
    }
    if (scale == Scale.LOG10) {
      // a margin around the data rather than whole decades, so that a sweep from 800 to 1400 QPS
      // is not squeezed into a tenth of the height
      double l = lo / 1.15;
      double h = hi * 1.15;
      if (h / l < 3) {
        double mid = Math.sqrt(l * h);
        l = mid / Math.sqrt(3);
        h = mid * Math.sqrt(3);
      }
      return new double[] {l, h};
    }
    double base = 2;
    double l = Math.pow(base, Math.floor(Math.log(lo) / Math.log(base)));
    double h = Math.pow(base, Math.ceil(Math.log(hi) / Math.log(base)));
    if (h <= l) {
      h = l * base;
    }
    return new double[] {l, h};
  }

  private static double pos(double v, double[] r, Scale scale) {
    if (scale == Scale.LINEAR) {
      return (v - r[0]) / (r[1] - r[0]);
    }
    if (v <= 0) {
      return 0;
    }
    return (Math.log(v) - Math.log(r[0])) / (Math.log(r[1]) - Math.log(r[0]));
  }

  private static List<Double> ticks(double[] r, Scale scale) {
    List<Double> out = new ArrayList<>();
    if (scale == Scale.LOG2) {
      for (double v = r[0]; v <= r[1] * 1.0001; v *= 2) {
        out.add(v);
      }
      return out;
    }
    if (scale == Scale.LOG10) {
      out = logTicks(r, new double[] {1, 2, 5});
      if (out.size() < 4) {
        out = logTicks(r, new double[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
      }
      return out;
    }
    double span = r[1] - r[0];
    double raw = span / 6;
    double mag = Math.pow(10, Math.floor(Math.log10(raw)));
    double step =
        raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    for (double v = Math.ceil(r[0] / step) * step; v <= r[1] + step * 1e-9; v += step) {
      out.add(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return out;
  }

  /** The multiples {@code m} of each power of ten that lie within {@code r}. */
  private static List<Double> logTicks(double[] r, double[] multiples) {
    List<Double> out = new ArrayList<>();
    for (double d = Math.pow(10, Math.floor(Math.log10(r[0]))); d <= r[1]; d *= 10) {
      for (double m : multiples) {
        double v = d * m;
        if (v >= r[0] * 0.9999 && v <= r[1] * 1.0001) {
          out.add(v);
        }
      }
    }
    return out;
  }

  /**
   * Linear ticks share the decimals their step needs; log10 ticks are short ({@code 2k}, {@code
   * 50k}, {@code 1M}); log2 ticks use {@link #fmt}.
   */
  private static String tickLabel(double v, List<Double> ticks, Scale scale) {
    if (scale == Scale.LOG10) {
      return shortNumber(v);
    }
    if (scale != Scale.LINEAR || ticks.size() < 2) {
      return fmt(v);
    }
    double step = ticks.get(1) - ticks.get(0);
    int decimals = (int) Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
    return String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  /** {@code 1500} as {@code 1.5k}, {@code 2000000} as {@code 2M}; below 1000 as {@link #fmt}. */
  static String shortNumber(double v) {
    double a = Math.abs(v);
    if (a >= 1e6) {
      return trim(v / 1e6) + "M";
    }
    if (a >= 1e3) {
      return trim(v / 1e3) + "k";
    }
    return fmt(v);
  }

  private static String trim(double v) {
    String s = String.format(Locale.ROOT, "%.1f", v);
    return s.endsWith(".0") ? s.substring(0, s.length() - 2) : s;
  }

  static String fmt(double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e7) {
      return String.format(Locale.ROOT, "%d", (long) v);
    }
    double a = Math.abs(v);
    if (a >= 1000) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    if (a >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    if (a >= 0.01) {
      return String.format(Locale.ROOT, "%.3f", v);
    }
    return String.format(Locale.ROOT, "%.2g", v);
  }
}
