package io.flashvec.loadgen.client;

import io.flashvec.loadgen.dataset.Distance;
import java.util.Map;

/**
 * What the benchmarks need from a system under test. Implementations are thread-safe: many
 * benchmark clients share one instance, each with one request in flight.
 */
public interface VectorDbClient extends AutoCloseable {

  /**
   * A query vector prepared once for many requests (the REST client serialises it to JSON up front,
   * so the benchmark loop does not spend its CPU formatting floats).
   */
  record PreparedVector(float[] vector, String json) {}

  /**
   * A collection's state: {@code status} is e.g. {@code green} when fully indexed; {@code
   * indexedCount} the points an index answers for, or -1 when the server's count does not mean that
   * every point is indexed once it is caught up (a Qdrant server leaves segments below its indexing
   * threshold unindexed and green; a flat collection has no index to count).
   */
  record CollectionInfo(String status, long pointsCount, long indexedCount) {

    /** Whether the server reports every point indexed: green, and all counted when it counts. */
    public boolean fullyIndexed() {
      return "green".equalsIgnoreCase(status) && (indexedCount < 0 || indexedCount >= pointsCount);
    }
  }

  /** True if the collection exists. */
  boolean collectionExists(String collection);

  /**
   * Creates a collection.
   *
   * @param indexType {@code diskann}, {@code hnsw}, {@code flat}, or null for the server default
   * @param indexParams extra index parameters ({@code max_degree=64}, ...), passed through
   */
  void createCollection(
      String collection,
      int dim,
      Distance distance,
      String indexType,
      Map<String, String> indexParams);

  /** Deletes a collection (no error if it does not exist). */
  void deleteCollection(String collection);

  /** Inserts or replaces points {@code ids[i] → vectors[i]} and waits until they are visible. */
  void upsert(String collection, long[] ids, float[][] vectors);

  /**
   * As {@link #upsert(String, long[], float[][])} with vectors {@link #prepare prepared} up front
   * (the REST client sends their JSON as is, so a paced insert stream does not spend the client's
   * CPU, which shares the machine with the server, formatting floats).
   */
  default void upsert(String collection, long[] ids, PreparedVector[] vectors) {
    float[][] raw = new float[vectors.length][];
    for (int i = 0; i < raw.length; i++) {
      raw[i] = vectors[i].vector();
    }
    upsert(collection, ids, raw);
  }

  /** Deletes points by id and waits until the deletion is visible. */
  void delete(String collection, long[] ids);

  /**
   * Asks the server to compact the collection's segments now (merge small ones, drop deleted rows);
   * the compaction may run on after the call returns.
   *
   * @throws UnsupportedOperationException if the target has no such call
   */
  default void compact(String collection) {
    throw new UnsupportedOperationException(
        "compaction is not supported by this target [target=" + target() + "]");
  }

  /** Prepares a query vector for {@link #search}. */
  PreparedVector prepare(float[] vector);

  /** Returns the ids of the {@code k} nearest points, best first. */
  long[] search(String collection, PreparedVector vector, int k, SearchParams params);

  /** The collection's status and point count. */
  CollectionInfo collectionInfo(String collection);

  /**
   * The index builds and merges running on the collection, with how far each is, in one line (for
   * example {@code merge 43% of 1548000 points; indexing 18000 points}), or null when none runs or
   * the target does not say.
   */
  default String runningOptimizations(String collection) {
    return null;
  }

  /** The server's metrics in Prometheus text format, or null if it has none. */
  String metricsText();

  /** A short name of the target for reports, e.g. {@code rest} or {@code pgvector}. */
  String target();

  @Override
  void close();
}
