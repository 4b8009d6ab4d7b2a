package io.flashvec.api.metrics;

import io.flashvec.index.InvalidInputException;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * {@code GET /metrics}: Micrometer's Prometheus scrape (every meter of the server, ADR 0033) and
 * Qdrant's {@code rest_responses_*} series ({@link RestResponseMetrics}), summed over collections,
 * or by collection with {@code per_collection=true} as Qdrant's parameter asks. The OpenMetrics
 * format when the {@code Accept} header asks for it; {@code includedNames} (comma-separated sample
 * names) keeps only those, as the actuator endpoint this replaces. Qdrant's {@code timeout} is
 * checked (the scrape answers at once); its {@code anonymize=true} is refused.
 */
@RestController
public class MetricsController {

  static final String TEXT = "text/plain; version=0.0.4; charset=utf-8";
  static final String OPEN_METRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";

  private final PrometheusMeterRegistry registry;
  private final RestResponses responses;
  private final EngineMetrics engine;

  MetricsController(
      PrometheusMeterRegistry registry,
      RestResponses responses,
      org.springframework.beans.factory.ObjectProvider<EngineMetrics> engine) {
    this.registry = registry;
    this.responses = responses;
    // absent on a node without a local engine (a cluster proxy)
    this.engine = engine.getIfAvailable();
  }

  @GetMapping("/metrics")
  Mono<ResponseEntity<byte[]>> metrics(
      @RequestParam(name = "per_collection", required = false) Boolean perCollection,
      @RequestParam(name = "includedNames", required = false) String includedNames,
      @RequestParam(required = false) Boolean anonymize,
      @RequestParam(required = false) Integer timeout,
      @RequestHeader(name = HttpHeaders.ACCEPT, required = false) String accept) {
    if (Boolean.TRUE.equals(anonymize)) {
      return Mono.error(
          new InvalidInputException(
              "Wrong input: anonymize is not supported by /metrics (names and figures are"
                  + " exported as they are) [anonymize=true]"));
    }
    if (timeout != null && timeout < 1) {
      return Mono.error(
          new InvalidInputException(
              "Wrong input: timeout must be 1 or more [timeout=" + timeout + "]"));
    }
    boolean open = accept != null && accept.contains("application/openmetrics-text");
    Set<String> names =
        includedNames == null || includedNames.isBlank()
            ? null
            : Arrays.stream(includedNames.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .collect(Collectors.toSet());
    return Mono.fromCallable(
            () -> {
              String type = open ? OPEN_METRICS : TEXT;
              if (engine != null) {
                // collections created since the last refresh, so that they show at once
                engine.refresh();
              }
              String body =
                  scrape(
                      registry.scrape(type, names),
                      RestResponseMetrics.render(
                          responses, Boolean.TRUE.equals(perCollection), open, names),
                      open);
              return ResponseEntity.ok()
                  .contentType(MediaType.parseMediaType(type))
                  .body(body.getBytes(StandardCharsets.UTF_8));
            })
        .subscribeOn(Schedulers.boundedElastic());
  }

  /** The registry's scrape with {@code extra} added (before OpenMetrics' closing {@code # EOF}). */
  static String scrape(String scraped, String extra, boolean openMetrics) {
    if (extra.isEmpty()) {
      return scraped;
    }
    if (openMetrics) {
      int eof = scraped.lastIndexOf("# EOF");
      if (eof >= 0) {
        return scraped.substring(0, eof) + extra + scraped.substring(eof);
      }
    }
    return scraped + extra;
  }
}
