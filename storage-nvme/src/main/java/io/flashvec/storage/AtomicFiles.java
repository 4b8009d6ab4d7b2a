package io.flashvec.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Replaces small files (manifests, collection metadata) so that a crash leaves either the old or
 * the new content, never a mix: write a temporary file, fsync it, rename it over the target, fsync
 * the directory.
 */
public final class AtomicFiles {

  private AtomicFiles() {}

  /**
   * Durably replaces {@code target} with {@code content}. If writing the temp file fails (a full
   * disk, say), the temp file is removed again and {@code target} is untouched.
   */
  public static void write(FileIO io, Path target, byte[] content) throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    io.createDirectories(dir);
    Path tmp = dir.resolve(target.getFileName() + ".tmp");
    try {
      try (FileChannel ch =
          io.open(
              tmp,
              StandardOpenOption.CREATE,
              StandardOpenOption.WRITE,
              StandardOpenOption.TRUNCATE_EXISTING)) {
        io.writeFully(ch, ByteBuffer.wrap(content));
        io.force(ch, true);
      }
      io.crashPoint(CrashPoint.ATOMIC_WRITE_TEMP_WRITTEN);
      io.atomicMove(tmp, target);
      io.crashPoint(CrashPoint.ATOMIC_WRITE_RENAMED);
    } catch (IOException | RuntimeException e) {
      try {
        io.deleteIfExists(tmp); // no-op once renamed
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed); // the next open removes stale temp files
      }
      throw e;
    }
    io.fsyncDirectory(dir);
  }

  /**
   * Removes the temp file a {@link #write} of {@code target} leaves when the process dies before
   * its rename (the previous {@code target} is still intact). Returns whether there was one.
   */
  public static boolean removeStaleTemp(FileIO io, Path target) throws IOException {
    Path tmp = target.toAbsolutePath().getParent().resolve(target.getFileName() + ".tmp");
    if (!java.nio.file.Files.isRegularFile(tmp)) {
      return false;
    }
    io.deleteIfExists(tmp);
    return true;
  }

  /** Deletes a file and makes the deletion durable. */
  public static void delete(FileIO io, Path target) throws IOException {
    io.deleteIfExists(target);
    io.fsyncDirectory(target.toAbsolutePath().getParent());
  }
}
