package io.flashvec.cluster.local;

import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.SnapshotDescription;
import io.flashvec.cluster.metadata.CollectionMetaJson;
import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.shard.Shard;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Collection snapshots of a standalone server: one file per snapshot under {@code
 * <data-dir>/snapshots/<collection>/}, with its SHA-256 beside it ({@code .sha256}).
 *
 * <p>A snapshot is a zip of the collection's metadata ({@code collection.json}) and its files as
 * {@link Collection#copyFiles} copies them: each shard as of one WAL position, taken while writes
 * go on (they wait only while the files are hard-linked). Restoring unpacks it next to the
 * collections, checks it, and swaps it in with {@link DataDirectory#restore}; the restored shards
 * replay their WAL as after a crash, so the collection answers as the original did when the
 * snapshot was taken.
 */
public final class CollectionSnapshots {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final String META = "collection.json";
  private static final String FILES = "collection/";
  private static final String SUFFIX = ".snapshot";
  private static final String CHECKSUM = ".sha256";
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,255}");
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyy-MM-dd-HH-mm-ss-SSS", java.util.Locale.ROOT)
          .withZone(ZoneOffset.UTC);

  private final DataDirectory<Collection> dir;
  private final Path root;

  public CollectionSnapshots(DataDirectory<Collection> dir) {
    this.dir = dir;
    this.root = dir.dataDir().resolve("snapshots");
    // What a crash left behind: staging copies, unpacked restores, unfinished snapshot files.
    try (Stream<Path> s = Files.list(dir.dataDir())) {
      for (Path p : s.toList()) {
        String n = p.getFileName().toString();
        if (n.startsWith(".snapshot-") || n.startsWith(".restore-")) {
          deleteTree(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (Files.isDirectory(root)) {
      try (Stream<Path> s = Files.walk(root)) {
        for (Path p : s.filter(f -> f.toString().endsWith(SUFFIX + ".tmp")).toList()) {
          Files.deleteIfExists(p);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** Takes a snapshot of {@code collection}. */
  public SnapshotDescription create(String collection, Collection c) {
    Path folder = root.resolve(collection);
    // A file name has at most 255 bytes: a long collection name is cut (the folder names it).
    String prefix = collection.length() > 200 ? collection.substring(0, 200) : collection;
    String name = prefix + "-" + STAMP.format(Instant.now()) + SUFFIX;
    return publish(folder, name, out -> writeCollection(collection, c, out));
  }

  /**
   * Takes a full snapshot: a zip holding one collection snapshot per collection ({@code
   * <name>.snapshot}), each recoverable on its own.
   */
  public SnapshotDescription createFull(java.util.Map<String, Collection> collections) {
    String name = "full-snapshot-" + STAMP.format(Instant.now()) + SUFFIX;
    return publish(
        fullRoot(),
        name,
        out -> {
          ZipOutputStream zip = new ZipOutputStream(out);
          zip.setLevel(Deflater.NO_COMPRESSION); // the entries are zips already
          for (var e : new java.util.TreeMap<>(collections).entrySet()) {
            zip.putNextEntry(new ZipEntry(e.getKey() + SUFFIX));
            writeCollection(e.getKey(), e.getValue(), new NonClosing(zip));
            zip.closeEntry();
          }
          zip.finish();
        });
  }

  /** Writes a snapshot file: a temporary file, synced, its checksum, then the rename. */
  private SnapshotDescription publish(Path folder, String name, Writer writer) {
    try {
      Files.createDirectories(folder);
      Path tmp = folder.resolve(name + ".tmp");
      MessageDigest sha = sha256();
      try (OutputStream out =
          new DigestOutputStream(
              Files.newOutputStream(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
              sha)) {
        writer.write(out);
      } catch (IOException | RuntimeException e) {
        Files.deleteIfExists(tmp);
        throw e;
      }
      fsync(tmp);
      String checksum = HexFormat.of().formatHex(sha.digest());
      Files.writeString(folder.resolve(name + CHECKSUM), checksum);
      Files.move(tmp, folder.resolve(name), StandardCopyOption.ATOMIC_MOVE);
      return describe(folder.resolve(name));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write snapshot " + name + ": " + e.getMessage(), e);
    }
  }

  @FunctionalInterface
  private interface Writer {
    void write(OutputStream out) throws IOException;
  }

  /** Zips {@code c}'s metadata and files, as of now, into {@code out} (left open). */
  private void writeCollection(String collection, Collection c, OutputStream out)
      throws IOException {
    CollectionMeta meta =
        dir.meta(collection)
            .orElseThrow(
                () ->
                    new NotFoundException(
                        "Not found: Collection `" + collection + "` doesn't exist!"));
    Path staging = dir.dataDir().resolve(".snapshot-" + UUID.randomUUID());
    try {
      Path base = staging.resolve("collection");
      c.copyFiles(base);
      ZipOutputStream zip = new ZipOutputStream(new NonClosing(out));
      zip.setLevel(Deflater.BEST_SPEED);
      ObjectNode m = JSON.createObjectNode();
      CollectionMetaJson.write(meta, m);
      zip.putNextEntry(new ZipEntry(META));
      zip.write(JSON.writeValueAsBytes(m));
      zip.closeEntry();
      List<Path> files;
      try (Stream<Path> s = Files.walk(base)) {
        files = s.filter(Files::isRegularFile).sorted().toList();
      }
      for (Path f : files) {
        zip.putNextEntry(new ZipEntry(FILES + base.relativize(f).toString().replace('\\', '/')));
        Files.copy(f, zip);
        zip.closeEntry();
      }
      zip.finish();
    } finally {
      deleteTree(staging);
    }
  }

  /** A stream whose {@code close} leaves the stream under it open. */
  private static final class NonClosing extends java.io.FilterOutputStream {
    NonClosing(OutputStream out) {
      super(out);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }

    @Override
    public void close() throws IOException {
      flush();
    }
  }

  /**
   * Where full snapshots live: a folder no collection can be named after (collection names do not
   * start with a dot), so they never clash with a collection's folder.
   */
  private Path fullRoot() {
    return root.resolve(".full");
  }

  /** The full snapshots, oldest first. */
  public List<SnapshotDescription> listFull() {
    List<SnapshotDescription> out = new ArrayList<>();
    if (!Files.isDirectory(fullRoot())) {
      return out;
    }
    try (Stream<Path> s = Files.list(fullRoot())) {
      for (Path p :
          s.filter(f -> Files.isRegularFile(f) && f.getFileName().toString().endsWith(SUFFIX))
              .toList()) {
        out.add(describe(p));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    out.sort(
        Comparator.comparing(SnapshotDescription::creationTime)
            .thenComparing(SnapshotDescription::name));
    return out;
  }

  /** The file of a full snapshot, or Qdrant's 404. */
  public Path fullFile(String name) {
    Path p =
        NAME.matcher(name).matches() && name.endsWith(SUFFIX) ? fullRoot().resolve(name) : null;
    if (p == null || !Files.isRegularFile(p)) {
      throw new NotFoundException("Not found: Snapshot " + name + " not found");
    }
    return p;
  }

  /** Deletes a full snapshot (and its checksum), or Qdrant's 404. */
  public void deleteFull(String name) {
    Path p = fullFile(name);
    try {
      Files.deleteIfExists(p.resolveSibling(name + CHECKSUM));
      Files.delete(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The snapshots of {@code collection}, oldest first. */
  public List<SnapshotDescription> list(String collection) {
    CollectionNames.validate(collection);
    return listFolder(root.resolve(collection));
  }

  private List<SnapshotDescription> listFolder(Path folder) {
    List<SnapshotDescription> out = new ArrayList<>();
    if (!Files.isDirectory(folder)) {
      return out;
    }
    try (Stream<Path> s = Files.list(folder)) {
      for (Path p :
          s.filter(f -> Files.isRegularFile(f) && f.getFileName().toString().endsWith(SUFFIX))
              .toList()) {
        out.add(describe(p));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    out.sort(
        Comparator.comparing(SnapshotDescription::creationTime)
            .thenComparing(SnapshotDescription::name));
    return out;
  }

  /** The file of a snapshot, or Qdrant's 404. */
  public Path file(String collection, String name) {
    CollectionNames.validate(collection);
    if (!NAME.matcher(name).matches() || !name.endsWith(SUFFIX)) {
      throw new NotFoundException("Not found: Snapshot " + name + " not found");
    }
    Path p = root.resolve(collection).resolve(name);
    if (!Files.isRegularFile(p)) {
      throw new NotFoundException(
          "Not found: Snapshot " + name + " of collection " + collection + " not found");
    }
    return p;
  }

  /** Deletes a snapshot (and its checksum), or Qdrant's 404. */
  public void delete(String collection, String name) {
    Path p = file(collection, name);
    try {
      Files.deleteIfExists(p.resolveSibling(name + CHECKSUM));
      Files.delete(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A snapshot file a client names by path ({@code file:} locations): it must be inside the
   * snapshots directory, so that a client cannot have the server read any other file.
   */
  public Path named(Path requested) {
    Path p = requested.toAbsolutePath().normalize();
    if (!Files.isRegularFile(p)) {
      throw new InvalidInputException(
          "Bad request: Snapshot file \"" + requested + "\" does not exist");
    }
    if (!p.startsWith(root.toAbsolutePath().normalize())) {
      throw new io.flashvec.index.ForbiddenException(
          "Forbidden: Snapshot file path must be inside the snapshots directory ("
              + root.toAbsolutePath().normalize()
              + ") [path="
              + requested
              + "]");
    }
    return p;
  }

  /**
   * Replaces (or creates) {@code collection} with the snapshot in {@code file}, after checking it
   * against {@code checksum} (a SHA-256 in hex; {@code null}: not checked).
   */
  public Collection recover(String collection, Path file, String checksum) {
    CollectionNames.validate(collection);
    checkChecksum(file, checksum);
    Path unpacked = dir.dataDir().resolve(".restore-" + UUID.randomUUID());
    try {
      CollectionMeta meta = unpack(file, unpacked);
      Path files = unpacked.resolve("collection");
      if (!Files.isDirectory(files)) {
        throw new InvalidInputException(
            "Wrong input: not a FlashVec collection snapshot: it holds no collection files");
      }
      CollectionMeta renamed =
          new CollectionMeta(collection, meta.config(), System.currentTimeMillis(), meta.tuning());
      return dir.restore(renamed, files);
    } finally {
      deleteTree(unpacked);
    }
  }

  // ---- Shard snapshots ----

  /** The entry marking a shard snapshot: {@code {"shard_id": i, "shard_number": n}}. */
  private static final String SHARD_META = "shard.json";

  private static final String SHARD_FILES = "shard/";

  private Path shardFolder(String collection, int shard) {
    return root.resolve(collection).resolve("shards").resolve(Integer.toString(shard));
  }

  /**
   * Takes a snapshot of shard {@code shard} of {@code collection}: the collection's metadata, a
   * marker naming the shard, and the shard's files as {@link Shard#copyFiles} copies them (one WAL
   * position, taken under the shard's write lock).
   */
  public SnapshotDescription createShard(String collection, Collection c, int shard) {
    Shard s = requireShard(c, shard);
    CollectionMeta meta = requireMeta(collection);
    String prefix = collection.length() > 180 ? collection.substring(0, 180) : collection;
    String name = prefix + "-shard-" + shard + "-" + STAMP.format(Instant.now()) + SUFFIX;
    return publish(
        shardFolder(collection, shard), name, out -> writeShard(out, meta, c, shard, s, null));
  }

  /**
   * Zips a shard snapshot into {@code out} (left open): the collection's metadata, the shard marker
   * and the shard's files as {@link Shard#copyFiles} copies them. With {@code base} (a partial
   * snapshot, {@link PartialManifest}) the segment files whose version {@code base} names are left
   * out and listed in the marker's {@code omitted}.
   */
  private void writeShard(
      OutputStream out,
      CollectionMeta meta,
      Collection c,
      int shard,
      Shard s,
      java.util.Map<String, java.util.Map<String, Long>> base)
      throws IOException {
    Path staging = dir.dataDir().resolve(".snapshot-" + UUID.randomUUID());
    try {
      Path files = staging.resolve("shard");
      s.copyFiles(files);
      ObjectNode marker = JSON.createObjectNode();
      marker.put("shard_id", shard);
      marker.put("shard_number", c.config().shardNumber());
      if (base != null) {
        ObjectNode omitted = marker.putObject("omitted");
        for (var e : PartialManifest.omit(files, base).entrySet()) {
          ObjectNode seg = omitted.putObject(e.getKey());
          e.getValue().forEach(seg::put);
        }
      }
      ZipOutputStream zip = new ZipOutputStream(new NonClosing(out));
      zip.setLevel(Deflater.BEST_SPEED);
      ObjectNode m = JSON.createObjectNode();
      CollectionMetaJson.write(meta, m);
      zip.putNextEntry(new ZipEntry(META));
      zip.write(JSON.writeValueAsBytes(m));
      zip.closeEntry();
      zip.putNextEntry(new ZipEntry(SHARD_META));
      zip.write(JSON.writeValueAsBytes(marker));
      zip.closeEntry();
      zipTree(zip, files, SHARD_FILES);
      zip.finish();
    } finally {
      deleteTree(staging);
    }
  }

  // ---- Partial shard snapshots ----

  /**
   * The manifest of shard {@code shard} of {@code c} as of now ({@link PartialManifest}): its
   * committed segments and a version of each of their files, read from a copy taken under the
   * shard's write lock.
   */
  public ObjectNode partialManifest(Collection c, int shard) {
    Shard s = requireShard(c, shard);
    Path staging = dir.dataDir().resolve(".snapshot-" + UUID.randomUUID());
    try {
      Path files = staging.resolve("shard");
      s.copyFiles(files);
      return PartialManifest.of(files);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      deleteTree(staging);
    }
  }

  /**
   * Writes into {@code target} a partial snapshot of shard {@code shard} of {@code collection}: a
   * shard snapshot without the segment files {@code manifest} (a shard's manifest, as {@link
   * #partialManifest} gives it) names at their current version. It is recovered onto a shard that
   * still has those files ({@link #recoverPartialShard}).
   */
  public void createPartialShard(
      String collection, Collection c, int shard, JsonNode manifest, Path target) {
    Shard s = requireShard(c, shard);
    CollectionMeta meta = requireMeta(collection);
    var base = PartialManifest.parse(manifest);
    try (OutputStream out = Files.newOutputStream(target)) {
      writeShard(out, meta, c, shard, s, base);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Shard {@code shard} of {@code c}, or Qdrant's 404 {@code shard <id> not found}. */
  static Shard requireShard(Collection c, int shard) {
    if (shard < 0 || shard >= c.shards().size()) {
      throw shardNotFound(shard);
    }
    return c.shards().get(shard);
  }

  /** Qdrant's 404 for a shard id the collection does not have. */
  public static NotFoundException shardNotFound(int shard) {
    return new NotFoundException("Not found: shard " + shard + " not found");
  }

  private CollectionMeta requireMeta(String collection) {
    return dir.meta(collection)
        .orElseThrow(
            () ->
                new NotFoundException("Not found: Collection `" + collection + "` doesn't exist!"));
  }

  private static void zipTree(ZipOutputStream zip, Path base, String prefix) throws IOException {
    List<Path> files;
    try (Stream<Path> st = Files.walk(base)) {
      files = st.filter(Files::isRegularFile).sorted().toList();
    }
    for (Path f : files) {
      zip.putNextEntry(new ZipEntry(prefix + base.relativize(f).toString().replace('\\', '/')));
      Files.copy(f, zip);
      zip.closeEntry();
    }
  }

  /** The snapshots of shard {@code shard} of {@code collection}, oldest first. */
  public List<SnapshotDescription> listShard(String collection, int shard) {
    CollectionNames.validate(collection);
    return listFolder(shardFolder(collection, shard));
  }

  /** The file of a shard snapshot, or Qdrant's 404. */
  public Path shardFile(String collection, int shard, String name) {
    CollectionNames.validate(collection);
    Path p =
        NAME.matcher(name).matches() && name.endsWith(SUFFIX)
            ? shardFolder(collection, shard).resolve(name)
            : null;
    if (p == null || !Files.isRegularFile(p)) {
      throw new NotFoundException(
          "Not found: Snapshot "
              + name
              + " of shard "
              + shard
              + " of collection "
              + collection
              + " not found");
    }
    return p;
  }

  /** Deletes a shard snapshot (and its checksum), or Qdrant's 404. */
  public void deleteShard(String collection, int shard, String name) {
    Path p = shardFile(collection, shard, name);
    try {
      Files.deleteIfExists(p.resolveSibling(name + CHECKSUM));
      Files.delete(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Replaces shard {@code shard} of the existing collection {@code collection} with the shard
   * snapshot in {@code file}, after checking it against {@code checksum} (a SHA-256 in hex; {@code
   * null}: not checked) and that it is a snapshot of that shard of a collection configured alike
   * (dimension, distance, vector fields, index, shard count; 400 naming what differs). The
   * collection is closed while its shard directory is swapped ({@link DataDirectory#reopen}, {@link
   * #swapShard}) and opened again; the shard then replays its WAL as after a crash.
   */
  public void recoverShard(String collection, int shard, Path file, String checksum) {
    recoverShard(collection, shard, file, checksum, false);
  }

  /**
   * Recovers shard {@code shard} of {@code collection} from a partial snapshot ({@link
   * #createPartialShard}): as {@link #recoverShard}, with the files the snapshot leaves out taken
   * from the shard itself, which must still have each at the version the snapshot names (else a 400
   * naming the file, and the shard is left as it was).
   */
  public void recoverPartialShard(String collection, int shard, Path file, String checksum) {
    recoverShard(collection, shard, file, checksum, true);
  }

  private void recoverShard(
      String collection, int shard, Path file, String checksum, boolean partial) {
    CollectionNames.validate(collection);
    CollectionMeta target = requireMeta(collection);
    if (shard < 0 || shard >= target.config().shardNumber()) {
      throw shardNotFound(shard);
    }
    checkChecksum(file, checksum);
    Path unpacked = dir.dataDir().resolve(".restore-" + UUID.randomUUID());
    try {
      Unpacked u = unpackAny(file, unpacked);
      JsonNode marker = u.shardMarker();
      if (marker == null || !Files.isDirectory(unpacked.resolve("shard"))) {
        throw new InvalidInputException(
            "Wrong input: not a FlashVec shard snapshot: it holds no shard files (a collection"
                + " snapshot is recovered with /collections/{name}/snapshots/recover)");
      }
      String differs = differences(u.meta().config(), target.config());
      if (differs != null) {
        throw new InvalidInputException(
            "Wrong input: the shard snapshot is of a collection configured differently from `"
                + collection
                + "`: "
                + differs);
      }
      if (marker.has("omitted") != partial) {
        throw new InvalidInputException(
            partial
                ? "Wrong input: not a partial shard snapshot (a full shard snapshot is recovered"
                    + " with /collections/{name}/shards/{shard}/snapshots/upload or /recover)"
                : "Wrong input: a partial shard snapshot is recovered with"
                    + " /collections/{name}/shards/{shard}/snapshot/partial/recover");
      }
      int from = marker.path("shard_id").asInt(-1);
      if (from != shard) {
        throw new InvalidInputException(
            "Wrong input: the snapshot is of shard "
                + from
                + ", not of shard "
                + shard
                + ": its points hash to shard "
                + from);
      }
      Path prepared = unpacked.resolve("shard");
      dir.reopen(
          collection,
          "shard " + shard + " is recovered from a snapshot",
          d -> {
            if (partial) {
              // the collection is closed: the shard's files stay as they are meanwhile
              PartialManifest.fill(
                  prepared,
                  d.resolve("shards").resolve(Integer.toString(shard)),
                  marker.get("omitted"));
            }
            swapShard(d, shard, prepared);
          });
    } finally {
      deleteTree(unpacked);
    }
  }

  /**
   * What differs between the configuration of a shard snapshot's collection and the collection it
   * is recovered into, or {@code null} if the shard fits.
   */
  static String differences(
      io.flashvec.index.CollectionConfig snap, io.flashvec.index.CollectionConfig target) {
    List<String> out = new ArrayList<>();
    if (snap.dimension() != target.dimension()) {
      out.add("dimension " + snap.dimension() + " vs " + target.dimension());
    }
    if (snap.distance() != target.distance()) {
      out.add("distance " + snap.distance() + " vs " + target.distance());
    }
    if (snap.shardNumber() != target.shardNumber()) {
      out.add("shard_number " + snap.shardNumber() + " vs " + target.shardNumber());
    }
    if (!snap.vectorName().equals(target.vectorName())) {
      out.add("vector name `" + snap.vectorName() + "` vs `" + target.vectorName() + "`");
    }
    if (!snap.denseVectors().equals(target.denseVectors())) {
      out.add("dense vector fields " + snap.denseVectors() + " vs " + target.denseVectors());
    }
    if (!snap.sparseVectors().equals(target.sparseVectors())) {
      out.add("sparse vector fields " + snap.sparseVectors() + " vs " + target.sparseVectors());
    }
    if (!java.util.Objects.equals(snap.index(), target.index())) {
      out.add("index " + snap.index() + " vs " + target.index());
    }
    return out.isEmpty() ? null : String.join(", ", out) + " (snapshot vs collection)";
  }

  /**
   * Swaps {@code prepared} (on the same file system) in as shard {@code shard} of the collection in
   * {@code collectionDir}, by renames: {@code prepared} to {@code shards/.incoming-<i>}, the shard
   * to {@code shards/.old-<i>}, the incoming one to {@code shards/<i>}, then the old one deleted. A
   * crash in between is undone by {@link #repairShardSwaps} before the collection opens.
   */
  static void swapShard(Path collectionDir, int shard, Path prepared) throws IOException {
    Path shards = collectionDir.resolve("shards");
    Path current = shards.resolve(Integer.toString(shard));
    Path incoming = shards.resolve(".incoming-" + shard);
    Path old = shards.resolve(".old-" + shard);
    deleteTree(incoming);
    deleteTree(old);
    Files.move(prepared, incoming, StandardCopyOption.ATOMIC_MOVE);
    fsyncDir(shards);
    Files.move(current, old, StandardCopyOption.ATOMIC_MOVE);
    try {
      Files.move(incoming, current, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      Files.move(old, current, StandardCopyOption.ATOMIC_MOVE);
      throw e;
    }
    fsyncDir(shards);
    deleteTree(old);
  }

  /**
   * Finishes what a crash during {@link #swapShard} left in {@code collectionDir}: a shard
   * directory moved aside without its replacement in place is moved back (that recovery was never
   * acknowledged), and the leftovers are deleted. Runs before the collection opens.
   */
  public static void repairShardSwaps(Path collectionDir) {
    Path shards = collectionDir.resolve("shards");
    if (!Files.isDirectory(shards)) {
      return;
    }
    try (Stream<Path> s = Files.list(shards)) {
      for (Path p : s.sorted().toList()) {
        String n = p.getFileName().toString();
        if (n.startsWith(".old-")) {
          Path current = shards.resolve(n.substring(".old-".length()));
          if (Files.exists(current)) {
            deleteTree(p);
          } else {
            Files.move(p, current, StandardCopyOption.ATOMIC_MOVE);
          }
        } else if (n.startsWith(".incoming-")) {
          deleteTree(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void fsyncDir(Path d) throws IOException {
    try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  private record Unpacked(CollectionMeta meta, JsonNode shardMarker) {}

  /** Unzips a shard snapshot into {@code into}. */
  private static Unpacked unpackAny(Path file, Path into) {
    JsonNode[] marker = new JsonNode[1];
    CollectionMeta meta = unpack(file, into, SHARD_FILES, marker);
    return new Unpacked(meta, marker[0]);
  }

  /** Unzips a snapshot into {@code into} and returns its metadata. */
  private static CollectionMeta unpack(Path file, Path into) {
    return unpack(file, into, FILES, null);
  }

  /** Qdrant's 400 when {@code file}'s SHA-256 is not {@code checksum} ({@code null}: any). */
  private static void checkChecksum(Path file, String checksum) {
    if (checksum == null) {
      return;
    }
    String actual = sha256(file);
    if (!checksum.equalsIgnoreCase(actual)) {
      throw new InvalidInputException(
          "Wrong input: Snapshot checksum mismatch: expected " + checksum + ", got " + actual);
    }
  }

  /**
   * Unzips a snapshot whose files are under {@code files} into {@code into} and returns its
   * metadata; {@code marker[0]} receives the shard marker, if asked for and present.
   */
  private static CollectionMeta unpack(Path file, Path into, String files, JsonNode[] marker) {
    CollectionMeta meta = null;
    Path base = into.toAbsolutePath().normalize();
    try (InputStream in = Files.newInputStream(file);
        ZipInputStream zip = new ZipInputStream(in)) {
      ZipEntry e;
      while ((e = zip.getNextEntry()) != null) {
        if (e.isDirectory()) {
          continue;
        }
        if (e.getName().equals(META)) {
          JsonNode m = JSON.readTree(zip.readAllBytes());
          meta = CollectionMetaJson.read(m);
          continue;
        }
        if (marker != null && e.getName().equals(SHARD_META)) {
          marker[0] = JSON.readTree(zip.readAllBytes());
          continue;
        }
        Path to = base.resolve(e.getName()).normalize();
        if (!to.startsWith(base) || !e.getName().startsWith(files)) {
          throw new InvalidInputException(
              "Wrong input: not a FlashVec "
                  + (marker == null ? "collection" : "shard")
                  + " snapshot: unexpected entry "
                  + e.getName());
        }
        Files.createDirectories(to.getParent());
        Files.copy(zip, to);
      }
    } catch (java.util.zip.ZipException | tools.jackson.core.JacksonException e) {
      throw new InvalidInputException(
          "Wrong input: not a FlashVec collection snapshot: " + e.getMessage());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      if (e instanceof InvalidInputException) {
        throw e;
      }
      throw new InvalidInputException(
          "Wrong input: not a FlashVec collection snapshot: " + e.getMessage());
    }
    if (meta == null) {
      throw new InvalidInputException(
          "Wrong input: not a FlashVec collection snapshot: " + META + " is missing");
    }
    return meta;
  }

  private SnapshotDescription describe(Path p) {
    try {
      String name = p.getFileName().toString();
      Path sum = p.resolveSibling(name + CHECKSUM);
      String checksum =
          Files.exists(sum) ? Files.readString(sum, StandardCharsets.UTF_8).trim() : sha256(p);
      String created =
          Files.getLastModifiedTime(p).toInstant().toString().replace("Z", "").substring(0, 19);
      return new SnapshotDescription(name, created, Files.size(p), checksum);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String sha256(Path file) {
    MessageDigest sha = sha256();
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buf = new byte[1 << 16];
      int n;
      while ((n = in.read(buf)) > 0) {
        sha.update(buf, 0, n);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void fsync(Path p) throws IOException {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
  }

  private static void deleteTree(Path p) {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path f : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    } catch (IOException e) {
      // left for the next start-up's clean-up
    }
  }
}
