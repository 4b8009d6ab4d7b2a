package io.flashvec.index.collection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SparseVector;
import io.flashvec.index.SparseVectorParams;
import io.flashvec.index.TestVectors;
import io.flashvec.index.TestVectors.Hit;
import io.flashvec.index.UpsertMode;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.SparseSearchRequest;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Validation, routing over shards, merged search and scroll of a {@link Collection}. */
@ExtendWith(TestSeeds.Reporter.class)
class CollectionTest {

  static final int DIM = 4;

  @TempDir Path tmp;

  /** Tracks every channel the collections open: the file-descriptor leak check. */
  private final CrashSimulatingFileIO io = new CrashSimulatingFileIO();

  private final List<Collection> open = new ArrayList<>();
  private Random random;

  @BeforeEach
  void seed(TestInfo info) {
    random =
        TestSeeds.random(
            "CollectionTest."
                + info.getTestMethod().orElseThrow().getName()
                + info.getDisplayName());
  }

  @AfterEach
  void closeAndCheckLeaks() throws IOException {
    for (Collection c : open) {
      c.close();
    }
    io.assertNoOpenChannels();
  }

  private Shard.Options options() {
    return new Shard.Options(50, Wal.Options.defaults().withSegmentBytes(32 << 10), io);
  }

  private Collection open(String name, int dim, Distance d, int shards) {
    Collection c =
        Collection.open(
            name,
            tmp.resolve(name),
            new CollectionConfig(dim, d, shards, 1, IndexParams.DEFAULT),
            options());
    open.add(c);
    return c;
  }

  /**
   * Qdrant's update modes and update filters against a model: each point of a batch is written or
   * not by its stored version (over three shards, through seals), and a reopen replays the same
   * state from the WAL, which holds only what was written.
   */
  @Test
  void upsertConditionsWriteOnlyWhatTheyAllowAndAReopenReplaysIt() throws Exception {
    Collection c = open("modes", DIM, Distance.DOT, 3);
    Map<PointId, Integer> model = new HashMap<>();
    tools.jackson.databind.json.JsonMapper json =
        tools.jackson.databind.json.JsonMapper.builder().build();
    for (int round = 1; round <= 40; round++) {
      UpsertMode mode = UpsertMode.values()[random.nextInt(3)];
      Integer below = random.nextBoolean() ? null : 1 + random.nextInt(round + 1);
      Filter filter =
          below == null
              ? null
              : FilterParser.parse(
                  json.readTree("{\"must\":[{\"key\":\"v\",\"range\":{\"lt\":" + below + "}}]}"),
                  "update_filter");
      Set<PointId> ids = new HashSet<>();
      while (ids.size() < 12) {
        ids.add(PointId.of(random.nextInt(120)));
      }
      List<Point> batch = new ArrayList<>();
      Map<PointId, Integer> next = new HashMap<>(model);
      for (PointId id : ids) {
        batch.add(new Point(id, TestVectors.gaussian(random, DIM), TestVectors.payload(id, round)));
        Integer stored = model.get(id);
        boolean write =
            switch (mode) {
              case UPSERT -> true;
              case INSERT_ONLY -> stored == null;
              case UPDATE_ONLY -> stored != null;
            };
        if (write && stored != null && below != null) {
          write = stored < below;
        }
        if (write) {
          next.put(id, round);
        }
      }
      c.upsert(batch, new UpsertCondition(mode, filter), true);
      model = next;
      assertVersions(c, model);
    }
    c.close();
    open.remove(c);
    assertVersions(open("modes", DIM, Distance.DOT, 3), model);
  }

