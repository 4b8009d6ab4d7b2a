package io.flashvec.api.web;

import io.flashvec.api.FlashVecProperties;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;
import java.util.regex.Pattern;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Qdrant-compatible API keys: with {@code flashvec.security.api-key} set, every request except the
 * health probes and the dashboard's static files must carry the key in the {@code api-key} header
 * (or {@code Authorization: Bearer <key>}), else 401. The dashboard's pages hold no data and load
 * without a key, as Qdrant's web UI does; the API calls they make carry the key the user enters.
 * {@code flashvec.security.read-only-api-key} grants reads and searches only; a write with it gets
 * 403. Keys are compared in constant time.
 */
@Component
@Order(-200)
public class ApiKeyFilter implements WebFilter {

  private static final Set<String> OPEN = Set.of("/healthz", "/livez", "/readyz");

  /** The dashboard's static files ({@code dashboard.DashboardRoutes}). */
  private static final String DASHBOARD = "/dashboard";

  /** POST endpoints that only read (Qdrant's read-only key allows them). */
  private static final Pattern READ_POST =
      Pattern.compile(
          "^/collections/[^/]+/points(/search(/batch)?|/query(/batch)?|/scroll|/count)?/?$");

  private final byte[] key;
  private final byte[] readOnlyKey;

  public ApiKeyFilter(FlashVecProperties props) {
    FlashVecProperties.Security s = props.security();
    this.key = bytes(s == null ? null : s.apiKey());
    this.readOnlyKey = bytes(s == null ? null : s.readOnlyApiKey());
  }

  private static byte[] bytes(String k) {
    return k == null || k.isBlank() ? null : k.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    if (key == null && readOnlyKey == null) {
      return chain.filter(exchange);
    }
    var request = exchange.getRequest();
    String path = request.getPath().pathWithinApplication().value();
    if (OPEN.contains(path) || isDashboard(path)) {
      return chain.filter(exchange);
    }
    String given = request.getHeaders().getFirst("api-key");
    if (given == null) {
      String auth = request.getHeaders().getFirst("Authorization");
      if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
        given = auth.substring(7).trim();
      }
    }
    byte[] g = given == null ? null : given.getBytes(StandardCharsets.UTF_8);
    if (g != null && key != null && MessageDigest.isEqual(g, key)) {
      return chain.filter(exchange);
    }
    if (g != null && readOnlyKey != null && MessageDigest.isEqual(g, readOnlyKey)) {
      HttpMethod m = request.getMethod();
      boolean read =
          m == HttpMethod.GET
              || m == HttpMethod.HEAD
              || (m == HttpMethod.POST && READ_POST.matcher(path).matches());
      if (read) {
        return chain.filter(exchange);
      }
      return reject(
          exchange,
          HttpStatus.FORBIDDEN,
          "Forbidden: the read-only API key cannot " + m + " " + path);
    }
    return reject(
        exchange,
        HttpStatus.UNAUTHORIZED,
        g == null
            ? "Unauthorized: missing API key (header api-key or Authorization: Bearer)"
            : "Unauthorized: invalid API key");
  }

  private static boolean isDashboard(String path) {
    return path.startsWith(DASHBOARD)
        && (path.length() == DASHBOARD.length() || path.charAt(DASHBOARD.length()) == '/');
  }

  private static Mono<Void> reject(ServerWebExchange exchange, HttpStatus status, String message) {
    return Json.writeError(exchange, status, message);
  }
}
