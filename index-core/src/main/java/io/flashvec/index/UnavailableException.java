package io.flashvec.index;

/** Maps to HTTP 503: the service cannot answer now (recovering, failed storage). */
public class UnavailableException extends FlashVecException {
  public UnavailableException(String message) {
    super(message);
  }

  public UnavailableException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public int httpStatus() {
    return 503;
  }
}
