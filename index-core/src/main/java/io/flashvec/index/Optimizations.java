package io.flashvec.index;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * What a shard (or the sum over a collection's shards) is optimizing, has queued, has finished
 * since it opened, and which segments need nothing: the model of Qdrant's {@code GET
 * /collections/{name}/optimizations}. Immutable; a snapshot of a moment, not a live view.
 *
 * <p>FlashVec's background work maps onto Qdrant's optimizers so: the index build of a frozen
 * segment is {@value #INDEXING}, a merge of sealed segments (including the merge that builds
 * segments sealed raw) {@value #MERGE}, the rewrite of a segment without its deleted points {@value
 * #VACUUM}, the rewrite of a segment whose PQ codes are larger than the memory budget now allows
 * {@value #CONFIG_MISMATCH}. Segments are named by {@link #segmentUuid}; an optimization is named
 * by the segment it creates, as in Qdrant.
 *
 * @param running optimizations in progress, oldest first
 * @param queued work waiting: frozen segments waiting for their build, the next planned merge
 * @param completed finished optimizations (done, cancelled or failed), newest first
 * @param idle segments no running or queued optimization takes
 */
public record Optimizations(
    List<Optimization> running,
    List<Queued> queued,
    List<Optimization> completed,
    List<SegmentRef> idle) {

  /** Optimizer name of a frozen segment's index build. */
  public static final String INDEXING = "indexing";

  /** Optimizer name of a merge of sealed segments. */
  public static final String MERGE = "merge";

  /** Optimizer name of the rewrite of a segment without its deleted points. */
  public static final String VACUUM = "vacuum";

  /**
   * Optimizer name of the rewrite of a segment whose settings (here its PQ code size) differ from
   * what the collection and the memory budget give now, as Qdrant names its optimizer.
   */
  public static final String CONFIG_MISMATCH = "config_mismatch";

  /** Nothing running, queued, completed or idle. */
  public static final Optimizations EMPTY =
      new Optimizations(List.of(), List.of(), List.of(), List.of());

  public Optimizations {
    running = List.copyOf(running);
    queued = List.copyOf(queued);
    completed = List.copyOf(completed);
    idle = List.copyOf(idle);
  }

  /**
   * One segment as an optimization sees it.
   *
   * @param uuid the segment's {@link #segmentUuid}
   * @param points its live points (when the optimization started, for one that runs or ran)
   */
  public record SegmentRef(UUID uuid, long points) {
    public SegmentRef {
      Objects.requireNonNull(uuid, "uuid");
    }
  }

  /** Where an optimization is. */
  public enum Status {
    /** Running. */
    OPTIMIZING,
    /** Finished and installed. */
    DONE,
    /** Stopped before its end (the shard closed, or the disk filled up); runs again later. */
    CANCELLED,
    /** Failed; its segments stay as they were. */
    ERROR
  }

  /**
   * One optimization, running or finished.
   *
   * @param uuid the {@link #segmentUuid} of the segment it creates
   * @param optimizer {@link #INDEXING}, {@link #MERGE} or {@link #VACUUM}
   * @param status where it is
   * @param reason why it was cancelled or failed ({@code null} otherwise)
   * @param segments the segments it replaces
   * @param startedAt when it started
   * @param finishedAt when it finished ({@code null} while it runs)
   * @param done points processed so far, {@code -1} where a build does not tell
   * @param total points it processes
   */
  public record Optimization(
      UUID uuid,
      String optimizer,
      Status status,
      String reason,
      List<SegmentRef> segments,
      Instant startedAt,
      Instant finishedAt,
      long done,
      long total) {
    public Optimization {
      Objects.requireNonNull(uuid, "uuid");
      Objects.requireNonNull(optimizer, "optimizer");
      Objects.requireNonNull(status, "status");
      Objects.requireNonNull(startedAt, "startedAt");
      segments = List.copyOf(segments);
    }
  }

  /**
   * Work waiting to run.
   *
   * @param optimizer the optimizer that will run it
   * @param segments the segments it will replace
   */
  public record Queued(String optimizer, List<SegmentRef> segments) {
    public Queued {
      Objects.requireNonNull(optimizer, "optimizer");
      segments = List.copyOf(segments);
    }
  }

  /**
   * The UUID of segment {@code segment} of shard {@code shard}: a version-8 (custom) UUID that
   * shows both numbers in hex, {@code SSSSSSSS-0000-8000-8000-00IIIIIIIIII} (shard 2, segment 17:
   * {@code 00000002-0000-8000-8000-000000000011}), so a user can find the segment's directory.
   * Unique within a collection, stable across restarts.
   */
  public static UUID segmentUuid(int shard, int segment) {
    if (shard < 0 || segment < 0) {
      throw new IllegalArgumentException(
          "shard and segment ids must not be negative [shard="
              + shard
              + ", segment="
              + segment
              + "]");
    }
    long msb = ((long) shard << 32) | 0x8000L; // version 8 in bits 12-15 of the third group
    long lsb = 0x8000_0000_0000_0000L | segment; // RFC 4122 variant
    return new UUID(msb, lsb);
  }

  /** Segments the queued work takes. */
  public long queuedSegments() {
    long n = 0;
    for (Queued q : queued) {
      n += q.segments().size();
    }
    return n;
  }

  /** Live points of the segments the queued work takes. */
  public long queuedPoints() {
    long n = 0;
    for (Queued q : queued) {
      for (SegmentRef s : q.segments()) {
        n += s.points();
      }
    }
    return n;
  }

  /**
   * The optimizations of several shards as one: running oldest first, completed newest first and at
   * most {@code completedLimit} of them.
   */
  public static Optimizations merge(List<Optimizations> shards, int completedLimit) {
    if (completedLimit < 0) {
      throw new IllegalArgumentException(
          "completed limit must not be negative [completedLimit=" + completedLimit + "]");
    }
    List<Optimization> running = new ArrayList<>();
    List<Queued> queued = new ArrayList<>();
    List<Optimization> completed = new ArrayList<>();
    List<SegmentRef> idle = new ArrayList<>();
    for (Optimizations o : shards) {
      running.addAll(o.running());
      queued.addAll(o.queued());
      completed.addAll(o.completed());
      idle.addAll(o.idle());
    }
    running.sort(Comparator.comparing(Optimization::startedAt));
    completed.sort(
        Comparator.comparing(
                Optimization::finishedAt, Comparator.nullsFirst(Comparator.<Instant>naturalOrder()))
            .reversed());
    if (completed.size() > completedLimit) {
      completed = completed.subList(0, completedLimit);
    }
    return new Optimizations(running, queued, completed, idle);
  }
}
