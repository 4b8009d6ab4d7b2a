package io.flashvec.index.shard;

import io.flashvec.index.InsufficientStorageException;
import io.flashvec.storage.DiskFullException;
import io.flashvec.storage.DiskSpace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A shard's side of the free-space policy ({@link DiskSpace}, ADR 0020): writes that would leave
 * less than the reserve free are refused with HTTP 507 (less than the reserve and the room index
 * builds of points already acknowledged still need, ADR 0031), and index builds and compactions
 * that would not fit above it are postponed and retried with a back-off shared by the shard's
 * background work (1 s, doubling up to 30 s, back to 1 s after one went through).
 *
 * <p>Thread-safe.
 */
final class SpaceGuard {

  static final long RETRY_MIN_MILLIS = 1_000;
  static final long RETRY_MAX_MILLIS = 30_000;

  private final Path dir;
  private final DiskSpace space;
  private final AtomicLong retryMillis = new AtomicLong();

  SpaceGuard(Path dir, DiskSpace space) {
    this.dir = dir;
    this.space = space;
  }

  /** The reserve kept free. */
  long minFreeBytes() {
    return space.minFreeBytes();
  }

  /**
   * Refuses a write of {@code bytes} that would leave less than the reserve and {@code owedBytes}
   * free with an {@link InsufficientStorageException} (HTTP 507). {@code owedBytes} is the room
   * that index builds of points already acknowledged still need (frozen segments' builds, the merge
   * that builds segments sealed raw): writes must not take it, or those points might never be
   * indexed.
   */
  void require(long bytes, long owedBytes, String what) {
    try {
      space.require(dir, bytes + owedBytes, what);
    } catch (DiskFullException e) {
      throw new InsufficientStorageException(what, e, owedBytes);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the free space [dir=" + dir + "]", e);
    }
  }

  /** Free bytes of the data directory's device; -1 if the file system cannot tell. */
  long usableBytes() {
    try {
      return space.usableBytes(dir);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** Whether {@code need} bytes fit above the reserve (true when the free space is unknown). */
  boolean fits(long need) {
    long usable = usableBytes();
    return usable < 0 || usable - need >= space.minFreeBytes();
  }

  /** The next wait before a retry for lack of space. */
  long nextRetryMillis() {
    return retryMillis.updateAndGet(
        d -> d == 0 ? RETRY_MIN_MILLIS : Math.min(2 * d, RETRY_MAX_MILLIS));
  }

  /** Notes that a build or compaction went through: the next retry for lack of space is quick. */
  void succeeded() {
    retryMillis.set(0);
  }

  /** An estimate of written bytes plus a quarter and 1 MiB (file system metadata, rounding). */
  static long withMargin(long bytes) {
    return bytes + bytes / 4 + (1 << 20);
  }
}
