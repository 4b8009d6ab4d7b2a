package io.flashvec.index.query;

import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.filter.FilterEvaluator;
import java.util.Objects;

/**
 * A {@link SearchRequest} made ready for one collection's shards and segments: the request as the
 * client sent it, its vector validated and prepared for the metric (cosine vectors normalised), its
 * filter compiled against the collection's payload schema, and the statistics the search adds its
 * costs to. It travels unchanged from the collection to every segment.
 *
 * <p>Not thread-safe ({@link SearchStats} is not): one per search, used by one thread at a time.
 *
 * @param query the request's vector, prepared for the metric
 * @param filter the compiled filter, or {@code null} for none (or one that matches everything)
 */
public record PreparedSearch(
    SearchRequest request, float[] query, FilterEvaluator filter, SearchStats stats) {

  public PreparedSearch {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(query, "query");
    Objects.requireNonNull(stats, "stats");
    if (filter != null && filter.matchesAll()) {
      filter = null;
    }
  }

  /**
   * A search for the best {@code k} of {@code query}, already prepared for the metric, without a
   * filter, payloads or vectors.
   */
  public static PreparedSearch of(float[] query, int k, SearchParams params) {
    return new PreparedSearch(
        new SearchRequest(query, k, 0, null, params, false, false, null),
        query,
        null,
        new SearchStats());
  }

  /** Results each shard returns: the request's limit plus its offset. */
  public int k() {
    return request.limit() + request.offset();
  }

  /** The request's search parameters. */
  public SearchParams params() {
    return request.params();
  }

  /** Whether a filter restricts the search. */
  public boolean filtered() {
    return filter != null;
  }
}
