package io.flashvec.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Waiting in tests by polling a condition instead of sleeping for a guessed time: a guess is either
 * too short on a loaded machine (a flaky test) or too long everywhere else (a slow suite). Tests
 * never call {@code Thread.sleep}; the build refuses it.
 *
 * <p>{@link #until} returns as soon as the condition holds and fails with the condition's name
 * after the timeout, so the timeout can be generous. {@link #holdsFor} is the other kind of wait:
 * it checks that something does <i>not</i> happen for a while (a build that must keep waiting for
 * space), polling throughout instead of looking once at the end.
 *
 * <p>Polls start 1 ms apart and back off to {@value #MAX_POLL_MILLIS} ms. A condition may throw: an
 * unchecked exception or an error (a failed assertion) ends the wait at once and propagates, a
 * checked one is wrapped in an {@link AssertionError} naming the wait. An interrupted wait keeps
 * the thread's interrupt status and fails.
 */
public final class Await {

  /** The longest pause between two polls. */
  public static final long MAX_POLL_MILLIS = 50;

  /** A condition to poll; it may block briefly (an HTTP call) and may throw. */
  @FunctionalInterface
  public interface Condition {
    boolean holds() throws Exception;
  }

  private Await() {}

  /**
   * Polls {@code condition} until it holds.
   *
   * @param what what is awaited, for the failure message ("builds finished")
   * @throws AssertionError if it does not hold within {@code timeout}
   */
  public static void until(Duration timeout, String what, Condition condition) {
    until(timeout, what, () -> what, condition);
  }

  /**
   * Polls {@code condition} until it holds; a timeout's message ends with {@code lastState}, asked
   * at the failure, so that it can show what the condition saw last (the files still there).
   *
   * @throws AssertionError if it does not hold within {@code timeout}
   */
  public static void until(
      Duration timeout, String what, Supplier<String> lastState, Condition condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long pauseMillis = 1;
    while (!check(what, condition)) {
      if (System.nanoTime() - deadline > 0) {
        String last = lastState.get();
        throw new AssertionError(
            "timed out after "
                + describe(timeout)
                + " waiting for: "
                + what
                + (last.equals(what) ? "" : " [last: " + last + "]"));
      }
      pause(what, pauseMillis);
      pauseMillis = Math.min(MAX_POLL_MILLIS, pauseMillis * 2);
    }
  }

  /**
   * Polls {@code condition} for {@code duration} and fails as soon as it does not hold: for
   * checking that something keeps waiting, or does not happen, for a while.
   *
   * @param what what must stay true, for the failure message ("the build waits for space")
   * @throws AssertionError the first time the condition does not hold
   */
  public static void holdsFor(Duration duration, String what, Condition condition) {
    long end = System.nanoTime() + duration.toNanos();
    long pauseMillis = 1;
    while (true) {
      if (!check(what, condition)) {
        throw new AssertionError("no longer true within " + describe(duration) + ": " + what);
      }
      long leftNanos = end - System.nanoTime();
      if (leftNanos <= 0) {
        return;
      }
      pause(what, Math.min(pauseMillis, Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNanos))));
      pauseMillis = Math.min(MAX_POLL_MILLIS, pauseMillis * 2);
    }
  }

  private static boolean check(String what, Condition condition) {
    try {
      return condition.holds();
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for: " + what, e);
    } catch (Exception e) {
      throw new AssertionError("failed while waiting for: " + what, e);
    }
  }

  @SuppressForbidden("the one place tests pause: between two polls of a condition")
  private static void pause(String what, long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for: " + what, e);
    }
  }

  private static String describe(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }
}
