package io.flashvec.api.web;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.LongSupplier;

/**
 * Keeps a log line that clients can trigger at will from flooding the log: per key, at most {@code
 * linesPerWindow} lines in each window; the lines beyond are counted, and the first line of a later
 * window reports how many were left out.
 *
 * <p>Thread-safe; a key costs one small object, and keys are a fixed set (rejection reasons).
 */
final class LogLimiter {
  private final int linesPerWindow;
  private final long windowNanos;
  private final LongSupplier clock;
  private final ConcurrentMap<String, Window> windows = new ConcurrentHashMap<>();

  LogLimiter(int linesPerWindow, long windowNanos, LongSupplier clock) {
    if (linesPerWindow < 1 || windowNanos <= 0) {
      throw new IllegalArgumentException(
          "a window admits at least one line [linesPerWindow="
              + linesPerWindow
              + ", windowNanos="
              + windowNanos
              + "]");
    }
    this.linesPerWindow = linesPerWindow;
    this.windowNanos = windowNanos;
    this.clock = clock;
  }

  /**
   * Whether a line for {@code key} may be written now: {@code -1} if not (it is counted), else the
   * number of lines for this key left out since the last one written (0 usually).
   */
  long admit(String key) {
    Window w = windows.computeIfAbsent(key, k -> new Window());
    long now = clock.getAsLong();
    synchronized (w) {
      if (w.lines == 0 || now - w.start >= windowNanos) {
        w.start = now;
        w.lines = 0;
      }
      if (w.lines >= linesPerWindow) {
        w.suppressed++;
        return -1;
      }
      w.lines++;
      long left = w.suppressed;
      w.suppressed = 0;
      return left;
    }
  }

  private static final class Window {
    long start;
    int lines;
    long suppressed;
  }
}
