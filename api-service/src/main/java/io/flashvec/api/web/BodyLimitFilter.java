package io.flashvec.api.web;

import io.flashvec.api.FlashVecProperties;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Rejects a request whose declared {@code Content-Length} passes {@code
 * flashvec.limits.max-body-bytes} with 413 before reading it. Bodies without a length (chunked) are
 * cut off by the codec limit, which {@link ErrorHandler} also maps to 413. A snapshot upload
 * streams to a file and has no limit.
 */
@Component
@Order(-100)
public class BodyLimitFilter implements WebFilter {

  private final long maxBytes;

  public BodyLimitFilter(FlashVecProperties props) {
    this.maxBytes = props.limits().maxBodyBytes().toBytes();
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    long len = exchange.getRequest().getHeaders().getContentLength();
    if (len > maxBytes
        && !ContentTypeFilter.isSnapshotUpload(exchange.getRequest().getPath().value())) {
      return Json.writeError(
          exchange,
          HttpStatus.CONTENT_TOO_LARGE,
          "Payload too large: request body exceeds the limit [bytes="
              + len
              + ", max="
              + maxBytes
              + "]");
    }
    return chain.filter(exchange);
  }
}
