package io.flashvec.index.query;

import io.flashvec.index.Distance;
import io.flashvec.index.Record;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Merges the best-first answers of several shards into the global best {@code k}, in a bounded heap
 * (worst on top) that never holds more than {@code k}: the one merge of the standalone collection
 * and the cluster proxy, for vector search, BM25 text search and ordered scrolls. Ties are broken
 * by point id, so the result does not depend on the order the shards answered in.
 *
 * <p>Not thread-safe: one per request.
 *
 * @param <T> what is merged: {@link Record}s or {@link Ordered} records
 */
public final class TopMerge<T> {

  private final int k;
  private final Comparator<T> better;
  private final PriorityQueue<T> heap;

  private TopMerge(int k, Comparator<T> better) {
    if (k < 0) {
      throw new IllegalArgumentException("k must not be negative [k=" + k + "]");
    }
    this.k = k;
    this.better = better;
    this.heap = new PriorityQueue<>(Math.min(k, 1024) + 1, better.reversed());
  }

  /** The best {@code k} search results by score under {@code distance}. */
  public static TopMerge<Record> byScore(Distance distance, int k) {
    Comparator<Record> score = Comparator.comparingDouble(Record::score);
    return new TopMerge<>(
        k, (distance.higherIsBetter() ? score.reversed() : score).thenComparing(Record::id));
  }

  /** The best {@code k} BM25 hits (higher scores first). */
  public static TopMerge<Record> byTextScore(int k) {
    return new TopMerge<>(
        k, Comparator.comparingDouble(Record::score).reversed().thenComparing(Record::id));
  }

  /** The first {@code k} points of an ordered scroll (ties by id). */
  public static TopMerge<Ordered> byOrderValue(boolean ascending, int k) {
    return new TopMerge<>(
        k,
        Comparator.comparingDouble((Ordered o) -> ascending ? o.value() : -o.value())
            .thenComparing(o -> o.record().id()));
  }

  /** Offers one candidate. */
  public void offer(T t) {
    if (k == 0) {
      return;
    }
    if (heap.size() < k) {
      heap.add(t);
    } else if (better.compare(t, heap.peek()) < 0) {
      heap.poll();
      heap.add(t);
    }
  }

  /** Offers a shard's candidates. */
  public void offerAll(Collection<? extends T> ts) {
    for (T t : ts) {
      offer(t);
    }
  }

  /** The merged best, best first, without the first {@code offset}. */
  public List<T> bestFirst(int offset) {
    List<T> out = new ArrayList<>(heap);
    out.sort(better);
    return offset >= out.size() ? List.of() : List.copyOf(out.subList(offset, out.size()));
  }
}
