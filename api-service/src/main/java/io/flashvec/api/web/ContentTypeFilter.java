package io.flashvec.api.web;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;
import org.springframework.web.reactive.result.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Refuses a request body that says it is not JSON with 415, before it is read: every body this API
 * takes is JSON, and a form ({@code curl -d} sends {@code application/x-www-form-urlencoded}) or
 * text read as JSON anyway hides the client's mistake. {@code application/json} and any {@code
 * application/*+json} are JSON, in UTF-8 (the only charset JSON has, RFC 8259); a body without a
 * {@code Content-Type} is read as JSON, as a body is never anything else here. Qdrant refuses
 * non-JSON content types too (with 400). The one exception is a snapshot upload ({@code
 * …/snapshots/upload}, {@code …/snapshot/partial/recover}), a {@code multipart/form-data} file.
 *
 * <p>A body sent to a route that does not exist is not judged: the request gets the 404 "no such
 * endpoint" any request to it gets, whatever its content type, so a client learns the route is
 * missing rather than that its body would have to be JSON. Routes are looked up only for a body
 * that is not JSON, so a JSON request pays nothing for it.
 */
@Component
@Order(-90)
public class ContentTypeFilter implements WebFilter {

  /** The end of the snapshot upload route, which takes {@code multipart/form-data}. */
  static final String SNAPSHOT_UPLOAD = "/snapshots/upload";

  /** The end of the partial shard snapshot upload route, {@code multipart/form-data} too. */
  static final String PARTIAL_SNAPSHOT_UPLOAD = "/snapshot/partial/recover";

  /** Whether {@code path} is a snapshot upload route, whose body is a file, not JSON. */
  static boolean isSnapshotUpload(String path) {
    return path.endsWith(SNAPSHOT_UPLOAD) || path.endsWith(PARTIAL_SNAPSHOT_UPLOAD);
  }

  private final ObjectProvider<HandlerMapping> mappings;

  /**
   * @param mappings the server's handler mappings, asked whether a route exists; only the
   *     controllers' and the router functions' are, not a resource handler's (which would claim
   *     every path)
   */
  public ContentTypeFilter(ObjectProvider<HandlerMapping> mappings) {
    this.mappings = mappings;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    HttpHeaders headers = exchange.getRequest().getHeaders();
    String type = headers.getFirst(HttpHeaders.CONTENT_TYPE);
    if (type == null || !hasBody(headers)) {
      return chain.filter(exchange);
    }
    if (isSnapshotUpload(exchange.getRequest().getPath().value())
        && type.toLowerCase(java.util.Locale.ROOT).startsWith("multipart/form-data")) {
      return chain.filter(exchange); // a snapshot file, the one body that is not JSON
    }
    String problem = problem(type);
    if (problem == null) {
      return chain.filter(exchange);
    }
    return routeExists(exchange)
        .flatMap(exists -> exists ? unsupported(exchange, problem, type) : chain.filter(exchange));
  }

  /**
   * Whether a controller or router function serves the request's method and path (an error while
   * matching, such as another method's route on the path, is none).
   */
  private Mono<Boolean> routeExists(ServerWebExchange exchange) {
    return Flux.fromStream(
            mappings
                .orderedStream()
                .filter(
                    m ->
                        m instanceof RequestMappingInfoHandlerMapping
                            || m instanceof RouterFunctionMapping))
        .concatMap(m -> m.getHandler(exchange).onErrorResume(e -> Mono.empty()))
        .hasElements();
  }

  private static Mono<Void> unsupported(ServerWebExchange exchange, String problem, String type) {
    return Json.writeError(
        exchange,
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        "Unsupported media type: "
            + problem
            + "; send the body as Content-Type: application/json [content-type="
            + (type.length() > 80 ? type.substring(0, 77) + "..." : type)
            + "]");
  }

  private static boolean hasBody(HttpHeaders headers) {
    return headers.getContentLength() > 0 || headers.containsHeader(HttpHeaders.TRANSFER_ENCODING);
  }

  /** Why {@code type} is not a JSON content type, or {@code null} if it is one. */
  static String problem(String type) {
    MediaType media;
    try {
      media = MediaType.parseMediaType(type);
    } catch (InvalidMediaTypeException e) {
      return "the content type is malformed";
    }
    boolean json =
        media.getType().equalsIgnoreCase("application")
            && (media.getSubtype().equalsIgnoreCase("json")
                || media.getSubtype().toLowerCase(java.util.Locale.ROOT).endsWith("+json"));
    if (!json) {
      return "request bodies are JSON";
    }
    try {
      Charset charset = media.getCharset();
      return charset == null || charset.equals(StandardCharsets.UTF_8)
          ? null
          : "JSON bodies are UTF-8";
    } catch (IllegalArgumentException e) { // an unknown charset
      return "JSON bodies are UTF-8";
    }
  }
}
