package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.SuppressForbidden;
import io.flashvec.testing.TestSeeds;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes with {@code wait=true} from several clients, SIGKILLs the server at a random moment,
 * restarts it on the same data directory and checks that every acknowledged point is back with its
 * exact vector and payload. Several seeds; the master seed is printed.
 */
class CrashRecoveryIT {

  private static final int DIM = 16;
  private static final int WRITERS = 4;

  @TempDir Path tmp;

  /** What a writer got acknowledged: id -> (vector, payload). */
  private record Acked(float[] vector, String payload) {}

  @Test
  void everyAcknowledgedWriteSurvivesSigkill() throws Exception {
    TestSeeds.rounds("CrashRecoveryIT", 4, this::runRound);
  }

  @SuppressForbidden("the server is killed at a random moment of the writes")
  private void runRound(int round, long seed) throws Exception {
    Random rnd = new Random(seed);
    Path data = tmp.resolve("data-" + round);
    Path log = tmp.resolve("server-" + round + ".log");
    Map<Long, Acked> acked = new ConcurrentHashMap<>();
    int shards = 1 + rnd.nextInt(3);
    // Odd rounds seal small segments so that index builds, checkpoints and WAL truncation run
    // (and get killed) while the writers write.
    String seal = "--flashvec.segment.seal-threshold-points=" + (round % 2 == 1 ? 300 : 100000);
    try (ServerProcess server = new ServerProcess(data, log, seal).start()) {
      Http http = new Http(server.url());
      assertThat(
              http.put(
                      "/collections/crash",
                      "{\"vectors\":{\"size\":"
                          + DIM
                          + ",\"distance\":\"Euclid\"},\"shard_number\":"
                          + shards
                          + "}")
                  .status())
          .isEqualTo(200);
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger failures = new AtomicInteger();
      CountDownLatch started = new CountDownLatch(WRITERS);
      List<Thread> writers = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        long writerSeed = rnd.nextLong();
        int writer = w;
        writers.add(
            Thread.ofPlatform()
                .name("crash-writer-" + w)
                .start(
                    () ->
                        write(
                            http, writer, new Random(writerSeed), acked, stop, failures, started)));
      }
      started.await(10, TimeUnit.SECONDS);
      Thread.sleep(300 + rnd.nextInt(1500));
      server.kill();
      stop.set(true);
      for (Thread t : writers) {
        t.join(TimeUnit.SECONDS.toMillis(70));
      }
      System.out.println(
          "[flashvec] round "
              + round
              + ": killed pid "
              + server.pid()
              + " with "
              + acked.size()
              + " acknowledged points, "
              + shards
              + " shard(s), "
              + seal
              + ", indexed segments before the kill: "
              + (java.nio.file.Files.readString(log).split("segment indexed", -1).length - 1));
    }
    assertThat(acked).as("the writers got something acknowledged before the kill").isNotEmpty();

    try (ServerProcess server =
        new ServerProcess(data, tmp.resolve("server-" + round + "-restart.log")).start()) {
      Http http = new Http(server.url());
      long count =
          http.post("/collections/crash/points/count", "{}").result().get("count").asLong();
      assertThat(count).as("count after restart").isGreaterThanOrEqualTo(acked.size());
      List<Long> ids = new ArrayList<>(acked.keySet());
      for (int from = 0; from < ids.size(); from += 500) {
        List<Long> chunk = ids.subList(from, Math.min(ids.size(), from + 500));
        ObjectNode req = Http.JSON.createObjectNode();
        ArrayNode arr = req.putArray("ids");
        chunk.forEach(arr::add);
        req.put("with_payload", true);
        req.put("with_vector", true);
        Http.Response r = http.post("/collections/crash/points", req.toString());
        assertThat(r.status()).isEqualTo(200);
        Map<Long, JsonNode> got = new java.util.HashMap<>();
        for (JsonNode p : r.result()) {
          got.put(p.get("id").asLong(), p);
        }
        for (Long id : chunk) {
          JsonNode p = got.get(id);
          assertThat(p)
              .as("acknowledged point %d is back after SIGKILL (log: %s)", id, server.logTail())
              .isNotNull();
          Acked a = acked.get(id);
          assertThat(p.get("payload").toString()).as("payload of %d", id).isEqualTo(a.payload());
          float[] v = new float[DIM];
          for (int i = 0; i < DIM; i++) {
            v[i] = p.get("vector").get(i).floatValue();
          }
          assertThat(v).as("vector of %d", id).containsExactly(a.vector());
        }
      }
      // A kill in the middle of a record leaves a torn tail (never acknowledged): recovery reports
      // it and discards it instead of the plain "WAL recovered".
      assertThat(server.logTail())
          .containsAnyOf("WAL recovered", "WAL recovery stopped at a torn or corrupt record")
          .doesNotContain("ERROR");
    }
  }

  private static void write(
      Http http,
      int writer,
      Random rnd,
      Map<Long, Acked> acked,
      AtomicBoolean stop,
      AtomicInteger failures,
      CountDownLatch started) {
    long next = writer * 1_000_000_000L;
    boolean first = true;
    while (!stop.get()) {
      int n = 1 + rnd.nextInt(20);
      ObjectNode body = Http.JSON.createObjectNode();
      ArrayNode pts = body.putArray("points");
      Map<Long, Acked> batch = new java.util.HashMap<>();
      for (int i = 0; i < n; i++) {
        long id = next++;
        float[] v = new float[DIM];
        ObjectNode p = pts.addObject();
        p.put("id", id);
        ArrayNode va = p.putArray("vector");
        for (int d = 0; d < DIM; d++) {
          v[d] = (float) rnd.nextGaussian();
          va.add(v[d]);
        }
        ObjectNode payload = p.putObject("payload");
        payload.put("writer", writer);
        payload.put("id", id);
        payload.put("text", Long.toString(rnd.nextLong(), 36));
        batch.put(id, new Acked(v, payload.toString()));
      }
      if (first) {
        started.countDown();
        first = false;
      }
      try {
        Http.Response r = http.put("/collections/crash/points?wait=true", body.toString());
        if (r.status() == 200) {
          acked.putAll(batch);
        } else {
          failures.incrementAndGet();
        }
      } catch (UncheckedIOException e) {
        return; // the server is gone: this batch was never acknowledged
      }
    }
  }
}
