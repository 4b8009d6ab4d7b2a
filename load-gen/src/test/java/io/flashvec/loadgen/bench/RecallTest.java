package io.flashvec.loadgen.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RecallTest {
  final int[] truth = {4, 8, 15, 16, 23, 42, 7, 9};

  @Test
  void countsHitsAmongTheTrueTopK() {
    assertThat(Recall.atK(new long[] {4, 8, 15, 16}, truth, 4)).isEqualTo(1.0);
    assertThat(Recall.atK(new long[] {16, 15, 8, 4}, truth, 4)).isEqualTo(1.0);
    assertThat(Recall.atK(new long[] {4, 99, 15, 23}, truth, 4)).isEqualTo(0.5);
    // 23 is in the truth but beyond the top-4
    assertThat(Recall.atK(new long[] {23, 42, 7, 9}, truth, 4)).isEqualTo(0.0);
  }

  @Test
  void onlyTheFirstKReturnedCountAndDuplicatesCountOnce() {
    assertThat(Recall.atK(new long[] {4, 100, 101, 102, 8}, truth, 4)).isEqualTo(0.25);
    assertThat(Recall.atK(new long[] {4, 4, 4, 8}, truth, 4)).isEqualTo(0.5);
  }

  @Test
  void shortAnswersFindFewer() {
    assertThat(Recall.atK(new long[] {4}, truth, 4)).isEqualTo(0.25);
    assertThat(Recall.atK(new long[0], truth, 4)).isEqualTo(0.0);
  }

  @Test
  void rejectsShallowGroundTruth() {
    assertThatThrownBy(() -> Recall.atK(new long[] {1}, new int[] {1, 2}, 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ground truth is shallower than k [depth=2, k=10]");
  }

  @Test
  void distinctRecallDiscountsCopiesOfTheSameRow() {
    // exact answer over base + copies: rows 4, 8 and 15 each appear twice
    assertThat(Recall.atKDistinct(new long[] {4, 4, 8, 8, 15, 15}, truth, 6)).isEqualTo(1.0);
    // one duplicate: depth 5, rows {4, 8, 99, 16, 23}: 4 of the true top-5
    assertThat(Recall.atKDistinct(new long[] {4, 4, 8, 99, 16, 23}, truth, 6)).isEqualTo(0.8);
    // no duplicates: same as atK, including short answers
    assertThat(Recall.atKDistinct(new long[] {4, 99}, truth, 4))
        .isEqualTo(Recall.atK(new long[] {4, 99}, truth, 4));
  }
}
