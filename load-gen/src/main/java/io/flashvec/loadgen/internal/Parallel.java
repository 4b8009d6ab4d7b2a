package io.flashvec.loadgen.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs CPU-bound loops over an index range on a short-lived pool of named platform threads that
 * this class creates and shuts down per call (the load generator's CPU work is a few big batches,
 * never a hot per-request path).
 */
public final class Parallel {
  private Parallel() {}

  /** A body that handles the half-open chunk {@code [from, to)}. */
  @FunctionalInterface
  public interface RangeBody {
    void run(int from, int to);
  }

  /** The number of threads to use when the user gave none: the processors this JVM may use. */
  public static int defaultThreads() {
    return Math.max(1, Runtime.getRuntime().availableProcessors());
  }

  /** A thread factory whose threads are named {@code prefix-N} and are daemons. */
  public static ThreadFactory namedFactory(String prefix) {
    AtomicInteger seq = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + seq.getAndIncrement());
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * Splits {@code [0, n)} into chunks of {@code chunk} indexes and runs them on {@code threads}
   * threads; returns when all are done and rethrows the first failure.
   */
  public static void forRange(String name, int n, int chunk, int threads, RangeBody body) {
    if (n <= 0) {
      return;
    }
    int chunks = (n + chunk - 1) / chunk;
    int t = Math.max(1, Math.min(threads, chunks));
    if (t == 1) {
      body.run(0, n);
      return;
    }
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(t, namedFactory(name));
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < t; i++) {
        futures.add(
            pool.submit(
                () -> {
                  for (int c; (c = next.getAndIncrement()) < chunks; ) {
                    int from = c * chunk;
                    body.run(from, Math.min(n, from + chunk));
                  }
                }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted [task=" + name + "]", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException("task failed [task=" + name + "]", e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }
}
