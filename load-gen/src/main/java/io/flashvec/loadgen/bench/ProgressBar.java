package io.flashvec.loadgen.bench;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A progress line on stderr with rate and ETA, redrawn in place ({@code \r}) every half second by
 * its own daemon thread, started by the constructor and stopped by {@link #close()}.
 */
public final class ProgressBar implements AutoCloseable {
  private static final int WIDTH = 30;
  private final String what;
  private final long total;
  private final PrintStream out;
  private final AtomicLong done = new AtomicLong();
  private final long startNanos = System.nanoTime();
  private final Thread thread;
  private volatile boolean closed;

  /** Starts drawing; {@code out} null draws nothing. */
  public ProgressBar(String what, long total, PrintStream out) {
    this.what = what;
    this.total = total;
    this.out = out;
    this.thread = new Thread(this::loop, "loadgen-progress");
    thread.setDaemon(true);
    if (out != null) {
      thread.start();
    }
  }

  /** Adds {@code n} completed units. */
  public void add(long n) {
    done.addAndGet(n);
  }

  /** The line as it would be drawn now. */
  public String line() {
    long d = done.get();
    double secs = Math.max(1e-9, (System.nanoTime() - startNanos) / 1e9);
    double rate = d / secs;
    double frac = total == 0 ? 1 : Math.min(1, (double) d / total);
    int filled = (int) Math.round(frac * WIDTH);
    String eta = rate > 0 ? formatSeconds((total - d) / rate) : "--:--";
    return String.format(
        Locale.ROOT,
        "%s [%s%s] %5.1f%% %d/%d %.0f/s elapsed %s ETA %s",
        what,
        "#".repeat(filled),
        ".".repeat(WIDTH - filled),
        frac * 100,
        d,
        total,
        rate,
        formatSeconds(secs),
        eta);
  }

  static String formatSeconds(double s) {
    long t = Math.round(s);
    return t >= 3600
        ? String.format(Locale.ROOT, "%d:%02d:%02d", t / 3600, (t / 60) % 60, t % 60)
        : String.format(Locale.ROOT, "%d:%02d", t / 60, t % 60);
  }

  private void loop() {
    while (!closed) {
      out.print("\r" + line());
      out.flush();
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Stops the drawing thread and prints the final line. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (out != null) {
      thread.interrupt();
      try {
        thread.join(1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      out.println("\r" + line());
    }
  }
}
