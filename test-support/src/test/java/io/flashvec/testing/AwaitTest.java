package io.flashvec.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Polling returns as soon as the condition holds and fails naming what it waited for. */
class AwaitTest {

  @Test
  void untilReturnsOnceTheConditionHolds() {
    AtomicInteger polls = new AtomicInteger();
    Await.until(Duration.ofSeconds(10), "the third poll", () -> polls.incrementAndGet() == 3);
    assertThat(polls).hasValue(3);
  }

  @Test
  void untilFailsAfterTheTimeoutNamingTheWait() {
    assertThatThrownBy(() -> Await.until(Duration.ofMillis(30), "pigs to fly", () -> false))
        .isInstanceOf(AssertionError.class)
        .hasMessage("timed out after 30 ms waiting for: pigs to fly");
  }

  @Test
  void aTimeoutShowsTheLastStateTheConditionSaw() {
    AtomicInteger polls = new AtomicInteger();
    assertThatThrownBy(
            () ->
                Await.until(
                    Duration.ofMillis(30),
                    "no files left",
                    () -> "files " + polls.get(),
                    () -> polls.incrementAndGet() < 0))
        .isInstanceOf(AssertionError.class)
        .hasMessageStartingWith("timed out after 30 ms waiting for: no files left [last: files ")
        .hasMessageEndingWith(polls.get() + "]");
  }

  @Test
  void aFailedAssertionInsideTheConditionEndsTheWaitAtOnce() {
    AtomicInteger polls = new AtomicInteger();
    assertThatThrownBy(
            () ->
                Await.until(
                    Duration.ofSeconds(10),
                    "x",
                    () -> {
                      polls.incrementAndGet();
                      throw new AssertionError("build failed");
                    }))
        .hasMessage("build failed");
    assertThat(polls).hasValue(1);
  }

  @Test
  void aCheckedExceptionIsWrappedWithTheWaitsName() {
    assertThatThrownBy(
            () ->
                Await.until(
                    Duration.ofSeconds(10),
                    "the server",
                    () -> {
                      throw new IOException("refused");
                    }))
        .isInstanceOf(AssertionError.class)
        .hasMessage("failed while waiting for: the server")
        .hasCauseInstanceOf(IOException.class);
  }

  @Test
  void holdsForPollsForTheWholeDuration() {
    AtomicInteger polls = new AtomicInteger();
    long t0 = System.nanoTime();
    Await.holdsFor(Duration.ofMillis(60), "still waiting", () -> polls.incrementAndGet() > 0);
    assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(Duration.ofMillis(60).toNanos());
    assertThat(polls.get()).isGreaterThan(2);
  }

  @Test
  void holdsForFailsTheFirstTimeTheConditionIsFalse() {
    AtomicInteger polls = new AtomicInteger();
    assertThatThrownBy(
            () ->
                Await.holdsFor(
                    Duration.ofSeconds(10), "the write waits", () -> polls.incrementAndGet() < 3))
        .isInstanceOf(AssertionError.class)
        .hasMessage("no longer true within 10 s: the write waits");
    assertThat(polls).hasValue(3);
  }
}
