package io.flashvec.index.segment;

import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.BooleanSupplier;

/**
 * How a shard writes and opens its sealed segments, as a Lucene codec does for its segments: the
 * shard decides what to seal, build and merge, and a format decides how the files look. Every write
 * is atomic: the segment's directory appears complete and fsynced, or not at all.
 */
public interface SegmentFormat {

  /**
   * Opens a segment written by this format, verifying its files.
   *
   * @throws io.flashvec.storage.CorruptFileException if a file is missing, truncated or fails its
   *     checksum
   */
  SealedSegment open(FileIO io, Path dir, int segmentId) throws IOException;

  /**
   * Builds a segment from live points of other segments (a seal or a compaction), in this process.
   */
  SegmentBuilder builder();

  /**
   * Writes segment {@code segmentId} from a frozen growing segment whose live graph holds every
   * ordinal: that graph is the segment's graph, so nothing is rebuilt, and every ordinal is kept,
   * possibly renumbered ({@link SealedSegment#buildOrder}). The PQ codebook of {@code newest} (the
   * shard's newest sealed segment, or {@code null}) is reused when it fits. Stops soon after {@code
   * cancelled} turns true with a {@link java.util.concurrent.CancellationException}, leaving no
   * files behind.
   */
  void writeFromGraph(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment frozen,
      SealedSegment newest,
      BooleanSupplier cancelled)
      throws IOException;

  /**
   * Whether {@link #recode} can rewrite {@code segment} with other PQ codes around its own graph.
   */
  default boolean canRecode(SealedSegment segment) {
    return false;
  }

  /**
   * Writes segment {@code segmentId} as {@code source} with PQ codes of {@code pqSubspaces} bytes,
   * keeping its graph, ids, payloads and ordinals (deleted ones included: the caller marks them);
   * only when {@link #canRecode}. It costs a read of the vectors, not a graph build. The codes are
   * encoded with {@code codebook} when it has that size and {@code source}'s dimension (another
   * segment's of the shard: no training), else with one trained on an even sample of at most {@code
   * trainingSample} points of {@code source} (the caller sizes it to the heap it may take).
   * Cancellation and atomicity as {@link #writeFromGraph}.
   */
  default void recode(
      FileIO io,
      Path dir,
      int segmentId,
      SealedSegment source,
      int pqSubspaces,
      io.flashvec.index.disk.PqCodebook codebook,
      int trainingSample,
      BooleanSupplier cancelled)
      throws IOException {
    throw new UnsupportedOperationException(
        "this segment format cannot recode [segment=" + source.id() + "]");
  }

  /**
   * Writes segment {@code segmentId} <em>raw</em> from the live points {@code ords} of a frozen
   * growing segment whose live graph is far behind (a bulk load, or a WAL replay): the points in
   * that order with their PQ codes, ids and payloads, and no graph ({@link SealedSegment#hasGraph}
   * is false). It costs about a sequential write of the vectors; the shard's merges build the graph
   * later, once over many such segments. The PQ codebook of {@code newest} is reused when it fits.
   * Cancellation and atomicity as {@link #writeFromGraph}.
   */
  void writeRaw(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment frozen,
      int[] ords,
      SealedSegment newest,
      BooleanSupplier cancelled)
      throws IOException;

  /**
   * About the bytes a segment of {@code points} points of {@code dim} dimensions with {@code
   * payloadBytes} of payloads takes on disk (rounded up; without its payload index), for free-space
   * checks before a build.
   */
  long estimateBytes(int points, int dim, long payloadBytes);

  /**
   * About the bytes a segment of {@code points} points of {@code dim} dimensions written raw
   * ({@link #writeRaw}) lacks against one with a graph (rounded up): what the merge that builds its
   * graph writes on top of the raw segment's own files, for free-space checks of that merge and of
   * the writes that must leave room for it.
   */
  long graphBytes(int points, int dim);
}
