package io.flashvec.api.collections;

import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.api.web.ValidationException;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.cluster.SnapshotDescription;
import io.flashvec.index.InvalidInputException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.Resource;
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
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.BooleanNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Qdrant's collection snapshots: create, list, download and delete, and recover a collection from a
 * snapshot file given by location ({@code file:} or an {@code http(s)} URL on this host) or
 * uploaded as {@code multipart/form-data} (field {@code snapshot}). Recovering replaces the
 * collection of that name, or creates it.
 */
@RestController
public class SnapshotsController {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(SnapshotsController.class);

  /** The upload route, which takes a multipart body of any size. */
  public static final String UPLOAD_SUFFIX = "/snapshots/upload";

  private final CollectionService service;
  private final Blocking blocking;

  SnapshotsController(CollectionService service, Blocking blocking) {
    this.service = service;
    this.blocking = blocking;
  }

  @GetMapping("/collections/{name}/snapshots")
  Mono<ResponseEntity<byte[]>> list(@PathVariable String name) {
    return blocking.answer(
        () -> {
          ArrayNode arr = Json.array();
          for (SnapshotDescription d : service.listSnapshots(name)) {
            arr.add(describe(d));
          }
          return arr;
        });
  }

  /** With {@code wait=false} the snapshot is taken in the background and 202 comes at once. */
  @PostMapping("/collections/{name}/snapshots")
  Mono<ResponseEntity<byte[]>> create(
      @PathVariable String name, @RequestParam(defaultValue = "true") boolean wait) {
    if (wait) {
      return blocking.answer(() -> describe(service.createSnapshot(name)));
    }
    return blocking.call(
        () -> {
          CollectionNames.validate(name);
          service.describe(name); // 404 now for a missing collection
          Thread.ofVirtual()
              .name("flashvec-snapshot-" + name)
              .start(
                  () -> {
                    try {
                      service.createSnapshot(name);
                    } catch (RuntimeException e) {
                      LOG.error("snapshot failed [collection={}]", name, e);
                    }
                  });
          return accepted();
        });
  }

  @GetMapping("/collections/{name}/snapshots/{snapshot}")
  Mono<ResponseEntity<Resource>> download(
      @PathVariable String name, @PathVariable String snapshot) {
    return Mono.fromCallable(() -> file(service.snapshotFile(name, snapshot)));
  }

  /** A snapshot file as the body; the server sends it from the file. */
  static ResponseEntity<Resource> file(Path file) {
    return ResponseEntity.ok()
        .contentType(MediaType.APPLICATION_OCTET_STREAM)
        .header(
            HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"" + file.getFileName() + "\"")
        .body(new FileSystemResource(file));
  }

  @GetMapping("/snapshots")
  Mono<ResponseEntity<byte[]>> listFull() {
    return blocking.answer(
        () -> {
          ArrayNode arr = Json.array();
          for (SnapshotDescription d : service.listFullSnapshots()) {
            arr.add(describe(d));
          }
          return arr;
        });
  }

  /** A zip of one collection snapshot per collection; {@code wait=false} answers 202 at once. */
  @PostMapping("/snapshots")
  Mono<ResponseEntity<byte[]>> createFull(@RequestParam(defaultValue = "true") boolean wait) {
    if (wait) {
      return blocking.answer(() -> describe(service.createFullSnapshot()));
    }
    return blocking.call(
        () -> {
          Thread.ofVirtual()
              .name("flashvec-full-snapshot")
              .start(
                  () -> {
                    try {
                      service.createFullSnapshot();
                    } catch (RuntimeException e) {
                      LOG.error("full snapshot failed", e);
                    }
                  });
          return accepted();
        });
  }

  @GetMapping("/snapshots/{snapshot}")
  Mono<ResponseEntity<Resource>> downloadFull(@PathVariable String snapshot) {
    return Mono.fromCallable(() -> file(service.fullSnapshotFile(snapshot)));
  }

  @DeleteMapping("/snapshots/{snapshot}")
  Mono<ResponseEntity<byte[]>> deleteFull(
      @PathVariable String snapshot, @RequestParam(defaultValue = "true") boolean wait) {
    return blocking.call(
        () -> {
          long t0 = System.nanoTime();
          service.deleteFullSnapshot(snapshot);
          return wait ? Json.ok(BooleanNode.TRUE, t0) : accepted();
        });
  }

