package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Optimizations;
import io.flashvec.index.Optimizations.Optimization;
import io.flashvec.index.Optimizations.Status;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link OptimizationTracker}: running optimizations, their end, and the bounded history. */
class OptimizationTrackerTest {

  /** A clock that moves only when told. */
  static final class ManualClock implements InstantSource {
    Instant now = Instant.parse("2026-01-02T03:04:05Z");

    @Override
    public Instant instant() {
      return now;
    }

    void advance(Duration d) {
      now = now.plus(d);
    }
  }

  final ManualClock clock = new ManualClock();
  final OptimizationTracker tracker = new OptimizationTracker(3, clock);

  @Test
  void aRunningOptimizationShowsItsSegmentsProgressAndStart() {
    AtomicLong progress = new AtomicLong(40);
    tracker.start(Optimizations.INDEXING, 7, new int[] {5}, new long[] {100}, progress::get);

    List<Optimization> running = tracker.running();
    assertThat(running).hasSize(1);
    Optimization o = running.getFirst();
    assertThat(o.uuid()).isEqualTo(Optimizations.segmentUuid(3, 7));
    assertThat(o.uuid().toString()).isEqualTo("00000003-0000-8000-8000-000000000007");
    assertThat(o.optimizer()).isEqualTo("indexing");
    assertThat(o.status()).isEqualTo(Status.OPTIMIZING);
    assertThat(o.segments())
        .containsExactly(new Optimizations.SegmentRef(Optimizations.segmentUuid(3, 5), 100));
    assertThat(o.startedAt()).isEqualTo(clock.now);
    assertThat(o.finishedAt()).isNull();
    assertThat(o.done()).isEqualTo(40);
    assertThat(o.total()).isEqualTo(100);
    assertThat(tracker.busySegments()).containsExactly(5);

    progress.set(500); // a live graph holding deleted points as well: capped at the total
    assertThat(tracker.running().getFirst().done()).isEqualTo(100);
    assertThat(tracker.completed()).isEmpty();
  }

  @Test
  void withoutAProgressSourceDoneIsUnknownUntilTheEnd() {
    OptimizationTracker.Running r =
        tracker.start(Optimizations.MERGE, 9, new int[] {1, 2}, new long[] {10, 20}, null);
    assertThat(tracker.running().getFirst().done()).isEqualTo(-1);
    assertThat(tracker.running().getFirst().total()).isEqualTo(30);
    assertThat(tracker.busySegments()).containsExactlyInAnyOrder(1, 2);

    clock.advance(Duration.ofSeconds(2));
    r.done();
    assertThat(tracker.running()).isEmpty();
    assertThat(tracker.busySegments()).isEmpty();
    Optimization o = tracker.completed().getFirst();
    assertThat(o.status()).isEqualTo(Status.DONE);
    assertThat(o.done()).isEqualTo(30);
    assertThat(Duration.between(o.startedAt(), o.finishedAt())).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void cancelledAndFailedOptimizationsKeepTheirReasonAndAnOptimizationEndsOnce() {
    OptimizationTracker.Running a =
        tracker.start(Optimizations.VACUUM, 4, new int[] {1}, new long[] {5}, null);
    OptimizationTracker.Running b =
        tracker.start(Optimizations.INDEXING, 6, new int[] {2}, new long[] {5}, null);
    a.cancelled("the shard is closing");
    b.failed("java.io.IOException: boom");
    a.done(); // already ended: no second entry
    b.cancelled("late");

    List<Optimization> done = tracker.completed();
    assertThat(done).hasSize(2);
    assertThat(done.get(0).status()).isEqualTo(Status.ERROR);
    assertThat(done.get(0).reason()).isEqualTo("java.io.IOException: boom");
    assertThat(done.get(1).status()).isEqualTo(Status.CANCELLED);
    assertThat(done.get(1).reason()).isEqualTo("the shard is closing");
  }

  @Test
  void aDiscardedOptimizationLeavesNoHistory() {
    tracker.start(Optimizations.MERGE, 4, new int[] {1}, new long[] {5}, null).discard();
    assertThat(tracker.running()).isEmpty();
    assertThat(tracker.completed()).isEmpty();
  }

  @Test
  void theHistoryKeepsTheNewestSixteenNewestFirst() {
    for (int i = 0; i < 20; i++) {
      clock.advance(Duration.ofSeconds(1));
      tracker.start(Optimizations.INDEXING, 100 + i, new int[] {i}, new long[] {1}, null).done();
    }
    List<Optimization> done = tracker.completed();
    assertThat(done).hasSize(OptimizationTracker.HISTORY);
    assertThat(done.getFirst().uuid()).isEqualTo(Optimizations.segmentUuid(3, 119));
    assertThat(done.getLast().uuid()).isEqualTo(Optimizations.segmentUuid(3, 104));
  }

  @Test
  void runningOptimizationsAreListedOldestFirst() {
    tracker.start(Optimizations.INDEXING, 10, new int[] {1}, new long[] {1}, null);
    clock.advance(Duration.ofSeconds(1));
    tracker.start(Optimizations.MERGE, 11, new int[] {2}, new long[] {1}, null);
    assertThat(tracker.running())
        .extracting(Optimization::optimizer)
        .containsExactly("indexing", "merge");
  }

  @Test
  void oneCountPerSourceSegment() {
    assertThatThrownBy(
            () -> tracker.start(Optimizations.MERGE, 1, new int[] {1, 2}, new long[] {1}, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("one point count per source segment [sources=2, counts=1]");
  }
}
