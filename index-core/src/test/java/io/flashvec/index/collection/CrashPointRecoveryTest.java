package io.flashvec.index.collection;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.shard.LiveIndexer;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

/**
 * Crashes a collection at every named {@link CrashPoint} of index-core and storage-nvme, recovers
 * it, and checks what recovery promises.
 *
 * <p>One seeded workload (upserts that overwrite, deletes, payload updates, flushes that seal and
 * build segments, WAL rolls and truncations, forced compactions, payload indexes created and
 * dropped with and without {@code wait}) runs on a {@link CrashSimulatingFileIO}. A dry run counts
 * how often each point is reached ({@link #everyPointIsReachedByTheWorkload}); then, per point, the
 * same workload runs with the point armed at a seeded hit, the simulator halts the process there
 * and drops what was never fsynced, and the collection is reopened on a fresh file system. After
 * the recovery:
 *
 * <ul>
 *   <li>the collection opens;
 *   <li>every acknowledged write is there with its exact vector and payload, and every acknowledged
 *       delete stays deleted; only the ids of the operation in flight at the crash may show either
 *       their old or their new state;
 *   <li>the payload schema is the acknowledged one; the change in flight may show only if the crash
 *       came after its commit, never when it died while its indexes were being built;
 *   <li>filtered counts through the payload indexes agree with the payloads;
 *   <li>no leftover of the interrupted step remains ({@code *.tmp}, payload indexes of a schema not
 *       in force), and the collection takes writes and builds segments again.
 * </ul>
 *
 * Background work is made sequential so that the hit counts repeat: index builds are queued and run
 * on the test thread between operations, and a background payload-index build is waited for.
 */
@ExtendWith(TestSeeds.Reporter.class)
class CrashPointRecoveryTest {

  private static final JsonMapper M = JsonMapper.builder().build();
  private static final int DIM = 4;
  private static final int SEAL = 40;

  /** Points that the cluster module reports: the collection lifecycle, crashed in its own test. */
  static final Set<CrashPoint> ELSEWHERE =
      EnumSet.of(
          CrashPoint.COLLECTION_CREATE_METADATA_WRITTEN,
          CrashPoint.COLLECTION_DELETE_METADATA_REMOVED,
          CrashPoint.COLLECTION_TUNING_WRITTEN);

  /** Points before the commit of a waited-for schema change: it must not show after them. */
  private static final Set<CrashPoint> BEFORE_SCHEMA_COMMIT =
      EnumSet.of(
          CrashPoint.PAYLOAD_INDEX_WRITTEN,
          CrashPoint.PAYLOAD_INDEX_COMMITTED,
          CrashPoint.PAYLOAD_INDEX_RENAMED,
          CrashPoint.PAYLOAD_SCHEMA_PREPARED);

  @TempDir Path tmp;

  private final List<ExecutorService> executors = new ArrayList<>();

