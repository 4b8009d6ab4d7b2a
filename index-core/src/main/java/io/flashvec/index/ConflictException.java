package io.flashvec.index;

/** Maps to HTTP 409: the resource already exists or the request conflicts with its state. */
public class ConflictException extends FlashVecException {
  public ConflictException(String message) {
    super(409, message, null);
  }
}
