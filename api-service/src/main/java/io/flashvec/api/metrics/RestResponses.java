package io.flashvec.api.metrics;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.springframework.http.server.reactive.observation.ServerRequestObservationContext;
import org.springframework.stereotype.Component;

/**
 * The REST responses this server gave, by collection, endpoint ({@code "POST
 * /collections/{collection_name}/points/scroll"}, Qdrant's path variable names) and status: count,
 * total, shortest and longest duration and when the last one was sent. {@code GET /telemetry}
 * reports them as Qdrant's {@code requests.rest}, {@code GET /metrics} as Qdrant's {@code
 * rest_responses_*} counters and gauges ({@link RestResponseMetrics}).
 *
 * <p>Fed by the server request observation that also times {@code http_server_requests_seconds}:
 * the same requests, the same route templates. A request without a route (404 for an unknown path)
 * has no endpoint and is not kept. The collection is the route's {@code {name}} as in {@link
 * RequestObservationConvention}, {@code none} for routes without one and for 404s, so the number of
 * entries grows with the routes, statuses and collections clients use, not with what they probe.
 *
 * <p>Thread-safe; recording is a map lookup and a few atomic updates under the entry's lock.
 */
@Component
public class RestResponses implements ObservationHandler<ServerRequestObservationContext> {

  /** The collection of a response on a route that names none. */
  public static final String NONE = RequestObservationConvention.NONE;

  private static final String START = RestResponses.class.getName() + ".start";

  /** One collection, endpoint and status. */
  public record Key(String collection, String endpoint, int status) {}

  /** What was recorded for a {@link Key}; durations in microseconds. */
  public record Stats(
      long count, long totalMicros, long minMicros, long maxMicros, Instant lastResponded) {

    Stats plus(Stats o) {
      return new Stats(
          count + o.count,
          totalMicros + o.totalMicros,
          Math.min(minMicros, o.minMicros),
          Math.max(maxMicros, o.maxMicros),
          lastResponded.isAfter(o.lastResponded) ? lastResponded : o.lastResponded);
    }

    /** The mean duration in microseconds. */
    public double avgMicros() {
      return count == 0 ? 0 : (double) totalMicros / count;
    }
  }

  private static final class Entry {
    private long count;
    private long totalMicros;
    private long minMicros = Long.MAX_VALUE;
    private long maxMicros;
    private Instant last = Instant.EPOCH;

    synchronized void add(long micros, Instant at) {
      count++;
      totalMicros += micros;
      minMicros = Math.min(minMicros, micros);
      maxMicros = Math.max(maxMicros, micros);
      last = at;
    }

    synchronized Stats stats() {
      return new Stats(count, totalMicros, minMicros, maxMicros, last);
    }
  }

  private final Map<Key, Entry> entries = new ConcurrentHashMap<>();
  private final Clock clock;

  public RestResponses() {
    this(Clock.systemUTC());
  }

  RestResponses(Clock clock) {
    this.clock = clock;
  }

  /** Records one response of {@code endpoint} ({@code "METHOD /template"}). */
  public void record(String collection, String endpoint, int status, long micros) {
    entries
        .computeIfAbsent(new Key(collection, endpoint, status), k -> new Entry())
        .add(Math.max(0, micros), clock.instant());
  }

  /** Every endpoint and status over all collections: endpoint, then status, sorted. */
  public Map<String, Map<Integer, Stats>> byEndpoint() {
    Map<String, Map<Integer, Stats>> out = new TreeMap<>();
    forEach(
        (k, s) ->
            out.computeIfAbsent(k.endpoint(), e -> new TreeMap<>())
                .merge(k.status(), s, Stats::plus));
    return out;
  }

  /**
   * The responses of routes that name a collection: collection, then endpoint, then status, sorted.
   */
  public Map<String, Map<String, Map<Integer, Stats>>> byCollection() {
    Map<String, Map<String, Map<Integer, Stats>>> out = new TreeMap<>();
    forEach(
        (k, s) -> {
          if (!k.collection().equals(NONE)) {
            out.computeIfAbsent(k.collection(), c -> new TreeMap<>())
                .computeIfAbsent(k.endpoint(), e -> new TreeMap<>())
                .put(k.status(), s);
          }
        });
    return out;
  }

  private void forEach(BiConsumer<Key, Stats> f) {
    entries.forEach(
        (k, e) -> {
          Stats s = e.stats();
          if (s.count() > 0) {
            f.accept(k, s);
          }
        });
  }

  /** A route template with Qdrant's variable names: {@code {name}} is {@code {collection_name}}. */
  public static String qdrantTemplate(String uri) {
    return uri.replace("{name}", "{collection_name}").replace("{field}", "{field_name}");
  }

  @Override
  public boolean supportsContext(Observation.Context context) {
    return context instanceof ServerRequestObservationContext;
  }

  @Override
  public void onStart(ServerRequestObservationContext context) {
    context.put(START, System.nanoTime());
  }

  @Override
  public void onStop(ServerRequestObservationContext context) {
    Long start = context.get(START);
    String pattern = context.getPathPattern();
    var response = context.getResponse();
    if (start == null
        || pattern == null
        || response == null
        || response.getStatusCode() == null
        || context.getCarrier() == null) {
      return; // no route: nothing a client asked of an endpoint
    }
    int status = response.getStatusCode().value();
    String endpoint = context.getCarrier().getMethod().name() + " " + qdrantTemplate(pattern);
    record(
        RequestObservationConvention.collectionOf(context),
        endpoint,
        status,
        (System.nanoTime() - start) / 1000);
  }
}
