package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogLimiterTest {
  private final AtomicLong now = new AtomicLong(1_000);
  private final LogLimiter limiter = new LogLimiter(3, 100, now::get);

  @Test
  void admitsTheFirstLinesOfAWindowThenCountsTheRestAndReportsThemLater() {
    assertThat(limiter.admit("bad_request")).isZero();
    assertThat(limiter.admit("bad_request")).isZero();
    assertThat(limiter.admit("bad_request")).isZero();
    assertThat(limiter.admit("bad_request")).isEqualTo(-1);
    assertThat(limiter.admit("bad_request")).isEqualTo(-1);
    assertThat(limiter.admit("unauthorized")).as("keys are limited apart").isZero();
    now.addAndGet(99);
    assertThat(limiter.admit("bad_request")).isEqualTo(-1);
    now.addAndGet(1);
    assertThat(limiter.admit("bad_request")).as("3 left out").isEqualTo(3);
    assertThat(limiter.admit("bad_request")).isZero();
  }

  @Test
  void aQuietKeyStartsAFreshWindow() {
    assertThat(limiter.admit("k")).isZero();
    now.addAndGet(1_000_000);
    for (int i = 0; i < 3; i++) {
      assertThat(limiter.admit("k")).isZero();
    }
    assertThat(limiter.admit("k")).isEqualTo(-1);
  }

  @Test
  void aWindowThatAdmitsNothingIsRefused() {
    assertThatThrownBy(() -> new LogLimiter(0, 100, now::get))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a window admits at least one line [linesPerWindow=0, windowNanos=100]");
  }
}
