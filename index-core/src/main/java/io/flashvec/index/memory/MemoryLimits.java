package io.flashvec.index.memory;

import io.flashvec.index.ByteSize;
import io.flashvec.index.InsufficientMemoryException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the shards of one server see of its {@link MemoryPlan}: the heap their growing segments may
 * take together, and the heap one index build or merge may take. Shared by every shard of the
 * server; thread-safe.
 *
 * <p><b>Growing segments.</b> A shard's growing segment is sealed at the smaller of the configured
 * seal threshold and its share of the growing slice: {@code growing / (2 · active ·
 * growingBytesPerPoint(dim, R))}, where {@code active} counts the shards whose growing segment
 * holds a point now, and the 2 leaves room for the frozen segment a seal keeps on the heap until
 * its build is installed beside the new growing one. A shard reads its threshold at every record
 * boundary, so a shard that starts taking writes shrinks the others' share from their next write.
 *
 * <p><b>Resident index.</b> Each shard records the heap its sealed segments keep (PQ codes, ids,
 * payload offsets) and its id map at every upsert; an upsert while the total exceeds the resident
 * slice is refused with 507 ({@link #checkResident}).
 *
 * <p><b>Builds.</b> {@link #buildBytes} is the heap one build may use; a build or merge of more
 * points than fit it is built in overlapping partitions that do (the diskann package's partitioned
 * build).
 */
public final class MemoryLimits {

  private static final Logger LOG = LoggerFactory.getLogger(MemoryLimits.class);

  /** A growing segment is never sealed below this many points for memory (tiny seals cost more). */
  public static final int MIN_SEAL_POINTS = 1024;

  private final long budgetBytes;
  private final long residentBytes;
  private final long growingBytes;
  private final long buildBytes;
  private final Set<Object> active = ConcurrentHashMap.newKeySet();
  private final Map<Object, Long> resident = new ConcurrentHashMap<>();
  private final Map<Object, Long> points = new ConcurrentHashMap<>();

  /** By default code size: the smallest size {@link #pqBytes} has warned about. */
  private final Map<Integer, Integer> warnedBytes = new ConcurrentHashMap<>();

  /**
   * Limits with {@code growingBytes} of heap for all growing segments and {@code buildBytes} for
   * one build, and no limit on the resident index.
   */
  public MemoryLimits(long growingBytes, long buildBytes) {
    this(Long.MAX_VALUE, Long.MAX_VALUE, growingBytes, buildBytes);
  }

  /**
   * Limits of a budget of {@code budgetBytes}: {@code residentBytes} of heap for the sealed
   * segments' resident index, {@code growingBytes} for all growing segments, {@code buildBytes} for
   * one build.
   */
  public MemoryLimits(long budgetBytes, long residentBytes, long growingBytes, long buildBytes) {
    if (budgetBytes <= 0 || residentBytes <= 0 || growingBytes <= 0 || buildBytes <= 0) {
      throw new IllegalArgumentException(
          "memory limits must be positive [growingBytes="
              + growingBytes
              + ", buildBytes="
              + buildBytes
              + "]");
    }
    this.budgetBytes = budgetBytes;
    this.residentBytes = residentBytes;
    this.growingBytes = growingBytes;
    this.buildBytes = buildBytes;
  }

  /** The limits of {@code plan}. */
  public static MemoryLimits of(MemoryPlan plan) {
    return new MemoryLimits(plan.total(), plan.resident(), plan.growing(), plan.build());
  }

  /**
   * Records that {@code shard}'s resident index takes {@code bytes} now ({@code 0}: the shard
   * closed), and refuses a write ({@code what}, e.g. {@code "upsert"}) while the resident index of
   * every shard together exceeds its slice.
   *
   * @throws InsufficientMemoryException (507) naming the budget, the slice and the resident bytes
   */
  public void checkResident(Object shard, long bytes, String what) {
    if (bytes <= 0) {
      resident.remove(shard);
    } else {
      resident.put(shard, bytes);
    }
    if (what == null || residentBytes == Long.MAX_VALUE) {
      return;
    }
    long total = residentTotal();
    if (total > residentBytes) {
      throw new InsufficientMemoryException(
          "Insufficient memory: "
              + what
              + " refused, the resident index ("
              + ByteSize.human(total)
              + ") has outgrown its slice of the memory budget ("
              + ByteSize.human(residentBytes)
              + " of flashvec.memory.budget="
              + ByteSize.human(budgetBytes)
              + "); raise the budget, or delete points and compact [residentBytes="
              + total
              + ", residentSliceBytes="
              + residentBytes
              + ", budgetBytes="
              + budgetBytes
              + "]");
    }
  }

  /**
   * Records that {@code shard} holds {@code count} points now ({@code 0}: the shard closed), for
   * {@link #pqBytes}.
   */
  public void points(Object shard, long count) {
    if (count <= 0) {
      points.remove(shard);
    } else {
      points.put(shard, count);
    }
  }

  /** The points of every shard together, as last recorded. */
  public long pointsTotal() {
    long total = 0;
    for (long n : points.values()) {
      total += n;
    }
    return total;
  }

  /**
   * The share of the resident slice that PQ codes chosen by {@link #pqBytes} fill with the points
   * held when the codes are written; the rest is room for the points that arrive before merges
   * re-encode them.
   */
  static final double CODE_FILL = 0.5;

  /**
   * Resident heap a sealed point takes besides its code: its share of the Bloom filter and more.
   */
  static final double POINT_OVERHEAD_BYTES = 1.5;

  /**
   * PQ bytes per point for a segment written now, when its collection sets no code size: {@code
   * preferred} (the default for the dimension) while the codes of every point the server holds
   * ({@link #pointsTotal}, at least {@code points}) at that size fill at most half of the resident
   * slice, else the largest of {@code preferred}·(3/4, 1/2, 3/8, 1/4, …) that does, but not below
   * {@code minimum}. Steps rather than every byte count, so that consecutive seals share a codebook
   * until the size changes by a quarter. Without a resident limit: {@code preferred}.
   */
  public int pqBytes(int preferred, int minimum, long points) {
    if (residentBytes == Long.MAX_VALUE || preferred <= minimum) {
      return preferred;
    }
    long n = Math.max(Math.max(1, points), pointsTotal());
    int bytes = step(preferred, minimum, residentBytes * CODE_FILL / n - POINT_OVERHEAD_BYTES);
    if (bytes < preferred && smallerThanWarned(preferred, bytes)) {
      // once per smaller size: the recall a search reaches falls with the codes that steer it
      // (96-d, one graph: 32 bytes recall@10 0.99 at search list 100, 16 0.90, 8 0.52, 4 0.28)
      LOG.warn(
          "PQ codes shrunk by the memory budget: segments written from now get {}-byte codes"
              + " instead of {} [points={}, residentSlice={}]; searches steered by smaller codes"
              + " find fewer of the true neighbours: raise flashvec.memory.budget or set"
              + " index.pq_subspaces",
          bytes,
          preferred,
          n,
          ByteSize.human(residentBytes));
    }
    return bytes;
  }

  /**
   * The largest of {@code preferred}·(1, 3/4, 1/2, 3/8, 1/4, 3/16, …) that is at most {@code fits},
   * but not below {@code minimum}.
   */
  private static int step(int preferred, int minimum, double fits) {
    int step = preferred;
    // preferred, 3/4, 1/2, 3/8, 1/4, 3/16, ...: each step a quarter or a third smaller
    for (int half = preferred; step > fits && step > minimum; ) {
      int threeQuarters = half * 3 / 4;
      if (step == half && threeQuarters < half && threeQuarters > minimum) {
        step = threeQuarters;
      } else {
        half /= 2;
        step = half;
      }
    }
    return Math.max(minimum, step);
  }

  /**
   * The share of the resident slice that PQ codes chosen by {@link #idlePqBytes} fill with the
   * points held: writes have stopped, so the room {@link #CODE_FILL} keeps for arriving points goes
   * to the codes that steer every search, while staying below the share from which segments are
   * recoded smaller again (0.8), so that a few writes do not undo it.
   */
  public static final double IDLE_CODE_FILL = 0.7;

  /**
   * PQ bytes per point for segments recoded while the shard takes no writes: {@link #pqBytes}'s
   * steps, sized so that the codes of every point held fill {@link #IDLE_CODE_FILL} of the resident
   * slice rather than half of it. Without a resident limit: {@code preferred}.
   */
  public int idlePqBytes(int preferred, int minimum) {
    if (residentBytes == Long.MAX_VALUE || preferred <= minimum) {
      return preferred;
    }
    long n = Math.max(1, pointsTotal());
    return step(preferred, minimum, residentBytes * IDLE_CODE_FILL / n - POINT_OVERHEAD_BYTES);
  }

  /**
   * The bytes the resident index of every shard may still grow by while codes are recoded larger:
   * up to {@link #IDLE_CODE_FILL} of the resident slice ({@code 0} when it is that full already;
   * {@code Long.MAX_VALUE} without a resident limit).
   */
  public long idleRoom() {
    if (residentBytes == Long.MAX_VALUE) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, (long) (residentBytes * IDLE_CODE_FILL) - residentTotal());
  }

  /** Whether {@code bytes} is below every size warned about for {@code preferred}; records it. */
  private boolean smallerThanWarned(int preferred, int bytes) {
    boolean[] smaller = {false};
    warnedBytes.compute(
        preferred,
        (p, warned) -> {
          if (warned == null || bytes < warned) {
            smaller[0] = true;
            return bytes;
          }
          return warned;
        });
    return smaller[0];
  }

  /**
   * The smallest code size {@link #pqBytes} chose below the default {@code preferred} so far
   * (tests; 0: none).
   */
  int shrunkTo(int preferred) {
    return warnedBytes.getOrDefault(preferred, 0);
  }

  /**
   * For each default code size {@link #pqBytes} chose below since this server started, the smallest
   * size it chose (the {@code /issues} report); empty when the codes kept their default.
   */
  public Map<Integer, Integer> codesShrunk() {
    return Map.copyOf(warnedBytes);
  }

  /** Heap for the sealed segments' resident index of every shard ({@code Long.MAX_VALUE}: none). */
  public long residentBytes() {
    return residentBytes;
  }

  /** The resident index of every shard together, as last recorded. */
  public long residentTotal() {
    long total = 0;
    for (long b : resident.values()) {
      total += b;
    }
    return total;
  }

  /** Heap for all growing segments together. */
  public long growingBytes() {
    return growingBytes;
  }

  /** Heap one index build or merge may use. */
  public long buildBytes() {
    return buildBytes;
  }

  /** Marks {@code shard}'s growing segment as holding points (idempotent). */
  public void growingActive(Object shard) {
    active.add(shard);
  }

  /** Marks {@code shard}'s growing segment as empty, sealed or closed (idempotent). */
  public void growingIdle(Object shard) {
    active.remove(shard);
  }

  /** Shards whose growing segment holds points now. */
  public int activeGrowing() {
    return active.size();
  }

  /**
   * The seal threshold of a shard whose growing points have {@code dim} dimensions and a live graph
   * of degree {@code maxDegree} ({@code 0}: none): {@code configured}, or less when the shard's
   * share of the growing slice holds fewer points, but never below {@link #MIN_SEAL_POINTS}.
   */
  public int sealThreshold(int configured, int dim, int maxDegree) {
    return sealThreshold(configured, dim, maxDegree, Math.max(1, active.size()));
  }

  /** {@link #sealThreshold(int, int, int)} for {@code activeShards} active shards. */
  public int sealThreshold(int configured, int dim, int maxDegree, int activeShards) {
    long perPoint = MemoryPlan.growingBytesPerPoint(dim, maxDegree);
    long fits = growingBytes / (2L * Math.max(1, activeShards) * perPoint);
    long t = Math.max(MIN_SEAL_POINTS, Math.min(configured, fits));
    return (int) Math.min(configured, t);
  }
}
