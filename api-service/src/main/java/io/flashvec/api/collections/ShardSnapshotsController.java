package io.flashvec.api.collections;

import static io.flashvec.api.collections.SnapshotsController.accepted;
import static io.flashvec.api.collections.SnapshotsController.checkPriority;
import static io.flashvec.api.collections.SnapshotsController.checksum;
import static io.flashvec.api.collections.SnapshotsController.deleteQuietly;
import static io.flashvec.api.collections.SnapshotsController.describe;
import static io.flashvec.api.collections.SnapshotsController.optionalString;
import static io.flashvec.api.collections.SnapshotsController.tempFile;

import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.SnapshotDescription;
import io.flashvec.index.InvalidInputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.springframework.core.io.Resource;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.multipart.FilePart;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.BooleanNode;

/**
 * Qdrant's shard snapshots: create, list, download and delete a snapshot of one shard of a
 * collection, and replace that shard of an existing collection from a shard snapshot given by
 * location ({@code file:}, an {@code http(s)} URL on this host, or the name of one of the shard's
 * snapshots) or uploaded as {@code multipart/form-data} (field {@code snapshot}). A shard id the
 * collection does not have is Qdrant's 404 {@code shard <id> not found}.
 */
@RestController
public class ShardSnapshotsController {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(ShardSnapshotsController.class);

  private static final String BASE = "/collections/{name}/shards/{shard}/snapshots";

  private final CollectionService service;
  private final Blocking blocking;

  ShardSnapshotsController(CollectionService service, Blocking blocking) {
    this.service = service;
    this.blocking = blocking;
  }

