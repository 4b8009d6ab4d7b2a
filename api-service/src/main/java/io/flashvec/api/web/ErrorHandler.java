package io.flashvec.api.web;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.cluster.EngineFailures;
import io.flashvec.index.FlashVecException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.TypeMismatchException;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.util.DisconnectedClientHelper;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;

/**
 * The one place that turns exceptions into Qdrant-style error responses {@code {"status": {"error":
 * "…"}, "time": s}} with the right status: {@link FlashVecException}s carry theirs, oversized
 * bodies are 413, Spring's routing and binding errors keep their status (except that a known path
 * asked with another method is a 404 "no such endpoint", as for an unknown path: Qdrant routes by
 * path and method together), anything else is a 500.
 *
 * <p>What a client sees never shows the server's insides: a 500 says only that something failed and
 * gives an {@code error_id} that the server's log has beside the full exception; Spring's binding
 * errors are rewritten without Java type names; the data directory's path is replaced by {@code
 * <data-dir>} in any message. A client that went away (connection reset, closed mid-body, broken
 * pipe) gets no answer (a 499 in the request metrics) and one DEBUG line, as do errors Reactor
 * drops after such an abort.
 */
@Component
@Order(-2)
public class ErrorHandler implements WebExceptionHandler {

  private static final Logger LOG = LoggerFactory.getLogger(ErrorHandler.class);

  /** The status of a request whose client went away before its answer (as nginx logs it). */
  static final int CLIENT_CLOSED_REQUEST = 499;

  private static final AtomicBoolean HOOKED = new AtomicBoolean();

  private final List<String> hiddenPaths;

  public ErrorHandler(FlashVecProperties props) {
    Path dir = props.dataDir().toAbsolutePath().normalize();
    List<String> paths = new ArrayList<>();
    try {
      paths.add(dir.toRealPath().toString());
    } catch (IOException | SecurityException e) {
      // not there yet: the absolute path is what messages will show
    }
    paths.add(dir.toString());
    // the longest first, so that a path is not half replaced by a shorter one
    paths.sort(Comparator.comparingInt(String::length).reversed());
    this.hiddenPaths = paths.stream().filter(p -> p.length() > 1).distinct().toList();
    if (HOOKED.compareAndSet(false, true)) {
      // Reactor's default logs each at ERROR with a stack trace, client aborts included
      Hooks.onErrorDropped(ErrorHandler::dropped);
    }
  }

