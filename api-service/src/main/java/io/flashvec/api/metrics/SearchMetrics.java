package io.flashvec.api.metrics;

import io.flashvec.index.SearchStats;
import io.flashvec.storage.ThreadIo;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;

/**
 * Cumulative search costs for Prometheus, so load-gen can report per-query work from the deltas:
 * {@code flashvec_search_queries_total}, {@code flashvec_search_nodes_visited_total}, {@code
 * flashvec_search_nodes_expanded_total}, {@code flashvec_search_reranked_total}, {@code
 * flashvec_search_distance_computations_total}, {@code flashvec_io_pages_read_total} and {@code
 * flashvec_io_bytes_read_total} (major faults on mapped segment files × 4 KiB).
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

  SearchMetrics(MeterRegistry registry) {
    queries =
        Counter.builder("flashvec.search.queries").description("Searches run").register(registry);
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

  /** Records one search request's costs (a batch counts each of its searches). */
  public void record(int searches, SearchStats s) {
    queries.increment(searches);
    visited.increment(s.visited);
    expanded.increment(s.expanded);
    reranked.increment(s.reranked);
    distances.increment(s.distanceComputations);
    pages.increment(s.pagesRead);
    bytes.increment((double) s.pagesRead * ThreadIo.PAGE_BYTES);
  }
}
