package io.flashvec.api.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A tiny JSON-over-HTTP client for integration tests. */
public final class Http {

  public static final JsonMapper JSON = JsonMapper.builder().build();

  /** Status, parsed body and headers (empty when not kept). */
  public record Response(int status, JsonNode body, String raw, java.net.http.HttpHeaders headers) {
    public Response(int status, JsonNode body, String raw) {
      this(status, body, raw, java.net.http.HttpHeaders.of(java.util.Map.of(), (a, b) -> true));
    }

    /** The value of header {@code name}, or {@code null}. */
    public String header(String name) {
      return headers.firstValue(name).orElse(null);
    }

    public JsonNode result() {
      return body.get("result");
    }

    public String error() {
      return body.path("status").path("error").asString("");
    }
  }

  private final HttpClient client;
  private final String base;

  public Http(String base) {
    this(base, null);
  }

  /** A client for an HTTPS server whose certificate {@code ssl} trusts. */
  public Http(String base, javax.net.ssl.SSLContext ssl) {
    this.base = base;
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
    this.client = ssl == null ? b.build() : b.sslContext(ssl).build();
  }

  public Response get(String path) {
    return send("GET", path, null);
  }

  public Response put(String path, String body) {
    return send("PUT", path, body);
  }

  public Response post(String path, String body) {
    return send("POST", path, body);
  }

  public Response delete(String path) {
    return send("DELETE", path, null);
  }

  /** Sends a request; throws {@link UncheckedIOException} when the server is unreachable. */
  public Response send(String method, String path, String body) {
    return send(method, path, body, new String[0]);
  }

  /** Sends a request with extra headers given as name, value pairs. */
  public Response send(String method, String path, String body, String... headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60));
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    try {
      HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
      JsonNode n;
      try {
        n = JSON.readTree(r.body());
      } catch (RuntimeException e) {
        n = JSON.createObjectNode();
      }
      return new Response(r.statusCode(), n, r.body(), r.headers());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
