package io.flashvec.cluster;

import java.nio.file.Path;

/**
 * A server refused a data directory that another FlashVec server holds: its lock file is locked.
 *
 * <p>The holder writes its process id into the lock file, so the message names the process to stop
 * ({@code pid=unknown} when the file cannot be read).
 */
public final class DataDirectoryInUseException extends IllegalStateException {
  private final Path dataDir;
  private final String holderPid;

  public DataDirectoryInUseException(Path dataDir, String holderPid) {
    super(
        "data directory is used by another FlashVec process [dataDir="
            + dataDir
            + ", pid="
            + holderPid
            + "]");
    this.dataDir = dataDir;
    this.holderPid = holderPid;
  }

  public Path dataDir() {
    return dataDir;
  }

  /** The holder's process id as written in its lock file, or {@code unknown}. */
  public String holderPid() {
    return holderPid;
  }
}
