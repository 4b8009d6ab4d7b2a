package io.flashvec.index.shard;

/**
 * The background jobs that write a shard's files (index builds, compactions, payload-index builds)
 * and the shard's closed flag. A job runs between {@link #enter} and {@link #exit}; {@link #close}
 * refuses new jobs and {@link #awaitIdle} waits for the running ones, so no job writes into a
 * directory that is being reopened or deleted. Running jobs notice {@link #cancelled} at their next
 * step. {@link #stop} cancels them and refuses new ones earlier, while the shard still serves reads
 * and writes (the server is shutting down).
 *
 * <p>Thread-safe.
 */
final class BackgroundJobs {

  private int running; // guarded by this
  private volatile boolean closed;
  private volatile boolean stopping;

  /** Registers a job; false once the shard is closed (the job must not run). */
  synchronized boolean enter() {
    if (closed || stopping) {
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

  /** Whether running jobs must stop: the shard is closing, or background work was stopped. */
  boolean cancelled() {
    return closed || stopping;
  }

  /** Cancels background work (running jobs stop at their next check) and refuses new jobs. */
  void stop() {
    stopping = true;
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
