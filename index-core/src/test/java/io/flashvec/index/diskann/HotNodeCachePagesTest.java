package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.Searches;
import io.flashvec.index.disk.NodeCacheBudget;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the graph file evicted from the page cache before every query, a segment with a hot node
 * cache reads fewer pages from the device than one without: the first hops of every search come
 * from the cache. Skipped where the kernel does not evict the file (a file system without a page
 * cache of its own, such as tmpfs).
 */
@ExtendWith(TestSeeds.Reporter.class)
class HotNodeCachePagesTest {

  static final int DIM = 64;

  @TempDir Path tmp;

  @Test
  void coldSearchesReadFewerPagesWithTheCache() throws IOException {
    int n = 20_000;
    int queries = 30;
    Random r = TestSeeds.random("hot-node-cache-pages");
    float[][] centres = new float[50][DIM];
    for (float[] c : centres) {
      for (int j = 0; j < DIM; j++) {
        c[j] = (float) r.nextGaussian();
      }
    }
    Distance d = Distance.COSINE;
    float[][] data = SharedSearchListTest.clustered(r, n, centres);
    GrowingSegment src = new GrowingSegment(0, DIM, null, d, 100);
    int[] all = new int[n];
    for (int i = 0; i < n; i++) {
      src.append(PointId.of(i), d.prepare(data[i]), null);
      all[i] = i;
    }
    src.freeze();
    Path dir = tmp.resolve("seg");
    DiskAnnWriter.write(FileIO.DEFAULT, dir, 0, src, all, d, IndexParams.DEFAULT);
    float[][] qs = SharedSearchListTest.clustered(r, queries, centres);
    for (int q = 0; q < queries; q++) {
      qs[q] = d.prepare(qs[q]);
    }
    SearchStats without = cold(dir, qs, NodeCacheBudget.NONE);
    SearchStats with = cold(dir, qs, new NodeCacheBudget(64L << 20));
    System.out.printf(
        Locale.ROOT,
        "[flashvec] cold searches of %d x %d-d, a tenth cached: pages/query %.1f -> %.1f,"
            + " expanded/query %.1f, read from the cache/query %.1f%n",
        n,
        DIM,
        without.pagesRead / (double) queries,
        with.pagesRead / (double) queries,
        with.expanded / (double) queries,
        with.nodeCacheHits / (double) queries);
    assumeTrue(without.pagesRead > 0, "the kernel evicted nothing here");
    assertThat(with.expanded).isEqualTo(without.expanded);
    assertThat(with.nodeCacheHits).isGreaterThanOrEqualTo(queries);
    assertThat(with.pagesRead).isLessThan(without.pagesRead);
  }

  /** Each query after evicting the graph file, one record per step, no prefetch. */
  private static SearchStats cold(Path dir, float[][] qs, NodeCacheBudget budget)
      throws IOException {
    DiskAnnSettings settings = new DiskAnnSettings(DiskAnnSettings.Prefetch.OFF, 1, null, budget);
    SearchStats stats = new SearchStats();
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 0, 100, false, settings)) {
      for (float[] q : qs) {
        assumeTrue(seg.evictFromPageCache(), "the kernel refused to evict the graph file");
        Searches.search(
            seg, q, SearchParams.DEFAULT, null, new TopK(Distance.COSINE, 10), 0, stats, 1.0);
      }
    }
    return stats;
  }
}
