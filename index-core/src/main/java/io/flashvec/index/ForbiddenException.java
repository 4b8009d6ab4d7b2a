package io.flashvec.index;

/** Maps to HTTP 403: the request asks for something the server does not let any client do. */
public class ForbiddenException extends FlashVecException {
  public ForbiddenException(String message) {
    super(403, message, null);
  }
}
