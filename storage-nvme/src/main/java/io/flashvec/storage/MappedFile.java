package io.flashvec.storage;

import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A read-only file mapped with {@code java.lang.foreign}, advised {@code MADV_RANDOM} (no
 * readahead: a graph hop touches one record, and readahead would read pages nobody asked for).
 *
 * <p>The reads of one beam step go to the device together: {@link #prefetch} issues {@code
 * madvise(MADV_WILLNEED)} for each record of the step, which starts the reads asynchronously, and
 * the searcher touches the records afterwards, so the step waits for the slowest read instead of
 * the sum of them. {@link #residentPages} ({@code mincore}) tells which pages were not in the page
 * cache before such a prefetch, for per-query I/O accounting (a prefetched page is not a major
 * fault of the thread that later touches it).
 *
 * <p>The mapping lives in a shared arena: {@link #close()} unmaps it, and a thread still reading
 * gets an {@link IllegalStateException}, never a crash. Native calls need {@code
 * --enable-native-access=ALL-UNNAMED}; where they are unavailable the mapping still works and the
 * advice calls do nothing.
 */
public final class MappedFile implements Closeable {

  public static final int PAGE = 4096;

  private static final int MADV_RANDOM = 1;
  private static final int MADV_WILLNEED = 3;
  private static final int MADV_DONTNEED = 4;
  private static final int POSIX_FADV_DONTNEED = 4;
  private static final int O_RDONLY = 0;

  private static final MethodHandle MADVISE =
      downcall(
          "madvise",
          FunctionDescriptor.of(
              ValueLayout.JAVA_INT,
              ValueLayout.ADDRESS,
              ValueLayout.JAVA_LONG,
              ValueLayout.JAVA_INT));
  private static final MethodHandle MINCORE =
      downcall(
          "mincore",
          FunctionDescriptor.of(
              ValueLayout.JAVA_INT,
              ValueLayout.ADDRESS,
              ValueLayout.JAVA_LONG,
              ValueLayout.ADDRESS));
  private static final MethodHandle OPEN =
      downcall(
          "open",
          FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
  private static final MethodHandle CLOSE =
      downcall("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
  private static final MethodHandle FADVISE =
      downcall(
          "posix_fadvise",
          FunctionDescriptor.of(
              ValueLayout.JAVA_INT,
              ValueLayout.JAVA_INT,
              ValueLayout.JAVA_LONG,
              ValueLayout.JAVA_LONG,
              ValueLayout.JAVA_INT));

  private final Path path;
  private final Arena arena;
  private final MemorySegment segment;

  private MappedFile(Path path, Arena arena, MemorySegment segment) {
    this.path = path;
    this.arena = arena;
    this.segment = segment;
  }

  private static MethodHandle downcall(String name, FunctionDescriptor fd) {
    try {
      Linker linker = Linker.nativeLinker();
      return linker.defaultLookup().find(name).map(a -> linker.downcallHandle(a, fd)).orElse(null);
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  /** Maps the whole file read-only and advises random access. */
  public static MappedFile open(FileIO io, Path path) throws IOException {
    Arena arena = Arena.ofShared();
    try (FileChannel ch = io.open(path, StandardOpenOption.READ)) {
      long size = ch.size();
      MemorySegment seg =
          size == 0 ? MemorySegment.NULL : ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
      MappedFile f = new MappedFile(path, arena, seg);
      if (size > 0) {
        f.madvise(0, size, MADV_RANDOM);
      }
      return f;
    } catch (IOException | RuntimeException e) {
      arena.close();
      throw e;
    }
  }

  /** Wraps bytes already on the heap (an index kept in memory) in the same interface. */
  public static MappedFile onHeap(Path path, byte[] bytes) {
    return new MappedFile(path, null, MemorySegment.ofArray(bytes));
  }

  public MemorySegment segment() {
    return segment;
  }

  public long size() {
    return segment.byteSize();
  }

  public Path path() {
    return path;
  }

  /** Whether this is a real mapping (not heap bytes), so page-cache advice applies. */
  public boolean mapped() {
    return arena != null;
  }

  /**
   * Unmaps this process's copies of the pages ({@code MADV_DONTNEED}; the next touch faults them in
   * again), so that {@link #evictFromPageCache} can drop them from the page cache.
   */
  public void dropMappedPages() {
    if (arena != null) {
      madvise(0, segment.byteSize(), MADV_DONTNEED);
    }
  }

  /** Starts reading the pages of {@code [offset, offset+length)} without waiting for them. */
  public void prefetch(long offset, long length) {
    if (arena != null) {
      madvise(offset, length, MADV_WILLNEED);
    }
  }

  private void madvise(long offset, long length, int advice) {
    // Callers hold the mapping open (a segment reference); a closed arena means a bug upstream,
    // and advising on an address range that may be reused by another mapping must never happen.
    if (MADVISE == null || length <= 0 || (arena != null && !arena.scope().isAlive())) {
      return;
    }
    long start = offset & -PAGE;
    long end = Math.min(segment.byteSize(), offset + length);
    try {
      int rc =
          (int)
              MADVISE.invokeExact(
                  MemorySegment.ofAddress(segment.address() + start), end - start, advice);
      assert rc == 0 || rc == -1;
    } catch (Throwable t) {
      // advice only: the read still works without it
    }
  }

  /**
   * Counts the pages of {@code [offset, offset+length)} that are in the page cache, or returns -1
   * when that cannot be determined. {@code scratch} must hold at least one byte per page.
   */
  public int residentPages(long offset, long length, MemorySegment scratch) {
    if (MINCORE == null || arena == null || length <= 0) {
      return -1;
    }
    long start = offset & -PAGE;
    long end = Math.min(segment.byteSize(), offset + length);
    int pages = (int) ((end - start + PAGE - 1) / PAGE);
    if (scratch.byteSize() < pages) {
      return -1;
    }
    try {
      int rc =
          (int)
              MINCORE.invokeExact(
                  MemorySegment.ofAddress(segment.address() + start), end - start, scratch);
      if (rc != 0) {
        return -1;
      }
    } catch (Throwable t) {
      return -1;
    }
    int resident = 0;
    for (int i = 0; i < pages; i++) {
      resident += scratch.get(ValueLayout.JAVA_BYTE, i) & 1;
    }
    return resident;
  }

  /** Pages spanned by {@code [offset, offset+length)}. */
  public static int pagesSpanned(long offset, long length) {
    return (int) (((offset + length + PAGE - 1) & -PAGE) - (offset & -PAGE)) / PAGE;
  }

  /**
   * Drops a file's clean pages from the page cache ({@code posix_fadvise(DONTNEED)}), for
   * cold-cache benchmarks. Returns whether the kernel accepted the advice. Pages still mapped and
   * in use by a process may stay resident.
   */
  public static boolean evictFromPageCache(Path path) {
    if (OPEN == null || FADVISE == null || CLOSE == null) {
      return false;
    }
    try (Arena a = Arena.ofConfined()) {
      int fd = (int) OPEN.invokeExact(a.allocateFrom(path.toString()), O_RDONLY);
      if (fd < 0) {
        return false;
      }
      try {
        return (int) FADVISE.invokeExact(fd, 0L, 0L, POSIX_FADV_DONTNEED) == 0;
      } finally {
        int ignored = (int) CLOSE.invokeExact(fd);
      }
    } catch (Throwable t) {
      return false;
    }
  }

  @Override
  public void close() {
    if (arena != null) {
      arena.close();
    }
  }
}
