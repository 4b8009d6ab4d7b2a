package io.flashvec.index.memory;

import static io.flashvec.index.ByteSize.human;

/**
 * How one memory budget (the most memory the server process may use, page cache included) is
 * sliced. Pure: the same inputs give the same plan, so the launcher can derive {@code -Xmx} from it
 * before the JVM starts ({@link #jvmFlags}) and the server logs and enforces the same numbers.
 *
 * <pre>
 * total ─┬─ jvmNative   192 MiB + 1 MiB per expected thread (metaspace, code cache, thread stacks,
 *        │              GC structures, Netty and NIO buffers)
 *        ├─ nodeCache   5% (native memory for cached graph records)
 *        ├─ heap        the rest after the page cache's 10%, at most the JVM's -Xmx:
 *        │    ├─ resident  45%  PQ codes and Bloom filters of sealed segments, id maps
 *        │    ├─ growing   15%  growing segments and the frozen ones being sealed
 *        │    ├─ build     25%  index builds and merges (in partitions when larger)
 *        │    └─ working   15%  requests in flight, search scratch, parsing: the young generation
 *        │                      (half of it, -XX:MaxNewSize) and the server's own objects
 *        └─ pageCache   what is left (at least 10%): graph records and vectors read from the device
 * </pre>
 *
 * A budget too small for {@value #MIN_HEAP_MIB} MiB of heap beside the native memory and the page
 * cache's share is refused, naming the budget and the minimum. When the JVM's {@code -Xmx} is below
 * the planned heap (a heap set by hand, or tests), the heap is what the JVM has and the difference
 * goes to the page cache; the heap's slices are shares of it either way.
 *
 * @param total the budget in bytes
 * @param jvmNative the JVM's own native memory
 * @param heap the Java heap ({@code -Xmx})
 * @param resident heap for the sealed segments' resident index (PQ codes, ids)
 * @param growing heap for growing segments
 * @param build heap for index builds and merges
 * @param working heap for requests in flight
 * @param nodeCache native memory for cached graph records
 * @param pageCache what is left for the kernel's page cache
 */
