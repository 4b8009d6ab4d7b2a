package io.flashvec.index;

/**
 * A request failed for a reason the client should see. Messages follow {@code what failed
 * [key=value, ...]}; the REST layer turns {@link #httpStatus()} into the response status.
 */
public abstract class FlashVecException extends RuntimeException {

  protected FlashVecException(String message) {
    super(message);
  }

  protected FlashVecException(String message, Throwable cause) {
    super(message, cause);
  }

  /** The HTTP status that fits this failure. */
  public abstract int httpStatus();
}