  /** Deleting is quick and done before the answer; {@code wait=false} answers 202 as Qdrant. */
  @DeleteMapping("/collections/{name}/snapshots/{snapshot}")
  Mono<ResponseEntity<byte[]>> delete(
      @PathVariable String name,
      @PathVariable String snapshot,
      @RequestParam(defaultValue = "true") boolean wait) {
    return blocking.call(
        () -> {
          long t0 = System.nanoTime();
          service.deleteSnapshot(name, snapshot);
          return wait ? Json.ok(BooleanNode.TRUE, t0) : accepted();
        });
  }

  static ResponseEntity<byte[]> accepted() {
    ObjectNode o = Json.object();
    o.putNull("result");
    o.put("status", "accepted");
    o.put("time", 0.0);
    return Json.raw(org.springframework.http.HttpStatus.ACCEPTED, o);
  }

  @PutMapping("/collections/{name}/snapshots/recover")
  Mono<ResponseEntity<byte[]>> recover(
      @PathVariable String name, @RequestBody(required = false) byte[] body) {
    return blocking.answer(
        () -> {
          CollectionNames.validate(name);
          JsonNode b = Json.parse(body);
          JsonNode location = b.get("location");
          if (location == null || !location.isString() || location.asString().isEmpty()) {
            throw Requests.invalid("recover needs `location`, a file or URL", "location", location);
          }
          String sum = checksum("JSON body", optionalString(b, "checksum"));
          checkPriority(optionalString(b, "priority"));
          String apiKey = optionalString(b, "api_key");
          String loc = location.asString();
          if (loc.regionMatches(true, 0, "file:", 0, 5)) {
            service.recoverSnapshot(name, filePath(loc), sum, true);
            return BooleanNode.TRUE;
          }
          Path file = fetch(loc, apiKey);
          try {
            service.recoverSnapshot(name, file, sum, false);
          } finally {
            Files.deleteIfExists(file);
          }
          return BooleanNode.TRUE;
        });
  }

  /**
   * Streams the multipart field {@code snapshot} of an upload into {@code tmp}; a body that is not
   * multipart, or has no such field, is a 400.
   */
  static Mono<Void> receive(Mono<FilePart> part, Path tmp) {
    return part.onErrorMap(
            org.springframework.core.codec.DecodingException.class,
            e ->
                new InvalidInputException(
                    "Wrong input: the upload is not a valid multipart/form-data body: "
                        + e.getMessage()))
        .switchIfEmpty(
            Mono.error(
                new InvalidInputException(
                    "Wrong input: the upload needs a multipart field `snapshot` with the file")))
        .flatMap(p -> p.transferTo(tmp));
  }

  @PostMapping(value = "/collections/{name}" + UPLOAD_SUFFIX)
  Mono<ResponseEntity<byte[]>> upload(
      @PathVariable String name,
      @RequestParam(required = false) String checksum,
      @RequestParam(required = false) String priority,
      @RequestPart(name = "snapshot", required = false) Mono<FilePart> part) {
    long t0 = System.nanoTime();
    return Mono.defer(
        () -> {
          CollectionNames.validate(name);
          checksum("query parameters", checksum);
          checkPriority(priority);
          Path tmp = tempFile();
          return SnapshotsController.receive(part, tmp)
              .then(
                  blocking.call(
                      () -> {
                        try {
                          service.recoverSnapshot(name, tmp, checksum, false);
                        } finally {
                          Files.deleteIfExists(tmp);
                        }
                        return Json.ok(BooleanNode.TRUE, t0);
                      }))
              .doOnError(e -> deleteQuietly(tmp));
        });
  }

  static String optionalString(JsonNode b, String field) {
    JsonNode n = b.get(field);
    if (n == null || n.isNull()) {
      return null;
    }
    if (!n.isString()) {
      throw Requests.invalid(field + " must be a string", field, n);
    }
    return n.asString();
  }

  /**
   * {@code value} if it is a SHA-256 in hex (or {@code null}), else Qdrant's 422 {@code
   * invalid_sha256_hash}, before any upload is read.
   *
   * @param where {@code JSON body} or {@code query parameters}
   */
  static String checksum(String where, String value) {
    if (value == null) {
      return null;
    }
    if (value.length() != 64) {
      throw new ValidationException(
          where,
          "checksum",
          "invalid_sha256_hash: expected 64 hex characters, got "
              + value.length()
              + " [checksum="
              + value
              + "]");
    }
    for (int i = 0; i < value.length(); i++) {
      if (Character.digit(value.charAt(i), 16) < 0) {
        throw new ValidationException(
            where,
            "checksum",
            "invalid_sha256_hash: invalid characters, expected 0-9, a-f, A-F [checksum="
                + value
                + "]");
      }
    }
    return value;
  }

