package io.flashvec.storage;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The free-space policy of a data directory: work that makes the data grow (new writes, index
 * builds, compactions) runs only while it leaves at least {@link #minFreeBytes()} free on the
 * device; work that lets the server stop cleanly (a checkpoint's manifest and deletion bitmaps,
 * syncing and closing the WAL) never asks and may use that reserve.
 *
 * <p>So when the disk fills up, writes are refused with a {@link DiskFullException} while there is
 * still room to checkpoint, to finish or cancel background work and to shut down, and they resume
 * by themselves as soon as space is freed: every check asks the file system again (one {@code
 * statvfs}, about a microsecond). When something else fills the device past the reserve, the
 * writers still handle {@code ENOSPC} without losing or poisoning anything (see {@link Wal}).
 *
 * <p>Immutable and thread-safe.
 */
public final class DiskSpace {

  private final FileIO io;
  private final long minFreeBytes;

  /**
   * @param io the file system seam ({@link FileIO#usableSpace})
   * @param minFreeBytes free bytes to keep for checkpoints and shutdown; 0 keeps no reserve (writes
   *     still stop at a full device)
   */
  public DiskSpace(FileIO io, long minFreeBytes) {
    if (minFreeBytes < 0) {
      throw new IllegalArgumentException(
          "minimum free bytes must not be negative [minFreeBytes=" + minFreeBytes + "]");
    }
    this.io = io;
    this.minFreeBytes = minFreeBytes;
  }

  /** The reserve kept free for checkpoints and shutdown. */
  public long minFreeBytes() {
    return minFreeBytes;
  }

  /** Bytes the file system holding {@code dir} reports as available now. */
  public long usableBytes(Path dir) throws IOException {
    return io.usableSpace(dir);
  }

  /** Whether {@code bytes} more fit under {@code dir} with the reserve still free afterwards. */
  public boolean hasRoom(Path dir, long bytes) throws IOException {
    return io.usableSpace(dir) - bytes >= minFreeBytes;
  }

  /**
   * Throws unless {@code bytes} more fit under {@code dir} with the reserve still free afterwards.
   *
   * @param what the operation, for the message (e.g. {@code "upsert"})
   * @throws DiskFullException when they do not fit, with the free bytes measured
   */
  public void require(Path dir, long bytes, String what) throws IOException {
    long usable = io.usableSpace(dir);
    if (usable - bytes < minFreeBytes) {
      throw new DiskFullException(what, dir, usable, bytes, minFreeBytes, null);
    }
  }

  @Override
  public String toString() {
    return "DiskSpace[minFreeBytes=" + minFreeBytes + "]";
  }
}
