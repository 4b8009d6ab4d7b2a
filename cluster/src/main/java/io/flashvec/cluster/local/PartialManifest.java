package io.flashvec.cluster.local;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.shard.ShardManifest;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The manifests of Qdrant's partial shard snapshots over FlashVec's shard files: which sealed
 * segments a shard has and a version of each of their files, in Qdrant's shape:
 *
 * <pre>
 * {"seg-0000000003": {"segment_id": "seg-0000000003", "segment_version": 812,
 *                     "file_versions": {"graph.fvs": 4411..., "deleted.fvs": 9021...}}}
 * </pre>
 *
 * <p>A segment's files are immutable once written or replaced whole by a rename, so a file's
 * version is a fingerprint of its content: the first 63 bits of its SHA-256 (not an operation
 * number, as in Qdrant: segment ids are numbered per shard, so only the content tells whether two
 * shards hold the same file). {@code segment_version} is the WAL sequence number the shard's
 * segments cover ({@link ShardManifest#checkpointSeq}). A partial snapshot leaves out each file the
 * client's manifest names at its current version; recovering it takes those files from the shard
 * recovered into, which must still hold each at that version.
 */
final class PartialManifest {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private PartialManifest() {}

  /** The manifest of a shard's files ({@code shardDir}, a copy no one writes to). */
  static ObjectNode of(Path shardDir) throws IOException {
    long version = ShardManifest.read(FileIO.DEFAULT, shardDir).checkpointSeq();
    ObjectNode out = JSON.createObjectNode();
    for (Path seg : segments(shardDir)) {
      String id = seg.getFileName().toString();
      ObjectNode m = out.putObject(id);
      m.put("segment_id", id);
      m.put("segment_version", version);
      ObjectNode files = m.putObject("file_versions");
      for (Path f : files(seg)) {
        files.put(relative(seg, f), fingerprint(f));
      }
    }
    return out;
  }

  /**
   * A client's manifest: segment id to file to version; a file without a numeric version (Qdrant's
   * {@code null}) is left out, so the snapshot holds it. Anything but Qdrant's shape is a 400
   * naming the offending part.
   */
  static Map<String, Map<String, Long>> parse(JsonNode manifest) {
    if (manifest == null || !manifest.isObject()) {
      throw new InvalidInputException(
          "Wrong input: the body must be a shard's snapshot manifest, an object of segments (as"
              + " GET /collections/{name}/shards/{shard}/snapshot/partial/manifest gives it)");
    }
    Map<String, Map<String, Long>> out = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : manifest.properties()) {
      JsonNode versions = e.getValue() == null ? null : e.getValue().get("file_versions");
      if (versions == null || !versions.isObject()) {
        throw new InvalidInputException(
            "Wrong input: manifest segment `"
                + e.getKey()
                + "` has no `file_versions` object [segment="
                + e.getKey()
                + "]");
      }
      Map<String, Long> files = new TreeMap<>();
      for (Map.Entry<String, JsonNode> f : versions.properties()) {
        JsonNode v = f.getValue();
        if (v != null && v.isIntegralNumber() && v.canConvertToLong()) {
          files.put(f.getKey(), v.longValue());
        } else if (v != null && !v.isNull()) {
          throw new InvalidInputException(
              "Wrong input: manifest file version must be an integer or null [file="
                  + e.getKey()
                  + "/"
                  + f.getKey()
                  + ", version="
                  + v
                  + "]");
        }
      }
      out.put(e.getKey(), files);
    }
    return out;
  }

  /**
   * Deletes from a shard copy ({@code shardDir}) the segment files {@code base} names at their
   * version and returns them, segment id to file to version.
   */
  static Map<String, Map<String, Long>> omit(Path shardDir, Map<String, Map<String, Long>> base)
      throws IOException {
    Map<String, Map<String, Long>> omitted = new TreeMap<>();
    for (Path seg : segments(shardDir)) {
      String id = seg.getFileName().toString();
      Map<String, Long> known = base.get(id);
      if (known == null) {
        continue;
      }
      for (Path f : files(seg)) {
        String name = relative(seg, f);
        Long v = known.get(name);
        if (v != null) {
          long actual = fingerprint(f);
          if (actual == v) {
            Files.delete(f);
            omitted.computeIfAbsent(id, k -> new TreeMap<>()).put(name, actual);
          }
        }
      }
    }
    return omitted;
  }

  /**
   * Completes an unpacked partial snapshot ({@code prepared}) with the files it left out ({@code
   * omitted}, as {@link #omit} gave them), hard-linked from the shard recovered into ({@code live},
   * closed meanwhile). Each must be there at its version: else a 400 naming the first that is not,
   * {@code live} untouched.
   */
  static void fill(Path prepared, Path live, JsonNode omitted) throws IOException {
    List<Path[]> links = new ArrayList<>();
    for (Map.Entry<String, JsonNode> seg : omitted.properties()) {
      for (Map.Entry<String, JsonNode> f : seg.getValue().properties()) {
        String rel = "segments/" + seg.getKey() + "/" + f.getKey();
        Path src = live.resolve(rel).normalize();
        Path dst = prepared.resolve(rel).normalize();
        if (!src.startsWith(live.resolve("segments")) || !dst.startsWith(prepared)) {
          throw new InvalidInputException(
              "Wrong input: not a FlashVec partial snapshot: omitted file outside the shard ["
                  + rel
                  + "]");
        }
        if (!Files.isRegularFile(src) || fingerprint(src) != f.getValue().asLong()) {
          throw new InvalidInputException(
              "Wrong input: the shard does not hold "
                  + rel
                  + " as it was when the partial snapshot's manifest was read (it changed or is"
                  + " gone since); take a new partial snapshot against the shard's current"
                  + " manifest, or recover a full shard snapshot");
        }
        links.add(new Path[] {src, dst});
      }
    }
    for (Path[] l : links) {
      Files.createDirectories(l[1].getParent());
      try {
        Files.createLink(l[1], l[0]);
      } catch (UnsupportedOperationException | IOException e) {
        Files.copy(l[0], l[1]);
      }
    }
  }

  /** A file's version: the first 63 bits of its SHA-256. */
  static long fingerprint(Path file) throws IOException {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buf = new byte[1 << 16];
      int n;
      while ((n = in.read(buf)) > 0) {
        sha.update(buf, 0, n);
      }
    }
    byte[] d = sha.digest();
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (d[i] & 0xff);
    }
    return v & Long.MAX_VALUE;
  }

  private static List<Path> segments(Path shardDir) throws IOException {
    Path dir = shardDir.resolve("segments");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(Files::isDirectory).sorted().toList();
    }
  }

  private static List<Path> files(Path seg) throws IOException {
    try (Stream<Path> s = Files.walk(seg)) {
      return s.filter(Files::isRegularFile).sorted().toList();
    }
  }

  private static String relative(Path seg, Path f) {
    return seg.relativize(f).toString().replace('\\', '/');
  }
}
