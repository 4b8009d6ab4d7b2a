package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ShardCompactor#mergePick}: which sealed segments a compaction merges. */
class ShardCompactorPolicyTest {

  static final int THRESHOLD = 2000;
  static final int MAX_SMALL = 4;

  private static List<Integer> pick(boolean force, int... live) {
    return ShardCompactor.mergePick(live, THRESHOLD, MAX_SMALL, force);
  }

  @Test
  void twoSmallSegmentsThatFitOneThresholdAreMergedEvenIfAllTogetherDoNot() {
    // found by exploratory testing: 1437 + 1310 + 298 > 2000 left all three alone
    assertThat(pick(false, 1437, 1310, 298)).containsExactly(2, 1, 0);
    assertThat(pick(false, 5000, 900, 1100)).containsExactly(1, 2);
  }

  @Test
  void smallSegmentsThatFitNoThresholdInPairsWaitForMoreThanMaxSmall() {
    assertThat(pick(false, 1500, 1600, 1700)).isEmpty();
    assertThat(pick(false, 1500, 1600, 1700, 1800)).isEmpty();
    // a fifth: the smallest first, up to two thresholds
    assertThat(pick(false, 1800, 1600, 1700, 1500, 1900)).containsExactly(3, 1);
  }

  @Test
  void fullSegmentsAndLoneSmallOnesAreLeftAlone() {
    assertThat(pick(false, 2000, 5000, 100)).isEmpty();
    assertThat(pick(true, 2000, 100)).isEmpty();
    assertThat(pick(false)).isEmpty();
  }

  @Test
  void forceMergesAnyTwoSmallOnes() {
    assertThat(pick(true, 1900, 1950)).containsExactly(0, 1);
  }
}
