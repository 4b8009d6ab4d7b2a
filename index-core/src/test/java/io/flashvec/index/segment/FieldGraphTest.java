package io.flashvec.index.segment;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.SearchStats;
import io.flashvec.index.TestVectors;
import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The graph of a sealed segment's dense field against brute force: nodes are the ordinals that have
 * the field, searches return ordinals, filters and the build's progress are honoured.
 */
class FieldGraphTest {

  static final int DIM = 24;
  static final int K = 10;

  /** Every third ordinal lacks the field, so node and ordinal differ. */
  private static int[] ordinals(int points) {
    List<Integer> out = new ArrayList<>();
    for (int ord = 0; out.size() < points; ord++) {
      if (ord % 3 != 2) {
        out.add(ord);
      }
    }
    return out.stream().mapToInt(Integer::intValue).toArray();
  }

  private static float[][] byOrdinal(int[] ords, float[][] data, Distance d) {
    float[][] out = new float[ords[ords.length - 1] + 1][];
    for (int i = 0; i < ords.length; i++) {
      out[ords[i]] = d.prepare(data[i]);
    }
    return out;
  }

  private static List<Integer> bruteForce(
      float[][] vectors, Distance d, float[] q, IntPredicate accept) {
    List<Integer> ords = new ArrayList<>();
    for (int ord = 0; ord < vectors.length; ord++) {
      if (vectors[ord] != null && (accept == null || accept.test(ord))) {
        ords.add(ord);
      }
    }
    ords.sort(
        (a, b) -> {
          int c = Float.compare(d.score(q, vectors[b], 0), d.score(q, vectors[a], 0));
          return d == Distance.EUCLID ? -c : c;
        });
    return ords.subList(0, Math.min(K, ords.size()));
  }

