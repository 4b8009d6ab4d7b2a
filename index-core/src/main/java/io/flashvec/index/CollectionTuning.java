package io.flashvec.index;

import io.flashvec.storage.FsyncPolicy;

/**
 * A collection's settings that may change after creation ({@code PATCH /collections/{name}}):
 * Qdrant's {@code optimizers_config.indexing_threshold} (bulk loads), a WAL fsync override,
 * Qdrant's {@code on_disk_payload}, and two JSON documents the engine keeps without reading them:
 * Qdrant's {@code strict_mode_config} (which the REST layer enforces) and the collection's {@code
 * metadata}, and which sparse fields are weighted by IDF.
 *
 * @param indexingThreshold {@code 0}: defer index builds (sealed segments stay in memory, searched
 *     exactly, and the WAL is not truncated) until it is raised; {@code -1}: the server default
 *     (index every sealed segment); any other value: index normally
 * @param fsyncPolicy WAL fsync policy of this collection, or {@code null} for the server's
 * @param onDiskPayload {@code true} (the default): sealed segments read payloads from their mapped
 *     files on demand; {@code false}: they hold them on the heap, from their next open (a seal, a
 *     merge, a restart)
 * @param strictMode Qdrant's {@code strict_mode_config} as compact JSON text, or {@code null} when
 *     the collection never had one
 * @param metadata the collection's {@code metadata} object as compact JSON text, or {@code null}
 *     when it has none
 * @param sparseIdf the sparse fields whose searches weight the query by inverse document frequency
 *     (Qdrant's {@code modifier: idf}; empty: none)
 * @param walSegmentBytes the size at which this collection's WAL starts a new segment (Qdrant's
 *     {@code wal_config.wal_capacity_mb}, set at creation), or {@code 0} for the server's
 * @param memoryShown which of Qdrant's {@code memory} placements were given, and so are shown in
 *     the collection's description as Qdrant shows them: {@code vectors} (the graph's vector, whose
 *     placement its index type sets) and {@code payload} (from {@link #onDiskPayload}); empty:
 *     none. Also {@code inline_storage}: the graph's vector was given {@code
 *     hnsw_config.inline_storage: true}, which the collection's description warns about while it
 *     has no quantization
 * @param segmentNumber Qdrant's {@code optimizers_config.default_segment_number}: {@code 0}, the
 *     tiers choose how many sealed segments a shard keeps ({@code TieredMergePolicy}); {@code N},
 *     each shard merges its smallest sealed segments while it has more than {@code N} (set at
 *     creation)
 * @param quantizationConfig the collection's {@code quantization_config} (scalar or turbo) as
 *     given, compact JSON, when no vector inherits it, so it is still shown ({@code null}: none, or
 *     the vectors that inherit it carry it, {@link FieldIndex})
 * @param walRetainClosed how many closed WAL segments each shard keeps after a checkpoint covers
 *     them (Qdrant's {@code wal_config.wal_retain_closed}, set at creation; {@code 0}: none)
 * @param optimizationJobs the most segment builds and merges each shard runs at once (Qdrant's
 *     {@code optimizers_config.max_optimization_threads}, set at creation; {@code 0}: no cap of its
 *     own, the server's build and merge threads decide)
 */
