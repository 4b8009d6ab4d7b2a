package io.flashvec.storage;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;

/**
 * A write did not fit on the device: the operating system answered {@code ENOSPC} ("No space left
 * on device") or {@code EDQUOT} ("Disk quota exceeded"), or a {@link DiskSpace} check found less
 * free space than the write needs on top of the reserve the server keeps.
 *
 * <p>Unlike other I/O errors this one is expected to go away (someone frees space, a volume grows),
 * and it says nothing about the state of bytes written before: a writer that gets it undoes its
 * partial write and stays usable (see {@link Wal}). {@link #usableBytes()} is what the file system
 * reported as available when the failure was seen, for messages and metrics.
 */
public final class DiskFullException extends IOException {

  private static final long serialVersionUID = 1L;

  /** The strerror texts of ENOSPC and EDQUOT, as the JDK puts them into its exceptions. */
  private static final String[] MESSAGES = {"No space left on device", "Disk quota exceeded"};

  private final transient Path directory;
  private final long usableBytes;
  private final long neededBytes;
  private final long minFreeBytes;

  /**
   * @param what the operation that did not fit (e.g. {@code "WAL append"})
   * @param directory where it wrote
   * @param usableBytes free bytes the file system reported ({@code -1}: unknown)
   * @param neededBytes bytes the operation needed ({@code -1}: unknown)
   * @param minFreeBytes the reserve the server keeps free ({@code 0}: none)
   * @param cause the operating system's error, or {@code null} for a refused {@link DiskSpace}
   *     check
   */
  public DiskFullException(
      String what,
      Path directory,
      long usableBytes,
      long neededBytes,
      long minFreeBytes,
      IOException cause) {
    super(
        what
            + ": not enough free space [dir="
            + directory
            + ", usableBytes="
            + usableBytes
            + ", neededBytes="
            + neededBytes
            + ", minFreeBytes="
            + minFreeBytes
            + "]",
        cause);
    this.directory = directory;
    this.usableBytes = usableBytes;
    this.neededBytes = neededBytes;
    this.minFreeBytes = minFreeBytes;
  }

  /** The directory the failed write went to. */
  public Path directory() {
    return directory;
  }

  /** Free bytes the file system reported when the failure was seen; {@code -1} if unknown. */
  public long usableBytes() {
    return usableBytes;
  }

  /** Bytes the failed operation needed; {@code -1} if unknown. */
  public long neededBytes() {
    return neededBytes;
  }

  /** The reserve that was kept free; {@code 0} when the device itself was full. */
  public long minFreeBytes() {
    return minFreeBytes;
  }

  /**
   * Whether {@code t} or one of its causes means "the device is full": a {@code DiskFullException},
   * or an {@link IOException} (a {@link FileSystemException} included) whose message is the
   * operating system's ENOSPC or EDQUOT text. Other failures (EIO, a failed fsync, a closed
   * channel) are not.
   */
  public static boolean isDiskFull(Throwable t) {
    return find(t) != null || findOsError(t) != null;
  }

  /** The first {@code DiskFullException} among {@code t} and its causes, or {@code null}. */
  public static DiskFullException find(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof DiskFullException d) {
        return d;
      }
    }
    return null;
  }

  private static IOException findOsError(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof IOException io && saysNoSpace(io)) {
        return io;
      }
    }
    return null;
  }

  private static boolean saysNoSpace(IOException e) {
    String m = e.getMessage();
    String reason = e instanceof FileSystemException fse ? fse.getReason() : null;
    for (String s : MESSAGES) {
      if ((m != null && m.contains(s)) || (reason != null && reason.contains(s))) {
        return true;
      }
    }
    return false;
  }

  /**
   * {@code e} as a {@code DiskFullException} if it (or a cause) means the device is full, with the
   * file system's free bytes under {@code directory} measured now; else {@code null}.
   */
  public static DiskFullException classify(
      IOException e, String what, FileIO io, Path directory, long neededBytes) {
    DiskFullException known = find(e);
    if (known != null) {
      return known;
    }
    if (findOsError(e) == null) {
      return null;
    }
    long usable;
    try {
      usable = io.usableSpace(directory);
    } catch (IOException | RuntimeException probe) {
      usable = -1;
    }
    return new DiskFullException(what, directory, usable, neededBytes, 0, e);
  }
}
