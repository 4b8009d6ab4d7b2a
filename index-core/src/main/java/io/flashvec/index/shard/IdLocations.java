package io.flashvec.index.shard;

import io.flashvec.index.PointId;
import io.flashvec.index.segment.SealedSegment;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.objects.Object2LongOpenHashMap;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * A shard's map from point id to the location of its live version ({@code segment id << 32 |
 * ordinal}, never negative).
 *
 * <p>Only the points of the growing and frozen segments have an entry, in primitive hash tables (a
 * numeric id costs a {@code long} key and a {@code long} value, 16–32 bytes with the table's slack;
 * UUIDs go in a second table keyed by the id object). A point of a sealed segment has none: each
 * sealed segment finds its own ids ({@link SealedSegment#liveOrdinalOf}: a Bloom filter of about
 * 1.25 bytes a point on the heap, then a binary search of its mapped, sorted ids), and the copy
 * that is not deleted is the live one. A shard of ten million sealed points so keeps about 12 MB on
 * the heap for its ids where the tables held about 320 MB, opens without inserting every id, and
 * installs a merge without moving every id.
 *
 * <p>The invariant that makes this correct: every version of a point but the live one is marked
 * deleted in its segment, and an entry, when there is one, names the live version. {@link #put} and
 * {@link #remove} return the previous location, wherever it is, and the caller marks it deleted. An
 * install that turns a frozen segment into a sealed one publishes the new segment first, then drops
 * the frozen segment's entries ({@link #dropAll}); readers in between find the entry, whose segment
 * stays readable as retired.
 *
 * <p>Thread-safe: the shard's single writer mutates it under the write lock; readers (get, scroll)
 * take the read lock, which costs one uncontended CAS and is held for the table lookup only.
 */
final class IdLocations {

  /** Returned by {@link #get}, {@link #put} and {@link #remove} when the id has no location. */
  static final long NONE = -1;

  /** Heap per entry of the tables (numeric ids, with the open-addressing slack). */
  static final int ENTRY_BYTES = 32;

  private final Long2LongOpenHashMap numeric = new Long2LongOpenHashMap();
  private final Object2LongOpenHashMap<PointId> uuids = new Object2LongOpenHashMap<>();
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Supplier<List<SealedSegment>> sealed;

  /** The location of ordinal {@code ord} of segment {@code segmentId}. */
  static long pack(int segmentId, int ord) {
    return ((long) segmentId << 32) | (ord & 0xFFFFFFFFL);
  }

  /** The segment id of a location. */
  static int segment(long location) {
    return (int) (location >>> 32);
  }

  /** The ordinal of a location. */
  static int ordinal(long location) {
    return (int) location;
  }

  /** Locations over the shard's current sealed segments, {@code sealed}. */
  IdLocations(Supplier<List<SealedSegment>> sealed) {
    this.sealed = sealed;
    numeric.defaultReturnValue(NONE);
    uuids.defaultReturnValue(NONE);
  }

  /** The location of {@code id}, or {@link #NONE}. */
  long get(PointId id) {
    long loc = locked(id);
    if (loc != NONE) {
      return loc;
    }
    loc = inSealed(id);
    // a put between the two lookups moves the point into the tables and deletes the sealed copy
    return loc != NONE ? loc : locked(id);
  }

  private long locked(PointId id) {
    var r = lock.readLock();
    r.lock();
    try {
      return entry(id);
    } finally {
      r.unlock();
    }
  }

  private long entry(PointId id) {
    return id.isUuid() ? uuids.getLong(id) : numeric.get(id.loBits());
  }

  /** The live copy of {@code id} in a sealed segment, or {@link #NONE}. */
  private long inSealed(PointId id) {
    for (SealedSegment s : sealed.get()) {
      int ord = s.liveOrdinalOf(id);
      if (ord >= 0) {
        return pack(s.id(), ord);
      }
    }
    return NONE;
  }

  /**
   * Sets the location of {@code id} (in a growing segment); returns the previous one, wherever it
   * is, or {@link #NONE}. The caller marks the previous one deleted.
   */
  long put(PointId id, long location) {
    if (location < 0) {
      throw new IllegalArgumentException("negative location " + location);
    }
    long old;
    var w = lock.writeLock();
    w.lock();
    try {
      old = id.isUuid() ? uuids.put(id, location) : numeric.put(id.loBits(), location);
    } finally {
      w.unlock();
    }
    return old != NONE ? old : inSealed(id);
  }

  /** Removes {@code id}; returns its location, wherever it is, or {@link #NONE}. */
  long remove(PointId id) {
    long old;
    var w = lock.writeLock();
    w.lock();
    try {
      old = id.isUuid() ? uuids.removeLong(id) : numeric.remove(id.loBits());
    } finally {
      w.unlock();
    }
    return old != NONE ? old : inSealed(id);
  }

  /**
   * Drops the entries of the ids {@code ids.apply(i)} ({@code i < n}) that are still at {@code
   * from.applyAsLong(i)}: their points now live in a sealed segment published before this call.
   */
  void dropAll(
      int n,
      java.util.function.IntFunction<PointId> ids,
      java.util.function.IntToLongFunction from) {
    var w = lock.writeLock();
    w.lock();
    try {
      for (int i = 0; i < n; i++) {
        PointId id = ids.apply(i);
        long at = from.applyAsLong(i);
        if (id.isUuid()) {
          uuids.remove(id, at);
        } else {
          numeric.remove(id.loBits(), at);
        }
      }
    } finally {
      w.unlock();
    }
  }

  /** Entries in the tables: the points of growing and frozen segments. */
  int entries() {
    var r = lock.readLock();
    r.lock();
    try {
      return numeric.size() + uuids.size();
    } finally {
      r.unlock();
    }
  }

  /** Heap of the tables ({@value #ENTRY_BYTES} bytes an entry). */
  long memoryBytes() {
    return (long) entries() * ENTRY_BYTES;
  }

  /**
   * The smallest live ids not below {@code from} ({@code null}: all), at most {@code limit}, in
   * order: the entries' ids, and from each sealed segment its first {@code limit} live ids in its
   * sorted order, so a page costs the growing segments' size and {@code limit} per sealed segment,
   * not the shard's size. Holds the read lock throughout, so that an install that publishes a
   * sealed segment and then drops its entries is seen before or after, and an id seen in both is
   * taken once.
   */
  java.util.List<PointId> smallest(PointId from, int limit) {
    java.util.PriorityQueue<PointId> heap =
        new java.util.PriorityQueue<>(java.util.Collections.reverseOrder());
    if (limit <= 0) {
      return java.util.List.of();
    }
    var r = lock.readLock();
    r.lock();
    try {
      var it = numeric.keySet().iterator();
      while (it.hasNext()) {
        offer(heap, PointId.of(it.nextLong()), from, limit);
      }
      for (PointId id : uuids.keySet()) {
        offer(heap, id, from, limit);
      }
      for (SealedSegment s : sealed.get()) {
        int[] taken = {0};
        s.forEachInIdOrder(
            from,
            ord -> {
              if (s.isDeleted(ord)) {
                return true;
              }
              PointId id = s.idAt(ord);
              if (heap.size() == limit && id.compareTo(heap.peek()) >= 0) {
                return false; // ascending: nothing later would be taken
              }
              if (entry(id) == NONE) { // else a newer version has its entry, seen above
                offer(heap, id, from, limit);
                taken[0]++;
              }
              return taken[0] < limit;
            });
      }
    } finally {
      r.unlock();
    }
    java.util.List<PointId> out = new java.util.ArrayList<>(heap);
    java.util.Collections.sort(out);
    return out;
  }

  private static void offer(
      java.util.PriorityQueue<PointId> heap, PointId id, PointId from, int limit) {
    if (from != null && id.compareTo(from) < 0) {
      return;
    }
    if (heap.size() < limit) {
      heap.add(id);
    } else if (id.compareTo(heap.peek()) < 0) {
      heap.poll();
      heap.add(id);
    }
  }
}
