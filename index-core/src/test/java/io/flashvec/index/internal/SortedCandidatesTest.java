package io.flashvec.index.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SortedCandidatesTest {

  record Entry(int id, float dist) {}

  /** Both lists keep the best entries in ascending order, as a sorted model list does. */
  @Test
  void insertAndOfferKeepTheBestInOrderLikeASortedList() {
    Random r = TestSeeds.random("sorted-candidates");
    for (int round = 0; round < 200; round++) {
      int cap = 1 + r.nextInt(20);
      int[] ids = new int[cap + 1];
      float[] dists = new float[cap + 1];
      boolean[] expanded = new boolean[cap + 1];
      int size = 0;
      int[] resIds = new int[cap];
      float[] resDists = new float[cap];
      int resSize = 0;
      List<Entry> model = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        // few distinct distances: ties must keep the earlier entry first
        float d = r.nextInt(25);
        int pos = SortedCandidates.insert(ids, dists, expanded, size, i, d, cap);
        if (pos >= 0 && size < cap) {
          size++;
        }
        resSize = SortedCandidates.offer(resIds, resDists, resSize, cap, i, d);
        model.add(new Entry(i, d));
        model.sort(Comparator.comparingDouble(Entry::dist)); // stable: ties by arrival
        if (model.size() > cap) {
          model.removeLast();
        }
        int id = i;
        boolean kept = model.stream().anyMatch(e -> e.id() == id);
        assertThat(pos >= 0).as("round %d, step %d: taken iff kept", round, i).isEqualTo(kept);
        assertThat(size).isEqualTo(model.size());
        assertThat(resSize).isEqualTo(model.size());
        for (int j = 0; j < size; j++) {
          assertThat(ids[j]).as("candidates[%d]", j).isEqualTo(model.get(j).id());
          assertThat(dists[j]).isEqualTo(model.get(j).dist());
          assertThat(resIds[j]).as("results[%d]", j).isEqualTo(model.get(j).id());
          assertThat(resDists[j]).isEqualTo(model.get(j).dist());
        }
      }
    }
  }
}
