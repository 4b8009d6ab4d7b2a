package io.flashvec.index.segment;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The bounded heap keeps exactly what sorting everything and taking the first k keeps. */
@ExtendWith(TestSeeds.Reporter.class)
class TopKTest {

  private record Entry(float score, int slot, int ord) {}

  private static List<Entry> drain(TopK top) {
    int n = top.size();
    float[] s = new float[n];
    int[] sl = new int[n];
    int[] o = new int[n];
    assertThat(top.drainBestFirst(s, sl, o)).isEqualTo(n);
    assertThat(top.size()).as("drained").isZero();
    List<Entry> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(new Entry(s[i], sl[i], o[i]));
    }
    return out;
  }

  private static Comparator<Entry> bestFirst(Distance d) {
    Comparator<Entry> c = Comparator.comparingDouble(Entry::score);
    return d.higherIsBetter() ? c.reversed() : c;
  }

  @ParameterizedTest
  @EnumSource(Distance.class)
  void keepsTheBestKLikeSorting(Distance d) {
    Random r = TestSeeds.random("TopKTest.keepsTheBestK." + d);
    int rounds = TestSeeds.atLeast(r, 200);
    TopK top = new TopK(d, 1);
    for (int round = 0; round < rounds; round++) {
      int n = r.nextInt(300);
      int k = r.nextInt(40);
      // Few distinct scores in some rounds, so duplicates are common.
      int distinct = r.nextBoolean() ? 5 : 1_000_000;
      List<Entry> all = new ArrayList<>(n);
      top.reset(k);
      for (int i = 0; i < n; i++) {
        Entry e = new Entry((r.nextInt(distinct) - distinct / 2) / 7f, r.nextInt(4), i);
        all.add(e);
        top.offer(e.score(), e.slot(), e.ord());
      }
      assertThat(top.capacity()).isEqualTo(k);
      assertThat(top.size()).isEqualTo(Math.min(n, k));
      List<Entry> offered = List.copyOf(all);
      all.sort(bestFirst(d));
      List<Entry> got = drain(top);
      String what = "round=" + round + ", n=" + n + ", k=" + k + ", " + TestSeeds.reproduceWith();
      // Scores equal sorting's, position by position.
      assertThat(got.stream().map(Entry::score).toList())
          .as(what)
          .isEqualTo(all.subList(0, got.size()).stream().map(Entry::score).toList());
      // Every kept entry is a real one (slot and ordinal travel with the score), each once.
      for (Entry e : got) {
        assertThat(offered.get(e.ord())).as(what).isEqualTo(e);
      }
      assertThat(got.stream().map(Entry::ord).distinct().count()).isEqualTo(got.size());
      // Strictly better entries than the last kept are all kept (ties may go either way).
      if (!got.isEmpty()) {
        float worst = got.getLast().score();
        long better = all.stream().filter(e -> d.better(e.score(), worst)).count();
        assertThat(got.stream().filter(e -> d.better(e.score(), worst)).count())
            .as(what)
            .isEqualTo(better);
      }
    }
  }

  @Test
  void zeroCapacityKeepsNothing() {
    for (Distance d : Distance.values()) {
      TopK top = new TopK(d, 0);
      for (int i = 0; i < 10; i++) {
        top.offer(i, 0, i);
      }
      assertThat(top.size()).isZero();
      assertThat(top.capacity()).isZero();
      assertThat(top.drainBestFirst(new float[0], new int[0], new int[0])).isZero();
      assertThat(top.accepts(Float.MAX_VALUE)).as("k=0 accepts nothing").isFalse();
      assertThat(top.accepts(-Float.MAX_VALUE)).as("k=0 accepts nothing").isFalse();
    }
  }

  @Test
  void allDuplicatesAreKeptUpToK() {
    TopK top = new TopK(Distance.DOT, 5);
    for (int i = 0; i < 12; i++) {
      top.offer(0.5f, 0, i);
    }
    List<Entry> got = drain(top);
    assertThat(got).hasSize(5).allMatch(e -> e.score() == 0.5f);
    assertThat(got.stream().map(Entry::ord).distinct().count()).isEqualTo(5);
  }

  @Test
  void acceptsTellsWhetherAnOfferWouldEnter() {
    TopK top = new TopK(Distance.EUCLID, 2);
    assertThat(top.accepts(100f)).as("not full").isTrue();
    top.offer(3f, 0, 0);
    top.offer(1f, 0, 1);
    assertThat(top.accepts(2f)).isTrue();
    assertThat(top.accepts(3f)).as("tie with the worst does not enter").isFalse();
    assertThat(top.accepts(4f)).isFalse();
    top.offer(4f, 0, 2);
    top.offer(2f, 0, 3);
    assertThat(drain(top)).containsExactly(new Entry(1f, 0, 1), new Entry(2f, 0, 3));
  }

  @Test
  void resetReusesTheHeapWithANewCapacity() {
    TopK top = new TopK(Distance.COSINE, 3);
    for (int i = 0; i < 10; i++) {
      top.offer(i, 1, i);
    }
    top.reset(20);
    assertThat(top.size()).isZero();
    for (int i = 0; i < 10; i++) {
      top.offer(i, 2, i);
    }
    List<Entry> got = drain(top);
    assertThat(got).hasSize(10);
    assertThat(got.getFirst()).isEqualTo(new Entry(9f, 2, 9));
    assertThat(got.getLast()).isEqualTo(new Entry(0f, 2, 0));
  }
}
