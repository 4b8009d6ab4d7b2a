package io.flashvec.api.system;

import io.flashvec.api.web.Json;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.node.FlashVecNode;
import java.util.Set;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** Version info ({@code GET /}, which Qdrant clients call at start-up), liveness and readiness. */
@RestController
public class SystemController {

  static final String VERSION = "0.1.0";

  /** The service the REST layer uses: standalone engine or, in cluster mode, the proxy. */
  private final CollectionService service;

  /** The node: why its recovery failed, and which collections failed to open. */
  private final FlashVecNode node;

  SystemController(CollectionService service, FlashVecNode node) {
    this.service = service;
    this.node = node;
  }

  @GetMapping("/")
  ResponseEntity<byte[]> root() {
    ObjectNode o = Json.object();
    o.put("title", "flashvec - vector search engine");
    o.put("version", VERSION);
    return Json.raw(HttpStatus.OK, o);
  }

  /** Liveness: the process serves HTTP. */
  @GetMapping({"/healthz", "/livez"})
  ResponseEntity<byte[]> healthz() {
    ObjectNode o = Json.object();
    o.put("title", "healthz check passed");
    return Json.raw(HttpStatus.OK, o);
  }

  /**
   * Readiness: WAL recovery finished and every collection opened. A collection that could not be
   * opened (a corrupt file, say) keeps the server unready, named under {@code failed_collections},
   * until it is repaired or deleted: its requests would fail. The reason is in its own answers
   * ({@code GET /collections/{name}}, authenticated) and the log, not in this unauthenticated
   * probe.
   */
  @GetMapping("/readyz")
  ResponseEntity<byte[]> readyz() {
    ObjectNode o = Json.object();
    if (service.ready()) {
      Set<String> failed = node.failedCollections().keySet();
      if (!failed.isEmpty()) {
        o.put(
            "title",
            "collections failed to open: "
                + String.join(", ", failed)
                + "; GET /collections/{name} says why");
        ArrayNode names = o.putArray("failed_collections");
        failed.forEach(names::add);
        return Json.raw(HttpStatus.SERVICE_UNAVAILABLE, o);
      }
      o.put("title", "all shards are ready");
      return Json.raw(HttpStatus.OK, o);
    }
    Throwable f = node.failure();
    // the cause (an exception, a file's path) is in the server log, not in an unauthenticated probe
    o.put(
        "title",
        f == null
            ? "recovering write-ahead logs"
            : "recovery failed; the server log has the details");
    return Json.raw(HttpStatus.SERVICE_UNAVAILABLE, o);
  }
}