  private static Set<Integer> search(FieldGraph g, float[] q, IntPredicate accept) {
    Set<Integer> out = new HashSet<>();
    g.search(q, K, 64, accept, out::add, new SearchStats());
    return out;
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void searchFindsTheNearestOrdinalsThatHaveTheField(Distance d) {
    Random r = TestSeeds.random("field-graph-recall-" + d);
    int[] ords = ordinals(3000);
    float[][] vectors = byOrdinal(ords, TestVectors.latent(r, ords.length, DIM), d);
    FieldGraph g =
        new FieldGraph(
            "f",
            ords,
            DIM,
            d,
            new FieldGraph.Params(12, 64, Float.NaN),
            ord -> vectors[ord].clone());
    assertThat(g.build(1)).isTrue();
    assertThat(g.built()).isEqualTo(ords.length);
    int hits = 0;
    int filteredHits = 0;
    IntPredicate even = ord -> ord % 2 == 0;
    for (int i = 0; i < 50; i++) {
      float[] q = d.prepare(TestVectors.gaussian(r, DIM));
      Set<Integer> found = search(g, q, null);
      for (int ord : found) {
        assertThat(vectors[ord]).as("a result has the field").isNotNull();
      }
      found.retainAll(bruteForce(vectors, d, q, null));
      hits += found.size();
      Set<Integer> filtered = search(g, q, even);
      assertThat(filtered).allMatch(ord -> ord % 2 == 0);
      filtered.retainAll(bruteForce(vectors, d, q, even));
      filteredHits += filtered.size();
    }
    assertThat(hits / (50.0 * K)).as("recall@10").isGreaterThanOrEqualTo(0.9);
    assertThat(filteredHits / (50.0 * K)).as("filtered recall@10").isGreaterThanOrEqualTo(0.85);
  }

  static final int TURBO_DIM = 64;

  /** Searches navigate by TurboQuant codes at every width, rescored exactly (ADR 0045). */
  @ParameterizedTest
  @EnumSource(io.flashvec.index.TurboQuant.Bits.class)
  void turboCodesNavigateSearchesAtEveryWidth(io.flashvec.index.TurboQuant.Bits bits) {
    for (Distance d : new Distance[] {Distance.COSINE, Distance.DOT, Distance.EUCLID}) {
      Random r = TestSeeds.random("field-graph-turbo-" + bits + "-" + d);
      int[] ords = ordinals(2000);
      float[][] vectors = byOrdinal(ords, TestVectors.latent(r, ords.length, TURBO_DIM), d);
      FieldGraph g =
          new FieldGraph(
              "f",
              ords,
              TURBO_DIM,
              d,
              new FieldGraph.Params(12, 64, Float.NaN, bits),
              ord -> vectors[ord].clone());
      long before = g.memoryBytes();
      assertThat(g.build(1)).isTrue();
      // a sealed turbo graph keeps its TurboQuant codes and drops the int8 codes construction used
      io.flashvec.index.TurboQuant tq = new io.flashvec.index.TurboQuant(TURBO_DIM, bits, true);
      assertThat(g.memoryBytes()).isGreaterThan(before);
      assertThat(g.memoryBytes()).isGreaterThanOrEqualTo((long) ords.length * tq.codeBytes());
      // 100 queries: the graph differs in its ties where the JIT sums a distance in another order,
      // and 30 queries left the 1-bit recall within 0.05 of its bound
      int hits = 0;
      for (int i = 0; i < 100; i++) {
        float[] q = d.prepare(TestVectors.gaussian(r, TURBO_DIM));
        Set<Integer> found = search(g, q, null);
        found.retainAll(bruteForce(vectors, d, q, null));
        hits += found.size();
      }
      // 64-d is the hard case for a few bits a coordinate (about 0.70 / 0.80 / 0.86 / 0.99 cosine)
      assertThat(hits / (100.0 * K))
          .as("recall@10 navigating by " + bits + " codes, " + d)
          .isGreaterThanOrEqualTo(
              switch (bits) {
                case BITS4 -> 0.9;
                case BITS2 -> 0.75;
                default -> 0.6; // 1 or 1.5 bits a coordinate: coarse, Qdrant's users oversample
              });
    }
  }

  @Test
  void aQuantileCodesTheBulkOfTheValuesAndStillRescoresExactly() {
    Random r = TestSeeds.random("field-graph-quantile");
    int[] ords = ordinals(2000);
    float[][] vectors = byOrdinal(ords, TestVectors.latent(r, ords.length, DIM), Distance.DOT);
    FieldGraph g =
        new FieldGraph(
            "f",
            ords,
            DIM,
            Distance.DOT,
            new FieldGraph.Params(12, 64, 0.99f),
            ord -> vectors[ord].clone());
    assertThat(g.build(1)).isTrue();
    int hits = 0;
    for (int i = 0; i < 30; i++) {
      float[] q = TestVectors.gaussian(r, DIM);
      Set<Integer> found = search(g, q, null);
      found.retainAll(bruteForce(vectors, Distance.DOT, q, null));
      hits += found.size();
    }
    assertThat(hits / (30.0 * K))
        .as("recall@10 with codes clipped at the 0.99 quantile")
        .isGreaterThanOrEqualTo(0.85);
  }

  @Test
  void aClosedGraphStopsItsBuildAndReadsNoMoreVectors() {
    Random r = TestSeeds.random("field-graph-close");
    int[] ords = ordinals(5000);
    float[][] vectors = byOrdinal(ords, TestVectors.latent(r, ords.length, DIM), Distance.COSINE);
    AtomicInteger reads = new AtomicInteger();
    FieldGraph[] holder = new FieldGraph[1];
    holder[0] =
        new FieldGraph(
            "f",
            ords,
            DIM,
            Distance.COSINE,
            new FieldGraph.Params(8, 32, Float.NaN),
            ord -> {
              if (reads.incrementAndGet() == 600) {
                // the segment closes while its graph is built (the build's lock is reentrant)
                holder[0].close();
              }
              return vectors[ord].clone();
            });
    assertThat(holder[0].build(1)).isFalse();
    int atClose = reads.get();
    assertThat(holder[0].built()).isLessThan(ords.length);
    assertThat(holder[0].build(1)).isFalse();
    assertThat(reads.get()).as("no read after close").isEqualTo(atClose);
  }

  @Test
  void moreCandidatesRescoredFindAtLeastAsManyNeighbours() {
    Random r = TestSeeds.random("field-graph-rerank");
    int[] ords = ordinals(3000);
    float[][] vectors = byOrdinal(ords, TestVectors.latent(r, ords.length, DIM), Distance.EUCLID);
    FieldGraph g =
        new FieldGraph(
            "f",
            ords,
            DIM,
            Distance.EUCLID,
            new FieldGraph.Params(12, 64, Float.NaN),
            ord -> vectors[ord].clone());
    assertThat(g.build(1)).isTrue();
    int few = 0;
    int many = 0;
    for (int i = 0; i < 40; i++) {
      float[] q = TestVectors.gaussian(r, DIM);
      List<Integer> truth = bruteForce(vectors, Distance.EUCLID, q, null);
      Set<Integer> a = new HashSet<>();
      g.search(q, K, K, K, null, a::add, new SearchStats());
      Set<Integer> b = new HashSet<>();
      g.search(q, K, K, 200, null, b::add, new SearchStats());
      assertThat(a).hasSize(K);
      assertThat(b).hasSize(200);
      a.retainAll(truth);
      b.retainAll(truth);
      few += a.size();
      many += b.size();
    }
    assertThat(many).as("rescoring 200 candidates, not 10").isGreaterThanOrEqualTo(few);
    assertThat(many / (40.0 * K)).isGreaterThanOrEqualTo(0.97);
  }

  @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp;

  /**
   * A graph written when its build completes reads back complete, without a vector read, and
   * answers every search as the built one did, ids and order; with sign codes (512-d and more) too.
   * Without room for its file none is written.
   */
  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(ints = {24, 512})
  void aWrittenGraphReadsBackAndSearchesAsBuilt(int dim) throws Exception {
    Random r = TestSeeds.random("field-graph-file-" + dim);
    int[] ords = ordinals(1200);
    float[][] vectors = byOrdinal(ords, TestVectors.latent(r, ords.length, dim), Distance.COSINE);
    AtomicInteger reads = new AtomicInteger();
    java.util.function.IntFunction<float[]> read =
        ord -> {
          reads.incrementAndGet();
          return vectors[ord].clone();
        };
    FieldGraph.Params params = new FieldGraph.Params(8, 48, Float.NaN);
    FieldGraph.Store store =
        new FieldGraph.Store(io.flashvec.storage.FileIO.DEFAULT, tmp, 3, b -> true);
    FieldGraph built = FieldGraph.open("f", ords, dim, Distance.COSINE, params, read, store);
    assertThat(built.loaded()).isFalse();
    assertThat(built.build(3)).isTrue();
    assertThat(built.fileBytes()).isEqualTo(java.nio.file.Files.size(store.file("f")));

    reads.set(0);
    FieldGraph loaded = FieldGraph.open("f", ords, dim, Distance.COSINE, params, read, store);
    assertThat(loaded.loaded()).isTrue();
    assertThat(reads.get()).as("vectors read by the load").isZero();
    assertThat(loaded.built()).isEqualTo(ords.length);
    assertThat(loaded.memoryBytes())
        .as("both hold their adjacency and codes only")
        .isEqualTo(built.memoryBytes());
    IntPredicate even = ord -> ord % 2 == 0;
    for (int i = 0; i < 30; i++) {
      float[] q = Distance.COSINE.prepare(TestVectors.gaussian(r, dim));
      IntPredicate accept = i % 2 == 0 ? null : even;
      List<Integer> a = new ArrayList<>();
      built.search(q, K, 40, accept, a::add, new SearchStats());
      List<Integer> b = new ArrayList<>();
      loaded.search(q, K, 40, accept, b::add, new SearchStats());
      assertThat(b).as("query " + i).isEqualTo(a).hasSizeGreaterThanOrEqualTo(K);
    }
    loaded.close();
    built.close();

    // another segment's file, or no room for one: the graph is built, no file read or written
    FieldGraph.Store other = new FieldGraph.Store(store.io(), tmp, 4, b -> true);
    assertThat(FieldGraph.open("f", ords, dim, Distance.COSINE, params, read, other).loaded())
        .isFalse();
    assertThat(store.file("f")).as("deleted as not matching").doesNotExist();
    FieldGraph.Store full = new FieldGraph.Store(store.io(), tmp, 3, b -> false);
    FieldGraph noRoom = FieldGraph.open("f", ords, dim, Distance.COSINE, params, read, full);
    assertThat(noRoom.build(3)).isTrue();
    assertThat(noRoom.fileBytes()).isZero();
    assertThat(store.file("f")).doesNotExist();
  }

  /**
   * A graph navigated by TurboQuant codes is written with its codes (no int8 codes), reads back
   * complete without a vector read and answers as built; a file of other bits is not used.
   */
  @Test
  void aTurboGraphReadsBackWithItsCodes() throws Exception {
    Random r = TestSeeds.random("field-graph-turbo-file");
    int dim = 40;
    int[] ords = ordinals(1200);
    float[][] vectors = byOrdinal(ords, TestVectors.latent(r, ords.length, dim), Distance.EUCLID);
    AtomicInteger reads = new AtomicInteger();
    java.util.function.IntFunction<float[]> read =
        ord -> {
          reads.incrementAndGet();
          return vectors[ord].clone();
        };
    FieldGraph.Params params =
        new FieldGraph.Params(8, 48, Float.NaN, io.flashvec.index.TurboQuant.Bits.BITS1_5);
    FieldGraph.Store store =
        new FieldGraph.Store(io.flashvec.storage.FileIO.DEFAULT, tmp, 3, b -> true);
    FieldGraph built = FieldGraph.open("f", ords, dim, Distance.EUCLID, params, read, store);
    assertThat(built.build(3)).isTrue();
    int codeBytes =
        new io.flashvec.index.TurboQuant(dim, io.flashvec.index.TurboQuant.Bits.BITS1_5, true)
            .codeBytes();
    assertThat(codeBytes).isLessThan(dim);
    assertThat(built.fileBytes())
        .as("TurboQuant codes, not int8 codes")
        .isLessThan((long) ords.length * (dim + 4L * 8 * 2));
    reads.set(0);
    FieldGraph loaded = FieldGraph.open("f", ords, dim, Distance.EUCLID, params, read, store);
    assertThat(loaded.loaded()).isTrue();
    assertThat(reads.get()).isZero();
    assertThat(loaded.memoryBytes()).isEqualTo(built.memoryBytes());
    for (int i = 0; i < 20; i++) {
      float[] q = TestVectors.gaussian(r, dim);
      List<Integer> a = new ArrayList<>();
      built.search(q, K, 40, null, a::add, new SearchStats());
      List<Integer> b = new ArrayList<>();
      loaded.search(q, K, 40, null, b::add, new SearchStats());
      assertThat(b).as("query " + i).isEqualTo(a).hasSizeGreaterThanOrEqualTo(K);
    }
    loaded.close();
    built.close();
    FieldGraph.Params other =
        new FieldGraph.Params(8, 48, Float.NaN, io.flashvec.index.TurboQuant.Bits.BITS2);
    assertThat(FieldGraph.open("f", ords, dim, Distance.EUCLID, other, read, store).loaded())
        .isFalse();
    assertThat(store.file("f")).as("deleted as not matching").doesNotExist();
  }
}
