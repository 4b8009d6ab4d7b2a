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
 * flashvec_search_distance_computations_total}, {@code flashvec_io_pages_read_total}, {@code
 * flashvec_io_bytes_read_total} (major faults on mapped segment files × 4 KiB), and {@code
 * flashvec_search_node_cache_hits_total} (expanded nodes read from a hot node cache).
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
  private final Counter nodeCacheHits;
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
        counter(
            registry,
            "flashvec.search.shard.searches",
            "Shard searches this query node served for proxies (cluster mode)");
    queries =
        counter(
            registry,
            "flashvec.search.queries",
            "Searches received over REST (standalone or proxy)");
    visited =
        counter(registry, "flashvec.search.nodes.visited", "Graph nodes scored approximately");
    expanded =
        counter(
            registry, "flashvec.search.nodes.expanded", "Graph nodes whose neighbours were read");
    reranked =
        counter(registry, "flashvec.search.reranked", "Candidates rescored with full vectors");
    distances = counter(registry, "flashvec.search.distance.computations", "Distance computations");
    pages =
        counter(
            registry,
            "flashvec.io.pages.read",
            "Pages read from the device by searches (major faults)");
    bytes = counter(registry, "flashvec.io.bytes.read", "Bytes read from the device by searches");
    nodeCacheHits =
        counter(
            registry,
            "flashvec.search.node.cache.hits",
            "Expanded graph nodes read from a hot node cache instead of the graph file");
  }

  private static Counter counter(MeterRegistry registry, String name, String description) {
    return Counter.builder(name).description(description).register(registry);
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

  /**
   * {@link #record(int, SearchStats)} of a search of {@code collection} (as the request named it),
   * whose costs are also added to the collection's {@link #hardware()} figures when they are
   * counted here.
   */
  public void record(String collection, int searches, SearchStats s) {
    record(searches, s);
    if (!workCountedOnQueryNodes) {
      Work w = byCollection.computeIfAbsent(collection, c -> new Work());
      w.distances.add(s.distanceComputations);
      w.bytesRead.add(s.bytesRead());
    }
  }

  /**
   * A collection's search work counted by this process since it started: distance computations and
   * bytes the searches read from the device.
   */
  public record Hardware(long distanceComputations, long bytesRead) {}

  /**
   * The search work of each collection (by the name the requests used) since the start, as far as
   * this process counts it: standalone all of it, on a cluster proxy none ({@link
   * #recordShardSearch}: the query nodes count it, without collection).
   */
  public java.util.Map<String, Hardware> hardware() {
    java.util.Map<String, Hardware> out = new java.util.TreeMap<>();
    byCollection.forEach((c, w) -> out.put(c, new Hardware(w.distances.sum(), w.bytesRead.sum())));
    return out;
  }

  private static final class Work {
    final java.util.concurrent.atomic.LongAdder distances =
        new java.util.concurrent.atomic.LongAdder();
    final java.util.concurrent.atomic.LongAdder bytesRead =
        new java.util.concurrent.atomic.LongAdder();
  }

  private final java.util.Map<String, Work> byCollection =
      new java.util.concurrent.ConcurrentHashMap<>();

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
    nodeCacheHits.increment(s.nodeCacheHits);
  }
}
