package io.flashvec.index;

/** Maps to HTTP 413: a request exceeds a configured limit. */
public class TooLargeException extends FlashVecException {
  public TooLargeException(String message) {
    super(413, message, null);
  }
}
