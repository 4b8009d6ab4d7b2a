package io.flashvec.api.web;

import io.flashvec.index.FlashVecException;

/**
 * Maps to HTTP 429 with Qdrant's message {@code Rate limiting exceeded: ...} and, when waiting
 * helps, a {@code Retry-After} header of whole seconds ({@link ErrorHandler} sets it).
 */
public class RateLimitException extends FlashVecException {

  private final long retryAfterSeconds;

  /**
   * @param retryAfterSeconds seconds until the request could pass, rounded up; {@code -1} when it
   *     never can (it asks for more than the limiter holds)
   */
  public RateLimitException(String description, long retryAfterSeconds) {
    super(429, "Rate limiting exceeded: " + description, null);
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** Seconds to wait before a retry, or {@code -1} when a retry cannot pass. */
  public long retryAfterSeconds() {
    return retryAfterSeconds;
  }
}
