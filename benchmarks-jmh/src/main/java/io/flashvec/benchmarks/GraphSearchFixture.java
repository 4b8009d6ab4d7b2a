package io.flashvec.benchmarks;

import io.flashvec.index.Distance;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.internal.VectorOps;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.segment.TopK;
import java.util.function.IntConsumer;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the graph search benchmarks share: {@value #QUERIES} top-{@value #K} cosine queries, the
 * per-thread result heap and its drain buffers, the query cursor, and recall@10 against brute
 * force. A result is keyed {@code slot << 32 | ordinal}, so that points of several segments (a
 * growing segment beside sealed ones) are told apart.
 */
abstract class GraphSearchFixture extends AbstractBenchmark {

  static final int K = 10;
  static final int QUERIES = 256;
  static final Distance DISTANCE = Distance.COSINE;

  SearchParams params;
  TopK topK;
  PreparedSearch[] searches;
  final float[] scores = new float[K];
  final int[] slots = new int[K];
  final int[] ords = new int[K];
  int cursor;

  /** Recall@10 at this trial's parameters, from setup; for the smoke test and the log. */
  double recall;

  /** Sets this trial's search list and a fresh result heap. */
  void init(int searchList) {
    params = new SearchParams(searchList, 0, 0, false);
    topK = new TopK(DISTANCE, K);
  }

  /** A search for {@code query} at this trial's parameters that counts its work into {@code st}. */
  PreparedSearch prepared(float[] query, SearchStats st) {
    return new PreparedSearch(
        new SearchRequest(query, K, 0, null, params, false, false, null), query, null, st);
  }

  /**
   * Runs {@code search} for every query (it leaves its results in {@link #topK}), sets {@link
   * #recall} to the share of {@code truth}'s keys found, and returns it.
   */
  double measureRecall(IntConsumer search, long[][] truth) {
    long hits = 0;
    for (int q = 0; q < QUERIES; q++) {
      search.accept(q);
      int got = topK.drainBestFirst(scores, slots, ords);
      for (int i = 0; i < got; i++) {
        long key = key(slots[i], ords[i]);
        for (long t : truth[q]) {
          if (key == t) {
            hits++;
            break;
          }
        }
      }
    }
    recall = hits / (double) (QUERIES * K);
    return recall;
  }

  /** The index of the query to run now; moves the cursor on, cycling through the queries. */
  int nextQuery() {
    int q = cursor;
    cursor = q + 1 == QUERIES ? 0 : q + 1;
    return q;
  }

  /** Drains the heap filled by a measured search into the blackhole. */
  void consumeResults(Blackhole bh) {
    bh.consume(topK.drainBestFirst(scores, slots, ords));
    bh.consume(ords);
  }

  static long key(int slot, int ordinal) {
    return (long) slot << 32 | ordinal;
  }

  /**
   * Offers every point of {@code points} (as segment {@code slot}) with its score for the query.
   */
  static void offerAll(TopK top, float[] query, float[][] points, int slot) {
    for (int i = 0; i < points.length; i++) {
      top.offer(VectorOps.dot(query, 0, points[i], 0, query.length), slot, i);
    }
  }

  /** Drains {@code top} as result keys, best first. */
  static long[] drainKeys(TopK top) {
    int[] s = new int[K];
    int[] o = new int[K];
    int got = top.drainBestFirst(new float[K], s, o);
    long[] out = new long[got];
    for (int i = 0; i < got; i++) {
      out[i] = key(s[i], o[i]);
    }
    return out;
  }
}
