package io.flashvec.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The one seam through which storage code touches the file system.
 *
 * <p>Every write, fsync, rename and delete of the storage engine goes through an instance of this
 * class so that tests can subclass it to fail exactly one call, or to simulate a power loss that
 * drops bytes which were written but never fsynced (see {@code CrashSimulatingFileIO} in the test
 * jar). Production code uses {@link #DEFAULT}.
 *
 * <p>Durable steps also report the named {@link CrashPoint}s they pass to {@link #crashPoint},
 * which does nothing here; a crash test's instance stops the process there. Instances are
 * thread-safe.
 */
public class FileIO {

  /** The real file system. */
  public static final FileIO DEFAULT = new FileIO();

  protected FileIO() {}

  /** Opens a channel; see {@link FileChannel#open(Path, OpenOption...)}. */
  public FileChannel open(Path path, OpenOption... options) throws IOException {
    return FileChannel.open(path, options);
  }

  /**
   * The most bytes of a heap buffer one channel call reads or writes. The JDK copies a heap buffer
   * through a temporary direct buffer of the bytes remaining and keeps that buffer in a cache of
   * the calling thread for its lifetime: one read of a 40 MiB file into a heap buffer left 40 MiB
   * of native memory with each of the threads that did it (four threads: 151 MB more resident
   * anonymous memory), outside the heap and outside the memory budget's native estimate. In chunks
   * of this size the copy stays at 1 MiB a thread.
   */
  static final int HEAP_CHUNK = 1 << 20;

  /** Writes the whole buffer at the channel's position. */
  public void writeFully(FileChannel channel, ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      if (buffer.isDirect() || buffer.remaining() <= HEAP_CHUNK) {
        channel.write(buffer);
      } else {
        int n = channel.write(buffer.slice(buffer.position(), HEAP_CHUNK));
        buffer.position(buffer.position() + n);
      }
    }
  }

  /** Reads until the buffer is full or the end of the file; returns the bytes read. */
  public int readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
    return readChunked(channel, buffer, position);
  }

  private static int readChunked(FileChannel channel, ByteBuffer buffer, long position)
      throws IOException {
    int total = 0;
    while (buffer.hasRemaining()) {
      int n;
      if (buffer.isDirect() || buffer.remaining() <= HEAP_CHUNK) {
        n = channel.read(buffer, position + total);
      } else {
        n = channel.read(buffer.slice(buffer.position(), HEAP_CHUNK), position + total);
        if (n > 0) {
          buffer.position(buffer.position() + n);
        }
      }
      if (n < 0) {
        break;
      }
      total += n;
    }
    return total;
  }

  /** Makes the file's data durable (fdatasync when {@code metadata} is false). */
  public void force(FileChannel channel, boolean metadata) throws IOException {
    channel.force(metadata);
  }

  /** Cuts the file to {@code size} bytes. */
  public void truncate(FileChannel channel, long size) throws IOException {
    channel.truncate(size);
  }

  /** Renames atomically, replacing the target. */
  public void atomicMove(Path source, Path target) throws IOException {
    try {
      Files.move(
          source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      throw new IOException(
          "file system cannot rename atomically [from=" + source + ", to=" + target + "]", e);
    }
  }

  /** Deletes a file if it exists. */
  public void deleteIfExists(Path path) throws IOException {
    Files.deleteIfExists(path);
  }

  /** Deletes a file or a directory with everything below it, if it exists. */
  public void deleteTree(Path path) throws IOException {
    if (!Files.exists(path)) {
      return;
    }
    try (var walk = Files.walk(path)) {
      boolean first = true;
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        deleteIfExists(p);
        if (first) {
          crashPoint(CrashPoint.TREE_DELETE_PARTIAL);
          first = false;
        }
      }
    }
  }

  /**
   * Called by a durable step when it reaches {@code point} (see {@link CrashPoint}); does nothing
   * on the real file system. Crash tests override it to stop the process at that point.
   */
  public void crashPoint(CrashPoint point) {}

  /** Creates a directory and its parents. */
  public void createDirectories(Path dir) throws IOException {
    Files.createDirectories(dir);
  }

  /** Fsyncs a directory so that creations, renames and deletions in it are durable. */
  public void fsyncDirectory(Path dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  /** Lists the entries of a directory whose file name matches a glob, sorted by name. */
  public List<Path> list(Path dir, String glob) throws IOException {
    List<Path> out = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, glob)) {
      ds.forEach(out::add);
    }
    out.sort(null);
    return out;
  }

  /** Returns the size of a file in bytes. */
  public long size(Path path) throws IOException {
    return Files.size(path);
  }

  /**
   * Reads a whole file, in chunks of {@link #HEAP_CHUNK} ({@link Files#readAllBytes} reads through
   * one temporary direct buffer of the file's size, kept with the thread).
   *
   * @throws IOException also when the file is larger than an array can hold, or shrinks while it is
   *     read
   */
  public byte[] readAllBytes(Path path) throws IOException {
    try (FileChannel ch = FileChannel.open(path, java.nio.file.StandardOpenOption.READ)) {
      long size = ch.size();
      if (size > Integer.MAX_VALUE - 8) {
        throw new IOException(
            "file too large to read whole [path=" + path + ", size=" + size + "]");
      }
      byte[] out = new byte[(int) size];
      ByteBuffer b = ByteBuffer.wrap(out);
      int n = readChunked(ch, b, 0);
      if (n != size) {
        throw new IOException(
            "file shrank while read [path=" + path + ", size=" + size + ", read=" + n + "]");
      }
      return out;
    }
  }

  /**
   * Bytes this process may still write on the file system that holds {@code path} (statvfs's {@code
   * f_bavail}: blocks reserved for root are not counted). {@code path} or, if it does not exist
   * yet, its nearest existing ancestor is asked. One system call, no mount-table lookup, so callers
   * may ask before every write.
   */
  public long usableSpace(Path path) throws IOException {
    Path p = path.toAbsolutePath();
    while (p != null && !Files.exists(p)) {
      p = p.getParent();
    }
    if (p == null) {
      throw new java.nio.file.NoSuchFileException(path.toString());
    }
    return p.toFile().getUsableSpace();
  }
}
