package io.flashvec.cluster;

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

  /** A collection's metadata. */
  record CollectionMeta(String name, CollectionConfig config, long createdAtMillis) {}

  List<CollectionMeta> list();

  Optional<CollectionMeta> get(String name);

  /** Records a new collection; returns false if one with that name exists. */
  boolean createIfAbsent(CollectionMeta meta);

  /** Removes a collection; returns false if it did not exist. */
  boolean remove(String name);
}
