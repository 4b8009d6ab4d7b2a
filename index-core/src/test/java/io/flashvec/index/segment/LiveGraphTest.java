package io.flashvec.index.segment;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.testing.Await;
import io.flashvec.testing.SuppressForbidden;
import io.flashvec.testing.TestSeeds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The live graph of a growing segment against brute force, while it grows and is searched. */
class LiveGraphTest {

  static final int DIM = 24;
  static final int K = 10;
  static final LiveGraph.Params PARAMS = new LiveGraph.Params(24, 64, 1.2f);

  private static GrowingSegment segment(Distance d, float[][] data) {
    GrowingSegment g = new GrowingSegment(1, DIM, PARAMS, d, 64);
    for (int i = 0; i < data.length; i++) {
      g.append(PointId.of(i), d.prepare(data[i]), null);
    }
    return g;
  }

  private static List<Integer> search(GrowingSegment g, Distance d, float[] q, boolean exact) {
    TopK top = new TopK(d, K);
    Searches.search(g, q, new SearchParams(0, 0, 0, exact), null, top, 0, new SearchStats(), 1.0);
    int n = top.size();
    float[] s = new float[n];
    int[] slots = new int[n];
    int[] ords = new int[n];
    top.drainBestFirst(s, slots, ords);
    List<Integer> out = new ArrayList<>();
    for (int o : ords) {
      out.add(o);
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void graphSearchMatchesBruteForce(Distance d) {
    Random r = TestSeeds.random("live-graph-recall-" + d);
    float[][] data = TestVectors.latent(r, 4000, DIM);
    GrowingSegment g = segment(d, data);
    assertThat(g.indexSome(Integer.MAX_VALUE, () -> false)).isEqualTo(4000);
    assertThat(g.unindexed()).isZero();
    int hits = 0;
    int queries = 50;
    for (int i = 0; i < queries; i++) {
      float[] q = d.prepare(TestVectors.latent(r, 1, DIM)[0]);
      SearchStats st = new SearchStats();
      TopK top = new TopK(d, K);
      Searches.search(g, q, SearchParams.DEFAULT, null, top, 0, st, 1.0);
      assertThat(st.expanded).as("the graph was searched, not scanned").isPositive();
      assertThat(st.distanceComputations).isLessThan(4000);
      Set<Integer> truth = new HashSet<>(search(g, d, q, true));
      for (int o : search(g, d, q, false)) {
        if (truth.contains(o)) {
          hits++;
        }
      }
    }
    double recall = hits / (double) (queries * K);
    System.out.println("[flashvec] live graph " + d + " recall@10 = " + recall);
    // inner product is no metric, so a graph's neighbourhoods serve it less well: over seeds Dot
    // gives 0.944..0.996 (tests.seed=D254465BC5DC057D the lowest seen), Cosine and Euclid ~1.0
    assertThat(recall).isGreaterThanOrEqualTo(d == Distance.DOT ? 0.93 : 0.95);
  }

  /** {@code data}'s rows as a live graph's vectors. */
  private static LiveGraph.Vectors rows(float[][] data) {
    return new LiveGraph.Vectors() {
      @Override
      public float[] array(int ord) {
        return data[ord];
      }

      @Override
      public int offset(int ord) {
        return 0;
      }
    };
  }

  /** The {@link #K} rows of {@code data} with the largest dot product with {@code query}. */
  private static Set<Integer> exactTop(float[][] data, float[] query) {
    Integer[] order =
        java.util.stream.IntStream.range(0, data.length).boxed().toArray(Integer[]::new);
    java.util.Arrays.sort(
        order,
        java.util.Comparator.comparingDouble(
            i -> -io.flashvec.index.internal.VectorOps.dot(query, 0, data[i], 0, query.length)));
    return new HashSet<>(java.util.Arrays.asList(order).subList(0, K));
  }

  /**
   * Inserts beside queries (hurried) keep at most {@link LiveGraph#HURRY_DEGREE} out-edges with a
   * shorter construction list; the graph must still search about as well as one built at full
   * effort, at a growing segment's shared list and at the full one.
   */
  @Test
  void hurriedInsertsBuildAGraphNearlyAsGoodAsFullEffort() {
    int dim = 768;
    LiveGraph.Params params = new LiveGraph.Params(64, 100, 1.2f); // the collection defaults
    Random r = TestSeeds.random("live-graph-hurried");
    int queries = 100;
    Distance d = Distance.COSINE;
    // a latent model plus as much isotropic noise: hard enough that effort shows in recall
    float[][] all = TestVectors.latent(r, 5000 + queries, dim); // the last ones: the queries
    for (int i = 0; i < all.length; i++) {
      float[] x = d.prepare(all[i]);
      float[] noise = TestVectors.gaussian(r, dim);
      for (int j = 0; j < dim; j++) {
        x[j] += 0.06f * noise[j];
      }
      all[i] = d.prepare(x);
    }
    float[][] data = java.util.Arrays.copyOf(all, 5000);
    LiveGraph.Vectors vectors = rows(data);
    float[][] qs = new float[queries][];
    List<Set<Integer>> truths = new ArrayList<>();
    for (int t = 0; t < queries; t++) {
      qs[t] = d.prepare(all[data.length + t]);
      truths.add(exactTop(data, qs[t]));
    }
    int[] lists = {22, 60};
    double[][] recall = new double[2][lists.length];
    for (int hurry = 0; hurry < 2; hurry++) {
      LiveGraph g = new LiveGraph(vectors, dim, params, false, true, true);
      assertThat(g.catchUp(data.length, Integer.MAX_VALUE, () -> false, hurry == 1))
          .isEqualTo(data.length);
      if (hurry == 1) {
        int[] out = new int[256];
        assertThat(g.neighbours(data.length - 1, out))
            .as("the last node's out-edges (no later insert added back edges)")
            .isBetween(1, LiveGraph.HURRY_DEGREE);
      }
      for (int li = 0; li < lists.length; li++) {
        int hits = 0;
        for (int t = 0; t < queries; t++) {
          TopK top = new TopK(d, K);
          g.search(
              qs[t],
              K,
              lists[li],
              null,
              (dist, ord) -> top.offer(-dist, 0, ord),
              new SearchStats());
          int n = top.size();
          int[] ords = new int[n];
          top.drainBestFirst(new float[n], new int[n], ords);
          for (int o : ords) {
            if (truths.get(t).contains(o)) {
              hits++;
            }
          }
        }
        recall[hurry][li] = hits / (double) (queries * K);
      }
    }
    System.out.println(
        "[flashvec] 768-d live graph recall@10 at list 22/60: full effort "
            + java.util.Arrays.toString(recall[0])
            + ", hurried "
            + java.util.Arrays.toString(recall[1]));
    for (int li = 0; li < lists.length; li++) {
      assertThat(recall[1][li]).isGreaterThanOrEqualTo(recall[0][li] - 0.02);
    }
  }

  /**
   * From {@link LiveGraph#SIGN_MIN_DIM} dimensions construction and cosine/L2 searches navigate by
   * one-bit estimates; the graph must search as well as one built and searched on int8 distances.
   */
  @Test
  void signCodeNavigationBuildsAGraphAsGoodAsInt8Distances() {
    int dim = 768;
    Random r = TestSeeds.random("live-graph-signs");
    float[][] data = TestVectors.latent(r, 3000, dim);
    Distance d = Distance.COSINE;
    for (int i = 0; i < data.length; i++) {
      data[i] = d.prepare(data[i]);
    }
    LiveGraph.Vectors vectors = rows(data);
    double[] recall = new double[2];
    for (int signs = 0; signs < 2; signs++) {
      // signs: construction and searches navigate by sign codes (cosine: unit vectors)
      LiveGraph g = new LiveGraph(vectors, dim, PARAMS, false, true, signs == 1);
      assertThat(g.catchUp(data.length, Integer.MAX_VALUE, () -> false)).isEqualTo(data.length);
      Random qr = TestSeeds.random("live-graph-signs-queries");
      int hits = 0;
      int queries = 50;
      for (int t = 0; t < queries; t++) {
        float[] q = data[qr.nextInt(data.length)].clone();
        for (int j = 0; j < dim; j++) {
          q[j] += 0.02f * (float) qr.nextGaussian();
        }
        float[] query = d.prepare(q);
        Set<Integer> truth = exactTop(data, query);
        Set<Integer> got = new HashSet<>();
        g.search(query, K, 40, null, (dist, ord) -> got.add(ord), new SearchStats());
        got.retainAll(truth);
        hits += got.size();
      }
      recall[signs] = hits / (double) (queries * K);
    }
    System.out.println(
        "[flashvec] 768-d live graph recall@10 at list 40: int8 "
            + recall[0]
            + ", sign codes "
            + recall[1]);
    assertThat(recall[1]).isGreaterThanOrEqualTo(0.95).isGreaterThanOrEqualTo(recall[0] - 0.02);
  }

  /**
   * A growing segment beside a four times larger one searches its graph with a list sized to its
   * share (32 instead of 60; cosine and L2): the merged top-k is as good as with the full list and
   * close to brute force over both. The points of the two differ (new data), so the growing segment
   * holds its own part of every top-k.
   */
  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void aSegmentSearchedBesideALargerOneKeepsRecallWithItsShareOfTheList(Distance d) {
    Random r = TestSeeds.random("live-graph-share-" + d);
    float[][] data = TestVectors.latent(r, 10_000, DIM);
    float[][] earlier = new float[8000][];
    float[][] mine = new float[2000][];
    for (int i = 0, e = 0; i < 10_000; i++) {
      if (i % 5 == 4) {
        mine[i / 5] = data[i];
      } else {
        earlier[e++] = d.prepare(data[i]);
      }
    }
    GrowingSegment g = segment(d, mine);
    g.indexSome(Integer.MAX_VALUE, () -> false);
    double share = 2000 / 10_000.0;
    assertThat(SearchShare.searchList(60, K, share)).isEqualTo(22); // 12 + 3 * 3.1
    int queries = 200;
    int sharedHits = 0;
    int fullHits = 0;
    long sharedExpanded = 0;
    long fullExpanded = 0;
    SearchParams list60 = new SearchParams(60, 0, 0, false);
    for (int i = 0; i < queries; i++) {
      float[] q = d.prepare(TestVectors.latent(r, 1, DIM)[0]);
      TopK truth = earlierTop(d, q, earlier);
      Searches.search(
          g, q, new SearchParams(0, 0, 0, true), null, truth, 0, new SearchStats(), 1.0);
      Set<Long> want = drain(truth);
      TopK shared = earlierTop(d, q, earlier);
      SearchStats sharedStats = new SearchStats();
      Searches.search(g, q, list60, null, shared, 0, sharedStats, share);
      TopK full = earlierTop(d, q, earlier);
      SearchStats fullStats = new SearchStats();
      Searches.search(g, q, list60, null, full, 0, fullStats, 1.0);
      sharedExpanded += sharedStats.expanded;
      fullExpanded += fullStats.expanded;
      for (long x : drain(shared)) {
        sharedHits += want.contains(x) ? 1 : 0;
      }
      for (long x : drain(full)) {
        fullHits += want.contains(x) ? 1 : 0;
      }
    }
    double sharedRecall = sharedHits / (double) (queries * K);
    double fullRecall = fullHits / (double) (queries * K);
    System.out.println(
        "[flashvec] growing segment at a fifth of the points, "
            + d
            + ": recall@10 "
            + sharedRecall
            + " with list 22, "
            + fullRecall
            + " with 60; expanded "
            + sharedExpanded
            + " vs "
            + fullExpanded);
    if (d == Distance.DOT) { // raw inner products keep the full list
      assertThat(sharedRecall).isEqualTo(fullRecall);
      assertThat(sharedExpanded).isEqualTo(fullExpanded);
    } else {
      assertThat(sharedRecall).isGreaterThanOrEqualTo(0.97).isGreaterThan(fullRecall - 0.01);
      assertThat(sharedExpanded).isLessThan(fullExpanded);
    }
  }

  /** A top-k holding the best of {@code earlier} (slot 1), as an earlier segment would leave it. */
  private static TopK earlierTop(Distance d, float[] q, float[][] earlier) {
    TopK top = new TopK(d, K);
    for (int j = 0; j < earlier.length; j++) {
      top.offer(d.score(q, earlier[j], 0), 1, j);
    }
    return top;
  }

  /** The heap's entries as slot << 32 | ordinal. */
  private static Set<Long> drain(TopK top) {
    int n = top.size();
    float[] s = new float[n];
    int[] slots = new int[n];
    int[] ords = new int[n];
    top.drainBestFirst(s, slots, ords);
    Set<Long> out = new HashSet<>();
    for (int i = 0; i < n; i++) {
      out.add(((long) slots[i] << 32) | ords[i]);
    }
    return out;
  }

  @Test
  void unindexedTailIsScannedSoEveryAppendIsFoundAtOnce() {
    Random r = TestSeeds.random("live-graph-tail");
    float[][] data = TestVectors.latent(r, 3000, DIM);
    GrowingSegment g = segment(Distance.COSINE, data);
    g.indexSome(2500, () -> false);
    assertThat(g.unindexed()).isEqualTo(500);
    for (int i = 2500; i < 3000; i += 37) {
      float[] q = Distance.COSINE.prepare(data[i]);
      assertThat(search(g, Distance.COSINE, q, false).get(0)).isEqualTo(i);
    }
    for (int i = 0; i < 2500; i += 101) {
      float[] q = Distance.COSINE.prepare(data[i]);
      assertThat(search(g, Distance.COSINE, q, false).get(0)).isEqualTo(i);
    }
  }

  @Test
  void deletedPointsAreTraversedButNeverReturned() {
    Random r = TestSeeds.random("live-graph-deleted");
    float[][] data = TestVectors.latent(r, 3000, DIM);
    GrowingSegment g = segment(Distance.EUCLID, data);
    g.indexSome(Integer.MAX_VALUE, () -> false);
    // before the first deletion the search reads no deletion bits; the first one ends that
    assertThat(search(g, Distance.EUCLID, data[1233], false).get(0)).isEqualTo(1233);
    Set<Integer> deleted = new HashSet<>();
    for (int i = 0; i < 3000; i += 3) {
      g.markDeleted(i);
      deleted.add(i);
    }
    for (int i = 0; i < 3000; i += 97) {
      List<Integer> got = search(g, Distance.EUCLID, data[i], false);
      assertThat(got).hasSize(K).doesNotContainAnyElementsOf(deleted);
      if (!deleted.contains(i)) {
        assertThat(got.get(0)).isEqualTo(i);
      }
    }
    assertThat(search(g, Distance.EUCLID, data[1233], false)).hasSize(K).doesNotContain(1233);
  }

  @Test
  void trimmedListsRespectTheMaxDegreeAndKeepRecall() {
    Random r = TestSeeds.random("live-graph-trim");
    float[][] data = TestVectors.latent(r, 3000, DIM);
    GrowingSegment g = segment(Distance.COSINE, data);
    g.indexSome(Integer.MAX_VALUE, () -> false);
    LiveGraph graph = g.graph();
    int[] buf = new int[1024];
    int over = 0;
    for (int u = 0; u < 3000; u++) {
      if (graph.neighbours(u, buf) > PARAMS.maxDegree()) {
        over++;
      }
    }
    assertThat(over).as("slack lets lists run past the max degree between prunes").isPositive();
    graph.trimToMaxDegree();
    for (int u = 0; u < 3000; u++) {
      int deg = graph.neighbours(u, buf);
      assertThat(deg).isBetween(1, PARAMS.maxDegree());
      for (int i = 0; i < deg; i++) {
        assertThat(buf[i]).isBetween(0, 2999).isNotEqualTo(u);
      }
    }
    for (int i = 0; i < 3000; i += 111) {
      float[] q = Distance.COSINE.prepare(data[i]);
      assertThat(search(g, Distance.COSINE, q, false).get(0)).isEqualTo(i);
    }
  }

  @Test
  @SuppressForbidden(
      "the appends pause now and then so that the readers meet a graph of every size")
  void readersSearchWhileTheGraphGrows() throws Exception {
    Random r = TestSeeds.random("live-graph-concurrent");
    float[][] data = TestVectors.latent(r, 6000, DIM);
    GrowingSegment g = new GrowingSegment(1, DIM, PARAMS, Distance.COSINE, 64);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread indexer =
        Thread.ofPlatform()
            .start(
                () -> {
                  while (!stop.get()) {
                    if (g.indexSome(64, stop::get) == 0) {
                      Thread.onSpinWait();
                    }
                  }
                });
    List<Thread> readers = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      long seed = r.nextLong();
      readers.add(
          Thread.ofPlatform()
              .start(
                  () -> {
                    Random rr = new Random(seed);
                    try {
                      while (!stop.get()) {
                        int size = g.size();
                        if (size == 0) {
                          continue;
                        }
                        int target = rr.nextInt(size);
                        float[] q = g.vectorAt(target);
                        List<Integer> got = search(g, Distance.COSINE, q, false);
                        assertThat(got).isNotEmpty().allMatch(o -> o >= 0 && o < g.size());
                      }
                    } catch (Throwable e) {
                      failure.compareAndSet(null, e);
                    }
                  }));
    }
    for (int i = 0; i < data.length; i++) {
      g.append(PointId.of(i), Distance.COSINE.prepare(data[i]), null);
      if (i % 500 == 0) {
        Thread.sleep(5);
      }
    }
    Await.until(
        Duration.ofSeconds(60),
        "the indexer caught up",
        () -> g.unindexed() == 0 || failure.get() != null);
    stop.set(true);
    indexer.join();
    for (Thread t : readers) {
      t.join();
    }
    assertThat(failure.get()).isNull();
    assertThat(g.graph().size()).isEqualTo(6000);
  }

  @Test
  void smallAndEmptyGraphsAreScanned() {
    GrowingSegment g = new GrowingSegment(1, DIM, PARAMS, Distance.COSINE, 64);
    assertThat(search(g, Distance.COSINE, new float[DIM], false)).isEmpty();
    float[] v = new float[DIM];
    v[0] = 1;
    g.append(PointId.of(7), v, null);
    assertThat(g.indexSome(10, () -> false)).as("waits for a sample to fix its scale").isZero();
    g.freeze();
    assertThat(g.indexSome(10, () -> false)).as("a frozen segment is completed").isEqualTo(1);
    assertThat(g.graph().entry()).isZero();
    SearchStats st = new SearchStats();
    TopK top = new TopK(Distance.COSINE, K);
    Searches.search(g, v, SearchParams.DEFAULT, null, top, 0, st, 1.0);
    assertThat(top.size()).isEqualTo(1);
    assertThat(st.expanded).as("below MIN_GRAPH_NODES a scan is cheaper").isZero();
  }
}
