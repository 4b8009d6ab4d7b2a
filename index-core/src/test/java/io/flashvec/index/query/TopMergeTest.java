package io.flashvec.index.query;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TopMergeTest {

  private static Record rec(long id, float score) {
    return new Record(PointId.of(id), score, null, null);
  }

  @Test
  void keepsTheBestKWhateverTheOrderTheShardsAnswerIn() {
    Random r = TestSeeds.random("TopMergeTest.order");
    List<Record> all = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      all.add(rec(i, r.nextInt(50))); // many ties
    }
    for (Distance d : List.of(Distance.COSINE, Distance.EUCLID)) {
      Comparator<Record> better = Comparator.comparingDouble(Record::score);
      if (d.higherIsBetter()) {
        better = better.reversed();
      }
      List<Record> sorted = new ArrayList<>(all);
      sorted.sort(better.thenComparing(Record::id));
      for (int round = 0; round < 5; round++) {
        Collections.shuffle(all, r);
        TopMerge<Record> top = TopMerge.byScore(d, 30);
        top.offerAll(all.subList(0, 200));
        top.offerAll(all.subList(200, 500));
        assertThat(top.bestFirst(0)).as(d.name()).isEqualTo(sorted.subList(0, 30));
        assertThat(top.bestFirst(25)).isEqualTo(sorted.subList(25, 30));
        assertThat(top.bestFirst(30)).isEmpty();
      }
    }
  }

  @Test
  void textScoresRankHighFirstAndOrderedScrollsByValueThenId() {
    TopMerge<Record> text = TopMerge.byTextScore(2);
    text.offerAll(List.of(rec(1, 1.5f), rec(2, 3f), rec(3, 3f), rec(4, 0.5f)));
    assertThat(text.bestFirst(0)).containsExactly(rec(2, 3f), rec(3, 3f));
    TopMerge<Ordered> desc = TopMerge.byOrderValue(false, 3);
    desc.offerAll(
        List.of(
            new Ordered(rec(5, 0), 1.0),
            new Ordered(rec(4, 0), 7.0),
            new Ordered(rec(9, 0), 7.0),
            new Ordered(rec(1, 0), -2.0)));
    assertThat(desc.bestFirst(0).stream().map(o -> o.record().id().number()))
        .containsExactly(4L, 9L, 5L);
    assertThat(TopMerge.byScore(Distance.DOT, 0).bestFirst(0)).isEmpty();
  }
}
