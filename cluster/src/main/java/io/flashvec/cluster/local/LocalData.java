package io.flashvec.cluster.local;

import io.flashvec.index.collection.Collection;
import java.io.Closeable;
import java.util.List;
import java.util.Map;

/**
 * What a node holds in its data directory, as its lifecycle and metrics see it: the standalone
 * collections ({@link LocalCollectionService}) or a query node's shard replicas.
 */
public interface LocalData extends Closeable {

  /** A unit's figures, read when asked. */
  record Stats(
      long points,
      int segments,
      long walBytes,
      long diskBytes,
      long memoryBytes,
      io.flashvec.index.IndexingState indexing) {

    /** The figures of a unit described by {@code info} whose WAL holds {@code walBytes}. */
    public static Stats of(Collection.Info info, long walBytes) {
      return new Stats(
          info.points(),
          info.segments(),
          walBytes,
          info.diskBytes(),
          info.memoryBytes(),
          info.indexingState() == null
              ? io.flashvec.index.IndexingState.EMPTY
              : info.indexingState());
    }
  }

  /** The data directory that holds the units. */
  DataDirectory<?> directory();

  /** Opens everything on disk and replays the WALs; then {@link #ready()} is true. */
  default void recover() {
    directory().recover();
  }

  /** Whether recovery finished and the directory is not closing. */
  default boolean ready() {
    return directory().ready();
  }

  /**
   * Units whose files could not be opened at recovery (a corrupt or missing file), by name, with
   * the reason; they answer 503 until they are deleted. Empty before recovery.
   */
  default Map<String, String> failed() {
    return directory().failed();
  }

  /**
   * Cancels running index builds and compactions and starts no new ones (the server is shutting
   * down); reads and writes go on until {@link #close}. Returns what was running, for the log.
   */
  List<String> stopBackgroundWork();

  /** The open units' names. */
  List<String> names();

  /** A unit's figures, or {@code null} once it is gone. */
  Stats stats(String name);

  /** Closes every unit (their WALs are synced) and releases the data directory. */
  @Override
  default void close() {
    directory().close();
  }
}
