package io.flashvec.api.system;

import io.flashvec.api.web.Json;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.node.FlashVecNode;
import java.util.Set;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.node.ObjectNode;

/**
 * Version info ({@code GET /}, which Qdrant clients call at start-up), liveness and readiness, in
 * Qdrant's shapes.
 */
@RestController
public class SystemController {

  /** FlashVec's own version. */
  static final String VERSION = "0.1.0";

  /**
   * The version of Qdrant's REST API that FlashVec follows, answered as {@code version} by {@code
   * GET /}: Qdrant's clients compare it with their own and warn when the major versions differ or
   * the minor ones by more than one. FlashVec's own version is {@code flashvec_version}.
   */
  static final String QDRANT_API_VERSION = "1.19.0";

  private static final String NOT_READY = "some shards are not ready: ";

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
    o.put("version", QDRANT_API_VERSION);
    o.put("flashvec_version", VERSION);
    return Json.raw(HttpStatus.OK, o);
  }

  /** Liveness: the process serves HTTP. Qdrant's plain-text answer. */
  @GetMapping({"/healthz", "/livez"})
  ResponseEntity<String> healthz() {
    return text(HttpStatus.OK, "healthz check passed");
  }

  /**
   * Readiness: WAL recovery finished and every collection opened, {@code all shards are ready} as
   * Qdrant answers it; else 503 {@code some shards are not ready: } and why. A collection that
   * could not be opened (a corrupt file, say) keeps the server unready, named here, until it is
   * repaired or deleted: its requests would fail. The reason is in its own answers ({@code GET
   * /collections/{name}}, authenticated) and the log, not in this unauthenticated probe.
   */
  @GetMapping("/readyz")
  ResponseEntity<String> readyz() {
    if (service.ready()) {
      Set<String> failed = node.failedCollections().keySet();
      if (!failed.isEmpty()) {
        return text(
            HttpStatus.SERVICE_UNAVAILABLE,
            NOT_READY
                + "collections failed to open: "
                + String.join(", ", failed)
                + "; GET /collections/{name} says why");
      }
      return text(HttpStatus.OK, "all shards are ready");
    }
    Throwable f = node.failure();
    // the cause (an exception, a file's path) is in the server log, not in an unauthenticated probe
    return text(
        HttpStatus.SERVICE_UNAVAILABLE,
        NOT_READY
            + (f == null
                ? "recovering write-ahead logs"
                : "recovery failed; the server log has the details"));
  }

  private static ResponseEntity<String> text(HttpStatus status, String body) {
    return ResponseEntity.status(status)
        .contentType(new MediaType(MediaType.TEXT_PLAIN, java.nio.charset.StandardCharsets.UTF_8))
        .body(body);
  }
}
