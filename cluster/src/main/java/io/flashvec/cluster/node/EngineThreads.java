package io.flashvec.cluster.node;

import io.flashvec.index.shard.IndexAssist;
import io.flashvec.storage.ThreadPriority;
import java.util.concurrent.ThreadFactory;

/**
 * What the threads that serve requests owe the engine: the live-graph insert a search left to its
 * thread (ADR 0017), run once its response is out, and a lowered CPU priority for threads whose
 * work must not take the cycles searches need.
 */
public final class EngineThreads {

  private EngineThreads() {}

  /** Runs the live-graph insert the last search on this thread left, if any. */
  public static void runAssistedInsert() {
    IndexAssist.runPending();
  }

  /** Live-graph inserts run by searching threads since the process started. */
  public static long assistedInserts() {
    return IndexAssist.inserts();
  }

  /**
   * Threads from {@code base} that lower their own CPU priority to Linux nice {@code nice} when
   * they start ({@link Thread#setPriority} does nothing on Linux).
   */
  public static ThreadFactory lowering(ThreadFactory base, int nice) {
    return ThreadPriority.lowering(base, nice);
  }
}
