package io.flashvec.cluster.local;

import io.flashvec.cluster.Aliases;
import io.flashvec.cluster.DataDirectoryInUseException;
import io.flashvec.cluster.metadata.LocalMetadataStore;
import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.ConflictException;
import io.flashvec.index.InsufficientStorageException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.UnavailableException;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.DiskFullException;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.FileIO;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's data directory and what it holds: each unit (a standalone collection, or a query node's
 * shard replica) is an entry of the metadata file ({@link LocalMetadataStore}, {@code
 * <data>/meta/collections.json}) and the directory {@code <data>/collections/<name>}.
 *
 * <p>Life cycle: construct (locks the directory against a second server), then {@link #recover()}
 * (opens every unit; {@link #ready()} turns true when it returns), then serve, then {@link
 * #close()}. Creation writes the metadata before opening the unit, deletion removes the metadata
 * before deleting files, and recovery deletes directories without metadata, so a crash at any point
 * leaves no half-created unit. A unit that cannot be opened at recovery is kept aside with the
 * reason ({@link #failed()}) and can still be deleted.
 *
 * <p>Units can have aliases ({@link Aliases}), kept in the same metadata file: requests name a unit
 * by either ({@link #resolve}); deleting a unit deletes its aliases in the same write.
 *
 * <p>Thread-safe; creations, deletions and setting changes are serialised.
 *
 * @param <T> what a unit opens as
 */
public final class DataDirectory<T extends Closeable> implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(DataDirectory.class);

  /** What a new unit writes per shard before any point: WAL header, manifest, metadata. */
  private static final long UNIT_BYTES = 64 << 10;

  /** Opens (creating if needed) the unit recorded as {@code meta} in {@code dir}. */
  @FunctionalInterface
  public interface Opener<T> {
    T open(CollectionMeta meta, Path dir);
  }

  /**
   * Data directories locked by this JVM. The OS lock cannot refuse a second server in the same
   * process: {@code tryLock} throws {@link java.nio.channels.OverlappingFileLockException} there,
   * and closing the second channel would release the first one's POSIX lock, letting another
   * process in. So this process checks here before it opens the lock file.
   */
  private static final Set<Path> LOCKED_IN_THIS_JVM = ConcurrentHashMap.newKeySet();

  private final Path dataDir;
  private final Path unitsDir;
  private final FileIO io;
  private final DiskSpace space;
  private final Opener<T> opener;
  private final LocalMetadataStore metadata;
  private final Map<String, T> units = new ConcurrentHashMap<>();
  private final Map<String, String> failed = new ConcurrentHashMap<>();

  /** Units closed for a moment by {@link #reopen}, with what is being done to them. */
  private final Map<String, String> busy = new ConcurrentHashMap<>();

  private final Object ddlLock = new Object();
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Path lockKey;
  private volatile boolean ready;
  private volatile boolean closed;

  public DataDirectory(Path dataDir, FileIO io, DiskSpace space, Opener<T> opener) {
    this.dataDir = dataDir.toAbsolutePath();
    this.unitsDir = this.dataDir.resolve("collections");
    this.io = io;
    this.space = space;
    this.opener = opener;
    FileChannel ch = null;
    Path key = null;
    try {
      io.createDirectories(unitsDir);
      Path real = this.dataDir.toRealPath();
      if (!LOCKED_IN_THIS_JVM.add(real)) {
        throw new DataDirectoryInUseException(
            this.dataDir, Long.toString(ProcessHandle.current().pid()));
      }
      key = real;
      ch =
          FileChannel.open(
              this.dataDir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock l = ch.tryLock();
      if (l == null) {
        throw new DataDirectoryInUseException(this.dataDir, holderPid(this.dataDir));
      }
      writePid(ch);
      this.lockChannel = ch;
      this.lock = l;
      this.lockKey = key;
      this.metadata = new LocalMetadataStore(this.dataDir, io);
    } catch (IOException e) {
      closeQuietly(ch);
      unregister(key);
      throw new UncheckedIOException(
          "cannot open data directory [dataDir=" + this.dataDir + "]", e);
    } catch (RuntimeException e) {
      closeQuietly(ch);
      unregister(key);
      throw e;
    }
  }

  /** Opens every unit the metadata records and removes directories it does not. */
  public void recover() {
    long t0 = System.nanoTime();
    for (CollectionMeta m : metadata.list()) {
      try {
        units.put(m.name(), opener.open(m, unitsDir.resolve(m.name())));
      } catch (RuntimeException e) {
        // One damaged unit must not take the others down: it answers 503 with the reason
        // (never silently wrong results) and can still be deleted.
        failed.put(m.name(), e.getMessage() == null ? e.toString() : e.getMessage());
        LOG.error(
            "collection failed to open; it answers 503 until repaired or deleted [name={}]",
            m.name(),
            e);
      }
    }
    removeOrphans();
    ready = true;
    LOG.info(
        "recovery finished [dataDir={}, units={}, failed={}, millis={}]",
        dataDir,
        units.size(),
        failed.size(),
        (System.nanoTime() - t0) / 1_000_000);
  }

  private void removeOrphans() {
    try (var stream = Files.list(unitsDir)) {
      for (Path p : stream.toList()) {
        String name = p.getFileName().toString();
        if (!units.containsKey(name) && !failed.containsKey(name)) {
          LOG.warn(
              "removing collection directory without metadata (interrupted create or delete) [dir={}]",
              p);
          deleteTree(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list collections [dir=" + unitsDir + "]", e);
    }
  }

  /** Whether recovery finished and the directory is not closing. */
  public boolean ready() {
    return ready && !closed;
  }

  /**
   * Throws 503 before recovery finished and while closing.
   *
   * @param recovering what a request is told during recovery
   */
  public void checkReady(String recovering) {
    if (!ready) {
      throw new UnavailableException(recovering);
    }
    if (closed) {
      throw new UnavailableException("Service is shutting down");
    }
  }

  /** The unit name {@code name} means: the collection an alias of that name names, else itself. */
  public String resolve(String name) {
    String target = metadata.aliases().get(name);
    return target == null ? name : target;
  }

  /** Every alias, alias to unit name. */
  public Map<String, String> aliases() {
    return metadata.aliases();
  }

  /**
   * Applies {@code changes} to the aliases ({@link Aliases#apply}) all together in one durable
   * write, or none of them (a 404, 409 or 507 names why).
   */
  public void updateAliases(List<Aliases.Change> changes) {
    synchronized (ddlLock) {
      Map<String, String> next = Aliases.apply(metadata.aliases(), changes, this::exists);
      try {
        metadata.replaceAliases(next);
      } catch (RuntimeException e) {
        throw storageFull(e, "alias update");
      }
    }
  }

  /** The open unit {@code name}, or {@code null}. */
  public T get(String name) {
    return units.get(name);
  }

  /**
   * The open unit {@code name}, for a request.
   *
   * @param what the unit as a message names it, e.g. {@code collection `c`}
   * @param notFound the message of the 404 when there is no such unit
   * @throws UnavailableException before recovery, while closing, or if the unit failed to open
   *     (naming the reason)
   * @throws NotFoundException if there is no such unit
   */
  public T require(String name, String what, Supplier<String> notFound) {
    checkReady("Service is not ready: recovering the write-ahead logs");
    T unit = units.get(name);
    if (unit == null) {
      String doing = busy.get(name);
      if (doing != null) {
        throw new UnavailableException(
            "Service unavailable: " + what + " is closed while " + doing + "; retry shortly");
      }
      String why = failed.get(name);
      if (why != null) {
        throw new UnavailableException(
            "Service unavailable: " + what + " failed to open [reason=" + why + "]");
      }
      throw new NotFoundException(notFound.get());
    }
    return unit;
  }

  /** Why unit {@code name} failed to open at recovery, or {@code null}. */
  public String failure(String name) {
    return failed.get(name);
  }

  /** Units whose files could not be opened at recovery, by name, with the reason. */
  public Map<String, String> failed() {
    return new TreeMap<>(failed);
  }

  /** The open units by name. */
  public Map<String, T> units() {
    return Map.copyOf(units);
  }

  /** Names of all units, open or failed, sorted. */
  public List<String> names() {
    List<String> names = new ArrayList<>(units.keySet());
    names.addAll(failed.keySet());
    names.addAll(busy.keySet());
    names.sort(null);
    return names;
  }

  public boolean exists(String name) {
    return units.containsKey(name) || failed.containsKey(name) || busy.containsKey(name);
  }

  public Path dataDir() {
    return dataDir;
  }

  /**
   * Records and opens a new unit; {@link ConflictException} if one of that name exists, 507 if the
   * disk cannot take it ({@code shards} shards).
   */
  public T create(CollectionMeta meta, int shards) {
    String name = meta.name();
    synchronized (ddlLock) {
      if (exists(name)) {
        throw new ConflictException("Wrong input: Collection `" + name + "` already exists!");
      }
      if (metadata.aliases().containsKey(name)) {
        throw Aliases.aliasExists(name);
      }
      requireSpace(UNIT_BYTES * shards, "collection creation");
      Path dir = unitsDir.resolve(name);
      try {
        if (!metadata.createIfAbsent(meta)) {
          throw new ConflictException("Wrong input: Collection `" + name + "` already exists!");
        }
      } catch (RuntimeException e) {
        throw storageFull(e, "collection creation");
      }
      io.crashPoint(CrashPoint.COLLECTION_CREATE_METADATA_WRITTEN);
      T unit;
      try {
        unit = opener.open(meta, dir);
      } catch (RuntimeException e) {
        metadata.remove(name);
        deleteQuietly(dir); // a shard that could not start (a full disk) leaves no files
        throw storageFull(e, "collection creation");
      }
      units.put(name, unit);
      return unit;
    }
  }

  /** A unit's recorded metadata, if it exists. */
  public java.util.Optional<CollectionMeta> meta(String name) {
    return metadata.get(name);
  }

  /**
   * Replaces the unit {@code meta.name()} (if any) by the files prepared in {@code prepared} (a
   * directory on the same file system, moved into place) and opens it. The old unit is deleted
   * first; the move comes before the metadata, so a crash in between leaves a directory without
   * metadata, which recovery removes.
   */
  public T restore(CollectionMeta meta, Path prepared) {
    String name = meta.name();
    synchronized (ddlLock) {
      delete(name);
      Path target = unitsDir.resolve(name);
      deleteTree(target);
      try {
        java.nio.file.Files.move(prepared, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot move a restored collection into place [name=" + name + "]", e);
      }
      if (!metadata.createIfAbsent(meta)) {
        throw new ConflictException("Wrong input: Collection `" + name + "` already exists!");
      }
      T unit;
      try {
        unit = opener.open(meta, target);
      } catch (RuntimeException e) {
        metadata.remove(name);
        deleteQuietly(target);
        throw e;
      }
      units.put(name, unit);
      return unit;
    }
  }

  /** A change to a closed unit's files ({@link #reopen}). */
  @FunctionalInterface
  public interface FilesChange {
    void apply(Path dir) throws IOException;
  }

  /**
   * Closes the open unit {@code name}, applies {@code change} to its directory and opens it again.
   * Meanwhile requests for it get 503 naming {@code doing} (and the unit stays listed); requests
   * already running finish on the closed unit (reads) or fail (writes). If {@code change} fails it
   * must leave the files as they were: the unit is reopened unchanged and the failure thrown. A
   * unit that cannot be reopened is kept aside as one that failed to open ({@link #failed()}).
   *
   * @throws NotFoundException if there is no such open unit
   */
  public T reopen(String name, String doing, FilesChange change) {
    synchronized (ddlLock) {
      CollectionMeta meta =
          metadata
              .get(name)
              .orElseThrow(
                  () ->
                      new NotFoundException("Not found: Collection `" + name + "` doesn't exist!"));
      busy.put(name, doing);
      try {
        T unit = units.remove(name);
        if (unit == null) {
          throw new NotFoundException("Not found: Collection `" + name + "` doesn't exist!");
        }
        Path dir = unitsDir.resolve(name);
        RuntimeException failure = null;
        try {
          unit.close();
        } catch (IOException | RuntimeException e) {
          // the files are left as they are; the unit is opened again below
          failure = new UncheckedIOException("cannot close collection [name=" + name + "]", io(e));
        }
        if (failure == null) {
          try {
            change.apply(dir);
          } catch (IOException e) {
            failure = new UncheckedIOException(e.getMessage(), e);
          } catch (RuntimeException e) {
            failure = e;
          }
        }
        try {
          units.put(name, opener.open(meta, dir));
        } catch (RuntimeException e) {
          failed.put(name, e.getMessage() == null ? e.toString() : e.getMessage());
          LOG.error("collection failed to reopen [name={}]", name, e);
          if (failure != null) {
            failure.addSuppressed(e);
          } else {
            failure = e;
          }
        }
        if (failure != null) {
          throw failure;
        }
        return units.get(name);
      } finally {
        busy.remove(name);
      }
    }
  }

  private static IOException io(Exception e) {
    return e instanceof IOException x ? x : new IOException(e);
  }

  /**
   * Removes a unit's metadata and its aliases, closes it and deletes its files; false if there was
   * none.
   */
  public boolean delete(String name) {
    synchronized (ddlLock) {
      T unit = units.remove(name);
      if (unit == null && failed.remove(name) == null) {
        return false;
      }
      metadata.remove(name);
      io.crashPoint(CrashPoint.COLLECTION_DELETE_METADATA_REMOVED);
      if (unit != null) {
        try {
          unit.close();
        } catch (IOException | RuntimeException e) {
          LOG.warn("error closing deleted collection [name={}]", name, e);
        }
      }
      deleteTree(unitsDir.resolve(name));
      return true;
    }
  }

  /**
   * Persists {@code change} of a unit's changeable settings, then lets {@code apply} apply them (a
   * crash after the first step reopens the unit with the new settings anyway); returns them.
   */
  public CollectionTuning retune(
      String name, UnaryOperator<CollectionTuning> change, Consumer<CollectionTuning> apply) {
    synchronized (ddlLock) {
      CollectionTuning next =
          change.apply(
              metadata
                  .get(name)
                  .map(CollectionMeta::tuning)
                  .orElseThrow(
                      () ->
                          new NotFoundException(
                              "Not found: Collection `" + name + "` doesn't exist!")));
      try {
        metadata.updateTuning(name, next);
      } catch (RuntimeException e) {
        throw storageFull(e, "collection update");
      }
      io.crashPoint(CrashPoint.COLLECTION_TUNING_WRITTEN);
      apply.accept(next);
      return next;
    }
  }

  /**
   * Persists {@code change} of a unit's config (a vector field added or deleted) in one atomic
   * write of the metadata file, then lets {@code apply} apply it; returns it. A crash after the
   * write reopens the unit with the new config, which is what the change promised.
   */
  public io.flashvec.index.CollectionConfig reconfigure(
      String name,
      UnaryOperator<io.flashvec.index.CollectionConfig> change,
      Consumer<io.flashvec.index.CollectionConfig> apply) {
    synchronized (ddlLock) {
      io.flashvec.index.CollectionConfig next =
          change.apply(
              metadata
                  .get(name)
                  .map(CollectionMeta::config)
                  .orElseThrow(
                      () ->
                          new NotFoundException(
                              "Not found: Collection `" + name + "` doesn't exist!")));
      try {
        metadata.updateConfig(name, next);
      } catch (RuntimeException e) {
        throw storageFull(e, "collection vector change");
      }
      apply.accept(next);
      return next;
    }
  }

  /** Refuses (HTTP 507) work that would leave less than the reserve free in the data directory. */
  private void requireSpace(long bytes, String what) {
    try {
      space.require(dataDir, bytes, what);
    } catch (DiskFullException e) {
      throw new InsufficientStorageException(what, e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the free space [dataDir=" + dataDir + "]", e);
    }
  }

  /**
   * {@code e} as the 507 a client gets when it says the disk is full (the operating system's ENOSPC
   * somewhere in its causes), else {@code e} unchanged.
   */
  public RuntimeException storageFull(RuntimeException e, String what) {
    if (e instanceof InsufficientStorageException || !DiskFullException.isDiskFull(e)) {
      return e;
    }
    DiskFullException known = DiskFullException.find(e);
    if (known != null) {
      return new InsufficientStorageException(what, known);
    }
    long usable;
    try {
      usable = space.usableBytes(dataDir);
    } catch (IOException | RuntimeException probe) {
      usable = -1;
    }
    LOG.warn("{} failed: the disk is full [dataDir={}]", what, dataDir, e);
    return new InsufficientStorageException(what, usable, space.minFreeBytes(), e);
  }

  private void deleteQuietly(Path dir) {
    try {
      io.deleteTree(dir);
    } catch (IOException e) {
      LOG.warn("cannot remove the files of a collection that failed to start [dir={}]", dir, e);
    }
  }

  private void deleteTree(Path dir) {
    try {
      io.deleteTree(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete directory [dir=" + dir + "]", e);
    }
  }

  /** Closes every unit (their WALs are synced) and releases the directory's lock. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    long t0 = System.nanoTime();
    int n = units.size();
    synchronized (ddlLock) {
      units.forEach(
          (name, unit) -> {
            try {
              unit.close();
            } catch (IOException | RuntimeException e) {
              LOG.warn("error closing collection [name={}]", name, e);
            }
          });
      units.clear();
    }
    try {
      lock.release();
    } catch (IOException e) {
      LOG.warn("cannot release data directory lock [dataDir={}]", dataDir, e);
    }
    closeQuietly(lockChannel);
    unregister(lockKey);
    LOG.info(
        "collections closed, their WALs synced [dataDir={}, collections={}, millis={}]",
        dataDir,
        n,
        (System.nanoTime() - t0) / 1_000_000);
  }

  private static void unregister(Path key) {
    if (key != null) {
      LOCKED_IN_THIS_JVM.remove(key);
    }
  }

  /** Records this process in the lock file it holds, for the message a second server prints. */
  private static void writePid(FileChannel ch) throws IOException {
    ch.truncate(0);
    ch.write(
        java.nio.ByteBuffer.wrap(
            (ProcessHandle.current().pid() + "\n")
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII)),
        0);
  }

  /** The pid the holder wrote into the lock file, or {@code unknown}. */
  private static String holderPid(Path dataDir) {
    try {
      String s = Files.readString(dataDir.resolve(".lock")).strip();
      return s.matches("[0-9]{1,19}") ? s : "unknown";
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static void closeQuietly(Closeable c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // nothing more to do
      }
    }
  }
}
