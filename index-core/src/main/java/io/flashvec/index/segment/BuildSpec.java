package io.flashvec.index.segment;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.storage.FileIO;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ForkJoinPool;

/**
 * What a segment build writes: segment {@code segmentId} in {@code dir} (which must not exist),
 * from the points {@code ords.get(i)} of {@code sources.get(i)}, in order, so that new ordinal
 * {@code j} is the {@code j}-th entry of the concatenated ordinals. A seal builds from one frozen
 * growing segment, a compaction from several sealed ones. The sources must stay open until the
 * build returns.
 *
 * @param pool where a local build runs ({@code null}: the format's default pool)
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
    ForkJoinPool pool) {

  public BuildSpec {
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

  /** Points the segment will hold. */
  public int points() {
    int n = 0;
    for (int[] o : ords) {
      n += o.length;
    }
    return n;
  }

  /** The same build with another pool. */
  public BuildSpec withPool(ForkJoinPool p) {
    return new BuildSpec(io, dir, segmentId, sources, ords, dimension, distance, params, p);
  }
}
