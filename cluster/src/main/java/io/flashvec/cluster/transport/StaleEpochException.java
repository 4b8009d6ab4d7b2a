package io.flashvec.cluster.transport;

import io.flashvec.index.UnavailableException;

/**
 * A replicated write refused by a replica because the primary that forwarded it has been replaced:
 * its epoch is lower than one the replica has accepted. Crosses gRPC as {@code
 * FAILED_PRECONDITION}, which tells the sender that it is no longer the shard's primary.
 */
public final class StaleEpochException extends UnavailableException {
  public StaleEpochException(String message) {
    super(message);
  }
}
