package io.flashvec.storage;

import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * Asynchronous reads of whole pages of one file: {@link #read} returns at once, and {@code done}
 * runs on an I/O thread when the bytes are in {@code dst} or the read failed. Many reads of many
 * callers may be outstanding together; that is the point (see {@link IoThreads}).
 *
 * <p>Implementations are thread-safe. After {@link #close()} no read touches the file any more:
 * reads submitted later, and reads still queued, complete with an {@link IOException}.
 */
public interface PageReader extends Closeable {

  /** What runs when a read finishes. */
  @FunctionalInterface
  interface Completion {
    /**
     * @param tag the caller's tag given to {@link #read}
     * @param error null when {@code dst} holds the bytes, else why not
     */
    void completed(int tag, IOException error);
  }

  /**
   * Reads {@code dst.byteSize()} bytes at {@code offset} into {@code dst}, then calls {@code done}
   * (on an I/O thread, or on the caller's when the reader is closed). {@code offset} and the length
   * are multiples of {@link MappedFile#PAGE}; {@code dst} must be native memory of a shared or
   * automatic arena (the read runs on another thread) that stays alive until {@code done} ran;
   * reading past the end of the file is an error.
   */
  void read(long offset, MemorySegment dst, int tag, Completion done);

  /** The file read. */
  Path path();

  /**
   * Opens {@code path} for positional reads issued by {@code threads}, with kernel readahead off
   * ({@code POSIX_FADV_RANDOM}): each read reads its own pages and no others, so the device's read
   * counters agree with the reads issued.
   *
   * @throws IOException when the file cannot be opened, or native access is unavailable
   */
  static PageReader open(Path path, IoThreads threads) throws IOException {
    return PreadPageReader.open(path, threads);
  }

  /** Closes the file once the reads running on it are done; queued reads then fail. */
  @Override
  void close();
}
