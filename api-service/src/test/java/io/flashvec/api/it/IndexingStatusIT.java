package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A collection's status tells the truth about its indexing backlog: right after a bulk upload that
 * the live graph has not caught up with it is {@code yellow} with {@code indexed_vectors_count}
 * below {@code points_count}, and it turns {@code green} once every point is in the graph, without
 * another request to wake the indexer (nothing here searches).
 */
class IndexingStatusIT {

  private static final int DIM = 16;

  /**
   * Below the seal threshold the growing slice gives: 15% of the test server's 512 MiB heap over
   * two growing segments of 876 bytes a point (16-d, R = 64) is about 46k points.
   */
  private static final int POINTS = 40_000;

  private static final int BATCH = 5_000;

  @TempDir Path tmp;

  @Test
  void aCollectionCatchingUpIsYellowThenGreenWithEveryPointIndexed() throws Exception {
    Random rnd = new Random(TestSeeds.seed("IndexingStatusIT"));
    // the optimising compiler: the wait below is on the live graph's inserts, not on C1's code
    try (ServerProcess server =
        new ServerProcess(tmp.resolve("data"), tmp.resolve("a.log")).withOptimizingCompiler()) {
      server.start();
      Http http = new Http(server.url());
      assertThat(
              http.put(
                      "/collections/load",
                      "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"}}")
                  .status())
          .isEqualTo(200);
      for (int from = 0; from < POINTS; from += BATCH) {
        ObjectNode body = Http.JSON.createObjectNode();
        ArrayNode pts = body.putArray("points");
        for (int i = from; i < from + BATCH; i++) {
          ObjectNode p = pts.addObject();
          p.put("id", i);
          ArrayNode v = p.putArray("vector");
          for (int d = 0; d < DIM; d++) {
            v.add(rnd.nextGaussian());
          }
        }
        assertThat(http.put("/collections/load/points?wait=true", body.toString()).status())
            .isEqualTo(200);
      }

      JsonNode after = http.get("/collections/load").result();
      long indexed = after.get("indexed_vectors_count").asLong();
      assertThat(after.get("points_count").asLong()).isEqualTo(POINTS);
      // one growing segment below the seal threshold: only its live graph indexes anything
      assertThat(after.at("/flashvec/segments")).hasSize(1);
      long graphPoints = after.at("/flashvec/segments/0/graph_points").asLong();
      assertThat(indexed)
          .as("indexed points are in the live graph")
          .isLessThanOrEqualTo(graphPoints);
      assertThat(indexed).as("the live graph is behind the upload: %s", after).isLessThan(POINTS);
      assertThat(after.get("status").asString()).as("%s", after).isEqualTo("yellow");
      assertThat(after.at("/flashvec/indexing/backlog_points").asLong())
          .isEqualTo(POINTS - indexed);

      JsonNode[] last = new JsonNode[1];
      Await.until(
          Duration.ofSeconds(180),
          "every point indexed and the collection green",
          () -> String.valueOf(last[0]),
          () -> {
            last[0] = http.get("/collections/load").result();
            return last[0].get("status").asString().equals("green");
          });
      assertThat(last[0].get("indexed_vectors_count").asLong()).isEqualTo(POINTS);
      assertThat(last[0].at("/flashvec/segments/0/graph_points").asLong()).isEqualTo(POINTS);
      assertThat(last[0].at("/flashvec/indexing/backlog_points").asLong()).isZero();
    }
  }

  @Test
  void tinyAndFlatCollectionsAreGreenWithinSecondsOfTheirUpload() throws Exception {
    Random rnd = new Random(TestSeeds.seed("IndexingStatusIT.tinyAndFlat"));
    try (ServerProcess server =
        new ServerProcess(tmp.resolve("data2"), tmp.resolve("b.log")).start()) {
      Http http = new Http(server.url());
      String vectors = "\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"}";
      assertThat(http.put("/collections/tiny", "{" + vectors + "}").status()).isEqualTo(200);
      assertThat(
              http.put("/collections/flat", "{" + vectors + ",\"index\":{\"type\":\"flat\"}}")
                  .status())
          .isEqualTo(200);
      // below the live graph's start (256 points): its exact scan is its index
      upload(http, "tiny", rnd, 0, 100);
      // flat: every point is scanned exactly, however many
      upload(http, "flat", rnd, 0, 3000);
      for (String c : new String[] {"tiny", "flat"}) {
        JsonNode[] last = new JsonNode[1];
        Await.until(
            Duration.ofSeconds(5),
            c + " green",
            () -> String.valueOf(last[0]),
            () -> {
              last[0] = http.get("/collections/" + c).result();
              return last[0].get("status").asString().equals("green");
            });
        assertThat(last[0].at("/flashvec/indexing/backlog_points").asLong()).isZero();
      }
      assertThat(http.get("/collections/tiny").result().get("indexed_vectors_count").asLong())
          .isEqualTo(100);
      assertThat(http.get("/collections/flat").result().get("points_count").asLong())
          .isEqualTo(3000);
    }
  }

  private static void upload(Http http, String collection, Random rnd, int from, int to) {
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
    assertThat(
            http.put("/collections/" + collection + "/points?wait=true", body.toString()).status())
        .isEqualTo(200);
  }
}
