package io.flashvec.api.web;

import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Notes whether a request's body was read, so that a request answered without reading it (a bad
 * query parameter, no such route or method, a missing API key) has it read before the answer
 * ({@link #drainIfUnread}). Answering first left the body in the connection, and Reactor Netty
 * cancelled the next request on that keep-alive connection: its client waited for an answer that
 * never came (seen with qdrant-client after a 405, and with a 400 for {@code wait=maybe}).
 * Outermost filter, so that every other one sees the decorated request.
 */
@Component
@Order(-300)
public class UnreadBodyFilter implements WebFilter {

  private static final String STATE = UnreadBodyFilter.class.getName() + ".state";

  /** A request's body: {@code UNREAD}, {@code READ} (by a handler) or {@code DRAINED} (by us). */
  private static final int UNREAD = 0;

  private static final int READ = 1;
  private static final int DRAINED = 2;

  private record Body(AtomicInteger state, ServerHttpRequest raw) {}

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    Body body = new Body(new AtomicInteger(UNREAD), exchange.getRequest());
    exchange.getAttributes().put(STATE, body);
    ServerHttpRequest request =
        new ServerHttpRequestDecorator(body.raw()) {
          @Override
          public Flux<DataBuffer> getBody() {
            // drained: a reader that comes after the answer (Spring resolves a handler's
            // arguments together, and a bad parameter answers before the body's turn) finds it
            // empty instead of being refused by Reactor Netty
            return Flux.defer(
                () ->
                    body.state().get() == DRAINED
                        ? Flux.empty()
                        : super.getBody()
                            .doOnSubscribe(s -> body.state().compareAndSet(UNREAD, READ)));
          }
        };
    return chain.filter(exchange.mutate().request(request).build());
  }

  /** Reads and drops what the request's body still holds, unless something read it already. */
  static Mono<Void> drainIfUnread(ServerWebExchange exchange) {
    Body body = exchange.getAttribute(STATE);
    if (body == null || !body.state().compareAndSet(UNREAD, DRAINED)) {
      return Mono.empty();
    }
    return body.raw()
        .getBody()
        .doOnNext(DataBufferUtils::release)
        .then()
        .onErrorResume(e -> Mono.empty());
  }
}
