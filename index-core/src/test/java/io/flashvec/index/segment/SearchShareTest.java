package io.flashvec.index.segment;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SearchShareTest {

  @Test
  void kFollowsTheSegmentsShare() {
    assertThat(SearchShare.k(10, 1.0)).isEqualTo(10);
    assertThat(SearchShare.k(10, 0.13)).isEqualTo(5); // 1.3 + 3 * 1.06
    assertThat(SearchShare.k(10, 0.5)).isEqualTo(10); // 5 + 3 * 1.58, at most k
    assertThat(SearchShare.k(100, 0.1)).isEqualTo(19); // 10 + 3 * 3
    assertThat(SearchShare.k(10, 0.0)).isEqualTo(1);
    assertThat(SearchShare.k(1, 0.01)).isEqualTo(1);
  }

  @Test
  void searchListFollowsTheSegmentsShare() {
    assertThat(SearchShare.searchList(60, 10, 1.0)).isEqualTo(60);
    assertThat(SearchShare.searchList(60, 10, 0.19)).isEqualTo(21);
    assertThat(SearchShare.searchList(100, 10, 0.5)).isEqualTo(65); // 50 + 3 * 5
    assertThat(SearchShare.searchList(200, 10, 0.01)).isEqualTo(20); // 7, at least 20
    assertThat(SearchShare.searchList(20, 10, 0.1)).isEqualTo(20); // never above the list
    assertThat(SearchShare.searchList(100, 50, 0.05)).isEqualTo(50); // at least k
    assertThat(SearchShare.searchList(60, 10, 0.0)).isEqualTo(20);
  }

  @Test
  void aSealedSegmentsFloorIsItsOwn() {
    int floor = SearchShare.MIN_SEALED_LIST;
    assertThat(SearchShare.searchList(100, 10, 0.125, floor)).isEqualTo(48); // 12.5 + 3 * 3.3
    assertThat(SearchShare.searchList(40, 10, 0.125, floor)).isEqualTo(40); // never above the list
    assertThat(SearchShare.searchList(200, 10, 0.5, floor)).isEqualTo(122); // 100 + 3 * 7.07
    assertThat(SearchShare.searchList(100, 64, 0.1, floor)).isEqualTo(64); // at least k
    assertThat(SearchShare.searchList(100, 10, 1.0, floor)).isEqualTo(100);
  }

  @Test
  void notANumberOrAWholeShareKeepsTheRequest() {
    assertThat(SearchShare.searchList(60, 10, Double.NaN)).isEqualTo(60);
    assertThat(SearchShare.k(10, Double.NaN)).isEqualTo(10);
    assertThat(SearchShare.searchList(60, 10, 1.5)).isEqualTo(60);
  }
}
