package io.flashvec.cluster.node;

import io.flashvec.storage.ThreadPriority;
import java.util.concurrent.ThreadFactory;

/**
 * What the threads that serve requests owe the engine: a lowered CPU priority for threads whose
 * work must not take the cycles searches need.
 */
public final class EngineThreads {

  private EngineThreads() {}

  /**
   * Threads from {@code base} that lower their own CPU priority to Linux nice {@code nice} when
   * they start ({@link Thread#setPriority} does nothing on Linux).
   */
  public static ThreadFactory lowering(ThreadFactory base, int nice) {
    return ThreadPriority.lowering(base, nice);
  }
}