  @Override
  public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
    if (isClientAbort(ex)) {
      LOG.debug(
          "client went away [method={}, path={}]: {}",
          exchange.getRequest().getMethod(),
          exchange.getRequest().getPath(),
          describe(ex));
      var response = exchange.getResponse();
      if (response.isCommitted()) {
        return Mono.error(ex); // Reactor Netty closes the connection
      }
      // nobody is there to read it; nginx's 499 in the request metrics, and the connection closes
      response.setStatusCode(HttpStatusCode.valueOf(CLIENT_CLOSED_REQUEST));
      response.getHeaders().setConnection("close");
      return response.setComplete();
    }
    if (exchange.getResponse().isCommitted()) {
      return Mono.error(ex);
    }
    ResponseEntity<byte[]> r = toResponse(ex, exchange);
    var response = exchange.getResponse();
    response.setStatusCode(r.getStatusCode());
    response.getHeaders().putAll(r.getHeaders());
    byte[] body = hidePaths(r.getBody());
    Mono<Void> write = response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    if (findCause(ex, DataBufferLimitException.class) != null) {
      // an oversized body is not read to its end: the connection closes after the answer
      response.getHeaders().setConnection("close");
      return write;
    }
    return UnreadBodyFilter.drainIfUnread(exchange).then(write);
  }

  /**
   * The message with Qdrant's prefix for its kind ({@code Wrong input: } for a 400, {@code Not
   * found: } for a 404), which clients and their users match on; messages of the engine's own
   * validation (a point id, a distance name) are written without it. A 400 that already carries
   * Qdrant's other prefix, {@code Bad request: }, keeps it.
   */
  static String qdrantKind(FlashVecException e) {
    String m = e.getMessage();
    String prefix =
        switch (e.httpStatus()) {
          case 400 -> "Wrong input: ";
          case 404 -> "Not found: ";
          default -> null;
        };
    if (prefix == null
        || m.startsWith(prefix)
        || (e.httpStatus() == 400 && m.startsWith("Bad request: "))) {
      return m;
    }
    return prefix + m;
  }

  static ResponseEntity<byte[]> toResponse(Throwable ex, ServerWebExchange exchange) {
    long t0 = System.nanoTime();
    if (ex instanceof FlashVecException fe && fe.httpStatus() < 500) {
      String message = qdrantKind(fe);
      HttpRejections.reject(
          exchange,
          fe instanceof BadJsonException ? "bad_json" : HttpRejections.reasonOf(fe.httpStatus()),
          message);
      ResponseEntity<byte[]> r = Json.error(HttpStatus.valueOf(fe.httpStatus()), message, t0);
      if (fe instanceof RateLimitException rl && rl.retryAfterSeconds() >= 0) {
        return ResponseEntity.status(r.getStatusCode())
            .headers(r.getHeaders())
            .header("Retry-After", Long.toString(rl.retryAfterSeconds()))
            .body(r.getBody());
      }
      return r;
    }
    if (ex instanceof FlashVecException fe && fe.httpStatus() != 500) {
      // 503 and the like: what to wait for or fix, for the client (paths are hidden)
      LOG.warn(
          "request failed [status={}, method={}, path={}]: {}",
          fe.httpStatus(),
          exchange.getRequest().getMethod(),
          exchange.getRequest().getPath(),
          describe(fe));
      return Json.error(HttpStatus.valueOf(fe.httpStatus()), fe.getMessage(), t0);
    }
    DataBufferLimitException limit = findCause(ex, DataBufferLimitException.class);
    if (limit != null) {
      String message =
          "Payload too large: request body exceeds the limit [" + limit.getMessage() + "]";
      HttpRejections.reject(exchange, "body_too_large", message);
      return Json.error(HttpStatus.CONTENT_TOO_LARGE, message, t0);
    }
    if (EngineFailures.corruptData(ex)) {
      String id = errorId();
      LOG.error("corrupt data [error_id={}, path={}]", id, exchange.getRequest().getPath(), ex);
      return Json.error(
          HttpStatus.INTERNAL_SERVER_ERROR,
          "Service internal error: stored data is corrupt; the server log has the details"
              + " [error_id="
              + id
              + "]",
          t0);
    }
    if (EngineFailures.diskFull(ex)) {
      // A write path that did not say 507 itself (typed ones are FlashVecExceptions above).
      LOG.warn("request failed: the disk is full [path={}]", exchange.getRequest().getPath(), ex);
      return Json.error(
          HttpStatus.INSUFFICIENT_STORAGE,
          "Insufficient storage: the data directory's disk is full; writes resume once space is"
              + " freed",
          t0);
    }
    if (ex instanceof ResponseStatusException rse) {
      HttpStatusCode code = rse.getStatusCode();
      if (code.value() == 405) {
        // Qdrant (actix) routes by path and method together: a known path with another method is
        // a route that does not exist, 404 like any other
        code = HttpStatus.NOT_FOUND;
      }
      String reason = rse.getReason() != null ? rse.getReason() : code.toString();
      if (code.value() == 404) {
        reason =
            "Not found: no such endpoint [method="
                + exchange.getRequest().getMethod()
                + ", path="
                + exchange.getRequest().getPath()
                + "]";
      } else if (code.value() == 400) {
        reason = "Wrong input: " + badParameter(rse, reason);
      }
      if (code.is4xxClientError()) {
        HttpRejections.reject(exchange, HttpRejections.reasonOf(code.value()), reason);
      }
      if (code.is5xxServerError()) {
        return internalError(ex, exchange, t0);
      }
      return Json.error(HttpStatus.valueOf(code.value()), reason, t0);
    }
    return internalError(ex, exchange, t0);
  }

  /** A 500 whose body names no internals, and its exception in the log under the same id. */
  private static ResponseEntity<byte[]> internalError(
      Throwable ex, ServerWebExchange exchange, long t0) {
    String id = errorId();
    LOG.error(
        "request failed [error_id={}, method={}, path={}]",
        id,
        exchange.getRequest().getMethod(),
        exchange.getRequest().getPath(),
        ex);
    return Json.error(
        HttpStatus.INTERNAL_SERVER_ERROR,
        "Service internal error: the request failed; the server log has the details [error_id="
            + id
            + "]",
        t0);
  }

  /** A short id that ties a 500's answer to its log line. */
  static String errorId() {
    return String.format(Locale.ROOT, "%08x", (int) UUID.randomUUID().getLeastSignificantBits());
  }

  /**
   * A 400 of Spring's binding ({@code ?wait=maybe}) in our words: its own messages name Java types
   * ({@code Failed to convert value of type 'java.lang.String' to required type 'boolean'}).
   */
  static String badParameter(ResponseStatusException rse, String reason) {
    TypeMismatchException mismatch = findCause(rse, TypeMismatchException.class);
    if (rse instanceof ServerWebInputException in && in.getMethodParameter() != null) {
      String name = in.getMethodParameter().getParameterName();
      Class<?> type = in.getMethodParameter().getParameterType();
      String value = mismatch == null ? null : String.valueOf(mismatch.getValue());
      if (name != null && mismatch != null) {
        return "query parameter "
            + name
            + " must be "
            + typeName(type)
            + " ["
            + name
            + "="
            + (value.length() > 80 ? value.substring(0, 77) + "..." : value)
            + "]";
      }
      if (name != null) {
        return "invalid request parameter [" + name + "]";
      }
    }
    // Spring's reasons are plain English ("Required query parameter 'x' is not present.")
    return reason;
  }

  private static String typeName(Class<?> type) {
    if (type == boolean.class || type == Boolean.class) {
      return "true or false";
    }
    if (type == int.class
        || type == Integer.class
        || type == long.class
        || type == Long.class
        || type == short.class) {
      return "an integer";
    }
    if (type == double.class || type == float.class || type == Double.class) {
      return "a number";
    }
    return "a " + type.getSimpleName().toLowerCase(Locale.ROOT);
  }

  /**
   * Whether {@code ex} says the client went away: Reactor Netty's {@code AbortedException}, a
   * connection reset or broken pipe, a closed channel. Not when the engine raised it: a {@link
   * FlashVecException} caused by a broken connection of the server's own (to etcd, to another node)
   * is the server's answer, not a client that left.
   */
  static boolean isClientAbort(Throwable ex) {
    for (Throwable c = ex; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof FlashVecException) {
        return false;
      }
      if (c instanceof AbortedException
          || c instanceof ClosedChannelException
          || DisconnectedClientHelper.isClientDisconnectedException(c)) {
        return true;
      }
    }
    return false;
  }

  /** Reactor's hook for errors raised after their subscriber was gone. */
  private static void dropped(Throwable e) {
    if (isClientAbort(e)) {
      LOG.debug("error after the client went away, dropped: {}", describe(e));
    } else {
      LOG.error("error after its request was finished, dropped", e);
    }
  }

  /** One line: the exception's type and message, and its root cause's, without a stack trace. */
  private static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == e ? e.toString() : e + " (cause: " + root + ")";
  }

  /** {@code body} with the data directory's path in it replaced by {@code <data-dir>}. */
  byte[] hidePaths(byte[] body) {
    String s = null;
    for (String p : hiddenPaths) {
      String text = s != null ? s : new String(body, StandardCharsets.UTF_8);
      if (text.contains(p)) {
        s = text.replace(p, "<data-dir>");
      }
    }
    return s == null ? body : s.getBytes(StandardCharsets.UTF_8);
  }

  private static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return type.cast(c);
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return null;
  }
}
