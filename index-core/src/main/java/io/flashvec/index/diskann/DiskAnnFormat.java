package io.flashvec.index.diskann;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.disk.GraphFile;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.index.segment.SegmentFormat;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.BooleanSupplier;

/**
 * The segment format of every FlashVec index type: a DiskANN-style graph with the vectors inline
 * and PQ codes, written by {@link DiskAnnWriter} and opened as a {@link DiskAnnSegment}. For the
 * {@code hnsw} type the graph is read onto the heap at open and searched with exact distances, for
 * comparison with the on-disk search.
 *
 * <p>Immutable and thread-safe; one per shard (it carries the shard's metric and index settings).
 */
public final class DiskAnnFormat implements SegmentFormat {

  static final String META_FORMAT = "segment-meta";
  static final String DELETED_FORMAT = "segment-deleted";
  static final int META_VERSION = 2;
  static final String GRAPH_FILE = "graph.fvg";
  static final String PQ_FILE = "pq.fvs";
  static final String META_FILE = "meta.fvs";
  static final String DELETED_FILE = "deleted.fvs";

  private final Distance distance;
  private final IndexParams params;
  private final int defaultSearchList;
  private final DiskAnnSettings settings;

  /**
   * @param defaultSearchList the search list of a request that gives none
   */
  public DiskAnnFormat(
      Distance distance, IndexParams params, int defaultSearchList, DiskAnnSettings settings) {
    this.distance = distance;
    this.params = params;
    this.defaultSearchList = defaultSearchList;
    this.settings = settings;
  }

  @Override
  public SealedSegment open(FileIO io, Path dir, int segmentId) throws IOException {
    return DiskAnnSegment.open(
        io, dir, segmentId, defaultSearchList, params.type().equals(IndexParams.HNSW), settings);
  }

  /** Builds in this process, on the build pool of the settings unless the build has its own. */
  @Override
  public SegmentBuilder builder() {
    return DiskAnnWriter.builder(settings);
  }

  @Override
  public void writeFromGraph(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment frozen,
      SealedSegment newest,
      BooleanSupplier cancelled)
      throws IOException {
    DiskAnnWriter.writeFromGraph(
        io,
        dir,
        segmentId,
        frozen,
        distance,
        params,
        newest == null ? null : newest.codebook(),
        settings.buildPool(),
        cancelled);
  }

  /**
   * The graph file with the vectors inline, PQ codes and codebook (with its rotation), metadata
   * with ids and payloads, and the deletion bitmap.
   */
  @Override
  public long estimateBytes(int points, int dim, long payloadBytes) {
    int subspaces =
        Math.min(
            dim, params.pqSubspaces() > 0 ? params.pqSubspaces() : PqTrainer.defaultSubspaces(dim));
    long graph = GraphFile.fileBytes(points, dim, params.maxDegree());
    long pq = (long) points * subspaces + 256L * dim * 4 + (long) dim * dim * 4 + 4096;
    long meta = (long) points * (17 + 4 + 8) + payloadBytes + 4096;
    long deleted = points / 8 + 4096;
    return graph + pq + meta + deleted;
  }
}
