package io.flashvec.index.segment;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The in-memory segment that takes a shard's writes; searched exactly (flat scan).
 *
 * <p>Storage is chunked so that appends never move existing data: chunk {@code c} holds ordinals
 * {@code [c*1024, (c+1)*1024)}, its vectors in one flat {@code float[1024 * dim]} array.
 *
 * <p>Threads: one writer (the shard holds its write lock around {@link #append}, {@link
 * #markDeleted} and {@link #freeze}); any number of lock-free readers. The writer fills a slot and
 * then publishes it by a volatile write of {@code size}; readers read {@code size} first, so every
 * ordinal below it is complete. Deletion bits are atomic. Once frozen the segment takes no more
 * appends and reports {@link State#SEALED}.
 */
public final class GrowingSegment implements Segment {

  static final int CHUNK_SHIFT = 10;
  static final int CHUNK = 1 << CHUNK_SHIFT;
  static final int MASK = CHUNK - 1;

  private static final class Chunk {
    final float[] vectors;
    final PointId[] ids = new PointId[CHUNK];
    final byte[][] payloads = new byte[CHUNK][];
    final AtomicLongArray deleted = new AtomicLongArray(CHUNK / 64);

    Chunk(int dim) {
      vectors = new float[CHUNK * dim];
    }
  }

  private final int id;
  private final int dim;
  private volatile Chunk[] chunks = new Chunk[4];
  private volatile int size;
  private final AtomicInteger live = new AtomicInteger();
  private volatile boolean frozen;
  private volatile boolean indexing;
  private long payloadBytes; // written by the writer only; read racy for stats

  public GrowingSegment(int id, int dim) {
    this.id = id;
    this.dim = dim;
  }

  /** Appends a point and returns its ordinal. Writer thread only. */
  public int append(PointId pointId, float[] vector, byte[] payload) {
    if (frozen) {
      throw new IllegalStateException("segment is sealed [segment=" + id + "]");
    }
    if (vector.length != dim) {
      throw new IllegalArgumentException(
          "vector dimension mismatch [expected=" + dim + ", got=" + vector.length + "]");
    }
    int ord = size;
    int ci = ord >>> CHUNK_SHIFT;
    Chunk[] cs = chunks;
    if (ci >= cs.length) {
      cs = Arrays.copyOf(cs, cs.length * 2);
      chunks = cs;
    }
    Chunk c = cs[ci];
    if (c == null) {
      c = new Chunk(dim);
      cs[ci] = c;
    }
    int slot = ord & MASK;
    System.arraycopy(vector, 0, c.vectors, slot * dim, dim);
    c.ids[slot] = pointId;
    c.payloads[slot] = payload;
    if (payload != null) {
      payloadBytes += payload.length;
    }
    live.incrementAndGet();
    size = ord + 1;
    return ord;
  }

  /** Stops appends; the segment keeps serving reads and deletes. Writer thread only. */
  public void freeze() {
    frozen = true;
  }

  public boolean frozen() {
    return frozen;
  }

  /** Reports {@link State#INDEXING} while a background build turns this segment into an index. */
  public void markIndexing(boolean on) {
    indexing = on;
  }

  public int dimension() {
    return dim;
  }

  @Override
  public int id() {
    return id;
  }

  @Override
  public State state() {
    return !frozen ? State.GROWING : indexing ? State.INDEXING : State.SEALED;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public int liveCount() {
    return live.get();
  }

  private Chunk chunk(int ord) {
    if (ord < 0 || ord >= size) {
      throw new IndexOutOfBoundsException(
          "ordinal out of range [ord=" + ord + ", size=" + size + "]");
    }
    return chunks[ord >>> CHUNK_SHIFT];
  }

  @Override
  public PointId idAt(int ord) {
    return chunk(ord).ids[ord & MASK];
  }

  @Override
  public float[] vectorAt(int ord) {
    int off = (ord & MASK) * dim;
    return Arrays.copyOfRange(chunk(ord).vectors, off, off + dim);
  }

  @Override
  public byte[] payloadAt(int ord) {
    return chunk(ord).payloads[ord & MASK];
  }

  @Override
  public boolean isDeleted(int ord) {
    int slot = ord & MASK;
    return (chunk(ord).deleted.get(slot >>> 6) & (1L << slot)) != 0;
  }

  @Override
  public boolean markDeleted(int ord) {
    int slot = ord & MASK;
    AtomicLongArray bits = chunk(ord).deleted;
    long mask = 1L << slot;
    long prev = bits.getAndUpdate(slot >>> 6, w -> w | mask);
    if ((prev & mask) == 0) {
      live.decrementAndGet();
      return true;
    }
    return false;
  }

  @Override
  public void search(
      float[] query,
      Distance distance,
      SearchParams params,
      AcceptedOrdinals accept,
      TopK out,
      int slot,
      SearchStats stats) {
    int n = accept == null ? size : Math.min(size, accept.size());
    stats.segments++;
    Chunk[] cs = chunks;
    long scored = 0;
    for (int base = 0; base < n; base += CHUNK) {
      Chunk c = cs[base >>> CHUNK_SHIFT];
      int end = Math.min(CHUNK, n - base);
      float[] vectors = c.vectors;
      for (int i = 0; i < end; i++) {
        if ((c.deleted.get(i >>> 6) & (1L << i)) != 0
            || (accept != null && !accept.get(base + i))) {
          continue;
        }
        out.offer(distance.score(query, vectors, i * dim), slot, base + i);
        scored++;
      }
    }
    stats.distanceComputations += scored;
  }

  @Override
  public long memoryBytes() {
    int allocated = (size + CHUNK - 1) >>> CHUNK_SHIFT;
    return (long) allocated * (CHUNK * (4L * dim + 8 + 8 + 16)) + payloadBytes;
  }

  @Override
  public long diskBytes() {
    return 0;
  }
}
