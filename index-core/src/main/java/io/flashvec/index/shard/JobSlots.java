package io.flashvec.index.shard;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/**
 * At most {@code max} of one shard's optimization jobs (segment builds and merge passes) running at
 * once, across the server's shared executors they run on (Qdrant's {@code
 * optimizers_config.max_optimization_threads}). A job past the limit waits in a queue of this shard
 * and is handed to its executor when a running one ends, so a capped shard holds no pool thread
 * while it waits. Jobs never wait for one another, so the queue cannot deadlock.
 *
 * <p>Thread-safe.
 */
final class JobSlots {

  private final int max;
  private int running; // guarded by this
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>(); // guarded by this

  /**
   * @param max the most jobs at once, at least 1
   */
  JobSlots(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("max must be positive [max=" + max + "]");
    }
    this.max = max;
  }

  /** An executor that runs on {@code target} within these slots; {@code null} stays null. */
  Executor wrap(Executor target) {
    return target == null ? null : job -> submit(target, job);
  }

  /** Jobs running or handed to their executor. */
  synchronized int running() {
    return running;
  }

  /** Jobs waiting for a slot. */
  synchronized int waiting() {
    return waiting.size();
  }

  private void submit(Executor target, Runnable job) {
    Runnable dispatch = () -> target.execute(() -> runThenRelease(job));
    synchronized (this) {
      if (running >= max) {
        waiting.add(() -> dispatchOrRelease(dispatch));
        return;
      }
      running++;
    }
    try {
      dispatch.run();
    } catch (RuntimeException e) {
      release(); // the executor refused it (shut down): the caller sees the refusal
      throw e;
    }
  }

  private void runThenRelease(Runnable job) {
    try {
      job.run();
    } finally {
      release();
    }
  }

  private void dispatchOrRelease(Runnable dispatch) {
    try {
      dispatch.run();
    } catch (RuntimeException e) {
      release(); // the executor shut down: the server is stopping, the job is dropped
    }
  }

  /** Ends a job: its slot goes to the next waiting one, if any. */
  private void release() {
    Runnable next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        running--;
        return;
      }
    }
    next.run(); // keeps the slot
  }
}