  /** Qdrant's recovery priorities; a standalone server has one copy, so each means the same. */
  static void checkPriority(String p) {
    if (p != null && !p.equals("snapshot") && !p.equals("replica") && !p.equals("no_sync")) {
      throw new InvalidInputException(
          "Wrong input: priority must be snapshot, replica or no_sync [priority=" + p + "]");
    }
  }

  /**
   * The path of a {@code file:} location, as Qdrant reads it: absolute ({@code file:///p}) or on
   * {@code localhost}.
   */
  static Path filePath(String location) {
    URI uri;
    try {
      uri = URI.create(location);
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException(
          "Bad request: Invalid snapshot URI, file path must be absolute or on localhost");
    }
    String host = uri.getAuthority();
    if ((host != null && !host.isEmpty() && !host.equalsIgnoreCase("localhost"))
        || uri.getPath() == null
        || !uri.getPath().startsWith("/")) {
      throw new InvalidInputException(
          "Bad request: Invalid snapshot URI, file path must be absolute or on localhost");
    }
    return Path.of(uri.getPath());
  }

  /**
   * The snapshot at an {@code http(s)} URL on this host, downloaded to a temporary file. Other
   * hosts are refused: a server only reads from itself.
   *
   * @param apiKey sent as the {@code api-key} header, as Qdrant does ({@code null}: none)
   */
  static Path fetch(String location, String apiKey) {
    URI uri;
    try {
      uri = URI.create(location);
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException(
          "Wrong input: location is not a URL [location=" + location + "]");
    }
    String scheme =
        uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(java.util.Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new InvalidInputException(
          "Wrong input: location must be a file:, http: or https: URL [location=" + location + "]");
    }
    if (!loopback(uri.getHost())) {
      throw new InvalidInputException(
          "Wrong input: snapshots are recovered from this host only (file:, or http(s) on"
              + " localhost) [location="
              + location
              + "]");
    }
    Path tmp = tempFile();
    try (HttpClient http =
        HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(10))
            .followRedirects(HttpClient.Redirect.NEVER)
            .build()) {
      HttpRequest.Builder req = HttpRequest.newBuilder(uri).GET();
      if (apiKey != null) {
        req.header("api-key", apiKey);
      }
      HttpResponse<InputStream> r =
          http.send(req.build(), HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream in = r.body()) {
        if (r.statusCode() != 200) {
          throw new InvalidInputException(
              "Wrong input: cannot download the snapshot: HTTP "
                  + r.statusCode()
                  + " [location="
                  + location
                  + "]");
        }
        Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
      }
      return tmp;
    } catch (IOException e) {
      deleteQuietly(tmp);
      throw new InvalidInputException(
          "Wrong input: cannot download the snapshot: " + e + " [location=" + location + "]");
    } catch (InterruptedException e) {
      deleteQuietly(tmp);
      Thread.currentThread().interrupt();
      throw new InvalidInputException("Wrong input: snapshot download interrupted");
    } catch (RuntimeException e) {
      deleteQuietly(tmp);
      throw e;
    }
  }

  private static boolean loopback(String host) {
    if (host == null) {
      return false;
    }
    if (host.equalsIgnoreCase("localhost")) {
      return true;
    }
    try {
      // Only literal addresses are checked: a name other than localhost is not resolved.
      if (!host.matches("[0-9.]+|\\[?[0-9a-fA-F:]+\\]?")) {
        return false;
      }
      return InetAddress.getByName(host.replace("[", "").replace("]", "")).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  static Path tempFile() {
    try {
      return Files.createTempFile("flashvec-snapshot-", ".snapshot");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // a temporary file
    }
  }

  static ObjectNode describe(SnapshotDescription d) {
    ObjectNode o = Json.object();
    o.put("name", d.name());
    o.put("creation_time", d.creationTime());
    o.put("size", d.size());
    o.put("checksum", d.checksum());
    return o;
  }
}
