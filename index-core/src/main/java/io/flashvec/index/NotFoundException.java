package io.flashvec.index;

/** Maps to HTTP 404: a collection or point does not exist. */
public class NotFoundException extends FlashVecException {
  public NotFoundException(String message) {
    super(404, message, null);
  }
}
