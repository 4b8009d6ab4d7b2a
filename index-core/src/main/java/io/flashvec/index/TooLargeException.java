package io.flashvec.index;

/** Maps to HTTP 413: a request exceeds a configured limit. */
public class TooLargeException extends FlashVecException {
  public TooLargeException(String message) {
    super(message);
  }

  public TooLargeException(String message, Throwable cause) {
    super(message, cause);
  }

  @Override
  public int httpStatus() {
    return 413;
  }
}
