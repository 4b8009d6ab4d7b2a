package io.flashvec.cluster.metadata;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A process's view of each shard's primary ({@code "<collection>/<shard>"} → {@link Leader}). News
 * arrives from the watch, a reload and this process's own takeovers in no fixed order; a later
 * epoch always wins, so an older view never replaces a newer one.
 *
 * <p>Thread-safe.
 */
final class Leaders {

  private final Map<String, Leader> leaders = new ConcurrentHashMap<>();

  Leader get(String shardKey) {
    return leaders.get(shardKey);
  }

  /** A primary learnt from etcd or from this process's takeover. */
  void learn(String shardKey, Leader l) {
    leaders.merge(shardKey, l, Leader::later);
  }

  /** The shard's primary key was deleted at {@code revision}: a later takeover stays. */
  void deleted(String shardKey, long revision) {
    leaders.computeIfPresent(shardKey, (k, old) -> old.epoch() >= revision ? old : null);
  }

  /** The primary of epoch {@code epoch} resigned. */
  void resigned(String shardKey, long epoch) {
    leaders.computeIfPresent(shardKey, (k, old) -> old.epoch() == epoch ? null : old);
  }

  /** etcd says the shard has no primary now. */
  void none(String shardKey) {
    leaders.remove(shardKey);
  }

  /** Replaces the view with {@code snapshot}, read at {@code revision}; takeovers after it stay. */
  void replace(Map<String, Leader> snapshot, long revision) {
    snapshot.forEach(this::learn);
    leaders
        .entrySet()
        .removeIf(e -> !snapshot.containsKey(e.getKey()) && e.getValue().epoch() <= revision);
  }
}
