package io.flashvec.cluster.local;

import java.io.Closeable;
import java.util.List;
import java.util.Map;

/**
 * What a node holds in its data directory, as its lifecycle and metrics see it: the standalone
 * collections ({@link LocalCollectionService}) or a query node's shard replicas.
 */
public interface LocalData extends Closeable {

  /** A unit's figures, read when asked. */
  record Stats(long points, int segments, long walBytes) {}

  /** Opens everything on disk and replays the WALs; then {@link #ready()} is true. */
  void recover();

  boolean ready();

  /** Units whose files could not be opened at recovery, by name, with the reason. */
  Map<String, String> failed();

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
  void close();
}
