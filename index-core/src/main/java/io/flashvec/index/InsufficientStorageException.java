package io.flashvec.index;

import io.flashvec.storage.DiskFullException;

/**
 * Maps to HTTP 507: the data directory's device has no room for the write (it is full, or below the
 * reserve the server keeps for checkpoints and shutdown). Nothing was written; reads keep working,
 * and the same write succeeds once space is freed.
 *
 * <p>The message is for clients: it names the free and reserved bytes but no server path (the
 * cause, a {@link DiskFullException}, has the directory for the log).
 */
public class InsufficientStorageException extends FlashVecException {

  public InsufficientStorageException(String what, DiskFullException cause) {
    super(message(what, cause.usableBytes(), cause.minFreeBytes(), 0), cause);
  }

  /**
   * For a write refused because it would take room that {@code owedBytes} of index builds of points
   * already acknowledged still need (frozen segments waiting for their build, segments sealed raw
   * waiting for the merge that builds their graph).
   */
  public InsufficientStorageException(String what, DiskFullException cause, long owedBytes) {
    super(message(what, cause.usableBytes(), cause.minFreeBytes(), owedBytes), cause);
  }

  /**
   * For a failure whose cause chain holds the operating system's ENOSPC rather than a {@link
   * DiskFullException}; {@code usableBytes} measured by the caller ({@code -1}: unknown).
   */
  public InsufficientStorageException(
      String what, long usableBytes, long minFreeBytes, Throwable cause) {
    super(message(what, usableBytes, minFreeBytes, 0), cause);
  }

  /**
   * The client-facing message for a refused {@code what} (e.g. {@code "upsert"}); {@code owedBytes}
   * (0: none) is the room kept above the reserve for index builds of points already acknowledged.
   */
  static String message(String what, long usableBytes, long minFreeBytes, long owedBytes) {
    StringBuilder b =
        new StringBuilder("Insufficient storage: ")
            .append(what)
            .append(" refused, the data directory's disk is full (");
    b.append(usableBytes < 0 ? "unknown" : ByteSize.human(usableBytes)).append(" free");
    if (minFreeBytes > 0) {
      b.append(", ").append(ByteSize.human(minFreeBytes)).append(" kept in reserve");
    }
    if (owedBytes > 0) {
      b.append(", ").append(ByteSize.human(owedBytes)).append(" kept for index builds");
    }
    b.append("); writes resume once space is freed [usableBytes=").append(usableBytes);
    b.append(", minFreeBytes=").append(minFreeBytes);
    if (owedBytes > 0) {
      b.append(", owedBytes=").append(owedBytes);
    }
    b.append(']');
    return b.toString();
  }

  @Override
  public int httpStatus() {
    return 507;
  }
}
