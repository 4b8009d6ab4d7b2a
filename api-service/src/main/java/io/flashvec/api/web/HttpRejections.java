package io.flashvec.api.web;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatusCode;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Counts and logs the requests the server refuses: {@code flashvec_http_rejected_total{reason=…}}
 * for every 4xx answer and for connections closed by the HTTP guards ({@link ConnectionGuard}).
 *
 * <p>Reasons: {@code bad_json} (malformed, duplicate key, lone surrogate), {@code bad_request} (a
 * wrong value), {@code unsupported_media_type}, {@code body_too_large}, {@code unauthorized},
 * {@code forbidden}, {@code not_found}, {@code method_not_allowed}, {@code conflict}, {@code
 * timeout} (the header or body of a request did not arrive in time), {@code too_many_connections},
 * {@code too_many_pipelined}, {@code malformed_http} (a request line or header Netty cannot
 * decode), {@code other_4xx}. Whoever refuses names the reason with {@link #reject}; an answer
 * without one is counted by its status.
 *
 * <p>Each refused request is logged in one line, without a stack trace: 400, 413 and 415 (the
 * client sent something wrong and will want to know what) and 401 and 403 (someone tried without
 * the right key) at INFO, the others at DEBUG, all under this class's logger. A client can send bad
 * requests as fast as the server answers them, so the log keeps at most {@value #LINES_PER_WINDOW}
 * lines per reason every {@value #WINDOW_SECONDS} seconds; the first line after a gap says how many
 * it left out. The counter counts them all.
 *
 * <p>As a web filter it is the outermost one: it sees every answer when it is committed, including
 * those written by {@link ErrorHandler} after the filter chain failed. Thread-safe.
 */
@Component
@Order(-400)
public class HttpRejections implements WebFilter {

  private static final Logger LOG = LoggerFactory.getLogger(HttpRejections.class);

  private static final String REASON = HttpRejections.class.getName() + ".reason";
  private static final String MESSAGE = HttpRejections.class.getName() + ".message";

  static final int LINES_PER_WINDOW = 20;
  static final int WINDOW_SECONDS = 10;

  private final MeterRegistry registry;
  private final ConcurrentMap<String, Counter> counters = new ConcurrentHashMap<>();
  private final LogLimiter limiter =
      new LogLimiter(LINES_PER_WINDOW, WINDOW_SECONDS * 1_000_000_000L, System::nanoTime);

  @Autowired
  public HttpRejections(ObjectProvider<MeterRegistry> registry) {
    this(registry.getIfAvailable(SimpleMeterRegistry::new));
  }

  HttpRejections(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Names why this exchange is refused, and the message its client gets, for the count and log. */
  public static void reject(ServerWebExchange exchange, String reason, String message) {
    exchange.getAttributes().put(REASON, reason);
    if (message != null) {
      exchange.getAttributes().put(MESSAGE, message);
    }
  }

  /** Counts one refusal that has no exchange (a connection closed by the server). */
  public void count(String reason) {
    counters
        .computeIfAbsent(
            reason,
            r ->
                Counter.builder("flashvec.http.rejected")
                    .description("Requests and connections the server refused, by reason")
                    .tag("reason", r)
                    .register(registry))
        .increment();
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    exchange
        .getResponse()
        .beforeCommit(
            () -> {
              HttpStatusCode status = exchange.getResponse().getStatusCode();
              if (status != null
                  && status.is4xxClientError()
                  && status.value() != ErrorHandler.CLIENT_CLOSED_REQUEST) {
                record(exchange, status.value());
              }
              return Mono.empty();
            });
    return chain.filter(exchange);
  }

  private void record(ServerWebExchange exchange, int status) {
    String reason = exchange.getAttribute(REASON);
    if (reason == null) {
      reason = reasonOf(status);
    }
    count(reason);
    boolean info =
        status == 400 || status == 401 || status == 403 || status == 413 || status == 415;
    long left;
    if ((info ? LOG.isInfoEnabled() : LOG.isDebugEnabled())
        && (left = limiter.admit(reason)) >= 0) {
      String message = exchange.getAttribute(MESSAGE);
      String line = "rejected [status={}, reason={}, method={}, path={}, remote={}]: {}{}";
      Object[] args = {
        status,
        reason,
        exchange.getRequest().getMethod(),
        exchange.getRequest().getPath().value(),
        exchange.getRequest().getRemoteAddress(),
        message == null ? "" : abbreviate(message),
        left == 0 ? "" : " (" + left + " more " + reason + " rejections not logged before this one)"
      };
      if (info) {
        LOG.info(line, args);
      } else {
        LOG.debug(line, args);
      }
    }
  }

  static String reasonOf(int status) {
    return switch (status) {
      case 400 -> "bad_request";
      case 401 -> "unauthorized";
      case 403 -> "forbidden";
      case 404 -> "not_found";
      case 405 -> "method_not_allowed";
      case 408 -> "timeout";
      case 409 -> "conflict";
      case 413 -> "body_too_large";
      case 415 -> "unsupported_media_type";
      default -> "other_4xx";
    };
  }

  private static String abbreviate(String s) {
    return s.length() > 300 ? s.substring(0, 297) + "..." : s;
  }
}
