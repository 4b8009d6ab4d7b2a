package io.flashvec.index.segment;

import java.io.IOException;

/**
 * Writes a sealed segment's files from points of other segments: the seam between a shard (which
 * decides what to build and installs the result) and where the build runs — in this process (its
 * {@link SegmentFormat#builder()}) or, in cluster mode, on an index node. Either way the spec's
 * directory appears atomically, complete and fsynced, or not at all.
 */
@FunctionalInterface
public interface SegmentBuilder {

  /** Builds the segment {@code spec} describes; returns the number of points written. */
  int build(BuildSpec spec) throws IOException;
}
