package io.flashvec.storage;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The platform threads that issue the positional reads of every {@link PageReader} of a server,
 * shared by all files and all searches.
 *
 * <p>A blocking {@code pread} holds its thread until the device answers, so the number of threads
 * is the most reads the device sees outstanding from searches: the queue depth. An NVMe drive
 * reaches its random-read rate only at a queue depth of 32 or more (a cloud volume of this kind
 * does about 13K reads/s at depth 1 and 70K at depth 32), while a thread parked in the kernel costs
 * a stack and no CPU; hence a default of {@value #DEFAULT_THREADS}, not one per core. Reads beyond
 * that queue here in submission order. Searches never block on these threads: they submit and park,
 * and a completion wakes them.
 *
 * <p>Counts every read it issues ({@link #pagesRead()}, {@link #bytesRead()}), for metrics.
 */
public final class IoThreads implements AutoCloseable {

  /** Default number of I/O threads: the queue depth at which NVMe reaches its rated IOPS. */
  public static final int DEFAULT_THREADS = 32;

  /** The most I/O threads a server may ask for. */
  public static final int MAX_THREADS = 1024;

  private static volatile IoThreads shared;

  private final ThreadPoolExecutor pool;
  private final int threads;
  private final LongAdder pages = new LongAdder();
  private final LongAdder bytes = new LongAdder();

  /**
   * Starts {@code threads} daemon platform threads named {@code flashvec-io-N}.
   *
   * @throws IllegalArgumentException when {@code threads} is outside 1..{@value #MAX_THREADS},
   *     naming the value
   */
  public IoThreads(int threads) {
    if (threads < 1 || threads > MAX_THREADS) {
      throw new IllegalArgumentException(
          "I/O threads out of range [ioThreads=" + threads + ", allowed=1.." + MAX_THREADS + "]");
    }
    this.threads = threads;
    AtomicInteger n = new AtomicInteger();
    this.pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            0,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r ->
                Thread.ofPlatform()
                    .name("flashvec-io-" + n.getAndIncrement())
                    .daemon(true)
                    .unstarted(r));
    pool.prestartAllCoreThreads();
  }

  /**
   * A process-wide pool of {@link #DEFAULT_THREADS} threads, started on first use, for segments
   * opened without a pool of their own (tools and tests); never closed.
   */
  public static IoThreads shared() {
    IoThreads s = shared;
    if (s == null) {
      synchronized (IoThreads.class) {
        s = shared;
        if (s == null) {
          s = shared = new IoThreads(DEFAULT_THREADS);
        }
      }
    }
    return s;
  }

  public int threads() {
    return threads;
  }

  void execute(Runnable read) {
    pool.execute(read);
  }

  void count(long readBytes) {
    pages.add((readBytes + MappedFile.PAGE - 1) / MappedFile.PAGE);
    bytes.add(readBytes);
  }

  /** Pages read through this pool since it started. */
  public long pagesRead() {
    return pages.sum();
  }

  /** Bytes read through this pool since it started. */
  public long bytesRead() {
    return bytes.sum();
  }

  /** Reads queued but not yet issued. */
  public int queued() {
    return pool.getQueue().size();
  }

  /** Stops the threads once the reads already submitted are done. */
  @Override
  public void close() {
    pool.shutdown();
  }
}
