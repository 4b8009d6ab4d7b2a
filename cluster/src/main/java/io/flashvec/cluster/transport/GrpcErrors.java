package io.flashvec.cluster.transport;

import io.flashvec.index.ConflictException;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.TooLargeException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * Carries {@link FlashVecException}s across gRPC: the server turns them into a status whose code
 * says whether another replica may answer (only {@code UNAVAILABLE}, {@code DEADLINE_EXCEEDED},
 * {@code NOT_FOUND} of a replica, {@code INTERNAL} and the like are retried); the client turns the
 * status back into the exception the REST layer maps to an HTTP status. A replica that refuses a
 * write from a replaced primary ({@link StaleEpochException}) answers {@code FAILED_PRECONDITION}.
 *
 * <p>A {@link FlashVecException}'s HTTP status also travels in the {@value #HTTP_STATUS_KEY}
 * trailer, so statuses that share a gRPC code keep their own HTTP status at the client: a full disk
 * or an exhausted memory budget (507) and a too-large request (413) are both {@code
 * RESOURCE_EXHAUSTED}, and neither is worth another replica.
 */
public final class GrpcErrors {

  /** The trailer that carries the HTTP status of a {@link FlashVecException}. */
  static final String HTTP_STATUS_KEY = "flashvec-http-status";

  private static final Metadata.Key<String> HTTP_STATUS =
      Metadata.Key.of(HTTP_STATUS_KEY, Metadata.ASCII_STRING_MARSHALLER);

  private GrpcErrors() {}

  /** The status a server answers for {@code t}. */
  public static StatusRuntimeException toStatus(Throwable t, String where) {
    String msg = (t.getMessage() == null ? t.toString() : t.getMessage()) + " " + where;
    Status s;
    Metadata trailers = new Metadata();
    if (t instanceof StaleEpochException) {
      s = Status.FAILED_PRECONDITION;
    } else if (t instanceof FlashVecException f) {
      s =
          switch (f.httpStatus()) {
            case 400 -> Status.INVALID_ARGUMENT;
            case 404 -> Status.NOT_FOUND;
            case 409 -> Status.ALREADY_EXISTS;
            case 413, 507 -> Status.RESOURCE_EXHAUSTED;
            case 503 -> Status.UNAVAILABLE;
            default -> Status.INTERNAL;
          };
      trailers.put(HTTP_STATUS, Integer.toString(f.httpStatus()));
    } else if (t instanceof IllegalArgumentException) {
      s = Status.INVALID_ARGUMENT;
    } else {
      s = Status.INTERNAL;
    }
    return s.withDescription(msg).withCause(t).asRuntimeException(trailers);
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
      case RESOURCE_EXHAUSTED ->
          httpStatus(e) == 507 ? new RemoteFailure(507, d) : new TooLargeException(d);
      case NOT_FOUND -> new NotFoundException(d);
      default -> null;
    };
  }

  /** The HTTP status the server's trailer carries, or -1. */
  static int httpStatus(StatusRuntimeException e) {
    Metadata m = e.getTrailers();
    String v = m == null ? null : m.get(HTTP_STATUS);
    if (v == null) {
      return -1;
    }
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException bad) {
      return -1;
    }
  }

  /** A failure another node answered with an HTTP status that has no exception class here. */
  static final class RemoteFailure extends FlashVecException {
    RemoteFailure(int httpStatus, String message) {
      super(httpStatus, message, null);
    }
  }
}
