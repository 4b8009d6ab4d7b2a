package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchStats;
import io.flashvec.index.disk.BeamSearcher;
import io.flashvec.index.disk.GraphFile;
import io.flashvec.index.disk.PqCodebook;
import io.flashvec.index.disk.PqCodes;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.LiveGraph;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.MappedFile;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The pages a beam search reads per expanded node, counted offline: the same graph and codes
 * written in input order and in page-local order, the same queries searched with the on-disk beam
 * search, and for each query the distinct graph pages its expanded nodes lie on (a page already
 * read by the query costs nothing again). The page-local order must need fewer pages per expanded
 * node at the same recall. {@code -Dflashvec.layout.points=N} measures a larger segment.
 */
@ExtendWith(TestSeeds.Reporter.class)
class PageLayoutPagesTest {

  private static final Distance D = Distance.COSINE;
  private static final FileIO IO = FileIO.DEFAULT;

  @TempDir Path tmp;

  /** What one layout cost over all queries. */
  record Layout(long expanded, long pages, double recall) {
    double pagesPerExpanded() {
      return pages / (double) expanded;
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {96, 384})
  void pageLocalOrderReadsFewerPagesPerExpandedNodeAtTheSameRecall(int dim) throws IOException {
    int n = Integer.getInteger("flashvec.layout.points", dim == 96 ? 8000 : 4000);
    int queries = Integer.getInteger("flashvec.layout.queries", 200);
    int searchList = Integer.getInteger("flashvec.layout.searchList", 64);
    Random r = TestSeeds.random("PageLayoutPagesTest." + dim);
    float[][] data = PageLocalOrderTest.clustered(r, n + queries, dim, Math.max(8, n / 1000));
    IndexParams params = IndexParams.DEFAULT;
    GrowingSegment src =
        new GrowingSegment(
            0,
            dim,
            new LiveGraph.Params(params.maxDegree(), params.buildSearchList(), params.alpha()),
            D,
            searchList);
    for (int i = 0; i < n; i++) {
      src.append(PointId.of(i), D.prepare(data[i]), null);
    }
    src.freeze();
    src.indexSome(Integer.MAX_VALUE, () -> false);
    float[][] qs = new float[queries][];
    for (int q = 0; q < queries; q++) {
      qs[q] = D.prepare(data[n + q]);
    }
    ForkJoinPool pool = new ForkJoinPool(1);
    try {
      Path a = tmp.resolve("seg-a");
      Path b = tmp.resolve("seg-b");
      DiskAnnWriter.writeFromGraph(IO, a, 1, src, D, params, null, pool, null, false);
      PqCodebook book;
      try (DiskAnnSegment sa = DiskAnnSegment.open(IO, a, 1, searchList)) {
        book = sa.codebook();
      }
      Path a2 = tmp.resolve("seg-a2");
      DiskAnnWriter.writeFromGraph(IO, a2, 1, src, D, params, book, pool, null, false);
      DiskAnnWriter.writeFromGraph(IO, b, 2, src, D, params, book, pool, null, true);
      int[][] truth = truth(src, qs, 10);
      Layout input = measure(a2, 1, qs, truth, searchList);
      Layout page = measure(b, 2, qs, truth, searchList);
      System.out.printf(
          Locale.ROOT,
          "[flashvec] %d x %d-d, R=%d, %d records/page, L=%d, beam %d: expanded/query %.1f;"
              + " pages per expanded node, input order %.3f, page-local order %.3f;"
              + " recall@10 %.3f -> %.3f%n",
          n,
          dim,
          params.maxDegree(),
          GraphFile.recordsPerPage(dim, params.maxDegree()),
          searchList,
          DiskAnnSegment.COLD_BEAM_WIDTH,
          input.expanded() / (double) queries,
          input.pagesPerExpanded(),
          page.pagesPerExpanded(),
          input.recall(),
          page.recall());
      // the same graph and codes: the same nodes expanded and results, but for exact distances
      // that differ in the last bit (a SIMD sum of the same vector read at another offset)
      assertThat((double) page.expanded())
          .isCloseTo(input.expanded(), within(0.01 * input.expanded()));
      assertThat(page.recall()).isCloseTo(input.recall(), within(0.01));
      assertThat(page.pagesPerExpanded()).isLessThan(input.pagesPerExpanded());
    } finally {
      pool.shutdownNow();
    }
  }

  /** Searches every query with the on-disk beam search, counting the pages of expanded nodes. */
  private static Layout measure(Path dir, int id, float[][] qs, int[][] truth, int searchList)
      throws IOException {
    try (DiskAnnSegment seg = DiskAnnSegment.open(IO, dir, id, searchList);
        GraphFile g = GraphFile.open(IO, dir.resolve(DiskAnnFormat.GRAPH_FILE), false)) {
      PqCodes pq = PqCodes.read(IO, dir.resolve(DiskAnnFormat.PQ_FILE), id);
      BeamSearcher s = new BeamSearcher(g, pq, false);
      long expanded = 0;
      long pages = 0;
      int hits = 0;
      Set<Long> read = new HashSet<>();
      for (int q = 0; q < qs.length; q++) {
        read.clear();
        long[] count = new long[1];
        SearchStats stats = new SearchStats();
        s.search(
            qs[q],
            10,
            searchList,
            DiskAnnSegment.COLD_BEAM_WIDTH,
            false,
            ord -> {
              count[0]++; // called once for each expanded node
              read.add(g.recordOffset(ord) / MappedFile.PAGE);
              return true;
            },
            stats);
        assertThat(count[0]).isEqualTo(stats.expanded);
        expanded += count[0];
        pages += read.size();
        Set<PointId> want = new HashSet<>();
        for (int t : truth[q]) {
          want.add(PointId.of(t));
        }
        for (int i = 0; i < s.resultCount(); i++) {
          if (want.contains(seg.idAt(s.resultOrdinal(i)))) {
            hits++;
          }
        }
      }
      return new Layout(expanded, pages, hits / (10.0 * qs.length));
    }
  }

  /** The ids (= input ordinals) of each query's exact best {@code k}. */
  private static int[][] truth(GrowingSegment src, float[][] qs, int k) {
    int n = src.size();
    int[][] out = new int[qs.length][];
    for (int q = 0; q < qs.length; q++) {
      float[] sc = new float[n];
      Integer[] idx = new Integer[n];
      for (int i = 0; i < n; i++) {
        sc[i] = D.score(qs[q], src.vectorAt(i), 0);
        idx[i] = i;
      }
      Arrays.sort(idx, (x, y) -> Float.compare(sc[y], sc[x]));
      out[q] = new int[k];
      for (int i = 0; i < k; i++) {
        out[q][i] = (int) src.idAt(idx[i]).loBits();
      }
    }
    return out;
  }

  @Test
  void recordsPerPageOfTheMeasuredShapes() {
    assertThat(GraphFile.recordsPerPage(96, 64)).isEqualTo(6);
    assertThat(GraphFile.recordsPerPage(384, 64)).isEqualTo(2);
    assertThat(GraphFile.recordsPerPage(1024, 64)).isEqualTo(1);
  }
}
