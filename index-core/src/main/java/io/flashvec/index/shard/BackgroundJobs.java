package io.flashvec.index.shard;

/**
 * The background jobs that write a shard's files (index builds, compactions, payload-index builds)
 * and the shard's closed flag. A job runs between {@link #enter} and {@link #exit}; {@link
 * #closeAndAwait} refuses new jobs and waits for the running ones, so no job writes into a
 * directory that is being reopened or deleted. Running jobs notice {@link #closed} at their next
 * step.
 *
 * <p>Thread-safe.
 */
final class BackgroundJobs {

  private int running; // guarded by this
  private volatile boolean closed;

  /** Registers a job; false once the shard is closed (the job must not run). */
  synchronized boolean enter() {
    if (closed) {
      return false;
    }
    running++;
    return true;
  }

  /** Ends a job registered by {@link #enter}. */
  synchronized void exit() {
    running--;
    notifyAll();
  }

  /** Whether the shard is closed (or closing). */
  boolean closed() {
    return closed;
  }

  /** Marks the shard closed; new jobs are refused from now on. */
  synchronized void close() {
    closed = true;
  }

  /** Waits until every registered job has exited (keeps the interrupt status). */
  synchronized void awaitIdle() {
    boolean interrupted = false;
    while (running > 0) {
      try {
        wait();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
