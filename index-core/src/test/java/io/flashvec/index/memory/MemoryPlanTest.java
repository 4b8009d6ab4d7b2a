package io.flashvec.index.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The memory plan slices a budget into parts that add up to it, follows a smaller JVM heap, and
 * refuses a budget too small for the JVM, a minimal heap and the page cache, naming both values.
 */
class MemoryPlanTest {

  private static final long MIB = 1L << 20;

  @Test
  void slicesAddUpToTheBudget() {
    MemoryPlan p = MemoryPlan.of(768 * MIB, 2, 0);
    assertThat(p.total()).isEqualTo(768 * MIB);
    assertThat(p.jvmNative()).isEqualTo((192 + 64 + 8) * MIB);
    assertThat(p.nodeCache()).isEqualTo((long) (768 * MIB * 0.05));
    assertThat(p.jvmNative() + p.heap() + p.nodeCache() + p.pageCache()).isEqualTo(p.total());
    assertThat(p.resident() + p.growing() + p.build() + p.working()).isEqualTo(p.heap());
    assertThat(p.pageCache()).isGreaterThanOrEqualTo((long) Math.ceil(768 * MIB * 0.10));
    assertThat(p.heap() % MIB).isZero();
    assertThat(p.heap()).isEqualTo(388 * MIB);
    // the young generation is half the working slice: the long-lived slices fit the old one
    assertThat(p.youngGeneration()).isEqualTo(p.working() / 2 / MIB * MIB);
    assertThat(p.jvmFlags())
        .isEqualTo(
            "-Xmx388m -XX:MaxNewSize="
                + p.working() / 2 / MIB
                + "m -Djdk.nio.maxCachedBufferSize=1048576 -XX:TrimNativeHeapInterval=5000");
    assertThat(p.heap() - p.youngGeneration())
        .isGreaterThanOrEqualTo(p.resident() + p.growing() + p.build());
    assertThat(p.resident()).isEqualTo((long) (388 * MIB * 0.45));
    assertThat(p.build()).isEqualTo((long) (388 * MIB * 0.25));
    assertThat(p.growing()).isEqualTo((long) (388 * MIB * 0.15));
  }

  /**
   * A quarter of the raw bytes of 10M × 96 (915 MiB): the PQ codes its resident slice gives. With
   * the shares before ADR 0025's third amendment (page cache 25%, resident 35% of the heap) the
   * slice was 131.6 MiB and gave 4-byte codes at 10M, which steer a search to recall@10 0.28.
   */
  @Test
  void aQuarterOfTenMillionVectorsOfNinetySixDimensionsKeepsEightByteCodes() {
    MemoryPlan p = MemoryPlan.of(915 * MIB, 2, 0);
    assertThat(p.heap()).isEqualTo(513 * MIB);
    MemoryLimits m = new MemoryLimits(p.total(), p.resident(), p.growing(), p.build());
    assertThat(m.pqBytes(32, 4, 10_000_000)).isEqualTo(8);
    assertThat(m.pqBytes(32, 4, 4_000_000)).isEqualTo(24);
  }

  @Test
  void aLargeBudgetGivesMostOfItToTheHeapAndThePageCache() {
    long budget = 64L << 30;
    MemoryPlan p = MemoryPlan.of(budget, 32, 0);
    assertThat(p.jvmNative()).isEqualTo((192 + 64 + 128) * MIB);
    assertThat((double) p.heap() / budget).isBetween(0.84, 0.85);
    assertThat(p.jvmNative() + p.heap() + p.nodeCache() + p.pageCache()).isEqualTo(budget);
  }

  @Test
  void aSmallerJvmHeapIsTheHeapAndTheRestGoesToThePageCache() {
    MemoryPlan planned = MemoryPlan.of(4L << 30, 2, 0);
    MemoryPlan p = MemoryPlan.of(4L << 30, 2, 512 * MIB);
    assertThat(p.heap()).isEqualTo(512 * MIB);
    assertThat(p.pageCache()).isEqualTo(planned.pageCache() + planned.heap() - 512 * MIB);
    assertThat(p.build()).isEqualTo((long) (512 * MIB * 0.25));
    assertThat(MemoryPlan.of(4L << 30, 2, Long.MAX_VALUE).heap()).isEqualTo(planned.heap());
  }

  @Test
  void aBudgetTooSmallIsRefusedNamingTheBudgetAndTheMinimum() {
    long min = MemoryPlan.minimumBudget(2);
    assertThat(min).isEqualTo(463 * MIB);
    assertThat(MemoryPlan.of(min, 2, 0).heap()).isGreaterThanOrEqualTo(128 * MIB);
    assertThatThrownBy(() -> MemoryPlan.of(300 * MIB, 2, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "memory budget too small [budget=300 MiB (314572800), needs≥463 MiB (485490688)]");
    assertThatThrownBy(() -> MemoryPlan.of(min - 1, 2, 0)).hasMessageContaining("needs≥463 MiB");
    assertThat(MemoryPlan.minimumBudget(64)).isGreaterThan(min);
  }

  @Test
  void theStartLineNamesEveryPart() {
    assertThat(MemoryPlan.of(1L << 30, 2, 0).describe())
        .isEqualTo(
            "memory budget [total=1 GiB, jvmNative=264 MiB, heap=606 MiB{resident=272.7 MiB,"
                + " growing=90.9 MiB, build=151.5 MiB, working=90.9 MiB}, nodeCache=51.2 MiB,"
                + " pageCache=102.8 MiB]");
  }

  @Test
  void sizesParseAsKubernetesAndFlashVecWriteThem() {
    assertThat(MemoryPlan.parseBytes("805306368")).isEqualTo(768 * MIB);
    assertThat(MemoryPlan.parseBytes("768Mi")).isEqualTo(768 * MIB);
    assertThat(MemoryPlan.parseBytes("768MB")).isEqualTo(768 * MIB);
    assertThat(MemoryPlan.parseBytes(" 2Gi ")).isEqualTo(2L << 30);
    assertThat(MemoryPlan.parseBytes("2G")).isEqualTo(2_000_000_000L);
    assertThat(MemoryPlan.parseBytes("512k")).isEqualTo(512_000L);
    for (String bad :
        new String[] {"", "lots", "-1Gi", "0", "1.5Gi", "2gb", "3m", "99999999999Ti"}) {
      assertThatThrownBy(() -> MemoryPlan.parseBytes(bad))
          .as(bad)
          .hasMessage(
              "memory budget must be a positive size such as 768Mi, 2Gi, 2GB or 805306368 [budget="
                  + bad
                  + "]");
    }
  }

  @Test
  void growingAndBuildPointsCostWhatTheirStructuresHold() {
    // no live graph: the floats and the bookkeeping
    assertThat(MemoryPlan.growingBytesPerPoint(96, 0)).isEqualTo(4 * 96 + 72);
    // R=64: slack 84, a list of 85 ints and 84 floats with their headers, and the int8 code
    assertThat(MemoryPlan.growingBytesPerPoint(96, 64))
        .isEqualTo(4 * 96 + 72 + 96 + (4 * 85 + 24) + (4 * 84 + 24));
    assertThat(MemoryPlan.growingBytesPerPoint(768, 64) - MemoryPlan.growingBytesPerPoint(767, 64))
        .as("sign codes from 512 dimensions")
        .isEqualTo(5);
  }
}
