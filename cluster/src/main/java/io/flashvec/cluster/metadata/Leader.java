package io.flashvec.cluster.metadata;

/**
 * A shard's primary: {@code epoch} is the etcd revision that created its key, so a later primary of
 * the shard always has a higher one (the fencing token of its writes).
 */
public record Leader(String node, long epoch) {

  /** Of two views of a shard's primary, the later one. */
  static Leader later(Leader a, Leader b) {
    return a.epoch() > b.epoch() ? a : b;
  }
}
