package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SparseVector;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/** Hits written straight to the generator are the bytes the tree of {@link Output} gives. */
class ScoredPointsTest {

  private static final float[] SPECIAL_SCORES = {
    0f, -0f, 1f, -1f, Float.MIN_VALUE, Float.MAX_VALUE, -Float.MAX_VALUE, 1e-7f, 0.1f, 123456.79f
  };

  private static PointId id(Random r) {
    return switch (r.nextInt(4)) {
      case 0 -> PointId.of(new UUID(r.nextLong(), r.nextLong()));
      case 1 -> PointId.of(-1L - r.nextInt(1000)); // an unsigned id past 2^63
      case 2 -> PointId.of(r.nextInt(100));
      default -> PointId.of(r.nextLong() & Long.MAX_VALUE);
    };
  }

  private static float score(Random r) {
    return r.nextInt(5) == 0
        ? SPECIAL_SCORES[r.nextInt(SPECIAL_SCORES.length)]
        : (float) r.nextGaussian();
  }

  private static Record record(Random r) {
    float[] v = null;
    if (r.nextBoolean()) {
      v = new float[1 + r.nextInt(8)];
      for (int i = 0; i < v.length; i++) {
        v[i] = (float) r.nextGaussian();
      }
    }
    byte[] payload =
        switch (r.nextInt(3)) {
          case 0 -> null;
          case 1 -> "{}".getBytes(StandardCharsets.UTF_8);
          default ->
              ("{\"a\":"
                      + r.nextInt(100)
                      + ",\"b\":{\"c\":\"x"
                      + r.nextInt(9)
                      + "\"},\"d\":[1,2.5]}")
                  .getBytes(StandardCharsets.UTF_8);
        };
    Map<String, SparseVector> sparse = null;
    if (r.nextInt(3) == 0) {
      sparse =
          Map.of(
              "text",
              SparseVector.of(
                  new long[] {1, 5, 9}, new float[] {0.5f, (float) r.nextGaussian(), 2f}, "t"));
    }
    return new Record(id(r), score(r), v, payload, sparse);
  }

  private static Output.PayloadSelector selector(Random r) {
    return switch (r.nextInt(4)) {
      case 0, 1 -> Output.PayloadSelector.NONE;
      case 2 -> Output.PayloadSelector.ALL;
      default ->
          new Output.PayloadSelector(true, List.of(FieldPath.parse("b", "with_payload")), null);
    };
  }

  private static String envelope(tools.jackson.databind.JsonNode result) {
    ObjectNode o = Json.object();
    o.set("result", result);
    o.put("status", "ok");
    o.put("time", 0.25);
    return new String(Json.MAPPER.writeValueAsBytes(o), StandardCharsets.UTF_8);
  }

  @Test
  void randomHitsAreWrittenAsTheTreeWritesThem() {
    Random r = TestSeeds.random("scored-points");
    int rounds = TestSeeds.atLeast(r, 500);
    int plain = 0;
    for (int i = 0; i < rounds; i++) {
      List<Record> hits = new ArrayList<>();
      for (int j = r.nextInt(12); j > 0; j--) {
        hits.add(record(r));
      }
      Output.PayloadSelector sel = selector(r);
      boolean withVector = r.nextInt(3) == 0;
      plain += !sel.any() && !withVector ? 1 : 0;
      assertThat(envelope(ScoredPoints.node(hits, sel, withVector)))
          .as("round %d", i)
          .isEqualTo(envelope(Output.scoredList(hits, sel, withVector)));
      // inside a batch's array and a query's object, as the controller nests it
      var batch = Json.array().add(ScoredPoints.node(hits, sel, withVector));
      var batchTree = Json.array().add(Output.scoredList(hits, sel, withVector));
      assertThat(envelope(batch)).isEqualTo(envelope(batchTree));
      ObjectNode query = Json.object();
      query.set("points", ScoredPoints.node(hits, sel, withVector));
      ObjectNode queryTree = Json.object();
      queryTree.set("points", Output.scoredList(hits, sel, withVector));
      assertThat(envelope(query)).isEqualTo(envelope(queryTree));
    }
    assertThat(plain).as("rounds written without a tree").isPositive();
  }

  @Test
  void anEmptyResultIsAnEmptyArray() {
    assertThat(envelope(ScoredPoints.node(List.of(), Output.PayloadSelector.NONE, false)))
        .isEqualTo("{\"result\":[],\"status\":\"ok\",\"time\":0.25}");
  }
}
