package io.flashvec.index.diskann;

import io.flashvec.index.disk.NodeCacheBudget;
import java.util.Objects;
import java.util.concurrent.ForkJoinPool;

/**
 * The server's settings of DiskANN segments: how searches read from the device and where builds
 * run. One instance per server, passed to every shard (through its options); immutable.
 *
 * @param prefetch when a search prefetches the records of each beam step ({@code
 *     flashvec.search.prefetch})
 * @param beamWidth records read together per beam step when a request does not say ({@code
 *     flashvec.search.beam-width}); 0 means automatic: {@value DiskAnnSegment#COLD_BEAM_WIDTH}
 *     while the segment prefetches (its reads go to the device, so reading several records per
 *     round trip pays), 1 while it is cached (a wider beam only expands more nodes)
 * @param buildPool where index builds without a pool of their own run ({@code
 *     flashvec.segment.build-threads}); {@code null} lets jvector use one thread per core. A small
 *     pool bounds the CPU a build takes from concurrent queries, at the price of slower builds
 * @param nodeCache the server's bytes for the sealed graphs' hot node caches ({@code
 *     flashvec.search.node-cache-bytes}), shared by every segment opened with these settings
 */
public record DiskAnnSettings(
    Prefetch prefetch, int beamWidth, ForkJoinPool buildPool, NodeCacheBudget nodeCache) {

  /** When a search prefetches the records of each beam step. */
  public enum Prefetch {
    /** Never: each record is read by a page fault when touched. */
    OFF,
    /** Always: one {@code madvise(WILLNEED)} per record per step, even when cached. */
    ON,
    /** While the segment's recent searches read from the device (the default). */
    AUTO
  }

  /** Automatic prefetch and beam width, jvector's build pools, no hot node caches. */
  public static final DiskAnnSettings DEFAULT =
      new DiskAnnSettings(Prefetch.AUTO, 0, null, NodeCacheBudget.NONE);

  /** The largest beam width. */
  public static final int MAX_BEAM_WIDTH = 64;

  public DiskAnnSettings {
    Objects.requireNonNull(prefetch, "prefetch");
    Objects.requireNonNull(nodeCache, "nodeCache");
    if (beamWidth < 0 || beamWidth > MAX_BEAM_WIDTH) {
      throw new IllegalArgumentException(
          "beam width out of range [beamWidth="
              + beamWidth
              + ", allowed=0.."
              + MAX_BEAM_WIDTH
              + "]");
    }
  }
}
