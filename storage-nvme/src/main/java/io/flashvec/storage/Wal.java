package io.flashvec.storage;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A segmented, checksummed, append-only write-ahead log with group commit.
 *
 * <h2>Files</h2>
 *
 * A log is a directory of segment files named {@code wal-<first sequence, 20 digits>.log}. A new
 * segment starts when the current one passes {@link Options#segmentBytes()}.
 *
 * <pre>
 * segment header (20 bytes, little-endian)
 *   0  u32  magic 0x4C415746 ("FWAL")
 *   4  u16  format version (1)
 *   6  u16  reserved (0)
 *   8  u64  sequence number of the first record in this segment
 *   16 u32  CRC32C of bytes 0..15
 * record (17 + N bytes)
 *   0  u32  N, the body length
 *   4  u32  CRC32C of bytes 8..(17+N) (sequence, op, body)
 *   8  u64  sequence number (the previous record's + 1)
 *   16 u8   operation code (opaque to the log)
 *   17 N    body
 * </pre>
 *
 * There is no footer: a log's end is wherever the last valid record ends. Each record carries its
 * own checksum instead, so a torn tail (a crash during a write) or a flipped bit is found by the
 * recovery scan.
 *
 * <h2>Recovery</h2>
 *
 * {@link #open} scans every segment in order, hands each valid record at or after the requested
 * sequence to the caller, and stops at the first record that is incomplete, fails its checksum or
 * breaks the sequence. Everything from there on is discarded (the segment is truncated, later
 * segments deleted) and logged, so that new appends continue a clean log.
 *
 * <h2>Durability and threads</h2>
 *
 * {@link #append} is thread-safe and only writes to the OS; {@link #sync} makes every record up to
 * a sequence durable. Concurrent {@code sync} callers share one fsync (group commit): whoever gets
 * the sync lock forces everything appended so far, and the others find their record already
 * durable. With {@link FsyncPolicy#INTERVAL} a background task calls {@code sync} periodically and
 * {@code sync} itself returns at once; with {@link FsyncPolicy#NEVER} nothing is forced.
 *
 * <h2>I/O errors</h2>
 *
 * A full device is expected to pass, other I/O errors are not, so the two are handled apart (ADR
 * 0018):
 *
 * <ul>
 *   <li><b>No space</b> ({@code ENOSPC}/{@code EDQUOT}, see {@link DiskFullException#isDiskFull})
 *       while appending a record or starting a new segment: the append is not acknowledged (it
 *       throws an {@link UncheckedIOException} whose cause is a {@link DiskFullException}), the
 *       partial write is cut off so the tail ends at the last complete record again, a segment file
 *       that was being started is deleted (durably), and the log stays usable: the next append
 *       writes at the same place with the same sequence number and succeeds once space is back.
 *       Nothing acknowledged depends on the bytes that were undone, so nothing is lost.
 *   <li><b>Any other error</b>, and <b>every fsync failure</b> (whatever its errno): the log marks
 *       itself failed and refuses further appends and syncs until it is reopened. After a failed
 *       fsync the kernel may have dropped the dirty pages and cleared the error, so a second fsync
 *       could report success for data that never reached the device (PostgreSQL's "fsyncgate",
 *       2018): the only safe way on is to re-read the log from the device, i.e. recovery. A failed
 *       truncation of a partial write fails the log as well, since its tail is then unknown.
 * </ul>
 *
 * <p>One class of about 900 lines: append, roll, sync, truncation and recovery all act on the tail
 * segment's channel, size and sequence under the same locks, and the disk-full undo must see all of
 * them; split apart they would share that state through package-private fields instead.
 */
public final class Wal implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(Wal.class);

  static final int MAGIC = 0x4C415746;
  static final short FORMAT_VERSION = 1;
  static final int HEADER_BYTES = 20;
  static final int RECORD_HEADER_BYTES = 17;

  /** Hard cap on one record's body; anything larger in a length field is corruption. */
  public static final int MAX_BODY_BYTES = 1 << 30;

  private static final String PREFIX = "wal-";
  private static final String SUFFIX = ".log";

  /** Tuning of a log. */
  public record Options(
      FsyncPolicy fsyncPolicy,
      Duration fsyncInterval,
      long segmentBytes,
      ScheduledExecutorService scheduler,
      Listener listener,
      int retainClosed) {
    public Options {
      if (retainClosed < 0) {
        throw new IllegalArgumentException(
            "retainClosed must not be negative [retainClosed=" + retainClosed + "]");
      }
      Objects.requireNonNull(fsyncPolicy, "fsyncPolicy");
      Objects.requireNonNull(fsyncInterval, "fsyncInterval");
      if (segmentBytes < 4096) {
        throw new IllegalArgumentException(
            "segmentBytes too small [segmentBytes=" + segmentBytes + "]");
      }
      if (listener == null) {
        listener = Listener.NONE;
      }
    }

    /**
     * Defaults: fsync always, 1 s flusher interval, 64 MiB segments, no scheduler, closed segments
     * deleted as soon as a checkpoint covers them.
     */
    public static Options defaults() {
      return new Options(
          FsyncPolicy.ALWAYS, Duration.ofSeconds(1), 64L << 20, null, Listener.NONE, 0);
    }

    /** Tuning without closed segments kept past their checkpoint. */
    public Options(
        FsyncPolicy fsyncPolicy,
        Duration fsyncInterval,
        long segmentBytes,
        ScheduledExecutorService scheduler,
        Listener listener) {
      this(fsyncPolicy, fsyncInterval, segmentBytes, scheduler, listener, 0);
    }

    public Options withPolicy(FsyncPolicy policy) {
      return new Options(policy, fsyncInterval, segmentBytes, scheduler, listener, retainClosed);
    }

    public Options withSegmentBytes(long bytes) {
      return new Options(fsyncPolicy, fsyncInterval, bytes, scheduler, listener, retainClosed);
    }

    public Options withScheduler(ScheduledExecutorService s, Duration interval) {
      return new Options(fsyncPolicy, interval, segmentBytes, s, listener, retainClosed);
    }

    /**
     * The same tuning keeping the {@code n} newest closed segments after a checkpoint covers them
     * (Qdrant's {@code wal_config.wal_retain_closed}), for inspection or a peer catching up.
     */
    public Options withRetainClosed(int n) {
      return new Options(fsyncPolicy, fsyncInterval, segmentBytes, scheduler, listener, n);
    }

    public Options withListener(Listener l) {
      return new Options(fsyncPolicy, fsyncInterval, segmentBytes, scheduler, l, retainClosed);
    }
  }

  /** Observes the log's I/O, for metrics. Called on the appending or syncing thread. */
  public interface Listener {
    Listener NONE = new Listener() {};

    default void onAppend(int recordBytes) {}

    default void onFsync(long nanos) {}
  }

  /** Receives replayed records; the body buffer is only valid during the call. */
  @FunctionalInterface
  public interface RecordConsumer {
    void accept(long seq, byte op, ByteBuffer body);
  }

  /** What recovery found. */
  public record RecoveryReport(
      int segments,
      long recordsScanned,
      long recordsReplayed,
      long lastSeq,
      long bytesDiscarded,
      String discardReason) {}

  private final Path dir;
  private final FileIO io;
  private final Options options;
  private final RecoveryReport recovery;

  private final ReentrantLock appendLock = new ReentrantLock();
  private final ReentrantLock syncLock = new ReentrantLock();
  private final AtomicLong durableSeq = new AtomicLong();
  private final AtomicLong totalBytes = new AtomicLong();
  private final CRC32C crc = new CRC32C(); // guarded by appendLock
  private ByteBuffer scratch = ByteBuffer.allocate(64 << 10).order(ByteOrder.LITTLE_ENDIAN);

  // guarded by appendLock
  private FileChannel current;
  private long currentFirstSeq;
  private long currentSize;
  private long lastSeq;
  private final List<Long> segmentFirstSeqs = new ArrayList<>();
  private volatile IOException failure;
  private volatile boolean closed;
  private boolean diskFull; // the last append failed for lack of space; guarded by appendLock
  private final ScheduledFuture<?> flusher;
  private volatile FsyncPolicy policy; // options' policy until setPolicy (bulk-load override)

  private Wal(
      Path dir,
      FileIO io,
      Options options,
      RecoveryReport recovery,
      long lastSeq,
      List<Long> segmentFirstSeqs,
      long totalBytes)
      throws IOException {
    this.dir = dir;
    this.io = io;
    this.options = options;
    this.recovery = recovery;
    this.lastSeq = lastSeq;
    this.durableSeq.set(lastSeq);
    this.segmentFirstSeqs.addAll(segmentFirstSeqs);
    this.totalBytes.set(totalBytes);
    this.policy = options.fsyncPolicy();
    // Scheduled even under `never`: setPolicy may switch to `interval` later.
    if (options.scheduler() != null) {
      long ms = Math.max(1, options.fsyncInterval().toMillis());
      this.flusher =
          options
              .scheduler()
              .scheduleWithFixedDelay(this::backgroundSync, ms, ms, TimeUnit.MILLISECONDS);
    } else {
      this.flusher = null;
    }
  }

  /**
   * Opens (creating if needed) the log in {@code dir}, recovers it and replays every valid record
   * with a sequence number at or after {@code fromSeq} to {@code consumer}.
   */
  public static Wal open(
      Path dir, FileIO io, Options options, long fromSeq, RecordConsumer consumer)
      throws IOException {
    io.createDirectories(dir);
    List<Path> files = io.list(dir, PREFIX + "*" + SUFFIX);
    List<Long> firstSeqs = new ArrayList<>();
    long expectedSeq = -1;
    long scanned = 0;
    long replayed = 0;
    long discarded = 0;
    long total = 0;
    String reason = null;
    for (int i = 0; i < files.size(); i++) {
      Path file = files.get(i);
      long nameSeq = parseFirstSeq(file);
      ScanResult r;
      try (FileChannel ch = io.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
        r = scanSegment(io, file, ch, nameSeq, expectedSeq, fromSeq, consumer);
        if (r.validEnd >= HEADER_BYTES && r.validEnd < r.fileSize) {
          io.truncate(ch, r.validEnd);
          io.force(ch, true);
        } else if (r.validEnd >= HEADER_BYTES && options.fsyncPolicy() != FsyncPolicy.NEVER) {
          // What we replay may only be in the page cache (the previous process died before its
          // fsync, or wrote with policy never). The caller acts on replayed records and we report
          // them as durable, and new acknowledged records will sit behind them, so make them
          // durable now: a power loss must not take back what recovery handed out. Forcing an
          // already clean segment writes nothing.
          io.force(ch, true);
        }
      }
      scanned += r.records;
      replayed += r.replayed;
      if (r.validEnd < HEADER_BYTES) {
        io.deleteIfExists(file);
      } else {
        firstSeqs.add(nameSeq);
        total += r.validEnd;
        expectedSeq = r.records > 0 ? r.lastSeq + 1 : nameSeq;
      }
      if (r.problem != null) {
        discarded += r.fileSize - Math.max(r.validEnd, 0);
        reason = r.problem;
        for (int j = i + 1; j < files.size(); j++) {
          discarded += io.size(files.get(j));
          io.deleteIfExists(files.get(j));
        }
        io.fsyncDirectory(dir);
        break;
      }
    }
    if (reason == null && !firstSeqs.isEmpty() && options.fsyncPolicy() != FsyncPolicy.NEVER) {
      io.fsyncDirectory(dir); // the segments' names, too, may never have been made durable
    }
    // With no segment left, continue numbering after the caller's checkpoint.
    long last = expectedSeq < 0 ? Math.max(0, fromSeq - 1) : expectedSeq - 1;
    RecoveryReport report =
        new RecoveryReport(firstSeqs.size(), scanned, replayed, last, discarded, reason);
    if (reason != null) {
      LOG.warn(
          "WAL recovery stopped at a torn or corrupt record, discarding the rest [dir={}, recovered={}, lastSeq={}, discardedBytes={}, reason={}]",
          dir,
          scanned,
          last,
          discarded,
          reason);
    } else {
      LOG.info(
          "WAL recovered [dir={}, segments={}, records={}, replayed={}, lastSeq={}]",
          dir,
          firstSeqs.size(),
          scanned,
          replayed,
          last);
    }
    Wal wal = new Wal(dir, io, options, report, last, firstSeqs, total);
    try {
      wal.openTail();
    } catch (IOException | RuntimeException e) {
      wal.abandon();
      throw e;
    }
    return wal;
  }

  /** Undoes the constructor after a failed open: stops the flusher and releases the tail. */
  private void abandon() {
    closed = true;
    if (flusher != null) {
      flusher.cancel(false);
    }
    if (current != null) {
      try {
        current.close();
      } catch (IOException suppressed) {
        // The open is failing already; its exception is the one to report.
      }
      current = null;
    }
  }

  private void openTail() throws IOException {
    if (segmentFirstSeqs.isEmpty()) {
      startSegment(lastSeq + 1);
    } else {
      long first = segmentFirstSeqs.getLast();
      Path file = segmentPath(first);
      current = io.open(file, StandardOpenOption.WRITE, StandardOpenOption.READ);
      currentSize = current.size();
      current.position(currentSize);
      currentFirstSeq = first;
    }
  }

  /**
   * Creates segment {@code firstSeq} with its header (durably unless the policy is never) and makes
   * it the tail. If that fails, the new file is deleted again, durably, so that the log still ends
   * in the previous segment; if even that clean-up fails the log is failed, since a stray empty
   * segment named after a sequence that is later written elsewhere would cut recovery short.
   */
  private void startSegment(long firstSeq) throws IOException {
    Path file = segmentPath(firstSeq);
    FileChannel ch =
        io.open(
            file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, StandardOpenOption.READ);
    try {
      ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      h.putInt(MAGIC).putShort(FORMAT_VERSION).putShort((short) 0).putLong(firstSeq);
      CRC32C c = new CRC32C();
      c.update(h.array(), 0, 16);
      h.putInt((int) c.getValue());
      h.flip();
      io.writeFully(ch, h);
      io.crashPoint(CrashPoint.WAL_SEGMENT_CREATED);
      if (policy != FsyncPolicy.NEVER) {
        io.force(ch, true);
        io.fsyncDirectory(dir);
      }
    } catch (IOException | RuntimeException e) {
      try {
        ch.close();
        io.deleteIfExists(file);
        if (policy != FsyncPolicy.NEVER) {
          io.fsyncDirectory(dir);
        }
      } catch (IOException cleanup) {
        e.addSuppressed(cleanup);
        fail(e instanceof IOException ioe ? ioe : new IOException(e));
      }
      throw e;
    }
    current = ch;
    currentFirstSeq = firstSeq;
    currentSize = HEADER_BYTES;
    segmentFirstSeqs.add(firstSeq);
    totalBytes.addAndGet(HEADER_BYTES);
  }

  /**
   * Appends one record and returns its sequence number. The record is written to the OS but not
   * necessarily durable: call {@link #sync} for that.
   *
   * @throws UncheckedIOException if the write fails: with a {@link DiskFullException} as its cause
   *     when the device is full (nothing was written, the log stays usable), else the log is failed
   * @throws IllegalStateException if the log has failed before or is closed
   */
  public long append(byte op, byte[] body) {
    return append(op, body, 0, body.length);
  }

  /** Appends {@code body[off, off+len)}; see {@link #append(byte, byte[])}. */
  public long append(byte op, byte[] body, int off, int len) {
    if (len > MAX_BODY_BYTES) {
      throw new IllegalArgumentException(
          "WAL record too large [bytes=" + len + ", max=" + MAX_BODY_BYTES + "]");
    }
    appendLock.lock();
    try {
      checkUsable();
      long seq = lastSeq + 1;
      int size = RECORD_HEADER_BYTES + len;
      if (currentSize + size > options.segmentBytes() && currentSize > HEADER_BYTES) {
        roll(seq);
      }
      if (scratch.capacity() < size) {
        scratch =
            ByteBuffer.allocate(Math.max(size, scratch.capacity() * 2))
                .order(ByteOrder.LITTLE_ENDIAN);
      }
      ByteBuffer b = scratch.clear();
      b.putInt(len).putInt(0).putLong(seq).put(op).put(body, off, len);
      crc.reset();
      crc.update(b.array(), 8, 9 + len);
      b.putInt(4, (int) crc.getValue());
      b.flip();
      io.crashPoint(CrashPoint.WAL_APPEND_BEFORE_WRITE);
      try {
        io.writeFully(current, b);
      } catch (IOException e) {
        DiskFullException full = DiskFullException.classify(e, "WAL append", io, dir, size);
        if (full != null && rewindTail(e)) {
          throw diskFull(full, seq);
        }
        fail(e);
        throw new UncheckedIOException("WAL append failed [dir=" + dir + ", seq=" + seq + "]", e);
      }
      io.crashPoint(CrashPoint.WAL_APPEND_WRITTEN);
      currentSize += size;
      totalBytes.addAndGet(size);
      lastSeq = seq;
      if (diskFull) {
        diskFull = false;
        LOG.info("WAL appends resumed: space was freed [dir={}, seq={}]", dir, seq);
      }
      options.listener().onAppend(size);
      return seq;
    } finally {
      appendLock.unlock();
    }
  }

  /**
   * Forces the tail segment and starts the next one; the old tail is closed only once the new one
   * exists. Without space for the new segment the log stays on the old tail, unfailed, and the next
   * append tries again.
   */
  private void roll(long nextSeq) {
    FileChannel previous = current;
    try {
      if (policy != FsyncPolicy.NEVER) {
        long t0 = System.nanoTime();
        io.force(previous, false);
        options.listener().onFsync(System.nanoTime() - t0);
        durableSeq.accumulateAndGet(lastSeq, Math::max);
      }
    } catch (IOException e) {
      fail(e);
      throw new UncheckedIOException(
          "WAL segment roll failed [dir=" + dir + ", seq=" + nextSeq + "]", e);
    }
    try {
      startSegment(nextSeq);
    } catch (IOException e) {
      DiskFullException full =
          DiskFullException.classify(e, "WAL segment roll", io, dir, HEADER_BYTES);
      if (full != null && failure == null) {
        throw diskFull(full, nextSeq);
      }
      fail(e);
      throw new UncheckedIOException(
          "WAL segment roll failed [dir=" + dir + ", seq=" + nextSeq + "]", e);
    }
    try {
      previous.close();
    } catch (IOException e) {
      fail(e);
      throw new UncheckedIOException(
          "WAL segment roll failed [dir=" + dir + ", seq=" + nextSeq + "]", e);
    }
    io.crashPoint(CrashPoint.WAL_ROLL_OLD_CLOSED);
  }

  /**
   * After a write that failed for lack of space: cuts the tail segment back to the end of its last
   * complete record and moves the write position there. Returns false (and the caller fails the
   * log) when that fails too, since the tail's content is then unknown.
   */
  private boolean rewindTail(IOException cause) {
    try {
      io.truncate(current, currentSize);
      current.position(currentSize);
      return true;
    } catch (IOException e) {
      cause.addSuppressed(e);
      return false;
    }
  }

  /** The exception of an append refused for lack of space; logs the first one of a series. */
  private UncheckedIOException diskFull(DiskFullException full, long seq) {
    if (!diskFull) {
      diskFull = true;
      LOG.warn(
          "WAL append refused: the disk is full; appends resume once space is freed [dir={}, seq={}, usableBytes={}]",
          dir,
          seq,
          full.usableBytes());
    }
    return new UncheckedIOException(
        "WAL append failed, the disk is full [dir=" + dir + ", seq=" + seq + "]", full);
  }

  /**
   * Makes every record up to {@code seq} durable under the log's policy: with {@link
   * FsyncPolicy#ALWAYS} this fsyncs (shared with concurrent callers); otherwise it returns at once.
   */
  public void sync(long seq) {
    if (policy != FsyncPolicy.ALWAYS) {
      checkUsable();
      return;
    }
    forceUpTo(seq);
  }

  /** Forces everything appended so far, whatever the policy (used at close and by the flusher). */
  public void syncAll() {
    long target;
    appendLock.lock();
    try {
      target = lastSeq;
    } finally {
      appendLock.unlock();
    }
    forceUpTo(target);
  }

  private void forceUpTo(long seq) {
    if (durableSeq.get() >= seq) {
      return;
    }
    syncLock.lock();
    try {
      if (durableSeq.get() >= seq) {
        return;
      }
      checkUsable();
      FileChannel ch;
      long target;
      appendLock.lock();
      try {
        ch = current;
        target = lastSeq;
      } finally {
        appendLock.unlock();
      }
      long t0 = System.nanoTime();
      try {
        io.force(ch, false);
      } catch (ClosedChannelException e) {
        // The segment rolled meanwhile; roll() forced everything up to its last record.
        if (durableSeq.get() < seq) {
          checkUsable();
          throw new UncheckedIOException("WAL closed during sync [dir=" + dir + "]", e);
        }
        return;
      } catch (IOException e) {
        fail(e);
        throw new UncheckedIOException("WAL fsync failed [dir=" + dir + ", seq=" + seq + "]", e);
      }
      options.listener().onFsync(System.nanoTime() - t0);
      io.crashPoint(CrashPoint.WAL_FSYNCED);
      durableSeq.accumulateAndGet(target, Math::max);
    } finally {
      syncLock.unlock();
    }
  }

  private void backgroundSync() {
    if (closed || failure != null || policy == FsyncPolicy.NEVER) {
      return;
    }
    try {
      syncAll();
    } catch (RuntimeException e) {
      LOG.error("WAL background fsync failed [dir={}]", dir, e);
    }
  }

  /**
   * Deletes whole segments all of whose records have a sequence number below {@code seq} (they are
   * covered by a checkpoint), but the {@link Options#retainClosed()} newest of them. The segment
   * being written is never deleted. Recovery replays from the checkpoint, so what is kept is never
   * applied twice.
   */
  public void truncateBefore(long seq) {
    appendLock.lock();
    try {
      checkUsable();
      boolean deleted = false;
      int keep = options.retainClosed();
      // segment i is covered when segment i + 1 starts at or before seq
      while (segmentFirstSeqs.size() > 1 + keep && segmentFirstSeqs.get(1 + keep) <= seq) {
        long first = segmentFirstSeqs.removeFirst();
        Path p = segmentPath(first);
        long size = io.size(p);
        io.deleteIfExists(p);
        io.crashPoint(CrashPoint.WAL_TRUNCATE_SEGMENT_DELETED);
        totalBytes.addAndGet(-size);
        deleted = true;
      }
      if (deleted) {
        io.fsyncDirectory(dir);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("WAL truncation failed [dir=" + dir + ", seq=" + seq + "]", e);
    } finally {
      appendLock.unlock();
    }
  }

  private void checkUsable() {
    IOException f = failure;
    if (f != null) {
      throw new IllegalStateException(
          "WAL failed after an I/O error and must be reopened [dir=" + dir + "]", f);
    }
    if (closed) {
      throw new IllegalStateException("WAL is closed [dir=" + dir + "]");
    }
  }

  private void fail(IOException e) {
    if (failure == null) {
      failure = e;
      LOG.error("WAL failed; refusing further appends until reopened [dir={}]", dir, e);
    }
  }

  /** The sequence number of the last appended record (0 when empty). */
  public long lastSeq() {
    appendLock.lock();
    try {
      return lastSeq;
    } finally {
      appendLock.unlock();
    }
  }

  /** The highest sequence number known to be durable. */
  public long durableSeq() {
    return durableSeq.get();
  }

  /** Bytes the log occupies on disk. */
  public long sizeBytes() {
    return totalBytes.get();
  }

  /** Number of segment files. */
  public int segmentCount() {
    appendLock.lock();
    try {
      return segmentFirstSeqs.size();
    } finally {
      appendLock.unlock();
    }
  }

  /** Whether an I/O error failed the log. */
  public boolean failed() {
    return failure != null;
  }

  public RecoveryReport recovery() {
    return recovery;
  }

  public Path directory() {
    return dir;
  }

  public FsyncPolicy policy() {
    return policy;
  }

  /**
   * Switches the fsync policy of an open log (a collection leaving or entering bulk-load mode).
   * Leaving {@code never} first forces every segment file and the directory, so that every record
   * appended so far is durable before the stricter policy applies.
   */
  public void setPolicy(FsyncPolicy next) {
    Objects.requireNonNull(next, "policy");
    syncLock.lock();
    try {
      if (policy == FsyncPolicy.NEVER && next != FsyncPolicy.NEVER) {
        checkUsable();
        long target;
        appendLock.lock();
        try {
          target = lastSeq;
          for (Path p : io.list(dir, PREFIX + "*" + SUFFIX)) {
            try (FileChannel ch = io.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
              io.force(ch, false);
            }
          }
          io.fsyncDirectory(dir);
        } catch (IOException e) {
          fail(e);
          throw new UncheckedIOException("WAL fsync failed [dir=" + dir + "]", e);
        } finally {
          appendLock.unlock();
        }
        durableSeq.accumulateAndGet(target, Math::max);
      }
      policy = next;
    } finally {
      syncLock.unlock();
    }
  }

  /** Forces outstanding records (unless the policy is {@code never}) and closes; idempotent. */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    if (flusher != null) {
      flusher.cancel(false);
    }
    boolean synced = false;
    try {
      if (failure == null && policy != FsyncPolicy.NEVER) {
        syncAll();
        synced = true;
      }
    } finally {
      closed = true;
      long last;
      appendLock.lock();
      try {
        last = lastSeq;
        if (current != null) {
          current.close();
          current = null;
        }
      } finally {
        appendLock.unlock();
      }
      if (synced) {
        LOG.info("WAL synced and closed [dir={}, lastSeq={}]", dir, last);
      } else {
        LOG.info(
            "WAL closed [dir={}, lastSeq={}, durableSeq={}, policy={}, failed={}]",
            dir,
            last,
            durableSeq.get(),
            policy.configName(),
            failure != null);
      }
    }
  }

  private Path segmentPath(long firstSeq) {
    return dir.resolve(String.format(Locale.ROOT, "%s%020d%s", PREFIX, firstSeq, SUFFIX));
  }

  private static long parseFirstSeq(Path file) {
    String name = file.getFileName().toString();
    try {
      return Long.parseLong(name.substring(PREFIX.length(), name.length() - SUFFIX.length()));
    } catch (NumberFormatException e) {
      throw new CorruptFileException("WAL segment name is not a sequence number", file, e);
    }
  }

  private record ScanResult(
      long fileSize, long validEnd, long records, long replayed, long lastSeq, String problem) {}

  private static ScanResult scanSegment(
      FileIO io,
      Path file,
      FileChannel ch,
      long nameSeq,
      long expectedSeq,
      long fromSeq,
      RecordConsumer consumer)
      throws IOException {
    long size = ch.size();
    ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    if (io.readFully(ch, h, 0) < HEADER_BYTES) {
      return new ScanResult(size, 0, 0, 0, 0, "segment header incomplete [file=" + file + "]");
    }
    h.flip();
    int magic = h.getInt();
    short version = h.getShort();
    h.getShort();
    long headerSeq = h.getLong();
    int storedCrc = h.getInt();
    CRC32C c = new CRC32C();
    c.update(h.array(), 0, 16);
    if (magic != MAGIC || (int) c.getValue() != storedCrc || headerSeq != nameSeq) {
      return new ScanResult(size, 0, 0, 0, 0, "segment header corrupt [file=" + file + "]");
    }
    if (version != FORMAT_VERSION) {
      throw new CorruptFileException(
          "unsupported WAL format version [version="
              + version
              + ", supported="
              + FORMAT_VERSION
              + "]",
          file);
    }
    if (expectedSeq >= 0 && headerSeq != expectedSeq) {
      return new ScanResult(
          size,
          0,
          0,
          0,
          0,
          "segment does not continue the sequence [expected="
              + expectedSeq
              + ", got="
              + headerSeq
              + "]");
    }
    long pos = HEADER_BYTES;
    long seqWanted = headerSeq;
    long records = 0;
    long replayed = 0;
    ByteBuffer rh = ByteBuffer.allocate(RECORD_HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer body = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    CRC32C rc = new CRC32C();
    String problem = null;
    while (pos < size) {
      if (size - pos < RECORD_HEADER_BYTES) {
        problem = "torn record header at offset " + pos;
        break;
      }
      rh.clear();
      io.readFully(ch, rh, pos);
      rh.flip();
      int len = rh.getInt();
      int crcStored = rh.getInt();
      long seq = rh.getLong();
      byte op = rh.get();
      if (len < 0 || len > MAX_BODY_BYTES) {
        problem = "impossible record length " + len + " at offset " + pos;
        break;
      }
      if (size - pos - RECORD_HEADER_BYTES < len) {
        problem = "torn record body at offset " + pos + " (seq " + seq + ")";
        break;
      }
      if (body.capacity() < len) {
        body =
            ByteBuffer.allocate(Math.max(len, body.capacity() * 2)).order(ByteOrder.LITTLE_ENDIAN);
      }
      body.clear().limit(len);
      io.readFully(ch, body, pos + RECORD_HEADER_BYTES);
      body.flip();
      rc.reset();
      rc.update(rh.array(), 8, 9);
      rc.update(body.array(), 0, len);
      if ((int) rc.getValue() != crcStored) {
        problem = "record checksum mismatch at offset " + pos;
        break;
      }
      if (seq != seqWanted) {
        problem =
            "record breaks the sequence at offset "
                + pos
                + " [expected="
                + seqWanted
                + ", got="
                + seq
                + "]";
        break;
      }
      if (seq >= fromSeq) {
        consumer.accept(seq, op, body.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN));
        replayed++;
      }
      records++;
      seqWanted++;
      pos += RECORD_HEADER_BYTES + len;
    }
    return new ScanResult(size, pos, records, replayed, seqWanted - 1, problem);
  }
}
