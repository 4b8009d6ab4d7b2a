package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.collections.OptimizationsController.Part;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Optimizations;
import io.flashvec.index.Optimizations.Optimization;
import io.flashvec.index.Optimizations.SegmentRef;
import io.flashvec.index.Optimizations.Status;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/** {@link OptimizationsController}: its query parameters and Qdrant's response shape. */
class OptimizationsControllerTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void withTakesCommaSeparatedPartsWithSpacesAround() {
    assertThat(OptimizationsController.parseWith(null)).isEmpty();
    assertThat(OptimizationsController.parseWith("queued ,  completed  , idle_segments"))
        .containsExactlyInAnyOrder(Part.QUEUED, Part.COMPLETED, Part.IDLE_SEGMENTS);
    assertThat(OptimizationsController.parseWith("completed,")).containsExactly(Part.COMPLETED);
  }

  @Test
  void anUnknownPartIsA400NamingIt() {
    assertThatThrownBy(() -> OptimizationsController.parseWith("queued,bogus"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "Query deserialize error: unknown value `bogus` of `with`, expected one of `queued`,"
                + " `completed`, `idle_segments`");
  }

  @Test
  void completedLimitIsAWholeNumberOfAtLeastZero() {
    assertThat(OptimizationsController.parseLimit(null)).isEqualTo(16);
    assertThat(OptimizationsController.parseLimit("3")).isEqualTo(3);
    assertThat(OptimizationsController.parseLimit("0")).isZero();
    for (String bad : new String[] {"-1", "x", "1.5"}) {
      assertThatThrownBy(() -> OptimizationsController.parseLimit(bad))
          .isInstanceOf(InvalidInputException.class)
          .hasMessage(
              "Query deserialize error: invalid value `"
                  + bad
                  + "` of `completed_limit`, expected a whole number of at least 0");
    }
  }

  @Test
  void rendersQdrantsShapeWithOnlyTheAskedParts() {
    SegmentRef src = new SegmentRef(Optimizations.segmentUuid(0, 1), 10);
    Optimization running =
        new Optimization(
            Optimizations.segmentUuid(0, 5),
            Optimizations.INDEXING,
            Status.OPTIMIZING,
            null,
            List.of(src),
            T0,
            null,
            -1,
            10);
    Optimization failed =
        new Optimization(
            Optimizations.segmentUuid(0, 4),
            Optimizations.MERGE,
            Status.ERROR,
            "boom",
            List.of(src),
            T0,
            T0.plusMillis(1500),
            3,
            10);
    Optimizations o =
        new Optimizations(
            List.of(running),
            List.of(new Optimizations.Queued(Optimizations.VACUUM, List.of(src))),
            List.of(failed),
            List.of(new SegmentRef(Optimizations.segmentUuid(0, 2), 7)));

    ObjectNode bare = OptimizationsController.render(o, EnumSet.noneOf(Part.class));
    assertThat(bare.size()).isEqualTo(2);
    assertThat(bare.has("summary") && bare.has("running")).isTrue();
    assertThat(bare.at("/summary").toString())
        .isEqualTo(
            "{\"queued_optimizations\":1,\"queued_segments\":1,\"queued_points\":10,"
                + "\"idle_segments\":1}");
    assertThat(bare.at("/running/0").toString())
        .isEqualTo(
            "{\"uuid\":\"00000000-0000-8000-8000-000000000005\",\"optimizer\":\"indexing\","
                + "\"status\":\"optimizing\",\"segments\":[{\"uuid\":"
                + "\"00000000-0000-8000-8000-000000000001\",\"points_count\":10}],"
                + "\"progress\":{\"name\":\"indexing\",\"started_at\":\"2026-01-01T00:00:00Z\","
                + "\"finished_at\":null,\"duration_sec\":null,\"done\":null,\"total\":10}}");

    ObjectNode all = OptimizationsController.render(o, EnumSet.allOf(Part.class));
    assertThat(all.at("/queued/0/optimizer").asString()).isEqualTo("vacuum");
    assertThat(all.at("/completed/0/status/error").asString()).isEqualTo("boom");
    assertThat(all.at("/completed/0/progress/duration_sec").asDouble()).isEqualTo(1.5);
    assertThat(all.at("/idle_segments/0/points_count").asLong()).isEqualTo(7);
  }
}
