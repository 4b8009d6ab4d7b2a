package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.web.RateLimitException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

  private final AtomicLong now = new AtomicLong(1_000_000_000L);

  private void advanceSeconds(double s) {
    now.addAndGet((long) (s * 1e9));
  }

  @Test
  void startsFullAndRefusesWhatItCannotHold() {
    RateLimiter r = new RateLimiter("Read", 4, now::get);
    assertThatThrownBy(() -> r.consume(5))
        .isInstanceOfSatisfying(
            RateLimitException.class,
            e -> {
              assertThat(e.httpStatus()).isEqualTo(429);
              assertThat(e.retryAfterSeconds()).isEqualTo(-1);
            })
        .hasMessage(
            "Rate limiting exceeded: Read rate limit exceeded, request larger than rate limiter"
                + " capacity, please try to split your request");
    r.consume(4);
    assertThatThrownBy(() -> r.consume(4))
        .isInstanceOfSatisfying(
            RateLimitException.class, e -> assertThat(e.retryAfterSeconds()).isEqualTo(60))
        .hasMessage(
            "Rate limiting exceeded: Read rate limit exceeded: Operation requires 4 tokens but only"
                + " 0.0 were available. Retry after 60s");
  }

  @Test
  void refillsAtItsRatePerMinuteUpToItsCapacity() {
    RateLimiter r = new RateLimiter("Write", 60, now::get);
    r.consume(60);
    advanceSeconds(1.5);
    r.consume(1); // 1.5 tokens back
    assertThatThrownBy(() -> r.consume(2))
        .isInstanceOfSatisfying(
            RateLimitException.class, e -> assertThat(e.retryAfterSeconds()).isEqualTo(2))
        .hasMessageContaining("requires 2 tokens but only 0.5 were available. Retry after 2s");
    advanceSeconds(3600);
    r.consume(60); // capped at capacity: no more than 60
    assertThatThrownBy(() -> r.consume(1)).isInstanceOf(RateLimitException.class);
  }

  @Test
  void aRefusedOperationTakesNothing() {
    RateLimiter r = new RateLimiter("Read", 10, now::get);
    r.consume(7);
    assertThatThrownBy(() -> r.consume(7)).isInstanceOf(RateLimitException.class);
    r.consume(3);
  }
}
