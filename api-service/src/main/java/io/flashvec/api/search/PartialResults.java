package io.flashvec.api.search;

import io.flashvec.api.web.Json;
import org.springframework.http.ResponseEntity;
import tools.jackson.databind.node.ObjectNode;

/**
 * Marks a search response whose result misses some shards (cluster mode, a shard without a live
 * replica): {@code "partial": true} beside {@code result} and the header {@value #HEADER}{@code :
 * true}. A result is never silently partial.
 */
final class PartialResults {

  static final String HEADER = "x-flashvec-partial";

  private PartialResults() {}

  static ResponseEntity<byte[]> mark(ResponseEntity<byte[]> complete) {
    ObjectNode body = (ObjectNode) Json.parse(complete.getBody());
    body.put("partial", true);
    ResponseEntity<byte[]> raw = Json.raw(org.springframework.http.HttpStatus.OK, body);
    return ResponseEntity.status(raw.getStatusCode())
        .headers(raw.getHeaders())
        .header(HEADER, "true")
        .body(raw.getBody());
  }
}
