package io.flashvec.api.web;

import io.flashvec.cluster.CollectionService;
import io.flashvec.index.InvalidInputException;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Qdrant's query parameters {@code timeout} and {@code consistency} on the collection routes,
 * honoured or refused, never ignored.
 *
 * <ul>
 *   <li>{@code timeout} (whole seconds, at least 1): the request answers 408 when its work has not
 *       finished by then ({@link Blocking#bounded}); 422 for 0, as Qdrant.
 *   <li>{@code consistency} ({@code 1}, another number, {@code majority}, {@code quorum}, {@code
 *       all}): FlashVec reads one replica, so every value reads the same where a collection has one
 *       copy of each shard (a standalone server, or {@code replication_factor} 1) and is accepted
 *       there; elsewhere only {@code 1} is, and the others are refused with 400.
 *   <li>{@code ordering} of writes ({@code weak}, {@code medium}, {@code strong}): every write to a
 *       shard goes through its primary in one order (ADR 0019), which is {@code strong} and so
 *       meets the other two; any other value is refused with 400, as Qdrant does.
 * </ul>
 */
@Component
@Order(-80)
public class ReadParamsFilter implements WebFilter {

  private static final String PREFIX = "/collections/";
  private static final Set<String> LEVELS = Set.of("majority", "quorum", "all");
  private static final Set<String> ORDERINGS = Set.of("weak", "medium", "strong");

  private final org.springframework.beans.factory.ObjectProvider<CollectionService> services;
  private final org.springframework.beans.factory.ObjectProvider<
          io.flashvec.api.collections.StrictModeGuard>
      strict;

  /**
   * {@code services}: the REST layer's service, absent in web slices without one; {@code strict}
   * checks a timeout against the collection's strict mode ({@code max_timeout}).
   */
  public ReadParamsFilter(
      org.springframework.beans.factory.ObjectProvider<CollectionService> services,
      org.springframework.beans.factory.ObjectProvider<io.flashvec.api.collections.StrictModeGuard>
          strict) {
    this.services = services;
    this.strict = strict;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    String path = exchange.getRequest().getPath().value();
    if (!path.startsWith(PREFIX)) {
      return chain.filter(exchange);
    }
    var query = exchange.getRequest().getQueryParams();
    String timeout = query.getFirst("timeout");
    String consistency = query.getFirst("consistency");
    String ordering = query.getFirst("ordering");
    if (ordering != null && !ORDERINGS.contains(ordering)) {
      return Mono.error(
          new InvalidInputException(
              "Wrong input: ordering must be weak, medium or strong [ordering=" + ordering + "]"));
    }
    if (timeout == null && consistency == null) {
      return chain.filter(exchange);
    }
    Duration t;
    try {
      t = timeout == null ? null : timeout(timeout);
    } catch (RuntimeException e) {
      return Mono.error(e);
    }
    Mono<Void> next =
        consistency == null
            ? chain.filter(exchange)
            : consistency(path, consistency).then(Mono.defer(() -> chain.filter(exchange)));
    var guard = strict.getIfAvailable();
    if (t != null && guard != null) {
      String name = collection(path);
      long seconds = t.toSeconds();
      Mono<Void> checked = next;
      next =
          Mono.fromRunnable(() -> guard.checkTimeout(name, seconds))
              .subscribeOn(Schedulers.boundedElastic())
              .then(Mono.defer(() -> checked));
    }
    return t == null ? next : next.contextWrite(ctx -> ctx.put(Blocking.TIMEOUT, t));
  }

  /** The collection name of a {@code /collections/{name}...} path. */
  private static String collection(String path) {
    int end = path.indexOf('/', PREFIX.length());
    return path.substring(PREFIX.length(), end < 0 ? path.length() : end);
  }

  static Duration timeout(String value) {
    long seconds;
    try {
      seconds = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new InvalidInputException(
          "Wrong input: timeout must be a whole number of seconds [timeout=" + value + "]");
    }
    if (seconds < 1) {
      throw new ValidationException(
          "query parameters", "timeout", "value " + seconds + " invalid, must be 1 or larger");
    }
    return Duration.ofSeconds(Math.min(seconds, 1L << 32));
  }

  /** Checks {@code value} against the collection of {@code path} (off the event loop). */
  private Mono<Void> consistency(String path, String value) {
    String level = value.trim().toLowerCase(Locale.ROOT);
    boolean one;
    if (LEVELS.contains(level)) {
      one = false;
    } else {
      long n;
      try {
        n = Long.parseLong(level);
      } catch (NumberFormatException e) {
        return Mono.error(
            new InvalidInputException(
                "Wrong input: consistency must be a number of replicas, majority, quorum or all"
                    + " [consistency="
                    + value
                    + "]"));
      }
      if (n < 1) {
        return Mono.error(
            new ValidationException(
                "query parameters", "consistency", "value " + n + " invalid, must be 1 or larger"));
      }
      one = n == 1;
    }
    CollectionService service = services.getIfAvailable();
    if (one || service == null || service.peers() == null) {
      return Mono.empty(); // one replica asked for, or a standalone server: one copy of each shard
    }
    String name = collection(path);
    return Mono.fromCallable(() -> service.describe(name).config().replicationFactor())
        .subscribeOn(Schedulers.boundedElastic())
        .flatMap(
            rf ->
                rf == 1
                    ? Mono.<Void>empty()
                    : Mono.error(
                        new InvalidInputException(
                            "Wrong input: consistency: only 1 is supported on a collection with"
                                + " replication_factor "
                                + rf
                                + ": a read goes to one replica, and to the next when it fails"
                                + " [consistency="
                                + value
                                + "]")));
  }
}
