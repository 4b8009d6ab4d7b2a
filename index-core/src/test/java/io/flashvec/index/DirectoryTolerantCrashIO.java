package io.flashvec.index;

import io.flashvec.storage.testing.CrashSimulatingFileIO;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A {@link CrashSimulatingFileIO} that can also delete (empty) directories, as {@link
 * io.flashvec.storage.FileIO#deleteTree} asks of {@code deleteIfExists} since it replaced the
 * modules' own recursive deletes: the shared helper reads a deleted path's bytes to be able to
 * restore it after a crash, which fails with "Is a directory". Directory deletions are treated as
 * durable at once. Remove this class once the helper in storage-nvme handles directories.
 */
final class DirectoryTolerantCrashIO extends CrashSimulatingFileIO {

  @Override
  public void deleteIfExists(Path path) throws IOException {
    if (Files.isDirectory(path)) {
      if (crashed()) {
        throw new IOException("simulated power loss: this FileIO is dead");
      }
      Files.deleteIfExists(path);
      return;
    }
    super.deleteIfExists(path);
  }
}
