package io.flashvec.api.web;

import io.flashvec.cluster.node.EngineThreads;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Runs the live-graph insert a search left to its thread ({@link EngineThreads#runAssistedInsert})
 * once the exchange has completed, that is, after the response was written to the connection (ADR
 * 0017). Searches run on the event loop, so the insert runs there between two requests and never
 * preempts one. The outermost filter, so nothing of the exchange is still to come; a no-op for
 * every other request.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class IndexAssistFilter implements WebFilter {

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    return chain.filter(exchange).doFinally(signal -> EngineThreads.runAssistedInsert());
  }
}
