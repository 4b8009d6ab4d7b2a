package io.flashvec.index;

import io.flashvec.index.internal.WalCodec;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard of a collection: a WAL, a growing segment that takes writes, and an immutable list of
 * sealed segments that is swapped atomically.
 *
 * <h2>Writes</h2>
 *
 * Writers serialise on one lock, held only to append the WAL record (to the OS, not fsynced) and
 * apply it in memory; {@link #awaitDurable} then waits for the fsync outside the lock, so
 * concurrent writers share fsyncs (group commit). An upsert of an existing id appends the new
 * version first, repoints the id, then marks the old ordinal deleted, so a reader sees the old or
 * the new version, never neither.
 *
 * <h2>Reads</h2>
 *
 * Readers never lock: they take the current {@link Snapshot} (a volatile read) and search its
 * segments; segments publish appends with a volatile size and deletions with atomic bits.
 *
 * <h2>Sealing</h2>
 *
 * When the growing segment reaches {@link Options#sealThresholdPoints()} (or on {@link #flush}), it
 * is frozen and moved to the sealed list and a new growing segment starts. Sealed segments are
 * still memory-resident here; the on-disk index build and the WAL checkpoint that lets the WAL be
 * truncated plug in at {@link #sealGrowing()}. Until then the WAL keeps every record and recovery
 * replays it whole.
 */
public final class Shard implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(Shard.class);

  /** Tuning of a shard. */
  public record Options(int sealThresholdPoints, Wal.Options wal, FileIO io) {
    public Options {
      if (sealThresholdPoints < 1) {
        throw new IllegalArgumentException(
            "seal threshold must be positive [sealThresholdPoints=" + sealThresholdPoints + "]");
      }
      Objects.requireNonNull(wal, "wal");
      Objects.requireNonNull(io, "io");
    }

    public static Options defaults() {
      return new Options(100_000, Wal.Options.defaults(), FileIO.DEFAULT);
    }
  }

  /** An immutable view of the shard's segments; the growing segment is last. */
  public record Snapshot(List<Segment> segments) {
    Segment byId(int id) {
      for (Segment s : segments) {
        if (s.id() == id) {
          return s;
        }
      }
      return null;
    }
  }

  private final Path dir;
  private final int shardId;
  private final int dim;
  private final Distance distance;
  private final Options options;
  private final ReentrantLock writeLock = new ReentrantLock();

  /** id -> (segment id << 32 | ordinal) of the id's live version. */
  private final ConcurrentHashMap<PointId, Long> locations = new ConcurrentHashMap<>();

  private volatile Snapshot snapshot;
  private GrowingSegment growing; // guarded by writeLock
  private int nextSegmentId; // guarded by writeLock
  private final Wal wal;

  private Shard(Path dir, int shardId, int dim, Distance distance, Options options, Wal.Options wo)
      throws IOException {
    this.dir = dir;
    this.shardId = shardId;
    this.dim = dim;
    this.distance = distance;
    this.options = options;
    this.growing = new GrowingSegment(nextSegmentId++, dim);
    this.snapshot = new Snapshot(List.of(growing));
    this.wal = Wal.open(dir.resolve("wal"), options.io(), wo, 1, this::replay);
  }

  /**
   * Opens the shard stored in {@code dir}, creating it if absent, and replays its WAL.
   *
   * @throws UncheckedIOException if the WAL cannot be read or recovered
   */
  public static Shard open(Path dir, int shardId, int dim, Distance distance, Options options) {
    try {
      options.io().createDirectories(dir);
      Shard s = new Shard(dir, shardId, dim, distance, options, options.wal());
      Wal.RecoveryReport r = s.wal.recovery();
      LOG.info(
          "shard opened [dir={}, shard={}, points={}, segments={}, walRecords={}, walLastSeq={}, discardedBytes={}]",
          dir,
          shardId,
          s.count(),
          s.snapshot.segments().size(),
          r.recordsReplayed(),
          r.lastSeq(),
          r.bytesDiscarded());
      return s;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot open shard [dir=" + dir + ", shard=" + shardId + "]", e);
    }
  }

  private void replay(long seq, byte op, java.nio.ByteBuffer body) {
    switch (op) {
      case WalCodec.OP_UPSERT -> applyUpsert(WalCodec.decodeUpsert(body));
      case WalCodec.OP_DELETE -> applyDelete(WalCodec.decodeDelete(body));
      default ->
          throw new IllegalStateException(
              "unknown WAL operation [op=" + op + ", seq=" + seq + ", dir=" + dir + "]");
    }
  }

  /**
   * Stores points (vectors already validated and prepared for the metric); returns the WAL sequence
   * number to pass to {@link #awaitDurable}.
   */
  public long upsert(List<Point> points) {
    for (Point p : points) {
      if (p.vector().length != dim) {
        throw new InvalidInputException(
            "Wrong input: Vector dimension error: expected dim: "
                + dim
                + ", got "
                + p.vector().length);
      }
    }
    byte[] body = WalCodec.encodeUpsert(points);
    writeLock.lock();
    try {
      long seq = wal.append(WalCodec.OP_UPSERT, body);
      applyUpsert(points);
      return seq;
    } finally {
      writeLock.unlock();
    }
  }

  /** Deletes points by id (absent ids are ignored); returns the WAL sequence number. */
  public long delete(List<PointId> ids) {
    byte[] body = WalCodec.encodeDelete(ids);
    writeLock.lock();
    try {
      long seq = wal.append(WalCodec.OP_DELETE, body);
      applyDelete(ids);
      return seq;
    } finally {
      writeLock.unlock();
    }
  }

  /** Blocks until the record {@code seq} is durable under the WAL's fsync policy. */
  public void awaitDurable(long seq) {
    wal.sync(seq);
  }

  // Called with writeLock held, or during recovery before the shard is published.
  private void applyUpsert(List<Point> points) {
    for (Point p : points) {
      if (growing.size() >= options.sealThresholdPoints()) {
        sealGrowing();
      }
      int ord = growing.append(p.id(), p.vector(), p.payload());
      Long old = locations.put(p.id(), pack(growing.id(), ord));
      if (old != null) {
        deleteAt(old);
      }
    }
  }

  private void applyDelete(List<PointId> ids) {
    for (PointId id : ids) {
      Long old = locations.remove(id);
      if (old != null) {
        deleteAt(old);
      }
    }
  }

  private void deleteAt(long loc) {
    Segment s = snapshot.byId((int) (loc >>> 32));
    if (s != null) {
      s.markDeleted((int) loc);
    }
  }

  /** Seals the growing segment if it holds any point. */
  public void flush() {
    writeLock.lock();
    try {
      if (growing.size() > 0) {
        sealGrowing();
      }
    } finally {
      writeLock.unlock();
    }
  }

  private void sealGrowing() {
    GrowingSegment sealed = growing;
    sealed.freeze();
    GrowingSegment next = new GrowingSegment(nextSegmentId++, dim);
    List<Segment> segs = new ArrayList<>(snapshot.segments().size() + 1);
    for (Segment s : snapshot.segments()) {
      if (s.liveCount() > 0 || s == sealed) {
        segs.add(s);
      }
    }
    segs.add(next);
    growing = next;
    snapshot = new Snapshot(Collections.unmodifiableList(segs));
  }

  /** The live version of a point, or {@code null}. */
  public Record get(PointId id, boolean withPayload, boolean withVector) {
    Long loc = locations.get(id);
    if (loc == null) {
      return null;
    }
    Segment s = snapshot.byId((int) (loc >>> 32));
    int ord = (int) (long) loc;
    if (s == null || s.isDeleted(ord)) {
      return null;
    }
    return new Record(
        id, 0f, withVector ? s.vectorAt(ord) : null, withPayload ? s.payloadAt(ord) : null);
  }

  /** Exact number of live points. */
  public long count() {
    long n = 0;
    for (Segment s : snapshot.segments()) {
      n += s.liveCount();
    }
    return n;
  }

  /**
   * Adds to {@code out} the smallest live ids that are {@code >= from} (all if null), at most
   * {@code limit}.
   */
  public List<PointId> scrollIds(PointId from, int limit) {
    PriorityQueue<PointId> heap = new PriorityQueue<>(Collections.reverseOrder());
    for (PointId id : locations.keySet()) {
      if (from != null && id.compareTo(from) < 0) {
        continue;
      }
      if (heap.size() < limit) {
        heap.add(id);
      } else if (limit > 0 && id.compareTo(heap.peek()) < 0) {
        heap.poll();
        heap.add(id);
      }
    }
    List<PointId> out = new ArrayList<>(heap);
    Collections.sort(out);
    return out;
  }

  /**
   * The best {@code k} live points for a prepared query, best first, with payload and vector as
   * asked. Results below {@code threshold} (above, for distances) are dropped.
   */
  public List<Record> search(
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector) {
    if (query.length != dim) {
      throw new InvalidInputException(
          "Wrong input: Vector dimension error: expected dim: " + dim + ", got " + query.length);
    }
    List<Segment> segs = snapshot.segments();
    TopK top = new TopK(distance, k);
    for (int i = 0; i < segs.size(); i++) {
      segs.get(i).search(query, distance, params, top, i);
    }
    int n = top.size();
    float[] scores = new float[n];
    int[] slots = new int[n];
    int[] ords = new int[n];
    top.drainBestFirst(scores, slots, ords);
    List<Record> out = new ArrayList<>(n);
    Set<PointId> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      if (threshold != null && !distance.passes(scores[i], threshold)) {
        break;
      }
      Segment s = segs.get(slots[i]);
      PointId id = s.idAt(ords[i]);
      // An upsert racing with this search can expose two versions of one id for an instant.
      if (!seen.add(id)) {
        continue;
      }
      out.add(
          new Record(
              id,
              scores[i],
              withVector ? s.vectorAt(ords[i]) : null,
              withPayload ? s.payloadAt(ords[i]) : null));
    }
    return out;
  }

  private static long pack(int segmentId, int ord) {
    return ((long) segmentId << 32) | (ord & 0xFFFFFFFFL);
  }

  public Snapshot snapshot() {
    return snapshot;
  }

  public int shardId() {
    return shardId;
  }

  public Wal wal() {
    return wal;
  }

  /** Bytes on disk: the WAL plus sealed segment files. */
  public long diskBytes() {
    long n = wal.sizeBytes();
    for (Segment s : snapshot.segments()) {
      n += s.diskBytes();
    }
    return n;
  }

  public long memoryBytes() {
    long n = 0;
    for (Segment s : snapshot.segments()) {
      n += s.memoryBytes();
    }
    return n;
  }

  public Path directory() {
    return dir;
  }

  @Override
  public void close() throws IOException {
    wal.close();
  }
}
