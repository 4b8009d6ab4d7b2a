package io.flashvec.loadgen.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A result's metadata as a few lines of text a reader can take in at a glance (system, dataset,
 * machine, JVM, disk, run settings), instead of the raw key/value map: absent and null values are
 * left out, sizes are given in their units, and whatever key is not known is still shown,
 * flattened, under "other". Stateless.
 */
public final class Settings {
  private Settings() {}

  /** A labelled line. */
  public record Line(String label, String text) {}

  /** Keys shown in one of the named lines (or deliberately not at all). */
  private static final Set<String> KNOWN =
      Set.of(
          "kind",
          "dataset",
          "dataset_name",
          "n",
          "dim",
          "queries",
          "distance",
          "target",
          "url",
          "collection",
          "date",
          "machine",
          "k",
          "device",
          "fio",
          "filter",
          "duration_s",
          "queries_per_point",
          "warmup_s",
          "warmup",
          "recall",
          "page_cache",
          "metrics_nodes",
          "system",
          "index",
          "points");

  /**
   * The system a result measured: its {@code system} metadata if set, else pgvector, FlashVec (a
   * REST target whose points carry {@code flashvec_} metrics) or a Qdrant-compatible REST server.
   */
  public static String system(BenchmarkResult r) {
    Map<String, Object> m = r.metadata();
    if (m.get("system") instanceof String s && !s.isBlank()) {
      return s;
    }
    if ("pgvector".equals(m.get("target"))) {
      return "pgvector";
    }
    for (SearchPoint p : r.points()) {
      if (p.server() != null
          && p.server().keySet().stream().anyMatch(k -> k.startsWith("flashvec_"))) {
        return "FlashVec";
      }
    }
    if (m.get("server") instanceof Map<?, ?> server
        && server.keySet().stream().anyMatch(k -> String.valueOf(k).startsWith("flashvec_"))) {
      return "FlashVec";
    }
    return m.containsKey("target") || m.containsKey("url") ? "Qdrant-compatible REST" : "unknown";
  }

  /** The lines describing {@code r}. */
  public static List<Line> lines(BenchmarkResult r) {
    Map<String, Object> m = r.metadata();
    List<Line> out = new ArrayList<>();
    String where =
        join(
            " ",
            str(m.get("url")),
            m.containsKey("collection") ? "collection " + str(m.get("collection")) : "");
    line(out, "System", join(", ", system(r), where));
    if (m.containsKey("n") || m.containsKey("dataset_name")) {
      line(
          out,
          "Dataset",
          join(
              ", ",
              firstNonBlank(str(m.get("dataset_name")), str(m.get("dataset"))),
              m.containsKey("n") ? count(m.get("n")) + " vectors" : "",
              m.containsKey("dim") ? str(m.get("dim")) + " dimensions" : "",
              str(m.get("distance")),
              m.containsKey("queries") ? count(m.get("queries")) + " queries" : "",
              m.containsKey("k") ? "k=" + str(m.get("k")) : ""));
    }
    if (m.get("machine") instanceof Map<?, ?> mach) {
      line(
          out,
          "Machine",
          join(
              ", ",
              str(mach.get("cpu_model")),
              mach.containsKey("nproc") ? str(mach.get("nproc")) + " cores" : "",
              mach.get("mem_total_mb") instanceof Number mb
                  ? String.format(Locale.ROOT, "%.1f GiB memory", mb.doubleValue() / 1024)
                  : "",
              join(" ", str(mach.get("os")), str(mach.get("arch"))),
              mach.containsKey("host") ? "host " + str(mach.get("host")) : ""));
      line(out, "JVM", str(mach.get("java")));
    }
    String disk = "";
    if (m.get("device") instanceof Map<?, ?> dev) {
      disk = join(", ", str(dev.get("name")), str(dev.get("note")));
    }
    if (m.get("fio") instanceof Map<?, ?> fio) {
      List<String> f = new ArrayList<>();
      for (String qd : List.of("qd1", "qd32")) {
        if (fio.get(qd) instanceof Map<?, ?> q && q.get("iops") instanceof Number iops) {
          f.add(
              String.format(
                  Locale.ROOT, "%.0f IOPS at %s", iops.doubleValue(), qd.toUpperCase(Locale.ROOT)));
        }
      }
      disk = join(", ", disk, f.isEmpty() ? "" : "fio 4 KiB random reads: " + String.join(", ", f));
    }
    line(out, "Disk", disk);
    List<String> run = new ArrayList<>();
    if (m.get("queries_per_point") instanceof Number q) {
      run.add(count(q) + " queries per point");
    } else if (m.get("duration_s") instanceof Number s) {
      run.add(SvgChart.fmt(s.doubleValue()) + " s per point");
    }
    if (m.get("warmup") instanceof String w) {
      run.add("warm-up " + w);
    } else if (m.get("warmup_s") instanceof Number w) {
      run.add(
          w.doubleValue() == 0
              ? "no warm-up"
              : "warm-up " + SvgChart.fmt(w.doubleValue()) + " s (fixed)");
    }
    run.add(str(m.get("page_cache")).isEmpty() ? "" : "page cache " + str(m.get("page_cache")));
    run.add(str(m.get("filter")).isEmpty() ? "" : "filter " + str(m.get("filter")));
    run.add(str(m.get("index")).isEmpty() ? "" : "index " + str(m.get("index")));
    line(out, "Run", join("; ", run.toArray(String[]::new)));
    line(out, "Recall", str(m.get("recall")));
    line(out, "Date", str(m.get("date")));
    Map<String, Object> other = new LinkedHashMap<>();
    for (var e : m.entrySet()) {
      if (!KNOWN.contains(e.getKey())) {
        flatten(e.getKey(), e.getValue(), other);
      }
    }
    List<String> rest = new ArrayList<>();
    for (var e : other.entrySet()) {
      rest.add(e.getKey() + " " + e.getValue());
    }
    line(out, "Other", String.join(", ", rest));
    return out;
  }

  private static void flatten(String prefix, Object v, Map<String, Object> out) {
    if (v == null) {
      return;
    }
    if (v instanceof Map<?, ?> map) {
      for (var e : map.entrySet()) {
        flatten(prefix + "." + e.getKey(), e.getValue(), out);
      }
    } else if (v instanceof List<?> list) {
      if (!list.isEmpty() && list.size() <= 8) {
        out.put(prefix, list.toString());
      } else if (!list.isEmpty()) {
        out.put(prefix, list.size() + " values");
      }
    } else if (v instanceof Number n) {
      out.put(prefix, SvgChart.fmt(n.doubleValue()));
    } else {
      out.put(prefix, String.valueOf(v));
    }
  }

  private static void line(List<Line> out, String label, String text) {
    if (!text.isBlank()) {
      out.add(new Line(label, text));
    }
  }

  private static String count(Object n) {
    if (n instanceof Number x) {
      return String.format(Locale.ROOT, "%,d", x.longValue());
    }
    return str(n);
  }

  private static String str(Object o) {
    return o == null ? "" : String.valueOf(o).trim();
  }

  private static String firstNonBlank(String a, String b) {
    return a.isBlank() ? b : a;
  }

  private static String join(String sep, String... parts) {
    Set<String> kept = new LinkedHashSet<>();
    for (String p : parts) {
      if (p != null && !p.isBlank()) {
        kept.add(p.trim());
      }
    }
    return String.join(sep, kept);
  }
}
