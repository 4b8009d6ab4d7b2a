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
}
