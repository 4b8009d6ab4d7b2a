package io.flashvec.loadgen.client;

import io.flashvec.loadgen.dataset.Distance;
import io.flashvec.loadgen.internal.Json;
import io.flashvec.loadgen.internal.Parallel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * Client of the Qdrant-shaped REST API (FlashVec's, or a real Qdrant's), on {@link HttpClient} over
 * HTTP/1.1.
 *
 * <p>Calls used: {@code GET /collections/{name}}, {@code PUT /collections/{name}}, {@code DELETE
 * /collections/{name}}, {@code PUT /collections/{name}/points?wait=true}, {@code POST
 * /collections/{name}/points/search} and {@code GET /metrics}. Search params are sent as {@code
 * search_list}, {@code beam_width}, {@code rerank_k} and, for Qdrant, {@code hnsw_ef} = {@code
 * search_list}.
 *
 * <p>Thread-safe; owns its HTTP client and that client's executor (named {@code loadgen-http-N}),
 * both closed by {@link #close()}.
 */
public final class QdrantRestClient implements VectorDbClient {
  private final String baseUrl;
  private final String apiKey;
  private final Duration timeout;
  private final ExecutorService executor;
  private final HttpClient http;
  private final org.apache.hc.client5.http.impl.classic.CloseableHttpClient apache;

  /**
   * Creates a client.
   *
   * @param baseUrl e.g. {@code http://127.0.0.1:6333}
   * @param apiKey sent as header {@code api-key} when not null
   * @param timeout per-request timeout
   */
  public QdrantRestClient(String baseUrl, String apiKey, Duration timeout) {
    this(baseUrl, apiKey, timeout, Http.APACHE);
  }

  /**
   * The HTTP implementation: {@code APACHE} (Apache HttpClient 5 classic, blocking on the calling
   * thread over pooled keep-alive connections: the least client CPU per request) or {@code JDK}
   * ({@code java.net.http}, whose asynchronous core hands every response between threads).
   */
  public enum Http {
    APACHE,
    JDK
  }

  /** A client using the given HTTP implementation. */
  public QdrantRestClient(String baseUrl, String apiKey, Duration timeout, Http impl) {
    URI uri = URI.create(baseUrl);
    if (uri.getScheme() == null || uri.getHost() == null) {
      throw new IllegalArgumentException("invalid server url [url=" + baseUrl + "]");
    }
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.apiKey = apiKey;
    this.timeout = timeout;
    if (impl == Http.JDK) {
      this.executor = Executors.newCachedThreadPool(Parallel.namedFactory("loadgen-http"));
      this.http =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(10))
              .executor(executor)
              .build();
      this.apache = null;
    } else {
      this.executor = null;
      this.http = null;
      var cm =
          org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder.create()
              .setMaxConnTotal(1024)
              .setMaxConnPerRoute(1024)
              .setDefaultConnectionConfig(
                  org.apache.hc.client5.http.config.ConnectionConfig.custom()
                      .setConnectTimeout(org.apache.hc.core5.util.Timeout.ofSeconds(10))
                      .setSocketTimeout(org.apache.hc.core5.util.Timeout.of(timeout))
                      .build())
              .build();
      this.apache =
          org.apache.hc.client5.http.impl.classic.HttpClients.custom()
              .setConnectionManager(cm)
              .disableAutomaticRetries()
              .disableCookieManagement()
              .disableRedirectHandling()
              .disableContentCompression()
              .build();
    }
  }

  @Override
  public String target() {
    return "rest";
  }

  @Override
  public boolean collectionExists(String collection) {
    Response r = send("GET", collectionPath(collection), null);
    if (r.status == 404) {
      return false;
    }
    r.check("get collection");
    return true;
  }

  @Override
  public void createCollection(
      String collection,
      int dim,
      Distance distance,
      String indexType,
      Map<String, String> indexParams) {
    StringBuilder body = new StringBuilder();
    body.append("{\"vectors\":{\"size\":")
        .append(dim)
        .append(",\"distance\":\"")
        .append(distance.apiName())
        .append("\"}");
    if (indexType != null || (indexParams != null && !indexParams.isEmpty())) {
      body.append(",\"index\":{");
      boolean first = true;
      if (indexType != null) {
        body.append("\"type\":").append(Json.MAPPER.writeValueAsString(indexType));
        first = false;
      }
      if (indexParams != null) {
        for (var e : indexParams.entrySet()) {
          body.append(first ? "" : ",")
              .append(Json.MAPPER.writeValueAsString(e.getKey()))
              .append(':')
              .append(jsonScalar(e.getValue()));
          first = false;
        }
      }
      body.append('}');
    }
    body.append('}');
    send("PUT", collectionPath(collection), body.toString()).check("create collection");
  }

  @Override
  public void deleteCollection(String collection) {
    Response r = send("DELETE", collectionPath(collection), null);
    if (r.status != 404) {
      r.check("delete collection");
    }
  }

  private volatile int payloadBuckets;
  private volatile String filterJson;

  /** Ingest gives point {@code i} the payload {@code {"bucket": i % n}} (0: none). */
  public void setPayloadBuckets(int n) {
    payloadBuckets = n;
  }

  /** Every search carries this Qdrant filter ({@code null}: none). */
  public void setFilter(String json) {
    filterJson = json;
  }

  @Override
  public void upsert(String collection, long[] ids, float[][] vectors) {
    upsert(collection, ids, vectors[0].length, (sb, i) -> Json.appendVector(sb, vectors[i]));
  }

  @Override
  public void upsert(String collection, long[] ids, PreparedVector[] vectors) {
    upsert(collection, ids, vectors[0].vector().length, (sb, i) -> sb.append(vectors[i].json()));
  }

  private void upsert(
      String collection,
      long[] ids,
      int dim,
      java.util.function.ObjIntConsumer<StringBuilder> vector) {
    StringBuilder body = new StringBuilder(32 + ids.length * (dim * 12 + 24));
    body.append("{\"points\":[");
    for (int i = 0; i < ids.length; i++) {
      if (i > 0) {
        body.append(',');
      }
      body.append("{\"id\":").append(ids[i]).append(",\"vector\":");
      vector.accept(body, i);
      if (payloadBuckets > 0) {
        body.append(",\"payload\":{\"bucket\":").append(ids[i] % payloadBuckets).append('}');
      }
      body.append('}');
    }
    body.append("]}");
    send("PUT", collectionPath(collection) + "/points?wait=true", body.toString()).check("upsert");
  }

  @Override
  public void delete(String collection, long[] ids) {
    StringBuilder body = new StringBuilder(16 + ids.length * 8).append("{\"points\":[");
    for (int i = 0; i < ids.length; i++) {
      body.append(i > 0 ? "," : "").append(ids[i]);
    }
    body.append("]}");
    send("POST", collectionPath(collection) + "/points/delete?wait=true", body.toString())
        .check("delete points");
  }

  /** FlashVec's {@code POST /collections/{name}/compact?force=true}. */
  @Override
  public void compact(String collection) {
    send("POST", collectionPath(collection) + "/compact?force=true", null).check("compact");
  }

  @Override
  public PreparedVector prepare(float[] vector) {
    StringBuilder sb = new StringBuilder(vector.length * 12);
    Json.appendVector(sb, vector);
    return new PreparedVector(vector, sb.toString());
  }

  @Override
  public long[] search(String collection, PreparedVector vector, int k, SearchParams params) {
    StringBuilder body = new StringBuilder(vector.json().length() + 128);
    body.append("{\"vector\":").append(vector.json()).append(",\"limit\":").append(k);
    if (filterJson != null) {
      body.append(",\"filter\":").append(filterJson);
    }
    if (params != null && !params.asMap().isEmpty()) {
      body.append(",\"params\":{");
      boolean first = true;
      if (params.searchList() != null) {
        body.append("\"search_list\":").append(params.searchList());
        body.append(",\"hnsw_ef\":").append(params.searchList());
        first = false;
      }
      if (params.beamWidth() != null) {
        body.append(first ? "" : ",").append("\"beam_width\":").append(params.beamWidth());
        first = false;
      }
      if (params.rerankK() != null) {
        body.append(first ? "" : ",").append("\"rerank_k\":").append(params.rerankK());
      }
      body.append('}');
    }
    body.append('}');
    Response r = send("POST", collectionPath(collection) + "/points/search", body.toString());
    r.check("search");
    JsonNode result = r.json().path("result");
    if (!result.isArray()) {
      throw new ServerException(
          "search response has no result array [collection=" + collection + "]", r.status);
    }
    long[] ids = new long[result.size()];
    for (int i = 0; i < ids.length; i++) {
      JsonNode id = result.get(i).path("id");
      ids[i] = id.isNumber() ? id.asLong() : parseIdOrMinusOne(id.asString(""));
    }
    return ids;
  }

  @Override
  public CollectionInfo collectionInfo(String collection) {
    Response r = send("GET", collectionPath(collection), null);
    r.check("get collection");
    JsonNode result = r.json().path("result");
    long count = result.path("points_count").asLong(-1);
    if (count < 0) {
      count = result.path("vectors_count").asLong(-1);
    }
    // FlashVec counts every point in a live graph or sealed graph, and is green only when all are;
    // Qdrant (and a flat collection) may be green with fewer counted, so only status counts there.
    JsonNode flashvec = result.path("flashvec");
    long indexed =
        flashvec.isObject() && !"flat".equals(flashvec.path("index").path("type").asString(""))
            ? result.path("indexed_vectors_count").asLong(-1)
            : -1;
    return new CollectionInfo(result.path("status").asString("unknown"), count, indexed);
  }

  /** From {@code GET /collections/{c}/optimizations} (Qdrant 1.19's shape, FlashVec's too). */
  @Override
  public String runningOptimizations(String collection) {
    try {
      Response r = send("GET", collectionPath(collection) + "/optimizations", null);
      return r.status == 200 ? summarizeRunning(r.json().path("result").path("running")) : null;
    } catch (UncheckedIOException | ServerException | JacksonException e) {
      return null;
    }
  }

  /**
   * {@code merge 43% of 1548000 points; indexing 18000 points} for the optimizations' {@code
   * running} array: the share done where the server reports it; null when none runs.
   */
  static String summarizeRunning(JsonNode running) {
    if (!running.isArray() || running.isEmpty()) {
      return null;
    }
    StringBuilder out = new StringBuilder();
    for (JsonNode o : running) {
      if (!out.isEmpty()) {
        out.append("; ");
      }
      JsonNode progress = o.path("progress");
      long total = progress.path("total").asLong(-1);
      JsonNode done = progress.path("done");
      out.append(o.path("optimizer").asString("optimization"));
      if (done.isNumber() && total > 0) {
        out.append(' ').append(Math.min(100, done.asLong() * 100 / total)).append("% of");
      }
      out.append(' ').append(total < 0 ? "?" : Long.toString(total)).append(" points");
    }
    return out.toString();
  }

  @Override
  public String metricsText() {
    try {
      Response r = send("GET", "/metrics", null);
      return r.status == 200 ? r.text() : null;
    } catch (UncheckedIOException | ServerException e) {
      return null;
    }
  }

  @Override
  public void close() {
    if (http != null) {
      http.close();
      executor.shutdownNow();
    } else {
      apache.close(org.apache.hc.core5.io.CloseMode.IMMEDIATE);
    }
  }

  private static long parseIdOrMinusOne(String s) {
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static String jsonScalar(String v) {
    if (v.equals("true") || v.equals("false")) {
      return v;
    }
    try {
      Double.parseDouble(v);
      return v;
    } catch (NumberFormatException e) {
      return Json.MAPPER.writeValueAsString(v);
    }
  }

  private static String collectionPath(String collection) {
    return "/collections/"
        + URLEncoder.encode(collection, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private Response send(String method, String path, String body) {
    if (apache != null) {
      var b =
          org.apache.hc.core5.http.io.support.ClassicRequestBuilder.create(method)
              .setUri(baseUrl + path);
      if (body != null) {
        b.setEntity(
            new org.apache.hc.core5.http.io.entity.ByteArrayEntity(
                body.getBytes(StandardCharsets.UTF_8),
                org.apache.hc.core5.http.ContentType.APPLICATION_JSON));
      }
      if (apiKey != null) {
        b.addHeader("api-key", apiKey);
      }
      try {
        return apache.execute(
            b.build(),
            resp ->
                new Response(
                    method,
                    baseUrl + path,
                    resp.getCode(),
                    resp.getEntity() == null
                        ? new byte[0]
                        : org.apache.hc.core5.http.io.entity.EntityUtils.toByteArray(
                            resp.getEntity())));
      } catch (IOException e) {
        throw new UncheckedIOException(
            "request failed [method=" + method + ", url=" + baseUrl + path + "]", e);
      }
    }
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(baseUrl + path))
            .timeout(timeout)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    if (apiKey != null) {
      b.header("api-key", apiKey);
    }
    try {
      HttpResponse<byte[]> resp = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
      return new Response(method, baseUrl + path, resp.statusCode(), resp.body());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "request failed [method=" + method + ", url=" + baseUrl + path + "]", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UncheckedIOException(
          "request interrupted [method=" + method + ", url=" + baseUrl + path + "]",
          new java.io.InterruptedIOException(e.getMessage()));
    }
  }

  private record Response(String method, String url, int status, byte[] body) {
    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    JsonNode json() {
      try {
        return Json.MAPPER.readTree(body);
      } catch (JacksonException e) {
        throw new ServerException(
            "response is not JSON [method=" + method + ", url=" + url + ", status=" + status + "]",
            status);
      }
    }

    void check(String what) {
      if (status / 100 != 2) {
        String t = text();
        throw new ServerException(
            what
                + " failed [method="
                + method
                + ", url="
                + url
                + ", status="
                + status
                + ", body="
                + (t.length() > 300 ? t.substring(0, 300) + "..." : t)
                + "]",
            status);
      }
    }
  }
}
