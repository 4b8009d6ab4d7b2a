package io.flashvec.index;

import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.TopK;
import io.flashvec.index.shard.Shard;
import java.util.List;

/** Searches of shards and segments for tests, from a query already prepared for the metric. */
public final class Searches {

  private Searches() {}

  /** The best {@code k} points of {@code shard} for {@code query}. */
  public static List<Record> search(
      Shard shard,
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector) {
    return search(shard, query, k, params, threshold, withPayload, withVector, new SearchStats());
  }

  /** As above, adding the costs to {@code stats}. */
  public static List<Record> search(
      Shard shard,
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector,
      SearchStats stats) {
    return search(shard, query, k, params, threshold, withPayload, withVector, null, stats);
  }

  /** As above, among the points that match {@code filter} ({@code null}: all). */
  public static List<Record> search(
      Shard shard,
      float[] query,
      int k,
      SearchParams params,
      Float threshold,
      boolean withPayload,
      boolean withVector,
      FilterEvaluator filter,
      SearchStats stats) {
    SearchRequest req =
        new SearchRequest(query, k, 0, threshold, params, withPayload, withVector, null);
    return shard.search(new PreparedSearch(req, query, filter, stats));
  }

  /** Offers {@code segment}'s best points for {@code query} to {@code out}, as its only segment. */
  public static void search(
      Segment segment, float[] query, SearchParams params, TopK out, int slot) {
    search(segment, query, params, null, out, slot, new SearchStats(), 1.0);
  }

  /** As above, among {@code accept}, adding the costs to {@code stats}, holding {@code share}. */
  public static void search(
      Segment segment,
      float[] query,
      SearchParams params,
      AcceptedOrdinals accept,
      TopK out,
      int slot,
      SearchStats stats,
      double share) {
    SearchRequest req =
        new SearchRequest(query, out.capacity(), 0, null, params, false, false, null);
    segment.search(new PreparedSearch(req, query, null, stats), accept, share, out, slot);
  }
}
