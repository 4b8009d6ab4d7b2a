package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.Searches;
import io.flashvec.index.TestVectors;
import io.flashvec.index.TestVectors.Hit;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

/**
 * What every shard configuration must do: subclasses vary when segments are sealed and how sealed
 * segments are searched, and every one of them must answer exactly like brute force over a model of
 * what was written, keep that answer across flushes, reopen and crashes, and stay sane while a
 * writer runs concurrently.
 *
 * <p>Runs on a {@link CrashSimulatingFileIO}: it never calls the real fsync (fast), tracks every
 * channel the shard opens (a file-descriptor leak check) and can simulate a power loss.
 */
@ExtendWith(TestSeeds.Reporter.class)
abstract class ShardContractTest {

  /** Not a multiple of any SIMD lane count, so the kernels' scalar tails run too. */
  static final int DIM = 13;

  @TempDir Path tmp;

  /** The file system of the current shard; replaced after a simulated crash. */
  protected CrashSimulatingFileIO io = new CrashSimulatingFileIO();

  private final List<CrashSimulatingFileIO> ios = new ArrayList<>(List.of(io));
  private String testName;

  /** Points a growing segment takes before it is sealed. */
  protected abstract int sealThreshold();

  /** Where sealed segments are indexed; {@code null} keeps them in memory, searched exactly. */
  protected Executor buildExecutor() {
    return null;
  }

  /** The parameters every search in this contract uses; results must be exact with them. */
  protected SearchParams searchParams() {
    return SearchParams.DEFAULT;
  }

  /**
   * How far a reported score may be from {@link Distance#score}; zero where the shard scores with
   * the same kernels (then results must match brute force bit for bit).
   */
  protected float tolerance(float score) {
    return 0f;
  }

  /** Waits for background work (index builds); nothing to wait for by default. */
  protected void settle(Shard s) {}

  @org.junit.jupiter.api.BeforeEach
  void name(TestInfo info) {
    testName =
        getClass().getSimpleName()
            + "."
            + info.getTestMethod().orElseThrow().getName()
            + info.getDisplayName();
  }

  @AfterEach
  void noLeakedChannels() {
    for (CrashSimulatingFileIO x : ios) {
      x.assertNoOpenChannels();
    }
  }

  protected Random random() {
    return TestSeeds.random(testName);
  }

  protected Shard open(Distance d) {
    return Shard.open(
        tmp.resolve("shard"),
        0,
        DIM,
        d,
        IndexParams.DEFAULT,
        new Shard.Options(
            sealThreshold(),
            Wal.Options.defaults().withSegmentBytes(32 << 10),
            io,
            buildExecutor(),
            64,
            compaction()));
  }

  /** Background compaction of sealed disk segments; none by default. */
  protected Shard.Compaction compaction() {
    return null;
  }

  // ---------------------------------------------------------------------------------------------
  // The model: what the shard should hold.

  /** Prepared vectors and payloads by id, as the shard should hold them. */
  static final class Model {
    final Map<PointId, float[]> vectors = new HashMap<>();
    final Map<PointId, byte[]> payloads = new HashMap<>();
    int version;

    void upsert(List<Point> points) {
      for (Point p : points) {
        vectors.put(p.id(), p.vector());
        payloads.put(p.id(), p.payload());
      }
    }

    void delete(List<PointId> ids) {
      for (PointId id : ids) {
        vectors.remove(id);
        payloads.remove(id);
      }
    }

    Model copy() {
      Model m = new Model();
      m.vectors.putAll(vectors);
      m.payloads.putAll(payloads);
      m.version = version;
      return m;
    }

    List<PointId> sortedIds() {
      List<PointId> ids = new ArrayList<>(vectors.keySet());
      ids.sort(null);
      return ids;
    }

    PointId anyId(Random r) {
      List<PointId> ids = sortedIds();
      return ids.get(r.nextInt(ids.size()));
    }
  }

  /**
   * A batch of {@code n} points: new ids, and with probability {@code replace} an existing id (or
   * one already in this batch, which the later entry must win).
   */
  static List<Point> batch(Random r, Distance d, Model m, int n, double replace) {
    List<Point> out = new ArrayList<>(n);
    m.version++;
    for (int i = 0; i < n; i++) {
      PointId id;
      if (r.nextDouble() < replace && !m.vectors.isEmpty()) {
        id = m.anyId(r);
      } else if (r.nextDouble() < replace && !out.isEmpty()) {
        id = out.get(r.nextInt(out.size())).id();
      } else {
        do {
          id = TestVectors.randomId(r);
        } while (m.vectors.containsKey(id));
      }
      byte[] payload = r.nextInt(5) == 0 ? null : TestVectors.payload(id, m.version);
      out.add(new Point(id, d.prepare(TestVectors.gaussian(r, DIM)), payload));
    }
    return out;
  }

