package io.flashvec.api.web;

import io.flashvec.index.FlashVecException;
import java.time.Duration;

/**
 * Maps to HTTP 408, as Qdrant answers a request that did not finish within its {@code timeout}
 * query parameter.
 */
public class RequestTimeoutException extends FlashVecException {

  public RequestTimeoutException(Duration timeout) {
    super(
        408,
        "Timeout: the request did not finish within its timeout of "
            + timeout.toSeconds()
            + " s (the work is not cancelled: a write may still be applied) [timeout="
            + timeout.toSeconds()
            + "]",
        null);
  }
}
