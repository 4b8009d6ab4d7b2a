package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.PointId;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class IdLocationsTest {

  @Test
  void agreesWithAHashMapUnderRandomOperations() {
    long seed = 20261125L;
    System.out.println("IdLocationsTest seed=" + seed);
    Random rnd = new Random(seed);
    IdLocations map = new IdLocations(List::of);
    Map<PointId, Long> model = new HashMap<>();
    for (int step = 0; step < 200_000; step++) {
      PointId id =
          rnd.nextInt(4) == 0
              ? PointId.of(new UUID(rnd.nextInt(8), rnd.nextInt(2_000)))
              : PointId.of(rnd.nextInt(5_000) - 2L); // -2 and -1 are 2^64-2 and 2^64-1
      long loc = ((long) rnd.nextInt(100) << 32) | rnd.nextInt(1 << 20);
      switch (rnd.nextInt(4)) {
        case 0, 1 -> assertThat(map.put(id, loc)).isEqualTo(orNone(model.put(id, loc)));
        case 2 -> assertThat(map.remove(id)).isEqualTo(orNone(model.remove(id)));
        default -> {
          // dropped only while still at loc
          Long now = model.get(id);
          map.dropAll(1, i -> id, i -> loc);
          if (now != null && now == loc) {
            model.remove(id);
          }
        }
      }
      assertThat(map.get(id)).isEqualTo(orNone(model.get(id)));
    }
    assertThat(map.entries()).isEqualTo(model.size());
    assertThat(map.smallest(null, Integer.MAX_VALUE))
        .containsExactlyElementsOf(new java.util.TreeSet<>(model.keySet()));
    PointId from = PointId.of(2_500);
    assertThat(map.smallest(from, 10))
        .containsExactlyElementsOf(
            new java.util.TreeSet<>(model.keySet()).tailSet(from).stream().limit(10).toList());
  }

  @Test
  void numericAndUuidIdsWithTheSameBitsAreDistinct() {
    IdLocations map = new IdLocations(List::of);
    map.put(PointId.of(7), 1);
    map.put(PointId.of(new UUID(0, 7)), 2);
    assertThat(map.get(PointId.of(7))).isEqualTo(1);
    assertThat(map.get(PointId.of(new UUID(0, 7)))).isEqualTo(2);
    assertThat(map.get(PointId.of(8))).isEqualTo(IdLocations.NONE);
  }

  @Test
  void rejectsNegativeLocations() {
    assertThatThrownBy(() -> new IdLocations(List::of).put(PointId.of(1), -5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-5");
  }

  private static long orNone(Long v) {
    return v == null ? IdLocations.NONE : v;
  }
}
