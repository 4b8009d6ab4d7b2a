package io.flashvec.index.segment;

import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.file.Path;

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
   * ordinal: that graph is the segment's graph, so nothing is rebuilt, and ordinal {@code i} stays
   * ordinal {@code i}. The PQ codebook of {@code newest} (the shard's newest sealed segment, or
   * {@code null}) is reused when it fits.
   */
  void writeFromGraph(
      FileIO io, Path dir, int segmentId, GrowingSegment frozen, SealedSegment newest)
      throws IOException;
}
