package io.flashvec.cluster.transport;

import io.flashvec.index.ConflictException;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.TooLargeException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * Carries {@link FlashVecException}s across gRPC: the server turns them into a status whose code
 * says whether another replica may answer (only {@code UNAVAILABLE}, {@code DEADLINE_EXCEEDED},
 * {@code NOT_FOUND} of a replica, {@code INTERNAL} and the like are retried); the client turns the
 * status back into the exception the REST layer maps to an HTTP status. A replica that refuses a
 * write from a replaced primary ({@link StaleEpochException}) answers {@code FAILED_PRECONDITION}.
 */
public final class GrpcErrors {

  private GrpcErrors() {}

  /** The status a server answers for {@code t}. */
  public static StatusRuntimeException toStatus(Throwable t, String where) {
    String msg = (t.getMessage() == null ? t.toString() : t.getMessage()) + " " + where;
    Status s;
    if (t instanceof StaleEpochException) {
      s = Status.FAILED_PRECONDITION;
    } else if (t instanceof FlashVecException f) {
      s =
          switch (f.httpStatus()) {
            case 400 -> Status.INVALID_ARGUMENT;
            case 404 -> Status.NOT_FOUND;
            case 409 -> Status.ALREADY_EXISTS;
            case 413 -> Status.RESOURCE_EXHAUSTED;
            case 503 -> Status.UNAVAILABLE;
            default -> Status.INTERNAL;
          };
    } else if (t instanceof IllegalArgumentException) {
      s = Status.INVALID_ARGUMENT;
    } else {
      s = Status.INTERNAL;
    }
    return s.withDescription(msg).withCause(t).asRuntimeException();
  }

  /** Whether a call that failed with {@code e} is worth retrying on another replica. */
  public static boolean retryable(StatusRuntimeException e) {
    return switch (e.getStatus().getCode()) {
      case INVALID_ARGUMENT, ALREADY_EXISTS, RESOURCE_EXHAUSTED, CANCELLED -> false;
      default -> true;
    };
  }

  /**
   * The client-side exception for a non-retryable status, or {@code null} when the caller should
   * treat it as a failed replica.
   */
  public static FlashVecException clientError(StatusRuntimeException e) {
    String d = e.getStatus().getDescription();
    return switch (e.getStatus().getCode()) {
      case INVALID_ARGUMENT -> new InvalidInputException(d);
      case ALREADY_EXISTS -> new ConflictException(d);
      case RESOURCE_EXHAUSTED -> new TooLargeException(d);
      case NOT_FOUND -> new NotFoundException(d);
      default -> null;
    };
  }
}
