package io.flashvec.index.diskann;

import io.flashvec.index.disk.NodeCacheBudget;
import io.flashvec.storage.IoThreads;
import java.util.Objects;
import java.util.concurrent.ForkJoinPool;

/**
 * The server's settings of DiskANN segments: how searches read from the device and where builds
 * run. One instance per server, passed to every shard (through its options); immutable.
 *
 * @param prefetch when a search reads ahead of need ({@code flashvec.search.prefetch}): with it a
 *     mapped graph is searched by the pipelined search ({@link
 *     io.flashvec.index.disk.BeamSearcher#searchPipelined}), its reads issued on {@code ioThreads};
 *     without it each record is read by a page fault when touched
 * @param beamWidth records read together per beam step when a request does not say ({@code
 *     flashvec.search.beam-width}); 0 means automatic: {@value DiskAnnSegment#COLD_BEAM_WIDTH}
 *     while the segment prefetches (its reads go to the device, so reading several records per
 *     round trip pays), 1 while it is cached (a wider beam only expands more nodes)
 * @param buildPool where index builds without a pool of their own run ({@code
 *     flashvec.segment.build-threads}); {@code null} lets jvector use one thread per core. A small
 *     pool bounds the CPU a build takes from concurrent queries, at the price of slower builds
 * @param nodeCache the server's bytes for the sealed graphs' hot node caches ({@code
 *     flashvec.search.node-cache-bytes}), shared by every segment opened with these settings
 * @param buildMemoryBytes heap a segment build or merge may use (on a server the build slice of
 *     {@code flashvec.memory.budget}; default a quarter of the maximum heap): a build whose points
 *     do not fit is cut into overlapping partitions built one at a time ({@link
 *     PartitionedGraphBuilder}), so no build holds all its vectors on the heap
 * @param ioThreads the threads that read sealed graphs for pipelined searches ({@code
 *     flashvec.search.io-threads}: the device's queue depth), shared by every segment
 */
public record DiskAnnSettings(
    Prefetch prefetch,
    int beamWidth,
    ForkJoinPool buildPool,
    NodeCacheBudget nodeCache,
    long buildMemoryBytes,
    IoThreads ioThreads) {

  /** When a search prefetches the records of each beam step. */
  public enum Prefetch {
    /** Never: each record is read by a page fault when touched. */
    OFF,
    /** Always: the pipelined search, one residency check per record even when cached. */
    ON,
    /** While the segment's recent searches read from the device (the default). */
    AUTO
  }

  /**
   * Automatic prefetch and beam width, jvector's build pools, no hot node caches, the default build
   * memory.
   */
  public static final DiskAnnSettings DEFAULT = new DiskAnnSettings(Prefetch.AUTO, 0, null);

  /** The smallest build memory: a partition of a few thousand points of a few hundred floats. */
  public static final long MIN_BUILD_MEMORY_BYTES = 1L << 20;

  /** The default build memory: a quarter of the maximum heap. */
  public static long defaultBuildMemoryBytes() {
    return Runtime.getRuntime().maxMemory() / 4;
  }

  /** The largest beam width. */
  public static final int MAX_BEAM_WIDTH = 64;

  public DiskAnnSettings {
    Objects.requireNonNull(prefetch, "prefetch");
    Objects.requireNonNull(nodeCache, "nodeCache");
    Objects.requireNonNull(ioThreads, "ioThreads");
    if (beamWidth < 0 || beamWidth > MAX_BEAM_WIDTH) {
      throw new IllegalArgumentException(
          "beam width out of range [beamWidth="
              + beamWidth
              + ", allowed=0.."
              + MAX_BEAM_WIDTH
              + "]");
    }
    if (buildMemoryBytes < MIN_BUILD_MEMORY_BYTES) {
      throw new IllegalArgumentException(
          "build memory too small [buildMemoryBytes="
              + buildMemoryBytes
              + ", min="
              + MIN_BUILD_MEMORY_BYTES
              + "]");
    }
  }

  /** Settings that read through the process-wide {@link IoThreads#shared()} pool. */
  public DiskAnnSettings(
      Prefetch prefetch,
      int beamWidth,
      ForkJoinPool buildPool,
      NodeCacheBudget nodeCache,
      long buildMemoryBytes) {
    this(prefetch, beamWidth, buildPool, nodeCache, buildMemoryBytes, IoThreads.shared());
  }

  /** Settings without hot node caches and with the default build memory. */
  public DiskAnnSettings(Prefetch prefetch, int beamWidth, ForkJoinPool buildPool) {
    this(prefetch, beamWidth, buildPool, NodeCacheBudget.NONE, defaultBuildMemoryBytes());
  }

  /** Settings with the default build memory ({@link #defaultBuildMemoryBytes()}). */
  public DiskAnnSettings(
      Prefetch prefetch, int beamWidth, ForkJoinPool buildPool, NodeCacheBudget nodeCache) {
    this(prefetch, beamWidth, buildPool, nodeCache, defaultBuildMemoryBytes());
  }

  /** Settings without hot node caches. */
  public DiskAnnSettings(
      Prefetch prefetch, int beamWidth, ForkJoinPool buildPool, long buildMemoryBytes) {
    this(prefetch, beamWidth, buildPool, NodeCacheBudget.NONE, buildMemoryBytes);
  }

  /** The same settings with another build memory. */
  public DiskAnnSettings withBuildMemoryBytes(long bytes) {
    return new DiskAnnSettings(prefetch, beamWidth, buildPool, nodeCache, bytes, ioThreads);
  }

  /** The same settings reading through {@code threads}. */
  public DiskAnnSettings withIoThreads(IoThreads threads) {
    return new DiskAnnSettings(
        prefetch, beamWidth, buildPool, nodeCache, buildMemoryBytes, threads);
  }
}
