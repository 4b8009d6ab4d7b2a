package io.flashvec.index.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code slice} condition: SipHash-2-4 as published, Qdrant's slice hash of a point id, and
 * slices that partition the id space.
 */
@ExtendWith(TestSeeds.Reporter.class)
class SliceTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  @Test
  void sipHashMatchesThePublishedVectors() {
    // the paper's example: key 00..0f, message 00..0e
    byte[] m = new byte[15];
    for (int i = 0; i < m.length; i++) {
      m[i] = (byte) i;
    }
    long k0 = 0x0706050403020100L;
    long k1 = 0x0f0e0d0c0b0a0908L;
    assertThat(SipHash.hash24(k0, k1, m)).isEqualTo(0xa129ca6149be45e5L);
    assertThat(SipHash.hash24(k0, k1, new byte[0])).isEqualTo(0x726fdb47dd0e0e31L);
  }

  @Test
  void pointIdsHashAsQdrantsSliceContractSays() {
    assertThat(SipHash.ofPointId(PointId.of(0))).isEqualTo(0xe849e8bb6ffe2567L);
    assertThat(SipHash.ofPointId(PointId.of(42))).isEqualTo(0x0fc2553f07619dd3L);
    assertThat(
            SipHash.ofPointId(PointId.of(UUID.fromString("550e8400-e29b-41d4-a716-446655440000"))))
        .isEqualTo(0xf5d0ca21ba34d504L);
  }

  @Test
  void slicesOfOneTotalPartitionTheIdsAndNestInLargerOnes() {
    Random r = TestSeeds.random("SliceTest.partition");
    for (int i = 0; i < 2_000; i++) {
      PointId id =
          r.nextBoolean()
              ? PointId.of(r.nextLong() >>> 1)
              : PointId.of(new UUID(r.nextLong(), r.nextLong()));
      int total = 1 + r.nextInt(9);
      int in = 0;
      for (int index = 0; index < total; index++) {
        if (new Condition.Slice(total, index).contains(id)) {
          in++;
        }
      }
      assertThat(in).as("slices of %d holding %s", total, id).isEqualTo(1);
      if (new Condition.Slice(4, 1).contains(id)) {
        assertThat(new Condition.Slice(2, 1).contains(id)).isTrue();
      }
      assertThat(new Condition.Slice(0xFFFF_FFFFL, 0).contains(id))
          .isEqualTo(Long.remainderUnsigned(SipHash.ofPointId(id), 0xFFFF_FFFFL) == 0);
    }
  }

  private static Filter parse(String json) {
    return FilterParser.parse(M.readTree(json), "filter");
  }

  @Test
  void sliceParsesEvaluatesAndRefusesBadBounds() {
    Filter f = parse("{\"must\":[{\"slice\":{\"total\":4,\"index\":3}}]}");
    assertThat(f.must()).containsExactly(new Condition.Slice(4, 3));
    FilterEvaluator ev = new FilterEvaluator(f);
    int matched = 0;
    for (int i = 0; i < 400; i++) {
      boolean in = ev.matches(PointId.of(i), "{}".getBytes(StandardCharsets.UTF_8));
      assertThat(in).isEqualTo(Long.remainderUnsigned(SipHash.ofPointId(PointId.of(i)), 4) == 3);
      matched += in ? 1 : 0;
    }
    assertThat(matched).isBetween(60, 140);
    assertThatThrownBy(() -> parse("{\"must\":[{\"slice\":{\"total\":4,\"index\":4}}]}"))
        .isInstanceOf(FilterParser.ValidationException.class)
        .hasMessageContaining("Slice index must be less than the total number of slices")
        .hasMessageContaining("[index=4, total=4]");
    assertThatThrownBy(() -> parse("{\"must\":[{\"slice\":{\"total\":0,\"index\":0}}]}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("filter.must[0].slice.total: expected an integer in [1, 4294967295]");
    assertThatThrownBy(() -> parse("{\"must\":[{\"slice\":{\"total\":2}}]}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("filter.must[0].slice.index");
  }
}
