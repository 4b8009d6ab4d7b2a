package io.flashvec.cluster.metadata;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.storage.AtomicFiles;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Metadata in one JSON file, {@code <data>/meta/collections.json}, rewritten atomically (temp file,
 * fsync, rename, fsync directory) on every change, so a crash leaves the old or the new version.
 * Format:
 *
 * <pre>
 * {"format_version": 1,
 *  "collections": [{"name": "docs", "created_at": 1732250000000,
 *                   "config": {"size": 768, "distance": "Cosine", "shard_number": 1,
 *                              "replication_factor": 1,
 *                              "index": {"type": "diskann", "max_degree": 64,
 *                                        "build_search_list": 100, "alpha": 1.2,
 *                                        "pq_subspaces": 0}},
 *                   "tuning": {"indexing_threshold": -1, "wal_fsync_policy": null}}],
 *  "aliases": [{"alias_name": "prod", "collection_name": "docs"}]}
 * </pre>
 *
 * <p>Aliases live in the same file as the collections they name, so that deleting a collection and
 * its aliases is one write; a file without {@code "aliases"} (written before they existed) has
 * none.
 */
public final class LocalMetadataStore implements MetadataStore {

  static final int FORMAT_VERSION = 1;
  private static final ObjectMapper JSON = JsonMapper.builder().build();

  private final FileIO io;
  private final Path file;
  private final Map<String, CollectionMeta> collections = new TreeMap<>();

  /** Alias to collection; immutable, replaced as a whole, read without the lock. */
  private volatile Map<String, String> aliases = Map.of();

  public LocalMetadataStore(Path dataDir, FileIO io) {
    this.io = io;
    this.file = dataDir.resolve("meta").resolve("collections.json");
    load();
  }

  private void load() {
    try {
      AtomicFiles.removeStaleTemp(io, file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove a stale temp file [file=" + file + "]", e);
    }
    if (!Files.exists(file)) {
      return;
    }
    JsonNode root;
    try {
      root = JSON.readTree(io.readAllBytes(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read metadata [file=" + file + "]", e);
    } catch (JacksonException e) {
      throw new CorruptFileException("metadata is not valid JSON", file, e);
    }
    int version = root.path("format_version").asInt(-1);
    if (version != FORMAT_VERSION) {
      throw new CorruptFileException(
          "unsupported metadata format version [version="
              + version
              + ", supported="
              + FORMAT_VERSION
              + "]",
          file);
    }
    for (JsonNode c : root.path("collections")) {
      CollectionMeta m = CollectionMetaJson.read(c);
      collections.put(m.name(), m);
    }
    Map<String, String> a = new TreeMap<>();
    for (JsonNode alias : root.path("aliases")) {
      a.put(alias.path("alias_name").asString(), alias.path("collection_name").asString());
    }
    aliases = Map.copyOf(a);
  }

  /** Writes the collections and {@code aliasesToWrite}. */
  private void save(Map<String, String> aliasesToWrite) {
    ObjectNode root = JSON.createObjectNode();
    root.put("format_version", FORMAT_VERSION);
    ArrayNode arr = root.putArray("collections");
    for (CollectionMeta m : collections.values()) {
      CollectionMetaJson.write(m, arr.addObject());
    }
    ArrayNode al = root.putArray("aliases");
    new TreeMap<>(aliasesToWrite)
        .forEach((alias, c) -> al.addObject().put("alias_name", alias).put("collection_name", c));
    try {
      AtomicFiles.write(io, file, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write metadata [file=" + file + "]", e);
    }
  }

  @Override
  public synchronized List<CollectionMeta> list() {
    return new ArrayList<>(collections.values());
  }

  @Override
  public synchronized Optional<CollectionMeta> get(String name) {
    return Optional.ofNullable(collections.get(name));
  }

  @Override
  public synchronized boolean createIfAbsent(CollectionMeta meta) {
    if (collections.containsKey(meta.name())) {
      return false;
    }
    return change(meta.name(), meta, aliases);
  }

  @Override
  public synchronized boolean updateTuning(String name, CollectionTuning tuning) {
    CollectionMeta old = collections.get(name);
    if (old == null) {
      return false;
    }
    return change(
        name, new CollectionMeta(name, old.config(), old.createdAtMillis(), tuning), aliases);
  }

  @Override
  public synchronized boolean updateConfig(String name, CollectionConfig config) {
    CollectionMeta old = collections.get(name);
    if (old == null) {
      return false;
    }
    return change(
        name, new CollectionMeta(name, config, old.createdAtMillis(), old.tuning()), aliases);
  }

  /** Removes a collection and its aliases in one write; false if it did not exist. */
  @Override
  public synchronized boolean remove(String name) {
    if (!collections.containsKey(name)) {
      return false;
    }
    Map<String, String> next = new TreeMap<>(aliases);
    next.values().removeIf(name::equals);
    change(name, null, next);
    aliases = Map.copyOf(next);
    return true;
  }

  /** Alias to collection name. */
  public Map<String, String> aliases() {
    return aliases;
  }

  /** Replaces every alias with {@code next} in one durable write. */
  public synchronized void replaceAliases(Map<String, String> next) {
    Map<String, String> copy = Map.copyOf(next);
    save(copy);
    aliases = copy; // visible once durable
  }

  /**
   * Replaces collection {@code name}'s entry by {@code next} ({@code null}: removes it) and saves
   * the file with {@code aliasesToWrite}; if the save fails, the entry is put back as it was.
   * Returns true.
   */
  private boolean change(String name, CollectionMeta next, Map<String, String> aliasesToWrite) {
    CollectionMeta before = next == null ? collections.remove(name) : collections.put(name, next);
    try {
      save(aliasesToWrite);
    } catch (RuntimeException e) {
      if (before == null) {
        collections.remove(name);
      } else {
        collections.put(name, before);
      }
      throw e;
    }
    return true;
  }

  @Override
  public void close() {}
}
