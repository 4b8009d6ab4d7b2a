package io.flashvec.loadgen.report;

import static io.flashvec.loadgen.report.Points.point;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ParetoTest {

  @Test
  void keepsOnlyPointsNoOtherBeatsOnBothRecallAndQps() {
    SearchPoint a = point(1, 10, 3000, 0.80);
    SearchPoint b = point(1, 20, 2000, 0.90);
    SearchPoint dominated = point(1, 30, 1500, 0.88); // b has more recall and more QPS
    SearchPoint c = point(1, 40, 1000, 0.97);
    SearchPoint slowAndWorse = point(1, 50, 900, 0.96); // c beats it on both
    SearchPoint d = point(1, 80, 500, 0.99);

    List<SearchPoint> all = List.of(d, slowAndWorse, c, dominated, b, a);

    assertThat(Pareto.frontier(all)).containsExactly(a, b, c, d);
    assertThat(Pareto.dominated(all)).containsExactlyInAnyOrder(dominated, slowAndWorse);
  }

  @Test
  void aWarmUpArtefactDoesNotBendTheFrontier() {
    // search_list=10 ran cold and is slower than search_list=20 with less recall: swept in order
    // it would make a hook; on the frontier it is simply dominated
    SearchPoint cold = point(1, 10, 800, 0.85);
    SearchPoint warm = point(1, 20, 1200, 0.92);
    SearchPoint high = point(1, 40, 900, 0.97);

    assertThat(Pareto.frontier(List.of(cold, warm, high))).containsExactly(warm, high);
  }

  @Test
  void equalRecallKeepsTheFasterPointAndPointsWithoutRecallAreIgnored() {
    SearchPoint slow = point(1, 10, 500, 0.9);
    SearchPoint fast = point(1, 20, 700, 0.9);
    SearchPoint noRecall = point(1, 30, 9000, Double.NaN);

    assertThat(Pareto.frontier(List.of(slow, fast, noRecall))).containsExactly(fast);
    assertThat(Pareto.dominated(List.of(slow, fast, noRecall))).containsExactly(slow);
    assertThat(Pareto.frontier(List.of())).isEmpty();
  }
}
