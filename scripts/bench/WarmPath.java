import java.io.DataInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The warm-path benchmark (docs/benchmarks/warm-path.md): closed-loop clients send the queries of a
 * dataset to one of {@code points/search}, {@code points/search/batch} or {@code points/query} of a
 * running FlashVec server and report, per query, the server's process CPU (from {@code
 * /proc/PID/stat}) and the bytes it allocated (the {@code jvm_gc_memory_allocated_bytes_total}
 * metric between two forced collections), and the QPS.
 *
 * <pre>
 * java scripts/bench/WarmPath.java URL COLLECTION PID DATASET_DIR ENDPOINT CLIENTS SECONDS SEARCH_LIST [BATCH]
 * </pre>
 *
 * ENDPOINT is search, batch or query; BATCH (default 16) is the number of searches in one batch
 * request. Prints one line: endpoint, requests, queries, QPS, CPU µs per query, bytes per query.
 * Pin it to a core of its own ({@code taskset -c 1 java ...}) with the server on another.
 */
public final class WarmPath {
  public static void main(String[] a) throws Exception {
    String url = a[0];
    String collection = a[1];
    long pid = Long.parseLong(a[2]);
    Path dataset = Path.of(a[3]);
    String endpoint = a[4];
    int clients = Integer.parseInt(a[5]);
    double seconds = Double.parseDouble(a[6]);
    int searchList = Integer.parseInt(a[7]);
    int batch = a.length > 8 ? Integer.parseInt(a[8]) : 16;

    List<String> vectors = readVectors(dataset.resolve("query.fvecs"));
    String params = "\"params\":{\"search_list\":" + searchList + ",\"hnsw_ef\":" + searchList + "}";
    List<byte[]> bodies = new ArrayList<>();
    int perRequest = endpoint.equals("batch") ? batch : 1;
    for (int i = 0; i + perRequest <= vectors.size(); i += perRequest) {
      String body =
          switch (endpoint) {
            case "search" -> "{\"vector\":" + vectors.get(i) + ",\"limit\":10," + params + "}";
            case "query" -> "{\"query\":" + vectors.get(i) + ",\"limit\":10," + params + "}";
            case "batch" -> {
              StringBuilder sb = new StringBuilder("{\"searches\":[");
              for (int j = 0; j < batch; j++) {
                sb.append(j == 0 ? "" : ",")
                    .append("{\"vector\":")
                    .append(vectors.get(i + j))
                    .append(",\"limit\":10,")
                    .append(params)
                    .append('}');
              }
              yield sb.append("]}").toString();
            }
            default -> throw new IllegalArgumentException("endpoint: search, batch or query");
          };
      bodies.add(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    String path =
        switch (endpoint) {
          case "search" -> "/points/search";
          case "query" -> "/points/query";
          default -> "/points/search/batch";
        };
    URI uri = URI.create(url + "/collections/" + collection + path);
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    // warm-up: as long as the measured window
    run(http, uri, bodies, clients, seconds);
    gc(pid);
    double alloc0 = allocated(http, url);
    long[] cpu0 = cpuTicks(pid);
    long t0 = System.nanoTime();
    long requests = run(http, uri, bodies, clients, seconds);
    long t1 = System.nanoTime();
    long[] cpu1 = cpuTicks(pid);
    gc(pid);
    double alloc1 = allocated(http, url);
    long queries = requests * perRequest;
    double wall = (t1 - t0) / 1e9;
    double userSeconds = (cpu1[0] - cpu0[0]) / 100.0; // USER_HZ
    double sysSeconds = (cpu1[1] - cpu0[1]) / 100.0;
    double cpuSeconds = userSeconds + sysSeconds;
    System.out.printf(
        "%s clients=%d search_list=%d requests=%d queries=%d qps=%.0f cpu_us_per_query=%.1f"
            + " (user %.1f, system %.1f) alloc_bytes_per_query=%.0f server_cpu_s=%.2f"
            + " wall_s=%.2f%n",
        endpoint,
        clients,
        searchList,
        requests,
        queries,
        queries / wall,
        cpuSeconds * 1e6 / queries,
        userSeconds * 1e6 / queries,
        sysSeconds * 1e6 / queries,
        (alloc1 - alloc0) / queries,
        cpuSeconds,
        wall);
  }

  private static long run(HttpClient http, URI uri, List<byte[]> bodies, int clients, double s)
      throws InterruptedException {
    long end = System.nanoTime() + (long) (s * 1e9);
    AtomicLong done = new AtomicLong();
    AtomicLong next = new AtomicLong();
    Thread[] ts = new Thread[clients];
    for (int c = 0; c < clients; c++) {
      ts[c] =
          Thread.ofPlatform()
              .start(
                  () -> {
                    while (System.nanoTime() < end) {
                      byte[] b = bodies.get((int) (next.getAndIncrement() % bodies.size()));
                      HttpRequest r =
                          HttpRequest.newBuilder(uri)
                              .header("Content-Type", "application/json")
                              .POST(HttpRequest.BodyPublishers.ofByteArray(b))
                              .build();
                      try {
                        HttpResponse<byte[]> resp = http.send(r, HttpResponse.BodyHandlers.ofByteArray());
                        if (resp.statusCode() != 200) {
                          throw new IllegalStateException(
                              "status " + resp.statusCode() + ": " + new String(resp.body()));
                        }
                      } catch (IOException | InterruptedException e) {
                        throw new RuntimeException(e);
                      }
                      done.incrementAndGet();
                    }
                  });
    }
    for (Thread t : ts) {
      t.join();
    }
    return done.get();
  }

  private static List<String> readVectors(Path p) throws IOException {
    ByteBuffer bb = ByteBuffer.wrap(Files.readAllBytes(p)).order(ByteOrder.LITTLE_ENDIAN);
    List<String> out = new ArrayList<>();
    while (bb.hasRemaining()) {
      int d = bb.getInt();
      StringBuilder sb = new StringBuilder("[");
      for (int i = 0; i < d; i++) {
        sb.append(i == 0 ? "" : ",").append(bb.getFloat());
      }
      out.add(sb.append(']').toString());
    }
    return out;
  }

  /** utime and stime of the process, in clock ticks. */
  private static long[] cpuTicks(long pid) throws IOException {
    String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
    return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
  }

  private static void gc(long pid) throws IOException, InterruptedException {
    new ProcessBuilder("jcmd", Long.toString(pid), "GC.run")
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start()
        .waitFor();
  }

  private static final Pattern ALLOC =
      Pattern.compile("(?m)^jvm_gc_memory_allocated_bytes_total\\{[^}]*} (\\S+)$");

  private static double allocated(HttpClient http, String url) throws Exception {
    String m =
        http.send(
                HttpRequest.newBuilder(URI.create(url + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    Matcher x = ALLOC.matcher(m);
    if (!x.find()) {
      throw new IllegalStateException("no jvm_gc_memory_allocated_bytes_total in /metrics");
    }
    return Double.parseDouble(x.group(1));
  }
}
