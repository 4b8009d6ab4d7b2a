package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.index.disk.NodeCacheBudget;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.ThreadIo;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A segment sealed raw ({@link DiskAnnWriter#writeRaw}): no graph, its points not indexed, and
 * searched against brute force over its live points, unfiltered, filtered and exact, with deletes.
 */
@ExtendWith(TestSeeds.Reporter.class)
class RawSegmentTest {

  static final int DIM = 48;
  static final int N = 3000;
  static final int K = 10;

  @TempDir Path tmp;

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void aRawSegmentIsSearchedAsBruteForceSearchesItsLivePoints(Distance d) throws IOException {
    Random r = TestSeeds.random("RawSegmentTest.search-" + d);
    float[][] data = TestVectors.latent(r, N, DIM);
    GrowingSegment src = new GrowingSegment(0, DIM, null, d, 100);
    for (int i = 0; i < N; i++) {
      src.append(
          PointId.of(i),
          d.prepare(data[i]),
          ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8));
    }
    src.freeze();
    // the frozen segment's live points: every seventh was replaced before the seal
    List<Integer> live = new ArrayList<>();
    for (int i = 0; i < N; i++) {
      if (i % 7 != 3) {
        live.add(i);
      }
    }
    int[] ords = live.stream().mapToInt(Integer::intValue).toArray();
    Path dir = tmp.resolve("raw");
    DiskAnnWriter.writeRaw(
        FileIO.DEFAULT, dir, 5, src, ords, d, IndexParams.DEFAULT, null, null, null);
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 5, 100)) {
      assertThat(seg.hasGraph()).isFalse();
      assertThat(seg.size()).isEqualTo(ords.length);
      assertThat(seg.buildOrder(FileIO.DEFAULT)).as("raw segments keep the input order").isNull();
      for (int i = 0; i < ords.length; i += 97) {
        assertThat(seg.idAt(i)).isEqualTo(PointId.of(ords[i]));
        // the stored vector was normalized when appended; normalizing again here may sum in another
        // order (the Vector API's reductions differ between interpreted and compiled code)
        assertThat(seg.vectorAt(i))
            .containsExactly(
                d.prepare(data[ords[i]]), org.assertj.core.api.Assertions.within(1e-6f));
        assertThat(new String(seg.payloadAt(i), StandardCharsets.UTF_8))
            .isEqualTo("{\"i\":" + ords[i] + "}");
      }
      // deletes after the seal
      for (int i = 0; i < ords.length; i += 11) {
        seg.markDeleted(i);
      }
      assertThat(seg.indexedLiveCount()).as("no index answers for a raw segment").isZero();
      assertThat(seg.liveCount()).isPositive();

      IntPredicate odd = ord -> ords[ord] % 2 == 1;
      AcceptedOrdinals oddOnly =
          AcceptedOrdinals.evaluate(seg, (id, payload) -> id.number() % 2 == 1);
      int queries = 40;
      int hits = 0;
      int filteredHits = 0;
      for (int q = 0; q < queries; q++) {
        float[] query = d.prepare(TestVectors.latent(r, 1, DIM)[0]);
        Set<Integer> truth = bruteForce(seg, d, query, ord -> true);
        Set<Integer> found = search(seg, d, query, SearchParams.DEFAULT, null);
        hits += overlap(truth, found);
        // exact: identical to brute force
        assertThat(search(seg, d, query, new SearchParams(0, 0, 0, true), null))
            .as("exact search, query %d", q)
            .isEqualTo(truth);
        Set<Integer> oddTruth = bruteForce(seg, d, query, odd);
        Set<Integer> oddFound = search(seg, d, query, SearchParams.DEFAULT, oddOnly);
        for (int ord : oddFound) {
          assertThat(odd.test(ord)).as("filtered result %d matches", ord).isTrue();
          assertThat(seg.isDeleted(ord)).as("deleted %d is never returned", ord).isFalse();
        }
        filteredHits += overlap(oddTruth, oddFound);
      }
      double recall = hits / (double) (queries * K);
      double filteredRecall = filteredHits / (double) (queries * K);
      System.out.printf(
          java.util.Locale.ROOT,
          "[flashvec] raw segment recall@10 %s = %.4f, filtered %.4f%n",
          d,
          recall,
          filteredRecall);
      assertThat(recall).isGreaterThanOrEqualTo(0.99);
      assertThat(filteredRecall).isGreaterThanOrEqualTo(0.99);
    }
    // reopened: still raw (deletes are the shard's to persist); on the heap ({@code hnsw}) it is
    // scanned exactly
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 5, 100)) {
      assertThat(seg.hasGraph()).isFalse();
      assertThat(seg.graphPoints()).isZero();
    }
    try (DiskAnnSegment seg =
        DiskAnnSegment.open(FileIO.DEFAULT, dir, 5, 100, true, DiskAnnSettings.DEFAULT)) {
      assertThat(seg.hasGraph()).isFalse();
      for (int q = 0; q < 5; q++) {
        float[] query = d.prepare(TestVectors.latent(r, 1, DIM)[0]);
        assertThat(search(seg, d, query, SearchParams.DEFAULT, null))
            .as("in-memory raw search, query %d", q)
            .isEqualTo(bruteForce(seg, d, query, ord -> true));
      }
    }
  }

  private static int overlap(Set<Integer> truth, Set<Integer> found) {
    int n = 0;
    for (int o : found) {
      if (truth.contains(o)) {
        n++;
      }
    }
    return n;
  }

  /** The segment's ordinals of its best {@code K} live points among {@code accept}. */
  /**
   * The records a raw segment's rerank reads from the device count as pages read, as a graph
   * segment's do, so that the server's page count agrees with the device's.
   */
  @Test
  void aColdRawSearchCountsThePagesItReads() throws IOException {
    assumeTrue(ThreadIo.available(), "no per-thread fault counters here");
    Distance d = Distance.COSINE;
    Random r = TestSeeds.random("RawSegmentTest.pages");
    int n = 20_000;
    float[][] data = TestVectors.latent(r, n, DIM);
    GrowingSegment src = new GrowingSegment(0, DIM, null, d, 100);
    int[] ords = new int[n];
    for (int i = 0; i < n; i++) {
      src.append(PointId.of(i), d.prepare(data[i]), null);
      ords[i] = i;
    }
    src.freeze();
    Path dir = tmp.resolve("raw-pages");
    DiskAnnWriter.writeRaw(
        FileIO.DEFAULT, dir, 6, src, ords, d, IndexParams.DEFAULT, null, null, null);
    DiskAnnSettings settings =
        new DiskAnnSettings(DiskAnnSettings.Prefetch.OFF, 1, null, NodeCacheBudget.NONE);
    SearchStats stats = new SearchStats();
    long faults = 0;
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 6, 100, false, settings)) {
      for (int q = 0; q < 20; q++) {
        float[] query = d.prepare(TestVectors.latent(r, 1, DIM)[0]);
        assumeTrue(seg.evictFromPageCache(), "the kernel refused to evict the segment file");
        long f0 = ThreadIo.majorFaults();
        Searches.search(seg, query, SearchParams.DEFAULT, null, new TopK(d, K), 0, stats, 1.0);
        faults += ThreadIo.majorFaults() - f0;
      }
    }
    System.out.printf(
        Locale.ROOT,
        "[flashvec] cold raw searches: %d faults, %d pages counted%n",
        faults,
        stats.pagesRead);
    assumeTrue(faults > 0, "the kernel evicted nothing here");
    assertThat(stats.pagesRead).isPositive().isLessThanOrEqualTo(faults);
  }

  private static Set<Integer> search(
      DiskAnnSegment seg, Distance d, float[] query, SearchParams p, AcceptedOrdinals accept) {
    TopK top = new TopK(d, K);
    Searches.search(seg, query, p, accept, top, 0, new SearchStats(), 1.0);
    float[] scores = new float[K];
    int[] slots = new int[K];
    int[] ordinals = new int[K];
    int n = top.drainBestFirst(scores, slots, ordinals);
    assertThat(n).isEqualTo(K);
    Set<Integer> out = new HashSet<>();
    for (int i = 0; i < n; i++) {
      assertThat(scores[i])
          .as("returned scores are exact")
          .isCloseTo(
              d.score(query, seg.vectorAt(ordinals[i]), 0),
              org.assertj.core.data.Offset.offset(1e-3f * Math.max(1, Math.abs(scores[i]))));
      out.add(ordinals[i]);
    }
    return out;
  }

  private static Set<Integer> bruteForce(
      DiskAnnSegment seg, Distance d, float[] query, IntPredicate accept) {
    List<Integer> ords = new ArrayList<>();
    for (int i = 0; i < seg.size(); i++) {
      if (!seg.isDeleted(i) && accept.test(i)) {
        ords.add(i);
      }
    }
    ords.sort(
        Comparator.comparingDouble(
                (Integer i) -> (d.higherIsBetter() ? -1 : 1) * d.score(query, seg.vectorAt(i), 0))
            .thenComparing(i -> i));
    return new HashSet<>(ords.subList(0, K));
  }
}
