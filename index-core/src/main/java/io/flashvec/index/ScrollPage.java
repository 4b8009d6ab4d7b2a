package io.flashvec.index;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** One page of a scroll: points in id order and the id to continue from ({@code null}: done). */
public record ScrollPage(List<Record> points, PointId nextOffset) {

  /**
   * The page of a scroll over several shards from the pages each shard returned for the same
   * request: every shard gave its first {@code limit} points from the offset, so the first {@code
   * limit} of their union are the page, and the next offset is the smallest id not on it (the first
   * one left over, or a shard's next offset).
   */
  public static ScrollPage merge(List<ScrollPage> pages, int limit) {
    List<Record> all = new ArrayList<>();
    PointId next = null;
    for (ScrollPage p : pages) {
      all.addAll(p.points());
      next = min(next, p.nextOffset());
    }
    all.sort(Comparator.comparing(Record::id));
    if (all.size() > limit) {
      next = min(next, all.get(limit).id());
      all = all.subList(0, limit);
    }
    return new ScrollPage(List.copyOf(all), next);
  }

  private static PointId min(PointId a, PointId b) {
    return a == null || (b != null && b.compareTo(a) < 0) ? b : a;
  }
}
