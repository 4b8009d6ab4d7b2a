package io.flashvec.index.shard;

import io.flashvec.index.UnavailableException;
import io.flashvec.index.payload.PayloadIndexes;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shard's segments: the current {@link Snapshot}, swapped atomically, and the lifetime of every
 * open sealed segment.
 *
 * <h2>Reference counting</h2>
 *
 * A sealed segment has one reference while the shard's manifest (or its next checkpoint) lists it,
 * and one per snapshot that holds it. At zero it is closed, and its directory deleted if a
 * committed compaction replaced it. A snapshot in turn is held by the shard while current and by
 * each reader between {@link #acquire} and {@link Snapshot#release}; so no search ever runs on an
 * unmapped segment, and a segment's files go as soon as the last reader is done.
 *
 * <h2>Threads</h2>
 *
 * {@link #acquire} and {@link #current} are lock-free. {@link #publish}, {@link #adopt}, {@link
 * #dropMembership} and {@link #discard} are called by one thread at a time: the holder of the
 * shard's write lock (or the constructor, before the shard is shared).
 */
final class SegmentSet {

  private static final Logger LOG = LoggerFactory.getLogger(SegmentSet.class);

  /** Lifetime of one open sealed segment; see the class comment. */
  private static final class Lifetime {
    final SealedSegment segment;
    final AtomicInteger refs = new AtomicInteger(1);
    volatile boolean dropFiles;
    boolean member = true; // the manifest reference is held; guarded by the shard's write lock

    Lifetime(SealedSegment segment) {
      this.segment = segment;
    }
  }

  private final Path dir;
  private final FileIO io;
  private final PayloadIndexes payloadIndexes;
  private final ConcurrentHashMap<Segment, Lifetime> lifetimes = new ConcurrentHashMap<>();
  private final AtomicInteger nextId = new AtomicInteger();
  private volatile Snapshot snapshot;
  private volatile boolean closed;

  SegmentSet(Path dir, FileIO io, PayloadIndexes payloadIndexes) {
    this.dir = dir;
    this.io = io;
    this.payloadIndexes = payloadIndexes;
  }

  /** The current snapshot, without a reference: for counts and statistics, not for reading data. */
  Snapshot current() {
    return snapshot;
  }

  /**
   * The current snapshot with a reference held: its sealed segments stay open until {@link
   * Snapshot#release}. Lock-free; retries only when it raced with a swap.
   *
   * @throws UnavailableException once the shard is closed
   */
  Snapshot acquire() {
    while (true) {
      Snapshot s = snapshot;
      if (s.tryAcquire()) {
        return s;
      }
      if (closed && s == snapshot) {
        throw new UnavailableException("Service unavailable: shard is closed [dir=" + dir + "]");
      }
      Thread.onSpinWait();
    }
  }

  /**
   * A reference on just {@code segments} (sealed segments of the current snapshot, which holds
   * them: write lock held), for a long job that reads them until they are replaced, as a compaction
   * does. Unlike {@link #acquire} it keeps no segment in memory reachable: a snapshot's growing and
   * frozen segments, sealed meanwhile, would otherwise stay on the heap until the job ends.
   */
  Snapshot hold(List<SealedSegment> segments) {
    for (SealedSegment s : segments) {
      ref(s);
    }
    return new Snapshot(this, segments, List.of(), List.of());
  }

  /** A new segment id, unique in the shard (persisted by the manifest's next id). */
  int allocateId() {
    return nextId.getAndIncrement();
  }

  /** The next id {@link #allocateId} gives. */
  int nextId() {
    return nextId.get();
  }

  /** Sets the next segment id (recovery, from the manifest). */
  void startIdsAt(int id) {
    nextId.set(id);
  }

  /**
   * Makes a new snapshot current: it takes a reference on each of its sealed segments, then the
   * previous snapshot loses the shard's reference.
   */
  void publish(List<SealedSegment> sealed, List<GrowingSegment> memory, List<Segment> retired) {
    for (SealedSegment s : sealed) {
      ref(s);
    }
    for (Segment s : retired) {
      ref(s);
    }
    Snapshot old = snapshot;
    snapshot = new Snapshot(this, sealed, memory, retired);
    if (old != null) {
      old.release();
    }
  }

  /** Publishes the current segments again without the retired ones. */
  void dropRetired() {
    Snapshot s = snapshot;
    publish(s.sealed(), s.memory(), List.of());
  }

  /**
   * The snapshot after {@code sealed} was frozen and {@code next} took its place: segments in
   * memory that hold no live point go at once (an empty sealed segment stays listed until a
   * compaction drops it and its files after a manifest without it is committed).
   */
  void publishSeal(GrowingSegment sealed, GrowingSegment next) {
    Snapshot s = snapshot;
    List<GrowingSegment> memory = new ArrayList<>(s.memory().size() + 1);
    for (GrowingSegment g : s.memory()) {
      if (g.liveCount() > 0 || g == sealed) {
        memory.add(g);
      }
    }
    memory.add(next);
    publish(s.sealed(), memory, List.of());
  }

  /**
   * Registers a sealed segment just opened (at recovery, or by a build or a compaction before it is
   * published), holding the manifest's reference, so that it can be pinned; {@link #discard} it if
   * it is never installed.
   */
  void adopt(SealedSegment s) {
    lifetimes.put(s, new Lifetime(s));
  }

  /** Closes an adopted segment that will not be installed (its files are the caller's). */
  void discard(SealedSegment s) {
    dropMembership(s, false);
  }

  /**
   * Drops the manifest's reference on a sealed segment; with {@code dropFiles} its directory is
   * deleted once the last reference goes.
   */
  void dropMembership(Segment s, boolean dropFiles) {
    Lifetime lt = lifetimes.get(s);
    if (lt != null && lt.member) {
      lt.member = false;
      lt.dropFiles = dropFiles;
      unref(s);
    }
  }

  /**
   * Takes a reference on a sealed segment unless its last one is gone (it is closed or closing);
   * release with {@link #unref}.
   */
  boolean tryRef(Segment s) {
    Lifetime lt = lifetimes.get(s);
    return lt != null && incrementIfPositive(lt.refs);
  }

  private void ref(Segment s) {
    Lifetime lt = lifetimes.get(s);
    if (lt != null) {
      int r = lt.refs.getAndIncrement();
      assert r > 0 : "segment revived after close [segment=" + s.id() + "]";
    }
  }

  /**
   * Drops one reference on a sealed segment (a no-op for a segment in memory); the last one closes
   * it, and deletes its files if they were dropped.
   */
  void unref(Segment s) {
    Lifetime lt = lifetimes.get(s);
    if (lt == null || lt.refs.decrementAndGet() > 0) {
      return;
    }
    lifetimes.remove(s);
    payloadIndexes.drop(lt.segment);
    try {
      lt.segment.close();
    } catch (RuntimeException e) {
      LOG.warn("error closing segment [dir={}]", lt.segment.directory(), e);
    }
    if (lt.dropFiles) {
      io.crashPoint(CrashPoint.SEGMENT_FILES_DELETING);
      try {
        io.deleteTree(lt.segment.directory());
        LOG.info("segment files deleted [dir={}]", lt.segment.directory());
      } catch (IOException e) {
        // Not in the manifest any more: the next open removes the directory.
        LOG.warn("cannot delete replaced segment [dir={}]", lt.segment.directory(), e);
      }
    }
  }

  /**
   * Closes the set (write lock held): every sealed segment loses the manifest's reference, and the
   * current snapshot the shard's; segments close now, or when the last search (or a running
   * compaction) releases its snapshot. {@link #acquire} fails from then on.
   */
  void close() {
    closed = true;
    for (Segment s : List.copyOf(lifetimes.keySet())) {
      dropMembership(s, false);
    }
    snapshot.release();
  }

  /** Closes segments opened during a recovery that failed. */
  void closeAdopted() {
    for (Lifetime lt : List.copyOf(lifetimes.values())) {
      lt.segment.close();
    }
    lifetimes.clear();
  }

  /** Takes one more reference on a count that has not dropped to zero (never revives it). */
  static boolean incrementIfPositive(AtomicInteger refs) {
    int r;
    do {
      r = refs.get();
      if (r <= 0) {
        return false;
      }
    } while (!refs.compareAndSet(r, r + 1));
    return true;
  }
}
