package io.flashvec.cluster.metadata;

import io.flashvec.index.CollectionConfig;
import java.io.Closeable;
import java.util.List;
import java.util.Optional;

/**
 * Where the cluster's metadata lives: which collections exist and how they are configured (and, in
 * cluster mode, shard placement and the node registry). Standalone keeps it in a local file ({@link
 * LocalMetadataStore}); cluster mode in etcd. Implementations are thread-safe and every change is
 * durable when the method returns.
 */
public interface MetadataStore extends Closeable {

  /** A collection's metadata; {@code tuning} is what {@code PATCH} may change. */
  record CollectionMeta(
      String name,
      CollectionConfig config,
      long createdAtMillis,
      io.flashvec.index.CollectionTuning tuning) {
    public CollectionMeta {
      if (tuning == null) {
        tuning = io.flashvec.index.CollectionTuning.DEFAULT;
      }
    }

    public CollectionMeta(String name, CollectionConfig config, long createdAtMillis) {
      this(name, config, createdAtMillis, null);
    }
  }

  List<CollectionMeta> list();

  Optional<CollectionMeta> get(String name);

  /** Records a new collection; returns false if one with that name exists. */
  boolean createIfAbsent(CollectionMeta meta);

  /** Replaces a collection's changeable settings; returns false if it does not exist. */
  boolean updateTuning(String name, io.flashvec.index.CollectionTuning tuning);

  /**
   * Replaces a collection's config (a vector field added or deleted) in one atomic write; returns
   * false if it does not exist. Only the standalone store can: cluster mode refuses the collections
   * whose fields could change (named vectors) before asking.
   */
  default boolean updateConfig(String name, CollectionConfig config) {
    throw new UnsupportedOperationException(
        "vector fields cannot be added or deleted in cluster mode [collection=" + name + "]");
  }

  /** Removes a collection; returns false if it did not exist. */
  boolean remove(String name);
}
