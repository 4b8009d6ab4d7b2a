package io.flashvec.api.search;

import java.util.function.BiFunction;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The hot search routes ({@code POST …/points/search}, {@code …/search/batch}, {@code …/query} and
 * {@code …/query/batch}) as functional routes in front of {@link SearchController}'s handlers.
 *
 * <p>A warm search of data in memory costs a few hundred microseconds of CPU, and an annotated
 * handler method added a fixed cost of the same order to each request: its arguments are resolved
 * by looking up resolvers and annotations per parameter, a binding context is made per request, and
 * its {@code ResponseEntity} goes through content negotiation to find the writer of a {@code
 * byte[]}. Routed here, a request is matched by its path, its body read by the same codec (and the
 * same size limit), handed to the same handler, and its bytes written straight to the response.
 * Filters, error handling ({@code web.ErrorHandler}) and request metrics see the same exchange as
 * before (the route's pattern and path variables are set as the annotated mapping sets them).
 *
 * <p>The controller keeps its annotated mappings: they document the operations (OpenAPI) and answer
 * what these routes do not match, such as another method on the same path (a 404 "no such
 * endpoint", as before).
 */
@Configuration(proxyBeanMethods = false)
public class SearchRoutes {

  private static final byte[] EMPTY = new byte[0];

  @Bean
  RouterFunction<ServerResponse> hotSearchRoutes(SearchController c) {
    return RouterFunctions.route()
        .POST("/collections/{name}/points/search", r -> serve(r, c::search))
        .POST("/collections/{name}/points/search/batch", r -> serve(r, c::searchBatch))
        .POST("/collections/{name}/points/query", r -> serve(r, c::query))
        .POST("/collections/{name}/points/query/batch", r -> serve(r, c::queryBatch))
        .build();
  }

  /**
   * Reads the body (an absent one as empty: the handlers refuse it or take {@code {}} as before),
   * runs {@code handler} and writes its answer.
   */
  static Mono<ServerResponse> serve(
      ServerRequest request, BiFunction<String, byte[], Mono<ResponseEntity<byte[]>>> handler) {
    String name = request.pathVariable("name");
    return request
        .bodyToMono(byte[].class)
        .defaultIfEmpty(EMPTY)
        .flatMap(body -> handler.apply(name, body))
        .flatMap(SearchRoutes::response);
  }

  /** {@code entity} as a response that writes its bytes without looking for a message writer. */
  static Mono<ServerResponse> response(ResponseEntity<byte[]> entity) {
    byte[] body = entity.getBody();
    return ServerResponse.status(entity.getStatusCode())
        .headers(h -> h.addAll(entity.getHeaders()))
        .build(
            (exchange, context) ->
                exchange
                    .getResponse()
                    .writeWith(Mono.just(exchange.getResponse().bufferFactory().wrap(body))));
  }
}
