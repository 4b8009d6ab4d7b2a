package io.flashvec.api;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Server settings under {@code flashvec.*} (environment: {@code FLASHVEC_*}).
 *
 * @param port REST port ({@code FLASHVEC_PORT})
 * @param bind address to bind ({@code FLASHVEC_BIND})
 * @param dataDir where collections live ({@code FLASHVEC_DATA_DIR})
 * @param roles {@code proxy,query,index} (standalone runs all three)
 * @param cluster cluster mode settings (off unless {@code etcd-endpoints} is set)
 * @param http limits of the REST server's connections
 * @param testing crash testing only (off by default)
 * @param compaction background compaction of sealed segments
 * @param merge how sealed segments are merged into larger ones
 * @param storage disk space reserve
 * @param shutdown how long a shutdown may take
 * @param memory the memory budget the server lives within
 */
@ConfigurationProperties("flashvec")
public record FlashVecProperties(
    @DefaultValue("8080") int port,
    @DefaultValue("127.0.0.1") String bind,
    @DefaultValue("./data") Path dataDir,
    @DefaultValue("proxy,query,index") List<String> roles,
    @DefaultValue Wal wal,
    @DefaultValue Segment segment,
    @DefaultValue Search search,
    @DefaultValue Limits limits,
    @DefaultValue Writes writes,
    @DefaultValue Compaction compaction,
    @DefaultValue Merge merge,
    @DefaultValue Security security,
    @DefaultValue Cluster cluster,
    @DefaultValue Http http,
    @DefaultValue Testing testing,
    @DefaultValue Storage storage,
    @DefaultValue Shutdown shutdown,
    @DefaultValue Memory memory) {

  /**
   * The memory budget (ADR 0025): the most memory the server process may use, heap, native memory
   * and page cache together. It is sliced by {@code io.flashvec.index.memory.MemoryPlan} into the
   * JVM's native memory, the heap (resident index, growing segments, builds, requests), a node
   * cache and the page cache; the launcher and the container image derive {@code -Xmx} from it, and
   * the server seals growing segments and bounds merges so the heap's slices hold.
   *
   * @param budget a size: {@code 768Mi}, {@code 2Gi}, {@code 2GB} (binary), {@code 2G} (decimal, as
   *     Kubernetes reads it) or bytes; blank: the cgroup's memory limit, else half of the RAM. A
   *     budget too small for the JVM, a minimal heap and the page cache stops the start-up, naming
   *     the minimum.
   */
  public record Memory(@DefaultValue("") String budget) {
    public Memory {
      if (budget != null && !budget.isBlank()) {
        try {
          io.flashvec.index.memory.MemoryPlan.parseBytes(budget);
        } catch (IllegalArgumentException e) {
          check(
              false,
              "memory",
              "budget",
              "must be a positive size such as 768Mi, 2Gi, 2GB or 805306368",
              budget);
        }
      }
    }

    /** The budget in bytes, or 0 when it is not set. */
    public long budgetBytes() {
      return budget == null || budget.isBlank()
          ? 0
          : io.flashvec.index.memory.MemoryPlan.parseBytes(budget);
    }
  }

  /**
   * Crash testing only, never in production: the server halts (as a SIGKILL would stop it, with
   * exit status 86 and one log line naming the point) when a durable step reaches a named crash
   * point, so a test can check the recovery from exactly there.
   *
   * @param crashPoint the point, a constant of {@code io.flashvec.storage.CrashPoint} in any case
   *     with {@code -} or {@code _} (e.g. {@code payload-schema-committed}); blank: off. An unknown
   *     name stops the start-up.
   * @param crashPointHit halt the {@code n}-th time the point is reached, counted from the start
   */
  public record Testing(
      @DefaultValue("") String crashPoint, @DefaultValue("1") int crashPointHit) {}

  /**
   * Disk space (ADR 0020).
   *
   * @param minFreeBytes free space kept on the data directory's disk for checkpoints and a clean
   *     shutdown: writes that would go below it get 507, index builds and compactions wait until
   *     they fit above it; 0 keeps no reserve (writes stop only at a full disk)
   */
  public record Storage(@DefaultValue("128MB") DataSize minFreeBytes) {
    public Storage {
      check(
          minFreeBytes.toBytes() >= 0,
          "storage",
          "min-free-bytes",
          "must not be negative",
          minFreeBytes);
    }
  }

  /**
   * Shutdown on SIGTERM (ADR 0020): index builds and compactions are cancelled at once (they run
   * again after the restart), requests in flight finish (up to {@code
   * spring.lifecycle.timeout-per-shutdown-phase}), the WALs are synced and closed.
   *
   * @param gracePeriod the longest a shutdown may take; past it the process logs what was still
   *     running and halts. Below Kubernetes' default of 30 s; must exceed {@code
   *     spring.lifecycle.timeout-per-shutdown-phase}
   */
  public record Shutdown(@DefaultValue("20s") Duration gracePeriod) {
    public Shutdown {
      check(gracePeriod.isPositive(), "shutdown", "grace-period", "must be positive", gracePeriod);
    }
  }

  /**
   * API keys, Qdrant-compatible (header {@code api-key} or {@code Authorization: Bearer}). Unset:
   * no authentication (the server binds to 127.0.0.1 by default).
   *
   * @param apiKey full access
   * @param readOnlyApiKey reads and searches only
   */
  public record Security(String apiKey, String readOnlyApiKey) {}

  /**
   * Cluster mode (ADR 0009). Off, i.e. standalone, while {@code etcdEndpoints} is empty.
   *
   * @param etcdEndpoints etcd client URLs, e.g. {@code http://127.0.0.1:2379}
   * @param etcdPrefix key prefix of this cluster in etcd
   * @param nodeId this node's id in the registry (default {@code <advertise-host>:<grpc-port>})
   * @param grpcPort port of the query role's gRPC server (bound on {@code flashvec.bind})
   * @param advertiseHost host other nodes use to reach this one (default {@code flashvec.bind})
   * @param leaseTtl how long a node stays registered after its last heartbeat
   * @param searchDeadline deadline of one shard call of a search or read (collection info uses the
   *     write deadline)
   * @param writeDeadline deadline of one shard write (including its replication)
   * @param tls TLS of the internal gRPC (off by default)
   */
  public record Cluster(
      @DefaultValue("") List<String> etcdEndpoints,
      @DefaultValue("/flashvec/") String etcdPrefix,
      @DefaultValue("") String nodeId,
      @DefaultValue("7070") int grpcPort,
      @DefaultValue("") String advertiseHost,
      @DefaultValue("5s") Duration leaseTtl,
      @DefaultValue("2s") Duration searchDeadline,
      @DefaultValue("10s") Duration writeDeadline,
      @DefaultValue Tls tls) {

    /** The endpoints without blanks. */
    public List<String> endpoints() {
      return etcdEndpoints == null
          ? List.of()
          : etcdEndpoints.stream().map(String::trim).filter(e -> !e.isEmpty()).toList();
    }

    /** Whether this node runs in cluster mode. */
    public boolean enabled() {
      return !endpoints().isEmpty();
    }
  }

  /**
   * TLS of the internal gRPC between cluster nodes ({@code FLASHVEC_CLUSTER_TLS_*}): query and
   * index nodes serve with {@code cert}/{@code key}, every node's client presents them and trusts
   * servers signed by {@code ca}.
   *
   * @param enabled TLS on; then {@code cert}, {@code key} and {@code ca} are required
   * @param cert this node's certificate chain, PEM
   * @param key its private key, PKCS#8 PEM
   * @param ca certificates that sign the nodes' certificates, PEM
   * @param clientAuth {@code require} (mutual TLS, the default), {@code optional} or {@code none}
   * @param authority name clients check servers' certificates against; blank: the host they dial
   * @param reloadInterval how often rotated files are picked up; 0 = never
   */
  public record Tls(
      @DefaultValue("false") boolean enabled,
      Path cert,
      Path key,
      Path ca,
      @DefaultValue("require") String clientAuth,
      @DefaultValue("") String authority,
      @DefaultValue("5m") Duration reloadInterval) {}

  /**
   * Background compaction of sealed segments.
   *
   * @param enabled run compactions automatically (a {@code POST .../compact} works either way)
   * @param deletedFraction rewrite a segment once this share of its points is deleted
   * @param maxSmallSegments removed (the tiered merge policy has no "small segment"): set, it stops
   *     the start-up naming {@code flashvec.merge.segments-per-tier}, its replacement
   */
  public record Compaction(
      @DefaultValue("true") boolean enabled,
      @DefaultValue("0.2") double deletedFraction,
      Integer maxSmallSegments) {
    public Compaction {
      check(
          deletedFraction > 0 && deletedFraction <= 1,
          "compaction",
          "deleted-fraction",
          "must be in (0, 1]",
          deletedFraction);
      check(
          maxSmallSegments == null,
          "compaction",
          "max-small-segments",
          "is no longer supported; use flashvec.merge.segments-per-tier (and"
              + " flashvec.merge.max-segment-points)",
          maxSmallSegments);
    }
  }

  /**
   * Tiered merges of sealed segments (ADR 0023): segments of similar size are merged, at most
   * {@code segmentsPerTier} per size tier, so a shard of N points is searched through O(log N)
   * graphs.
   *
   * @param segmentsPerTier sealed segments allowed per tier before a merge (a merge takes up to
   *     ten, or this many if more); at least 2. Few per tier means few graphs per search and more
   *     rebuilds per point: at 3, a 10M-point shard of 100k seals ends in about 5 segments with
   *     each point built about 2.8 times; at 10, 19 segments and 1.9 times
   * @param maxSegmentPoints no merge produces a segment of more live points than this (nor one of
   *     more than 2^31 bytes of PQ codes); it bounds the work of one merge, not its memory: a merge
   *     larger than the build memory is built in partitions that fit it (ADR 0026)
   */
  public record Merge(
      @DefaultValue("3") int segmentsPerTier, @DefaultValue("20000000") int maxSegmentPoints) {
    public Merge {
      check(
          segmentsPerTier >= 2,
          "merge",
          "segments-per-tier",
          "must be at least 2",
          segmentsPerTier);
      check(
          maxSegmentPoints >= 1,
          "merge",
          "max-segment-points",
          "must be at least 1",
          maxSegmentPoints);
    }
  }

  /**
   * Search defaults.
   *
   * @param defaultSearchList candidate list size when a request does not set {@code search_list}
   * @param beamWidth reads in flight per search (records read together per beam step without the
   *     pipelined search) when a request does not set {@code beam_width}; 0 = automatic (4 while
   *     the index is read from the device, else 1)
   * @param prefetch {@code auto} (search with reads in flight, the pipelined search, while searches
   *     read from the device), {@code on} or {@code off} (each record read by a page fault when
   *     touched)
   * @param ioThreads platform threads that issue the reads of the pipelined searches, shared by all
   *     of them: the queue depth the device sees (1..1024; NVMe needs 32 or more for its rated
   *     random-read rate)
   * @param nodeCacheBytes native memory for the sealed graphs' hot node caches (the records nearest
   *     each graph's entry), split over the open segments by {@code log2} of their size; 0 turns
   *     the caches off; unset, the memory budget's node-cache slice (5% of it)
   */
  public record Search(
      @DefaultValue("100") int defaultSearchList,
      @DefaultValue("0") int beamWidth,
      @DefaultValue("auto") String prefetch,
      @DefaultValue("32") int ioThreads,
      DataSize nodeCacheBytes) {
    public Search {
      check(
          ioThreads >= 1 && ioThreads <= 1024,
          "search",
          "io-threads",
          "must be in 1..1024",
          ioThreads);
      check(
          nodeCacheBytes == null || nodeCacheBytes.toBytes() >= 0,
          "search",
          "node-cache-bytes",
          "must be at least 0",
          nodeCacheBytes);
    }
  }

  /** Write-ahead log settings. */
  public record Wal(
      @DefaultValue("always") String fsyncPolicy,
      @DefaultValue("1s") Duration fsyncInterval,
      @DefaultValue("64MB") DataSize segmentBytes) {}

  /**
   * Segment settings.
   *
   * @param sealThresholdPoints growing segment size before it is sealed and indexed
   * @param buildThreads threads of an index build; 0 = one per core (fastest builds), fewer bound
   *     the CPU a build takes from concurrent queries
   * @param liveGraph insert new points of {@code diskann}/{@code hnsw} collections into an
   *     in-memory graph as they arrive (one background thread), search it instead of scanning, and
   *     seal it without a rebuild (ADR 0011); {@code false}: growing segments are scanned exactly
   *     and rebuilt when sealed
   * @param backgroundNice the CPU priority (Linux nice value, 0..19) of background work that must
   *     not slow requests down: the live indexer's background lane and compactions; 0 = the same
   *     priority as requests
   */
  public record Segment(
      @DefaultValue("100000") int sealThresholdPoints,
      @DefaultValue("0") int buildThreads,
      @DefaultValue("true") boolean liveGraph,
      @DefaultValue("10") int backgroundNice) {
    public Segment {
      check(
          backgroundNice >= 0 && backgroundNice <= 19,
          "segment",
          "background-nice",
          "must be in 0..19",
          backgroundNice);
    }
  }

  /**
   * How write requests (upserts, deletes, payload changes) run (ADR 0016).
   *
   * @param nice the CPU priority (Linux nice value, 0..19) of write requests' parsing and apply:
   *     above 0, they run on {@code threads} platform threads at that priority, so a large write
   *     batch does not take a core from searches (query P99 beside inserts); 0 = on virtual threads
   *     at the priority of searches. Writes are not throttled when the CPU has idle time.
   * @param threads platform threads for writes when {@code nice} is above 0: concurrent write
   *     requests beyond it queue (each waits for its WAL fsync on one of them, and concurrent
   *     writers share fsyncs)
   */
  public record Writes(@DefaultValue("10") int nice, @DefaultValue("32") int threads) {
    public Writes {
      check(nice >= 0 && nice <= 19, "writes", "nice", "must be in 0..19", nice);
      check(threads >= 1, "writes", "threads", "must be at least 1", threads);
    }
  }

  /** Request limits; exceeding one gives 413. */
  public record Limits(
      @DefaultValue("64MB") DataSize maxBodyBytes,
      @DefaultValue("100000") int maxBatchPoints,
      @DefaultValue("10000") int maxSearchLimit) {}

  /**
   * Limits of the REST server's connections, so that slow, idle or greedy clients cannot hold the
   * server's connections, memory or file descriptors ({@code web.ConnectionGuard}).
   *
   * @param headerTimeout a request's line and headers must all arrive within this time of its first
   *     byte, else 408 and the connection closes (slow-header clients, "slowloris")
   * @param bodyTimeout a request's body must all arrive within this time of its headers, else 408
   *     and the connection closes (a body, chunked or not, that never ends)
   * @param idleTimeout a connection with no request in progress and no answer pending is closed
   *     after this time (keep-alive connections that clients forgot)
   * @param maxConnections open connections at most; one more is answered 503 and closed
   * @param maxPipelinedRequests requests a client may send on one connection before reading the
   *     answers to earlier ones; past it the connection closes after the answers already owed
   */
  public record Http(
      @DefaultValue("10s") Duration headerTimeout,
      @DefaultValue("60s") Duration bodyTimeout,
      @DefaultValue("60s") Duration idleTimeout,
      @DefaultValue("4096") int maxConnections,
      @DefaultValue("64") int maxPipelinedRequests) {
    public Http {
      positive("header-timeout", headerTimeout);
      positive("body-timeout", bodyTimeout);
      positive("idle-timeout", idleTimeout);
      check(maxConnections >= 1, "http", "max-connections", "must be at least 1", maxConnections);
      check(
          maxPipelinedRequests >= 1,
          "http",
          "max-pipelined-requests",
          "must be at least 1",
          maxPipelinedRequests);
    }

    private static void positive(String name, Duration d) {
      check(d != null && d.isPositive(), "http", name, "must be positive", d);
    }
  }

  /**
   * Refuses a setting that breaks its rule, naming it and its value: {@code
   * flashvec.<section>.<name> <rule> [<name>=<value>]}.
   */
  private static void check(boolean ok, String section, String name, String rule, Object value) {
    if (!ok) {
      throw new IllegalArgumentException(
          "flashvec." + section + "." + name + " " + rule + " [" + name + "=" + value + "]");
    }
  }
}
