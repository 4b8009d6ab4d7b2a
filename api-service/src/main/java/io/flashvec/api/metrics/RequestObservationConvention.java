package io.flashvec.api.metrics;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import java.util.Map;
import org.springframework.http.server.reactive.observation.DefaultServerRequestObservationConvention;
import org.springframework.http.server.reactive.observation.ServerRequestObservationContext;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.HandlerMapping;

/**
 * Request metrics ({@code http_server_requests_seconds}) carry the collection a request names, so a
 * dashboard can show the rate, latency and errors of each collection: the {@code name} (or {@code
 * collection_name}) path variable of a {@code /collections/…} route, or {@code none}.
 *
 * <p>The label's cardinality is the number of collections (and aliases) clients name. A request
 * that the server refused as not found names a collection that does not exist, so it counts under
 * {@code none}: a client probing random names cannot grow the series without bound.
 */
@Component
public class RequestObservationConvention extends DefaultServerRequestObservationConvention {

  static final String NONE = "none";

  @Override
  public KeyValues getLowCardinalityKeyValues(ServerRequestObservationContext context) {
    return super.getLowCardinalityKeyValues(context).and(collection(context));
  }

  static KeyValue collection(ServerRequestObservationContext context) {
    return KeyValue.of("collection", collectionOf(context));
  }

  static String collectionOf(ServerRequestObservationContext context) {
    String pattern = context.getPathPattern();
    if (pattern == null || !pattern.startsWith("/collections/{")) {
      return NONE;
    }
    var response = context.getResponse();
    if (response != null
        && response.getStatusCode() != null
        && response.getStatusCode().value() == 404) {
      return NONE;
    }
    Object vars = context.getAttributes().get(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
    if (vars instanceof Map<?, ?> m) {
      Object name = m.get("name");
      if (name == null) {
        name = m.get("collection_name");
      }
      if (name instanceof String s && !s.isEmpty()) {
        return s;
      }
    }
    return NONE;
  }
}
