package io.flashvec.benchmarks;

import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchStats;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.LiveGraph;
import io.flashvec.index.segment.TopK;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * One top-10 query against a growing segment's live graph (ADR 0011): what every query pays for the
 * points written since the last seal, beside the sealed segments' search.
 *
 * <p>The segment ({@link Segment}) takes {@code n × dim} {@link SyntheticVectors} (cosine, unit
 * length) and builds its live graph with {@link IndexParams#DEFAULT}'s degree, list and alpha, once
 * per trial. {@code share} is the segment's share of the points a query searches, which sizes its
 * search list as {@code Shard.search} does ({@code 1}: the whole list; {@code 0.13}: 15k growing
 * beside 100k sealed). Setup prints recall@10 against brute force over the segment and the mean
 * scored and reranked nodes per query, as a line starting with {@code # recall@10}.
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LiveGraphSearchBenchmark extends GraphSearchFixture {

  @Param({"60"})
  public int searchList;

  @Param({"1.0", "0.13"})
  public double share;

  /**
   * Kilobytes written between two searches (outside the measured time), so that the segment's
   * memory is not in the core's caches, as in the server, where the sealed segments' search runs
   * between two growing searches; 0: none (warm caches).
   */
  @Param("0")
  public int polluteKb;

  long[] pollution;

  final SearchStats stats = new SearchStats();

  /** The segment with its built live graph, its queries and their exact top-k; shared. */
  @State(Scope.Benchmark)
  public static class Segment {

    @Param("15000")
    public int n;

    @Param("768")
    public int dim;

    /**
     * Points of the sealed segments searched before the growing one: each query's top-10 among that
     * many other points of the same model is in the heap when the growing segment is searched (as
     * {@code Shard.search} searches sealed segments first); 0: an empty heap.
     */
    @Param("85000")
    public int sealedPoints;

    /**
     * Whether the graph is built as beside a query load ({@code LiveGraph.FAST_LIST}, {@code
     * LiveGraph.HURRY_DEGREE}) instead of at full effort (as after a bulk load).
     */
    @Param("false")
    public boolean hurried;

    GrowingSegment segment;
    float[][] queries;
    float[][] sealedScores; // per query: the sealed top-10 scores, best first
    int[][] sealedOrds; // and their ordinals among the sealed points
    long[][] truth; // per query: the top-10 of both, as slot << 32 | ordinal

    @Setup(Level.Trial)
    public void build() {
      SyntheticVectors model = new SyntheticVectors(SEED, dim);
      float[][] data = model.sample(n, 1);
      queries = model.sample(QUERIES, 2);
      IndexParams d = IndexParams.DEFAULT;
      segment =
          new GrowingSegment(
              0,
              dim,
              new LiveGraph.Params(d.maxDegree(), d.buildSearchList(), d.alpha()),
              DISTANCE,
              d.buildSearchList());
      for (int i = 0; i < n; i++) {
        segment.append(PointId.of(i), DISTANCE.prepare(data[i]), null);
      }
      long t0 = System.nanoTime();
      while (segment.indexSome(n, () -> false, hurried) > 0) {
        // until the graph holds every point
      }
      System.out.printf(
          Locale.ROOT,
          "# built live graph [n=%d, dim=%d, hurried=%b, seconds=%.2f, us_per_insert=%.1f]%n",
          n,
          dim,
          hurried,
          (System.nanoTime() - t0) / 1e9,
          (System.nanoTime() - t0) / 1e3 / n);
      float[][] sealed = model.sample(sealedPoints, 3);
      for (int i = 0; i < sealedPoints; i++) {
        sealed[i] = DISTANCE.prepare(sealed[i]);
      }
      truth = new long[QUERIES][];
      sealedScores = new float[QUERIES][];
      sealedOrds = new int[QUERIES][];
      for (int q = 0; q < QUERIES; q++) {
        float[] query = DISTANCE.prepare(queries[q]);
        queries[q] = query;
        TopK old = new TopK(DISTANCE, K);
        offerAll(old, query, sealed, 1);
        float[] scores = new float[K];
        int[] best = new int[K];
        int got = old.drainBestFirst(scores, new int[K], best);
        sealedScores[q] = java.util.Arrays.copyOf(scores, got);
        sealedOrds[q] = java.util.Arrays.copyOf(best, got);
        TopK all = new TopK(DISTANCE, K);
        offerAll(all, query, sealed, 1);
        offerAll(all, query, data, 0);
        truth[q] = drainKeys(all);
      }
    }

    /** Resets {@code top} to the sealed segments' results for query {@code q}. */
    void sealedResults(TopK top, int q) {
      top.reset(K);
      for (int i = 0; i < sealedScores[q].length; i++) {
        top.offer(sealedScores[q][i], 1, sealedOrds[q][i]);
      }
    }
  }

  @Setup(Level.Trial)
  public void setup(Segment s) {
    init(searchList);
    SearchStats st = new SearchStats();
    measureRecall(
        q -> {
          s.sealedResults(topK, q);
          s.segment.search(prepared(s.queries[q], st), null, share, topK, 0);
        },
        s.truth);
    searches = new PreparedSearch[QUERIES];
    for (int q = 0; q < QUERIES; q++) {
      searches[q] = prepared(s.queries[q], stats);
    }
    System.out.printf(
        Locale.ROOT,
        "# recall@10=%.4f scored/query=%.0f reranked/query=%.0f [n=%d, sealed=%d, dim=%d,"
            + " search_list=%d, share=%.2f, queries=%d]%n",
        recall,
        st.visited / (double) QUERIES,
        st.reranked / (double) QUERIES,
        s.n,
        s.sealedPoints,
        s.dim,
        searchList,
        share,
        QUERIES);
  }

  /** Evicts the segment from the caches ({@link #polluteKb}). */
  @Setup(Level.Invocation)
  public void pollute() {
    if (polluteKb > 0) {
      if (pollution == null) {
        pollution = new long[polluteKb * 128];
      }
      for (int i = 0; i < pollution.length; i += 8) {
        pollution[i]++;
      }
    }
  }

  @Benchmark
  public void search(Segment s, Blackhole bh) {
    int q = nextQuery();
    s.sealedResults(topK, q);
    s.segment.search(searches[q], null, share, topK, 0);
    consumeResults(bh);
  }
}
