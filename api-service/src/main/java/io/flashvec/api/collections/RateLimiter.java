package io.flashvec.api.collections;

import io.flashvec.api.web.RateLimitException;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * Qdrant's token bucket of a strict mode rate limit: it holds up to {@code perMinute} tokens,
 * starts full, and refills at {@code perMinute / 60} tokens a second. An operation takes as many
 * tokens as it costs, or is refused with 429: at once and for good when it costs more than the
 * bucket holds, else with the seconds until enough tokens are back.
 */
final class RateLimiter {

  private final String kind;
  private final long capacity;
  private final double perSecond;
  private final LongSupplier nanos;
  private double tokens;
  private long last;

  /**
   * @param kind {@code Read} or {@code Write}, for the message
   * @param nanos the clock, {@link System#nanoTime} outside tests
   */
  RateLimiter(String kind, long perMinute, LongSupplier nanos) {
    this.kind = kind;
    this.capacity = perMinute;
    this.perSecond = perMinute / 60.0;
    this.nanos = nanos;
    this.tokens = perMinute;
    this.last = nanos.getAsLong();
  }

  /** Takes {@code cost} tokens, or throws {@link RateLimitException} and takes none. */
  synchronized void consume(long cost) {
    if (cost > capacity) {
      throw new RateLimitException(
          kind
              + " rate limit exceeded, request larger than rate limiter capacity, please try to"
              + " split your request",
          -1);
    }
    long now = nanos.getAsLong();
    tokens = Math.min(capacity, tokens + perSecond * ((now - last) / 1e9));
    last = now;
    if (tokens >= cost) {
      tokens -= cost;
      return;
    }
    double wait = (cost - tokens) / perSecond;
    long seconds = (long) Math.ceil(wait);
    throw new RateLimitException(
        String.format(
            Locale.ROOT,
            "%s rate limit exceeded: Operation requires %d tokens but only %.1f were available."
                + " Retry after %ds",
            kind,
            cost,
            tokens,
            seconds),
        seconds);
  }
}
