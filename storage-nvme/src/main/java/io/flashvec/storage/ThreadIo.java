package io.flashvec.storage;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Per-thread I/O counters from the kernel, for per-query accounting of reads through mapped files:
 * every major page fault is a page read from the device (mappings of graph and vector files use
 * {@code MADV_RANDOM}, so there is no readahead and one fault is one 4 KiB read).
 *
 * <p>Uses {@code getrusage(RUSAGE_THREAD)} through the foreign-function API (the JVM needs {@code
 * --enable-native-access=ALL-UNNAMED}); where that is unavailable {@link #majorFaults()} returns
 * -1. A search measures the faults of the thread it runs on; a virtual thread stays on its carrier
 * during a page fault, so the difference across a search is that search's.
 */
public final class ThreadIo {

  private static final int RUSAGE_THREAD = 1;

  /** {@code struct rusage}: two timevals (32 bytes), then 14 longs; ru_majflt is the 6th long. */
  private static final long RU_MAJFLT_OFFSET = 32 + 5 * 8;

  private static final int RUSAGE_BYTES = 32 + 14 * 8;

  private static final MethodHandle GETRUSAGE = lookup();

  /** The page size the accounting assumes for a fault. */
  public static final int PAGE_BYTES = 4096;

  private ThreadIo() {}

  private static MethodHandle lookup() {
    try {
      Linker linker = Linker.nativeLinker();
      return linker
          .defaultLookup()
          .find("getrusage")
          .map(
              addr ->
                  linker.downcallHandle(
                      addr,
                      FunctionDescriptor.of(
                          ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS)))
          .orElse(null);
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  /** Whether per-thread counters are available on this platform. */
  public static boolean available() {
    return GETRUSAGE != null && majorFaults() >= 0;
  }

  /** Major page faults of the calling thread so far, or -1 when unavailable. */
  public static long majorFaults() {
    if (GETRUSAGE == null) {
      return -1;
    }
    // A confined arena per call: requests run on short-lived virtual threads, where a
    // thread-local buffer would be allocated per request anyway.
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment buf = arena.allocate(RUSAGE_BYTES, 8);
      int rc = (int) GETRUSAGE.invokeExact(RUSAGE_THREAD, buf);
      return rc == 0 ? buf.get(ValueLayout.JAVA_LONG, RU_MAJFLT_OFFSET) : -1;
    } catch (Throwable t) {
      return -1;
    }
  }
}
