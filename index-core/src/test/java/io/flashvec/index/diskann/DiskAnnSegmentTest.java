package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.index.disk.NodeCacheBudget;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.TopK;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Build, write, reopen and search a DiskANN segment against brute force; detect corruption. */
class DiskAnnSegmentTest {

  static final int DIM = 48;
  static final int N = 2000;

  @TempDir Path tmp;

  static float[][] latent(Random r, int n, int dim) {
    return TestVectors.latent(r, n, dim);
  }

  private GrowingSegment source(float[][] data, Distance d) {
    GrowingSegment g = new GrowingSegment(0, DIM, null, d, 100);
    for (int i = 0; i < data.length; i++) {
      g.append(
          PointId.of(i),
          d.prepare(data[i]),
          ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8));
    }
    g.freeze();
    return g;
  }

  /**
   * The segment's ordinal of each input point: a segment is written in its own (page-local) order,
   * see {@link io.flashvec.index.segment.SealedSegment#buildOrder}.
   */
  static int[] ordinalOf(DiskAnnSegment seg) throws IOException {
    int[] order = seg.buildOrder(FileIO.DEFAULT);
    return order == null ? all(seg.size()) : io.flashvec.index.disk.PageOrder.inverse(order);
  }

  private static int[] all(int n) {
    int[] a = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = i;
    }
    return a;
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void recallAgainstBruteForceAndExactScores(Distance d) throws IOException {
    Random r = TestSeeds.random("diskann-recall-" + d);
    float[][] data = latent(r, N, DIM);
    GrowingSegment src = source(data, d);
    Path dir = tmp.resolve("seg");
    DiskAnnWriter.write(
        FileIO.DEFAULT, dir, 7, src, all(N), d, new IndexParams("diskann", 32, 64, 1.2f, 0));
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 7, 100)) {
      assertThat(seg.size()).isEqualTo(N);
      assertThat(seg.liveCount()).isEqualTo(N);
      int k = 10;
      int hits = 0;
      int queries = 50;
      for (int q = 0; q < queries; q++) {
        float[] query = d.prepare(latent(r, 1, DIM)[0]);
        TopK exact = new TopK(d, k);
        Searches.search(src, query, SearchParams.DEFAULT, exact, 0);
        float[] es = new float[k];
        int[] eslot = new int[k];
        int[] eord = new int[k];
        exact.drainBestFirst(es, eslot, eord);
        TopK approx = new TopK(d, k);
        Searches.search(seg, query, SearchParams.DEFAULT, approx, 0);
        float[] as = new float[k];
        int[] aslot = new int[k];
        int[] aord = new int[k];
        int n = approx.drainBestFirst(as, aslot, aord);
        assertThat(n).isEqualTo(k);
        java.util.Set<Integer> truth = new java.util.HashSet<>();
        for (int o : eord) {
          truth.add(o);
        }
        for (int i = 0; i < n; i++) {
          if (truth.contains((int) seg.idAt(aord[i]).loBits())) {
            hits++;
          }
          // Returned scores are exact (reranked with the full vectors) in our units.
          float expected = d.score(query, seg.vectorAt(aord[i]), 0);
          assertThat(as[i])
              .isCloseTo(
                  expected,
                  org.assertj.core.data.Offset.offset(1e-3f * Math.max(1, Math.abs(expected))));
        }
      }
      double recall = hits / (double) (queries * k);
      System.out.println("[flashvec] diskann recall@10 " + d + " = " + recall);
      // Maximum inner product over unnormalised vectors is the hard case for graph indexes
      // (measured 0.73 here at search_list 100); normalised data (cosine) and L2 reach > 0.95.
      assertThat(recall).isGreaterThan(d == Distance.DOT ? 0.6 : 0.9);
      int five = ordinalOf(seg)[5];
      assertThat(seg.idAt(five)).isEqualTo(PointId.of(5));
      assertThat(new String(seg.payloadAt(five), StandardCharsets.UTF_8)).isEqualTo("{\"i\":5}");
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = DiskAnnSettings.Prefetch.class,
      names = {"OFF", "ON"})
  void hotNodeCacheGivesTheSameResultsAndServesTheFirstHops(DiskAnnSettings.Prefetch prefetch)
      throws IOException {
    Random r = TestSeeds.random("diskann-node-cache-" + prefetch);
    Distance d = Distance.EUCLID;
    float[][] data = latent(r, N, DIM);
    Path dir = tmp.resolve("seg");
    DiskAnnWriter.write(FileIO.DEFAULT, dir, 3, source(data, d), all(N), d, IndexParams.DEFAULT);
    int beam = prefetch == DiskAnnSettings.Prefetch.ON ? 4 : 1;
    NodeCacheBudget budget = new NodeCacheBudget(1L << 30);
    DiskAnnSettings plain = new DiskAnnSettings(prefetch, beam, null, NodeCacheBudget.NONE);
    DiskAnnSettings cached = new DiskAnnSettings(prefetch, beam, null, budget);
    try (DiskAnnSegment without = DiskAnnSegment.open(FileIO.DEFAULT, dir, 3, 100, false, plain);
        DiskAnnSegment with = DiskAnnSegment.open(FileIO.DEFAULT, dir, 3, 100, false, cached)) {
      assertThat(without.nodeCache()).isNull();
      assertThat(with.nodeCache().size()).isEqualTo(N / 10);
      // the cached records are native memory with a slice of their own: not in the heap's count
      assertThat(with.memoryBytes() - with.heapBytes())
          .isEqualTo(with.nodeCache().nativeBytes())
          .isPositive();
      assertThat(without.heapBytes()).isEqualTo(without.memoryBytes());
      SearchStats a = new SearchStats();
      SearchStats b = new SearchStats();
      int queries = 100;
      for (int q = 0; q < queries; q++) {
        float[] query = d.prepare(latent(r, 1, DIM)[0]);
        TopK ta = new TopK(d, 10);
        TopK tb = new TopK(d, 10);
        Searches.search(without, query, SearchParams.DEFAULT, null, ta, 0, a, 1.0);
        Searches.search(with, query, SearchParams.DEFAULT, null, tb, 0, b, 1.0);
        float[] sa = new float[10];
        float[] sb = new float[10];
        int[] oa = new int[10];
        int[] ob = new int[10];
        int[] slots = new int[10];
        assertThat(ta.drainBestFirst(sa, slots, oa)).isEqualTo(tb.drainBestFirst(sb, slots, ob));
        assertThat(ob).isEqualTo(oa);
        // equal up to the last bits: the Vector API's interpreted and compiled kernels sum in
        // different orders, whichever memory the record is read from
        for (int i = 0; i < 10; i++) {
          assertThat(sb[i]).isCloseTo(sa[i], org.assertj.core.data.Percentage.withPercentage(1e-3));
        }
      }
      assertThat(b.expanded).isEqualTo(a.expanded);
      assertThat(b.distanceComputations).isEqualTo(a.distanceComputations);
      assertThat(a.nodeCacheHits).isZero();
      // every search expands the entry first, and it is cached
      assertThat(b.nodeCacheHits).isGreaterThanOrEqualTo(queries).isLessThan(b.expanded);
      System.out.printf(
          Locale.ROOT,
          "[flashvec] hot node cache (%s): %d of %d nodes cached, %.1f of %.1f expanded per query"
              + " read from it%n",
          prefetch,
          with.nodeCache().size(),
          N,
          b.nodeCacheHits / (double) queries,
          b.expanded / (double) queries);
      assertThat(budget.members()).isEqualTo(1);
    }
    assertThat(budget.members()).isZero();
  }

  @Test
  void rotatedPqRanksTheNearestNeighboursBetterThanPlainPqOnLowRankData() {
    Random r = TestSeeds.random("rotated-pq");
    int n = 4000;
    int dim = 64;
    float[][] data = TestVectors.latent(r, n + 50, dim);
    var vectors = new java.util.ArrayList<io.github.jbellis.jvector.vector.types.VectorFloat<?>>();
    var vts =
        io.github.jbellis.jvector.vector.VectorizationProvider.getInstance().getVectorTypeSupport();
    for (int i = 0; i < n; i++) {
      vectors.add(vts.createFloatVector(data[i]));
    }
    var ravv = new io.github.jbellis.jvector.graph.ListRandomAccessVectorValues(vectors, dim);
    double plain = topTenAgreement(PqTrainer.train(ravv, n, dim, 16, true, null, false), data, n);
    double rotated = topTenAgreement(PqTrainer.train(ravv, n, dim, 16, true, null, true), data, n);
    System.out.printf(
        Locale.ROOT,
        "top-10 agreement with exact L2: plain PQ %.3f, rotated PQ %.3f%n",
        plain,
        rotated);
    assertThat(rotated).isGreaterThan(plain + 0.05);
  }

  /** How many of the exact top 10 of the 50 queries after the first n rows are PQ's top 10. */
  private static double topTenAgreement(io.flashvec.index.disk.PqCodes pq, float[][] data, int n) {
    int[] all = new int[n];
    for (int i = 0; i < n; i++) {
      all[i] = i;
    }
    float[] approx = new float[n];
    float[] table = pq.newTable();
    long hits = 0;
    int queries = data.length - n;
    for (int qi = 0; qi < queries; qi++) {
      float[] q = data[n + qi];
      pq.fillTable(q, true, table, new float[pq.codebook().scratchLength()]);
      pq.distances(table, all, n, approx);
      Integer[] byExact = new Integer[n];
      Integer[] byPq = new Integer[n];
      double[] exact = new double[n];
      for (int i = 0; i < n; i++) {
        byExact[i] = i;
        byPq[i] = i;
        for (int d = 0; d < q.length; d++) {
          exact[i] += (q[d] - data[i][d]) * (q[d] - data[i][d]);
        }
      }
      java.util.Arrays.sort(byExact, (a, b) -> Double.compare(exact[a], exact[b]));
      java.util.Arrays.sort(byPq, (a, b) -> Float.compare(approx[a], approx[b]));
      var top = java.util.Set.of(java.util.Arrays.copyOf(byExact, 10));
      for (int i = 0; i < 10; i++) {
        if (top.contains(byPq[i])) {
          hits++;
        }
      }
    }
    return hits / (10.0 * queries);
  }

  @Test
  void idsAndPayloadsRoundTripThroughTheMappedMetadata() throws IOException {
    Random r = TestSeeds.random("diskann-ids-payloads");
    int n = 300;
    float[][] data = latent(r, n, DIM);
    GrowingSegment g = new GrowingSegment(0, DIM);
    PointId[] ids = new PointId[n];
    byte[][] payloads = new byte[n][];
    for (int i = 0; i < n; i++) {
      // numeric ids (one with every bit set), UUIDs (one whose high half is 0, like a number)
      ids[i] =
          switch (i % 4) {
            case 0 -> PointId.of(new java.util.UUID(r.nextLong(), r.nextLong()));
            case 1 -> i == 1 ? PointId.of(-1L) : PointId.of(i * 1_000_003L);
            case 2 -> PointId.of(new java.util.UUID(0, i));
            default -> PointId.of(i);
          };
      // absent, empty and non-empty payloads
      payloads[i] =
          i % 5 == 0
              ? null
              : i % 7 == 0
                  ? new byte[0]
                  : ("{\"k\":\"" + "x".repeat(i) + "\"}").getBytes(StandardCharsets.UTF_8);
      g.append(ids[i], Distance.COSINE.prepare(data[i]), payloads[i]);
    }
    g.freeze();
    Path dir = tmp.resolve("seg");
    DiskAnnWriter.write(
        FileIO.DEFAULT,
        dir,
        3,
        g,
        all(n),
        Distance.COSINE,
        new IndexParams("diskann", 16, 32, 1.2f, 0));
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 3, 50)) {
      int[] ordOf = ordinalOf(seg);
      for (int i = 0; i < n; i++) {
        assertThat(seg.idAt(ordOf[i])).as("id %d", i).isEqualTo(ids[i]);
        assertThat(seg.payloadAt(ordOf[i])).as("payload %d", i).isEqualTo(payloads[i]);
      }
    }
    // Segments without any payload keep no offsets and answer null.
    GrowingSegment bare = new GrowingSegment(0, DIM);
    for (int i = 0; i < 50; i++) {
      bare.append(PointId.of(i), Distance.COSINE.prepare(data[i]), null);
    }
    bare.freeze();
    DiskAnnWriter.write(
        FileIO.DEFAULT,
        tmp.resolve("bare"),
        4,
        bare,
        all(50),
        Distance.COSINE,
        new IndexParams("diskann", 16, 32, 1.2f, 0));
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, tmp.resolve("bare"), 4, 50)) {
      assertThat(seg.payloadAt(49)).isNull();
      assertThatThrownBy(() -> seg.payloadAt(50)).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  @Test
  void payloadsHeldOnTheHeapAnswerAsTheMappedOnesWithoutReadingTheFile() throws IOException {
    Random r = TestSeeds.random("diskann-payloads-on-heap");
    int n = 200;
    float[][] data = latent(r, n, DIM);
    GrowingSegment g = new GrowingSegment(0, DIM);
    for (int i = 0; i < n; i++) {
      byte[] payload =
          i % 6 == 0
              ? null
              : i % 9 == 0
                  ? new byte[0]
                  : ("{\"k\":" + r.nextInt() + ",\"s\":\"" + "y".repeat(r.nextInt(40)) + "\"}")
                      .getBytes(StandardCharsets.UTF_8);
      g.append(PointId.of(i), Distance.COSINE.prepare(data[i]), payload);
    }
    g.freeze();
    Path dir = tmp.resolve("heap");
    DiskAnnWriter.write(
        FileIO.DEFAULT,
        dir,
        5,
        g,
        all(n),
        Distance.COSINE,
        new IndexParams("diskann", 16, 32, 1.2f, 0));
    byte[][] mapped = new byte[n][];
    long mappedMemory;
    long payloadFileBytes;
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 5, 50)) {
      assertThat(seg.payloadsOnHeap()).isFalse();
      for (int ord = 0; ord < n; ord++) {
        mapped[ord] = seg.payloadAt(ord);
      }
      mappedMemory = seg.memoryBytes();
      payloadFileBytes = seg.payloadFileBytes();
    }
    assertThat(java.util.Arrays.stream(mapped).filter(java.util.Objects::nonNull).count())
        .isGreaterThan(n / 2);
    try (DiskAnnSegment seg =
        DiskAnnSegment.open(FileIO.DEFAULT, dir, 5, 50, false, DiskAnnSettings.DEFAULT, true)) {
      assertThat(seg.payloadsOnHeap()).isTrue();
      assertThat(seg.payloadFileBytes()).isEqualTo(payloadFileBytes);
      long payloadBytes = 0;
      for (byte[] p : mapped) {
        payloadBytes += p == null ? 0 : p.length;
      }
      // the copies count as heap, the offsets of the mapped segment do not exist here
      assertThat(seg.memoryBytes()).isGreaterThanOrEqualTo(mappedMemory - 8L * n + payloadBytes);
      // the metadata file is not read after open: zeroing it changes no answer
      Files.write(dir.resolve(DiskAnnFormat.META_FILE), new byte[(int) payloadFileBytes]);
      for (int ord = 0; ord < n; ord++) {
        assertThat(seg.payloadAt(ord)).as("payload of ordinal %d", ord).isEqualTo(mapped[ord]);
      }
      assertThatThrownBy(() -> seg.payloadAt(n)).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  private static int[] top(DiskAnnSegment seg, float[] q, SearchParams p, SearchStats stats) {
    TopK t = new TopK(Distance.COSINE, 10);
    Searches.search(seg, q, p, null, t, 0, stats, 1.0);
    int[] ords = new int[t.size()];
    t.drainBestFirst(new float[ords.length], new int[ords.length], ords);
    return ords;
  }

  @Test
  void evictionPrefetchAndBeamWidthChangeCostNotCorrectness() throws IOException {
    Random r = TestSeeds.random("diskann-cold");
    float[][] data = latent(r, N, DIM);
    Path dir = tmp.resolve("seg-cold");
    DiskAnnWriter.write(
        FileIO.DEFAULT,
        dir,
        4,
        source(data, Distance.COSINE),
        all(N),
        Distance.COSINE,
        IndexParams.DEFAULT);
    float[] q = Distance.COSINE.prepare(latent(r, 1, DIM)[0]);
    SearchParams wide = new SearchParams(200, 0, 0, false);
    int[] baseline;
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 4, 64)) {
      baseline = top(seg, q, wide, new SearchStats());
    }
    for (DiskAnnSettings.Prefetch mode : DiskAnnSettings.Prefetch.values()) {
      DiskAnnSettings settings = new DiskAnnSettings(mode, 0, null, NodeCacheBudget.NONE);
      try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 4, 64, false, settings)) {
        for (int beam : new int[] {1, 4, 16}) {
          seg.evictFromPageCache();
          SearchStats stats = new SearchStats();
          int[] got = top(seg, q, new SearchParams(200, beam, 0, false), stats);
          // a wider beam expands in another order; at L=200 on 2,000 points both find the truth
          assertThat(got).as("mode %s beam %d", mode, beam).containsExactlyInAnyOrder(baseline);
          assertThat(stats.pagesRead).isGreaterThanOrEqualTo(0);
          assertThat(stats.expanded).isGreaterThanOrEqualTo(200);
        }
      }
    }
  }

  /**
   * A segment counts as served from memory only after {@link DiskAnnSegment#CALM_SEARCHES} searches
   * in a row read nothing from the device; opening it or evicting its pages resets that.
   */
  @Test
  void servedFromMemoryAfterCalmSearchesOnly() throws IOException {
    Random r = TestSeeds.random("diskann-calm");
    float[][] data = latent(r, 500, DIM);
    Path dir = tmp.resolve("seg-calm");
    DiskAnnWriter.write(
        FileIO.DEFAULT,
        dir,
        5,
        source(data, Distance.COSINE),
        all(500),
        Distance.COSINE,
        IndexParams.DEFAULT);
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 5, 64)) {
      float[] q = Distance.COSINE.prepare(data[3]);
      assertThat(seg.servedFromMemory()).as("just opened").isFalse();
      for (int i = 0; i < DiskAnnSegment.CALM_SEARCHES * 3; i++) {
        top(seg, q, SearchParams.DEFAULT, new SearchStats()); // the pages were just written
      }
      assertThat(seg.servedFromMemory()).isTrue();
      seg.evictFromPageCache();
      assertThat(seg.servedFromMemory()).as("evicted").isFalse();
    }
  }

  @Test
  void anUnreadableGraphBuildFileOpensTheSegmentForARebuild() throws IOException {
    Random r = TestSeeds.random("diskann-build-file");
    float[][] data = latent(r, 300, DIM);
    Path dir = tmp.resolve("seg");
    DiskAnnWriter.write(
        FileIO.DEFAULT,
        dir,
        2,
        source(data, Distance.EUCLID),
        all(300),
        Distance.EUCLID,
        IndexParams.DEFAULT);
    int degree = IndexParams.DEFAULT.maxDegree();
    int list = IndexParams.DEFAULT.buildSearchList();
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 2, 100)) {
      assertThat(seg.graphBuild().differsFrom(degree, list)).isFalse();
    }
    // the file is derived data: damaged, it must not make the segment (and its shard) unopenable
    java.nio.file.Files.write(dir.resolve(DiskAnnFormat.BUILD_FILE), new byte[] {1, 2, 3});
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 2, 100)) {
      assertThat(seg.size()).isEqualTo(300);
      assertThat(seg.graphBuild().differsFrom(degree, list))
          .as("counts as built with other settings, so the compactor rebuilds it")
          .isTrue();
    }
  }

  @Test
  void deletedPointsAreNeverReturnedAndSurviveReopen() throws IOException {
    Random r = TestSeeds.random("diskann-delete");
    float[][] data = latent(r, 500, DIM);
    GrowingSegment src = source(data, Distance.EUCLID);
    Path dir = tmp.resolve("seg");
    DiskAnnWriter.write(
        FileIO.DEFAULT, dir, 1, src, all(500), Distance.EUCLID, IndexParams.DEFAULT);
    int p42;
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 1, 100)) {
      p42 = ordinalOf(seg)[42];
      TopK top = new TopK(Distance.EUCLID, 1);
      Searches.search(seg, data[42], SearchParams.DEFAULT, top, 0);
      int[] ord = new int[1];
      top.drainBestFirst(new float[1], new int[1], ord);
      assertThat(ord[0]).isEqualTo(p42);
      assertThat(seg.markDeleted(p42)).isTrue();
      assertThat(seg.markDeleted(p42)).isFalse();
      seg.writeDeleted(FileIO.DEFAULT);
    }
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 1, 100)) {
      assertThat(seg.isDeleted(p42)).isTrue();
      assertThat(seg.liveCount()).isEqualTo(499);
      for (SearchParams p :
          new SearchParams[] {SearchParams.DEFAULT, new SearchParams(0, 0, 0, true)}) {
        TopK top = new TopK(Distance.EUCLID, 5);
        Searches.search(seg, data[42], p, top, 0);
        int[] ords = new int[top.size()];
        top.drainBestFirst(new float[ords.length], new int[ords.length], ords);
        assertThat(ords).doesNotContain(p42).hasSize(5);
      }
    }
  }

  @Test
  void corruptedOrTruncatedFilesAreDetectedAtOpen() throws IOException {
    Random r = TestSeeds.random("diskann-corrupt");
    float[][] data = latent(r, 300, DIM);
    for (String file : new String[] {"graph.fvg", "pq.fvs", "meta.fvs"}) {
      Path dir = tmp.resolve("seg-" + file);
      DiskAnnWriter.write(
          FileIO.DEFAULT,
          dir,
          3,
          source(data, Distance.DOT),
          all(300),
          Distance.DOT,
          IndexParams.DEFAULT);
      try (RandomAccessFile f = new RandomAccessFile(dir.resolve(file).toFile(), "rw")) {
        long pos = f.length() / 2;
        f.seek(pos);
        int b = f.read();
        f.seek(pos);
        f.write(b ^ 0x10);
      }
      assertThatThrownBy(() -> DiskAnnSegment.open(FileIO.DEFAULT, dir, 3, 100))
          .isInstanceOf(CorruptFileException.class)
          .hasMessageContaining(file);
      Path dir2 = tmp.resolve("trunc-" + file);
      DiskAnnWriter.write(
          FileIO.DEFAULT,
          dir2,
          3,
          source(data, Distance.DOT),
          all(300),
          Distance.DOT,
          IndexParams.DEFAULT);
      try (RandomAccessFile f = new RandomAccessFile(dir2.resolve(file).toFile(), "rw")) {
        f.setLength(f.length() - 7);
      }
      assertThatThrownBy(() -> DiskAnnSegment.open(FileIO.DEFAULT, dir2, 3, 100))
          .isInstanceOf(CorruptFileException.class)
          .hasMessageContaining(file);
    }
  }
}
