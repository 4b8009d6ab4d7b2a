package io.flashvec.api.points;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.web.Json;
import io.flashvec.cluster.local.LocalCollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.shard.Shard;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * update_vectors against a real standalone engine: it keeps the payload the point has when the new
 * vector is written, so a set_payload running at the same time is never lost, and an id that does
 * not exist is a 404 that changes nothing.
 */
@ExtendWith(TestSeeds.Reporter.class)
class UpdateVectorsRaceTest {

  private static final int ROUNDS = 400;

  @TempDir Path data;

  private LocalCollectionService service;
  private PointsController points;
  private PayloadController payloads;

  @BeforeEach
  void open() {
    service = new LocalCollectionService(data, Shard.Options.defaults());
    service.recover();
    service.createCollection("c", new CollectionConfig(4, Distance.DOT, 2, 1, IndexParams.DEFAULT));
    FlashVecProperties props =
        new Binder(new MapConfigurationPropertySource(Map.of()))
            .bindOrCreate("flashvec", FlashVecProperties.class);
    var strict = new io.flashvec.api.collections.StrictModeGuard(service);
    points = new PointsController(service, null, props, strict);
    payloads = new PayloadController(service, null, props, strict);
  }

  @AfterEach
  void close() {
    service.close();
  }

  private static JsonNode json(String s) {
    return Json.MAPPER.readTree(s);
  }

  private static String vector(Random r) {
    return "["
        + r.nextFloat()
        + ","
        + r.nextFloat()
        + ","
        + r.nextFloat()
        + ","
        + r.nextFloat()
        + "]";
  }

  /**
   * One thread sets a new payload key per round on points 1 and 2 while another replaces their
   * vectors: every key set must survive, whatever the interleaving.
   */
  @Test
  void aConcurrentSetPayloadIsNeverLost() throws Exception {
    Random r = TestSeeds.random();
    service.upsert(
        "c",
        List.of(
            new Point(PointId.of(1), new float[] {1, 0, 0, 0}, bytes("{\"start\":1}")),
            new Point(PointId.of(2), new float[] {0, 1, 0, 0}, bytes("{\"start\":2}"))),
        true);
    List<String> bodies = new ArrayList<>();
    for (int i = 0; i < ROUNDS; i++) {
      bodies.add(
          "{\"points\":[{\"id\":1,\"vector\":"
              + vector(r)
              + "},{\"id\":2,\"vector\":"
              + vector(r)
              + "}]}");
    }
    CountDownLatch go = new CountDownLatch(1);
    try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
      Future<?> vectors =
          pool.submit(
              () -> {
                go.await();
                for (String b : bodies) {
                  points.updateVectors("c", json(b), false);
                }
                return null;
              });
      Future<?> keys =
          pool.submit(
              () -> {
                go.await();
                for (int i = 0; i < ROUNDS; i++) {
                  payloads.apply(
                      "c",
                      json("{\"points\":[1,2],\"payload\":{\"k" + i + "\":" + i + "}}"),
                      false,
                      PayloadController.SET);
                }
                return null;
              });
      go.countDown();
      vectors.get();
      keys.get();
    }
    String last = bodies.getLast();
    JsonNode lastVectors = json(last).get("points");
    for (Record rec : service.retrieve("c", List.of(PointId.of(1), PointId.of(2)), true, true)) {
      JsonNode payload = Json.MAPPER.readTree(rec.payload());
      List<String> missing = new ArrayList<>();
      for (int i = 0; i < ROUNDS; i++) {
        if (!payload.has("k" + i)) {
          missing.add("k" + i);
        }
      }
      assertThat(missing).as("payload keys lost on point " + rec.id()).isEmpty();
      assertThat(payload.has("start")).isTrue();
      int at = rec.id().equals(PointId.of(1)) ? 0 : 1;
      JsonNode want = lastVectors.get(at).get("vector");
      for (int j = 0; j < 4; j++) {
        assertThat(rec.vector()[j]).isEqualTo((float) want.get(j).doubleValue());
      }
    }
  }

  @Test
  void aMissingPointIsA404AndNothingChanges() {
    service.upsert(
        "c", List.of(new Point(PointId.of(1), new float[] {1, 0, 0, 0}, bytes("{\"a\":1}"))), true);
    assertThatThrownBy(
            () ->
                points.updateVectors(
                    "c",
                    json(
                        "{\"points\":[{\"id\":1,\"vector\":[0,0,0,1]},{\"id\":7,\"vector\":[0,0,1,0]}]}"),
                    true))
        .isInstanceOf(NotFoundException.class)
        .hasMessage("Not found: No point with id 7 found");
    Record r = service.retrieve("c", List.of(PointId.of(1)), true, true).getFirst();
    assertThat(r.vector()).containsExactly(1, 0, 0, 0);
    assertThat(new String(r.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
