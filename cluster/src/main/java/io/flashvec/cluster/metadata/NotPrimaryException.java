package io.flashvec.cluster.metadata;

import io.flashvec.index.UnavailableException;

/**
 * A change refused because this node is no longer the shard's primary of that epoch: another
 * primary has been elected, or the key died with this node's lease.
 */
public final class NotPrimaryException extends UnavailableException {
  public NotPrimaryException(String message) {
    super(message);
  }
}
