package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.HaltingFileIO;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The random SIGKILL loop: one data directory, a real server started, fed a seeded random schedule
 * of writes and maintenance, killed, restarted and checked, again and again.
 *
 * <p>Each iteration starts the server on the same data directory and first checks the previous
 * iteration's promises: every acknowledged upsert and payload update is there with its exact vector
 * and payload, every acknowledged delete stays deleted, and {@code payload_schema} holds every
 * acknowledged index and no acknowledged drop (the operation in flight at the kill may show either
 * way, except an index change that died before its commit, which must not show); filtered counts
 * through the payload indexes agree with the payloads. Then one client runs a seeded schedule of
 * upserts (new and overwriting ids), deletes, {@code set_payload}s, flushes (seal and build),
 * compactions, and payload-index creates and drops with and without {@code wait}, until the server
 * is SIGKILLed at a seeded moment, or, in every other iteration, until it halts itself at a named
 * crash point of a durable step ({@code flashvec.testing.crash-point}: first the points of {@link
 * #FIRST_ARMED}, each after a schema change that waits, then seeded ones at a seeded hit; a point
 * not reached in time gets the SIGKILL instead). The last start waits for the background work to
 * finish and checks that no half-written file ({@code *.tmp}) is left.
 *
 * <p>Bounded and reproducible: {@code -Dflashvec.crashloop.iterations=N} (default 8, about two
 * minutes here), seeded by {@code -Dtests.seed=<hex>} (printed), with each iteration's seed printed
 * too. Kill times are seeded; what a kill interrupts depends on the machine's timing.
 */
class CrashLoopIT {

  private static final int DIM = 8;
  private static final String C = "/collections/loop";

  /** Payload index fields and their types. */
  private static final Map<String, String> FIELDS =
      Map.of("color", "keyword", "n", "integer", "tag", "keyword");

  /** Points the loop never arms: they belong to collection creation and deletion. */
  private static final Set<CrashPoint> NOT_ARMED =
      EnumSet.of(
          CrashPoint.COLLECTION_CREATE_METADATA_WRITTEN,
          CrashPoint.COLLECTION_DELETE_METADATA_REMOVED,
          CrashPoint.COLLECTION_TUNING_WRITTEN);

  /**
   * The points of the first armed iterations, before seeded random ones: a payload-index build and
   * a payload-schema change killed before their commit once left a collection unopenable and an
   * unacknowledged index in {@code payload_schema}.
   */
  private static final List<CrashPoint> FIRST_ARMED =
      List.of(CrashPoint.PAYLOAD_INDEX_COMMITTED, CrashPoint.PAYLOAD_SCHEMA_PREPARED);

  @TempDir Path tmp;

  /** A point as acknowledged. */
  private record Version(float[] vector, JsonNode payload) {}

  /** What the client was told, and what was in flight when the server died. */
  private static final class Model {
    final Map<Long, Version> acked = new HashMap<>();
    final Set<Long> universe = new TreeSet<>();
    final Map<String, String> schema = new TreeMap<>();
    long nextId = 1;

    /** Ids the operation in flight touched, with their state had it completed (null: deleted). */
    Map<Long, Version> inFlightPoints = Map.of();

    /** The schema had the schema change in flight completed, or null. */
    Map<String, String> inFlightSchema;

    /** Whether the schema change in flight waited for its indexes. */
    boolean inFlightSchemaWaited;

    void clearInFlight() {
      inFlightPoints = Map.of();
      inFlightSchema = null;
      inFlightSchemaWaited = false;
    }
  }

  @Test
  void everyAcknowledgedChangeSurvivesRandomKillsAndCrashPoints() throws Exception {
    int iterations = Integer.getInteger("flashvec.crashloop.iterations", 8);
    Random master = new Random(TestSeeds.seed("CrashLoopIT"));
    Path data = tmp.resolve("data");
    Model model = new Model();
    CrashPoint haltedAt = null;
    ScheduledExecutorService killer =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("crash-loop-killer").daemon(true).factory());
    try {
      for (int it = 0; it < iterations; it++) {
        long seed = master.nextLong();
        Random r = new Random(seed);
        List<String> args = new ArrayList<>(serverArgs());
        CrashPoint armed = null;
        int hit = 0;
        if (it % 2 == 1) {
          int a = it / 2;
          if (a < FIRST_ARMED.size()) {
            armed = FIRST_ARMED.get(a);
            hit = 1;
          } else {
            List<CrashPoint> points = new ArrayList<>(EnumSet.allOf(CrashPoint.class));
            points.removeAll(NOT_ARMED);
            armed = points.get(r.nextInt(points.size()));
            hit = 1 + r.nextInt(3);
          }
          args.add(
              "--flashvec.testing.crash-point="
                  + armed.name().toLowerCase(Locale.ROOT).replace('_', '-'));
          args.add("--flashvec.testing.crash-point-hit=" + hit);
        }
        System.out.printf(
            Locale.ROOT,
            "[flashvec] CrashLoopIT iteration %d seed=%s%s%n",
            it,
            Long.toHexString(seed),
            armed == null ? "" : " armed " + armed + " hit " + hit);
        Path log = tmp.resolve("server-" + it + ".log");
        ServerProcess server = new ServerProcess(data, log, args.toArray(String[]::new));
        try {
          try {
            server.start();
          } catch (IllegalStateException e) {
            if (armed != null && server.exitValue() == HaltingFileIO.EXIT_STATUS) {
              // Halted at its crash point while recovering: a crash during recovery. The
              // previous iteration's promises are checked at the next start.
              System.out.println("[flashvec]   halted at " + armed + " during recovery");
              continue;
            }
            throw e;
          }
          Http http = new Http(server.url());
          if (it == 0) {
            assertThat(
                    http.put(
                            C,
                            "{\"vectors\":{\"size\":"
                                + DIM
                                + ",\"distance\":\"Euclid\"},\"shard_number\":2}")
                        .status())
                .isEqualTo(200);
          }
          try {
            verify(http, model, haltedAt, server);
          } catch (UncheckedIOException e) {
            if (armed != null && server.exitValue() == HaltingFileIO.EXIT_STATUS) {
              // Halted at its point in the work the recovery left (a segment build, say) while
              // being checked; what it checked so far held, the rest is checked at the next start.
              System.out.println("[flashvec]   halted at " + armed + " after the recovery");
              continue;
            }
            throw e;
          }
          haltedAt = null;
          long killAfterMillis = armed == null ? 500 + r.nextInt(2500) : 8000;
          var kill = killer.schedule(server::kill, killAfterMillis, TimeUnit.MILLISECONDS);
          int ops = 0;
          try {
            if (armed != null && armed.name().startsWith("PAYLOAD_")) {
              waitedSchemaChange(http, model); // so that a payload-index point is in one
            }
            ops = run(http, model, r);
          } catch (UncheckedIOException e) {
            // the server died in that schema change
          }
          kill.cancel(false);
          server.kill(); // a no-op once it is gone
          boolean halted = armed != null && server.exitValue() == HaltingFileIO.EXIT_STATUS;
          haltedAt = halted ? armed : null;
          System.out.printf(
              Locale.ROOT,
              "[flashvec]   %d operations, %s; %d points acknowledged, schema %s, in flight %s%s%n",
              ops,
              halted ? "halted at " + armed : "SIGKILLed after " + killAfterMillis + " ms",
              model.acked.size(),
              model.schema,
              model.inFlightPoints.size() + " points",
              model.inFlightSchema == null ? "" : " and schema " + model.inFlightSchema);
        } finally {
          server.kill();
        }
      }
      // The last start: check, then let background work finish and look for leftovers.
      try (ServerProcess server =
          new ServerProcess(
                  data, tmp.resolve("server-last.log"), serverArgs().toArray(String[]::new))
              .start()) {
        Http http = new Http(server.url());
        verify(http, model, haltedAt, server);
        String[] status = {""};
        List<?>[] leftovers = {List.of()};
        Await.until(
            Duration.ofSeconds(120),
            "the collection green and no leftovers of interrupted steps",
            () -> "status=" + status[0] + ", leftovers=" + leftovers[0],
            () -> {
              status[0] = http.get(C).result().path("status").asString();
              try (Stream<Path> walk = Files.walk(data)) {
                leftovers[0] = walk.map(Path::toString).filter(p -> p.endsWith(".tmp")).toList();
              } catch (UncheckedIOException e) {
                leftovers[0] = List.of("(a file vanished during the walk: " + e.getMessage() + ")");
              }
              return status[0].equals("green") && leftovers[0].isEmpty();
            });
        assertThat(server.logTail()).doesNotContain("ERROR");
      }
    } finally {
      killer.shutdownNow();
    }
  }

  private static List<String> serverArgs() {
    return List.of(
        "--flashvec.segment.seal-threshold-points=150",
        "--flashvec.merge.segments-per-tier=2",
        "--flashvec.wal.segment-bytes=64KB");
  }

  // ---------------------------------------------------------------------------------------------

  /** Runs random operations until the server goes away; returns how many were acknowledged. */
  private static int run(Http http, Model m, Random r) {
    int done = 0;
    try {
      while (true) {
        int op = r.nextInt(100);
        if (op < 40) {
          upsert(http, m, r);
        } else if (op < 55) {
          delete(http, m, r);
        } else if (op < 65) {
          setPayload(http, m, r);
        } else if (op < 73) {
          check(http.post(C + "/flush", ""));
        } else if (op < 80) {
          check(http.post(C + "/compact", ""));
        } else if (op < 92) {
          createIndex(http, m, r);
        } else {
          dropIndex(http, m, r);
        }
        done++;
      }
    } catch (UncheckedIOException e) {
      return done; // the server is gone: the operation in flight was never acknowledged
    }
  }

  private static void check(Http.Response r) {
    assertThat(r.status()).as("response %s", r.raw()).isEqualTo(200);
  }

  private static void upsert(Http http, Model m, Random r) {
    int n = 1 + r.nextInt(30);
    ObjectNode body = Http.JSON.createObjectNode();
    ArrayNode pts = body.putArray("points");
    Map<Long, Version> batch = new HashMap<>();
    while (batch.size() < n) {
      long id = m.nextId > 1 && r.nextInt(4) == 0 ? 1 + r.nextLong(m.nextId - 1) : m.nextId++;
      if (batch.containsKey(id)) {
        continue;
      }
      float[] v = new float[DIM];
      ObjectNode p = pts.addObject();
      p.put("id", id);
      ArrayNode va = p.putArray("vector");
      for (int d = 0; d < DIM; d++) {
        v[d] = (float) r.nextGaussian();
        va.add(v[d]);
      }
      ObjectNode payload = p.putObject("payload");
      payload.put("color", "c" + r.nextInt(4));
      payload.put("n", r.nextInt(1000));
      if (r.nextBoolean()) {
        payload.put("tag", "t" + r.nextInt(3));
      }
      batch.put(id, new Version(v, payload));
    }
    write(m, batch, () -> http.put(C + "/points?wait=true", body.toString()));
  }

  private static void delete(Http http, Model m, Random r) {
    if (m.nextId < 2) {
      return;
    }
    Map<Long, Version> batch = new HashMap<>();
    for (int i = 0, n = 1 + r.nextInt(12); i < n; i++) {
      batch.put(1 + r.nextLong(m.nextId - 1), null);
    }
    ObjectNode body = Http.JSON.createObjectNode();
    ArrayNode ids = body.putArray("points");
    batch.keySet().forEach(ids::add);
    write(m, batch, () -> http.post(C + "/points/delete?wait=true", body.toString()));
  }

  /** Qdrant's set_payload: merges keys into existing points' payloads; absent ids are skipped. */
  private static void setPayload(Http http, Model m, Random r) {
    if (m.nextId < 2) {
      return;
    }
    ObjectNode set = Http.JSON.createObjectNode();
    set.put("n", r.nextInt(1000));
    if (r.nextBoolean()) {
      set.put("tag", "t" + r.nextInt(3));
    }
    ObjectNode body = Http.JSON.createObjectNode();
    body.set("payload", set);
    ArrayNode ids = body.putArray("points");
    Map<Long, Version> batch = new HashMap<>();
    for (int i = 0, n = 1 + r.nextInt(10); i < n; i++) {
      long id = 1 + r.nextLong(m.nextId - 1);
      Version v = m.acked.get(id);
      if (v != null && !batch.containsKey(id)) {
        ObjectNode merged = ((ObjectNode) v.payload()).deepCopy();
        merged.setAll(set);
        batch.put(id, new Version(v.vector(), merged));
        ids.add(id);
      }
    }
    if (batch.isEmpty()) {
      return;
    }
    write(m, batch, () -> http.post(C + "/points/payload?wait=true", body.toString()));
  }

  /** Sends a point write; its effect counts as acknowledged only once it answered 200. */
  private static void write(
      Model m, Map<Long, Version> batch, java.util.function.Supplier<Http.Response> send) {
    m.universe.addAll(batch.keySet());
    m.inFlightPoints = batch;
    Http.Response resp = send.get();
    check(resp);
    batch.forEach(
        (id, v) -> {
          if (v == null) {
            m.acked.remove(id);
          } else {
            m.acked.put(id, v);
          }
        });
    m.inFlightPoints = Map.of();
  }

  private static void createIndex(Http http, Model m, Random r) {
    List<String> keys = new ArrayList<>(new TreeSet<>(FIELDS.keySet()));
    String key = keys.get(r.nextInt(keys.size()));
    boolean wait = r.nextBoolean();
    Map<String, String> next = new TreeMap<>(m.schema);
    next.put(key, FIELDS.get(key));
    schemaChange(
        m,
        next,
        wait,
        () ->
            http.put(
                C + "/index?wait=" + wait,
                "{\"field_name\":\"" + key + "\",\"field_schema\":\"" + FIELDS.get(key) + "\"}"));
  }

  /** Creates an index the schema lacks (or drops one if it has all) and waits for it. */
  private static void waitedSchemaChange(Http http, Model m) {
    for (String key : new TreeSet<>(FIELDS.keySet())) {
      if (!m.schema.containsKey(key)) {
        Map<String, String> next = new TreeMap<>(m.schema);
        next.put(key, FIELDS.get(key));
        schemaChange(
            m,
            next,
            true,
            () ->
                http.put(
                    C + "/index?wait=true",
                    "{\"field_name\":\""
                        + key
                        + "\",\"field_schema\":\""
                        + FIELDS.get(key)
                        + "\"}"));
        return;
      }
    }
    String key = m.schema.keySet().iterator().next();
    Map<String, String> next = new TreeMap<>(m.schema);
    next.remove(key);
    schemaChange(m, next, true, () -> http.delete(C + "/index/" + key + "?wait=true"));
  }

  private static void dropIndex(Http http, Model m, Random r) {
    if (m.schema.isEmpty()) {
      return;
    }
    List<String> keys = new ArrayList<>(m.schema.keySet());
    String key = keys.get(r.nextInt(keys.size()));
    boolean wait = r.nextBoolean();
    Map<String, String> next = new TreeMap<>(m.schema);
    next.remove(key);
    schemaChange(m, next, wait, () -> http.delete(C + "/index/" + key + "?wait=" + wait));
  }

  private static void schemaChange(
      Model m,
      Map<String, String> next,
      boolean wait,
      java.util.function.Supplier<Http.Response> send) {
    m.inFlightSchema = next;
    m.inFlightSchemaWaited = wait;
    check(send.get());
    m.schema.clear();
    m.schema.putAll(next);
    m.inFlightSchema = null;
  }

  // ---------------------------------------------------------------------------------------------

  /** Checks the restarted server against what the client was told (see the class comment). */
  private static void verify(Http http, Model m, CrashPoint haltedAt, ServerProcess server) {
    String log = server.logTail();
    JsonNode info = http.get(C).result();
    assertThat(info.path("status").asString()).as("status: %s", info).isNotEqualTo("red");
    Map<String, String> schema = new TreeMap<>();
    info.path("payload_schema")
        .properties()
        .forEach(e -> schema.put(e.getKey(), e.getValue().path("data_type").asString()));
    List<Map<String, String>> allowed = new ArrayList<>();
    allowed.add(m.schema);
    boolean diedBeforeCommit =
        m.inFlightSchemaWaited && haltedAt == CrashPoint.PAYLOAD_SCHEMA_PREPARED;
    if (m.inFlightSchema != null && !diedBeforeCommit) {
      allowed.add(m.inFlightSchema);
    }
    assertThat(allowed)
        .as("payload_schema after a crash (halted at %s; log: %s)", haltedAt, log)
        .contains(schema);
    m.schema.clear();
    m.schema.putAll(schema); // the change in flight happened or not: from now on, this is it

    Set<Long> ids = new TreeSet<>(m.universe);
    Map<String, Long> colors = new TreeMap<>();
    long live = 0;
    List<Long> all = new ArrayList<>(ids);
    for (int from = 0; from < all.size(); from += 500) {
      List<Long> chunk = all.subList(from, Math.min(all.size(), from + 500));
      ObjectNode req = Http.JSON.createObjectNode();
      ArrayNode arr = req.putArray("ids");
      chunk.forEach(arr::add);
      req.put("with_payload", true);
      req.put("with_vector", true);
      Http.Response resp = http.post(C + "/points", req.toString());
      check(resp);
      Map<Long, JsonNode> got = new HashMap<>();
      for (JsonNode p : resp.result()) {
        got.put(p.get("id").asLong(), p);
      }
      for (long id : chunk) {
        JsonNode p = got.get(id);
        Version acked = m.acked.get(id);
        boolean ok = matches(p, acked);
        if (!ok && m.inFlightPoints.containsKey(id)) {
          ok = matches(p, m.inFlightPoints.get(id));
        }
        assertThat(ok)
            .as(
                "point %d after a crash (halted at %s): got %s, acknowledged %s, in flight %s",
                id,
                haltedAt,
                p,
                describe(acked),
                m.inFlightPoints.containsKey(id) ? describe(m.inFlightPoints.get(id)) : "-")
            .isTrue();
        if (p != null) {
          live++;
          colors.merge(p.at("/payload/color").asString(), 1L, Long::sum);
        }
        if (m.inFlightPoints.containsKey(id)) {
          // as for the schema: the write in flight is now known to have happened or not
          if (p == null) {
            m.acked.remove(id);
          } else {
            m.acked.put(id, matches(p, acked) ? acked : m.inFlightPoints.get(id));
          }
        }
      }
    }
    m.clearInFlight();
    assertThat(http.post(C + "/points/count", "{}").result().get("count").asLong())
        .as("points after a crash")
        .isEqualTo(live);
    for (int k = 0; k < 4; k++) {
      String filter =
          "{\"filter\":{\"must\":[{\"key\":\"color\",\"match\":{\"value\":\"c" + k + "\"}}]}}";
      assertThat(http.post(C + "/points/count", filter).result().get("count").asLong())
          .as("points of color c%d (payload index: %s)", k, schema.containsKey("color"))
          .isEqualTo(colors.getOrDefault("c" + k, 0L));
    }
  }

  private static boolean matches(JsonNode got, Version v) {
    if (got == null || v == null) {
      return got == null && v == null;
    }
    float[] vec = new float[DIM];
    for (int i = 0; i < DIM; i++) {
      vec[i] = got.get("vector").get(i).floatValue();
    }
    return java.util.Arrays.equals(vec, v.vector()) && v.payload().equals(got.get("payload"));
  }

  private static String describe(Version v) {
    return v == null ? "deleted" : java.util.Arrays.toString(v.vector()) + " " + v.payload();
  }
}