public record MemoryPlan(
    long total,
    long jvmNative,
    long heap,
    long resident,
    long growing,
    long build,
    long working,
    long nodeCache,
    long pageCache) {

  static final long MIB = 1L << 20;

  /** The smallest heap a plan gives. */
  public static final int MIN_HEAP_MIB = 128;

  static final long JVM_NATIVE_BASE = 192 * MIB;
  static final double NODE_CACHE_SHARE = 0.05;

  /**
   * The page cache's floor. An index larger than memory is read at random, a page per expanded
   * node, so a page cache that holds a few percent of it more or less changes its hit rate by as
   * much; the PQ codes that steer every search are worth more there (ADR 0025, third amendment).
   * The heap is committed as it is used, so until its slices fill, the page cache has their room
   * too.
   */
  static final double PAGE_CACHE_SHARE = 0.10;

  static final double RESIDENT_SHARE = 0.45;
  static final double GROWING_SHARE = 0.15;
  static final double BUILD_SHARE = 0.25;

  /**
   * The plan for {@code budget} bytes on a machine with {@code processors} processors, whose JVM
   * heap is at most {@code maxHeap} bytes ({@code 0} or less: not yet started, the plan decides).
   *
   * @throws IllegalArgumentException {@code memory budget too small [budget=…, needs≥…]} when the
   *     budget leaves less than {@value #MIN_HEAP_MIB} MiB of heap
   */
  public static MemoryPlan of(long budget, int processors, long maxHeap) {
    if (processors < 1) {
      throw new IllegalArgumentException(
          "processors must be positive [processors=" + processors + "]");
    }
    long jvmNative = jvmNative(processors);
    long min = minimumBudget(processors);
    if (budget < min) {
      throw new IllegalArgumentException(
          "memory budget too small [budget="
              + describe(budget)
              + ", needs≥"
              + describe(min)
              + "]: it must hold the JVM's native memory ("
              + human(jvmNative)
              + " at "
              + processors
              + " processors), a "
              + MIN_HEAP_MIB
              + " MiB heap, 5% for the node cache and 10% for the page cache");
    }
    long nodeCache = (long) (budget * NODE_CACHE_SHARE);
    long planned = budget - jvmNative - nodeCache - (long) Math.ceil(budget * PAGE_CACHE_SHARE);
    planned = planned / MIB * MIB;
    // The JVM reports a little less than its -Xmx (one survivor space is not counted): within 5%
    // the heap is the planned one.
    long heap = maxHeap > 0 && maxHeap < planned * 0.95 ? maxHeap : planned;
    long resident = (long) (heap * RESIDENT_SHARE);
    long growing = (long) (heap * GROWING_SHARE);
    long build = (long) (heap * BUILD_SHARE);
    long working = heap - resident - growing - build;
    long pageCache = budget - jvmNative - nodeCache - heap;
    return new MemoryPlan(
        budget, jvmNative, heap, resident, growing, build, working, nodeCache, pageCache);
  }

  /** The JVM's native memory: a base plus 1 MiB for each of the threads it is expected to run. */
  static long jvmNative(int processors) {
    return JVM_NATIVE_BASE + expectedThreads(processors) * MIB;
  }

  /**
   * Threads a server runs: 64 that do not depend on the machine (write workers, WAL, live indexer,
   * seal and compaction lanes, Spring, etcd and gRPC clients) and 4 per processor (Netty event
   * loops, jvector's and the build pool's workers, the common pool).
   */
  static int expectedThreads(int processors) {
    return 64 + 4 * processors;
  }

  /** The smallest budget {@link #of} accepts on {@code processors} processors. */
  public static long minimumBudget(int processors) {
    double rest = 1 - NODE_CACHE_SHARE - PAGE_CACHE_SHARE;
    long min = (long) Math.ceil((jvmNative(processors) + MIN_HEAP_MIB * MIB + MIB) / rest);
    return (min + MIB - 1) / MIB * MIB;
  }

  /**
   * The JVM flags that give the process this plan's heap: {@code -Xmx<heap in MiB>m} and a young
   * generation of at most half the working slice ({@code -XX:MaxNewSize}). The resident index, the
   * growing segments and the builds live long and are promoted: they need the old generation, and a
   * collector left to itself sizes the young one at a third of the heap (Serial and Parallel) or
   * more (G1), which leaves the old generation smaller than those three slices; the server then
   * runs full collections back to back and its heap runs out within the budget. The other half of
   * the working slice is the server's own long-lived objects (its context, pools and caches).
   *
   * <p>And {@code -Djdk.nio.maxCachedBufferSize=1048576}: the JDK copies a heap buffer read or
   * written through a channel via a temporary direct buffer and, unbounded, keeps it with the
   * thread for its lifetime, native memory the plan does not count. FlashVec's own file I/O passes
   * heap buffers in 1 MiB chunks ({@code FileIO}); the flag bounds the libraries' too.
   *
   * <p>And {@code -XX:TrimNativeHeapInterval=5000}: glibc keeps memory freed by native code in its
   * arenas (one per thread that allocates, up to eight per core), where the page cache cannot have
   * it. After a 2M × 96 upload under 640 MiB one trim returned 106 MB of 589 MB RssAnon; every 5 s
   * the JVM returns it (a few milliseconds in its own thread, paused during safepoints).
   */
  public String jvmFlags() {
    return "-Xmx"
        + heap / MIB
        + "m -XX:MaxNewSize="
        + youngGeneration() / MIB
        + "m -Djdk.nio.maxCachedBufferSize="
        + MAX_CACHED_IO_BUFFER
        + " -XX:TrimNativeHeapInterval="
        + TRIM_NATIVE_HEAP_MILLIS;
  }

  /** How often the JVM returns the native heap's free memory to the system ({@link #jvmFlags}). */
  static final int TRIM_NATIVE_HEAP_MILLIS = 5000;

  /** The largest temporary direct buffer the JDK may keep with a thread ({@link #jvmFlags}). */
  static final int MAX_CACHED_IO_BUFFER = 1 << 20;

  /** The young generation the JVM is given: half the working slice, at least 8 MiB. */
  public long youngGeneration() {
    return Math.max(8 * MIB, working / 2 / MIB * MIB);
  }

  /**
   * One line for the start-up log: {@code memory budget [total=…, jvmNative=…, heap=…{resident=…,
   * growing=…, build=…, working=…}, nodeCache=…, pageCache=…]}.
   */
  public String describe() {
    return "memory budget [total="
        + human(total)
        + ", jvmNative="
        + human(jvmNative)
        + ", heap="
        + human(heap)
        + "{resident="
        + human(resident)
        + ", growing="
        + human(growing)
        + ", build="
        + human(build)
        + ", working="
        + human(working)
        + "}, nodeCache="
        + human(nodeCache)
        + ", pageCache="
        + human(pageCache)
        + "]";
  }

  /**
   * Heap bytes one point of a growing segment takes: its float vector, its id, payload reference
   * and id-map entry, and with a live graph of degree {@code maxDegree} ({@code 0}: none) its int8
   * code, a neighbour list and its distances of up to {@code ⌈1.3·R⌉} entries each, and its sign
   * code from 512 dimensions.
   */
  public static long growingBytesPerPoint(int dim, int maxDegree) {
    long bytes = 4L * dim + 72;
    if (maxDegree > 0) {
      int slack = Math.max(maxDegree + 1, (int) Math.ceil(maxDegree * 1.3));
      bytes += dim + (4L * (1 + slack) + 24) + (4L * slack + 24);
      if (dim >= 512) {
        bytes += (dim + 63) / 64 * 8;
      }
    }
    return bytes;
  }

  /**
   * Parses a size: plain bytes, Kubernetes quantities ({@code Ki Mi Gi Ti} binary, {@code k M G T}
   * decimal, as a pod's {@code resources.limits.memory} reads them) or FlashVec's sizes ({@code KB
   * MB GB TB}, binary, as every other size setting). Case matters for the Kubernetes suffixes only
   * where they differ ({@code m} would be milli): {@code 768Mi}, {@code 768MB}, {@code 1G}.
   *
   * @throws IllegalArgumentException naming the value when it is not a positive size
   */
  public static long parseBytes(String value) {
    String v = value == null ? "" : value.trim();
    int i = 0;
    while (i < v.length() && Character.isDigit(v.charAt(i))) {
      i++;
    }
    if (i == 0) {
      throw badSize(value);
    }
    long n;
    try {
      n = Long.parseLong(v.substring(0, i));
    } catch (NumberFormatException e) {
      throw badSize(value);
    }
    long unit =
        switch (v.substring(i)) {
          case "", "B" -> 1;
          case "k" -> 1000L;
          case "M" -> 1000L * 1000;
          case "G" -> 1000L * 1000 * 1000;
          case "T" -> 1000L * 1000 * 1000 * 1000;
          case "Ki", "KB", "KiB" -> 1L << 10;
          case "Mi", "MB", "MiB" -> 1L << 20;
          case "Gi", "GB", "GiB" -> 1L << 30;
          case "Ti", "TB", "TiB" -> 1L << 40;
          default -> throw badSize(value);
        };
    if (n <= 0 || n > Long.MAX_VALUE / unit) {
      throw badSize(value);
    }
    return n * unit;
  }

  private static IllegalArgumentException badSize(String value) {
    return new IllegalArgumentException(
        "memory budget must be a positive size such as 768Mi, 2Gi, 2GB or 805306368 [budget="
            + value
            + "]");
  }

  /** {@code 805306368} as {@code 768 MiB (805306368)}. */
  static String describe(long bytes) {
    return human(bytes) + " (" + bytes + ")";
  }
}
