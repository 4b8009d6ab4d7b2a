package io.flashvec.index.memory;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A shard's seal threshold is its share of the growing slice (with room for the frozen segment),
 * never above the configured one nor below the floor, and shrinks as more shards take writes;
 * merges stay within the build slice.
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
  void mergesStayWithinTheBuildSlice() {
    MemoryLimits m = new MemoryLimits(1L << 20, 80L << 20);
    int fits = (int) ((80L << 20) / MemoryPlan.buildBytesPerPoint(96));
    assertThat(m.maxMergePoints(1_000_000, 96, 10_000)).isEqualTo(fits);
    assertThat(m.maxMergePoints(50_000, 96, 10_000)).isEqualTo(50_000);
    assertThat(m.maxMergePoints(1_000_000, 4096, 100_000))
        .as("never below the seal threshold's segments")
        .isEqualTo(100_000);
  }
}
