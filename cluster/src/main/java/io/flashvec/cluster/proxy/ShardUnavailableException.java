package io.flashvec.cluster.proxy;

import io.flashvec.index.UnavailableException;

/** A shard none of whose replicas answered; the message carries collection, shard and nodes. */
public final class ShardUnavailableException extends UnavailableException {
  ShardUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
