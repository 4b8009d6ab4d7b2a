package io.flashvec.cluster;

import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.DiskFullException;

/**
 * The failures of the storage below a {@link CollectionService} that are not {@link
 * io.flashvec.index.FlashVecException}s but that its caller must tell apart: stored data that is
 * corrupt (an internal error whose details belong in the log), and a full disk (507).
 */
public final class EngineFailures {

  private EngineFailures() {}

  /** Whether {@code t} says that a stored file is corrupt. */
  public static boolean corruptData(Throwable t) {
    return t instanceof CorruptFileException;
  }

  /** Whether {@code t}, or one of its causes, says the disk is full (ENOSPC). */
  public static boolean diskFull(Throwable t) {
    return DiskFullException.isDiskFull(t);
  }
}
