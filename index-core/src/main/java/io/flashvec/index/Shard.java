package io.flashvec.index;

import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.internal.WalCodec;
import io.flashvec.index.jvector.DiskAnnSegment;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
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
  public record Options(
      int sealThresholdPoints,
      Wal.Options wal,
      FileIO io,
      Executor buildExecutor,
      int defaultSearchList) {
    public Options {
      if (sealThresholdPoints < 1) {
        throw new IllegalArgumentException(
            "seal threshold must be positive [sealThresholdPoints=" + sealThresholdPoints + "]");
      }
      Objects.requireNonNull(wal, "wal");
      Objects.requireNonNull(io, "io");
      if (defaultSearchList < 1) {
        defaultSearchList = 100;
      }
    }

    /** Options without background index builds: sealed segments stay in memory. */
    public Options(int sealThresholdPoints, Wal.Options wal, FileIO io) {
      this(sealThresholdPoints, wal, io, null, 100);
    }

    public static Options defaults() {
      return new Options(100_000, Wal.Options.defaults(), FileIO.DEFAULT);
    }

    /** The same options with index builds on {@code executor}. */
    public Options withBuildExecutor(Executor executor) {
      return new Options(sealThresholdPoints, wal, io, executor, defaultSearchList);
    }
  }

  /** A frozen segment waiting for its index build, and the WAL position it covers. */
  private record Pending(GrowingSegment segment, long sealSeq) {}

  /**
   * An immutable view of the shard's segments; the growing segment is last. {@code retired} holds
   * segments just replaced by their index, still readable through point locations that a reader
   * fetched before the replacement; they are not searched or counted.
   */
  public record Snapshot(List<Segment> segments, List<Segment> retired) {
    public Snapshot(List<Segment> segments) {
      this(segments, List.of());
    }

    Segment byId(int id) {
      for (Segment s : segments) {
        if (s.id() == id) {
          return s;
        }
      }
      for (Segment s : retired) {
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
  private long checkpointSeq; // guarded by writeLock
  private final ArrayDeque<Pending> pending = new ArrayDeque<>(); // guarded by writeLock
  private final IndexParams index;
  private final Path segmentsDir;
  private final Wal wal;
  private boolean recovering = true; // guarded by writeLock
  private volatile boolean closed;
  private volatile String buildFailure;

  private Shard(
      Path dir, int shardId, int dim, Distance distance, IndexParams index, Options options)
      throws IOException {
    this.dir = dir;
    this.shardId = shardId;
    this.dim = dim;
    this.distance = distance;
    this.index = index;
    this.options = options;
    this.segmentsDir = dir.resolve("segments");
    List<Segment> sealed = openSegments();
    this.growing = new GrowingSegment(nextSegmentId++, dim);
    List<Segment> segs = new ArrayList<>(sealed);
    segs.add(growing);
    this.snapshot = new Snapshot(Collections.unmodifiableList(segs));
    this.wal =
        Wal.open(dir.resolve("wal"), options.io(), options.wal(), checkpointSeq + 1, this::replay);
    writeLock.lock();
    try {
      recovering = false;
      for (Pending p : pending) {
        submitBuild(p);
      }
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Reads the manifest, opens its segments (verifying checksums), indexes their live ids and
   * removes segment directories the manifest does not list (builds a crash interrupted).
   */
  private List<Segment> openSegments() throws IOException {
    List<Segment> out = new ArrayList<>();
    ShardManifest m = ShardManifest.read(options.io(), dir);
    checkpointSeq = m.checkpointSeq();
    nextSegmentId = m.nextSegmentId();
    Set<String> keep = new HashSet<>();
    try {
      for (int id : m.segmentIds()) {
        Path p = segmentsDir.resolve(segmentDirName(id));
        keep.add(p.getFileName().toString());
        DiskAnnSegment s =
            DiskAnnSegment.open(options.io(), p, id, options.defaultSearchList(), inMemoryGraph());
        out.add(s);
        for (int ord = 0; ord < s.size(); ord++) {
          if (!s.isDeleted(ord)) {
            locations.put(s.idAt(ord), pack(id, ord));
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      for (Segment s : out) {
        ((DiskAnnSegment) s).close();
      }
      throw e;
    }
    for (Path p : options.io().list(segmentsDir, "seg-*")) {
      if (!keep.contains(p.getFileName().toString())) {
        LOG.warn("removing segment files not in the manifest (interrupted build) [dir={}]", p);
        options.io().deleteTree(p);
      }
    }
    return out;
  }

  /** {@code hnsw} keeps the whole graph and vectors on the heap, for comparison with diskann. */
  private boolean inMemoryGraph() {
    return index.type().equals(IndexParams.HNSW);
  }

  private static String segmentDirName(int id) {
    return String.format("seg-%010d", id);
  }

  /**
   * Opens the shard stored in {@code dir}, creating it if absent, and replays its WAL.
   *
   * @throws UncheckedIOException if the WAL cannot be read or recovered
   */
  public static Shard open(Path dir, int shardId, int dim, Distance distance, Options options) {
    return open(dir, shardId, dim, distance, IndexParams.DEFAULT, options);
  }

  /**
   * Opens the shard stored in {@code dir} with the given index settings; see {@link #open(Path,
   * int, int, Distance, Options)}. Sealed segments are built into DiskANN segments on the options'
   * build executor when the index type is {@code diskann} and an executor is given.
   */
  public static Shard open(
      Path dir, int shardId, int dim, Distance distance, IndexParams index, Options options) {
    try {
      options.io().createDirectories(dir);
      Shard s = new Shard(dir, shardId, dim, distance, index, options);
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
      case WalCodec.OP_UPSERT -> applyUpsert(WalCodec.decodeUpsert(body), seq);
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
      applyUpsert(points, seq);
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

  /**
   * Deletes the points that match {@code filter} now: under the write lock, so no write
   * interleaves, the matching ids are collected and logged as one ordinary delete record of those
   * concrete ids, which replays deterministically whatever the payloads become later. Returns the
   * WAL sequence number, or 0 when nothing matched (nothing is logged).
   */
  public long delete(FilterEvaluator filter) {
    writeLock.lock();
    try {
      List<PointId> ids = matchingIds(filter);
      return ids.isEmpty() ? 0 : delete(ids);
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * {@link #updatePayloads(List, UnaryOperator)} for the points that match {@code filter} now (ids
   * collected under the write lock).
   */
  public long updatePayloads(FilterEvaluator filter, UnaryOperator<byte[]> update) {
    writeLock.lock();
    try {
      return updatePayloads(matchingIds(filter), update);
    } finally {
      writeLock.unlock();
    }
  }

  /** Ids of the live points that match; deduplicated (an upsert can briefly show two versions). */
  private List<PointId> matchingIds(FilterEvaluator filter) {
    Set<PointId> out = new HashSet<>();
    for (Segment seg : snapshot.segments()) {
      int n = seg.size();
      for (int ord = 0; ord < n; ord++) {
        if (!seg.isDeleted(ord) && filter.matches(seg.idAt(ord), seg.payloadAt(ord))) {
          out.add(seg.idAt(ord));
        }
      }
    }
    return new ArrayList<>(out);
  }

  /**
   * Replaces the payloads of existing points with {@code update.apply(current payload)} and keeps
   * their vectors; absent ids are ignored. Written as one upsert record of the points' new
   * versions, under the write lock so no concurrent write to the same ids is lost. Returns the WAL
   * sequence number, or 0 when no id exists.
   */
  public long updatePayloads(List<PointId> ids, UnaryOperator<byte[]> update) {
    writeLock.lock();
    try {
      List<Point> points = new ArrayList<>(ids.size());
      for (PointId id : ids) {
        Record r = get(id, true, true);
        if (r != null) {
          points.add(new Point(id, r.vector(), update.apply(r.payload())));
        }
      }
      if (points.isEmpty()) {
        return 0;
      }
      long seq = wal.append(WalCodec.OP_UPSERT, WalCodec.encodeUpsert(points));
      applyUpsert(points, seq);
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
  private void applyUpsert(List<Point> points, long seq) {
    // Seal only at record boundaries, so the sealed segment covers exactly the records < seq.
    if (growing.size() >= options.sealThresholdPoints()) {
      sealGrowing(seq - 1);
    }
    for (Point p : points) {
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
        sealGrowing(wal.lastSeq());
      }
    } finally {
      writeLock.unlock();
    }
  }

  private void sealGrowing(long sealSeq) {
    GrowingSegment sealed = growing;
    sealed.freeze();
    Pending p = new Pending(sealed, sealSeq);
    pending.addLast(p);
    if (!recovering) {
      submitBuild(p);
    }
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

  private void submitBuild(Pending p) {
    Executor ex = options.buildExecutor();
    if (ex == null || index.type().equals(IndexParams.FLAT)) {
      return; // stays a memory-resident, exactly searched segment; the WAL keeps its records
    }
    p.segment().markIndexing(true);
    ex.execute(() -> build(p));
  }

  /** Runs on the build executor: builds the segment's index, then installs and checkpoints. */
  private void build(Pending p) {
    if (closed) {
      return;
    }
    GrowingSegment f = p.segment();
    int newId;
    writeLock.lock();
    try {
      newId = nextSegmentId++;
    } finally {
      writeLock.unlock();
    }
    Path target = segmentsDir.resolve(segmentDirName(newId));
    try {
      long t0 = System.nanoTime();
      int[] liveOrds = liveOrdinals(f);
      DiskAnnSegment built = null;
      if (liveOrds.length > 0) {
        options.io().createDirectories(segmentsDir);
        DiskAnnSegment.build(options.io(), target, newId, f, liveOrds, distance, index);
        built =
            DiskAnnSegment.open(
                options.io(), target, newId, options.defaultSearchList(), inMemoryGraph());
      }
      install(p, built, liveOrds);
      LOG.info(
          "segment indexed [dir={}, segment={}, from={}, points={}, millis={}, checkpointSeq={}]",
          dir,
          newId,
          f.id(),
          liveOrds.length,
          (System.nanoTime() - t0) / 1_000_000,
          p.sealSeq());
    } catch (Throwable t) {
      buildFailure = t.toString();
      f.markIndexing(false);
      LOG.error(
          "index build failed; the segment stays in memory and searched exactly [dir={}, segment={}]",
          dir,
          f.id(),
          t);
    }
  }

  private static int[] liveOrdinals(GrowingSegment f) {
    int n = f.size();
    int[] out = new int[n];
    int c = 0;
    for (int ord = 0; ord < n; ord++) {
      if (!f.isDeleted(ord)) {
        out[c++] = ord;
      }
    }
    return java.util.Arrays.copyOf(out, c);
  }

  /**
   * Replaces a frozen segment by its built index and checkpoints the WAL. Under the write lock:
   * deletions that happened during the build move to the new segment; the new snapshot searches the
   * index instead of the frozen segment (kept readable as retired); locations move; then the
   * retired segment is dropped. Finally deletion bitmaps and the manifest are written and the WAL
   * is truncated up to the seal.
   */
  private void install(Pending p, DiskAnnSegment built, int[] liveOrds) throws IOException {
    GrowingSegment f = p.segment();
    writeLock.lock();
    try {
      if (closed) {
        if (built != null) {
          built.close();
          options.io().deleteTree(built.directory());
        }
        return;
      }
      if (built != null) {
        for (int i = 0; i < liveOrds.length; i++) {
          if (f.isDeleted(liveOrds[i])) {
            built.markDeleted(i);
          }
        }
      }
      List<Segment> segs = new ArrayList<>(snapshot.segments().size());
      for (Segment s : snapshot.segments()) {
        if (s == f) {
          if (built != null) {
            segs.add(built);
          }
        } else {
          segs.add(s);
        }
      }
      snapshot = new Snapshot(Collections.unmodifiableList(segs), List.of(f));
      if (built != null) {
        long fromPrefix = pack(f.id(), 0) >>> 32;
        for (int i = 0; i < liveOrds.length; i++) {
          PointId pid = f.idAt(liveOrds[i]);
          Long loc = locations.get(pid);
          if (loc != null && (loc >>> 32) == fromPrefix && (int) (long) loc == liveOrds[i]) {
            locations.put(pid, pack(built.id(), i));
          }
        }
      }
      snapshot = new Snapshot(snapshot.segments());
      pending.remove(p);
      checkpoint(p.sealSeq());
    } finally {
      writeLock.unlock();
    }
  }

  /** Persists what the WAL up to {@code seq} described, then truncates the WAL. */
  private void checkpoint(long seq) throws IOException {
    // An older segment whose build failed still needs its records: keep the checkpoint below it.
    // Listing newer segments with a lower checkpoint is safe: replaying their records again
    // re-applies the same operations and the newest version of every id wins.
    long cp = !pending.isEmpty() && pending.peekFirst().sealSeq() < seq ? checkpointSeq : seq;
    // The deletion bitmaps written below include deletions (and the delete half of replacements)
    // by records after `seq`. Make those records durable first, or a crash could keep their
    // deletions and lose their WAL records: a replaced point would vanish, old and new version.
    wal.syncAll();
    List<Integer> ids = new ArrayList<>();
    for (Segment s : snapshot.segments()) {
      if (s instanceof DiskAnnSegment d) {
        d.writeDeleted(options.io());
        ids.add(d.id());
      }
    }
    checkpointSeq = Math.max(checkpointSeq, cp);
    ShardManifest.write(options.io(), dir, new ShardManifest(checkpointSeq, nextSegmentId, ids));
    wal.truncateBefore(checkpointSeq + 1);
  }

  /** The live version of a point, or {@code null}. */
  public Record get(PointId id, boolean withPayload, boolean withVector) {
    Long loc = locations.get(id);
    if (loc == null) {
      return null;
    }
    Segment s = snapshot.byId((int) (loc >>> 32));
    if (s == null) {
      // The location was read just before an index install swapped segments: read it again.
      loc = locations.get(id);
      if (loc == null) {
        return null;
      }
      s = snapshot.byId((int) (loc >>> 32));
    }
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

  /** Live points that match {@code filter} ({@code null}: all). */
  public long count(FilterEvaluator filter) {
    if (filter == null || filter.matchesAll()) {
      return count();
    }
    long n = 0;
    for (Segment seg : snapshot.segments()) {
      n += AcceptedOrdinals.evaluate(seg, filter::matches).count();
    }
    return n;
  }

  /**
   * {@link #scrollIds(PointId, int)} over the live points that match {@code filter} ({@code null}:
   * all). The filter is evaluated only for ids that would enter the page.
   */
  public List<PointId> scrollIds(PointId from, int limit, FilterEvaluator filter) {
    if (filter == null || filter.matchesAll()) {
      return scrollIds(from, limit);
    }
    TreeSet<PointId> page = new TreeSet<>();
    if (limit <= 0) {
      return List.of();
    }
    for (Segment seg : snapshot.segments()) {
      int n = seg.size();
      for (int ord = 0; ord < n; ord++) {
        if (seg.isDeleted(ord)) {
          continue;
        }
        PointId id = seg.idAt(ord);
        if ((from != null && id.compareTo(from) < 0)
            || (page.size() >= limit && id.compareTo(page.last()) >= 0)
            || !filter.matches(id, seg.payloadAt(ord))) {
          continue;
        }
        page.add(id);
        if (page.size() > limit) {
          page.pollLast();
        }
      }
    }
    return new ArrayList<>(page);
  }

  /**
   * Returns, in order, the smallest live ids that are {@code >= from} (all if null), at most {@code
   * limit}.
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
    return search(query, k, params, threshold, withPayload, withVector, new SearchStats());
  }

  /**
   * {@link #search(float[], int, SearchParams, Float, boolean, boolean)}, adding its costs to
   * {@code stats}.
   */
  public List<Record> search(
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector,
      SearchStats stats) {
    return search(query, k, params, threshold, withPayload, withVector, null, stats);
  }

  /**
   * {@link #search(float[], int, SearchParams, Float, boolean, boolean, SearchStats)} among the
   * points that match {@code filter} ({@code null}: all). Each segment's matching ordinals are
   * evaluated first (their count is the planner's cardinality); see {@link
   * io.flashvec.index.filter.FilterPlanner}.
   */
  public List<Record> search(
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector,
      FilterEvaluator filter,
      SearchStats stats) {
    if (query.length != dim) {
      throw new InvalidInputException(
          "Wrong input: Vector dimension error: expected dim: " + dim + ", got " + query.length);
    }
    List<Segment> segs = snapshot.segments();
    TopK top = new TopK(distance, k);
    boolean filtered = filter != null && !filter.matchesAll();
    for (int i = 0; i < segs.size(); i++) {
      Segment seg = segs.get(i);
      AcceptedOrdinals accept = filtered ? AcceptedOrdinals.evaluate(seg, filter::matches) : null;
      seg.search(query, distance, params, accept, top, i, stats);
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

  /** Whether segments wait for (or are in) an index build. */
  public boolean indexing() {
    writeLock.lock();
    try {
      return !pending.isEmpty()
          && options.buildExecutor() != null
          && !index.type().equals(IndexParams.FLAT);
    } finally {
      writeLock.unlock();
    }
  }

  /** The last index build failure, or {@code null}. */
  public String buildFailure() {
    return buildFailure;
  }

  @Override
  public void close() throws IOException {
    writeLock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
    } finally {
      writeLock.unlock();
    }
    try {
      wal.close();
    } finally {
      for (Segment s : snapshot.segments()) {
        if (s instanceof DiskAnnSegment d) {
          d.close();
        }
      }
    }
  }
}
