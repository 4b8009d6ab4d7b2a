package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Qdrant's {@code GET /collections/{name}/optimizations} against a real server whose segments seal
 * every 500 points: a fresh collection lists only its growing segment, idle; uploads that seal
 * segments end in completed index builds whose segments are idle and hold every point; during a
 * bulk load ({@code indexing_threshold: 0}) the raw segments are queued for the merge that builds
 * them, which completes once the load ends; bad {@code with} and {@code completed_limit} values are
 * a 400 naming them, an unknown collection a 404.
 */
@ExtendWith(TestSeeds.Reporter.class)
class OptimizationsIT {

  private static final int DIM = 8;
  private static final Pattern UUID =
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  private static final String ALL = "?with=queued,completed,idle_segments";

  @TempDir static Path tmp;
  static ServerProcess server;
  static Http http;

  @BeforeAll
  static void start() {
    server =
        new ServerProcess(
                tmp.resolve("data"),
                tmp.resolve("server.log"),
                "--flashvec.segment.seal-threshold-points=500")
            .start();
    http = new Http(server.url());
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static void create(String name, String extra) {
    assertThat(
            http.put(
                    "/collections/" + name,
                    "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"}" + extra + "}")
                .status())
        .isEqualTo(200);
  }

  private static void upload(String name, Random rnd, int from, int to) {
    ObjectNode body = Http.JSON.createObjectNode();
    ArrayNode pts = body.putArray("points");
    for (int i = from; i < to; i++) {
      ObjectNode p = pts.addObject();
      p.put("id", i);
      ArrayNode v = p.putArray("vector");
      for (int d = 0; d < DIM; d++) {
        v.add(rnd.nextGaussian());
      }
    }
    assertThat(http.put("/collections/" + name + "/points?wait=true", body.toString()).status())
        .isEqualTo(200);
  }

  private static JsonNode optimizations(String name, String query) {
    Http.Response r = http.get("/collections/" + name + "/optimizations" + query);
    assertThat(r.status()).as("%s", r.raw()).isEqualTo(200);
    return r.result();
  }

  private static long idlePoints(JsonNode result) {
    long n = 0;
    for (JsonNode s : result.get("idle_segments")) {
      assertThat(s.get("uuid").asString()).matches(UUID);
      n += s.get("points_count").asLong();
    }
    return n;
  }

  /** Whether nothing runs or waits, and the completed optimizations number at least {@code n}. */
  private static boolean settled(JsonNode r, int n) {
    return r.get("running").isEmpty()
        && r.get("queued").isEmpty()
        && r.get("completed").size() >= n;
  }

  @Test
  void aFreshCollectionHasOnlyIdleSegmentsAndOptionalPartsOnlyWhenAsked() {
    create("fresh", "");
    upload("fresh", TestSeeds.random("OptimizationsIT.fresh"), 0, 20);

    JsonNode bare = optimizations("fresh", "");
    assertThat(bare.get("running")).isEmpty();
    assertThat(bare.has("queued") || bare.has("completed") || bare.has("idle_segments")).isFalse();
    assertThat(bare.at("/summary/queued_optimizations").asInt()).isZero();
    assertThat(bare.at("/summary/idle_segments").asInt()).isPositive();

    JsonNode all = optimizations("fresh", "?with=queued%20,%20completed%20,idle_segments");
    assertThat(all.get("queued")).isEmpty();
    assertThat(all.get("completed")).isEmpty();
    assertThat(all.get("idle_segments")).hasSize(all.at("/summary/idle_segments").asInt());
    assertThat(idlePoints(all)).as("the growing segments hold the points").isEqualTo(20);
  }

