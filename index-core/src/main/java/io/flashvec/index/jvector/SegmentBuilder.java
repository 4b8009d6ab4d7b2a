package io.flashvec.index.jvector;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.function.BooleanSupplier;

/**
 * Writes a disk segment's files: the seam between a shard (which decides what to build and installs
 * the result) and where the build runs — in this process ({@link #LOCAL}, {@link
 * DiskAnnSegment#build(FileIO, Path, int, List, List, int, Distance, IndexParams, ForkJoinPool)})
 * or, in cluster mode, on an index node. Either way {@code dir} appears atomically, complete and
 * fsynced, or not at all.
 */
@FunctionalInterface
public interface SegmentBuilder {

  /**
   * Builds in this process; cancellable between steps (see {@link #build(FileIO, Path, int, List,
   * List, int, Distance, IndexParams, ForkJoinPool, BooleanSupplier)}).
   */
  SegmentBuilder LOCAL =
      new SegmentBuilder() {
        @Override
        public int build(
            FileIO io,
            Path dir,
            int segmentId,
            List<? extends Segment> sources,
            List<int[]> ords,
            int dim,
            Distance distance,
            IndexParams params,
            ForkJoinPool pool)
            throws IOException {
          return DiskAnnSegment.build(
              io, dir, segmentId, sources, ords, dim, distance, params, pool);
        }

        @Override
        public int build(
            FileIO io,
            Path dir,
            int segmentId,
            List<? extends Segment> sources,
            List<int[]> ords,
            int dim,
            Distance distance,
            IndexParams params,
            ForkJoinPool pool,
            BooleanSupplier cancelled)
            throws IOException {
          return DiskAnnSegment.build(
              io, dir, segmentId, sources, ords, dim, distance, params, pool, cancelled);
        }
      };

  /**
   * Builds segment {@code segmentId} from the points {@code ords.get(i)} of {@code sources.get(i)},
   * in order, into {@code dir}; returns the number of points.
   *
   * @param pool where a local build runs ({@code null}: jvector's default pools)
   */
  int build(
      FileIO io,
      Path dir,
      int segmentId,
      List<? extends Segment> sources,
      List<int[]> ords,
      int dim,
      Distance distance,
      IndexParams params,
      ForkJoinPool pool)
      throws IOException;

  /**
   * {@link #build(FileIO, Path, int, List, List, int, Distance, IndexParams, ForkJoinPool)} that
   * stops soon after {@code cancelled} turns true (a server shutting down): it then throws a {@link
   * java.util.concurrent.CancellationException} and leaves neither {@code dir} nor its temporary
   * directory behind. A builder that cannot be cancelled runs to its end.
   */
  default int build(
      FileIO io,
      Path dir,
      int segmentId,
      List<? extends Segment> sources,
      List<int[]> ords,
      int dim,
      Distance distance,
      IndexParams params,
      ForkJoinPool pool,
      BooleanSupplier cancelled)
      throws IOException {
    return build(io, dir, segmentId, sources, ords, dim, distance, params, pool);
  }
}
