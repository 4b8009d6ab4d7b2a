package io.flashvec.storage;

import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The real file system, except that the JVM halts ({@link Runtime#halt}: no shutdown hooks, no
 * buffered output flushed, no file closed) the {@code hit}-th time a durable step reaches one armed
 * {@link CrashPoint}: a SIGKILL at an exact point, for crash tests of the real server ({@code
 * flashvec.testing.crash-point}). The process exits with {@link #EXIT_STATUS} after one log line
 * naming the point, so a test can tell this stop from its own kill.
 *
 * <p>Thread-safe; its only state is the count of hits.
 */
public final class HaltingFileIO extends FileIO {

  private static final Logger LOG = LoggerFactory.getLogger(HaltingFileIO.class);

  /** The exit status of a process halted at its crash point. */
  public static final int EXIT_STATUS = 86;

  private final CrashPoint point;
  private final int hit;
  private final AtomicInteger hits = new AtomicInteger();

  /**
   * Halts at the {@code hit}-th time {@code point} is reached (1 is the first).
   *
   * @throws IllegalArgumentException if {@code hit} is not positive
   */
  public HaltingFileIO(CrashPoint point, int hit) {
    if (hit < 1) {
      throw new IllegalArgumentException(
          "the crash point's hit counts from 1 [point=" + point + ", hit=" + hit + "]");
    }
    this.point = java.util.Objects.requireNonNull(point, "point");
    this.hit = hit;
  }

  public CrashPoint point() {
    return point;
  }

  public int hit() {
    return hit;
  }

  @Override
  public void crashPoint(CrashPoint reached) {
    if (reached == point && hits.incrementAndGet() == hit) {
      LOG.error("crash point reached; halting the JVM [point={}, hit={}]", point, hit);
      System.err.flush();
      System.out.flush();
      Runtime.getRuntime().halt(EXIT_STATUS);
    }
  }
}
