package io.flashvec.cluster.metadata;

import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.index.payload.PayloadSchema;
import java.util.List;

/**
 * A collection with its shard placement ({@code replicas.get(shard)} lists node ids, in
 * primary-preference order) and its payload indexes, which every replica applies.
 *
 * @param revision etcd's modification revision of the collection's key (0 before it was read from
 *     etcd); orders changes that reach a node both directly and through the watch
 */
public record Placement(
    CollectionMeta meta, List<List<String>> replicas, PayloadSchema payloadSchema, long revision) {

  public Placement {
    replicas = List.copyOf(replicas);
    if (payloadSchema == null) {
      payloadSchema = PayloadSchema.EMPTY;
    }
  }

  public Placement(CollectionMeta meta, List<List<String>> replicas) {
    this(meta, replicas, PayloadSchema.EMPTY, 0);
  }

  /** The collection's name. */
  public String name() {
    return meta.name();
  }

  /** Its number of shards. */
  public int shards() {
    return replicas.size();
  }

  /** The nodes that hold replicas of {@code shard}, in primary-preference order. */
  public List<String> replicas(int shard) {
    return replicas.get(shard);
  }

  Placement withRevision(long r) {
    return new Placement(meta, replicas, payloadSchema, r);
  }

  /** Of two versions of a collection's placement, the later one. */
  static Placement later(Placement a, Placement b) {
    return a.revision() > b.revision() ? a : b;
  }
}