  static long upsert(Shard s, Model m, List<Point> points) {
    long seq = s.upsert(points);
    m.upsert(points);
    return seq;
  }

  static void fill(Random r, Distance d, Shard s, Model m, int n, double replace) {
    int done = 0;
    while (done < n) {
      int size = Math.min(n - done, 1 + r.nextInt(40));
      upsert(s, m, batch(r, d, m, size, replace));
      done += size;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Assertions against the model.

  /** Random queries with random k and thresholds give exactly the brute-force answer. */
  void assertSearchMatchesBruteForce(Random r, Shard s, Distance d, Model m, int queries) {
    for (int i = 0; i < queries; i++) {
      float[] q = d.prepare(TestVectors.gaussian(r, DIM));
      int k =
          switch (r.nextInt(4)) {
            case 0 -> 1;
            case 1 -> 10;
            case 2 -> 1 + r.nextInt(Math.max(1, m.vectors.size()));
            default -> m.vectors.size() + 5;
          };
      Float threshold = null;
      if (r.nextInt(3) == 0 && m.vectors.size() > 2) {
        threshold = thresholdBetweenResults(r, d, TestVectors.bruteForce(m.vectors, q, d, k, null));
      }
      assertSearch(s, d, m, q, k, threshold, "query " + i);
    }
  }

  /** A threshold halfway between two consecutive brute-force scores, clear of score noise. */
  private Float thresholdBetweenResults(Random r, Distance d, List<Hit> hits) {
    for (int attempt = 0; attempt < 10 && hits.size() > 1; attempt++) {
      int j = r.nextInt(hits.size() - 1);
      float a = hits.get(j).score();
      float b = hits.get(j + 1).score();
      if (Math.abs(a - b) > 4 * (tolerance(a) + tolerance(b))) {
        return (a + b) / 2;
      }
    }
    return null;
  }

  void assertSearch(Shard s, Distance d, Model m, float[] q, int k, Float threshold, String what) {
    List<Record> got = Searches.search(s, q, k, searchParams(), threshold, true, true);
    List<Hit> want = TestVectors.bruteForce(m.vectors, q, d, k, threshold);
    String ctx =
        what
            + " [k="
            + k
            + ", threshold="
            + threshold
            + ", points="
            + m.vectors.size()
            + ", "
            + TestSeeds.reproduceWith()
            + "]";
    assertThat(got).as("result count " + ctx).hasSize(want.size());
    Set<PointId> seen = new HashSet<>();
    for (int i = 0; i < got.size(); i++) {
      Record rec = got.get(i);
      String at = ctx + " at " + i + " id=" + rec.id();
      assertThat(seen.add(rec.id())).as("unique " + at).isTrue();
      float[] stored = m.vectors.get(rec.id());
      assertThat(stored).as("a live id " + at).isNotNull();
      assertThat(rec.vector()).as("the live version's vector " + at).isEqualTo(stored);
      assertThat(rec.payload()).as("payload " + at).isEqualTo(m.payloads.get(rec.id()));
      float truth = d.score(q, stored, 0);
      assertThat(rec.score()).as("true score " + at).isCloseTo(truth, offset(tolerance(truth)));
      float expected = want.get(i).score();
      // Equal score sequences mean the same set up to ties: recall is exact.
      assertThat(rec.score())
          .as("brute-force score " + at)
          .isCloseTo(expected, offset(tolerance(expected)));
    }
  }

  /** Count, scroll order, get and a full-k search all agree with the model. */
  void assertHolds(Shard s, Distance d, Model m) {
    assertThat(s.count()).as("count").isEqualTo(m.vectors.size());
    assertThat(s.scrollIds(null, Integer.MAX_VALUE)).as("scroll").isEqualTo(m.sortedIds());
    for (Map.Entry<PointId, float[]> e : m.vectors.entrySet()) {
      Record rec = s.get(e.getKey(), true, true);
      assertThat(rec).as("get %s", e.getKey()).isNotNull();
      assertThat(rec.id()).isEqualTo(e.getKey());
      assertThat(rec.vector()).as("vector of %s", e.getKey()).isEqualTo(e.getValue());
      assertThat(rec.payload())
          .as("payload of %s", e.getKey())
          .isEqualTo(m.payloads.get(e.getKey()));
    }
    if (!m.vectors.isEmpty()) {
      // Everything at once: each live id exactly once, always its newest version.
      float[] q = m.vectors.values().iterator().next();
      assertSearch(s, d, m, q, m.vectors.size() + 1, null, "all points");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The contract.

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void searchIsExactAcrossGrowingAndSealedSegments(Distance d) throws IOException {
    Random r = random();
    Model m = new Model();
    try (Shard s = open(d)) {
      assertThat(
              Searches.search(
                  s, d.prepare(TestVectors.gaussian(r, DIM)), 5, searchParams(), null, true, true))
          .as("empty shard")
          .isEmpty();
      fill(r, d, s, m, 300, 0);
      assertSearchMatchesBruteForce(r, s, d, m, 20);
      s.flush();
      assertSearchMatchesBruteForce(r, s, d, m, 20);
      fill(r, d, s, m, 150, 0);
      s.flush();
      fill(r, d, s, m, 20, 0);
      assertThat(s.snapshot().segments().size())
          .as("sealed segments plus the growing one")
          .isGreaterThanOrEqualTo(3);
      assertSearchMatchesBruteForce(r, s, d, m, 20);
      settle(s);
      assertSearchMatchesBruteForce(r, s, d, m, 20);
      assertHolds(s, d, m);
    }
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void filtersAgreeWithTheModelAndDeleteByFilterReplaysAsIds(Distance d) throws IOException {
    Random r = random();
    Model m = new Model();
    int mid;
    FilterEvaluator f;
    try (Shard s = open(d)) {
      fill(r, d, s, m, 250, 0.2);
      s.flush();
      fill(r, d, s, m, 120, 0.2);
      settle(s);
      mid = m.version / 2;
      // versions up to mid, or no payload at all (20% of the points)
      f =
          new FilterEvaluator(
              FilterParser.parse(
                  JsonMapper.builder()
                      .build()
                      .readTree(
                          "{\"should\":[{\"key\":\"v\",\"range\":{\"lte\":"
                              + mid
                              + "}},{\"is_empty\":{\"key\":\"v\"}}]}"),
                  "filter"));
      Model matching = new Model();
      for (PointId id : m.sortedIds()) {
        if (f.matches(id, m.payloads.get(id))) {
          matching.vectors.put(id, m.vectors.get(id));
          matching.payloads.put(id, m.payloads.get(id));
        }
      }
      assertThat(matching.vectors.size()).as("the filter splits the points").isBetween(1, 369);
      assertThat(s.count(f)).as("filtered count").isEqualTo(matching.vectors.size());
      assertThat(s.scrollIds(null, Integer.MAX_VALUE, f))
          .as("filtered scroll")
          .isEqualTo(matching.sortedIds());
      List<PointId> firstPage = s.scrollIds(null, 7, f);
      assertThat(firstPage)
          .isEqualTo(matching.sortedIds().subList(0, Math.min(7, matching.vectors.size())));
      for (int i = 0; i < 10; i++) {
        float[] q = d.prepare(TestVectors.gaussian(r, DIM));
        int k = 1 + r.nextInt(20);
        List<Record> got =
            Searches.search(s, q, k, searchParams(), null, true, true, f, new SearchStats());
        List<Hit> want = TestVectors.bruteForce(matching.vectors, q, d, k, null);
        assertThat(got).as("filtered search " + i).hasSize(want.size());
        for (int j = 0; j < got.size(); j++) {
          assertThat(matching.vectors).containsKey(got.get(j).id());
          assertThat(got.get(j).score())
              .as("filtered search %d at %d", i, j)
              .isCloseTo(want.get(j).score(), offset(tolerance(want.get(j).score())));
        }
      }
      long seq = s.delete(f);
      assertThat(seq).isPositive();
      m.delete(matching.sortedIds());
      assertThat(s.count(f)).isZero();
      assertThat(s.delete(f)).as("nothing left to delete logs nothing").isZero();
      // Points written after the delete may match the filter too: the WAL holds the ids that
      // matched then, so they must survive a reopen.
      fill(r, d, s, m, 60, 0);
      assertHolds(s, d, m);
    }
    try (Shard s = open(d)) {
      settle(s);
      assertHolds(s, d, m);
      assertThat(s.count(f)).as("points written after the delete by filter survive").isPositive();
    }
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void upsertOfAnExistingIdReplacesIt(Distance d) throws IOException {
    Random r = random();
    Model m = new Model();
    try (Shard s = open(d)) {
      fill(r, d, s, m, 200, 0);
      Model before = m.copy();
      if (r.nextBoolean()) {
        s.flush(); // the old versions sit in a sealed segment
      }
      // Replace about half, in batches that also repeat ids within themselves.
      fill(r, d, s, m, 150, 0.9);
      assertThat(s.count()).isEqualTo(m.vectors.size());
      int replaced = 0;
      for (PointId id : before.sortedIds()) {
        float[] old = before.vectors.get(id);
        if (old == m.vectors.get(id)) {
          continue;
        }
        replaced++;
        // Searching with the old vector finds the id at most once, with its new vector and score.
        List<Record> hits =
            Searches.search(s, old, m.vectors.size(), searchParams(), null, true, true);
        List<Record> same = hits.stream().filter(h -> h.id().equals(id)).toList();
        assertThat(same).as("id %s once", id).hasSize(1);
        assertThat(same.getFirst().vector()).isEqualTo(m.vectors.get(id));
        float truth = d.score(old, m.vectors.get(id), 0);
        assertThat(same.getFirst().score()).isCloseTo(truth, offset(tolerance(truth)));
        assertThat(s.get(id, true, true).payload()).isEqualTo(m.payloads.get(id));
      }
      assertThat(replaced).as("the test replaced something").isGreaterThan(50);
      assertHolds(s, d, m);
      settle(s);
      assertHolds(s, d, m);
    }
  }

  @Test
  void upsertOfTheSameIdTwiceInOneBatchKeepsTheLast() throws IOException {
    Distance d = Distance.DOT;
    try (Shard s = open(d)) {
      PointId id = PointId.of(42);
      float[] first = new float[DIM];
      float[] second = new float[DIM];
      first[0] = 1;
      second[1] = 1;
      s.upsert(List.of(new Point(id, first, null), new Point(id, second, new byte[] {'x'})));
      assertThat(s.count()).isEqualTo(1);
      assertThat(s.get(id, true, true).vector()).isEqualTo(second);
      assertThat(s.get(id, true, true).payload()).containsExactly('x');
      List<Record> hits = Searches.search(s, first, 10, searchParams(), null, false, false);
      assertThat(hits).hasSize(1);
      assertThat(hits.getFirst().score()).isCloseTo(0f, offset(tolerance(0f)));
    }
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void deleteRemovesPointsEverywhere(Distance d) throws IOException {
    Random r = random();
    Model m = new Model();
    try (Shard s = open(d)) {
      fill(r, d, s, m, 150, 0);
      s.flush();
      fill(r, d, s, m, 100, 0);
      List<PointId> gone = new ArrayList<>();
      for (PointId id : m.sortedIds()) {
        if (r.nextInt(3) == 0) {
          gone.add(id);
        }
      }
      List<PointId> request = new ArrayList<>(gone);
      request.add(PointId.of(new java.util.UUID(7, 7))); // never stored: ignored
      request.add(gone.getFirst()); // twice in one request
      long before = s.count();
      s.delete(request);
      m.delete(gone);
      assertThat(s.count()).isEqualTo(before - gone.size());
      for (PointId id : gone) {
        assertThat(s.get(id, true, true)).as("deleted %s", id).isNull();
      }
      assertHolds(s, d, m);
      assertSearchMatchesBruteForce(r, s, d, m, 10);
      // Deleting again changes nothing; re-inserting a deleted id brings it back.
      s.delete(gone);
      assertThat(s.count()).isEqualTo(m.vectors.size());
      Point back = new Point(gone.get(1), d.prepare(TestVectors.gaussian(r, DIM)), null);
      upsert(s, m, List.of(back));
      assertHolds(s, d, m);
      settle(s);
      assertHolds(s, d, m);
      // Delete everything.
      s.delete(m.sortedIds());
      m.delete(m.sortedIds());
      assertHolds(s, d, m);
      assertThat(Searches.search(s, back.vector(), 3, searchParams(), null, true, true)).isEmpty();
    }
  }

  @Test
  void updateVectorsKeepsThePayloadsAndAMissingIdWritesNothing() throws IOException {
    Random r = random();
    PointId a = PointId.of(1);
    PointId b = PointId.parse("550e8400-e29b-41d4-a716-446655440000");
    byte[] pa = "{\"a\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    float[] va = TestVectors.gaussian(r, DIM);
    float[] vb = TestVectors.gaussian(r, DIM);
    float[] na = TestVectors.gaussian(r, DIM);
    float[] nb = TestVectors.gaussian(r, DIM);
    try (Shard s = open(Distance.DOT)) {
      s.upsert(List.of(new Point(a, va, pa)));
      s.flush(); // a sealed, b growing
      settle(s);
      s.upsert(List.of(new Point(b, vb, null)));
      long seq = s.wal().lastSeq();
      assertThatThrownBy(
              () ->
                  s.updateVectors(
                      List.of(new Point(a, na, null), new Point(PointId.of(7), nb, null))))
          .isInstanceOf(io.flashvec.index.NotFoundException.class)
          .hasMessage("Not found: No point with id 7 found");
      assertThat(s.wal().lastSeq()).isEqualTo(seq);
      assertThat(s.get(a, true, true).vector()).isEqualTo(va);
      // the given payloads are not used: the stored ones stay
      s.updateVectors(List.of(new Point(a, na, new byte[] {'x'}), new Point(b, nb, null)));
      assertThat(s.count()).isEqualTo(2);
      assertThat(s.get(a, true, true).vector()).isEqualTo(na);
      assertThat(s.get(a, true, true).payload()).isEqualTo(pa);
      assertThat(s.get(b, true, true).vector()).isEqualTo(nb);
      assertThat(s.get(b, true, true).payload()).isNull();
    }
    try (Shard s = open(Distance.DOT)) {
      assertThat(s.get(a, true, true).vector()).isEqualTo(na);
      assertThat(s.get(a, true, true).payload()).isEqualTo(pa);
      assertThat(s.get(b, true, true).vector()).isEqualTo(nb);
    }
  }

  /**
   * A new version moves a point's location before it deletes the old one, so a reader that saw the
   * old location must look again rather than report the point missing.
   */
  @Test
  void getNeverMissesAPointThatIsBeingRewritten() throws Exception {
    Random r = random();
    PointId id = PointId.of(3);
    List<float[]> versions = new ArrayList<>();
    for (int i = 0; i < 3_000; i++) {
      versions.add(TestVectors.gaussian(r, DIM));
    }
    try (Shard s = open(Distance.DOT)) {
      s.upsert(List.of(new Point(id, versions.getFirst(), null)));
      AtomicBoolean done = new AtomicBoolean();
      Thread writer =
          Thread.ofPlatform()
              .start(
                  () -> {
                    try {
                      for (float[] v : versions) {
                        s.upsert(List.of(new Point(id, v, null)));
                      }
                    } finally {
                      done.set(true);
                    }
                  });
      long reads = 0;
      long misses = 0;
      while (!done.get()) {
        reads++;
        if (s.get(id, false, false) == null) {
          misses++;
        }
      }
      writer.join();
      assertThat(misses).as("misses in %s reads", reads).isZero();
      assertThat(s.get(id, false, true).vector()).isEqualTo(versions.getLast());
    }
  }

  @Test
  void getReturnsWhatWasStoredAsAsked() throws IOException {
    Random r = random();
    try (Shard s = open(Distance.EUCLID)) {
      PointId withPayload = PointId.parse("550e8400-e29b-41d4-a716-446655440000");
      PointId without = PointId.of(-1); // 2^64 - 1
      float[] v1 = TestVectors.gaussian(r, DIM);
      float[] v2 = TestVectors.gaussian(r, DIM);
      byte[] payload = "{\"a\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      s.upsert(List.of(new Point(withPayload, v1, payload), new Point(without, v2, null)));
      for (int round = 0; round < 2; round++) {
        assertThat(s.get(withPayload, true, true))
            .satisfies(x -> assertThat(x.id()).isEqualTo(withPayload))
            .satisfies(x -> assertThat(x.vector()).isEqualTo(v1))
            .satisfies(x -> assertThat(x.payload()).isEqualTo(payload));
        Record bare = s.get(withPayload, false, false);
        assertThat(bare.vector()).isNull();
        assertThat(bare.payload()).isNull();
        assertThat(s.get(withPayload, true, false).payload()).isEqualTo(payload);
        assertThat(s.get(withPayload, false, true).vector()).isEqualTo(v1);
        assertThat(s.get(without, true, true).payload()).isNull();
        assertThat(s.get(without, true, true).vector()).isEqualTo(v2);
        assertThat(s.get(PointId.of(12345), true, true)).isNull();
        // The returned vector is a copy: changing it changes nothing stored.
        s.get(without, false, true).vector()[0] = 1e9f;
        assertThat(s.get(without, false, true).vector()).isEqualTo(v2);
        s.flush();
        settle(s);
      }
    }
  }

  @Test
  void scrollIdsPagesThroughIdsInOrder() throws IOException {
    Random r = random();
    Distance d = Distance.COSINE;
    Model m = new Model();
    try (Shard s = open(d)) {
      assertThat(s.scrollIds(null, 10)).isEmpty();
      fill(r, d, s, m, 250, 0);
      s.flush();
      fill(r, d, s, m, 60, 0.3);
      List<PointId> all = m.sortedIds();
      assertThat(s.scrollIds(null, Integer.MAX_VALUE)).isEqualTo(all);
      assertThat(s.scrollIds(null, 0)).isEmpty();
      int rounds = TestSeeds.atLeast(r, 5);
      for (int round = 0; round < rounds; round++) {
        // Pages of `limit`, fetching limit + 1 to learn where the next page starts.
        int limit = 1 + r.nextInt(40);
        List<PointId> seen = new ArrayList<>();
        PointId from = null;
        while (true) {
          List<PointId> page = s.scrollIds(from, limit + 1);
          assertThat(page).isSortedAccordingTo(PointId::compareTo);
          if (page.size() <= limit) {
            seen.addAll(page);
            break;
          }
          seen.addAll(page.subList(0, limit));
          from = page.get(limit);
        }
        assertThat(seen).as("limit=%d", limit).isEqualTo(all);
      }
      // Starting between ids and past the end.
      PointId some = all.get(r.nextInt(all.size()));
      int at = all.indexOf(some);
      assertThat(s.scrollIds(some, 5)).isEqualTo(all.subList(at, Math.min(all.size(), at + 5)));
      if (!some.isUuid() && some.number() != -1L) {
        // The successor of `some`, stored or not: the page starts right after `some`.
        PointId next = PointId.of(some.number() + 1);
        int after = at + 1;
        assertThat(s.scrollIds(next, 3))
            .isEqualTo(all.subList(after, Math.min(all.size(), after + 3)));
      }
      PointId last = PointId.parse("ffffffff-ffff-ffff-ffff-ffffffffffff");
      assertThat(s.scrollIds(last, 5)).isEqualTo(all.contains(last) ? List.of(last) : List.of());
    }
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void scoreThresholdIsInclusiveAndDropsWorseResults(Distance d) throws IOException {
    Random r = random();
    Model m = new Model();
    try (Shard s = open(d)) {
      fill(r, d, s, m, 120, 0);
      s.flush();
      fill(r, d, s, m, 50, 0);
      float[] q = d.prepare(TestVectors.gaussian(r, DIM));
      List<Hit> ranked = TestVectors.bruteForce(m.vectors, q, d, m.vectors.size(), null);
      Hit tenth = ranked.get(9);
      if (tolerance(tenth.score()) == 0f) {
        // A result exactly at the threshold passes.
        List<Record> got = Searches.search(s, q, 50, searchParams(), tenth.score(), false, false);
        assertThat(got).hasSize(10);
        assertThat(got.getLast().id()).isEqualTo(tenth.id());
      }
      assertSearchMatchesBruteForce(r, s, d, m, 30);
      // A threshold nothing passes.
      float impossible = d.higherIsBetter() ? Float.MAX_VALUE : -1f;
      assertThat(Searches.search(s, q, 50, searchParams(), impossible, false, false)).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void reopenAfterCloseRestoresEverything(Distance d) throws IOException {
    Random r = random();
    Model m = new Model();
    List<float[]> queries = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      queries.add(d.prepare(TestVectors.gaussian(r, DIM)));
    }
    List<List<Record>> before = new ArrayList<>();
    try (Shard s = open(d)) {
      int ops = TestSeeds.atLeast(r, 30);
      for (int op = 0; op < ops; op++) {
        switch (r.nextInt(10)) {
          case 0 -> s.flush();
          case 1, 2 -> {
            if (!m.vectors.isEmpty()) {
              List<PointId> ids = new ArrayList<>();
              for (int i = 0; i < 1 + r.nextInt(10); i++) {
                ids.add(m.anyId(r));
              }
              s.delete(ids);
              m.delete(ids);
            }
          }
          default -> upsert(s, m, batch(r, d, m, 1 + r.nextInt(30), 0.3));
        }
      }
      settle(s);
      assertHolds(s, d, m);
      for (float[] q : queries) {
        before.add(Searches.search(s, q, 20, searchParams(), null, true, true));
      }
    }
    for (int reopen = 0; reopen < 2; reopen++) {
      try (Shard s = open(d)) {
        settle(s);
        assertHolds(s, d, m);
        for (int i = 0; i < queries.size(); i++) {
          List<Record> after =
              Searches.search(s, queries.get(i), 20, searchParams(), null, true, true);
          assertSameResults(after, before.get(i), "query " + i + " after reopen " + reopen);
        }
        assertSearchMatchesBruteForce(r, s, d, m, 10);
      }
    }
    // The reopened shard takes new writes, which survive another reopen too.
    try (Shard s = open(d)) {
      fill(r, d, s, m, 50, 0.3);
      assertHolds(s, d, m);
    }
    try (Shard s = open(d)) {
      settle(s);
      assertHolds(s, d, m);
    }
  }

  private void assertSameResults(List<Record> got, List<Record> want, String what) {
    assertThat(got).as(what).hasSameSizeAs(want);
    for (int i = 0; i < got.size(); i++) {
      Record a = got.get(i);
      Record b = want.get(i);
      assertThat(a.score())
          .as(what + " score at " + i)
          .isCloseTo(b.score(), offset(2 * tolerance(b.score())));
      if (tolerance(b.score()) == 0f) {
        assertThat(a.id()).as(what + " id at " + i).isEqualTo(b.id());
        assertThat(a.vector()).isEqualTo(b.vector());
        assertThat(a.payload()).isEqualTo(b.payload());
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void acknowledgedWritesSurviveACrash(Distance d) throws IOException {
    Random r = random();
    Model m = new Model();
    List<Model> states = new ArrayList<>(); // states.get(j): after the first j operations
    states.add(m.copy());
    int acknowledged = 0;
    Shard s = open(d);
    try {
      int ops = TestSeeds.atLeast(r, 25);
      for (int op = 1; op <= ops; op++) {
        long seq;
        if (r.nextInt(6) == 0 && !m.vectors.isEmpty()) {
          List<PointId> ids = List.of(m.anyId(r), m.anyId(r));
          seq = s.delete(ids);
          m.delete(ids);
        } else {
          seq = upsert(s, m, batch(r, d, m, 1 + r.nextInt(20), 0.2));
        }
        states.add(m.copy());
        if (r.nextInt(3) == 0) {
          s.awaitDurable(seq);
          acknowledged = op;
        }
        if (r.nextInt(8) == 0) {
          s.flush();
        }
      }
      settle(s);
      CrashSimulatingFileIO.CrashReport report = io.crash(r);
      System.out.println(
          "[flashvec] " + testName + ": acknowledged " + acknowledged + "/" + ops + ", " + report);
    } finally {
      try {
        s.close();
      } catch (IOException | RuntimeException expected) {
        // the simulated power loss killed its files
      }
    }
    io = new CrashSimulatingFileIO();
    ios.add(io);
    try (Shard reopened = open(d)) {
      settle(reopened);
      // Recovery keeps a prefix of the operations that contains every acknowledged one.
      long count = reopened.count();
      List<PointId> ids = reopened.scrollIds(null, Integer.MAX_VALUE);
      Model match = null;
      for (int j = states.size() - 1; j >= acknowledged && match == null; j--) {
        Model candidate = states.get(j);
        // Upserts that overwrite ids leave the id set unchanged: the vectors decide.
        if (candidate.vectors.size() == count
            && candidate.sortedIds().equals(ids)
            && candidate.vectors.entrySet().stream()
                .allMatch(
                    e ->
                        Arrays.equals(
                            reopened.get(e.getKey(), false, true).vector(), e.getValue()))) {
          match = candidate;
        }
      }
      StringBuilder diff = new StringBuilder();
      if (match == null) {
        // Say how far each acknowledged-or-later state is from what was recovered.
        for (int j = acknowledged; j < states.size(); j++) {
          Set<PointId> missing = new HashSet<>(states.get(j).vectors.keySet());
          ids.forEach(missing::remove);
          Set<PointId> extra = new HashSet<>(ids);
          extra.removeAll(states.get(j).vectors.keySet());
          diff.append(
              String.format(
                  Locale.ROOT, "%n  after %d ops: missing %s, extra %s", j, missing, extra));
        }
      }
      assertThat(match)
          .as(
              "state after some prefix of at least %d operations; got %d points%s",
              acknowledged, count, diff)
          .isNotNull();
      assertHolds(reopened, d, match);
      assertSearchMatchesBruteForce(r, reopened, d, match, 10);
    }
  }

  @ParameterizedTest
  @EnumSource(value = Distance.class, names = "MANHATTAN", mode = EnumSource.Mode.EXCLUDE)
  void searchWhileAnotherThreadUpserts(Distance d) throws Exception {
    Random r = random();
    Model stable = new Model();
    try (Shard s = open(d)) {
      fill(r, d, s, stable, 200, 0);
      // Ids the writer replaces and deletes (drawn apart from the stable ones, which a random id
      // can otherwise repeat); the stable ids it never touches.
      List<Point> churn = batch(r, d, stable, 40, 0);
      s.upsert(churn);
      long seed = r.nextLong();
      AtomicBoolean done = new AtomicBoolean();
      AtomicReference<Throwable> writerFailure = new AtomicReference<>();
      Thread writer =
          Thread.ofPlatform()
              .name("shard-writer")
              .start(
                  () -> {
                    Random w = new Random(seed);
                    try {
                      for (int i = 0; i < 300; i++) {
                        List<Point> pts = new ArrayList<>();
                        for (int j = 0; j < 1 + w.nextInt(8); j++) {
                          PointId id =
                              w.nextBoolean()
                                  ? churn.get(w.nextInt(churn.size())).id()
                                  : PointId.of(new java.util.UUID(seed, i * 100L + j));
                          pts.add(new Point(id, d.prepare(TestVectors.gaussian(w, DIM)), null));
                        }
                        s.upsert(pts);
                        if (w.nextInt(10) == 0) {
                          s.delete(List.of(churn.get(w.nextInt(churn.size())).id()));
                        }
                        if (w.nextInt(50) == 0) {
                          s.flush();
                        }
                      }
                    } catch (Throwable t) {
                      writerFailure.set(t);
                    } finally {
                      done.set(true);
                    }
                  });
      int searches = 0;
      try {
        while (!done.get() || searches < 50) {
          float[] q = d.prepare(TestVectors.gaussian(r, DIM));
          int k = 1 + r.nextInt(30);
          List<Record> got = Searches.search(s, q, k, searchParams(), null, false, true);
          searches++;
          // Racing upserts may expose two versions of a churned id; one is dropped, so up to one
          // fewer result per race, but never more than k and never a duplicate.
          assertThat(got).hasSizeBetween(Math.min(k, 1), k);
          assertThat(got.stream().map(Record::id).distinct().count()).isEqualTo(got.size());
          for (int i = 1; i < got.size(); i++) {
            assertThat(d.better(got.get(i).score(), got.get(i - 1).score()))
                .as("best first")
                .isFalse();
          }
          float worst = got.getLast().score();
          for (Record rec : got) {
            float[] v = stable.vectors.get(rec.id());
            if (v != null) {
              assertThat(rec.vector()).isEqualTo(v);
              float truth = d.score(q, v, 0);
              assertThat(rec.score()).isCloseTo(truth, offset(tolerance(truth)));
            }
          }
          // Every untouched point clearly better than the worst result is in the results.
          Set<PointId> ids = new HashSet<>();
          got.forEach(x -> ids.add(x.id()));
          for (Hit h : TestVectors.bruteForce(stable.vectors, q, d, k, null)) {
            if (d.better(h.score(), worst) && Math.abs(h.score() - worst) > 2 * tolerance(worst)) {
              assertThat(ids).as("search %d misses %s", searches, h).contains(h.id());
            }
          }
        }
      } finally {
        writer.join();
      }
      assertThat(writerFailure.get()).isNull();
      System.out.println("[flashvec] " + testName + ": " + searches + " searches during writes");
      settle(s);
      for (PointId id : stable.sortedIds()) {
        assertThat(s.get(id, false, true).vector()).isEqualTo(stable.vectors.get(id));
      }
    }
  }

  @Test
  void wrongDimensionsAreRejectedAndStoreNothing() throws IOException {
    try (Shard s = open(Distance.DOT)) {
      s.upsert(List.of(new Point(PointId.of(1), new float[DIM], null)));
      long seq = s.wal().lastSeq();
      assertThatThrownBy(
              () ->
                  s.upsert(
                      List.of(
                          new Point(PointId.of(2), new float[DIM], null),
                          new Point(PointId.of(3), new float[DIM - 1], null))))
          .isInstanceOf(InvalidInputException.class)
          .hasMessage("Wrong input: Vector dimension error: expected dim: 13, got 12");
      assertThat(s.count()).isEqualTo(1);
      assertThat(s.get(PointId.of(2), false, false)).isNull();
      assertThat(s.wal().lastSeq()).as("nothing logged").isEqualTo(seq);
      assertThatThrownBy(
              () -> Searches.search(s, new float[DIM + 1], 3, searchParams(), null, false, false))
          .isInstanceOf(InvalidInputException.class)
          .hasMessage("Wrong input: Vector dimension error: expected dim: 13, got 14");
      assertThat(Searches.search(s, new float[DIM], 0, searchParams(), null, false, false))
          .isEmpty();
    }
  }
}