  private static void assertVersions(Collection c, Map<PointId, Integer> model) {
    for (int i = 0; i < 120; i++) {
      PointId id = PointId.of(i);
      Record r = c.get(id, true, false);
      Integer v = model.get(id);
      if (v == null) {
        assertThat(r).as("point %s", id).isNull();
      } else {
        assertThat(r).as("point %s", id).isNotNull();
        assertThat(new String(r.payload(), java.nio.charset.StandardCharsets.UTF_8))
            .as("point %s", id)
            .isEqualTo(
                new String(TestVectors.payload(id, v), java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    assertThat(c.count()).isEqualTo(model.size());
  }

  /**
   * A collection without a primary vector over three shards: its sparse searches equal a brute
   * force, with IDF weights counted over every shard once the field's modifier is {@code idf}, and
   * a search of the default vector gets Qdrant's error.
   */
  @Test
  void sparseOnlyCollectionSearchesWithAndWithoutIdfOverShards() {
    Collection c =
        Collection.open(
            "sparse-only",
            tmp.resolve("sparse-only"),
            CollectionConfig.withoutPrimary(
                3, 1, IndexParams.DEFAULT, Map.of("t", SparseVectorParams.DEFAULT), Map.of()),
            options());
    open.add(c);
    Map<PointId, SparseVector> docs = new java.util.HashMap<>();
    List<Point> points = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      long[] idx =
          random.ints(0, 40).distinct().limit(1 + random.nextInt(5)).asLongStream().toArray();
      float[] val = new float[idx.length];
      for (int j = 0; j < val.length; j++) {
        val[j] = 0.1f + random.nextFloat();
      }
      SparseVector v = SparseVector.of(idx, val, "t");
      points.add(new Point(PointId.of(i), null, null, Map.of("t", v)));
      docs.put(PointId.of(i), v);
    }
    c.upsert(points, true);
    assertThatThrownBy(() -> c.search(query(new float[] {1f}, 3, 0, null)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "Wrong input: Collection requires specified vector name in the request, available"
                + " names: t");
    for (boolean idf : new boolean[] {false, true}) {
      c.retune(c.tuning().withSparseIdf(idf ? Set.of("t") : Set.of()));
      SparseVector q = SparseVector.of(new long[] {1, 2, 3, 39}, new float[] {1, 2, 1, 1}, "q");
      float[] w = q.values().clone();
      if (idf) {
        for (int i = 0; i < w.length; i++) {
          int index = q.indices()[i];
          float df =
              docs.values().stream()
                  .filter(d -> java.util.Arrays.stream(d.indices()).anyMatch(x -> x == index))
                  .count();
          w[i] *= (float) Math.log((docs.size() - df + 0.5f) / (df + 0.5f) + 1f);
        }
      }
      SparseVector weighted = new SparseVector(q.indices(), w);
      List<Record> got =
          c.sparseSearch(new SparseSearchRequest("t", q, 200, 0, null, null, false, false));
      long matching = docs.values().stream().filter(d -> weighted.dot(d) != 0f).count();
      assertThat(got).as("idf " + idf).hasSize((int) matching);
      for (Record r : got) {
        assertThat(r.score())
            .as("idf " + idf + ", " + r.id())
            .isEqualTo(weighted.dot(docs.get(r.id())));
      }
    }
  }

  private static SearchRequest query(float[] v, int limit, int offset, Float threshold) {
    return new SearchRequest(v, limit, offset, threshold, SearchParams.DEFAULT, true, true, null);
  }

  /**
   * A WAL that an I/O error failed (here: the writing thread was interrupted, which closes its
   * channel) refuses writes until a restart; the collection says so instead of staying green.
   */
  /**
   * A write with wait tells {@link Collection#ON_APPLIED} its operation once applied; each shard
   * counts its newest applied WAL operation and has no write pending once the writes returned.
   */
  @Test
  void aWaitedWriteIsToldAppliedAndShardsCountTheirAppliedOperations() {
    Collection c = open("applied", 2, Distance.DOT, 2);
    List<Long> told = new ArrayList<>();
    for (Shard s : c.shards()) {
      assertThat(s.lastAppliedOperation()).isZero();
    }
    Collection.UpdateResult waited =
        ScopedValue.where(Collection.ON_APPLIED, told::add)
            .call(
                () ->
                    c.upsert(
                        List.of(
                            new Point(PointId.of(1), new float[] {1, 0}, null),
                            new Point(PointId.of(2), new float[] {0, 1}, null)),
                        true));
    assertThat(told).containsExactly(waited.operationId());
    ScopedValue.where(Collection.ON_APPLIED, told::add)
        .run(() -> c.upsert(List.of(new Point(PointId.of(3), new float[] {1, 1}, null)), false));
    assertThat(told).as("a write without wait is not waited for").hasSize(1);
    long applied = 0;
    for (Shard s : c.shards()) {
      applied += s.lastAppliedOperation();
      assertThat(s.pendingWrites()).isZero();
    }
    // three points over two shards: each shard's operations are numbered from 1 in its WAL
    assertThat(applied).isBetween(2L, 3L);
  }

  @Test
  void aFailedWalShowsInTheCollectionsInfo() {
    Collection c = open("w", 2, Distance.DOT, 1);
    c.upsert(List.of(new Point(PointId.of(1), new float[] {1, 0}, null)), true);
    assertThat(c.info().buildFailure()).isNull();
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(
          () -> c.upsert(List.of(new Point(PointId.of(2), new float[] {0, 1}, null)), true));
    } finally {
      Thread.interrupted();
    }
    assertThat(c.info().buildFailure()).contains("WAL failed").contains("shard=0");
    assertThatThrownBy(
            () -> c.upsert(List.of(new Point(PointId.of(3), new float[] {0, 1}, null)), true))
        .hasMessageContaining("WAL failed");
  }

  // ---------------------------------------------------------------------------------------------
  // Validation: exact messages (clients and users read them).

  @Test
  void payloadBytesAddUpTheStoredPayloadsGrowingSealedAndReopened() throws IOException {
    Collection c = open("p", DIM, Distance.DOT, 2);
    long expected = 0;
    List<Point> points = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      byte[] payload =
          i % 3 == 0
              ? null
              : ("{\"k\":\"" + "x".repeat(random.nextInt(20)) + "\"}")
                  .getBytes(java.nio.charset.StandardCharsets.UTF_8);
      expected += payload == null ? 0 : payload.length;
      points.add(new Point(PointId.of(i), TestVectors.gaussian(random, DIM), payload));
    }
    c.upsert(points, true);
    assertThat(c.payloadBytes()).isEqualTo(expected);
    c.flush(); // sealed segments count theirs too
    assertThat(c.payloadBytes()).isEqualTo(expected);
    c.close();
    open.remove(c);
    Collection reopened = open("p", DIM, Distance.DOT, 2);
    assertThat(reopened.payloadBytes()).isEqualTo(expected);
  }

  @Test
  void wrongDimensionNamesExpectedActualAndId() {
    Collection c = open("c", 4, Distance.COSINE, 1);
    assertThatThrownBy(
            () -> c.upsert(List.of(new Point(PointId.of(5), new float[] {1, 2, 3}, null)), true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("Wrong input: Vector dimension error: expected dim: 4, got 3 [id=5]");
    assertThatThrownBy(
            () ->
                c.upsert(
                    List.of(
                        new Point(
                            PointId.parse("550E8400-E29B-41D4-A716-446655440000"),
                            new float[5],
                            null)),
                    false))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "Wrong input: Vector dimension error: expected dim: 4, got 5"
                + " [id=550e8400-e29b-41d4-a716-446655440000]");
    assertThatThrownBy(() -> c.search(query(new float[] {1, 2, 3}, 3, 0, null)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("Wrong input: Vector dimension error: expected dim: 4, got 3");
    assertThatThrownBy(() -> c.upsert(List.of(new Point(PointId.of(5), null, null)), true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("Wrong input: point has no vector [id=5]");
    assertThat(c.count()).isZero();
  }

  @Test
  void nonFiniteValuesAreRejectedNamingIndexAndValue() {
    Collection c = open("c", 4, Distance.DOT, 1);
    assertThatThrownBy(
            () ->
                c.upsert(
                    List.of(new Point(PointId.of(7), new float[] {1, 2, Float.NaN, 4}, null)),
                    true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("Wrong input: vector contains a non-finite value [id=7, index=2, value=NaN]");
    assertThatThrownBy(
            () ->
                c.upsert(
                    List.of(
                        new Point(
                            PointId.of(8), new float[] {Float.POSITIVE_INFINITY, 0, 0, 0}, null)),
                    true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "Wrong input: vector contains a non-finite value [id=8, index=0, value=Infinity]");
    assertThatThrownBy(
            () ->
                c.upsert(
                    List.of(
                        new Point(
                            PointId.of(9), new float[] {0, 0, 0, Float.NEGATIVE_INFINITY}, null)),
                    true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "Wrong input: vector contains a non-finite value [id=9, index=3, value=-Infinity]");
    assertThatThrownBy(() -> c.search(query(new float[] {0, Float.NaN, 0, 0}, 3, 0, null)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("Wrong input: vector contains a non-finite value [index=1, value=NaN]");
    // Large finite values are fine.
    c.upsert(
        List.of(new Point(PointId.of(10), new float[] {Float.MAX_VALUE, 0, 0, 0}, null)), true);
    assertThat(c.count()).isEqualTo(1);
  }

  @Test
  void aBatchWithOneBadVectorStoresNothing() {
    Collection c = open("c", DIM, Distance.EUCLID, 3);
    Map<PointId, float[]> stored = new HashMap<>();
    List<Point> good = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      Point p = new Point(PointId.of(i), TestVectors.gaussian(random, DIM), null);
      good.add(p);
      stored.put(p.id(), p.vector());
    }
    c.upsert(good, true);
    long[] seqs = c.shards().stream().mapToLong(s -> s.wal().lastSeq()).toArray();
    int rounds = TestSeeds.atLeast(random, 5);
    for (int round = 0; round < rounds; round++) {
      List<Point> batch = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        // New ids and replacements of stored ones, spread over every shard.
        PointId id = PointId.of(random.nextBoolean() ? random.nextInt(30) : 1000 + i);
        batch.add(new Point(id, TestVectors.gaussian(random, DIM), null));
      }
      float[] bad = TestVectors.gaussian(random, DIM);
      bad[random.nextInt(DIM)] = random.nextBoolean() ? Float.NaN : Float.NEGATIVE_INFINITY;
      batch.add(random.nextInt(batch.size() + 1), new Point(PointId.of(5000 + round), bad, null));
      assertThatThrownBy(() -> c.upsert(batch, true)).isInstanceOf(InvalidInputException.class);
      assertThat(c.count()).isEqualTo(30);
      for (int i = 0; i < 20; i++) {
        assertThat(c.get(PointId.of(1000 + i), false, false)).isNull();
      }
      for (Map.Entry<PointId, float[]> e : stored.entrySet()) {
        assertThat(c.get(e.getKey(), false, true).vector()).isEqualTo(e.getValue());
      }
      assertThat(c.shards().stream().mapToLong(s -> s.wal().lastSeq()).toArray())
          .as("nothing logged")
          .isEqualTo(seqs);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Routing and merging.

  /** Loads the same operations into every collection; returns the live prepared vectors. */
  private Map<PointId, float[]> loadSame(Distance d, List<Collection> cs, int n) {
    Map<PointId, float[]> live = new HashMap<>();
    List<PointId> ids = new ArrayList<>();
    int done = 0;
    while (done < n) {
      List<Point> batch = new ArrayList<>();
      for (int i = 0; i < 1 + random.nextInt(40) && done < n; i++, done++) {
        PointId id =
            !ids.isEmpty() && random.nextInt(5) == 0
                ? ids.get(random.nextInt(ids.size()))
                : TestVectors.randomId(random);
        ids.add(id);
        float[] v = TestVectors.gaussian(random, DIM);
        batch.add(new Point(id, v, TestVectors.payload(id, done)));
        live.put(id, d.prepare(v));
      }
      for (Collection c : cs) {
        c.upsert(batch, random.nextBoolean());
      }
      if (random.nextInt(8) == 0) {
        List<PointId> del = List.of(ids.get(random.nextInt(ids.size())), PointId.of(123456789));
        for (Collection c : cs) {
          c.delete(del, false);
        }
        del.forEach(live::remove);
      }
      if (random.nextInt(10) == 0) {
        cs.forEach(Collection::flush);
      }
    }
    for (Collection c : cs) {
      assertThat(c.count()).isEqualTo(live.size());
    }
    return live;
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void threeShardsAnswerLikeOne(Distance d) {
    Collection one = open("one", DIM, d, 1);
    Collection three = open("three", DIM, d, 3);
    Map<PointId, float[]> live = loadSame(d, List.of(one, three), 400);
    int[] perShard = new int[3];
    for (PointId id : live.keySet()) {
      perShard[three.shardOf(id)]++;
    }
    for (int i = 0; i < 3; i++) {
      assertThat(three.shards().get(i).count()).as("shard %d", i).isEqualTo(perShard[i]);
      assertThat(perShard[i]).as("every shard holds points").isPositive();
    }
    int queries = TestSeeds.atLeast(random, 40);
    for (int i = 0; i < queries; i++) {
      float[] q = TestVectors.gaussian(random, DIM);
      int limit = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(30);
      int off = random.nextInt(3) == 0 ? random.nextInt(20) : 0;
      Float threshold = null;
      List<Hit> truth = TestVectors.bruteForce(live, d.prepare(q), d, limit + off, null);
      if (random.nextInt(3) == 0 && truth.size() > 1) {
        threshold = truth.get(random.nextInt(truth.size())).score();
      }
      SearchRequest req = query(q, limit, off, threshold);
      List<Record> a = one.search(req);
      List<Record> b = three.search(req);
      String what = "query " + i + " limit=" + limit + " offset=" + off + " t=" + threshold;
      assertThat(b).as(what).hasSameSizeAs(a);
      for (int j = 0; j < a.size(); j++) {
        assertThat(b.get(j).score()).as(what + " at " + j).isEqualTo(a.get(j).score());
        // Points with exactly equal scores may come in either order (which shard answered first).
        Record same = b.get(j);
        if (!same.id().equals(a.get(j).id())) {
          float score = a.get(j).score();
          PointId want = a.get(j).id();
          same =
              b.stream()
                  .filter(r -> r.id().equals(want) && r.score() == score)
                  .findFirst()
                  .orElse(same);
        }
        assertThat(same.id()).as(what + " at " + j).isEqualTo(a.get(j).id());
        assertThat(same.vector()).isEqualTo(a.get(j).vector());
        assertThat(same.payload()).isEqualTo(a.get(j).payload());
      }
      // And both are brute force, after the offset.
      List<Hit> want = TestVectors.bruteForce(live, d.prepare(q), d, limit + off, threshold);
      want = want.subList(Math.min(off, want.size()), want.size());
      assertThat(a.stream().map(Record::score).toList())
          .as(what)
          .isEqualTo(want.stream().map(Hit::score).toList());
    }
  }

  @Test
  void cosineStoresUnitVectorsAndIgnoresQueryLength() {
    Collection c = open("c", DIM, Distance.COSINE, 2);
    c.upsert(
        List.of(
            new Point(PointId.of(1), new float[] {3, 0, 4, 0}, null),
            new Point(PointId.of(2), new float[] {0, 1, 0, 0}, null)),
        true);
    assertThat(c.get(PointId.of(1), false, true).vector())
        .containsExactly(new float[] {0.6f, 0, 0.8f, 0}, offset(1e-6f));
    List<Record> small = c.search(query(new float[] {0.3f, 0, 0.4f, 0}, 2, 0, null));
    List<Record> large = c.search(query(new float[] {300, 0, 400, 0}, 2, 0, null));
    assertThat(small).extracting(Record::id).containsExactly(PointId.of(1), PointId.of(2));
    assertThat(small.get(0).score()).isCloseTo(1f, offset(1e-6f));
    assertThat(small.get(1).score()).isCloseTo(0f, offset(1e-6f));
    assertThat(large.stream().map(Record::score).toList())
        .isEqualTo(small.stream().map(Record::score).toList());
  }

  /**
   * A dense field deleted from the config: its values stay in the growing segment, unreachable, and
   * the seal drops them; a field added later under the same name is a different key, and a reopen
   * (WAL replay of records written before the delete) keeps both facts.
   */
  @Test
  void sealsDropTheValuesOfDeletedDenseFields() throws Exception {
    ExecutorService builds = Executors.newSingleThreadExecutor();
    try {
      sealsDropTheValuesOfDeletedDenseFields(options().withBuildExecutor(builds));
    } finally {
      builds.shutdownNow();
    }
  }

  private void sealsDropTheValuesOfDeletedDenseFields(Shard.Options options) throws IOException {
    CollectionConfig created =
        new CollectionConfig(
            DIM,
            Distance.DOT,
            2,
            1,
            IndexParams.DEFAULT,
            Map.of(),
            "image",
            Map.of("text", new io.flashvec.index.DenseVectorParams(3, Distance.DOT)));
    Collection c = Collection.open("fields", tmp.resolve("fields"), created, options);
    open.add(c);
    List<Point> pts = new ArrayList<>();
    List<PointId> ids = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      PointId id = PointId.of(i);
      ids.add(id);
      pts.add(
          new Point(
              id,
              TestVectors.gaussian(random, DIM),
              null,
              Map.of(),
              Map.of("text", TestVectors.gaussian(random, 3))));
    }
    c.upsert(pts, true);
    CollectionConfig next =
        created
            .withoutDenseVector("text")
            .withDenseVector("text", new io.flashvec.index.DenseVectorParams(2, Distance.DOT));
    String key = next.internalName("text");
    c.reconfigure(next);
    assertThat(c.config()).isEqualTo(next);
    c.upsert(
        List.of(
            new Point(
                PointId.of(100),
                TestVectors.gaussian(random, DIM),
                null,
                Map.of(),
                Map.of(key, new float[] {1, 2}))),
        true);
    ids.add(PointId.of(100));
    // before the seal the old values are still there, under the old key only
    assertThat(c.retrieve(List.of(PointId.of(0)), false, true).get(0).dense())
        .containsOnlyKeys("text");
    c.flush();
    Await.until(
        Duration.ofSeconds(60),
        "the seal dropped the deleted field's values",
        () ->
            c.retrieve(ids.subList(0, 40), false, true).stream()
                .allMatch(r -> r.dense() == null || r.dense().isEmpty()));
    for (Record r : c.retrieve(ids, false, true)) {
      Map<String, float[]> dense = r.dense() == null ? Map.of() : r.dense();
      if (r.id().equals(PointId.of(100))) {
        assertThat(dense).containsOnlyKeys(key);
      } else {
        assertThat(dense).as("point " + r.id()).isEmpty();
        assertThat(r.vector()).isNotNull();
      }
    }
    // reopened with the new config: the same
    c.close();
    open.remove(c);
    Collection reopened = Collection.open("fields", tmp.resolve("fields"), next, options);
    open.add(reopened);
    for (Record r : reopened.retrieve(ids, false, true)) {
      Map<String, float[]> dense = r.dense() == null ? Map.of() : r.dense();
      assertThat(dense.keySet())
          .as("reopened, point " + r.id())
          .isEqualTo(r.id().equals(PointId.of(100)) ? java.util.Set.of(key) : java.util.Set.of());
    }
  }

  @Test
  void scrollOverShardsReturnsEveryIdOnceInOrder() {
    Collection c = open("c", DIM, Distance.DOT, 3);
    Set<PointId> idSet = new HashSet<>();
    idSet.add(PointId.of(0));
    idSet.add(PointId.of(-1)); // 2^64 - 1: after every smaller number, before every UUID
    idSet.add(PointId.of(new UUID(0, 0)));
    while (idSet.size() < 257) {
      idSet.add(TestVectors.randomId(random));
    }
    List<Point> pts = new ArrayList<>();
    for (PointId id : idSet) {
      pts.add(new Point(id, TestVectors.gaussian(random, DIM), TestVectors.payload(id, 1)));
    }
    c.upsert(pts, true);
    c.flush();
    List<PointId> sorted = new ArrayList<>(idSet);
    sorted.sort(null);
    for (int limit : new int[] {1, 7, 64, 256, 257, 258, 1000}) {
      List<PointId> seen = new ArrayList<>();
      PointId offset = null;
      int pages = 0;
      while (true) {
        ScrollPage page = c.scroll(ScrollRequest.of(offset, limit, pages % 2 == 0, pages % 3 == 0));
        pages++;
        for (Record r : page.points()) {
          seen.add(r.id());
          assertThat(r.payload() != null).isEqualTo((pages - 1) % 2 == 0);
          assertThat(r.vector() != null).isEqualTo((pages - 1) % 3 == 0);
        }
        int start = seen.size() - page.points().size();
        if (page.nextOffset() == null) {
          assertThat(seen).as("limit=%d: the last page ends the ids", limit).hasSize(sorted.size());
          break;
        }
        assertThat(page.points()).as("limit=%d: a full page before the last", limit).hasSize(limit);
        assertThat(page.nextOffset())
            .as("limit=%d: next offset is the first id of the next page", limit)
            .isEqualTo(sorted.get(start + limit));
        offset = page.nextOffset();
        assertThat(pages).as("terminates").isLessThanOrEqualTo(sorted.size() + 1);
      }
      assertThat(seen).as("limit=%d", limit).isEqualTo(sorted);
      assertThat(pages).isEqualTo(Math.max(1, (sorted.size() + limit - 1) / limit));
    }
    // An offset that is not a stored id starts at the next stored one.
    PointId between = PointId.of(sorted.get(0).number() + 1);
    ScrollPage page = c.scroll(ScrollRequest.of(between, 2, false, false));
    int from = sorted.indexOf(between) >= 0 ? sorted.indexOf(between) : 1;
    assertThat(page.points())
        .extracting(Record::id)
        .containsExactlyElementsOf(sorted.subList(from, from + 2));
    assertThat(page.nextOffset()).isEqualTo(sorted.get(from + 2));
    assertThatThrownBy(() -> c.scroll(ScrollRequest.of(null, 0, false, false)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("limit must be positive [limit=0]");
    // Deleted ids disappear from the scroll.
    c.delete(sorted.subList(0, 10), true);
    assertThat(c.scroll(ScrollRequest.of(null, 5, false, false)).points())
        .extracting(Record::id)
        .containsExactlyElementsOf(sorted.subList(10, 15));
  }

  @Test
  void retrieveKeepsRequestOrderSkipsMissingAndDuplicates() {
    Collection c = open("c", DIM, Distance.DOT, 3);
    List<Point> pts = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      pts.add(new Point(PointId.of(i), TestVectors.gaussian(random, DIM), null));
    }
    c.upsert(pts, false);
    List<Record> got =
        c.retrieve(
            List.of(PointId.of(9), PointId.of(3), PointId.of(99), PointId.of(9), PointId.of(0)),
            false,
            true);
    assertThat(got)
        .extracting(Record::id)
        .containsExactly(PointId.of(9), PointId.of(3), PointId.of(0));
    assertThat(got.getFirst().vector()).isEqualTo(pts.get(9).vector());
  }

  @Test
  void searchOffsetAndLimit() {
    Collection c = open("c", DIM, Distance.EUCLID, 3);
    Map<PointId, float[]> live = loadSame(Distance.EUCLID, List.of(c), 60);
    float[] q = TestVectors.gaussian(random, DIM);
    List<Record> all = c.search(query(q, 100, 0, null));
    assertThat(all).hasSize(live.size());
    assertThat(c.search(query(q, 5, 10, null)))
        .extracting(Record::id)
        .containsExactlyElementsOf(all.subList(10, 15).stream().map(Record::id).toList());
    assertThat(c.search(query(q, 5, live.size() - 2, null))).hasSize(2);
    assertThat(c.search(query(q, 5, live.size(), null))).isEmpty();
    assertThat(c.search(query(q, 0, 0, null))).isEmpty();
  }

  @Test
  void dataSurvivesCloseAndReopen() throws IOException {
    Collection c = open("c", DIM, Distance.COSINE, 3);
    Map<PointId, float[]> live = loadSame(Distance.COSINE, List.of(c), 200);
    float[] q = TestVectors.gaussian(random, DIM);
    List<Record> before = c.search(query(q, 20, 0, null));
    c.close();
    open.remove(c);
    Collection again = open("c", DIM, Distance.COSINE, 3);
    assertThat(again.count()).isEqualTo(live.size());
    List<Record> after = again.search(query(q, 20, 0, null));
    assertThat(after).extracting(Record::id).isEqualTo(before.stream().map(Record::id).toList());
    for (Map.Entry<PointId, float[]> e : live.entrySet()) {
      assertThat(again.get(e.getKey(), false, true).vector()).isEqualTo(e.getValue());
    }
  }

  @Test
  void theConfiguredIndexTypeIsUsed() throws Exception {
    ExecutorService builds = Executors.newSingleThreadExecutor();
    try {
      Collection c =
          Collection.open(
              "flat",
              tmp.resolve("flat"),
              new CollectionConfig(
                  DIM, Distance.DOT, 1, 1, new IndexParams(IndexParams.FLAT, 16, 32, 1.2f, 0)),
              options().withBuildExecutor(builds));
      open.add(c);
      List<Point> pts = new ArrayList<>();
      for (int i = 0; i < 120; i++) {
        pts.add(new Point(PointId.of(i), TestVectors.gaussian(random, DIM), null));
      }
      c.upsert(pts, true);
      c.flush();
      builds.shutdown();
      assertThat(builds.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      assertThat(c.info().segmentInfos())
          .as("flat: sealed segments stay in memory, never built into DiskANN")
          .allMatch(s -> s.state() != Segment.State.INDEXING);
      assertThat(c.info().diskBytes()).isEqualTo(c.walBytes());
      assertThat(c.info().indexing()).isFalse();
    } finally {
      builds.shutdownNow();
    }
  }
}
