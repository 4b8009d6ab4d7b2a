package io.flashvec.index;

/** Maps to HTTP 503: the service cannot answer now (recovering, failed storage). */
public class UnavailableException extends FlashVecException {
  public UnavailableException(String message) {
    this(message, null);
  }

  public UnavailableException(String message, Throwable cause) {
    super(503, message, cause);
  }
}
