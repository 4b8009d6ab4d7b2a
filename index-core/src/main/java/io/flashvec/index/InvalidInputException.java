package io.flashvec.index;

/** Maps to HTTP 400: bad input: a request value is wrong (dimension, NaN, unknown name). */
public class InvalidInputException extends FlashVecException {
  public InvalidInputException(String message) {
    super(400, message, null);
  }
}
