package io.flashvec.storage;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lowers the calling thread's CPU priority with the kernel, so that background work (live graph
 * inserts, compactions) yields the cores to request threads when both want them.
 *
 * <p>{@link Thread#setPriority} does nothing on Linux unless the JVM runs with {@code
 * -XX:ThreadPriorityPolicy=1} as root; this calls {@code setpriority(PRIO_PROCESS, gettid(), nice)}
 * through the foreign-function API instead, which any user may do to raise a thread's nice value
 * (lowering its priority). Under the kernel's fair scheduler a thread at nice 10 gets about a tenth
 * of a core that a nice-0 thread also wants, and all of an idle core. Where the calls are
 * unavailable (not Linux, no native access) it does nothing and says so.
 */
public final class ThreadPriority {

  private static final Logger LOG = LoggerFactory.getLogger(ThreadPriority.class);
  private static final int PRIO_PROCESS = 0;
  private static final MethodHandle GETTID =
      find("gettid", FunctionDescriptor.of(ValueLayout.JAVA_INT));
  private static final MethodHandle SETPRIORITY =
      find(
          "setpriority",
          FunctionDescriptor.of(
              ValueLayout.JAVA_INT,
              ValueLayout.JAVA_INT,
              ValueLayout.JAVA_INT,
              ValueLayout.JAVA_INT));

  private ThreadPriority() {}

  private static MethodHandle find(String name, FunctionDescriptor fd) {
    try {
      Linker linker = Linker.nativeLinker();
      return linker.defaultLookup().find(name).map(a -> linker.downcallHandle(a, fd)).orElse(null);
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  /**
   * Sets the calling (platform) thread's nice value to {@code nice} (0..19; higher is lower
   * priority). Returns whether the kernel took it.
   */
  public static boolean lowerCurrent(int nice) {
    if (nice < 0 || nice > 19) {
      throw new IllegalArgumentException("nice out of range [nice=" + nice + ", allowed=0..19]");
    }
    if (GETTID == null || SETPRIORITY == null || Thread.currentThread().isVirtual()) {
      return false;
    }
    try {
      int tid = (int) GETTID.invokeExact();
      return (int) SETPRIORITY.invokeExact(PRIO_PROCESS, tid, nice) == 0;
    } catch (Throwable t) {
      return false;
    }
  }

  /**
   * {@link #lowerCurrent} when {@code nice} is above 0, with a warning if the kernel refuses (the
   * thread then competes with requests as an equal).
   */
  public static void lowerCurrentOrWarn(int nice) {
    if (nice > 0 && !lowerCurrent(nice)) {
      LOG.warn(
          "could not lower the priority of a thread; it competes with requests as an equal"
              + " [thread={}, nice={}]",
          Thread.currentThread().getName(),
          nice);
    }
  }

  /**
   * Threads of {@code base} that first lower their own priority to {@code nice} when they start.
   */
  public static ThreadFactory lowering(ThreadFactory base, int nice) {
    return task ->
        base.newThread(
            () -> {
              lowerCurrentOrWarn(nice);
              task.run();
            });
  }
}