  @Test
  void sealedSegmentsShowCompletedBuildsAndEndIdleWithEveryPoint() {
    create("sealed", "");
    Random rnd = TestSeeds.random("OptimizationsIT.sealed");
    // a write seals the growing segment once it holds 500 points: two segments of 500 are sealed
    upload("sealed", rnd, 0, 500);
    upload("sealed", rnd, 500, 1000);
    upload("sealed", rnd, 1000, 1300);
    JsonNode[] last = new JsonNode[1];
    Await.until(
        Duration.ofSeconds(120),
        "the sealed segments built",
        () -> String.valueOf(last[0]),
        () -> settled(last[0] = optimizations("sealed", ALL), 2));
    JsonNode r = last[0];
    Set<String> idle = new HashSet<>();
    r.get("idle_segments").forEach(s -> idle.add(s.get("uuid").asString()));
    assertThat(idlePoints(r)).as("%s", r).isEqualTo(1300);
    assertThat(r.at("/summary/queued_points").asLong()).isZero();

    int builds = 0;
    for (JsonNode o : r.get("completed")) {
      assertThat(o.get("uuid").asString()).matches(UUID);
      assertThat(o.get("status").asString()).as("%s", o).isEqualTo("done");
      assertThat(o.at("/progress/finished_at").asString()).isNotEmpty();
      assertThat(o.at("/progress/done").asLong()).isEqualTo(o.at("/progress/total").asLong());
      if (o.get("optimizer").asString().equals("indexing")) {
        builds++;
        assertThat(o.at("/segments/0/points_count").asLong()).isEqualTo(500);
      }
    }
    assertThat(builds).as("one build per sealed segment: %s", r).isEqualTo(2);
    // the newest completed optimization made a segment that is still there
    assertThat(idle).contains(r.at("/completed/0/uuid").asString());

    JsonNode one = optimizations("sealed", "?with=completed&completed_limit=1");
    assertThat(one.get("completed")).hasSize(1);
    assertThat(one.at("/completed/0/uuid")).isEqualTo(r.at("/completed/0/uuid"));
  }

  @Test
  void aBulkLoadsRawSegmentsAreQueuedForTheMergeThatBuildsThem() {
    create("bulk", ",\"optimizers_config\":{\"indexing_threshold\":0}");
    Random rnd = TestSeeds.random("OptimizationsIT.bulk");
    upload("bulk", rnd, 0, 500);
    upload("bulk", rnd, 500, 1000);
    upload("bulk", rnd, 1000, 1200); // seals the second 500 raw
    JsonNode[] last = new JsonNode[1];
    Await.until(
        Duration.ofSeconds(60),
        "both raw segments sealed and queued",
        () -> String.valueOf(last[0]),
        () -> {
          last[0] = optimizations("bulk", ALL);
          return last[0].get("running").isEmpty()
              && last[0].at("/summary/queued_points").asLong() == 1000;
        });
    JsonNode queued = last[0];
    assertThat(queued.get("queued")).as("%s", queued).hasSize(1);
    assertThat(queued.at("/queued/0/optimizer").asString()).isEqualTo("merge");
    assertThat(queued.at("/queued/0/segments")).hasSize(2);
    assertThat(queued.at("/summary/queued_segments").asInt()).isEqualTo(2);
    assertThat(idlePoints(queued)).as("the growing segment").isEqualTo(200);

    // the load ends: the merge runs and completes
    assertThat(
            http.send(
                    "PATCH",
                    "/collections/bulk",
                    "{\"optimizers_config\":{\"indexing_threshold\":20000}}")
                .status())
        .isEqualTo(200);
    Await.until(
        Duration.ofSeconds(120),
        "the merge completed",
        () -> String.valueOf(last[0]),
        () -> {
          last[0] = optimizations("bulk", ALL);
          if (!settled(last[0], 1)) {
            return false;
          }
          for (JsonNode o : last[0].get("completed")) {
            if (o.get("optimizer").asString().equals("merge")) {
              return true;
            }
          }
          return false;
        });
    assertThat(idlePoints(last[0])).isEqualTo(1200);
    assertThat(last[0].at("/completed/0/status").asString()).isEqualTo("done");
  }

  @Test
  void badParametersAreA400NamingThemAndAnUnknownCollectionA404() {
    create("params", "");
    Http.Response bad = http.get("/collections/params/optimizations?with=queued,bogus");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.error()).contains("`bogus`");
    Http.Response limit = http.get("/collections/params/optimizations?completed_limit=-3");
    assertThat(limit.status()).isEqualTo(400);
    assertThat(limit.error()).contains("`-3`", "completed_limit");
    Http.Response missing = http.get("/collections/nope/optimizations");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.error()).contains("nope");
  }
}
