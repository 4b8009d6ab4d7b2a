package io.flashvec.index.disk;

import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.BitSet;

/**
 * Copies of a graph's most travelled node records, in native memory: the nodes nearest the entry
 * point by hops, found by a breadth-first walk from it (DiskANN's {@code cache_bfs_levels}). Every
 * beam search starts at the entry and crosses its first few levels, so these records are read by
 * nearly every query; served from here they cost no page-cache lookup, no prefetch and no device
 * read when the graph file has been evicted.
 *
 * <p>A record is copied byte for byte as {@link GraphFile} stores it ({@code float[dim] vector |
 * int degree | int[maxDegree] neighbours}, little-endian), so a reader decodes it at {@link
 * #offset} in {@link #records()} exactly as at {@link GraphFile#recordOffset} in the file. The
 * ordinal-to-slot index is a primitive open-addressing map, looked up once per expanded node.
 *
 * <p>Immutable once built, safe for any number of readers. The records are freed as soon as the
 * last reference is released, not when a collector gets round to it: a segment rebuilds its cache
 * whenever the server's cache bytes are split again (at every seal and merge), and caches left to
 * the collector piled up outside the heap, unseen by it, until the process outgrew its memory
 * budget (130 MB of them during a 10M-point load under 915 MiB). The segment holds one reference
 * ({@link #build} returns it), each search {@link #acquire}s one for its duration and {@link
 * #release}s it (as Lucene's readers are {@code incRef}'d per search); the segment releases its own
 * when it swaps in a new cache or closes, so searches that still read the old one finish on it.
 */
public final class HotNodeCache {

  /** The most of a graph's nodes a cache holds, as a fraction (DiskANN caps its BFS cache so). */
  public static final double MAX_FRACTION = 0.10;

  private final Arena arena;
  private final MemorySegment records;
  private final long nativeBytes;
  private final Int2IntOpenHashMap slots;
  private final int[] order;
  private final int recordBytes;

  /** References held: the owner's and one per search reading it; 0 once freed. */
  private final java.util.concurrent.atomic.AtomicInteger refs =
      new java.util.concurrent.atomic.AtomicInteger(1);

  private HotNodeCache(
      Arena arena, MemorySegment records, Int2IntOpenHashMap slots, int[] order, int rb) {
    this.arena = arena;
    this.records = records;
    this.nativeBytes = records.byteSize();
    this.slots = slots;
    this.order = order;
    this.recordBytes = rb;
  }

  /**
   * Takes a reference for a search: false when the cache was freed meanwhile (the search then reads
   * the graph file instead).
   */
  public boolean acquire() {
    while (true) {
      int r = refs.get();
      if (r == 0) {
        return false;
      }
      if (refs.compareAndSet(r, r + 1)) {
        return true;
      }
    }
  }

  /** Gives a reference back; the last one frees the records. */
  public void release() {
    int r = refs.decrementAndGet();
    if (r == 0) {
      arena.close();
    } else if (r < 0) {
      throw new IllegalStateException("hot node cache released more often than acquired");
    }
  }

  /** Whether the records are still held (not yet freed by the last {@link #release}). */
  public boolean held() {
    return refs.get() > 0;
  }

  /** How many records of {@code g} a cache of {@code budgetBytes} holds. */
  public static int capacity(GraphFile g, long budgetBytes) {
    long byBudget = Math.max(0, budgetBytes) / g.recordBytes();
    long byFraction = (long) Math.floor(g.count() * MAX_FRACTION);
    return (int) Math.min(byBudget, byFraction);
  }

  /**
   * Walks {@code g} breadth-first from its entry and copies the first {@link #capacity} records it
   * reaches (in the order of each node's adjacency list); {@code null} when none fits. The caller
   * holds the one reference, to {@link #release} when done with it.
   */
  public static HotNodeCache build(GraphFile g, long budgetBytes) {
    int max = capacity(g, budgetBytes);
    if (max <= 0 || g.count() == 0) {
      return null;
    }
    int n = g.count();
    int[] order = new int[max];
    BitSet seen = new BitSet(n);
    int size = 0;
    order[size++] = g.entry();
    seen.set(g.entry());
    // order doubles as the BFS queue: head walks it while the tail grows
    for (int head = 0; head < size && size < max; head++) {
      long off = g.recordOffset(order[head]);
      int deg = Math.min(g.degree(off), g.maxDegree());
      for (int j = 0; j < deg && size < max; j++) {
        int v = g.neighbour(off, j);
        if (v >= 0 && v < n && !seen.get(v)) {
          seen.set(v);
          order[size++] = v;
        }
      }
    }
    int rb = g.recordBytes();
    Arena arena = Arena.ofShared();
    MemorySegment records = arena.allocate((long) size * rb, 8);
    Int2IntOpenHashMap slots = new Int2IntOpenHashMap(size);
    slots.defaultReturnValue(-1);
    MemorySegment file = g.segment();
    for (int slot = 0; slot < size; slot++) {
      MemorySegment.copy(file, g.recordOffset(order[slot]), records, (long) slot * rb, rb);
      slots.put(order[slot], slot);
    }
    return new HotNodeCache(
        arena, records, slots, size == max ? order : java.util.Arrays.copyOf(order, size), rb);
  }

  /** The slot of node {@code ord}'s record, or -1 when it is not cached. */
  public int slot(int ord) {
    return slots.get(ord);
  }

  /** Byte offset of {@code slot}'s record in {@link #records()}. */
  public long offset(int slot) {
    return (long) slot * recordBytes;
  }

  /** The cached records, {@code recordBytes} each, in {@link #order()}. */
  public MemorySegment records() {
    return records;
  }

  /** Cached nodes. */
  public int size() {
    return order.length;
  }

  /** The cached ordinals in the order the walk reached them (slot order). */
  public int[] order() {
    return order.clone();
  }

  /** Native bytes of the cached records (the index over them is on the heap). */
  public long nativeBytes() {
    return nativeBytes;
  }

  /** Native bytes of the records plus the index (about 9 bytes a node in fastutil's tables). */
  public long memoryBytes() {
    return nativeBytes + (long) order.length * (4 + 9);
  }
}
