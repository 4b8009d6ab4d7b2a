package io.flashvec.index;

/**
 * A request failed for a reason the client should see. Messages follow {@code what failed
 * [key=value, ...]}; the REST layer turns {@link #httpStatus()} into the response status.
 */
public abstract class FlashVecException extends RuntimeException {

  private final int httpStatus;

  /** A failure answered with {@code httpStatus}; {@code cause} may be {@code null}. */
  protected FlashVecException(int httpStatus, String message, Throwable cause) {
    super(message, cause);
    this.httpStatus = httpStatus;
  }

  /** A failure whose class says its status by overriding {@link #httpStatus()}. */
  protected FlashVecException(String message) {
    this(500, message, null);
  }

  /** As {@link #FlashVecException(String)}, with a cause. */
  protected FlashVecException(String message, Throwable cause) {
    this(500, message, cause);
  }

  /** The HTTP status that fits this failure. */
  public int httpStatus() {
    return httpStatus;
  }
}
