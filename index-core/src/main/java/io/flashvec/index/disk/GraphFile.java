package io.flashvec.index.disk;

import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.FormatVersionException;
import io.flashvec.storage.MappedFile;
import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * FlashVec's on-disk graph ({@code graph.fvg}): the layer-0 adjacency of a Vamana graph with each
 * node's full vector inline, laid out so that one hop reads one 4 KiB page.
 *
 * <h2>Format (versions 1 and 2, little-endian)</h2>
 *
 * <pre>
 * page 0, header: long magic "FVGRAPH1" | int version | int count | int dim | int maxDegree
 *                 | int recordBytes | int recordsPerPage | int pagesPerRecord | int entry
 *                 | int flags (version 2 only; version 1 has zeros here) | zeros
 * page 1..      : node records; record = float[dim] vector | int degree | int[maxDegree] neighbours
 *                 (unused slots -1). Records never straddle a page: small records are packed
 *                 {@code recordsPerPage} to a page, a record larger than a page starts on a page
 *                 boundary and takes {@code pagesPerRecord} pages.
 * </pre>
 *
 * Graphs are written as version 1. Version 2 adds the {@code flags} word; its only flag, {@link
 * #FLAG_NO_EDGES}, marks a <em>raw</em> file ({@link #writeRaw}): the vectors of a segment sealed
 * before any graph was built over them, {@code maxDegree} 0 and every degree 0, in input order. A
 * raw file is scanned, never walked ({@link #hasEdges()}). Readers accept both versions; a version
 * 2 file with unknown flags is refused.
 *
 * <p>Which node an ordinal is, is the writer's choice: segments are written in {@link PageOrder},
 * so that the records sharing a page are nodes a search tends to expand together.
 *
 * <p>The header and record layout are what the beam search needs: node {@code i}'s record is at
 * {@link #recordOffset(int)}, computable without reading anything. The file's length and CRC32C are
 * recorded in the segment's metadata and verified at open, so this file carries no checksum.
 */
public final class GraphFile implements Closeable {

  static final long MAGIC = 0x314850415247_5646L; // "FVGRAPH1" read little-endian
  static final int VERSION = 1;

  /** The version of files with a {@code flags} word: raw files ({@link #writeRaw}). */
  static final int VERSION_FLAGS = 2;

  /** Version 2 flag: the file holds vectors only, no graph ({@code maxDegree} 0). */
  static final int FLAG_NO_EDGES = 1;

  static final int PAGE = MappedFile.PAGE;

  private static final ValueLayout.OfInt INT =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private final MappedFile file;
  private final MemorySegment seg;
  private final int count;
  private final int dim;
  private final int maxDegree;
  private final int recordBytes;
  private final int recordsPerPage;
  private final int pagesPerRecord;
  private final int entry;
  private final int flags;

  private GraphFile(MappedFile file) {
    this.file = file;
    this.seg = file.segment();
    if (seg.byteSize() < PAGE) {
      throw new CorruptFileException("graph file is shorter than its header", file.path());
    }
    ByteBuffer h = seg.asSlice(0, 64).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    if (h.getLong() != MAGIC) {
      throw new CorruptFileException("not a FlashVec graph file (bad magic)", file.path());
    }
    int version = h.getInt();
    if (version != VERSION && version != VERSION_FLAGS) {
      throw new FormatVersionException(file.path(), "graph", version, VERSION, VERSION_FLAGS);
    }
    this.count = h.getInt();
    this.dim = h.getInt();
    this.maxDegree = h.getInt();
    this.recordBytes = h.getInt();
    this.recordsPerPage = h.getInt();
    this.pagesPerRecord = h.getInt();
    this.entry = h.getInt();
    this.flags = version == VERSION_FLAGS ? h.getInt() : 0;
    if ((flags & ~FLAG_NO_EDGES) != 0) {
      throw new CorruptFileException(
          "graph header has unknown flags [flags=0x" + Integer.toHexString(flags) + "]",
          file.path());
    }
    boolean edges = (flags & FLAG_NO_EDGES) == 0;
    if (count < 0
        || dim <= 0
        || (edges ? maxDegree <= 0 : maxDegree != 0)
        || recordBytes != recordBytes(dim, maxDegree)
        || (count > 0 && (entry < 0 || entry >= count))
        || seg.byteSize() < fileBytes(count, dim, maxDegree)) {
      throw new CorruptFileException(
          "graph header is inconsistent [count="
              + count
              + ", dim="
              + dim
              + ", maxDegree="
              + maxDegree
              + ", flags="
              + flags
              + ", entry="
              + entry
              + ", bytes="
              + seg.byteSize()
              + "]",
          file.path());
    }
  }

  /** Maps a graph file (see {@link MappedFile}); with {@code inMemory} reads it onto the heap. */
  public static GraphFile open(FileIO io, Path path, boolean inMemory) throws IOException {
    MappedFile f =
        inMemory ? MappedFile.onHeap(path, io.readAllBytes(path)) : MappedFile.open(io, path);
    try {
      return new GraphFile(f);
    } catch (RuntimeException e) {
      f.close();
      throw e;
    }
  }

  static int recordBytes(int dim, int maxDegree) {
    return 4 * dim + 4 + 4 * maxDegree;
  }

  /**
   * Records of {@code dim} dimensions and degree {@code maxDegree} packed to one page; 1 when a
   * record takes one page or more.
   */
  public static int recordsPerPage(int dim, int maxDegree) {
    int rb = recordBytes(dim, maxDegree);
    return rb <= PAGE ? PAGE / rb : 1;
  }

  /** The size of a graph file of {@code count} nodes. */
  public static long fileBytes(int count, int dim, int maxDegree) {
    int rb = recordBytes(dim, maxDegree);
    if (rb <= PAGE) {
      int rpp = PAGE / rb;
      return PAGE + (long) ((count + rpp - 1) / rpp) * PAGE;
    }
    return PAGE + (long) count * ((rb + PAGE - 1) / PAGE) * PAGE;
  }

  private static long offset(int ord, int rb, int rpp, int ppr) {
    return rpp > 0
        ? PAGE + (long) (ord / rpp) * PAGE + (long) (ord % rpp) * rb
        : PAGE + (long) ord * ppr * PAGE;
  }

  /** Byte offset of node {@code ord}'s record. */
  public long recordOffset(int ord) {
    return offset(ord, recordBytes, recordsPerPage, pagesPerRecord);
  }

  public int count() {
    return count;
  }

  public int dimension() {
    return dim;
  }

  public int maxDegree() {
    return maxDegree;
  }

  public int recordBytes() {
    return recordBytes;
  }

  public int entry() {
    return entry;
  }

  /**
   * Whether the file holds a graph to walk; false for a raw file ({@link #writeRaw}), whose nodes
   * have no neighbours and are scanned.
   */
  public boolean hasEdges() {
    return (flags & FLAG_NO_EDGES) == 0;
  }

  public MappedFile file() {
    return file;
  }

  MemorySegment segment() {
    return seg;
  }

  /** Node {@code ord}'s degree; its neighbours follow at {@code recordOffset + 4*dim + 4}. */
  int degree(long recordOffset) {
    return seg.get(INT, recordOffset + 4L * dim);
  }

  int neighbour(long recordOffset, int i) {
    return seg.get(INT, recordOffset + 4L * dim + 4 + 4L * i);
  }

  /** Copies node {@code ord}'s vector. */
  public float[] vector(int ord) {
    float[] out = new float[dim];
    MemorySegment.copy(
        seg,
        ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN),
        recordOffset(ord),
        out,
        0,
        dim);
    return out;
  }

  @Override
  public void close() {
    file.close();
  }

  /** Supplies what the writer needs for one node. */
  public interface NodeSource {
    float[] vector(int ord);

    /** Writes node {@code ord}'s neighbours into {@code out}; returns how many. */
    int neighbours(int ord, int[] out);
  }

  /**
   * This file's nodes, read from the mapping: a source to write the graph again in another order
   * ({@link #write(FileIO, Path, int, int, int, int, NodeSource, int[])}).
   */
  public NodeSource nodes() {
    return new NodeSource() {
      @Override
      public float[] vector(int ord) {
        return GraphFile.this.vector(ord);
      }

      @Override
      public int neighbours(int ord, int[] out) {
        long off = recordOffset(ord);
        int d = Math.min(Math.min(degree(off), maxDegree), out.length);
        for (int i = 0; i < d; i++) {
          out[i] = neighbour(off, i);
        }
        return d;
      }
    };
  }

  /**
   * {@link #nodes()} for a writer that reads every record once in {@code order} ({@link #write}
   * with that order): each read first asks the kernel for the records of the next {@code ahead}
   * positions ({@code madvise(WILLNEED)} on the mapping), so that a rewrite whose reads land at
   * random in a file larger than the page cache keeps that many reads in flight instead of faulting
   * one page at a time. Advice only: a file read without a mapping reads as {@link #nodes()} does.
   */
  public NodeSource nodesReadInOrder(int[] order, int ahead) {
    NodeSource nodes = nodes();
    return new NodeSource() {
      private int next; // records read so far
      private int advised; // positions whose records were asked for

      @Override
      public float[] vector(int ord) {
        int until = Math.min(order.length, next + 1 + ahead);
        for (; advised < until; advised++) {
          file.prefetch(recordOffset(order[advised]), recordBytes);
        }
        next++;
        return nodes.vector(ord);
      }

      @Override
      public int neighbours(int ord, int[] out) {
        return nodes.neighbours(ord, out);
      }
    };
  }

  /**
   * Writes a graph file (not fsynced: the caller syncs it with the rest of the segment). Neighbour
   * lists longer than {@code maxDegree} are cut.
   */
  public static void write(
      FileIO io, Path path, int count, int dim, int maxDegree, int entry, NodeSource nodes)
      throws IOException {
    write(io, path, count, dim, maxDegree, entry, nodes, null);
  }

  /**
   * Writes a graph file with its nodes in {@code order} (see {@link PageOrder}): the record of
   * ordinal {@code i} is node {@code order[i]} of {@code nodes}, its neighbours and the entry
   * renumbered alike; {@code null}: in the nodes' own order. {@code nodes} is asked for the nodes
   * in the order they are written.
   */
  public static void write(
      FileIO io,
      Path path,
      int count,
      int dim,
      int maxDegree,
      int entry,
      NodeSource nodes,
      int[] order)
      throws IOException {
    if (maxDegree <= 0) {
      throw new IllegalArgumentException(
          "a graph needs a positive max degree [maxDegree=" + maxDegree + "]");
    }
    write(io, path, count, dim, maxDegree, entry, nodes, order, VERSION, 0);
  }

  /**
   * Writes a raw file (version 2, {@link #FLAG_NO_EDGES}): the {@code count} vectors in ordinal
   * order, each as a record with degree 0 and no neighbour slots, entry 0. Not fsynced, as {@link
   * #write}.
   */
  public static void writeRaw(
      FileIO io, Path path, int count, int dim, java.util.function.IntFunction<float[]> vectors)
      throws IOException {
    NodeSource nodes =
        new NodeSource() {
          @Override
          public float[] vector(int ord) {
            return vectors.apply(ord);
          }

          @Override
          public int neighbours(int ord, int[] out) {
            return 0;
          }
        };
    write(io, path, count, dim, 0, 0, nodes, null, VERSION_FLAGS, FLAG_NO_EDGES);
  }

  private static void write(
      FileIO io,
      Path path,
      int count,
      int dim,
      int maxDegree,
      int entry,
      NodeSource nodes,
      int[] order,
      int version,
      int flags)
      throws IOException {
    int[] renumber = null;
    if (order != null) {
      PageOrder.checkPermutation(order, count);
      renumber = PageOrder.inverse(order);
      entry = count == 0 ? 0 : renumber[entry];
    }
    int rb = recordBytes(dim, maxDegree);
    int rpp = rb <= PAGE ? PAGE / rb : 0;
    int ppr = rb <= PAGE ? 1 : (rb + PAGE - 1) / PAGE;
    ByteBuffer header = ByteBuffer.allocate(PAGE).order(ByteOrder.LITTLE_ENDIAN);
    header.putLong(MAGIC).putInt(version).putInt(count).putInt(dim).putInt(maxDegree);
    header.putInt(rb).putInt(rpp).putInt(ppr).putInt(count == 0 ? 0 : entry);
    if (version == VERSION_FLAGS) {
      header.putInt(flags);
    }
    header.clear();
    int[] nbrs = new int[Math.max(maxDegree, 1024)];
    // Write one page (or one multi-page record) at a time.
    int unit = rpp > 0 ? PAGE : ppr * PAGE;
    ByteBuffer buf = ByteBuffer.allocateDirect(unit * 16).order(ByteOrder.LITTLE_ENDIAN);
    try (FileChannel ch =
        io.open(
            path,
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE,
            StandardOpenOption.READ)) {
      io.writeFully(ch, header);
      int perUnit = rpp > 0 ? rpp : 1;
      for (int first = 0; first < count; first += perUnit) {
        if (buf.remaining() < unit) {
          buf.flip();
          io.writeFully(ch, buf);
          buf.clear();
        }
        int start = buf.position();
        for (int at = first; at < Math.min(count, first + perUnit); at++) {
          int ord = order == null ? at : order[at];
          float[] v = nodes.vector(ord);
          if (v.length != dim) {
            throw new IllegalArgumentException(
                "vector dimension mismatch [ord=" + ord + ", dim=" + v.length + "]");
          }
          for (float x : v) {
            buf.putFloat(x);
          }
          int d = Math.min(maxDegree, nodes.neighbours(ord, nbrs));
          buf.putInt(d);
          for (int i = 0; i < maxDegree; i++) {
            int nb = i < d ? nbrs[i] : -1;
            buf.putInt(renumber == null || nb < 0 || nb >= count ? nb : renumber[nb]);
          }
        }
        while (buf.position() < start + unit) {
          buf.put((byte) 0);
        }
      }
      buf.flip();
      io.writeFully(ch, buf);
    }
  }
}
