package io.flashvec.cluster.query;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The highest primary epoch each local replica has accepted, kept on disk so that it survives a
 * restart: one file per replica, {@code <dir>/<replica>}, holding the number as decimal text,
 * replaced atomically (write to a temporary file, fsync, rename, fsync the directory). An epoch
 * changes only when a shard's primary changes, so the writes are rare.
 *
 * <p>A replica refuses replicated writes stamped with a lower epoch than this: they come from a
 * primary that has since been replaced (it was cut off or paused, and does not know yet), and
 * applying them could put an old value over one the new primary acknowledged.
 *
 * <p>Thread-safe.
 */
public final class Epochs {

  private final Path dir;
  private final Map<String, Long> max = new ConcurrentHashMap<>();

  /** Loads the epochs under {@code dir}, creating it if needed. */
  public Epochs(Path dir) {
    this.dir = dir;
    try {
      Files.createDirectories(dir);
      try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
        for (Path f : files) {
          String name = f.getFileName().toString();
          if (name.endsWith(".tmp")) {
            Files.deleteIfExists(f); // a raise that did not finish; the old file stands
            continue;
          }
          String text = Files.readString(f).trim();
          try {
            max.put(name, Long.parseLong(text));
          } catch (NumberFormatException e) {
            throw new IllegalStateException(
                "unreadable primary epoch file [file=" + f + ", content=" + text + "]", e);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read primary epochs [dir=" + dir + "]", e);
    }
  }

  /** The highest epoch {@code replica} accepted, 0 if none. */
  public long get(String replica) {
    return max.getOrDefault(replica, 0L);
  }

  /**
   * Records that {@code replica} accepted {@code epoch}, durably, if it is higher than the one on
   * record; returns the highest epoch afterwards.
   */
  public synchronized long raise(String replica, long epoch) {
    long current = get(replica);
    if (epoch <= current) {
      return current;
    }
    Path tmp = dir.resolve(replica + ".tmp");
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(ByteBuffer.wrap((epoch + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      ch.force(true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write primary epoch [file=" + tmp + "]", e);
    }
    try {
      Files.move(tmp, dir.resolve(replica), StandardCopyOption.ATOMIC_MOVE);
      try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
        d.force(true);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot record primary epoch [dir=" + dir + "]", e);
    }
    max.put(replica, epoch);
    return epoch;
  }

  /** Forgets a dropped replica's epoch. */
  public synchronized void remove(String replica) {
    max.remove(replica);
    try {
      Files.deleteIfExists(dir.resolve(replica));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove primary epoch [replica=" + replica + "]", e);
    }
  }
}
