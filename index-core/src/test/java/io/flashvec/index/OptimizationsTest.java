package io.flashvec.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Optimizations.Optimization;
import io.flashvec.index.Optimizations.Queued;
import io.flashvec.index.Optimizations.SegmentRef;
import io.flashvec.index.Optimizations.Status;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@link Optimizations}: segment UUIDs, the sum over shards and its queue counts. */
class OptimizationsTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static Optimization finished(int shard, int segment, int second) {
    return new Optimization(
        Optimizations.segmentUuid(shard, segment),
        Optimizations.MERGE,
        Status.DONE,
        null,
        List.of(),
        T0,
        T0.plusSeconds(second),
        1,
        1);
  }

  @Test
  void segmentUuidsShowShardAndSegmentAndAreVersion8() {
    UUID u = Optimizations.segmentUuid(2, 17);
    assertThat(u.toString()).isEqualTo("00000002-0000-8000-8000-000000000011");
    assertThat(u.version()).isEqualTo(8);
    assertThat(u.variant()).isEqualTo(2);
    assertThat(Optimizations.segmentUuid(0, 17)).isNotEqualTo(u);
    assertThatThrownBy(() -> Optimizations.segmentUuid(0, -1))
        .hasMessage("shard and segment ids must not be negative [shard=0, segment=-1]");
  }

  @Test
  void mergeListsCompletedNewestFirstWithinTheLimitAndKeepsEverythingElse() {
    SegmentRef a = new SegmentRef(Optimizations.segmentUuid(0, 1), 10);
    SegmentRef b = new SegmentRef(Optimizations.segmentUuid(1, 1), 5);
    Optimizations s0 =
        new Optimizations(
            List.of(),
            List.of(new Queued(Optimizations.INDEXING, List.of(a))),
            List.of(finished(0, 3, 1), finished(0, 2, 5)),
            List.of());
    Optimizations s1 =
        new Optimizations(
            List.of(),
            List.of(new Queued(Optimizations.MERGE, List.of(b, b))),
            List.of(finished(1, 4, 3)),
            List.of(a));
    Optimizations all = Optimizations.merge(List.of(s0, s1), 2);
    assertThat(all.completed())
        .extracting(Optimization::uuid)
        .containsExactly(Optimizations.segmentUuid(0, 2), Optimizations.segmentUuid(1, 4));
    assertThat(all.queued()).hasSize(2);
    assertThat(all.queuedSegments()).isEqualTo(3);
    assertThat(all.queuedPoints()).isEqualTo(20);
    assertThat(all.idle()).containsExactly(a);
    assertThat(Optimizations.merge(List.of(s0, s1), 0).completed()).isEmpty();
    assertThatThrownBy(() -> Optimizations.merge(List.of(), -1))
        .hasMessage("completed limit must not be negative [completedLimit=-1]");
  }
}
