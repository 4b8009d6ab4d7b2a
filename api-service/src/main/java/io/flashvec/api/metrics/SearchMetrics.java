package io.flashvec.api.metrics;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.index.SearchStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * Cumulative search costs for Prometheus, so load-gen can report per-query work from the deltas:
 * {@code flashvec_search_queries_total}, {@code flashvec_search_nodes_visited_total}, {@code
 * flashvec_search_nodes_expanded_total}, {@code flashvec_search_reranked_total}, {@code
 * flashvec_search_distance_computations_total}, {@code flashvec_io_pages_read_total} and {@code
 * flashvec_io_bytes_read_total} (major faults on mapped segment files × 4 KiB).
 *
 * <p>Work is counted by the process that does it. Standalone, that is the one process. In a cluster
 * the proxy counts only the searches it received ({@code queries}); each query node counts the
 * shard searches it served ({@code flashvec_search_shard_searches_total}) and their work, so the
 * total work of a query is the sum over the query nodes' metrics, with no double counting when the
 * proxy's are added too (the proxy still returns the summed costs in {@code flashvec_stats}).
 */
@Component
public class SearchMetrics {

  private final Counter queries;
  private final Counter visited;
  private final Counter expanded;
  private final Counter reranked;
  private final Counter distances;
  private final Counter pages;
  private final Counter bytes;
  private final Counter shardSearches;
  private final boolean workCountedOnQueryNodes;

  @Autowired
  SearchMetrics(MeterRegistry registry, FlashVecProperties props) {
    this(registry, props.cluster().enabled());
  }

  /**
   * @param workCountedOnQueryNodes cluster mode: REST searches count only themselves, their work is
   *     counted by the query nodes that run the shard searches
   */
  SearchMetrics(MeterRegistry registry, boolean workCountedOnQueryNodes) {
    this.workCountedOnQueryNodes = workCountedOnQueryNodes;
    shardSearches =
        Counter.builder("flashvec.search.shard.searches")
            .description("Shard searches this query node served for proxies (cluster mode)")
            .register(registry);
    queries =
        Counter.builder("flashvec.search.queries")
            .description("Searches received over REST (standalone or proxy)")
            .register(registry);
    visited =
        Counter.builder("flashvec.search.nodes.visited")
            .description("Graph nodes scored approximately")
            .register(registry);
    expanded =
        Counter.builder("flashvec.search.nodes.expanded")
            .description("Graph nodes whose neighbours were read")
            .register(registry);
    reranked =
        Counter.builder("flashvec.search.reranked")
            .description("Candidates rescored with full vectors")
            .register(registry);
    distances =
        Counter.builder("flashvec.search.distance.computations")
            .description("Distance computations")
            .register(registry);
    pages =
        Counter.builder("flashvec.io.pages.read")
            .description("Pages read from the device by searches (major faults)")
            .register(registry);
    bytes =
        Counter.builder("flashvec.io.bytes.read")
            .description("Bytes read from the device by searches")
            .register(registry);
  }

  /**
   * Records one REST search request (a batch counts each of its searches) and, standalone, its
   * costs; a cluster proxy's costs are counted by the query nodes ({@link #recordShardSearch}).
   */
  public void record(int searches, SearchStats s) {
    queries.increment(searches);
    if (!workCountedOnQueryNodes) {
      recordWork(s);
    }
  }

  /** Records one shard search this query node served over gRPC, with its costs. */
  public void recordShardSearch(SearchStats s) {
    shardSearches.increment();
    recordWork(s);
  }

  private void recordWork(SearchStats s) {
    visited.increment(s.visited);
    expanded.increment(s.expanded);
    reranked.increment(s.reranked);
    distances.increment(s.distanceComputations);
    pages.increment(s.pagesRead);
    bytes.increment((double) s.bytesRead());
  }
}