  /** A shard id: a non-negative integer, else 400 naming it. */
  static int shardId(String shard) {
    try {
      int id = Integer.parseInt(shard);
      if (id >= 0) {
        return id;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new InvalidInputException(
        "Wrong input: a shard id is a non-negative integer [shard=" + shard + "]");
  }

  @GetMapping(BASE)
  Mono<ResponseEntity<byte[]>> list(@PathVariable String name, @PathVariable String shard) {
    return blocking.answer(
        () -> {
          ArrayNode arr = Json.array();
          for (SnapshotDescription d : service.listShardSnapshots(name, shardId(shard))) {
            arr.add(describe(d));
          }
          return arr;
        });
  }

  /** With {@code wait=false} the snapshot is taken in the background and 202 comes at once. */
  @PostMapping(BASE)
  Mono<ResponseEntity<byte[]>> create(
      @PathVariable String name,
      @PathVariable String shard,
      @RequestParam(defaultValue = "true") boolean wait) {
    if (wait) {
      return blocking.answer(() -> describe(service.createShardSnapshot(name, shardId(shard))));
    }
    return blocking.call(
        () -> {
          int id = shardId(shard);
          service.listShardSnapshots(name, id); // 404 now for a missing collection or shard
          background("shard snapshot", name, id, () -> service.createShardSnapshot(name, id), null);
          return accepted();
        });
  }

  @GetMapping(BASE + "/{snapshot}")
  Mono<ResponseEntity<Resource>> download(
      @PathVariable String name, @PathVariable String shard, @PathVariable String snapshot) {
    return Mono.fromCallable(
        () -> SnapshotsController.file(service.shardSnapshotFile(name, shardId(shard), snapshot)));
  }

  /** Deleting is quick and done before the answer; {@code wait=false} answers 202 as Qdrant. */
  @DeleteMapping(BASE + "/{snapshot}")
  Mono<ResponseEntity<byte[]>> delete(
      @PathVariable String name,
      @PathVariable String shard,
      @PathVariable String snapshot,
      @RequestParam(defaultValue = "true") boolean wait) {
    return blocking.call(
        () -> {
          long t0 = System.nanoTime();
          service.deleteShardSnapshot(name, shardId(shard), snapshot);
          return wait ? Json.ok(BooleanNode.TRUE, t0) : accepted();
        });
  }

  /**
   * Replaces the shard from {@code location}: a {@code file:} URL inside the snapshots directory,
   * an {@code http(s)} URL on this host (fetched with {@code api_key} as the {@code api-key}
   * header, if given), or the name of one of this shard's snapshots. With {@code wait=false} the
   * location is checked, 202 answered, and the shard recovered in the background.
   */
  @PutMapping(BASE + "/recover")
  Mono<ResponseEntity<byte[]>> recover(
      @PathVariable String name,
      @PathVariable String shard,
      @RequestParam(defaultValue = "true") boolean wait,
      @RequestBody(required = false) byte[] body) {
    return blocking.call(
        () -> {
          long t0 = System.nanoTime();
          CollectionNames.validate(name);
          int id = shardId(shard);
          JsonNode b = Json.parse(body);
          JsonNode location = b.get("location");
          if (location == null || !location.isString() || location.asString().isEmpty()) {
            throw Requests.invalid("recover needs `location`, a file or URL", "location", location);
          }
          String sum = checksum("JSON body", optionalString(b, "checksum"));
          checkPriority(optionalString(b, "priority"));
          String apiKey = optionalString(b, "api_key");
          String loc = location.asString();
          service.listShardSnapshots(name, id); // 404 for a missing collection or shard first
          Callable<Object> work;
          Path cleanup = null;
          if (loc.regionMatches(true, 0, "file:", 0, 5)) {
            Path p = SnapshotsController.filePath(loc);
            work = () -> recover(name, id, p, sum, true);
          } else if (loc.regionMatches(true, 0, "http:", 0, 5)
              || loc.regionMatches(true, 0, "https:", 0, 6)) {
            Path file = SnapshotsController.fetch(loc, apiKey);
            cleanup = file;
            work = () -> recover(name, id, file, sum, false);
          } else if (!loc.contains(":")) {
            // Qdrant's path location: the name of one of this shard's snapshots
            Path p = service.shardSnapshotFile(name, id, loc);
            work = () -> recover(name, id, p, sum, true);
          } else {
            throw new InvalidInputException(
                "Wrong input: location must be a file:, http: or https: URL or a snapshot name"
                    + " [location="
                    + loc
                    + "]");
          }
          if (!wait) {
            background("shard recovery", name, id, work, cleanup);
            return accepted();
          }
          try {
            work.call();
          } finally {
            if (cleanup != null) {
              Files.deleteIfExists(cleanup);
            }
          }
          return Json.ok(BooleanNode.TRUE, t0);
        });
  }

  private Object recover(String name, int shard, Path file, String sum, boolean named) {
    service.recoverShardSnapshot(name, shard, file, sum, named);
    return Boolean.TRUE;
  }

  /**
   * Replaces the shard with the uploaded snapshot. A malformed {@code checksum} is refused (422)
   * before the upload is read.
   */
  @PostMapping(BASE + "/upload")
  Mono<ResponseEntity<byte[]>> upload(
      @PathVariable String name,
      @PathVariable String shard,
      @RequestParam(required = false) String checksum,
      @RequestParam(required = false) String priority,
      @RequestParam(defaultValue = "true") boolean wait,
      @RequestPart(name = "snapshot", required = false) Mono<FilePart> part) {
    return recoverUpload(
        "shard recovery",
        name,
        shard,
        checksum,
        priority,
        wait,
        part,
        (id, tmp) -> service.recoverShardSnapshot(name, id, tmp, checksum, false));
  }

  /** Recovers shard {@code id} from the upload in {@code tmp}. */
  @FunctionalInterface
  private interface Recovery {
    void recover(int id, Path tmp) throws Exception;
  }

  /**
   * Receives an upload into a temp file and recovers the shard from it, in the background with
   * {@code wait=false} (202), the temp file deleted either way. A malformed {@code checksum} is
   * refused (422) before the upload is read.
   */
  private Mono<ResponseEntity<byte[]>> recoverUpload(
      String what,
      String name,
      String shard,
      String checksum,
      String priority,
      boolean wait,
      Mono<FilePart> part,
      Recovery recovery) {
    long t0 = System.nanoTime();
    return Mono.defer(
        () -> {
          CollectionNames.validate(name);
          int id = shardId(shard);
          checksum("query parameters", checksum);
          checkPriority(priority);
          Path tmp = tempFile();
          return SnapshotsController.receive(part, tmp)
              .then(
                  blocking.call(
                      () -> {
                        if (!wait) {
                          service.listShardSnapshots(name, id); // 404 before the 202
                          background(
                              what,
                              name,
                              id,
                              () -> {
                                recovery.recover(id, tmp);
                                return Boolean.TRUE;
                              },
                              tmp);
                          return accepted();
                        }
                        try {
                          recovery.recover(id, tmp);
                        } finally {
                          Files.deleteIfExists(tmp);
                        }
                        return Json.ok(BooleanNode.TRUE, t0);
                      }))
              .doOnError(e -> deleteQuietly(tmp));
        });
  }

  // ---- Partial shard snapshots ----

  private static final String PARTIAL = "/collections/{name}/shards/{shard}/snapshot/partial";

  /**
   * The shard's manifest: its sealed segments and a version (a content fingerprint) of each of
   * their files, to send to the server a partial snapshot is taken from.
   */
  @GetMapping(PARTIAL + "/manifest")
  Mono<ResponseEntity<byte[]>> manifest(@PathVariable String name, @PathVariable String shard) {
    return blocking.answer(() -> service.partialShardManifest(name, shardId(shard)));
  }

  /**
   * Streams a partial snapshot of the shard: a shard snapshot without the segment files the body (a
   * manifest of the shard it is to be recovered onto) names at their current version.
   */
  @PostMapping(PARTIAL + "/create")
  Mono<ResponseEntity<Flux<DataBuffer>>> createPartial(
      @PathVariable String name,
      @PathVariable String shard,
      @RequestBody(required = false) byte[] body) {
    return blocking.supply(
        () -> {
          CollectionNames.validate(name);
          int id = shardId(shard);
          JsonNode manifest = Json.parse(body);
          Path tmp = tempFile();
          try {
            service.createPartialShardSnapshot(name, id, manifest, tmp);
          } catch (RuntimeException e) {
            deleteQuietly(tmp);
            throw e;
          }
          Flux<DataBuffer> data =
              DataBufferUtils.read(tmp, DefaultDataBufferFactory.sharedInstance, 1 << 16)
                  .doFinally(signal -> deleteQuietly(tmp));
          return ResponseEntity.ok()
              .contentType(MediaType.APPLICATION_OCTET_STREAM)
              .header(
                  HttpHeaders.CONTENT_DISPOSITION,
                  "attachment; filename=\"" + name + "-shard-" + id + "-partial.snapshot\"")
              .body(data);
        });
  }

  /**
   * Replaces the shard with an uploaded partial snapshot of it ({@code multipart/form-data}, field
   * {@code snapshot}), the files it leaves out taken from the shard itself. A malformed {@code
   * checksum} is refused (422) before the upload is read.
   */
  @PostMapping(PARTIAL + "/recover")
  Mono<ResponseEntity<byte[]>> recoverPartial(
      @PathVariable String name,
      @PathVariable String shard,
      @RequestParam(required = false) String checksum,
      @RequestParam(required = false) String priority,
      @RequestParam(defaultValue = "true") boolean wait,
      @RequestPart(name = "snapshot", required = false) Mono<FilePart> part) {
    return recoverUpload(
        "partial shard recovery",
        name,
        shard,
        checksum,
        priority,
        wait,
        part,
        (id, tmp) -> service.recoverPartialShardSnapshot(name, id, tmp, checksum));
  }

  /**
   * Qdrant's recovery of a partial snapshot fetched from another peer: refused, since a FlashVec
   * server never fetches from another machine (ADR 0030); the client moves it instead (manifest
   * here, {@code partial/create} there, {@code partial/recover} here).
   */
  @PostMapping(PARTIAL + "/recover_from")
  Mono<ResponseEntity<byte[]>> recoverPartialFrom(
      @PathVariable String name, @PathVariable String shard) {
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          service.listShardSnapshots(name, shardId(shard)); // 404 for a missing collection or shard
          throw new InvalidInputException(
              "Wrong input: recover_from is not supported: a FlashVec server does not fetch"
                  + " snapshots from other machines; read this shard's manifest"
                  + " (GET .../snapshot/partial/manifest), post it to the other server's"
                  + " .../snapshot/partial/create and upload the result to"
                  + " .../snapshot/partial/recover");
        });
  }

  /** Runs {@code work} on its own thread, logging a failure; deletes {@code cleanup} after. */
  private static void background(
      String what, String collection, int shard, Callable<?> work, Path cleanup) {
    Thread.ofVirtual()
        .name("flashvec-" + what.replace(' ', '-') + "-" + collection)
        .start(
            () -> {
              try {
                work.call();
              } catch (Exception e) {
                LOG.error("{} failed [collection={}, shard={}]", what, collection, shard, e);
              } finally {
                if (cleanup != null) {
                  deleteQuietly(cleanup);
                }
              }
            });
  }
}
