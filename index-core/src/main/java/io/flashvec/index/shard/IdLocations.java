package io.flashvec.index.shard;

import io.flashvec.index.PointId;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import it.unimi.dsi.fastutil.objects.Object2LongOpenHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * A shard's map from point id to the location of its live version ({@code segment id << 32 |
 * ordinal}, never negative), in primitive hash tables.
 *
 * <p>This is the one structure in RAM that grows with every stored point, so it avoids boxing: a
 * numeric id costs one {@code long} key and one {@code long} value in an open-addressing table
 * (about 16–32 bytes with the table's slack) instead of the ~90 bytes of a {@code
 * ConcurrentHashMap<PointId, Long>} entry. UUID ids go in a second table keyed by the id object.
 *
 * <p>Thread-safe: the shard's single writer mutates it under the write lock; readers (get, scroll)
 * take the read lock, which costs one uncontended CAS and is held for the lookup only.
 */
final class IdLocations {

  /** Returned by {@link #get}, {@link #put} and {@link #remove} when the id has no location. */
  static final long NONE = -1;

  private final Long2LongOpenHashMap numeric = new Long2LongOpenHashMap();
  private final Object2LongOpenHashMap<PointId> uuids = new Object2LongOpenHashMap<>();
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

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

  IdLocations() {
    numeric.defaultReturnValue(NONE);
    uuids.defaultReturnValue(NONE);
  }

  /** The location of {@code id}, or {@link #NONE}. */
  long get(PointId id) {
    var r = lock.readLock();
    r.lock();
    try {
      return id.isUuid() ? uuids.getLong(id) : numeric.get(id.loBits());
    } finally {
      r.unlock();
    }
  }

  /** Sets the location of {@code id}; returns the previous one or {@link #NONE}. */
  long put(PointId id, long location) {
    if (location < 0) {
      throw new IllegalArgumentException("negative location " + location);
    }
    var w = lock.writeLock();
    w.lock();
    try {
      return id.isUuid() ? uuids.put(id, location) : numeric.put(id.loBits(), location);
    } finally {
      w.unlock();
    }
  }

  /** Moves {@code id} to {@code to} if it is still at {@code from}; returns whether it moved. */
  boolean replace(PointId id, long from, long to) {
    var w = lock.writeLock();
    w.lock();
    try {
      if (id.isUuid()) {
        if (uuids.getLong(id) != from) {
          return false;
        }
        uuids.put(id, to);
      } else {
        if (numeric.get(id.loBits()) != from) {
          return false;
        }
        numeric.put(id.loBits(), to);
      }
      return true;
    } finally {
      w.unlock();
    }
  }

  /** Removes {@code id}; returns its location or {@link #NONE}. */
  long remove(PointId id) {
    var w = lock.writeLock();
    w.lock();
    try {
      return id.isUuid() ? uuids.removeLong(id) : numeric.remove(id.loBits());
    } finally {
      w.unlock();
    }
  }

  int size() {
    var r = lock.readLock();
    r.lock();
    try {
      return numeric.size() + uuids.size();
    } finally {
      r.unlock();
    }
  }

  /**
   * Calls {@code action} with every id, in no particular order, under the read lock (writers wait
   * until it returns, so keep it cheap).
   */
  void forEachId(Consumer<PointId> action) {
    var r = lock.readLock();
    r.lock();
    try {
      var it = numeric.keySet().iterator();
      while (it.hasNext()) {
        action.accept(PointId.of(it.nextLong()));
      }
      uuids.keySet().forEach(action);
    } finally {
      r.unlock();
    }
  }
}
