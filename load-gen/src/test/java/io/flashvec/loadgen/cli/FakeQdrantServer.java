package io.flashvec.loadgen.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.flashvec.loadgen.dataset.Distance;
import io.flashvec.loadgen.internal.Json;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;

/**
 * A tiny in-memory server speaking the Qdrant-shaped REST calls load-gen uses, bound to 127.0.0.1
 * on an ephemeral port. Search is exact brute force, so recall is 1.0. Every search "reads" 3 pages
 * of 4096 bytes, counted in {@code flashvec_io_*} counters on {@code /metrics}. A collection
 * reports {@code yellow} for its first two status polls after an upsert, then {@code green}.
 */
final class FakeQdrantServer implements AutoCloseable {
  static final int PAGES_PER_SEARCH = 3;

  private final HttpServer server;
  private final ExecutorService pool;
  final Map<String, Collection> collections = new ConcurrentHashMap<>();
  final AtomicLong searches = new AtomicLong();
  final AtomicLong upsertedBytes = new AtomicLong();
  final AtomicLong upserts = new AtomicLong();
  final AtomicLong evictions = new AtomicLong();
  final AtomicLong compactions = new AtomicLong();

  /** Searches to answer with 503 before answering again (fault injection). */
  final AtomicInteger failSearches = new AtomicInteger();

  /** Upserts to answer with 503 before accepting again (fault injection). */
  final AtomicInteger failUpserts = new AtomicInteger();

  final AtomicLong deletes = new AtomicLong();
  final List<String> createBodies = new ArrayList<>();
  final List<String> searchBodies = java.util.Collections.synchronizedList(new ArrayList<>());

  static final class Collection {
    final int dim;
    final Distance distance;
    final Map<Long, float[]> points = new ConcurrentHashMap<>();
    final AtomicInteger pollsSinceUpsert = new AtomicInteger();

    Collection(int dim, Distance distance) {
      this.dim = dim;
      this.distance = distance;
    }
  }

  FakeQdrantServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    AtomicInteger seq = new AtomicInteger();
    pool =
        Executors.newFixedThreadPool(
            4,
            r -> {
              Thread t = new Thread(r, "fake-qdrant-" + seq.getAndIncrement());
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(pool);
    server.createContext("/collections", this::collections);
    server.createContext("/metrics", this::metrics);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void metrics(HttpExchange ex) throws IOException {
    long s = searches.get();
    String body =
        "# HELP flashvec_io_bytes_read_total bytes\n"
            + "# TYPE flashvec_io_bytes_read_total counter\n"
            + "flashvec_io_bytes_read_total{shard=\"0\"} "
            + (s * PAGES_PER_SEARCH * 4096)
            + "\n# TYPE flashvec_io_pages_read_total counter\n"
            + "flashvec_io_pages_read_total{shard=\"0\"} "
            + (s * PAGES_PER_SEARCH)
            + "\n# TYPE process_cpu_usage gauge\nprocess_cpu_usage 0.5\n"
            + "# TYPE jvm_threads_live_threads gauge\njvm_threads_live_threads 12\n"
            + "# TYPE flashvec_wal_appended_bytes_total counter\n"
            + "flashvec_wal_appended_bytes_total "
            + (upsertedBytes.get())
            + "\n";
    send(ex, 200, body, "text/plain; version=0.0.4");
  }

  private void collections(HttpExchange ex) throws IOException {
    try {
      String path = ex.getRequestURI().getPath();
      String[] parts = path.split("/");
      // ["", "collections", name, ...]
      String name = parts.length > 2 ? parts[2] : null;
      String method = ex.getRequestMethod();
      byte[] in = ex.getRequestBody().readAllBytes();
      Collection c = name == null ? null : collections.get(name);
      if (parts.length == 3) {
        switch (method) {
          case "GET" -> {
            if (c == null) {
              error(ex, 404, "Not found: Collection `" + name + "` doesn't exist!");
              return;
            }
            String status = c.pollsSinceUpsert.getAndIncrement() < 2 ? "yellow" : "green";
            ok(
                ex,
                "{\"status\":\""
                    + status
                    + "\",\"points_count\":"
                    + c.points.size()
                    + ",\"segments_count\":1}");
          }
          case "PUT" -> {
            synchronized (createBodies) {
              createBodies.add(new String(in, StandardCharsets.UTF_8));
            }
            JsonNode body = Json.MAPPER.readTree(in);
            collections.put(
                name,
                new Collection(
                    body.path("vectors").path("size").asInt(),
                    Distance.parse(body.path("vectors").path("distance").asString())));
            ok(ex, "true");
          }
          case "DELETE" -> {
            collections.remove(name);
            ok(ex, "true");
          }
          default -> error(ex, 405, "method");
        }
        return;
      }
      if (c == null) {
        error(ex, 404, "Not found: Collection `" + name + "` doesn't exist!");
        return;
      }
      String tail = String.join("/", java.util.Arrays.copyOfRange(parts, 3, parts.length));
      if (tail.equals("points") && method.equals("PUT")) {
        if (failUpserts.getAndUpdate(v -> Math.max(0, v - 1)) > 0) {
          error(ex, 503, "Service unavailable: injected");
          return;
        }
        JsonNode body = Json.MAPPER.readTree(in);
        for (JsonNode p : body.path("points")) {
          JsonNode v = p.path("vector");
          float[] f = new float[v.size()];
          for (int i = 0; i < f.length; i++) {
            f[i] = v.get(i).floatValue();
          }
          if (f.length != c.dim) {
            error(ex, 400, "Wrong input: Vector dimension error: expected dim: " + c.dim);
            return;
          }
          c.points.put(p.path("id").asLong(), f);
          upsertedBytes.addAndGet(2L * f.length * Float.BYTES);
        }
        c.pollsSinceUpsert.set(0);
        upserts.incrementAndGet();
        ok(ex, "{\"operation_id\":" + upserts.get() + ",\"status\":\"completed\"}");
        return;
      }
      if (tail.equals("compact") && method.equals("POST")) {
        compactions.incrementAndGet();
        ok(ex, "true");
        return;
      }
      if (tail.equals("evict") && method.equals("POST")) {
        evictions.incrementAndGet();
        ok(ex, "{\"evicted_files\":1}");
        return;
      }
      if (tail.equals("points/delete") && method.equals("POST")) {
        for (JsonNode id : Json.MAPPER.readTree(in).path("points")) {
          c.points.remove(id.asLong());
          deletes.incrementAndGet();
        }
        ok(ex, "{\"operation_id\":0,\"status\":\"completed\"}");
        return;
      }
      if (tail.equals("points/search") && method.equals("POST")) {
        if (failSearches.getAndUpdate(v -> Math.max(0, v - 1)) > 0) {
          error(ex, 503, "Service unavailable: injected");
          return;
        }
        String text = new String(in, StandardCharsets.UTF_8);
        searchBodies.add(text);
        JsonNode body = Json.MAPPER.readTree(text);
        JsonNode v = body.path("vector");
        float[] q = new float[v.size()];
        for (int i = 0; i < q.length; i++) {
          q[i] = v.get(i).floatValue();
        }
        int limit = body.path("limit").asInt(10);
        List<Map.Entry<Long, float[]>> all = new ArrayList<>(c.points.entrySet());
        all.sort(
            (a, b) -> {
              int cmp =
                  Float.compare(
                      c.distance.similarity(q, b.getValue()),
                      c.distance.similarity(q, a.getValue()));
              return cmp != 0 ? cmp : Long.compare(a.getKey(), b.getKey());
            });
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < Math.min(limit, all.size()); i++) {
          if (i > 0) {
            sb.append(',');
          }
          sb.append("{\"id\":")
              .append(all.get(i).getKey())
              .append(",\"version\":0,\"score\":")
              .append(c.distance.similarity(q, all.get(i).getValue()))
              .append('}');
        }
        searches.incrementAndGet();
        ok(ex, sb.append(']').toString());
        return;
      }
      error(ex, 404, "no route " + method + " " + path);
    } catch (RuntimeException e) {
      error(ex, 500, String.valueOf(e));
    }
  }

  private static void ok(HttpExchange ex, String result) throws IOException {
    send(
        ex,
        200,
        "{\"result\":" + result + ",\"status\":\"ok\",\"time\":0.0001}",
        "application/json");
  }

  private static void error(HttpExchange ex, int status, String msg) throws IOException {
    send(
        ex,
        status,
        "{\"status\":{\"error\":" + Json.MAPPER.writeValueAsString(msg) + "},\"time\":0.0}",
        "application/json");
  }

  private static void send(HttpExchange ex, int status, String body, String type)
      throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, b.length);
    ex.getResponseBody().write(b);
    ex.close();
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
