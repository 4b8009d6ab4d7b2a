package io.flashvec.index.diskann;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.disk.GraphFile;
import io.flashvec.index.disk.PageOrder;
import io.flashvec.index.disk.PqCodebook;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.SegmentBuilder;
import io.flashvec.index.segment.SegmentFormat;
import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.DiskSpace;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * The segment format of every FlashVec index type: a DiskANN-style graph with the vectors inline
 * and PQ codes, written by {@link DiskAnnWriter} and opened as a {@link DiskAnnSegment}. For the
 * {@code hnsw} type the graph is read onto the heap at open and searched with exact distances, for
 * comparison with the on-disk search.
 *
 * <p>Thread-safe; one per shard (it carries the shard's metric and index settings). Whether
 * segments opened from now on hold their payloads on the heap ({@link #payloadsOnHeap(boolean)},
 * the collection's {@code on_disk_payload: false}) may change while the shard is open.
 */
public final class DiskAnnFormat implements SegmentFormat {

  static final String DELETED_FORMAT = "segment-deleted";

  static final String GRAPH_FILE = "graph.fvg";
  static final String PQ_FILE = "pq.fvs";
  static final String META_FILE = "meta.fvs";
  static final String DELETED_FILE = "deleted.fvs";
  static final String ORDER_FORMAT = "segment-order";
  static final int ORDER_VERSION = 1;

  /**
   * The order file ({@code order.fvs}, a {@link ChecksummedFile}, {@code segment-order} v1: {@code
   * int count | int[count] position}): for each ordinal, the position in the build's input of the
   * point it holds (see {@link SealedSegment#buildOrder}). Absent when ordinal {@code i} holds
   * input {@code i}: one record per page, or a segment written before the page-local order.
   */
  static final String ORDER_FILE = "order.fvs";

  static final String BUILD_FORMAT = "graph-build";
  static final int BUILD_VERSION = 1;

  /**
   * The build file ({@code graph-build.fvs}, a {@link ChecksummedFile}, {@code graph-build} v1:
   * {@code int maxDegree | int buildSearchList}): the settings the segment's graph was built with,
   * so a change of the collection's graph settings finds the segments to rebuild ({@link
   * SealedSegment#graphBuild}). Absent in a segment without a graph and in one written before the
   * file existed, whose settings are the collection's (a change records them first).
   */
  static final String BUILD_FILE = "graph-build.fvs";

  private final Distance distance;
  // the collection's index; its max degree and construction list change with its graph settings
  private volatile IndexParams params;
  private final int defaultSearchList;
  private final DiskAnnSettings settings;
  private volatile boolean payloadsOnHeap;
  private volatile java.util.Set<String> denseOnDisk = java.util.Set.of();
  private volatile java.util.Map<String, io.flashvec.index.DenseVectorParams> indexedFields =
      java.util.Map.of();
  // the free-space policy field graph files are written under (null: no reserve)
  private volatile DiskSpace fieldGraphSpace;
  // the dense fields the segments written from now on keep (null: all the points have)
  private volatile java.util.Set<String> keepDense;

  // the PQ code size of segments written from now on when the index sets none (null: the default)
  private volatile IntSupplier codeBytes;

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
    DiskAnnSegment s =
        DiskAnnSegment.open(
            io,
            dir,
            segmentId,
            defaultSearchList,
            params.type().equals(IndexParams.HNSW),
            settings,
            payloadsOnHeap,
            denseOnDisk);
    DiskSpace space = fieldGraphSpace;
    s.startFieldGraphs(
        indexedFields,
        io,
        bytes -> {
          try {
            return space == null || space.hasRoom(dir, bytes);
          } catch (IOException | RuntimeException e) {
            return false; // the free space is unknown: the graph stays in memory
          }
        });
    return s;
  }

  /**
   * The dense fields (other than the primary one, by name) whose graphs the segments {@link #open}
   * opens build ({@link io.flashvec.index.FieldIndex}); fields without a graph are left out.
   */
  public void indexedFields(java.util.Map<String, io.flashvec.index.DenseVectorParams> fields) {
    java.util.Map<String, io.flashvec.index.DenseVectorParams> out = new java.util.HashMap<>();
    fields.forEach(
        (name, f) -> {
          if (f.index().graph() && !f.multivector()) {
            out.put(name, f);
          }
        });
    this.indexedFields = java.util.Map.copyOf(out);
  }

  /**
   * The free-space policy (ADR 0020) under which the segments {@link #open} opens write their field
   * graphs' files: a graph whose file would not leave the reserve free stays in memory only.
   */
  public void fieldGraphSpace(DiskSpace space) {
    this.fieldGraphSpace = space;
  }

  /**
   * The dense fields (other than the primary one) whose vectors the segments {@link #open} opens
   * keep in their mapped vectors file rather than on the heap.
   */
  public void denseOnDisk(java.util.Set<String> names) {
    this.denseOnDisk = java.util.Set.copyOf(names);
  }

  /**
   * The dense fields (other than the primary one) the segments written from now on keep, the
   * collection's fields after one was added or deleted; the values of others, deleted fields, are
   * dropped by every seal, merge and compaction. {@code null}: all the points have.
   */
  public void keepDense(java.util.Set<String> keys) {
    this.keepDense = keys == null ? null : java.util.Set.copyOf(keys);
  }

  /** Runs a write with {@link #keepDense} bound for {@link DiskAnnWriter}. */
  private <T> T keeping(ScopedValue.CallableOp<T, IOException> write) throws IOException {
    java.util.Set<String> keep = keepDense;
    if (keep == null) {
      return write.call();
    }
    return ScopedValue.where(DiskAnnWriter.KEEP_DENSE, keep::contains).call(write);
  }

  /**
   * Whether the segments {@link #open} opens from now on copy their payloads onto the heap ({@code
   * true}) or read them from the mapped metadata file on demand (the default); segments open
   * already keep theirs.
   */
  public void payloadsOnHeap(boolean onHeap) {
    this.payloadsOnHeap = onHeap;
  }

  /**
   * Sizes the PQ codes of the segments {@link #writeFromGraph} and {@link #writeRaw} write from now
   * on when the index sets no {@code pq_subspaces}: {@code bytes} is asked at each write ({@code
   * null}: the default for the dimension). Builds take the size from their {@link
   * io.flashvec.index.segment.BuildSpec}.
   */
  public void codeBytes(IntSupplier bytes) {
    this.codeBytes = bytes;
  }

  /**
   * The primary vector's graph settings for the segments written from now on (a collection update
   * changed {@code m} or {@code ef_construct}): only {@code maxDegree} and {@code buildSearchList}
   * are taken from {@code next}.
   */
  public void graphParams(IndexParams next) {
    IndexParams p = params;
    this.params =
        new IndexParams(
            p.type(), next.maxDegree(), next.buildSearchList(), p.alpha(), p.pqSubspaces());
  }

  private IndexParams writeParams() {
    IntSupplier bytes = codeBytes;
    if (bytes == null || params.pqSubspaces() > 0) {
      return params;
    }
    int b = bytes.getAsInt();
    return b <= 0
        ? params
        : new IndexParams(
            params.type(), params.maxDegree(), params.buildSearchList(), params.alpha(), b);
  }

  @Override
  public boolean canRecode(SealedSegment segment) {
    return segment instanceof DiskAnnSegment d && d.recodable();
  }

  @Override
  public void recode(
      FileIO io,
      Path dir,
      int segmentId,
      SealedSegment source,
      int pqSubspaces,
      PqCodebook codebook,
      int trainingSample,
      BooleanSupplier cancelled)
      throws IOException {
    if (!canRecode(source)) {
      throw new IllegalArgumentException(
          "segment cannot be recoded around its graph [segment=" + source.id() + "]");
    }
    IndexParams p =
        new IndexParams(
            params.type(),
            params.maxDegree(),
            params.buildSearchList(),
            params.alpha(),
            pqSubspaces);
    keeping(
        () ->
            DiskAnnWriter.recode(
                io,
                dir,
                segmentId,
                (DiskAnnSegment) source,
                distance,
                p,
                codebook,
                trainingSample,
                settings.buildPool(),
                cancelled));
  }

  /** Builds in this process, on the build pool of the settings unless the build has its own. */
  @Override
  public SegmentBuilder builder() {
    SegmentBuilder b = DiskAnnWriter.builder(settings);
    return spec -> keeping(() -> b.build(spec));
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
    keeping(
        () ->
            DiskAnnWriter.writeFromGraph(
                io,
                dir,
                segmentId,
                frozen,
                distance,
                writeParams(),
                newest == null ? null : newest.codebook(),
                settings.buildPool(),
                cancelled));
  }

  @Override
  public void writeRaw(
      FileIO io,
      Path dir,
      int segmentId,
      GrowingSegment frozen,
      int[] ords,
      SealedSegment newest,
      BooleanSupplier cancelled)
      throws IOException {
    keeping(
        () ->
            DiskAnnWriter.writeRaw(
                io,
                dir,
                segmentId,
                frozen,
                ords,
                distance,
                writeParams(),
                newest == null ? null : newest.codebook(),
                settings.buildPool(),
                cancelled));
  }

  /**
   * The graph file with the vectors inline, PQ codes and codebook (with its rotation), metadata
   * with ids and payloads, and the deletion bitmap.
   */
  @Override
  public long estimateBytes(int points, int dim, long payloadBytes) {
    if (dim == 0) {
      // no graph and no PQ codes: the metadata and the deletion bits (the vectors file is counted
      // by the caller)
      return (long) points * (17 + 4) + payloadBytes + 4096 + points / 8 + 4096;
    }
    int subspaces =
        Math.min(
            dim, params.pqSubspaces() > 0 ? params.pqSubspaces() : PqTrainer.defaultSubspaces(dim));
    long graph = GraphFile.fileBytes(points, dim, params.maxDegree());
    long pq = (long) points * subspaces + 256L * dim * 4 + (long) dim * dim * 4 + 4096;
    long meta = (long) points * (17 + 4 + 8) + payloadBytes + 4096;
    long deleted = points / 8 + 4096;
    long order = 4L * points + 4096;
    return graph + pq + meta + deleted + order;
  }

  /** The graph file's edges (a raw file holds the vectors alone) and the order file. */
  @Override
  public long graphBytes(int points, int dim) {
    if (dim == 0) {
      return 0; // nothing to build
    }
    long edges =
        GraphFile.fileBytes(points, dim, params.maxDegree()) - GraphFile.fileBytes(points, dim, 0);
    return edges + 4L * points + 4096;
  }

  /** Writes {@link #BUILD_FILE} in {@code dir}, atomically. */
  static void writeBuild(FileIO io, Path dir, int segmentId, int maxDegree, int buildSearchList)
      throws IOException {
    ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(maxDegree).putInt(buildSearchList);
    ChecksummedFile.write(
        io, dir.resolve(BUILD_FILE), BUILD_FORMAT, BUILD_VERSION, segmentId, b.array());
  }

  /**
   * The max degree and construction search list {@link #BUILD_FILE} in {@code dir} records, or
   * {@code null} when the segment has none.
   *
   * @throws CorruptFileException if it fails its checksum
   */
  static int[] readBuild(FileIO io, Path dir) throws IOException {
    ChecksummedFile.Contents c;
    try {
      c = ChecksummedFile.read(io, dir.resolve(BUILD_FILE), BUILD_FORMAT, BUILD_VERSION, 1);
    } catch (NoSuchFileException e) {
      return null;
    }
    ByteBuffer b = c.body().order(ByteOrder.LITTLE_ENDIAN);
    if (b.remaining() < 8) {
      throw new CorruptFileException("graph build file is truncated", dir.resolve(BUILD_FILE));
    }
    return new int[] {b.getInt(), b.getInt()};
  }

  /**
   * Writes a segment's order file (atomically, fsynced), streamed: a merged segment's order is tens
   * of megabytes, written under the memory budget.
   */
  static void writeOrder(FileIO io, Path path, int segmentId, int[] order) throws IOException {
    try (ChecksummedFile.Writer w =
        ChecksummedFile.Writer.create(io, path, ORDER_FORMAT, ORDER_VERSION, segmentId)) {
      w.putInt(order.length);
      w.putInts(order, 0, order.length);
      w.commit();
    }
  }

  /**
   * Reads the order file of a segment of {@code count} points in {@code dir}; {@code null} when it
   * has none (ordinal {@code i} holds input {@code i}).
   *
   * @throws CorruptFileException if it fails its checksum or is not a permutation of {@code count}
   */
  static int[] readOrder(FileIO io, Path dir, int segmentId, int count) throws IOException {
    Path path = dir.resolve(ORDER_FILE);
    ChecksummedFile.Reader r;
    try {
      r = ChecksummedFile.Reader.open(io, path, ORDER_FORMAT, ORDER_VERSION, ORDER_VERSION);
    } catch (NoSuchFileException e) {
      return null;
    }
    // streamed: the file's bytes are not held beside the order
    try (r) {
      if (r.segmentId() != segmentId || r.remaining() < 4 || r.getInt() != count) {
        throw new CorruptFileException(
            "order file does not match its segment [segment="
                + segmentId
                + ", count="
                + count
                + "]",
            path);
      }
      if (r.remaining() != 4L * count) {
        throw new CorruptFileException(
            "order file length mismatch [bytes=" + r.remaining() + ", count=" + count + "]", path);
      }
      int[] order = new int[count];
      r.getInts(order, 0, count);
      r.finish();
      try {
        PageOrder.checkPermutation(order, count);
      } catch (IllegalArgumentException e) {
        throw new CorruptFileException(e.getMessage(), path);
      }
      return order;
    }
  }
}
