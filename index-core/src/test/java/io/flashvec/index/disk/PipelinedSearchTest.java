package io.flashvec.index.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchStats;
import io.flashvec.index.TestVectors;
import io.flashvec.index.diskann.DiskAnnWriter;
import io.flashvec.index.internal.VectorOps;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.IoThreads;
import io.flashvec.storage.PageReader;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The pipelined beam search against the synchronous one, over a graph file written by the segment
 * writer: the same results when every record is resident, the same recall when every record is read
 * through the asynchronous reader, and read errors that surface instead of hanging.
 */
class PipelinedSearchTest {

  static final int DIM = 48; // 324-byte records: 12 to a page
  static final int N = 3000;
  static final int K = 10;
  static final int L = 60;
  static final int QUERIES = 60;

  @TempDir static Path tmp;

  static float[][] data;
  static float[][] queries;
  static int[][] truth;
  static GraphFile graph;
  static PqCodes pq;
  static IoThreads threads;
  static PageReader reader;

  @BeforeAll
  static void build() throws IOException {
    Random r = TestSeeds.random("pipelined-search");
    data = TestVectors.latent(r, N, DIM);
    queries = TestVectors.latent(r, QUERIES, DIM);
    GrowingSegment g = new GrowingSegment(0, DIM, null, Distance.EUCLID, 100);
    int[] all = new int[N];
    for (int i = 0; i < N; i++) {
      g.append(PointId.of(i), data[i], null);
      all[i] = i;
    }
    g.freeze();
    Path dir = tmp.resolve("seg");
    DiskAnnWriter.write(FileIO.DEFAULT, dir, 1, g, all, Distance.EUCLID, IndexParams.DEFAULT);
    graph = GraphFile.open(FileIO.DEFAULT, dir.resolve("graph.fvg"), false);
    pq = PqCodes.read(FileIO.DEFAULT, dir.resolve("pq.fvs"), 1);
    threads = new IoThreads(8);
    reader = PageReader.open(graph.file().path(), threads);
    // The writer renumbers the points in page-local order: rank them by the graph's ordinals.
    for (int i = 0; i < N; i++) {
      data[i] =
          graph
              .segment()
              .asSlice(graph.recordOffset(i), 4L * DIM)
              .toArray(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN));
    }
    truth = new int[QUERIES][];
    for (int q = 0; q < QUERIES; q++) {
      truth[q] = bruteForce(queries[q]);
    }
  }

  @AfterAll
  static void close() {
    reader.close();
    threads.close();
    graph.close();
  }

  private static int[] bruteForce(float[] q) {
    Integer[] ord = new Integer[N];
    float[] d = new float[N];
    for (int i = 0; i < N; i++) {
      ord[i] = i;
      d[i] = VectorOps.squareDistance(q, 0, data[i], 0, DIM);
    }
    java.util.Arrays.sort(ord, (a, b) -> Float.compare(d[a], d[b]));
    int[] out = new int[K];
    for (int i = 0; i < K; i++) {
      out[i] = ord[i];
    }
    return out;
  }

  private static int[] results(BeamSearcher s) {
    int[] out = new int[s.resultCount()];
    for (int i = 0; i < out.length; i++) {
      out[i] = s.resultOrdinal(i);
    }
    return out;
  }

  private static int hits(int[] found, int[] expected) {
    Set<Integer> t = new HashSet<>();
    for (int e : expected) {
      t.add(e);
    }
    int h = 0;
    for (int f : found) {
      h += t.contains(f) ? 1 : 0;
    }
    return h;
  }

  @Test
  void residentRecordsGiveTheSynchronousResults() {
    BeamSearcher sync = new BeamSearcher(graph, pq, true);
    BeamSearcher piped = new BeamSearcher(graph, pq, true);
    // the file was just written: every page is in the page cache, so no read is issued and the
    // pipelined search expands best-first one record at a time, as the synchronous one at W=1
    for (int q = 0; q < QUERIES; q++) {
      SearchStats a = new SearchStats();
      SearchStats b = new SearchStats();
      sync.search(queries[q], K, L, 1, false, null, a);
      piped.searchPipelined(queries[q], K, L, 4, null, null, reader, b);
      assertThat(results(piped)).isEqualTo(results(sync));
      assertThat(b.expanded).isEqualTo(a.expanded);
      assertThat(b.pagesRead).isZero();
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 8})
  void readRecordsKeepTheRecallOfTheSynchronousSearch(int w) {
    BeamSearcher sync = new BeamSearcher(graph, pq, true);
    BeamSearcher piped = new BeamSearcher(graph, pq, true);
    piped.readAll(true);
    long threadPages0 = threads.pagesRead();
    int syncHits = 0;
    int pipedHits = 0;
    int same = 0;
    SearchStats a = new SearchStats();
    SearchStats b = new SearchStats();
    long samePage = 0;
    for (int q = 0; q < QUERIES; q++) {
      sync.search(queries[q], K, L, w, false, null, a);
      int[] expected = results(sync);
      piped.searchPipelined(queries[q], K, L, w, null, null, reader, b);
      int[] got = results(piped);
      assertThat(got).hasSize(K).doesNotHaveDuplicates();
      syncHits += hits(expected, truth[q]);
      pipedHits += hits(got, truth[q]);
      same += hits(got, expected);
      samePage += piped.samePageExpansions();
    }
    double syncRecall = syncHits / (double) (QUERIES * K);
    double pipedRecall = pipedHits / (double) (QUERIES * K);
    System.out.printf(
        Locale.ROOT,
        "[flashvec] pipelined W=%d: recall %.3f (sync %.3f), overlap %.3f, %.1f pages and %.1f"
            + " expansions per query (%.1f from a page read for another), sync %.1f%n",
        w,
        pipedRecall,
        syncRecall,
        same / (double) (QUERIES * K),
        b.pagesRead / (double) QUERIES,
        b.expanded / (double) QUERIES,
        samePage / (double) QUERIES,
        a.expanded / (double) QUERIES);
    assertThat(pipedRecall).isGreaterThanOrEqualTo(syncRecall - 0.01).isGreaterThan(0.9);
    assertThat(same / (double) (QUERIES * K)).isGreaterThan(0.95);
    // every record expanded outside the pages read came with one of them
    assertThat(b.pagesRead).isPositive().isEqualTo(threads.pagesRead() - threadPages0);
    assertThat(b.expanded).isEqualTo(b.pagesRead + samePage);
    assertThat(b.pagesRead).isLessThanOrEqualTo(a.expanded + (long) w * QUERIES);
  }

  @Test
  void hotNodeCacheRecordsNeedNoRead() {
    HotNodeCache cache = HotNodeCache.build(graph, Long.MAX_VALUE);
    BeamSearcher piped = new BeamSearcher(graph, pq, true);
    piped.readAll(true);
    SearchStats with = new SearchStats();
    SearchStats without = new SearchStats();
    for (int q = 0; q < QUERIES; q++) {
      piped.searchPipelined(queries[q], K, L, 4, null, cache, reader, with);
      piped.searchPipelined(queries[q], K, L, 4, null, null, reader, without);
    }
    assertThat(with.nodeCacheHits).isGreaterThanOrEqualTo(QUERIES);
    assertThat(with.pagesRead).isLessThan(without.pagesRead);
  }

  @Test
  void manySearchesShareTheReaderFromVirtualThreads() throws Exception {
    List<Future<Integer>> hits = new ArrayList<>();
    try (var vts = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int t = 0; t < 16; t++) {
        hits.add(
            vts.submit(
                () -> {
                  BeamSearcher s = new BeamSearcher(graph, pq, true);
                  s.readAll(true);
                  int h = 0;
                  for (int q = 0; q < QUERIES; q++) {
                    s.searchPipelined(queries[q], K, L, 4, null, null, reader, new SearchStats());
                    h += hits(results(s), truth[q]);
                  }
                  return h;
                }));
      }
    }
    for (Future<Integer> f : hits) {
      assertThat(f.get() / (double) (QUERIES * K)).isGreaterThan(0.9);
    }
  }

  /** Fails the {@code failAt}-th read (counting from 1), from an I/O thread; the rest pass. */
  private static PageReader failing(int failAt) {
    AtomicInteger reads = new AtomicInteger();
    return new PageReader() {
      @Override
      public void read(long offset, MemorySegment dst, int tag, Completion done) {
        if (reads.incrementAndGet() == failAt) {
          // the failure comes from another thread, as a real one would
          Thread.ofPlatform()
              .start(
                  () -> done.completed(tag, new IOException("injected [offset=" + offset + "]")));
        } else {
          reader.read(offset, dst, tag, done);
        }
      }

      @Override
      public Path path() {
        return reader.path();
      }

      @Override
      public void close() {}
    };
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 5, 20})
  void aFailedReadFailsTheSearchWithoutHanging(int failAt) {
    BeamSearcher s = new BeamSearcher(graph, pq, true);
    s.readAll(true);
    org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
        Duration.ofSeconds(30),
        () ->
            assertThatThrownBy(
                    () ->
                        s.searchPipelined(
                            queries[0], K, L, 4, null, null, failing(failAt), new SearchStats()))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("injected"));
    // the searcher is usable again: nothing of the failed search is left in flight
    SearchStats st = new SearchStats();
    s.searchPipelined(queries[0], K, L, 4, null, null, reader, st);
    assertThat(hits(results(s), truth[0])).isGreaterThanOrEqualTo(8);
  }

  @Test
  void aClosedReaderFailsTheSearch() throws IOException {
    BeamSearcher s = new BeamSearcher(graph, pq, true);
    s.readAll(true);
    PageReader closed = PageReader.open(graph.file().path(), threads);
    closed.close();
    assertThatThrownBy(
            () -> s.searchPipelined(queries[1], K, L, 4, null, null, closed, new SearchStats()))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("closed");
  }
}
