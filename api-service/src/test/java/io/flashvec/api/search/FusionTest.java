package io.flashvec.api.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class FusionTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  private static List<Record> list(long... idsAndScores) {
    Record[] out = new Record[idsAndScores.length / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = new Record(PointId.of(idsAndScores[2 * i]), idsAndScores[2 * i + 1], null, null);
    }
    return List.of(out);
  }

  private static List<Long> ids(List<Record> rs) {
    return rs.stream().map(r -> r.id().number()).toList();
  }

  @Test
  void rrfSumsReciprocalRanksWithQdrantsK() {
    Fusion f = Fusion.parse(M.readTree("{\"fusion\": \"rrf\"}"), "query");
    List<Record> fused =
        f.fuse(
            List.of(
                new Fusion.Ranked(list(5, 90, 4, 80, 3, 70, 2, 60, 1, 50), true),
                new Fusion.Ranked(list(1, 9, 2, 8), true)));
    // Qdrant's 1 / (k + position), position from 0: 1: 1/6 + 1/2, 2: 1/5 + 1/3, 5: 1/2, 4: 1/3,
    // 3: 1/4
    assertThat(ids(fused)).containsExactly(1L, 2L, 5L, 4L, 3L);
    assertThat(fused.getFirst().score()).isEqualTo((float) (1.0 / 6 + 1.0 / 2));
    assertThat(fused.get(2).score()).isEqualTo(0.5f);
    Fusion k60 = Fusion.parse(M.readTree("{\"rrf\": {\"k\": 60}}"), "query");
    assertThat(k60.k()).isEqualTo(60);
  }

  @Test
  void dbsfNormalisesEachListAndRespectsLowerIsBetter() {
    Fusion f = Fusion.parse(M.readTree("{\"fusion\": \"dbsf\"}"), "query");
    // list A (similarities): 1 clearly best; list B (distances, lower better): 3 clearly best
    List<Record> fused =
        f.fuse(
            List.of(
                new Fusion.Ranked(list(1, 100, 2, 10, 3, 9), true),
                new Fusion.Ranked(list(3, 1, 2, 50, 1, 51), false)));
    assertThat(fused).hasSize(3);
    assertThat(ids(fused).getLast()).isEqualTo(2L);
    // ties break by id: equal inputs give equal scores
    List<Record> tie = f.fuse(List.of(new Fusion.Ranked(list(7, 1, 3, 1), true)));
    assertThat(ids(tie)).containsExactly(3L, 7L);
  }

  @Test
  void weightedRrfStretchesPositionsAsQdrant() {
    Fusion f = Fusion.parse(M.readTree("{\"rrf\": {\"weights\": [3, 1]}}"), "query");
    List<Record> fused =
        f.fuse(
            List.of(
                new Fusion.Ranked(list(1, 9, 2, 8, 3, 7), true),
                new Fusion.Ranked(list(4, 9, 3, 8), true)));
    // 1 / ((position + 1) / weight + k - 1): list A's third counts as list B's first
    assertThat(fused.stream().filter(r -> r.id().number() == 4).findFirst().orElseThrow().score())
        .isEqualTo(0.5f);
    assertThat(fused.stream().filter(r -> r.id().number() == 3).findFirst().orElseThrow().score())
        .isEqualTo(0.5f + 1f / 3);
    assertThatThrownBy(() -> f.fuse(List.of(new Fusion.Ranked(list(1, 9), true))))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("got 2, expected 1");
  }

  @Test
  void dbsfUsesTheSampleDeviationAndASingleScoreIsHalf() {
    Fusion f = Fusion.parse(M.readTree("{\"fusion\": \"dbsf\"}"), "query");
    List<Record> fused = f.fuse(List.of(new Fusion.Ranked(list(1, 3, 2, 1), true)));
    // mean 2, sample sd sqrt(2): 1 -> (3 - (2 - 3·sqrt 2)) / (6·sqrt 2)
    double sd = Math.sqrt(2);
    assertThat(fused.getFirst().score()).isEqualTo((float) ((3 - (2 - 3 * sd)) / (6 * sd)));
    assertThat(f.fuse(List.of(new Fusion.Ranked(list(9, 42), true))).getFirst().score())
        .isEqualTo(0.5f);
  }

  @Test
  void badFusionNamesTheValue() {
    assertThatThrownBy(() -> Fusion.parse(M.readTree("{\"fusion\": \"max\"}"), "query"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("Wrong input: query.fusion must be rrf or dbsf [fusion=\"max\"]");
    assertThatThrownBy(() -> Fusion.parse(M.readTree("{\"rrf\": {\"k\": -1}}"), "query"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("[k=-1]");
    assertThatThrownBy(() -> Fusion.parse(M.readTree("{\"rrf\": {\"k\": 0}}"), "query"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("[k=0]");
    assertThat(Fusion.parse(M.readTree("[1, 2]"), "query")).isNull();
  }
}
