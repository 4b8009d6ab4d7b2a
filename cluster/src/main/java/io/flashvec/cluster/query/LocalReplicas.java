package io.flashvec.cluster.query;

import io.flashvec.cluster.local.DataDirectory;
import io.flashvec.cluster.local.LocalData;
import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.shard.Shard;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard replicas a query node holds, in its {@link DataDirectory}: replica {@code (c, k)} is
 * the directory {@code <data>/collections/<c>.s<k>} ({@link ReplicaKey#dirName()}) and an entry of
 * the metadata file with the collection's vector and changeable settings. Placement is not kept
 * here: the cluster metadata says which replicas this node should hold ({@link ReplicaUpkeep}).
 *
 * <p>Thread-safe.
 */
public final class LocalReplicas implements LocalData {

  private static final Logger LOG = LoggerFactory.getLogger(LocalReplicas.class);

  private final DataDirectory<ShardReplica> dir;

  public LocalReplicas(Path dataDir, Shard.Options options) {
    this.dir =
        new DataDirectory<>(
            dataDir,
            options.io(),
            options.space(),
            (m, d) ->
                ShardReplica.open(ReplicaKey.parse(m.name()), d, m.config(), m.tuning(), options));
  }

  /**
   * The open replica {@code key}.
   *
   * @throws NotFoundException if this node holds no such replica; 503 before recovery, or if it
   *     failed to open
   */
  public ShardReplica get(ReplicaKey key) {
    return dir.require(
        key.dirName(),
        "replica " + key,
        () -> "Not found: no replica of the shard here [replica=" + key + "]");
  }

  public boolean exists(ReplicaKey key) {
    return dir.exists(key.dirName());
  }

  /** Every replica on disk, open or failed. */
  public List<ReplicaKey> keys() {
    List<ReplicaKey> out = new ArrayList<>();
    for (String name : dir.names()) {
      out.add(ReplicaKey.parse(name));
    }
    return out;
  }

  /** The open replicas' directory names. */
  @Override
  public List<String> names() {
    return List.copyOf(new TreeMap<>(dir.units()).keySet());
  }

  @Override
  public Stats stats(String name) {
    ShardReplica r = dir.get(name);
    return r == null ? null : Stats.of(r.info(), r.walBytes());
  }

  /**
   * Creates the replica {@code key} of a collection with {@code config} and {@code tuning} and
   * builds the indexes of {@code schema}.
   */
  public ShardReplica create(
      ReplicaKey key, CollectionConfig config, CollectionTuning tuning, PayloadSchema schema) {
    ShardReplica r =
        dir.create(
            new CollectionMeta(
                key.dirName(),
                // one shard on this node, whatever the collection's shard number
                new CollectionConfig(config.dimension(), config.distance(), 1, 1, config.index()),
                System.currentTimeMillis(),
                tuning),
            1);
    if (!schema.isEmpty()) {
      r.applyPayloadSchema(schema, 0, true);
    }
    LOG.info("replica created [replica={}]", key);
    return r;
  }

  /** Drops a replica and its files; false if there was none. */
  public boolean drop(ReplicaKey key) {
    boolean dropped = dir.delete(key.dirName());
    if (dropped) {
      LOG.info("replica dropped [replica={}]", key);
    }
    return dropped;
  }

  /** Persists {@code change} of a replica's settings, then applies them. */
  public CollectionTuning retune(ReplicaKey key, UnaryOperator<CollectionTuning> change) {
    ShardReplica r = get(key);
    return dir.retune(key.dirName(), change, r::retune);
  }

  @Override
  public List<String> stopBackgroundWork() {
    List<String> out = new ArrayList<>();
    dir.units()
        .forEach(
            (name, r) -> {
              String w = r.stopBackgroundWork();
              if (w != null) {
                out.add("replica " + r.key() + ", " + w);
              }
            });
    return out;
  }

  @Override
  public DataDirectory<ShardReplica> directory() {
    return dir;
  }
}
