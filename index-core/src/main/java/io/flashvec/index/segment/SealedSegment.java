package io.flashvec.index.segment;

import io.flashvec.index.disk.PqCodebook;
import io.flashvec.storage.FileIO;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/**
 * An immutable segment whose points and graph are on disk in a directory of its own, listed in its
 * shard's manifest. Only its deletion bits change after it is written; they become durable at each
 * WAL checkpoint ({@link #writeDeleted}).
 *
 * <p>Threads: as {@link Segment}; {@link #close} unmaps the files and must only be called once no
 * search uses the segment (the shard's reference counting sees to it).
 */
public interface SealedSegment extends Segment, Closeable {

  @Override
  default boolean onDisk() {
    return true;
  }

  @Override
  default int indexedLiveCount() {
    return hasGraph() ? liveCount() : 0;
  }

  /** The segment's directory. */
  Path directory();

  /**
   * The ordinal that holds the live (not deleted) copy of {@code id}, or -1: how the shard finds a
   * point of a sealed segment, for which it keeps no map entry. A segment sealed from a growing one
   * may hold older, deleted copies of the id too.
   */
  int liveOrdinalOf(io.flashvec.index.PointId id);

  /**
   * Calls {@code visit} with the ordinals, deleted or not, in the order of their ids (numeric ids
   * ascending, then UUIDs: {@link io.flashvec.index.PointId}'s order), from the first id not below
   * {@code from} ({@code null}: the first), until it returns false.
   */
  void forEachInIdOrder(io.flashvec.index.PointId from, java.util.function.IntPredicate visit);

  /**
   * The dense fields other than the primary one (by storage key) as the collection's config
   * declares them now: a segment that builds their graphs rebuilds, in the background, those whose
   * graph settings changed, starts those that gained a graph and drops (with their files) those
   * that lost theirs (ADR 0040). Searches meanwhile scan the nodes a graph lacks. A no-op for a
   * segment without field graphs.
   */
  default void indexFields(java.util.Map<String, io.flashvec.index.DenseVectorParams> fields) {}

  /**
   * The settings the primary vector's graph of this segment was built with.
   *
   * @param maxDegree the graph's max degree (twice Qdrant's {@code m})
   * @param buildSearchList the construction search list (Qdrant's {@code ef_construct}); 0 when the
   *     segment was written before it was recorded: then it is the collection's, since every change
   *     of the collection's settings records it first ({@link #recordBuildSearchList})
   */
  record GraphBuild(int maxDegree, int buildSearchList) {

    /**
     * Whether a graph of these settings differs from one the collection's {@code maxDegree} and
     * {@code buildSearchList} would build now.
     */
    public boolean differsFrom(int maxDegree, int buildSearchList) {
      return this.maxDegree != maxDegree
          || this.buildSearchList != 0 && this.buildSearchList != buildSearchList;
    }
  }

  /**
   * The settings this segment's graph of the primary vector was built with, or {@code null}: it has
   * none (sealed raw, or no primary vector).
   */
  default GraphBuild graphBuild() {
    return null;
  }

  /**
   * Records durably, if the segment does not say yet, that its graph was built with construction
   * search list {@code buildSearchList} (the collection's before a change of its graph settings).
   */
  default void recordBuildSearchList(FileIO io, int buildSearchList) throws IOException {}

  /** Durably writes the current deletion bits (at a WAL checkpoint). */
  void writeDeleted(FileIO io) throws IOException;

  /**
   * Where each ordinal's point was in the input of the build that wrote this segment: ordinal
   * {@code i} holds the {@code order[i]}-th entry of its {@link BuildSpec}'s concatenated ordinals
   * (or, sealed from a live graph, the frozen segment's ordinal {@code order[i]}), the format
   * having renumbered the points for its own layout. {@code null} when ordinal {@code i} holds
   * entry {@code i}. Read from disk on each call: the shard needs it once, to install the segment.
   */
  int[] buildOrder(FileIO io) throws IOException;

  /**
   * Whether the segment has a graph: false for a segment sealed raw ({@link
   * SegmentFormat#writeRaw}), whose points no index answers for yet ({@link #indexedLiveCount} is
   * 0) and which a merge turns into a graph.
   */
  default boolean hasGraph() {
    return true;
  }

  /**
   * The PQ codebook of this segment, which a growing segment sealed after it may reuse so that its
   * seal needs no training; {@code null} when it has none.
   */
  PqCodebook codebook();

  /**
   * Whether searches of this segment run from memory: its recent searches read no page from the
   * device. A hint: the page cache can change its mind at any time.
   */
  boolean servedFromMemory();

  /**
   * Drops this segment's pages from memory (this process's mappings and the page cache), for
   * cold-cache measurements; returns whether the kernel accepted the advice.
   */
  boolean evictFromPageCache();

  /**
   * Bytes of the stored payloads (0 when no point has one): about what a payload index of this
   * segment takes, for free-space checks.
   */
  long payloadFileBytes();

  /** Unmaps the segment's files. */
  @Override
  void close();
}
