package io.flashvec.loadgen.client;

/** The server answered with an error status, or with a body that does not parse. */
public final class ServerException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int status;

  /** Creates the exception; {@code status} is the HTTP status (0 when not HTTP). */
  public ServerException(String message, int status) {
    super(message);
    this.status = status;
  }

  /** The HTTP status, or 0. */
  public int status() {
    return status;
  }
}
