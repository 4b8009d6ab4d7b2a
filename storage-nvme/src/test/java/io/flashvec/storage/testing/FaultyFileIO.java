package io.flashvec.storage.testing;

import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A {@link FileIO} that forwards to a delegate and fails chosen calls, so tests reach error paths.
 *
 * <p>Arm it per {@link Op}: {@link #failOnce(Op, int) failOnce(WRITE, 3)} makes the third {@code
 * writeFully} from now throw an {@link InjectedIOException} and lets every other call through;
 * {@link #failFrom(Op, int)} fails the n-th call and every later one, like a device that died. An
 * optional path filter counts only calls on matching files (for {@code WRITE}, {@code FORCE} and
 * {@code TRUNCATE} the path is the one the channel was opened with through this instance). With
 * {@link #partialWrites(boolean)} an injected write failure first writes half of the buffer, as a
 * full disk does.
 *
 * <p>{@link #noSpaceFailures(boolean)} makes injected failures look like a full device ({@code "No
 * space left on device"}), and {@link #spaceLeft(long)} simulates one: writes use up a byte budget,
 * the write that does not fit writes what fits and fails with {@code ENOSPC}, creating a file or
 * directory fails once nothing is left, and {@link #usableSpace} reports the budget. Deleting files
 * gives nothing back; a test frees space by calling {@code spaceLeft} again.
 *
 * <p>Unarmed, it is a transparent wrapper that still counts calls and tracks the channels it
 * opened, so {@link #assertNoOpenChannels()} works as a file-descriptor leak check. The delegate
 * defaults to {@link FileIO#DEFAULT}; pass a {@link CrashSimulatingFileIO} to combine failures with
 * crashes.
 *
 * <p>Thread-safe: arming, counting and forwarding may happen on any thread.
 */
public class FaultyFileIO extends FileIO {

  /** The operations of {@link FileIO} that can be failed. */
  public enum Op {
    OPEN,
    WRITE,
    READ,
    FORCE,
    TRUNCATE,
    ATOMIC_MOVE,
    DELETE,
    CREATE_DIRECTORIES,
    FSYNC_DIRECTORY,
    LIST,
    SIZE,
    READ_ALL_BYTES
  }

  /** The exception thrown for an injected failure, so tests can tell it from a real one. */
  public static final class InjectedIOException extends IOException {
    private static final long serialVersionUID = 1L;

    InjectedIOException(String message) {
      super(message);
    }
  }

  private static final Predicate<Path> ANY_PATH = p -> true;

  private record Rule(int nth, boolean sticky, Predicate<Path> filter, AtomicInteger seen) {
    boolean fires(Path path) {
      if (filter != ANY_PATH && (path == null || !filter.test(path))) {
        return false;
      }
      int k = seen.incrementAndGet();
      return k == nth || (sticky && k > nth);
    }
  }

  private final FileIO delegate;
  private final Map<Op, AtomicInteger> calls = new EnumMap<>(Op.class);
  private final Map<Op, Rule> rules = new ConcurrentHashMap<>();
  private final AtomicInteger injected = new AtomicInteger();
  private final OpenChannels channels = new OpenChannels();
  private volatile boolean partialWrites;
  private volatile boolean noSpaceFailures;
  private long spaceLeft = UNLIMITED; // guarded by this

  /** {@link #spaceLeft(long)} without a limit: the real file system's free space applies. */
  public static final long UNLIMITED = Long.MAX_VALUE;

  /** The operating system's text for ENOSPC, which {@code DiskFullException} recognises. */
  public static final String NO_SPACE = "No space left on device";

  /** Wraps the real file system. */
  public FaultyFileIO() {
    this(FileIO.DEFAULT);
  }

  /** Wraps {@code delegate}. */
  public FaultyFileIO(FileIO delegate) {
    this.delegate = delegate;
    for (Op op : Op.values()) {
      calls.put(op, new AtomicInteger());
    }
  }

  /** Fails only the {@code nth} call of {@code op} from now on (1 is the next call). */
  public FaultyFileIO failOnce(Op op, int nth) {
    return arm(op, nth, false, ANY_PATH);
  }

  /** Like {@link #failOnce(Op, int)}, counting only calls on paths that match {@code filter}. */
  public FaultyFileIO failOnce(Op op, int nth, Predicate<Path> filter) {
    return arm(op, nth, false, filter);
  }

  /** Fails the {@code nth} call of {@code op} from now on and every call after it. */
  public FaultyFileIO failFrom(Op op, int nth) {
    return arm(op, nth, true, ANY_PATH);
  }

  /** Like {@link #failFrom(Op, int)}, counting only calls on paths that match {@code filter}. */
  public FaultyFileIO failFrom(Op op, int nth, Predicate<Path> filter) {
    return arm(op, nth, true, filter);
  }

  private FaultyFileIO arm(Op op, int nth, boolean sticky, Predicate<Path> filter) {
    if (nth < 1) {
      throw new IllegalArgumentException("nth counts from 1 [op=" + op + ", nth=" + nth + "]");
    }
    rules.put(op, new Rule(nth, sticky, filter, new AtomicInteger()));
    return this;
  }

  /** When an injected write failure fires, first write half of the remaining bytes. */
  public FaultyFileIO partialWrites(boolean enabled) {
    this.partialWrites = enabled;
    return this;
  }

  /**
   * Injected failures say {@value #NO_SPACE}, as a full device does, instead of a generic error.
   */
  public FaultyFileIO noSpaceFailures(boolean enabled) {
    this.noSpaceFailures = enabled;
    return this;
  }

  /**
   * From now on the device has {@code bytes} free ({@link #UNLIMITED}: no limit): see the class
   * javadoc. Call again to free space.
   */
  public synchronized FaultyFileIO spaceLeft(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("space must not be negative [bytes=" + bytes + "]");
    }
    this.spaceLeft = bytes;
    return this;
  }

  /** The simulated free bytes ({@link #UNLIMITED} when not simulating). */
  public synchronized long spaceLeft() {
    return spaceLeft;
  }

  /** Removes every armed failure. */
  public void disarm() {
    rules.clear();
  }

  /** Removes the armed failure of one operation. */
  public void disarm(Op op) {
    rules.remove(op);
  }

  /** How many times {@code op} was called on this instance, failed calls included. */
  public int calls(Op op) {
    return calls.get(op).get();
  }

  /** How many failures were injected so far. */
  public int injectedFailures() {
    return injected.get();
  }

  /** Files whose channels, opened through this instance, are still open. */
  public List<Path> openChannels() {
    return channels.stillOpen();
  }

  /** Throws an {@link AssertionError} naming the files if any channel opened here is still open. */
  public void assertNoOpenChannels() {
    channels.assertAllClosed("FaultyFileIO");
  }

  private void maybeFail(Op op, Path path) throws InjectedIOException {
    int call = calls.get(op).incrementAndGet();
    Rule rule = rules.get(op);
    if (rule != null && rule.fires(path)) {
      injected.incrementAndGet();
      throw new InjectedIOException(
          (noSpaceFailures ? NO_SPACE + " (injected)" : "injected I/O failure")
              + " [op="
              + op
              + ", call="
              + call
              + ", path="
              + path
              + "]");
    }
  }

  /** Fails like a full device when the simulated space is used up. */
  private synchronized void requireSomeSpace(Op op, Path path) throws InjectedIOException {
    if (spaceLeft == 0) {
      injected.incrementAndGet();
      throw new InjectedIOException(
          NO_SPACE + " (simulated full device) [op=" + op + ", path=" + path + "]");
    }
  }

  /**
   * Takes {@code want} bytes from the simulated space; returns how many fit (all of them, unless
   * the device fills up).
   */
  private synchronized long takeSpace(long want) {
    if (spaceLeft == UNLIMITED) {
      return want;
    }
    long got = Math.min(want, spaceLeft);
    spaceLeft -= got;
    return got;
  }

  @Override
  public FileChannel open(Path path, OpenOption... options) throws IOException {
    maybeFail(Op.OPEN, path);
    for (OpenOption o : options) {
      if ((o == StandardOpenOption.CREATE || o == StandardOpenOption.CREATE_NEW)
          && !Files.exists(path)) {
        requireSomeSpace(Op.OPEN, path);
      }
    }
    return channels.add(delegate.open(path, options), path);
  }

  @Override
  public void writeFully(FileChannel channel, ByteBuffer buffer) throws IOException {
    Path path = channels.pathOf(channel);
    try {
      maybeFail(Op.WRITE, path);
    } catch (InjectedIOException e) {
      if (partialWrites && buffer.remaining() > 1) {
        ByteBuffer half = buffer.duplicate();
        half.limit(half.position() + half.remaining() / 2);
        delegate.writeFully(channel, half);
        buffer.position(half.position());
      }
      throw e;
    }
    int want = buffer.remaining();
    long fits = takeSpace(want);
    if (fits < want) {
      ByteBuffer part = buffer.duplicate();
      part.limit(part.position() + (int) fits);
      delegate.writeFully(channel, part);
      buffer.position(part.position());
      injected.incrementAndGet();
      throw new InjectedIOException(
          NO_SPACE + " (simulated full device) [op=WRITE, path=" + path + "]");
    }
    delegate.writeFully(channel, buffer);
  }

  @Override
  public int readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
    maybeFail(Op.READ, channels.pathOf(channel));
    return delegate.readFully(channel, buffer, position);
  }

  @Override
  public void force(FileChannel channel, boolean metadata) throws IOException {
    maybeFail(Op.FORCE, channels.pathOf(channel));
    delegate.force(channel, metadata);
  }

  @Override
  public void truncate(FileChannel channel, long size) throws IOException {
    maybeFail(Op.TRUNCATE, channels.pathOf(channel));
    delegate.truncate(channel, size);
  }

  @Override
  public void atomicMove(Path source, Path target) throws IOException {
    maybeFail(Op.ATOMIC_MOVE, target);
    delegate.atomicMove(source, target);
  }

  @Override
  public void deleteIfExists(Path path) throws IOException {
    maybeFail(Op.DELETE, path);
    delegate.deleteIfExists(path);
  }

  @Override
  public void createDirectories(Path dir) throws IOException {
    maybeFail(Op.CREATE_DIRECTORIES, dir);
    if (!Files.isDirectory(dir)) {
      requireSomeSpace(Op.CREATE_DIRECTORIES, dir);
    }
    delegate.createDirectories(dir);
  }

  @Override
  public void fsyncDirectory(Path dir) throws IOException {
    maybeFail(Op.FSYNC_DIRECTORY, dir);
    delegate.fsyncDirectory(dir);
  }

  @Override
  public List<Path> list(Path dir, String glob) throws IOException {
    maybeFail(Op.LIST, dir);
    return delegate.list(dir, glob);
  }

  @Override
  public long size(Path path) throws IOException {
    maybeFail(Op.SIZE, path);
    return delegate.size(path);
  }

  @Override
  public byte[] readAllBytes(Path path) throws IOException {
    maybeFail(Op.READ_ALL_BYTES, path);
    return delegate.readAllBytes(path);
  }

  @Override
  public void crashPoint(CrashPoint point) {
    delegate.crashPoint(point);
  }

  @Override
  public long usableSpace(Path path) throws IOException {
    long left = spaceLeft();
    return left == UNLIMITED ? delegate.usableSpace(path) : left;
  }
}
