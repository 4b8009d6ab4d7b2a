package io.flashvec.index.shard;

import io.flashvec.index.Optimizations;
import io.flashvec.index.Optimizations.Optimization;
import io.flashvec.index.Optimizations.SegmentRef;
import io.flashvec.index.Optimizations.Status;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The optimizations (index builds and compactions) of one shard that run now, and a bounded history
 * of those that finished since the shard opened, for {@link Shard#optimizations()}.
 *
 * <p>A build or compaction calls {@link #start} once it has its new segment's id and has found room
 * on disk, and ends the returned {@link Running} exactly once: {@link Running#done}, {@link
 * Running#cancelled} or {@link Running#failed} move it to the history (the newest {@link #HISTORY}
 * are kept), {@link Running#discard} forgets it (it was postponed before it wrote anything, and
 * stays queued). Ending twice is a no-op, so a {@code finally} can end what a {@code catch} did
 * not.
 *
 * <p>Thread-safe: the jobs end on their executors while requests read; every method holds this
 * object's monitor for a few list operations.
 */
final class OptimizationTracker {

  /** Finished optimizations a shard remembers (Qdrant's default {@code completed_limit}). */
  static final int HISTORY = 16;

  private final int shardId;
  private final InstantSource clock;
  private final Map<Running, Boolean> running = new LinkedHashMap<>(); // guarded by this
  private final ArrayDeque<Optimization> history =
      new ArrayDeque<>(); // guarded by this, newest first

  OptimizationTracker(int shardId, InstantSource clock) {
    this.shardId = shardId;
    this.clock = clock;
  }

  OptimizationTracker(int shardId) {
    this(shardId, InstantSource.system());
  }

  /** A segment of this shard as an optimization sees it. */
  SegmentRef segment(int segmentId, long points) {
    return new SegmentRef(Optimizations.segmentUuid(shardId, segmentId), points);
  }

  /**
   * Records an optimization that starts now.
   *
   * @param optimizer its {@link Optimizations} optimizer name
   * @param newSegmentId the id of the segment it creates (names it)
   * @param sourceIds the ids of the segments it replaces
   * @param sourcePoints their live points, in the same order
   * @param progress points processed so far ({@code null}: not known)
   */
  Running start(
      String optimizer,
      int newSegmentId,
      int[] sourceIds,
      long[] sourcePoints,
      LongSupplier progress) {
    if (sourceIds.length != sourcePoints.length) {
      throw new IllegalArgumentException(
          "one point count per source segment [sources="
              + sourceIds.length
              + ", counts="
              + sourcePoints.length
              + "]");
    }
    List<SegmentRef> refs = new ArrayList<>(sourceIds.length);
    long total = 0;
    for (int i = 0; i < sourceIds.length; i++) {
      refs.add(segment(sourceIds[i], sourcePoints[i]));
      total += sourcePoints[i];
    }
    Running r =
        new Running(
            optimizer,
            segment(newSegmentId, 0).uuid(),
            refs,
            Set.copyOf(toList(sourceIds)),
            clock.instant(),
            total,
            progress);
    synchronized (this) {
      running.put(r, Boolean.TRUE);
    }
    return r;
  }

  private static List<Integer> toList(int[] ids) {
    List<Integer> out = new ArrayList<>(ids.length);
    for (int id : ids) {
      out.add(id);
    }
    return out;
  }

  /** The running optimizations, oldest first. */
  synchronized List<Optimization> running() {
    List<Optimization> out = new ArrayList<>(running.size());
    for (Running r : running.keySet()) {
      out.add(r.view(Status.OPTIMIZING, null, null));
    }
    return out;
  }

  /** The ids of the segments the running optimizations replace. */
  synchronized Set<Integer> busySegments() {
    Set<Integer> out = new HashSet<>();
    for (Running r : running.keySet()) {
      out.addAll(r.sourceIds);
    }
    return out;
  }

  /** The finished optimizations, newest first, at most {@link #HISTORY}. */
  synchronized List<Optimization> completed() {
    return List.copyOf(history);
  }

  private synchronized boolean end(Running r, Status status, String reason) {
    if (running.remove(r) == null) {
      return false;
    }
    if (status != null) {
      history.addFirst(r.view(status, reason, clock.instant()));
      while (history.size() > HISTORY) {
        history.removeLast();
      }
    }
    return true;
  }

  /** One running optimization; ended once by one of its methods. */
  final class Running {
    private final String optimizer;
    private final java.util.UUID uuid;
    private final List<SegmentRef> segments;
    private final Set<Integer> sourceIds;
    private final Instant startedAt;
    private final long total;
    private final LongSupplier progress;

    private Running(
        String optimizer,
        java.util.UUID uuid,
        List<SegmentRef> segments,
        Set<Integer> sourceIds,
        Instant startedAt,
        long total,
        LongSupplier progress) {
      this.optimizer = optimizer;
      this.uuid = uuid;
      this.segments = segments;
      this.sourceIds = sourceIds;
      this.startedAt = startedAt;
      this.total = total;
      this.progress = progress;
    }

    private Optimization view(Status status, String reason, Instant finishedAt) {
      long done;
      if (status == Status.DONE) {
        done = total;
      } else if (progress == null) {
        done = -1;
      } else {
        long at = progress.getAsLong();
        done = at < 0 ? -1 : Math.min(total, at); // negative: not reported yet
      }
      return new Optimization(
          uuid, optimizer, status, reason, segments, startedAt, finishedAt, done, total);
    }

    /** It finished and its segment is installed. */
    void done() {
      end(this, Status.DONE, null);
    }

    /** It stopped early ({@code why}: the shard closing, the disk full) and runs again later. */
    void cancelled(String why) {
      end(this, Status.CANCELLED, why);
    }

    /** It failed with {@code error}. */
    void failed(String error) {
      end(this, Status.ERROR, error);
    }

    /** Forgets it without a history entry: postponed before it wrote anything. */
    void discard() {
      end(this, null, null);
    }
  }
}