public record CollectionTuning(
    int indexingThreshold,
    FsyncPolicy fsyncPolicy,
    boolean onDiskPayload,
    String strictMode,
    String metadata,
    java.util.Set<String> sparseIdf,
    long walSegmentBytes,
    java.util.Set<String> memoryShown,
    int segmentNumber,
    String quantizationConfig,
    int walRetainClosed,
    int optimizationJobs) {

  /** Settings without closed WAL segments kept past their checkpoint. */
  public CollectionTuning(
      int indexingThreshold,
      FsyncPolicy fsyncPolicy,
      boolean onDiskPayload,
      String strictMode,
      String metadata,
      java.util.Set<String> sparseIdf,
      long walSegmentBytes,
      java.util.Set<String> memoryShown,
      int segmentNumber,
      String quantizationConfig) {
    this(
        indexingThreshold,
        fsyncPolicy,
        onDiskPayload,
        strictMode,
        metadata,
        sparseIdf,
        walSegmentBytes,
        memoryShown,
        segmentNumber,
        quantizationConfig,
        0,
        0);
  }

  /** This tuning keeping {@code n} closed WAL segments past their checkpoint. */
  public CollectionTuning withWalRetainClosed(int n) {
    return with(c -> c.walRetainClosed = n);
  }

  /** This tuning with at most {@code n} builds and merges at once per shard ({@code 0}: auto). */
  public CollectionTuning withOptimizationJobs(int n) {
    return with(c -> c.optimizationJobs = n);
  }

  /** The {@code memoryShown} of the graph's vector's {@code memory}. */
  public static final String VECTORS_MEMORY = "vectors";

  /** The {@code memoryShown} of the graph's {@code hnsw_config.inline_storage: true}. */
  public static final String INLINE_STORAGE = "inline_storage";

  /** The {@code memoryShown} of {@code payload.memory}. */
  public static final String PAYLOAD_MEMORY = "payload";

  public static final CollectionTuning DEFAULT = new CollectionTuning(-1, null, true);

  public CollectionTuning {
    if (optimizationJobs < 0) {
      throw new InvalidInputException(
          "max_optimization_threads must not be negative [max_optimization_threads="
              + optimizationJobs
              + "]");
    }
    if (walRetainClosed < 0) {
      throw new InvalidInputException(
          "wal_retain_closed must not be negative [wal_retain_closed=" + walRetainClosed + "]");
    }
    if (walSegmentBytes < 0) {
      throw new InvalidInputException(
          "wal_capacity_mb must not be negative [wal_segment_bytes=" + walSegmentBytes + "]");
    }
    if (segmentNumber < 0) {
      throw new InvalidInputException(
          "default_segment_number must not be negative [default_segment_number="
              + segmentNumber
              + "]");
    }
    if (indexingThreshold < -1) {
      throw new InvalidInputException(
          "indexing_threshold must not be negative [indexing_threshold=" + indexingThreshold + "]");
    }
    sparseIdf =
        sparseIdf == null || sparseIdf.isEmpty()
            ? java.util.Set.of()
            : java.util.Collections.unmodifiableSet(new java.util.TreeSet<>(sparseIdf));
    memoryShown =
        memoryShown == null || memoryShown.isEmpty()
            ? java.util.Set.of()
            : java.util.Collections.unmodifiableSet(new java.util.TreeSet<>(memoryShown));
  }

  /** Settings without a {@code memory} placement given. */
  public CollectionTuning(
      int indexingThreshold,
      FsyncPolicy fsyncPolicy,
      boolean onDiskPayload,
      String strictMode,
      String metadata,
      java.util.Set<String> sparseIdf,
      long walSegmentBytes) {
    this(
        indexingThreshold,
        fsyncPolicy,
        onDiskPayload,
        strictMode,
        metadata,
        sparseIdf,
        walSegmentBytes,
        java.util.Set.of(),
        0,
        null);
  }

  /** Settings with the number of segments chosen by the tiers. */
  public CollectionTuning(
      int indexingThreshold,
      FsyncPolicy fsyncPolicy,
      boolean onDiskPayload,
      String strictMode,
      String metadata,
      java.util.Set<String> sparseIdf,
      long walSegmentBytes,
      java.util.Set<String> memoryShown) {
    this(
        indexingThreshold,
        fsyncPolicy,
        onDiskPayload,
        strictMode,
        metadata,
        sparseIdf,
        walSegmentBytes,
        memoryShown,
        0,
        null);
  }

  /**
   * This tuning with {@code n} as Qdrant's {@code optimizers_config.default_segment_number} ({@code
   * 0}: the tiers choose).
   */
  /** As the canonical constructor, without a collection-level quantization of its own. */
  public CollectionTuning(
      int indexingThreshold,
      FsyncPolicy fsyncPolicy,
      boolean onDiskPayload,
      String strictMode,
      String metadata,
      java.util.Set<String> sparseIdf,
      long walSegmentBytes,
      java.util.Set<String> memoryShown,
      int segmentNumber) {
    this(
        indexingThreshold,
        fsyncPolicy,
        onDiskPayload,
        strictMode,
        metadata,
        sparseIdf,
        walSegmentBytes,
        memoryShown,
        segmentNumber,
        null);
  }

  /** This tuning with the collection's {@code quantization_config} shown as {@code json}. */
  public CollectionTuning withQuantizationConfig(String json) {
    return with(c -> c.quantizationConfig = json);
  }

  public CollectionTuning withSegmentNumber(int n) {
    return with(c -> c.segmentNumber = n);
  }

  /** This tuning with {@code given} added to the {@code memory} placements shown. */
  public CollectionTuning withMemoryShown(java.util.Set<String> given) {
    java.util.Set<String> all = new java.util.TreeSet<>(memoryShown);
    all.addAll(given);
    return with(c -> c.memoryShown = all);
  }

  /** Settings without sparse fields weighted by IDF. */
  public CollectionTuning(
      int indexingThreshold,
      FsyncPolicy fsyncPolicy,
      boolean onDiskPayload,
      String strictMode,
      String metadata) {
    this(
        indexingThreshold, fsyncPolicy, onDiskPayload, strictMode, metadata, java.util.Set.of(), 0);
  }

  /** This tuning with {@code fields} as the sparse fields weighted by IDF. */
  public CollectionTuning withSparseIdf(java.util.Set<String> fields) {
    return with(c -> c.sparseIdf = fields);
  }

  /** Settings without a strict mode or metadata. */
  public CollectionTuning(int indexingThreshold, FsyncPolicy fsyncPolicy, boolean onDiskPayload) {
    this(indexingThreshold, fsyncPolicy, onDiskPayload, null, null);
  }

  /** Settings with payloads on disk. */
  public CollectionTuning(int indexingThreshold, FsyncPolicy fsyncPolicy) {
    this(indexingThreshold, fsyncPolicy, true);
  }

  /** Whether index builds wait (bulk load). */
  public boolean deferBuilds() {
    return indexingThreshold == 0;
  }

  /** This tuning with the non-null parts of {@code patch} applied. */
  public CollectionTuning merge(Integer threshold, FsyncPolicy policy) {
    return merge(threshold, policy, null);
  }

  /** This tuning with the non-null parts of {@code patch} applied. */
  public CollectionTuning merge(Integer threshold, FsyncPolicy policy, Boolean onDisk) {
    return with(
        c -> {
          c.indexingThreshold = threshold != null ? threshold : indexingThreshold;
          c.fsyncPolicy = policy != null ? policy : fsyncPolicy;
          c.onDiskPayload = onDisk != null ? onDisk : onDiskPayload;
        });
  }

  /** This tuning with {@code json} as its strict mode configuration ({@code null}: none). */
  public CollectionTuning withStrictMode(String json) {
    return with(c -> c.strictMode = json);
  }

  /** This tuning with {@code json} as its metadata ({@code null}: none). */
  public CollectionTuning withMetadata(String json) {
    return with(c -> c.metadata = json);
  }

  /** This tuning with WAL segments of {@code bytes} ({@code 0}: the server's size). */
  public CollectionTuning withWalSegmentBytes(long bytes) {
    return with(c -> c.walSegmentBytes = bytes);
  }

  private CollectionTuning with(java.util.function.Consumer<Copy> change) {
    Copy c = new Copy(this);
    change.accept(c);
    return c.build();
  }

  /** A mutable copy of a tuning, for the {@code with*} methods. */
  private static final class Copy {
    int indexingThreshold;
    FsyncPolicy fsyncPolicy;
    boolean onDiskPayload;
    String strictMode;
    String metadata;
    java.util.Set<String> sparseIdf;
    long walSegmentBytes;
    java.util.Set<String> memoryShown;
    int segmentNumber;
    String quantizationConfig;
    int walRetainClosed;
    int optimizationJobs;

    Copy(CollectionTuning t) {
      indexingThreshold = t.indexingThreshold;
      fsyncPolicy = t.fsyncPolicy;
      onDiskPayload = t.onDiskPayload;
      strictMode = t.strictMode;
      metadata = t.metadata;
      sparseIdf = t.sparseIdf;
      walSegmentBytes = t.walSegmentBytes;
      memoryShown = t.memoryShown;
      segmentNumber = t.segmentNumber;
      quantizationConfig = t.quantizationConfig;
      walRetainClosed = t.walRetainClosed;
      optimizationJobs = t.optimizationJobs;
    }

    CollectionTuning build() {
      return new CollectionTuning(
          indexingThreshold,
          fsyncPolicy,
          onDiskPayload,
          strictMode,
          metadata,
          sparseIdf,
          walSegmentBytes,
          memoryShown,
          segmentNumber,
          quantizationConfig,
          walRetainClosed,
          optimizationJobs);
    }
  }
}
