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
    @DefaultValue Compaction compaction,
    @DefaultValue Security security) {

  /**
   * API keys, Qdrant-compatible (header {@code api-key} or {@code Authorization: Bearer}). Unset:
   * no authentication (the server binds to 127.0.0.1 by default).
   *
   * @param apiKey full access
   * @param readOnlyApiKey reads and searches only
   */
  public record Security(String apiKey, String readOnlyApiKey) {}

  /**
   * Background compaction of sealed segments.
   *
   * @param enabled run compactions automatically (a {@code POST .../compact} works either way)
   * @param deletedFraction rewrite a segment once this share of its points is deleted
   * @param maxSmallSegments merge when a shard has more segments below the seal threshold
   */
  public record Compaction(
      @DefaultValue("true") boolean enabled,
      @DefaultValue("0.2") double deletedFraction,
      @DefaultValue("4") int maxSmallSegments) {}

  /**
   * Search defaults.
   *
   * @param defaultSearchList candidate list size when a request does not set {@code search_list}
   * @param beamWidth records read together per beam step when a request does not set {@code
   *     beam_width}; 0 = automatic (4 while the index is read from the device, else 1)
   * @param prefetch {@code auto} (prefetch each step's records while searches read from the
   *     device), {@code on} or {@code off}
   */
  public record Search(
      @DefaultValue("100") int defaultSearchList,
      @DefaultValue("0") int beamWidth,
      @DefaultValue("auto") String prefetch) {}

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
   */
  public record Segment(
      @DefaultValue("100000") int sealThresholdPoints, @DefaultValue("0") int buildThreads) {}

  /** Request limits; exceeding one gives 413. */
  public record Limits(
      @DefaultValue("64MB") DataSize maxBodyBytes,
      @DefaultValue("100000") int maxBatchPoints,
      @DefaultValue("10000") int maxSearchLimit) {}
}
