package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.Searches;
import io.flashvec.index.SparseVector;
import io.flashvec.index.TestVectors;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a shard must do with sparse vectors, a second dense vector field and points without the
 * primary dense vector, whether the points sit in growing or in sealed segments (subclasses):
 * sparse searches and searches of the second dense field equal a brute force over a model of what
 * was written (the same ids and bit-identical scores: the searches are exact), with deletes,
 * rewrites, vector updates and filters; searches of the primary vector never return a point without
 * it; reads show each point's vectors; all of it again after a reopen (sealed files read back, the
 * WAL replayed). A subclass may run it for a collection without a primary vector ({@link
 * #noPrimary}): no point has one and a search of it is refused.
 */
@ExtendWith(TestSeeds.Reporter.class)
abstract class SparseVectorsContractTest {

  static final int DIM = 6;
  static final List<String> FIELDS = List.of("a", "b");

  /** The second dense field: another size and metric than the primary vector's. */
  static final String OTHER = "img";

  static final int OTHER_DIM = 5;
  static final Distance OTHER_DISTANCE = Distance.EUCLID;

  /** A multivector field: one to four vectors of {@link #MULTI_DIM} per point, by MaxSim. */
  static final String MULTI = "tok";

  static final int MULTI_DIM = 4;
  static final Distance MULTI_DISTANCE = Distance.COSINE;

  @TempDir Path tmp;

  protected final CrashSimulatingFileIO io = new CrashSimulatingFileIO();
  private String testName;

  protected abstract int sealThreshold();

  protected Executor buildExecutor() {
    return null;
  }

  /** Waits for background builds. */
  protected void settle(Shard s) {}

  /** Checks that the shard holds its points where the subclass means them to be. */
  protected void checkLayout(Shard s) {}

  /**
   * Whether the shard belongs to a collection without a primary dense vector (dimension 0): its
   * points have only the sparse fields and the second dense field.
   */
  protected boolean noPrimary() {
    return false;
  }

  /** The shard's options: the subclass may change how it seals and merges. */
  protected Shard.Options options(Shard.Options o) {
    return o;
  }

  @BeforeEach
  void name(TestInfo info) {
    testName = getClass().getSimpleName() + "." + info.getTestMethod().orElseThrow().getName();
  }

  @AfterEach
  void noLeakedChannels() {
    io.assertNoOpenChannels();
  }

  Shard open() {
    return Shard.open(
        tmp.resolve("shard"),
        0,
        noPrimary() ? 0 : DIM,
        Distance.DOT,
        IndexParams.DEFAULT,
        options(
            new Shard.Options(
                sealThreshold(),
                Wal.Options.defaults().withSegmentBytes(32 << 10),
                io,
                buildExecutor(),
                64,
                null)),
        payloadsOnHeap(),
        denseOnDisk(),
        Map.of(MULTI, MULTI_DIM));
  }

  /** The dense fields whose sealed vectors stay in the mapped file ({@code on_disk: true}). */
  protected Set<String> denseOnDisk() {
    return Set.of();
  }

  /** Whether sealed segments hold their payloads on the heap ({@code on_disk_payload: false}). */
  protected boolean payloadsOnHeap() {
    return false;
  }

  /** What the shard should hold for a point. */
  record Stored(
      float[] dense, Map<String, SparseVector> sparse, byte[] payload, Map<String, float[]> other) {

    Stored(float[] dense, Map<String, SparseVector> sparse, byte[] payload) {
      this(dense, sparse, payload, Map.of());
    }
  }

  static SparseVector randomSparse(Random r) {
    int nnz = r.nextInt(7);
    long[] idx = new long[nnz];
    float[] val = new float[nnz];
    Set<Long> used = new HashSet<>();
    for (int i = 0; i < nnz; i++) {
      long x;
      do {
        // a small term space so that vectors overlap, and the top of the u32 range
        x = r.nextInt(10) == 0 ? 0xFFFF_FFFFL - r.nextInt(3) : r.nextInt(30);
      } while (!used.add(x));
      idx[i] = x;
      val[i] = r.nextInt(8) == 0 ? 0f : (float) r.nextGaussian(); // negative weights too
    }
    return SparseVector.of(idx, val, "test");
  }

  Point randomPoint(Random r, PointId id, int version) {
    float[] dense = r.nextInt(3) == 0 ? null : Distance.DOT.prepare(TestVectors.gaussian(r, DIM));
    if (noPrimary()) {
      dense = null; // drawn all the same: the other fields get the same random values
    }
    Map<String, SparseVector> sparse = new HashMap<>();
    for (String f : FIELDS) {
      if (r.nextInt(3) != 0 || (dense == null && sparse.isEmpty() && f.equals("b"))) {
        sparse.put(f, randomSparse(r));
      }
    }
    Map<String, float[]> other = new HashMap<>();
    if (r.nextInt(3) != 0) {
      other.put(OTHER, TestVectors.gaussian(r, OTHER_DIM));
    }
    if (r.nextInt(3) != 0) {
      other.put(MULTI, randomMulti(r));
    }
    return new Point(id, dense, TestVectors.payload(id, version), sparse, other);
  }

  /** One to four vectors of {@link #MULTI_DIM}, back to back, prepared as the collection does. */
  static float[] randomMulti(Random r) {
    return MULTI_DISTANCE.prepareMulti(
        TestVectors.gaussian(r, MULTI_DIM * (1 + r.nextInt(4))), MULTI_DIM);
  }

  @Test
  void sparseAndDenseSearchesMatchBruteForce() throws Exception {
    Random r = TestSeeds.random(testName);
    Map<PointId, Stored> model = new HashMap<>();
    List<PointId> ids = new ArrayList<>();
    Shard s = open();
    try {
      int rounds = 12;
      int version = 0;
      for (int round = 0; round < rounds; round++) {
        version++;
        List<Point> batch = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
          PointId id =
              !ids.isEmpty() && r.nextInt(4) == 0
                  ? ids.get(r.nextInt(ids.size()))
                  : PointId.of(r.nextInt(1_000_000));
          batch.add(randomPoint(r, id, version));
        }
        s.upsert(batch);
        for (Point p : batch) {
          if (!model.containsKey(p.id())) {
            ids.add(p.id());
          }
          model.put(p.id(), new Stored(p.vector(), p.sparse(), p.payload(), p.dense()));
        }
        // deletes
        List<PointId> gone = new ArrayList<>();
        for (int i = 0; i < 3 && !ids.isEmpty(); i++) {
          gone.add(ids.remove(r.nextInt(ids.size())));
        }
        s.delete(gone);
        gone.forEach(model::remove);
        // a vector update and a vector deletion
        if (!ids.isEmpty()) {
          PointId id = ids.get(r.nextInt(ids.size()));
          SparseVector v = randomSparse(r);
          float[] img = TestVectors.gaussian(r, OTHER_DIM);
          Map<String, float[]> newOther =
              switch (r.nextInt(3)) {
                case 0 -> Map.of(OTHER, img);
                case 1 -> Map.of(MULTI, randomMulti(r));
                default -> Map.of();
              };
          s.updateVectors(List.of(new Point(id, null, null, Map.of("a", v), newOther)));
          Stored old = model.get(id);
          Map<String, SparseVector> m = new HashMap<>(old.sparse());
          m.put("a", v);
          Map<String, float[]> o = new HashMap<>(old.other());
          o.putAll(newOther);
          model.put(id, new Stored(old.dense(), m, old.payload(), o));

          PointId id2 = ids.get(r.nextInt(ids.size()));
          String name = List.of("", "b", OTHER, MULTI).get(r.nextInt(4));
          s.deleteVectors(List.of(id2), Set.of(name));
          Stored o2 = model.get(id2);
          Map<String, SparseVector> m2 = new HashMap<>(o2.sparse());
          m2.remove(name);
          Map<String, float[]> other2 = new HashMap<>(o2.other());
          other2.remove(name);
          model.put(id2, new Stored(name.isEmpty() ? null : o2.dense(), m2, o2.payload(), other2));
        }
        if (round % 4 == 3) {
          s.flush();
          settle(s);
        }
        if (round == rounds / 2 || round == rounds - 1) {
          s.close();
          s = open();
          settle(s);
        }
        check(r, s, model, round);
      }
      checkLayout(s);
    } finally {
      s.close();
    }
  }

  private void check(Random r, Shard s, Map<PointId, Stored> model, int round) {
    String what = "round=" + round + ", " + TestSeeds.reproduceWith();
    // reads
    for (Map.Entry<PointId, Stored> e : model.entrySet()) {
      Record got = s.get(e.getKey(), true, true);
      assertThat(got).as(what).isNotNull();
      assertThat(got.vector())
          .as(what + ", dense of " + e.getKey())
          .isEqualTo(e.getValue().dense());
      assertThat(got.sparse())
          .as(what + ", sparse of " + e.getKey())
          .isEqualTo(e.getValue().sparse());
      Map<String, float[]> other = got.dense() == null ? Map.of() : got.dense();
      assertThat(other.keySet())
          .as(what + ", other dense fields of " + e.getKey())
          .isEqualTo(e.getValue().other().keySet());
      for (Map.Entry<String, float[]> f : e.getValue().other().entrySet()) {
        assertThat(other.get(f.getKey()))
            .as(what + ", " + f.getKey() + " of " + e.getKey())
            .isEqualTo(f.getValue());
      }
    }
    // sparse searches, with and without filters
    List<String> filters =
        List.of(
            "",
            "{\"must\": [{\"has_vector\": \"\"}]}",
            "{\"must_not\": [{\"has_vector\": \"b\"}]}",
            "{\"must\": [{\"has_vector\": \"img\"}]}",
            "{\"must_not\": [{\"has_vector\": \"tok\"}]}",
            "{\"must\": [{\"key\": \"v\", \"range\": {\"gte\": " + Math.max(1, round - 2) + "}}]}");
    for (int q = 0; q < 6; q++) {
      SparseVector query = randomSparse(r);
      String field = FIELDS.get(r.nextInt(FIELDS.size()));
      String filterJson = filters.get(r.nextInt(filters.size()));
      FilterEvaluator filter =
          filterJson.isEmpty()
              ? null
              : new FilterEvaluator(
                  FilterParser.parse(JsonMapper.builder().build().readTree(filterJson), "filter"));
      int k = 1 + r.nextInt(15);
      List<Record> got = s.sparseSearch(field, query, k, filter, null, false, false);
      // brute force
      List<Map.Entry<PointId, Float>> want = new ArrayList<>();
      for (Map.Entry<PointId, Stored> e : model.entrySet()) {
        Stored st = e.getValue();
        SparseVector v = st.sparse().get(field);
        if (v == null
            || (filter != null && !filter.matches(e.getKey(), st.payload(), n -> has(st, n)))) {
          continue;
        }
        float score = query.dot(v);
        if (score != 0f) {
          want.add(Map.entry(e.getKey(), score));
        }
      }
      want.sort((a, b) -> Float.compare(b.getValue(), a.getValue()));
      String w = what + ", query=" + query + ", field=" + field + ", filter=" + filterJson;
      assertThat(got).as(w).hasSize(Math.min(k, want.size()));
      for (int i = 0; i < got.size(); i++) {
        assertThat(got.get(i).score()).as(w + ", rank " + i).isEqualTo(want.get(i).getValue());
        Stored st = model.get(got.get(i).id());
        assertThat(st).as(w).isNotNull();
        assertThat(query.dot(st.sparse().get(field))).as(w).isEqualTo(got.get(i).score());
      }
    }
    // searches of the second dense field: exact, as a brute force over the model
    for (int q = 0; q < 6; q++) {
      float[] query = TestVectors.gaussian(r, OTHER_DIM);
      String filterJson = filters.get(r.nextInt(filters.size()));
      FilterEvaluator filter =
          filterJson.isEmpty()
              ? null
              : new FilterEvaluator(
                  FilterParser.parse(JsonMapper.builder().build().readTree(filterJson), "filter"));
      int k = 1 + r.nextInt(15);
      List<Record> got = s.denseSearch(OTHER, query, OTHER_DISTANCE, k, filter, null, false, true);
      List<Map.Entry<PointId, Float>> want = new ArrayList<>();
      for (Map.Entry<PointId, Stored> e : model.entrySet()) {
        Stored st = e.getValue();
        float[] v = st.other().get(OTHER);
        if (v == null
            || (filter != null && !filter.matches(e.getKey(), st.payload(), n -> has(st, n)))) {
          continue;
        }
        want.add(Map.entry(e.getKey(), OTHER_DISTANCE.score(query, v, 0)));
      }
      want.sort((a, b) -> Float.compare(a.getValue(), b.getValue()));
      String w = what + ", dense field query, filter=" + filterJson;
      assertThat(got).as(w).hasSize(Math.min(k, want.size()));
      for (int i = 0; i < got.size(); i++) {
        assertThat(got.get(i).score())
            .as(w + ", rank " + i)
            .isCloseTo(want.get(i).getValue(), org.assertj.core.api.Assertions.offset(1e-5f));
        Stored st = model.get(got.get(i).id());
        assertThat(st).as(w).isNotNull();
        assertThat(got.get(i).dense().get(OTHER)).as(w).isEqualTo(st.other().get(OTHER));
        assertThat(OTHER_DISTANCE.score(query, st.other().get(OTHER), 0))
            .as(w)
            .isCloseTo(got.get(i).score(), org.assertj.core.api.Assertions.offset(1e-5f));
      }
    }
    // MaxSim searches of the multivector field: exact, as a brute force over the model
    for (int q = 0; q < 6; q++) {
      float[] query = randomMulti(r);
      String filterJson = filters.get(r.nextInt(filters.size()));
      FilterEvaluator filter =
          filterJson.isEmpty()
              ? null
              : new FilterEvaluator(
                  FilterParser.parse(JsonMapper.builder().build().readTree(filterJson), "filter"));
      int k = 1 + r.nextInt(15);
      List<Record> got =
          s.multiSearch(MULTI, query, MULTI_DIM, MULTI_DISTANCE, k, filter, null, false, true);
      List<Map.Entry<PointId, Float>> want = new ArrayList<>();
      for (Map.Entry<PointId, Stored> e : model.entrySet()) {
        Stored st = e.getValue();
        float[] v = st.other().get(MULTI);
        if (v == null
            || (filter != null && !filter.matches(e.getKey(), st.payload(), n -> has(st, n)))) {
          continue;
        }
        want.add(Map.entry(e.getKey(), bruteMaxSim(query, v)));
      }
      want.sort((a, b) -> Float.compare(b.getValue(), a.getValue()));
      String w = what + ", multivector query, filter=" + filterJson;
      assertThat(got).as(w).hasSize(Math.min(k, want.size()));
      for (int i = 0; i < got.size(); i++) {
        assertThat(got.get(i).score())
            .as(w + ", rank " + i)
            .isCloseTo(want.get(i).getValue(), org.assertj.core.api.Assertions.offset(1e-4f));
        Stored st = model.get(got.get(i).id());
        assertThat(st).as(w).isNotNull();
        assertThat(got.get(i).dense().get(MULTI)).as(w).isEqualTo(st.other().get(MULTI));
        assertThat(bruteMaxSim(query, st.other().get(MULTI)))
            .as(w)
            .isCloseTo(got.get(i).score(), org.assertj.core.api.Assertions.offset(1e-4f));
      }
    }
    if (noPrimary()) {
      float[] q = TestVectors.gaussian(r, DIM);
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> Searches.search(s, q, 10, SearchParams.DEFAULT, null, false, false))
          .as(what + ", a search of the primary vector")
          .isInstanceOf(io.flashvec.index.InvalidInputException.class)
          .hasMessageContaining("no primary dense vector");
      return;
    }
    // dense searches never return points without the dense vector
    Map<PointId, float[]> dense = new HashMap<>();
    model.forEach(
        (id, st) -> {
          if (st.dense() != null) {
            dense.put(id, st.dense());
          }
        });
    float[] q = TestVectors.gaussian(r, DIM);
    List<Record> got =
        Searches.search(s, q, 10, new SearchParams(0, 0, 0, true), null, false, false);
    var want = TestVectors.bruteForce(dense, q, Distance.DOT, 10, null);
    assertThat(got).as(what).hasSize(want.size());
    for (int i = 0; i < got.size(); i++) {
      assertThat(dense).as(what).containsKey(got.get(i).id());
      assertThat(got.get(i).score())
          .as(what)
          .isCloseTo(want.get(i).score(), org.assertj.core.api.Assertions.offset(1e-4f));
    }
    // nor do the approximate ones (graph, PQ scan of a raw segment), filtered or not
    FilterEvaluator recent =
        new FilterEvaluator(
            FilterParser.parse(
                JsonMapper.builder()
                    .build()
                    .readTree(
                        "{\"must\": [{\"key\": \"v\", \"range\": {\"gte\": "
                            + Math.max(1, round - 6)
                            + "}}]}"),
                "filter"));
    for (FilterEvaluator f : java.util.Arrays.asList(null, recent)) {
      List<Record> approximate =
          Searches.search(
              s,
              q,
              10,
              SearchParams.DEFAULT,
              null,
              false,
              false,
              f,
              new io.flashvec.index.SearchStats());
      assertThat(approximate).as(what).isNotEmpty();
      for (Record rec : approximate) {
        assertThat(dense)
            .as(what + ", approximate search, filtered " + (f != null))
            .containsKey(rec.id());
      }
    }
  }

  /** MaxSim by definition, scalar: per query vector the best dot product, summed. */
  static float bruteMaxSim(float[] query, float[] stored) {
    double sum = 0;
    for (int qo = 0; qo < query.length; qo += MULTI_DIM) {
      double best = Double.NEGATIVE_INFINITY;
      for (int so = 0; so < stored.length; so += MULTI_DIM) {
        double dot = 0;
        for (int i = 0; i < MULTI_DIM; i++) {
          dot += (double) query[qo + i] * stored[so + i];
        }
        best = Math.max(best, dot);
      }
      sum += best;
    }
    return (float) sum;
  }

  private static boolean has(Stored st, String name) {
    return name.isEmpty()
        ? st.dense() != null
        : st.sparse().containsKey(name) || st.other().containsKey(name);
  }
}
