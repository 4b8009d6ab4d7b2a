package io.flashvec.loadgen.report;

import io.flashvec.loadgen.internal.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * A JSON result: metadata (dataset, n, dim, url, collection, date, machine, ...) and the list of
 * {@code points}. The JSON field names are snake_case ({@code p50_ms}, {@code recall_at_k}); this
 * is the stable contract that {@code report} and scripts read. NaN (no ground truth) is written as
 * null.
 */
public record BenchmarkResult(Map<String, Object> metadata, List<SearchPoint> points) {

  /** Writes this result as pretty JSON (directories are created). */
  public void write(Path file) {
    Map<String, Object> root = new LinkedHashMap<>(metadata);
    List<Map<String, Object>> ps = new ArrayList<>();
    for (SearchPoint p : points) {
      ps.add(toMap(p));
    }
    root.put("points", ps);
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(file, Json.MAPPER.writeValueAsString(root) + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write result [file=" + file + "]", e);
    }
  }

  /** One point as the JSON object written for it. */
  public static Map<String, Object> toMap(SearchPoint p) {
    Map<String, Object> m = new LinkedHashMap<>();
    if (p.label() != null) {
      m.put("label", p.label());
    }
    m.put("concurrency", p.concurrency());
    m.put("k", p.k());
    m.put("params", p.params());
    m.put("queries", p.queries());
    m.put("errors", p.errors());
    m.put("seconds", round(p.seconds(), 3));
    m.put("qps", round(p.qps(), 2));
    m.put("p50_ms", round(p.p50Ms(), 4));
    m.put("p95_ms", round(p.p95Ms(), 4));
    m.put("p99_ms", round(p.p99Ms(), 4));
    m.put("p999_ms", round(p.p999Ms(), 4));
    m.put("max_ms", round(p.maxMs(), 4));
    m.put("mean_ms", round(p.meanMs(), 4));
    m.put("recall_at_k", Double.isNaN(p.recallAtK()) ? null : round(p.recallAtK(), 5));
    m.put("server", p.server());
    m.put("server_gauges", p.serverGauges());
    m.put("io", p.io());
    if (p.nodes() != null && !p.nodes().isEmpty()) {
      m.put("nodes", p.nodes());
    }
    if (p.device() != null && !p.device().isEmpty()) {
      m.put("device", p.device());
    }
    SearchPoint.Quality q = p.quality();
    if (q.recallQueries() > 0) {
      m.put("recall_queries", q.recallQueries());
      m.put("recall_extra_queries", q.recallExtraQueries());
    }
    if (!Double.isNaN(q.warmupSeconds())) {
      m.put("warmup_s", round(q.warmupSeconds(), 3));
    }
    if (q.warmupStable() != null) {
      m.put("warmup_stable", q.warmupStable());
    }
    if (!Double.isNaN(q.qpsVariation())) {
      m.put("qps_variation", round(q.qpsVariation(), 4));
    }
    return m;
  }

  /** Reads a result written by {@link #write} (unknown fields are ignored). */
  public static BenchmarkResult read(Path file) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read result [file=" + file + "]", e);
    }
    Map<String, Object> meta = new LinkedHashMap<>();
    for (var e : root.properties()) {
      if (!e.getKey().equals("points")) {
        meta.put(e.getKey(), Json.MAPPER.convertValue(e.getValue(), Object.class));
      }
    }
    List<SearchPoint> points = new ArrayList<>();
    for (JsonNode p : root.path("points")) {
      points.add(
          new SearchPoint(
              p.path("label").isString() ? p.path("label").asString() : null,
              p.path("concurrency").asInt(1),
              p.path("k").asInt(10),
              intMap(p.path("params")),
              p.path("queries").asLong(0),
              p.path("errors").asLong(0),
              p.path("seconds").asDouble(0),
              p.path("qps").asDouble(0),
              p.path("p50_ms").asDouble(0),
              p.path("p95_ms").asDouble(0),
              p.path("p99_ms").asDouble(0),
              p.path("p999_ms").asDouble(0),
              p.path("max_ms").asDouble(0),
              p.path("mean_ms").asDouble(0),
              p.path("recall_at_k").isNumber() ? p.path("recall_at_k").asDouble() : Double.NaN,
              doubleMap(p.path("server")),
              doubleMap(p.path("server_gauges")),
              doubleMap(p.path("io")),
              nodesMap(p.path("nodes")),
              doubleMap(p.path("device")),
              new SearchPoint.Quality(
                  p.path("recall_queries").asLong(0),
                  p.path("recall_extra_queries").asLong(0),
                  p.path("warmup_s").isNumber() ? p.path("warmup_s").asDouble() : Double.NaN,
                  p.path("warmup_stable").isBoolean() ? p.path("warmup_stable").asBoolean() : null,
                  p.path("qps_variation").isNumber()
                      ? p.path("qps_variation").asDouble()
                      : Double.NaN)));
    }
    return new BenchmarkResult(meta, points);
  }

  private static Map<String, Integer> intMap(JsonNode n) {
    Map<String, Integer> m = new LinkedHashMap<>();
    for (var e : n.properties()) {
      m.put(e.getKey(), e.getValue().asInt());
    }
    return m;
  }

  private static Map<String, Map<String, Double>> nodesMap(JsonNode n) {
    Map<String, Map<String, Double>> m = new LinkedHashMap<>();
    for (var e : n.properties()) {
      m.put(e.getKey(), doubleMap(e.getValue()));
    }
    return m;
  }

  private static Map<String, Double> doubleMap(JsonNode n) {
    Map<String, Double> m = new LinkedHashMap<>();
    for (var e : n.properties()) {
      if (e.getValue().isNumber()) {
        m.put(e.getKey(), e.getValue().asDouble());
      }
    }
    return m;
  }

  static double round(double v, int digits) {
    if (!Double.isFinite(v)) {
      return v;
    }
    double f = Math.pow(10, digits);
    return Math.round(v * f) / f;
  }
}