  @AfterEach
  void stopExecutors() throws InterruptedException {
    for (ExecutorService e : executors) {
      e.shutdownNow();
      assertThat(e.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The workload

  /** A point's acknowledged state; {@code null} in a map means deleted. */
  record Version(float[] vector, String payload) {}

  /** One operation of the workload. */
  interface Op {
    /** Runs it; returning normally is its acknowledgement. */
    void run(Collection c);

    /** The state of the ids it touches after it, given their state before. */
    default Map<Long, Version> effect(Map<Long, Version> before) {
      return Map.of();
    }

    /** The payload schema after it. */
    default PayloadSchema schema(PayloadSchema before) {
      return before;
    }

    /** Whether it is a payload-schema change that waits for its indexes. */
    default boolean waitedSchemaChange() {
      return false;
    }
  }

  record Upsert(List<Long> ids, List<float[]> vectors, List<String> payloads) implements Op {
    @Override
    public void run(Collection c) {
      List<Point> points = new ArrayList<>();
      for (int i = 0; i < ids.size(); i++) {
        points.add(
            new Point(
                PointId.of(ids.get(i)),
                vectors.get(i),
                payloads.get(i).getBytes(StandardCharsets.UTF_8)));
      }
      c.upsert(points, true);
    }

    @Override
    public Map<Long, Version> effect(Map<Long, Version> before) {
      Map<Long, Version> out = new HashMap<>();
      for (int i = 0; i < ids.size(); i++) {
        out.put(ids.get(i), new Version(vectors.get(i), payloads.get(i)));
      }
      return out;
    }
  }

  record Delete(List<Long> ids) implements Op {
    @Override
    public void run(Collection c) {
      c.delete(ids.stream().map(PointId::of).toList(), true);
    }

    @Override
    public Map<Long, Version> effect(Map<Long, Version> before) {
      Map<Long, Version> out = new HashMap<>();
      ids.forEach(id -> out.put(id, null));
      return out;
    }
  }

  /** Rewrites the {@code n} of existing points' payloads (a payload-only update). */
  record SetN(List<Long> ids, int n) implements Op {
    @Override
    public void run(Collection c) {
      UnaryOperator<byte[]> update =
          p ->
              p == null
                  ? null
                  : withN(new String(p, StandardCharsets.UTF_8), n)
                      .getBytes(StandardCharsets.UTF_8);
      c.updatePayloads(ids.stream().map(PointId::of).toList(), update, true);
    }

    @Override
    public Map<Long, Version> effect(Map<Long, Version> before) {
      Map<Long, Version> out = new HashMap<>();
      for (long id : ids) {
        Version v = before.get(id);
        if (v != null) {
          out.put(id, new Version(v.vector(), withN(v.payload(), n)));
        }
      }
      return out;
    }
  }

  record Flush() implements Op {
    @Override
    public void run(Collection c) {
      c.flush();
    }
  }

  record Compact() implements Op {
    @Override
    public void run(Collection c) {
      c.compact(true); // no compaction executor: runs on this thread
    }
  }

  record CreateIndex(String key, String type, boolean waits) implements Op {
    @Override
    public void run(Collection c) {
      c.createPayloadIndex(field(key, type), waits);
    }

    @Override
    public PayloadSchema schema(PayloadSchema before) {
      return before.with(field(key, type));
    }

    @Override
    public boolean waitedSchemaChange() {
      return waits;
    }
  }

  record DropIndex(String key, boolean waits) implements Op {
    @Override
    public void run(Collection c) {
      c.deletePayloadIndex(key, waits);
    }

    @Override
    public PayloadSchema schema(PayloadSchema before) {
      return before.without(key);
    }

    @Override
    public boolean waitedSchemaChange() {
      return waits;
    }
  }

  static PayloadFieldSchema field(String key, String type) {
    return PayloadFieldSchema.parse(key, M.getNodeFactory().stringNode(type));
  }

  static String payload(int color, int n) {
    return "{\"color\":\"c" + color + "\",\"n\":" + n + "}";
  }

  static String withN(String payload, int n) {
    return payload.replaceFirst("\"n\":-?[0-9]+", "\"n\":" + n);
  }

  /** The workload: a fixed skeleton that reaches every point, filled with seeded random writes. */
  static List<Op> workload(Random r) {
    List<Op> ops = new ArrayList<>();
    long[] next = {0};
    Runnable writes =
        () -> {
          for (int i = 0, n = 2 + r.nextInt(4); i < n; i++) {
            ops.add(randomWrite(r, next));
          }
        };
    for (int i = 0; i < 3; i++) {
      ops.add(upsert(r, next, 20, false)); // 60 points: a seal at 40 and a segment build
    }
    // ~12 KB of payload: each shard's WAL rolls over its 4 KiB segment whatever the random writes
    ops.add(padded(upsert(r, next, 20, false), 600));
    ops.add(new CreateIndex("color", "keyword", true));
    writes.run();
    ops.add(new Flush());
    writes.run();
    ops.add(new Delete(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L)));
    ops.add(new Flush());
    ops.add(new Compact());
    ops.add(new CreateIndex("n", "integer", false));
    writes.run();
    ops.add(new Flush());
    ops.add(new DropIndex("color", true));
    writes.run();
    ops.add(new CreateIndex("color", "keyword", false));
    ops.add(new DropIndex("n", false));
    writes.run();
    ops.add(new Flush());
    ops.add(new Compact());
    writes.run();
    return ops;
  }

  /** {@code u} with a {@code bytes}-long pad in every payload. */
  private static Upsert padded(Upsert u, int bytes) {
    String pad = ",\"pad\":\"" + "p".repeat(bytes) + "\"}";
    List<String> payloads = new ArrayList<>();
    for (String p : u.payloads()) {
      payloads.add(p.substring(0, p.length() - 1) + pad);
    }
    return new Upsert(u.ids(), u.vectors(), payloads);
  }

  private static Op randomWrite(Random r, long[] next) {
    int k = r.nextInt(10);
    if (k < 5) {
      return upsert(r, next, 1 + r.nextInt(25), true);
    }
    List<Long> ids = new ArrayList<>();
    for (int i = 0, n = 1 + r.nextInt(8); i < n; i++) {
      ids.add((long) r.nextInt((int) Math.max(1, next[0])));
    }
    return k < 8 ? new Delete(ids) : new SetN(ids, r.nextInt(100));
  }

  /** {@code n} points, new ids or (with {@code overwrite}) some existing ones. */
  private static Upsert upsert(Random r, long[] next, int n, boolean overwrite) {
    Set<Long> ids = new TreeSet<>();
    while (ids.size() < n) {
      ids.add(overwrite && next[0] > 0 && r.nextInt(3) == 0 ? r.nextInt((int) next[0]) : next[0]++);
    }
    List<float[]> vectors = new ArrayList<>();
    List<String> payloads = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      float[] v = new float[DIM];
      for (int d = 0; d < DIM; d++) {
        v[d] = (float) r.nextGaussian();
      }
      vectors.add(v);
      payloads.add(payload(r.nextInt(3), r.nextInt(100)));
    }
    return new Upsert(List.copyOf(ids), vectors, payloads);
  }

  // ---------------------------------------------------------------------------------------------
  // Running it

  /** Queues tasks until {@link #runQueued}: index builds run between operations, in order. */
  static final class QueuedExecutor implements Executor {
    private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();

    @Override
    public void execute(Runnable task) {
      queue.add(task);
    }

    /** Runs every queued task (and those they queue) on this thread; false if there was none. */
    boolean runQueued() {
      boolean ran = false;
      for (Runnable t = queue.poll(); t != null; t = queue.poll()) {
        t.run();
        ran = true;
      }
      return ran;
    }
  }

  /** One run of the workload on one file system. */
  final class Run {
    final CrashSimulatingFileIO io;
    final QueuedExecutor builds = new QueuedExecutor();
    final Mode mode;
    Collection collection;

    Run(CrashSimulatingFileIO io, Mode mode) {
      this.io = io;
      this.mode = mode;
    }

    Collection open() {
      Shard.Options o =
          new Shard.Options(SEAL, Wal.Options.defaults().withSegmentBytes(4096), io)
              .withBuildExecutor(builds)
              .withCompaction(
                  new Shard.Compaction(
                      null, null, 0.2, 2, Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS, false));
      if (mode == Mode.RAW_SEALS) {
        // a live graph that never takes a point: every seal is raw, and automatic merges (queued
        // like the builds, without waiting for writes to pause) build the raw segments' graphs
        o =
            o.withLiveIndexer(LiveIndexer.of(task -> {}))
                .withCompaction(
                    new Shard.Compaction(
                        builds,
                        null,
                        0.2,
                        2,
                        Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS,
                        true,
                        0));
      }
      if (mode == Mode.LIVE_GRAPHS) {
        ExecutorService lane =
            Executors.newSingleThreadExecutor(
                Thread.ofPlatform().name("crash-point-live-index").daemon(true).factory());
        executors.add(lane);
        o = o.withLiveIndexer(lane);
      }
      collection =
          Collection.open(
              "c",
              tmp.resolve("c"),
              new CollectionConfig(DIM, Distance.EUCLID, 2, 1, IndexParams.DEFAULT),
              o);
      return collection;
    }

    /**
     * Runs queued builds and waits for background payload-index builds, until none is left (or the
     * armed crash point stopped the process).
     */
    void settle() {
      Await.until(
          Duration.ofSeconds(60),
          "background work finishes",
          () -> {
            while (io.haltedAt() == null && !collection.schemaBuilding()) {
              if (!builds.runQueued()) {
                return true;
              }
            }
            return io.haltedAt() != null;
          });
    }

    /** Closes after a crash: every shard separately, since their files are gone from under them. */
    void abandon() {
      for (Shard s : collection.shards()) {
        try {
          s.close();
        } catch (IOException | RuntimeException expected) {
          // the simulated power loss killed its files
        }
      }
    }
  }

  /** What a run acknowledged, and the operation in flight when it stopped. */
  static final class Outcome {
    final Map<Long, Version> acked = new HashMap<>();
    final Set<Long> universe = new TreeSet<>();
    PayloadSchema schema = PayloadSchema.EMPTY;
    Op inFlight;
    int completed;
  }

  /**
   * Runs {@code ops} in order, settling after each, until the end or the armed crash point halts
   * the process; an exception from an operation is a crash only if the simulator halted.
   */
  static Outcome play(Run run, List<Op> ops) throws InterruptedException {
    Outcome out = new Outcome();
    for (Op op : ops) {
      Map<Long, Version> effect = op.effect(out.acked);
      out.universe.addAll(effect.keySet());
      try {
        op.run(run.collection);
      } catch (RuntimeException | Error e) {
        if (run.io.haltedAt() == null) {
          throw e;
        }
        out.inFlight = op;
        return out;
      }
      effect.forEach(
          (id, v) -> {
            if (v == null) {
              out.acked.remove(id);
            } else {
              out.acked.put(id, v);
            }
          });
      out.schema = op.schema(out.schema);
      out.completed++;
      try {
        run.settle();
      } catch (Error e) {
        if (run.io.haltedAt() == null) {
          throw e;
        }
      }
      if (run.io.haltedAt() != null) {
        return out; // a background step died; the operation itself was acknowledged
      }
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // The tests

  private static List<Op> theWorkload() {
    return workload(TestSeeds.random("CrashPointRecoveryTest.workload"));
  }

  /** How seals index their segments. */
  enum Mode {
    /** No live graph: each seal builds its graph. */
    BUILDS,
    /** Live graphs: seals write the graph their live graph built. */
    LIVE_GRAPHS,
    /** Live graphs that take no point: seals are raw, and merges build their graphs. */
    RAW_SEALS
  }

  /** {@link #dryRun} by mode: the workload and its hit counts repeat. */
  private static final Map<Mode, Map<CrashPoint, Integer>> DRY_RUNS =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** How often each point is reached by one run of the workload (computed once per JVM). */
  private Map<CrashPoint, Integer> hits(Mode mode) throws Exception {
    Map<CrashPoint, Integer> hits = DRY_RUNS.get(mode);
    if (hits == null) {
      hits = dryRun(mode);
      DRY_RUNS.put(mode, hits);
    }
    return hits;
  }

  /** Runs the workload without a crash, checks the result, and counts the points reached. */
  private Map<CrashPoint, Integer> dryRun(Mode mode) throws Exception {
    Run run = new Run(new CrashSimulatingFileIO(), mode);
    Path dir = tmp.resolve("c");
    run.open();
    Outcome out;
    try {
      out = play(run, theWorkload());
      verify(run.collection, out, null);
    } finally {
      run.collection.close();
    }
    run.io.assertNoOpenChannels();
    Map<CrashPoint, Integer> hits = new EnumMap<>(CrashPoint.class);
    for (CrashPoint p : CrashPoint.values()) {
      hits.put(p, run.io.hits(p));
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      // a fresh directory for the next run of the same test
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
    return hits;
  }

  @Test
  void everyPointIsReachedByTheWorkload() throws Exception {
    for (Mode mode : Mode.values()) {
      Map<CrashPoint, Integer> hits = hits(mode);
      System.out.println("[flashvec] crash point hits (" + mode + "): " + hits);
      for (CrashPoint p : CrashPoint.values()) {
        if (!ELSEWHERE.contains(p)) {
          assertThat(hits.get(p)).as("hits of %s (%s)", p, mode).isPositive();
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = CrashPoint.class,
      mode = EnumSource.Mode.EXCLUDE,
      names = {
        "COLLECTION_CREATE_METADATA_WRITTEN",
        "COLLECTION_DELETE_METADATA_REMOVED",
        "COLLECTION_TUNING_WRITTEN"
      })
  void recoveryFromACrashAtThePointKeepsItsPromises(CrashPoint point) throws Exception {
    Random r = TestSeeds.random("CrashPointRecoveryTest." + point);
    Mode mode = Mode.values()[r.nextInt(Mode.values().length)];
    int reached = hits(mode).get(point);
    assertThat(reached).as("the workload reaches %s", point).isPositive();
    int crashes = Math.min(reached, TestSeeds.atLeast(r, 1));
    Set<Integer> hits = new TreeSet<>();
    while (hits.size() < crashes) {
      hits.add(1 + r.nextInt(reached));
    }
    for (int hit : hits) {
      crashAndRecover(point, hit, reached, mode, r);
    }
  }

  private void crashAndRecover(CrashPoint point, int hit, int reached, Mode mode, Random r)
      throws Exception {
    CrashSimulatingFileIO io = new CrashSimulatingFileIO();
    Run run = new Run(io, mode);
    io.armCrashPoint(point, hit); // counted from the open, as in the dry run
    Outcome out;
    try {
      run.open();
      out = play(run, theWorkload());
    } catch (CrashSimulatingFileIO.Halt e) {
      out = new Outcome(); // halted while creating the collection: nothing was acknowledged
    }
    assertThat(io.haltedAt())
        .as("the workload reached %s a %d-th time of %d", point, hit, reached)
        .isEqualTo(point);
    CrashSimulatingFileIO.CrashReport report = io.crash(r);
    if (run.collection != null) {
      run.abandon();
    }
    System.out.printf(
        Locale.ROOT,
        "[flashvec] crashed at %s hit %d/%d (%s) after %d operations, in flight: %s;" + " %s%n",
        point,
        hit,
        reached,
        mode,
        out.completed,
        out.inFlight,
        report);

    Run recovered = new Run(new CrashSimulatingFileIO(), mode);
    Collection c = recovered.open(); // the collection opens
    try {
      recovered.settle();
      verify(c, out, point);
      // It takes writes and builds segments again.
      List<Point> more = new ArrayList<>();
      for (int i = 0; i < SEAL + 5; i++) {
        more.add(new Point(PointId.of(10_000 + i), new float[] {i, 1, 2, 3}, null));
      }
      c.upsert(more, true);
      c.flush();
      recovered.settle();
      assertThat(c.get(PointId.of(10_000 + SEAL), false, true).vector())
          .containsExactly(SEAL, 1, 2, 3);
      for (Shard s : c.shards()) {
        assertThat(s.buildFailure()).as("builds after the recovery").isNull();
        assertThat(s.checkpointFailure()).as("checkpoints after the recovery").isNull();
      }
    } finally {
      c.close();
    }
    recovered.io.assertNoOpenChannels();
    try (Stream<Path> walk = Files.walk(tmp.resolve("c"))) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  /** Checks a (recovered) collection against what the run acknowledged; see the class comment. */
  private void verify(Collection c, Outcome out, CrashPoint crashedAt) throws IOException {
    // The payload schema: the acknowledged one, or the change in flight once it was committed.
    Set<PayloadSchema> schemas = new java.util.HashSet<>();
    schemas.add(out.schema);
    if (out.inFlight != null
        && !(out.inFlight.waitedSchemaChange() && BEFORE_SCHEMA_COMMIT.contains(crashedAt))) {
      schemas.add(out.inFlight.schema(out.schema));
    }
    assertThat(schemas)
        .as("payload schema after a crash at %s, in flight: %s", crashedAt, out.inFlight)
        .contains(c.payloadSchema());

    // Every id: its acknowledged state, or for the operation in flight its old or new one.
    Map<Long, Version> inFlight = out.inFlight == null ? Map.of() : out.inFlight.effect(out.acked);
    Set<Long> universe = new TreeSet<>(out.universe);
    universe.addAll(inFlight.keySet());
    int live = 0;
    Map<String, Integer> colors = new HashMap<>();
    for (long id : universe) {
      Record got = c.get(PointId.of(id), true, true);
      Version acked = out.acked.get(id);
      boolean ok = matches(got, acked);
      if (!ok && inFlight.containsKey(id)) {
        ok = matches(got, inFlight.get(id));
      }
      assertThat(ok)
          .as(
              "point %d after a crash at %s: got %s, acknowledged %s, in flight %s",
              id,
              crashedAt,
              describe(got),
              describe(acked),
              inFlight.containsKey(id) ? describe(inFlight.get(id)) : "-")
          .isTrue();
      if (got != null) {
        live++;
        String color = new String(got.payload(), StandardCharsets.UTF_8).substring(10, 12);
        colors.merge(color, 1, Integer::sum);
      }
    }
    assertThat(c.count()).as("points after a crash at %s", crashedAt).isEqualTo(live);
    assertThat(c.scroll(ScrollRequest.of(null, 100_000, false, false)).points())
        .as("no point beyond the ones written")
        .hasSize(live);

    // Filters answer from the payload indexes in force as from the payloads.
    for (int k = 0; k < 3; k++) {
      Filter f =
          FilterParser.parse(
              M.readTree("{\"must\":[{\"key\":\"color\",\"match\":{\"value\":\"c" + k + "\"}}]}"),
              "filter");
      assertThat(c.count(f))
          .as("points with color c%d", k)
          .isEqualTo((long) colors.getOrDefault("c" + k, 0));
    }

    // Nothing of an interrupted step is left behind.
    String current = c.payloadSchema().isEmpty() ? null : "payload-" + c.payloadSchema().hash();
    List<String> leftovers;
    try (Stream<Path> walk = Files.walk(c.directory())) {
      leftovers =
          walk.map(p -> c.directory().relativize(p).toString())
              .filter(
                  p -> {
                    String name = Path.of(p).getFileName().toString();
                    return name.endsWith(".tmp")
                        || (name.startsWith("payload-")
                            && !name.equals(current)
                            && !name.equals(PayloadSchema.FILE));
                  })
              .toList();
    }
    assertThat(leftovers).as("leftovers after a crash at %s", crashedAt).isEmpty();
  }

  private static boolean matches(Record got, Version v) {
    if (got == null || v == null) {
      return got == null && v == null;
    }
    return java.util.Arrays.equals(got.vector(), v.vector())
        && v.payload().equals(new String(got.payload(), StandardCharsets.UTF_8));
  }

  private static String describe(Record r) {
    return r == null
        ? "deleted"
        : java.util.Arrays.toString(r.vector())
            + " "
            + new String(r.payload(), StandardCharsets.UTF_8);
  }

  private static String describe(Version v) {
    return v == null ? "deleted" : java.util.Arrays.toString(v.vector()) + " " + v.payload();
  }
}
