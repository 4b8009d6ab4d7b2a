package io.flashvec.storage;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link PageReader} over a file descriptor of its own, opened, advised and read through {@code
 * java.lang.foreign}: {@code open(O_RDONLY|O_CLOEXEC)}, {@code posix_fadvise(POSIX_FADV_RANDOM)}
 * (no readahead on this descriptor) and {@code pread} on an {@link IoThreads} thread per read.
 * Reads are buffered, not {@code O_DIRECT}: what they read lands in the page cache, where a mapping
 * of the same file finds it afterwards and where the kernel's memory accounting bounds it.
 *
 * <p>{@link #close()} marks the reader closed, waits for the reads that are inside {@code pread}
 * (at most one per I/O thread, each one device round trip), then closes the descriptor; so no read
 * ever runs on a descriptor number the process has reused.
 */
final class PreadPageReader implements PageReader {

  private static final int O_RDONLY = 0;
  private static final int O_CLOEXEC = 0x80000;
  private static final int POSIX_FADV_RANDOM = 1;
  private static final int EINTR = 4;

  private static final Linker LINKER = Linker.nativeLinker();
  private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
  private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

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
  private static final MethodHandle PREAD =
      downcall(
          "pread",
          FunctionDescriptor.of(
              ValueLayout.JAVA_LONG,
              ValueLayout.JAVA_INT,
              ValueLayout.ADDRESS,
              ValueLayout.JAVA_LONG,
              ValueLayout.JAVA_LONG));

  /** errno of the I/O thread's last failed call. */
  private static final ThreadLocal<MemorySegment> ERRNO_SCRATCH =
      ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE));

  private final Path path;
  private final IoThreads threads;
  private final int fd;
  private final long size;

  /** Reads inside {@code pread} now. */
  private final AtomicInteger running = new AtomicInteger();

  private volatile boolean closed;

  private final AtomicBoolean closing = new AtomicBoolean();

  private PreadPageReader(Path path, IoThreads threads, int fd, long size) {
    this.path = path;
    this.threads = threads;
    this.fd = fd;
    this.size = size;
  }

  private static MethodHandle downcall(String name, FunctionDescriptor fd) {
    try {
      return LINKER
          .defaultLookup()
          .find(name)
          .map(a -> LINKER.downcallHandle(a, fd, CAPTURE_ERRNO))
          .orElse(null);
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  static PreadPageReader open(Path path, IoThreads threads) throws IOException {
    if (OPEN == null || PREAD == null || CLOSE == null) {
      throw new IOException("positional reads need native access [path=" + path + "]");
    }
    long size = java.nio.file.Files.size(path);
    MemorySegment errno = ERRNO_SCRATCH.get();
    int fd;
    try (Arena a = Arena.ofConfined()) {
      fd = (int) OPEN.invokeExact(errno, a.allocateFrom(path.toString()), O_RDONLY | O_CLOEXEC);
    } catch (Throwable t) {
      throw new IOException("cannot open for reads [path=" + path + "]", t);
    }
    if (fd < 0) {
      throw new IOException(
          "cannot open for reads [path=" + path + ", errno=" + (int) ERRNO.get(errno, 0L) + "]");
    }
    if (FADVISE != null) {
      try {
        int ignored = (int) FADVISE.invokeExact(errno, fd, 0L, 0L, POSIX_FADV_RANDOM);
      } catch (Throwable t) {
        // advice only: reads still work, with readahead
      }
    }
    return new PreadPageReader(path, threads, fd, size);
  }

  @Override
  public Path path() {
    return path;
  }

  @Override
  public void read(long offset, MemorySegment dst, int tag, Completion done) {
    long len = dst.byteSize();
    if ((offset & (MappedFile.PAGE - 1)) != 0
        || (len & (MappedFile.PAGE - 1)) != 0
        || len == 0
        || !dst.isNative()) {
      throw new IllegalArgumentException(
          "reads are of whole pages into native memory [offset="
              + offset
              + ", length="
              + len
              + ", native="
              + dst.isNative()
              + "]");
    }
    if (closed) {
      done.completed(tag, closedError());
      return;
    }
    try {
      threads.execute(() -> run(offset, dst, tag, done));
    } catch (RejectedExecutionException e) {
      done.completed(tag, new IOException("I/O threads stopped [path=" + path + "]", e));
    }
  }

  private IOException closedError() {
    return new IOException("page reader closed [path=" + path + "]");
  }

  private void run(long offset, MemorySegment dst, int tag, Completion done) {
    IOException error;
    running.incrementAndGet();
    try {
      // close() sets closed before it waits for running to drain: seen here, the fd may be gone
      error = closed ? closedError() : readFully(offset, dst);
    } finally {
      running.decrementAndGet();
    }
    if (error == null) {
      threads.count(dst.byteSize());
    }
    done.completed(tag, error);
  }

  private IOException readFully(long offset, MemorySegment dst) {
    long len = dst.byteSize();
    if (offset + len > size) {
      return new IOException(
          "read past the end of the file [path="
              + path
              + ", offset="
              + offset
              + ", length="
              + len
              + ", size="
              + size
              + "]");
    }
    MemorySegment errno = ERRNO_SCRATCH.get();
    long done = 0;
    try {
      while (done < len) {
        long n = (long) PREAD.invokeExact(errno, fd, dst.asSlice(done), len - done, offset + done);
        if (n > 0) {
          done += n;
        } else if (n == 0) {
          return new IOException(
              "file ended during a read [path=" + path + ", offset=" + (offset + done) + "]");
        } else {
          int e = (int) ERRNO.get(errno, 0L);
          if (e != EINTR) {
            return new IOException(
                "pread failed [path="
                    + path
                    + ", offset="
                    + (offset + done)
                    + ", errno="
                    + e
                    + "]");
          }
        }
      }
      return null;
    } catch (Throwable t) {
      return new IOException(
          "pread failed [path=" + path + ", offset=" + offset + ", cause=" + t + "]", t);
    }
  }

  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    closed = true;
    while (running.get() > 0) {
      LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
    }
    try {
      int ignored = (int) CLOSE.invokeExact(ERRNO_SCRATCH.get(), fd);
    } catch (Throwable t) {
      // nothing more to do with it
    }
  }
}
