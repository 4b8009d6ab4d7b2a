package io.flashvec.storage.testing;

import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link FileIO} over the real file system that remembers what has been made durable, and can
 * simulate a power loss with {@link #crash(Random)} (after Lucene's {@code
 * MockDirectoryWrapper.crash()}).
 *
 * <h2>The durability model</h2>
 *
 * <ul>
 *   <li><b>File data.</b> Each file opened through this instance has a <i>durable length</i>.
 *       {@link #force} sets it to the file's size when the call starts; {@link #truncate} and
 *       {@code TRUNCATE_EXISTING} lower it at once. Writes are assumed to append: overwriting bytes
 *       below the durable length is treated as durable immediately. A file this instance did not
 *       create counts as fully durable when it is first opened, moved or deleted, so a fresh
 *       instance over a directory that survived a crash starts from what is on disk.
 *   <li><b>Directory entries.</b> Creating a file (opening a path that did not exist), {@link
 *       #atomicMove} and {@link #deleteIfExists} are <i>pending</i> in their (target's) directory
 *       until {@link #fsyncDirectory} of that directory. Directories themselves ({@link
 *       #createDirectories}) count as durable at once. Renames are assumed to stay within one
 *       directory.
 *   <li><b>A crash</b> first keeps, per directory, a random prefix of the pending entry operations
 *       and undoes the rest newest first (as a journaling file system replays its journal in
 *       order): an undone creation deletes the file, an undone deletion brings the file back with
 *       its durable bytes, an undone rename moves the file back and restores the durable bytes of
 *       the file it replaced. Then every surviving file is cut to its durable length plus a random
 *       prefix of the bytes written after it: a torn write. Bytes never come back scrambled; a
 *       prefix is what a sequential log on a real device can lose.
 *   <li><b>Real fsync is never called.</b> Durability is simulated, which keeps tests fast.
 * </ul>
 *
 * After {@link #crash} this instance is dead: every channel it opened is closed and every call
 * throws an {@link IOException}, like a process that lost power. Reopen the directory with a new
 * instance (or {@link FileIO#DEFAULT}).
 *
 * <h2>Crash points</h2>
 *
 * {@link #armCrashPoint(CrashPoint, int) armCrashPoint(point, n)} stops the process the {@code
 * n}-th time a durable step reaches {@code point} ({@link FileIO#crashPoint}): from that moment
 * every call fails with an {@link IOException}, so nothing the engine does afterwards (cleanups in
 * {@code finally} blocks, other threads) reaches the files, and the thread that reached the point
 * gets a {@link Halt} error, which unwinds it without running the engine's error handling. The test
 * then calls {@link #crash} to lose what was not fsynced, and recovers. {@link #hits} counts every
 * point reached, armed or not, so a test can check that a workload passes through a point.
 *
 * <p>Thread-safe. Calls run concurrently with each other; {@link #crash} waits for the calls in
 * flight and blocks new ones, so a crash never lands in the middle of one call. It must not be
 * called from inside a call of this instance.
 */
public class CrashSimulatingFileIO extends FileIO {

  /** What a crash did, for test messages. */
  public record CrashReport(int directoryOpsUndone, int filesCut, long bytesDropped) {}

  /**
   * Thrown to the thread that reached the armed crash point: the process "died" there. An {@link
   * Error}, so that the engine's {@code catch (IOException | RuntimeException e)} blocks do not
   * treat it as a failure to handle and carry on.
   */
  public static final class Halt extends Error {
    private static final long serialVersionUID = 1L;
    private final transient CrashPoint point;

    Halt(CrashPoint point, int hit) {
      super("halted at crash point [point=" + point + ", hit=" + hit + "]");
      this.point = point;
    }

    public CrashPoint point() {
      return point;
    }
  }

  private static final class FileState {
    Path path;
    long durable;

    FileState(Path path, long durable) {
      this.path = path;
      this.durable = durable;
    }
  }

  private sealed interface DirOp permits Created, Deleted, Renamed {}

  private record Created(Path path) implements DirOp {}

  private record Deleted(Path path, byte[] durableContent) implements DirOp {}

  /** {@code replaced} is the durable content of the old target, or null when there was none. */
  private record Renamed(Path source, Path target, byte[] replaced) implements DirOp {}

  @FunctionalInterface
  private interface IOCall<T> {
    T call() throws IOException;
  }

  private final ReentrantReadWriteLock lifeLock = new ReentrantReadWriteLock();
  private boolean crashed; // written under the write lock, read under the read lock

  private final Object stateLock = new Object();
  // Sorted maps so a crash consumes its Random in the same order for the same state.
  private final Map<Path, FileState> files = new TreeMap<>(); // guarded by stateLock
  private final Map<Path, List<DirOp>> pending = new TreeMap<>(); // guarded by stateLock
  private final Map<FileChannel, FileState> byChannel = new IdentityHashMap<>(); // stateLock
  private final OpenChannels channels = new OpenChannels();

  private final Map<CrashPoint, AtomicInteger> hits = new EnumMap<>(CrashPoint.class);
  private volatile CrashPoint armed;
  private volatile int armedHit;
  private volatile CrashPoint haltedAt;

  private volatile boolean undoDirectoryOps = true;
  private volatile boolean tornWrites = true;

  public CrashSimulatingFileIO() {
    for (CrashPoint p : CrashPoint.values()) {
      hits.put(p, new AtomicInteger());
    }
  }

  /**
   * Stops the process (see the class comment) the {@code hit}-th time {@code point} is reached from
   * now on (1 is the next time).
   */
  public CrashSimulatingFileIO armCrashPoint(CrashPoint point, int hit) {
    if (hit < 1) {
      throw new IllegalArgumentException(
          "hit counts from 1 [point=" + point + ", hit=" + hit + "]");
    }
    this.armedHit = hits.get(point).get() + hit;
    this.armed = point;
    return this;
  }

  /** How many times {@code point} was reached through this instance. */
  public int hits(CrashPoint point) {
    return hits.get(point).get();
  }

  /** The point at which the armed crash stopped the process, or {@code null}. */
  public CrashPoint haltedAt() {
    return haltedAt;
  }

  @Override
  public void crashPoint(CrashPoint point) {
    int n = hits.get(point).incrementAndGet();
    if (point == armed && n == armedHit && haltedAt == null) {
      haltedAt = point; // every call fails from now on, on every thread
      throw new Halt(point, n);
    }
  }

  /** Whether a crash may undo un-fsynced creations, renames and deletions (default true). */
  public CrashSimulatingFileIO undoDirectoryOps(boolean enabled) {
    this.undoDirectoryOps = enabled;
    return this;
  }

  /** Whether a crash may keep a random prefix of un-forced bytes (default true). */
  public CrashSimulatingFileIO tornWrites(boolean enabled) {
    this.tornWrites = enabled;
    return this;
  }

  /** The durable length of a file opened through this instance, or -1 if it is not tracked. */
  public long durableLength(Path path) {
    synchronized (stateLock) {
      FileState st = files.get(normalize(path));
      return st == null ? -1 : st.durable;
    }
  }

  /** How many entry operations in {@code dir} are waiting for {@link #fsyncDirectory}. */
  public int pendingDirectoryOps(Path dir) {
    synchronized (stateLock) {
      List<DirOp> ops = pending.get(normalize(dir));
      return ops == null ? 0 : ops.size();
    }
  }

  /** Files whose channels, opened through this instance, are still open. */
  public List<Path> openChannels() {
    return channels.stillOpen();
  }

  /** Throws an {@link AssertionError} naming the files if any channel opened here is still open. */
  public void assertNoOpenChannels() {
    channels.assertAllClosed("CrashSimulatingFileIO");
  }

  /** Whether {@link #crash} has been called. */
  public boolean crashed() {
    lifeLock.readLock().lock();
    try {
      return crashed;
    } finally {
      lifeLock.readLock().unlock();
    }
  }

  /**
   * Simulates a power loss as described in the class comment, drawing every choice from {@code
   * random}, and kills this instance.
   */
  public CrashReport crash(Random random) throws IOException {
    lifeLock.writeLock().lock();
    try {
      if (crashed) {
        throw new IllegalStateException("already crashed");
      }
      crashed = true;
      channels.closeAll();
      int undone = 0;
      int cut = 0;
      long dropped = 0;
      synchronized (stateLock) {
        for (List<DirOp> ops : pending.values()) {
          int keep = undoDirectoryOps ? random.nextInt(ops.size() + 1) : ops.size();
          for (int i = ops.size() - 1; i >= keep; i--) {
            undo(ops.get(i));
            undone++;
          }
        }
        pending.clear();
        for (FileState st : files.values()) {
          if (!Files.exists(st.path)) {
            continue;
          }
          long size = Files.size(st.path);
          if (size <= st.durable) {
            continue;
          }
          long unforced = size - st.durable;
          long newSize = st.durable + (tornWrites ? random.nextLong(unforced + 1) : 0);
          if (newSize < size) {
            try (FileChannel ch = FileChannel.open(st.path, StandardOpenOption.WRITE)) {
              ch.truncate(newSize);
            }
            cut++;
            dropped += size - newSize;
          }
        }
        files.clear();
        byChannel.clear();
      }
      return new CrashReport(undone, cut, dropped);
    } finally {
      lifeLock.writeLock().unlock();
    }
  }

  // guarded by stateLock
  private void undo(DirOp op) throws IOException {
    switch (op) {
      case Created c -> {
        Files.deleteIfExists(c.path());
        files.remove(c.path());
      }
      case Deleted d -> {
        if (!Files.isDirectory(d.path().getParent())) {
          // FileIO.deleteTree removed the directory after its files, and directory deletions are
          // durable at once here: the file went with its directory.
          return;
        }
        Files.write(d.path(), d.durableContent());
        files.put(d.path(), new FileState(d.path(), d.durableContent().length));
      }
      case Renamed r -> {
        if (Files.exists(r.target())) {
          Files.move(r.target(), r.source(), StandardCopyOption.REPLACE_EXISTING);
          FileState st = files.remove(r.target());
          if (st != null) {
            st.path = r.source();
            files.put(r.source(), st);
          }
        }
        if (r.replaced() != null) {
          Files.write(r.target(), r.replaced());
          files.put(r.target(), new FileState(r.target(), r.replaced().length));
        }
      }
    }
  }

  private <T> T live(IOCall<T> call) throws IOException {
    lifeLock.readLock().lock();
    try {
      if (crashed || haltedAt != null) {
        throw new IOException(
            "simulated power loss: this FileIO is dead, open a new one over the same directory");
      }
      return call.call();
    } finally {
      lifeLock.readLock().unlock();
    }
  }

  private static Path normalize(Path path) {
    return path.toAbsolutePath().normalize();
  }

  // guarded by stateLock
  private List<DirOp> pendingIn(Path file) {
    return pending.computeIfAbsent(file.getParent(), d -> new ArrayList<>());
  }

  // guarded by stateLock
  private FileState stateOf(FileChannel channel) {
    return byChannel.get(channel);
  }

  // guarded by stateLock
  private byte[] durableContent(Path p) throws IOException {
    byte[] all = Files.readAllBytes(p);
    FileState st = files.get(p);
    return st == null || st.durable >= all.length
        ? all
        : Arrays.copyOf(all, (int) Math.max(0, st.durable));
  }

  @Override
  public FileChannel open(Path path, OpenOption... options) throws IOException {
    Path p = normalize(path);
    return live(
        () -> {
          boolean existed = Files.exists(p);
          long sizeBefore = existed ? Files.size(p) : 0;
          FileChannel ch = super.open(path, options);
          List<OpenOption> opts = Arrays.asList(options);
          synchronized (stateLock) {
            if (byChannel.size() > 256) {
              byChannel.keySet().removeIf(c -> !c.isOpen());
            }
            FileState st = files.get(p);
            if (st == null || !existed) {
              st = new FileState(p, sizeBefore);
              files.put(p, st);
            }
            if (!existed) {
              pendingIn(p).add(new Created(p));
            }
            if (opts.contains(StandardOpenOption.TRUNCATE_EXISTING)
                && opts.contains(StandardOpenOption.WRITE)) {
              st.durable = 0;
            }
            byChannel.put(ch, st);
          }
          return channels.add(ch, p);
        });
  }

  @Override
  public void writeFully(FileChannel channel, ByteBuffer buffer) throws IOException {
    live(
        () -> {
          super.writeFully(channel, buffer);
          return null;
        });
  }

  @Override
  public int readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
    return live(() -> super.readFully(channel, buffer, position));
  }

  @Override
  public void force(FileChannel channel, boolean metadata) throws IOException {
    live(
        () -> {
          // size() throws ClosedChannelException on a closed channel, as the real force would.
          long size = channel.size();
          synchronized (stateLock) {
            FileState st = stateOf(channel);
            if (st != null) {
              st.durable = size;
              return null;
            }
          }
          super.force(channel, metadata);
          return null;
        });
  }

  @Override
  public void truncate(FileChannel channel, long size) throws IOException {
    live(
        () -> {
          super.truncate(channel, size);
          synchronized (stateLock) {
            FileState st = stateOf(channel);
            if (st != null) {
              st.durable = Math.min(st.durable, size);
            }
          }
          return null;
        });
  }

  @Override
  public void atomicMove(Path source, Path target) throws IOException {
    Path s = normalize(source);
    Path t = normalize(target);
    live(
        () -> {
          synchronized (stateLock) {
            byte[] replaced = Files.exists(t) ? durableContent(t) : null;
            super.atomicMove(source, target);
            FileState st = files.remove(s);
            if (st == null) {
              st = new FileState(t, Files.size(t));
            }
            files.remove(t);
            st.path = t;
            files.put(t, st);
            pendingIn(t).add(new Renamed(s, t, replaced));
          }
          return null;
        });
  }

  @Override
  public void deleteIfExists(Path path) throws IOException {
    Path p = normalize(path);
    live(
        () -> {
          synchronized (stateLock) {
            if (!Files.exists(p)) {
              return null;
            }
            if (Files.isDirectory(p)) {
              // Directories (FileIO.deleteTree deletes them after their files) carry no bytes to
              // restore; their deletion is treated as durable at once.
              super.deleteIfExists(path);
              return null;
            }
            byte[] content = durableContent(p);
            super.deleteIfExists(path);
            files.remove(p);
            pendingIn(p).add(new Deleted(p, content));
          }
          return null;
        });
  }

  @Override
  public void createDirectories(Path dir) throws IOException {
    live(
        () -> {
          super.createDirectories(dir);
          return null;
        });
  }

  @Override
  public void fsyncDirectory(Path dir) throws IOException {
    Path d = normalize(dir);
    live(
        () -> {
          synchronized (stateLock) {
            pending.remove(d);
          }
          return null;
        });
  }

  @Override
  public List<Path> list(Path dir, String glob) throws IOException {
    return live(() -> super.list(dir, glob));
  }

  @Override
  public long size(Path path) throws IOException {
    return live(() -> super.size(path));
  }

  @Override
  public byte[] readAllBytes(Path path) throws IOException {
    return live(() -> super.readAllBytes(path));
  }
}
