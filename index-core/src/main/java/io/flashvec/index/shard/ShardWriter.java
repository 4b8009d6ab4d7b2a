package io.flashvec.index.shard;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InsufficientStorageException;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SparseVector;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.disk.PqCodebook;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.memory.MemoryLimits;
import io.flashvec.index.memory.MemoryPlan;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.LiveGraph;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.DiskFullException;
import io.flashvec.storage.Wal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write path of a shard: every change is appended to the WAL, then applied to the growing
 * segment and the id locations; WAL replay at recovery applies the same records the same way.
 *
 * <p>Writers serialise on the shard's write lock, held only to append the WAL record (to the OS,
 * not fsynced) and apply it in memory; {@link #awaitDurable} then waits for the fsync outside the
 * lock, so concurrent writers share fsyncs (group commit). An upsert of an existing id appends the
 * new version first, repoints the id, then marks the old ordinal deleted, so a reader sees the old
 * or the new version, never neither.
 *
 * <p>When the growing segment reaches the seal threshold (checked at record boundaries, so a sealed
 * segment covers whole records) or on {@link #flush}, it is frozen and handed to the {@link
 * SealPipeline}, and a new growing segment takes the writes.
 */
final class ShardWriter {

  private static final Logger LOG = LoggerFactory.getLogger(ShardWriter.class);

  private final Path dir;
  // the multivector fields (name to the size of each vector), whose WAL records are tagged
  private volatile java.util.Map<String, Integer> multivectors;
  private final int dim;
  private final Distance distance;
  private final Shard.Options options;
  private final SpaceGuard space;
  private final BackgroundJobs jobs;
  // the live graph of the growing segments created from now on (null: none); a change of the
  // collection's graph settings replaces it, the current growing segment keeps its own
  private volatile LiveGraph.Params liveGraph;
  private final ReentrantLock writeLock;
  private final SegmentSet segments;
  private final IdLocations locations;
  private final SealPipeline pipeline;
  private final LiveIndexScheduler scheduler;
  private final ShardCompactor compactor;
  private final ShardReader reader;
  private GrowingSegment growing; // guarded by writeLock
  private boolean recovering = true; // guarded by writeLock
  private Wal wal;
  private int loggedSealThreshold; // guarded by writeLock

  /**
   * A writer whose growing segment starts after {@code sealed} (the segments recovery opened);
   * {@link #openWal} replays the log.
   */
  ShardWriter(
      ShardParts parts,
      SealPipeline pipeline,
      LiveIndexScheduler scheduler,
      ShardCompactor compactor,
      ShardReader reader,
      java.util.Map<String, Integer> multivectors) {
    this.multivectors = java.util.Map.copyOf(multivectors);
    Path dir = parts.dir();
    int dim = parts.dimension();
    Distance distance = parts.distance();
    IndexParams index = parts.index();
    Shard.Options options = parts.options();
    SpaceGuard space = parts.space();
    BackgroundJobs jobs = parts.jobs();
    ReentrantLock writeLock = parts.writeLock();
    SegmentSet segments = parts.segments();
    IdLocations locations = parts.locations();
    this.dir = dir;
    this.dim = dim;
    this.distance = distance;
    this.options = options;
    this.space = space;
    this.jobs = jobs;
    // a collection without a primary vector (dim 0) has no graph to build, live or sealed
    boolean live =
        dim > 0
            && options.liveIndexer() != null
            && options.buildExecutor() != null
            && !index.type().equals(IndexParams.FLAT);
    this.liveGraph =
        live
            ? new LiveGraph.Params(index.maxDegree(), index.buildSearchList(), index.alpha())
            : null;
    this.writeLock = writeLock;
    this.segments = segments;
    this.locations = locations;
    this.pipeline = pipeline;
    this.scheduler = scheduler;
    this.compactor = compactor;
    this.reader = reader;
    this.growing = newGrowing();
  }

  /**
   * The primary vector's graph settings of the growing segments created from now on: their live
   * graphs take {@code next}'s max degree and construction search list. The current growing segment
   * keeps its own; once sealed, its segment is rebuilt ({@link ShardCompactor}).
   */
  void graphParams(IndexParams next) {
    LiveGraph.Params p = liveGraph;
    if (p != null) {
      liveGraph = new LiveGraph.Params(next.maxDegree(), next.buildSearchList(), p.alpha());
    }
  }

  /** A new growing segment; with a live graph for the {@code diskann} and {@code hnsw} types. */
  private GrowingSegment newGrowing() {
    return new GrowingSegment(
        segments.allocateId(), dim, liveGraph, distance, options.defaultSearchList());
  }

  /**
   * The growing segment's seal threshold now: the configured one, or its share of the memory
   * budget's growing slice when that is smaller; logged when the budget changes it.
   */
  private int sealThreshold() {
    int configured = options.sealThresholdPoints();
    if (options.memory() == null) {
      return configured;
    }
    int t = options.sealThresholdPoints(dim, liveGraph == null ? 0 : liveGraph.maxDegree());
    if (t != loggedSealThreshold && (t < configured || loggedSealThreshold != 0)) {
      LOG.info(
          "seal threshold from the memory budget [dir={}, configured={}, effective={}, dim={},"
              + " activeShards={}, growingBytes={}, bytesPerPoint={}]",
          dir,
          configured,
          t,
          dim,
          Math.max(1, options.memory().activeGrowing()),
          options.memory().growingBytes(),
          MemoryPlan.growingBytesPerPoint(dim, liveGraph == null ? 0 : liveGraph.maxDegree()));
    }
    loggedSealThreshold = t;
    return t;
  }

  /**
   * Called when the shard closes (write lock held): its growing segment no longer takes a share of
   * the budget, and writers waiting for room give up.
   */
  void release() {
    if (options.memory() != null) {
      options.memory().growingIdle(this);
      options.memory().checkResident(this, 0, null);
      options.memory().points(this, 0);
      pipeline.wakeWriters();
    }
  }

  /**
   * Under a memory budget a shard's growing segment and its frozen segments waiting for their
   * builds stay within its share of the growing slice: a write that would seal past it waits (the
   * write lock released meanwhile) until a build is installed, so an ingest faster than the index
   * builds slows down to them instead of piling frozen segments onto the heap. Bulk loads that
   * defer builds do not wait, nor do writes while a build waits for disk space or failed (they
   * reach the free-space check, 507, instead of waiting for the disk). Write lock held.
   *
   * @throws UnavailableException (503) after {@link #SEAL_ROOM_WAIT_NANOS} without room
   */
  private void awaitSealRoom() {
    if (options.memory() == null || options.buildExecutor() == null) {
      return;
    }
    long left = SEAL_ROOM_WAIT_NANOS;
    while (!jobs.closed()
        && !pipeline.deferBuilds()
        && !pipeline.buildsStalled()
        && pipeline.pendingCount() > 0
        && growing.size() >= sealThreshold()
        && sealWouldOutgrowShare()) {
      if (left <= 0) {
        throw new UnavailableException(
            "Service unavailable: writes wait for index builds to stay within the memory budget;"
                + " retry later [dir="
                + dir
                + ", frozenSegments="
                + pipeline.pendingCount()
                + ", growingPoints="
                + growing.size()
                + ", growingBytes="
                + options.memory().growingBytes()
                + "]");
      }
      try {
        left = pipeline.awaitInstall(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new UnavailableException(
            "Service unavailable: interrupted while waiting for an index build [dir=" + dir + "]");
      }
    }
  }

  /**
   * Whether sealing now would let the frozen segments, the one this seal freezes and a new growing
   * segment filled to the threshold outgrow this shard's share of the growing slice. With the
   * threshold the budget gives (half the share) that allows one frozen segment; with a smaller
   * configured threshold, several. Write lock held.
   */
  private boolean sealWouldOutgrowShare() {
    MemoryLimits memory = options.memory();
    int degree = liveGraph == null ? 0 : liveGraph.maxDegree();
    long points = (long) growing.size() + sealThreshold();
    for (GrowingSegment f : pipeline.frozen()) {
      points += f.size();
    }
    long share = memory.growingBytes() / Math.max(1, memory.activeGrowing());
    return points * MemoryPlan.growingBytesPerPoint(dim, degree) > share;
  }

  /**
   * Records this shard's resident index (its sealed segments' heap and the id map's entries, {@link
   * IdLocations#memoryBytes}) with the memory limits and refuses {@code what} (507) while the
   * resident index of every shard exceeds its slice. Write lock held.
   */
  private void checkResident(String what) {
    MemoryLimits memory = options.memory();
    if (memory == null) {
      return;
    }
    List<Segment> current = segments.current().segments();
    long points = 0;
    for (Segment s : current) {
      points += s.liveCount();
    }
    memory.points(this, points);
    memory.checkResident(this, locations.memoryBytes() + residentBytes(current), what);
  }

  /**
   * Records this shard's resident index and points with the memory limits now, refusing nothing:
   * for a compaction that sizes a recode by the room left, after earlier ones changed the segments
   * without a write. Only while the write lock is free and the shard open, so that a closed shard's
   * entries ({@link #release}) never come back; otherwise the last record stands.
   */
  void recordResident() {
    if (options.memory() == null || !writeLock.tryLock()) {
      return;
    }
    try {
      if (!jobs.closed()) {
        checkResident(null);
      }
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * The heap that the on-disk {@code segments} hold ({@link Segment#heapBytes}), a codebook that
   * consecutive seals share (one object, {@link PqCodebook#shared}) counted once, not once for each
   * of its segments.
   */
  static long residentBytes(List<Segment> segments) {
    long bytes = 0;
    for (Segment s : segments) {
      if (s.onDisk()) {
        bytes += s.heapBytes();
      }
    }
    return bytes - repeatedCodebookBytes(segments);
  }

  /**
   * The bytes of the codebooks that {@code segments} hold more than once (the same object, {@link
   * PqCodebook#shared}), each counted but once in what the segments hold: what the sum of their
   * {@link Segment#memoryBytes} counts twice.
   */
  static long repeatedCodebookBytes(List<Segment> segments) {
    long bytes = 0;
    Set<PqCodebook> books = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Segment s : segments) {
      if (s.onDisk() && s instanceof SealedSegment sealed) {
        PqCodebook book = sealed.codebook();
        if (book != null && !books.add(book)) {
          bytes += book.memoryBytes();
        }
      }
    }
    return bytes;
  }

  /**
   * Refuses a write of {@code bytes} (507) that would leave less free than the reserve and the room
   * that index builds of points already acknowledged still need: the builds of frozen segments
   * ({@link SealPipeline#owedBytes}) and the merge of segments sealed raw ({@link
   * ShardCompactor#owedBytes}).
   */
  void requireSpace(long bytes, String what) {
    space.require(bytes, pipeline.owedBytes() + compactor.owedBytes(), what);
  }

  /** How long a write waits for a frozen segment's build under a memory budget before a 503. */
  static final long SEAL_ROOM_WAIT_NANOS = 120_000_000_000L;

  /** The multivector fields (name to the size of each vector) the WAL records tag from now on. */
  void multivectors(java.util.Map<String, Integer> multivectors) {
    this.multivectors = java.util.Map.copyOf(multivectors);
  }

  /** The growing segment that takes writes (write lock held, or before the shard is shared). */
  GrowingSegment growing() {
    return growing;
  }

  /**
   * Opens the shard's WAL and replays every record after {@code checkpointSeq}, then ends recovery:
   * writes from now on report to the live-index scheduler.
   */
  Wal openWal(long checkpointSeq) throws IOException {
    wal =
        Wal.open(dir.resolve("wal"), options.io(), options.wal(), checkpointSeq + 1, this::replay);
    writeLock.lock();
    try {
      recovering = false;
    } finally {
      writeLock.unlock();
    }
    return wal;
  }

  private void replay(long seq, byte op, ByteBuffer body) {
    switch (op) {
      case WalCodec.OP_UPSERT -> applyUpsert(WalCodec.decodeUpsert(body), seq);
      case WalCodec.OP_UPSERT_VECTORS -> applyUpsert(WalCodec.decodeUpsertVectors(body), seq);
      case WalCodec.OP_UPSERT_NAMED -> applyUpsert(WalCodec.decodeUpsertVectors(body, true), seq);
      case WalCodec.OP_UPSERT_MULTI -> applyUpsert(WalCodec.decodeUpsertMulti(body), seq);
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
  long upsert(List<Point> points) {
    checkDimensions(points);
    byte op = WalCodec.upsertOp(points, multivectors);
    byte[] body = WalCodec.encodeUpsertAny(points, multivectors);
    requireSpace(body.length, "upsert");
    long seq;
    GrowingSegment g;
    scheduler.writeStarted();
    try {
      writeLock.lock();
      try {
        awaitSealRoom();
        checkResident("upsert");
        seq = appendWal(op, body, "upsert");
        applyUpsert(points, seq);
        g = growing;
      } finally {
        writeLock.unlock();
      }
    } finally {
      scheduler.writeEnded();
    }
    scheduler.awaitIndexer(g);
    return seq;
  }

  /**
   * Stores the points {@code condition} lets through, decided against each point's stored version
   * under the write lock, so that no write interleaves between the test and the write: with {@code
   * insert_only} the points that do not exist, with {@code update_only} those that do, and with an
   * update filter only the existing points that match {@code filter} (the condition's filter,
   * evaluated for the collection). Returns the WAL sequence number, or 0 when no point was written
   * (nothing is logged).
   */
  long upsert(List<Point> points, io.flashvec.index.UpsertMode mode, FilterEvaluator filter) {
    checkDimensions(points);
    long seq;
    GrowingSegment g;
    scheduler.writeStarted();
    try {
      writeLock.lock();
      try {
        awaitSealRoom();
        checkResident("upsert");
        List<Point> kept = new ArrayList<>(points.size());
        boolean payloads = filter != null && filter.needsPayload();
        boolean vectors = filter != null && filter.needsVectors();
        for (Point p : points) {
          Record stored = reader.get(p.id(), payloads, vectors);
          boolean write =
              switch (mode) {
                case UPSERT -> true;
                case INSERT_ONLY -> stored == null;
                case UPDATE_ONLY -> stored != null;
              };
          if (write && stored != null && filter != null) {
            write = filter.matches(stored.id(), stored.payload(), name -> hasVector(stored, name));
          }
          if (write) {
            kept.add(p);
          }
        }
        if (kept.isEmpty()) {
          return 0;
        }
        byte[] body = WalCodec.encodeUpsertAny(kept);
        requireSpace(body.length, "upsert");
        seq = appendWal(WalCodec.upsertOp(kept), body, "upsert");
        applyUpsert(kept, seq);
        g = growing;
      } finally {
        writeLock.unlock();
      }
    } finally {
      scheduler.writeEnded();
    }
    scheduler.awaitIndexer(g);
    return seq;
  }

  /** Whether {@code r} has the vector {@code name} ({@code ""}: the default dense one). */
  private static boolean hasVector(Record r, String name) {
    if (name.isEmpty()) {
      return r.vector() != null;
    }
    return (r.sparse() != null && r.sparse().containsKey(name))
        || (r.dense() != null && r.dense().containsKey(name));
  }

  private void checkDimensions(List<Point> points) {
    for (Point p : points) {
      if (p.vector() != null && dim == 0) {
        throw new InvalidInputException(
            "Wrong input: the collection has no primary dense vector [id=" + p.id() + "]");
      }
      if (p.vector() != null && p.vector().length != dim) {
        throw new InvalidInputException(
            "Wrong input: Vector dimension error: expected dim: "
                + dim
                + ", got "
                + p.vector().length);
      }
    }
  }

  /**
   * Replaces vectors of existing points and keeps the rest: the default dense vector when a point
   * gives one (validated and prepared for the metric), and each sparse vector it gives; payloads
   * given are not used. The live versions are read and one upsert record of the new versions is
   * written under the write lock, as {@link #updatePayloads(List, UnaryOperator)} does, so a
   * payload update of the same points is never lost in between. An id that does not exist is a
   * {@link NotFoundException} naming it, and nothing is written. Returns the WAL sequence number.
   */
  long updateVectors(List<Point> points) {
    return updateVectors(points, null);
  }

  /**
   * {@link #updateVectors(List)} of the points whose stored version matches {@code filter} ({@code
   * null}: all), tested under the write lock; returns 0 when none matched (nothing is logged).
   */
  long updateVectors(List<Point> points, FilterEvaluator filter) {
    checkDimensions(points);
    return rewrite(
        points.stream().map(Point::id).toList(),
        filter,
        (i, r) -> {
          Point p = points.get(i);
          Map<String, SparseVector> sparse = new HashMap<>(r.sparse());
          sparse.putAll(p.sparse());
          Map<String, float[]> dense =
              r.dense() == null ? new HashMap<>() : new HashMap<>(r.dense());
          dense.putAll(p.dense());
          return new Point(
              p.id(), p.vector() != null ? p.vector() : r.vector(), r.payload(), sparse, dense);
        },
        "vector update");
  }

  /**
   * Removes the vectors {@code names} ({@code ""}: the default dense one) from existing points and
   * keeps the rest; written as {@link #updateVectors} is. An id that does not exist is a {@link
   * NotFoundException} naming it, and nothing is written.
   */
  long deleteVectors(List<PointId> ids, Set<String> names) {
    return rewrite(
        ids,
        null,
        (i, r) -> {
          Map<String, SparseVector> sparse = new HashMap<>(r.sparse());
          sparse.keySet().removeAll(names);
          Map<String, float[]> dense =
              r.dense() == null ? new HashMap<>() : new HashMap<>(r.dense());
          dense.keySet().removeAll(names);
          return new Point(
              r.id(), names.contains("") ? null : r.vector(), r.payload(), sparse, dense);
        },
        "vector deletion");
  }

  private long rewrite(
      List<PointId> ids,
      FilterEvaluator filter,
      java.util.function.BiFunction<Integer, Record, Point> next,
      String what) {
    long seq;
    GrowingSegment g;
    writeLock.lock();
    try {
      // may wait for a build with the lock released: the live versions are read after it
      awaitSealRoom();
      checkResident(what);
      List<Point> points = new ArrayList<>(ids.size());
      for (int i = 0; i < ids.size(); i++) {
        Record r = reader.get(ids.get(i), true, true);
        if (r == null) {
          throw new NotFoundException("Not found: No point with id " + ids.get(i) + " found");
        }
        if (filter == null || filter.matches(r.id(), r.payload(), name -> hasVector(r, name))) {
          points.add(next.apply(i, r));
        }
      }
      if (points.isEmpty()) {
        return 0;
      }
      byte[] body = WalCodec.encodeUpsertAny(points, multivectors);
      requireSpace(body.length, what);
      seq = appendWal(WalCodec.upsertOp(points, multivectors), body, what);
      applyUpsert(points, seq);
      g = growing;
    } finally {
      writeLock.unlock();
    }
    scheduler.awaitIndexer(g);
    return seq;
  }

  /** Deletes points by id (absent ids are ignored); returns the WAL sequence number. */
  long delete(List<PointId> ids) {
    byte[] body = WalCodec.encodeDelete(ids);
    writeLock.lock();
    try {
      // No reserve check: deleting (then compacting) is how a user frees space on a full disk.
      long seq = appendWal(WalCodec.OP_DELETE, body, "delete");
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
  long delete(FilterEvaluator filter) {
    writeLock.lock();
    try {
      List<PointId> ids = reader.matchingIds(filter);
      return ids.isEmpty() ? 0 : delete(ids);
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * {@link #updatePayloads(List, UnaryOperator)} for the points that match {@code filter} now (ids
   * collected under the write lock).
   */
  long updatePayloads(FilterEvaluator filter, UnaryOperator<byte[]> update) {
    writeLock.lock();
    try {
      return updatePayloads(reader.matchingIds(filter), update);
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Replaces the payloads of existing points with {@code update.apply(current payload)} and keeps
   * their vectors; absent ids are ignored. Written as one upsert record of the points' new
   * versions, under the write lock so no concurrent write to the same ids is lost. Returns the WAL
   * sequence number, or 0 when no id exists.
   */
  long updatePayloads(List<PointId> ids, UnaryOperator<byte[]> update) {
    writeLock.lock();
    try {
      List<Point> points = new ArrayList<>(ids.size());
      for (PointId id : ids) {
        Record r = reader.get(id, true, true);
        if (r != null) {
          points.add(new Point(id, r.vector(), update.apply(r.payload()), r.sparse(), r.dense()));
        }
      }
      if (points.isEmpty()) {
        return 0;
      }
      byte[] body = WalCodec.encodeUpsertAny(points, multivectors);
      requireSpace(body.length, "payload update");
      long seq = appendWal(WalCodec.upsertOp(points, multivectors), body, "payload update");
      applyUpsert(points, seq);
      return seq;
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Appends a record (write lock held). The WAL stays usable when the disk is full; that failure is
   * an {@link InsufficientStorageException} (HTTP 507), and nothing was appended.
   */
  private long appendWal(byte op, byte[] body, String what) {
    if (jobs.closed()) {
      throw new UnavailableException("Service unavailable: shard is closed [dir=" + dir + "]");
    }
    try {
      return wal.append(op, body);
    } catch (UncheckedIOException e) {
      DiskFullException full = DiskFullException.find(e);
      if (full != null) {
        throw new InsufficientStorageException(what, full);
      }
      throw e;
    }
  }

  /** Blocks until the record {@code seq} is durable under the WAL's fsync policy. */
  void awaitDurable(long seq) {
    wal.sync(seq);
  }

  // Called with writeLock held, or during recovery before the shard is published.
  private void applyUpsert(List<Point> points, long seq) {
    if (!recovering) {
      scheduler.noteWrite(points.size());
    }
    // Seal only at record boundaries, so the sealed segment covers exactly the records < seq.
    if (growing.size() >= sealThreshold()) {
      seal(seq - 1);
    }
    MemoryLimits memory = options.memory();
    if (memory != null && !points.isEmpty()) {
      memory.growingActive(this);
    }
    for (Point p : points) {
      int ord = growing.append(p.id(), p.vector(), p.payload(), p.sparse(), p.dense());
      long old = locations.put(p.id(), IdLocations.pack(growing.id(), ord));
      if (old != IdLocations.NONE) {
        deleteAt(old);
      }
    }
    if (!recovering) {
      scheduler.schedule(growing);
    }
  }

  private void applyDelete(List<PointId> ids) {
    for (PointId id : ids) {
      long old = locations.remove(id);
      if (old != IdLocations.NONE) {
        deleteAt(old);
      }
    }
  }

  private void deleteAt(long loc) {
    Segment s = segments.current().byId(IdLocations.segment(loc));
    if (s != null && s.markDeleted(IdLocations.ordinal(loc)) && s.onDisk()) {
      compactor.onDelete(s);
    }
  }

  /** Seals the growing segment if it holds any point. */
  void flush() {
    writeLock.lock();
    try {
      if (growing.size() > 0) {
        seal(wal.lastSeq());
      }
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Freezes the growing segment, which covers the WAL records up to {@code sealSeq}, hands it to
   * the seal pipeline and starts a new one (write lock held, or during recovery).
   */
  private void seal(long sealSeq) {
    GrowingSegment sealed = growing;
    sealed.freeze();
    growing = newGrowing();
    if (options.memory() != null) {
      options.memory().growingIdle(this);
    }
    segments.publishSeal(sealed, growing);
    pipeline.enqueue(sealed, sealSeq);
    options.io().crashPoint(CrashPoint.SEAL_FROZEN);
  }
}
