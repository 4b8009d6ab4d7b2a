package io.flashvec.index.segment;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.storage.FileIO;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * What a segment build writes: segment {@code segmentId} in {@code dir} (which must not exist),
 * from the points {@code ords.get(i)} of {@code sources.get(i)}: new ordinal {@code j} holds the
 * {@code j}-th entry of the concatenated ordinals, or, when the format renumbers the points for its
 * layout, the entry its {@link SealedSegment#buildOrder} names. A seal builds from one frozen
 * growing segment, a compaction from several sealed ones. The sources must stay open until the
 * build returns.
 *
 * @param pool where a local build runs ({@code null}: the format's default pool)
 * @param cancelled turns true when the build must stop (the shard closes, the server stops): a
 *     build that can be cancelled then throws a {@link java.util.concurrent.CancellationException}
 *     soon after and leaves neither {@code dir} nor its temporary directory behind; {@code null}:
 *     never ({@link #NEVER_CANCELLED})
 * @param progress where a build that knows how far it is reports it, in points of {@link #points}
 *     (approximate, never past them, never backwards), for the optimizations view; {@code null}:
 *     nobody asks. Only partitioned builds report so far: the builds that take long.
 */
public record BuildSpec(
    FileIO io,
    Path dir,
    int segmentId,
    List<? extends Segment> sources,
    List<int[]> ords,
    int dimension,
    Distance distance,
    IndexParams params,
    ForkJoinPool pool,
    BooleanSupplier cancelled,
    AtomicLong progress) {

  /** The cancellation of a build that is never cancelled. */
  public static final BooleanSupplier NEVER_CANCELLED = () -> false;

  public BuildSpec {
    if (cancelled == null) {
      cancelled = NEVER_CANCELLED;
    }
    Objects.requireNonNull(io, "io");
    Objects.requireNonNull(dir, "dir");
    sources = List.copyOf(sources);
    ords = List.copyOf(ords);
    if (sources.size() != ords.size()) {
      throw new IllegalArgumentException(
          "one ordinal array per source [sources="
              + sources.size()
              + ", ords="
              + ords.size()
              + "]");
    }
  }

  /** A build without progress reports. */
  public BuildSpec(
      FileIO io,
      Path dir,
      int segmentId,
      List<? extends Segment> sources,
      List<int[]> ords,
      int dimension,
      Distance distance,
      IndexParams params,
      ForkJoinPool pool,
      BooleanSupplier cancelled) {
    this(io, dir, segmentId, sources, ords, dimension, distance, params, pool, cancelled, null);
  }

  /** Points the segment will hold. */
  public int points() {
    int n = 0;
    for (int[] o : ords) {
      n += o.length;
    }
    return n;
  }

  /** The same build with another cancellation. */
  public BuildSpec withCancelled(BooleanSupplier c) {
    return new BuildSpec(
        io, dir, segmentId, sources, ords, dimension, distance, params, pool, c, progress);
  }

  /** The same build with another pool. */
  public BuildSpec withPool(ForkJoinPool p) {
    return new BuildSpec(
        io, dir, segmentId, sources, ords, dimension, distance, params, p, cancelled, progress);
  }
}
