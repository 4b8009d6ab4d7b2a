package io.flashvec.benchmarks;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchStats;
import io.flashvec.index.diskann.DiskAnnSegment;
import io.flashvec.index.diskann.DiskAnnWriter;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * One top-10 query against a built {@link DiskAnnSegment}: PQ-guided beam search over the on-disk
 * graph plus exact rerank from the inline vectors, at several {@code search_list} sizes.
 *
 * <p>The segment ({@link Index}) is built once per trial from {@code n × dim} {@link
 * SyntheticVectors} (latent Gaussian mixture, unit length, {@link Distance#COSINE}) with {@link
 * IndexParams#DEFAULT} (PQ subspaces overridable with {@code -p pqSubspaces=N}), in a temporary
 * directory that is deleted afterwards. It is shared by all benchmark threads ({@code -t 2}
 * measures concurrent searches). The files were just written, so the page cache is <b>warm</b>:
 * this measures CPU per query, not device reads.
 *
 * <p>Speed without recall means nothing: setup prints recall@10 against brute force and the mean
 * visited nodes per query for the trial's {@code search_list}, as a line starting with {@code #
 * recall@10} in the run's output.
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class GraphSearchBenchmark extends GraphSearchFixture {

  @Param({"20", "50", "100"})
  public int searchList;

  /** The built segment, its queries and their exact top-k; shared by all threads. */
  @State(Scope.Benchmark)
  public static class Index {

    @Param("20000")
    public int n;

    @Param("128")
    public int dim;

    /** PQ subspaces of the segment; 0 lets the index choose ({@code dim / 8}). */
    @Param("0")
    public int pqSubspaces;

    Path root;
    DiskAnnSegment segment;
    float[][] data;
    float[][] queries;
    long[][] truth;

    @Setup(Level.Trial)
    public void build() throws IOException {
      SyntheticVectors model = new SyntheticVectors(SEED, dim);
      data = model.sample(n, 1);
      queries = model.sample(QUERIES, 2);
      GrowingSegment src = new GrowingSegment(0, dim);
      int[] live = new int[n];
      for (int i = 0; i < n; i++) {
        src.append(PointId.of(i), DISTANCE.prepare(data[i]), null);
        live[i] = i;
      }
      src.freeze();
      root = createTempDir("flashvec-jmh-segment-");
      Path dir = root.resolve("seg-0");
      long t0 = System.nanoTime();
      IndexParams d = IndexParams.DEFAULT;
      IndexParams params =
          new IndexParams(d.type(), d.maxDegree(), d.buildSearchList(), d.alpha(), pqSubspaces);
      DiskAnnWriter.write(FileIO.DEFAULT, dir, 0, src, live, DISTANCE, params);
      segment = DiskAnnSegment.open(FileIO.DEFAULT, dir, 0, IndexParams.DEFAULT.buildSearchList());
      System.out.printf(
          Locale.ROOT,
          "# built segment [n=%d, dim=%d, seconds=%.1f, disk_bytes=%d]%n",
          n,
          dim,
          (System.nanoTime() - t0) / 1e9,
          segment.diskBytes());
      // the segment numbers its points in its own (page-local) order: the truth in its ordinals
      int[] ordOf = new int[n];
      for (int i = 0; i < segment.size(); i++) {
        ordOf[(int) segment.idAt(i).loBits()] = i;
      }
      truth = new long[QUERIES][];
      for (int q = 0; q < QUERIES; q++) {
        TopK top = new TopK(DISTANCE, K);
        offerAll(top, queries[q], data, 0);
        truth[q] = drainKeys(top);
        for (int i = 0; i < truth[q].length; i++) {
          truth[q][i] = key((int) (truth[q][i] >>> 32), ordOf[(int) truth[q][i]]);
        }
      }
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
      closeAndDelete(segment, root);
      segment = null;
    }
  }

  @Setup(Level.Trial)
  public void setup(Index index) {
    init(searchList);
    SearchStats stats = new SearchStats();
    measureRecall(
        q -> {
          topK.reset(K);
          index.segment.search(prepared(index.queries[q], stats), null, 1.0, topK, 0);
        },
        index.truth);
    searches = new PreparedSearch[QUERIES];
    for (int q = 0; q < QUERIES; q++) {
      searches[q] = PreparedSearch.of(index.queries[q], K, params);
    }
    System.out.printf(
        Locale.ROOT,
        "# recall@10=%.4f visited/query=%.0f [n=%d, dim=%d, pq_subspaces=%d, search_list=%d,"
            + " queries=%d, cache=warm]%n",
        recall,
        stats.visited / (double) QUERIES,
        index.n,
        index.dim,
        index.pqSubspaces,
        searchList,
        QUERIES);
  }

  @Benchmark
  public void search(Index index, Blackhole bh) {
    PreparedSearch search = searches[nextQuery()];
    topK.reset(K);
    index.segment.search(search, null, 1.0, topK, 0);
    consumeResults(bh);
  }
}
