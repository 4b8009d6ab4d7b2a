package io.flashvec.index.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.InsufficientMemoryException;
import org.junit.jupiter.api.Test;

/**
 * Writes stop (507) while the resident index of every shard outgrows its slice. A shard's seal
 * threshold is its share of the growing slice (with room for the frozen segment), never above the
 * configured one nor below the floor, and shrinks as more shards take writes; merges stay within
 * the build slice.
 */
class MemoryLimitsTest {

  @Test
  void theSealThresholdIsTheShardsShareOfTheGrowingSlice() {
    long perPoint = MemoryPlan.growingBytesPerPoint(96, 64);
    MemoryLimits m = new MemoryLimits(2 * perPoint * 40_000, 1L << 30);
    assertThat(m.sealThreshold(100_000, 96, 64)).as("no shard active yet").isEqualTo(40_000);
    assertThat(m.sealThreshold(10_000, 96, 64))
        .as("the configured one is smaller")
        .isEqualTo(10_000);
    Object a = new Object();
    Object b = new Object();
    m.growingActive(a);
    m.growingActive(a);
    assertThat(m.activeGrowing()).isEqualTo(1);
    assertThat(m.sealThreshold(100_000, 96, 64)).isEqualTo(40_000);
    m.growingActive(b);
    assertThat(m.sealThreshold(100_000, 96, 64)).isEqualTo(20_000);
    m.growingIdle(a);
    m.growingIdle(a);
    assertThat(m.sealThreshold(100_000, 96, 64)).isEqualTo(40_000);
    assertThat(m.sealThreshold(100_000, 96, 64, 1000))
        .as("never below the floor")
        .isEqualTo(MemoryLimits.MIN_SEAL_POINTS);
    assertThat(m.sealThreshold(100, 96, 64, 1000))
        .as("a configured threshold below the floor stays")
        .isEqualTo(100);
  }

  @Test
  void writesAreRefusedWhileTheResidentIndexExceedsItsSlice() {
    MemoryLimits m = new MemoryLimits(768L << 20, 1000, 1L << 20, 1L << 20);
    Object a = new Object();
    Object b = new Object();
    m.checkResident(a, 600, "upsert");
    m.checkResident(b, 400, "upsert");
    assertThat(m.residentTotal()).isEqualTo(1000);
    assertThatThrownBy(() -> m.checkResident(b, 401, "upsert"))
        .isInstanceOf(InsufficientMemoryException.class)
        .hasMessage(
            "Insufficient memory: upsert refused, the resident index (1001 B) has outgrown its"
                + " slice of the memory budget (1000 B of flashvec.memory.budget=768 MiB); raise"
                + " the budget, or delete points and compact [residentBytes=1001,"
                + " residentSliceBytes=1000, budgetBytes=805306368]")
        .extracting(e -> ((InsufficientMemoryException) e).httpStatus())
        .isEqualTo(507);
    m.checkResident(a, 0, null); // a closed
    m.checkResident(b, 401, "upsert");
    assertThat(m.residentTotal()).isEqualTo(401);
    MemoryLimits unlimited = new MemoryLimits(1L << 20, 1L << 20);
    unlimited.checkResident(a, Long.MAX_VALUE / 2, "upsert");
  }

  @Test
  void pqCodesShrinkInStepsAsTheServerHoldsMorePoints() {
    // half of a 200 MB slice for codes, 1.5 bytes a point besides them
    MemoryLimits m = new MemoryLimits(1L << 30, 200_000_000, 1L << 20, 1L << 20);
    assertThat(m.pqBytes(32, 4, 1_000_000)).as("98.5 bytes fit").isEqualTo(32);
    assertThat(m.shrunkTo(32)).as("nothing shrunk, nothing logged").isZero();
    assertThat(m.pqBytes(32, 4, 3_000_000)).as("31.8 fit").isEqualTo(24);
    assertThat(m.shrunkTo(32)).as("the warning names the smallest size so far").isEqualTo(24);
    assertThat(m.pqBytes(32, 4, 4_000_000)).as("23.5 fit").isEqualTo(16);
    assertThat(m.pqBytes(32, 4, 6_000_000)).as("15.2 fit").isEqualTo(12);
    assertThat(m.pqBytes(32, 4, 10_000_000)).as("8.5 fit").isEqualTo(8);
    assertThat(m.pqBytes(32, 4, 14_000_000)).as("5.6 fit").isEqualTo(4);
    assertThat(m.shrunkTo(32)).isEqualTo(4);
    assertThat(m.pqBytes(32, 6, 14_000_000)).as("not below the minimum").isEqualTo(6);
    assertThat(m.pqBytes(48, 4, 4_000_000)).as("48, 36, 24, 18: 23.5 fit").isEqualTo(18);
    assertThat(m.shrunkTo(48)).as("another default warns on its own").isEqualTo(18);
    Object a = new Object();
    Object b = new Object();
    m.points(a, 3_000_000);
    m.points(b, 1_000_000);
    assertThat(m.pointsTotal()).isEqualTo(4_000_000);
    assertThat(m.pqBytes(32, 4, 100_000))
        .as("every shard's points count, not only the segment's")
        .isEqualTo(16);
    m.points(a, 0);
    assertThat(m.pqBytes(32, 4, 100_000)).isEqualTo(32);
    assertThat(new MemoryLimits(1L << 20, 1L << 20).pqBytes(32, 4, 1L << 40))
        .as("no resident limit")
        .isEqualTo(32);
  }

  @Test
  void idleCodesFillSeventyPercentOfTheSliceAndNoMoreThanItsRoom() {
    MemoryLimits m = new MemoryLimits(1L << 30, 200_000_000, 1L << 20, 1L << 20);
    Object shard = new Object();
    m.points(shard, 10_000_000);
    assertThat(m.pqBytes(32, 4, 0)).as("writes: half the slice, 8.5 bytes fit").isEqualTo(8);
    assertThat(m.idlePqBytes(32, 4)).as("idle: 70% of it, 12.5 fit").isEqualTo(12);
    m.points(shard, 4_000_000);
    assertThat(m.idlePqBytes(32, 4)).as("33.5 fit").isEqualTo(32);
    assertThat(m.idleRoom()).isEqualTo(140_000_000);
    m.checkResident(shard, 100_000_000, null);
    assertThat(m.idleRoom()).isEqualTo(40_000_000);
    m.checkResident(shard, 150_000_000, null);
    assertThat(m.idleRoom()).as("past 70%: no room").isZero();
    MemoryLimits unlimited = new MemoryLimits(1L << 20, 1L << 20);
    assertThat(unlimited.idlePqBytes(32, 4)).isEqualTo(32);
    assertThat(unlimited.idleRoom()).isEqualTo(Long.MAX_VALUE);
  }
}
