package io.flashvec.api.web;

import io.flashvec.index.FlashVecException;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.DiskFullException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * The one place that turns exceptions into Qdrant-style error responses {@code {"status": {"error":
 * "…"}, "time": s}} with the right status: {@link FlashVecException}s carry theirs, oversized
 * bodies are 413, Spring's routing and binding errors keep their status, anything else is a 500
 * that is logged.
 */
@Component
@Order(-2)
public class ErrorHandler implements WebExceptionHandler {

  private static final Logger LOG = LoggerFactory.getLogger(ErrorHandler.class);

  @Override
  public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
    if (exchange.getResponse().isCommitted()) {
      return Mono.error(ex);
    }
    ResponseEntity<byte[]> r = toResponse(ex, exchange);
    var response = exchange.getResponse();
    response.setStatusCode(r.getStatusCode());
    response.getHeaders().putAll(r.getHeaders());
    Mono<Void> write = response.writeWith(Mono.just(response.bufferFactory().wrap(r.getBody())));
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
   * validation (a point id, a distance name) are written without it.
   */
  static String qdrantKind(FlashVecException e) {
    String m = e.getMessage();
    String prefix =
        switch (e.httpStatus()) {
          case 400 -> "Wrong input: ";
          case 404 -> "Not found: ";
          default -> null;
        };
    return prefix == null || m.startsWith(prefix) ? m : prefix + m;
  }

  static ResponseEntity<byte[]> toResponse(Throwable ex, ServerWebExchange exchange) {
    long t0 = System.nanoTime();
    if (ex instanceof FlashVecException fe) {
      return Json.error(HttpStatus.valueOf(fe.httpStatus()), qdrantKind(fe), t0);
    }
    DataBufferLimitException limit = findCause(ex, DataBufferLimitException.class);
    if (limit != null) {
      return Json.error(
          HttpStatus.CONTENT_TOO_LARGE,
          "Payload too large: request body exceeds the limit [" + limit.getMessage() + "]",
          t0);
    }
    if (ex instanceof CorruptFileException ce) {
      LOG.error("corrupt data [path={}]", exchange.getRequest().getPath(), ce);
      return Json.error(
          HttpStatus.INTERNAL_SERVER_ERROR, "Service internal error: " + ce.getMessage(), t0);
    }
    if (DiskFullException.isDiskFull(ex)) {
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
      String reason = rse.getReason() != null ? rse.getReason() : code.toString();
      if (code.value() == 404) {
        reason =
            "Not found: no such endpoint [method="
                + exchange.getRequest().getMethod()
                + ", path="
                + exchange.getRequest().getPath()
                + "]";
      } else if (code.value() == 400) {
        Throwable cause = rse.getMostSpecificCause();
        reason = "Wrong input: " + reason + (cause != rse ? " (" + cause.getMessage() + ")" : "");
      }
      return Json.error(HttpStatus.valueOf(code.value()), reason, t0);
    }
    LOG.error(
        "request failed [method={}, path={}]",
        exchange.getRequest().getMethod(),
        exchange.getRequest().getPath(),
        ex);
    return Json.error(HttpStatus.INTERNAL_SERVER_ERROR, "Service internal error: " + ex, t0);
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
