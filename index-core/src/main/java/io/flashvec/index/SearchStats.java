package io.flashvec.index;

import io.flashvec.storage.ThreadIo;

/**
 * What one search cost, summed over the segments and shards it touched: nodes visited (scored
 * approximately) and expanded (adjacency read) in graphs, candidates reranked with full vectors,
 * exact distance computations in flat scans, pages read from the device (major page faults on the
 * searching thread, see {@link ThreadIo}), and graph records read from a segment's hot node cache
 * instead of its file. Not thread-safe: one instance per request, filled by the shards in turn.
 */
public final class SearchStats {

  public long segments;
  public long visited;
  public long expanded;
  public long reranked;
  public long distanceComputations;
  public long pagesRead;

  /** Expanded graph nodes whose record came from a hot node cache rather than the graph file. */
  public long nodeCacheHits;

  /**
   * Set by a cluster proxy when some shard had no live replica that answered within the deadline:
   * the results are then the best of the other shards only, and the response says so.
   */
  public boolean partial;

  /** Bytes read from the device: {@link #pagesRead} pages of {@link ThreadIo#PAGE_BYTES}. */
  public long bytesRead() {
    return pagesRead * ThreadIo.PAGE_BYTES;
  }

  /** Adds another search's statistics to this one. */
  public void add(SearchStats o) {
    segments += o.segments;
    visited += o.visited;
    expanded += o.expanded;
    reranked += o.reranked;
    distanceComputations += o.distanceComputations;
    pagesRead += o.pagesRead;
    nodeCacheHits += o.nodeCacheHits;
    partial |= o.partial;
  }
}
