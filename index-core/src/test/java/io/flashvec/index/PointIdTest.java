package io.flashvec.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@ExtendWith(TestSeeds.Reporter.class)
class PointIdTest {

  private static UUID randomUuid(Random r) {
    return new UUID(r.nextLong(), r.nextLong());
  }

  @Test
  void numbersRoundTripThroughTheirDecimalForm() {
    Random r = TestSeeds.random("PointIdTest.numbers");
    List<Long> values = new ArrayList<>(List.of(0L, 1L, Long.MAX_VALUE, Long.MIN_VALUE, -1L));
    int n = TestSeeds.atLeast(r, 500);
    for (int i = 0; i < n; i++) {
      values.add(r.nextInt(4) == 0 ? (long) r.nextInt(1000) : r.nextLong());
    }
    for (long v : values) {
      PointId id = PointId.of(v);
      String s = Long.toUnsignedString(v);
      assertThat(id.toString()).isEqualTo(s);
      assertThat(PointId.parse(s)).isEqualTo(id);
      assertThat(PointId.parse(s).hashCode()).isEqualTo(id.hashCode());
      assertThat(id.isUuid()).isFalse();
      assertThat(id.number()).isEqualTo(v);
    }
  }

  @Test
  void maxUnsignedIsAccepted() {
    PointId max = PointId.parse("18446744073709551615");
    assertThat(max.number()).isEqualTo(-1L);
    assertThat(max.toString()).isEqualTo("18446744073709551615");
    assertThat(max).isEqualTo(PointId.of(-1L));
    assertThat(PointId.parse("00000000000000000042")).isEqualTo(PointId.of(42));
  }

  @ParameterizedTest
  @ValueSource(strings = {"18446744073709551616", "99999999999999999999"})
  void numbersOutOfRangeAreRejected(String s) {
    assertThatThrownBy(() -> PointId.parse(s))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("point id out of range for an unsigned 64-bit integer [id=" + s + "]");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        " ",
        "-1",
        "+1",
        "1.5",
        "1e3",
        "0x10",
        " 12",
        "12 ",
        "abc",
        "123456789012345678901", // 21 digits
        "550e8400-e29b-41d4-a716-44665544000", // one digit short
        "550e8400-e29b-41d4-a716-4466554400000", // one digit long
        "550e8400e29b41d4a716-446655440000",
        "550e8400-e29b-41d4-a716-44665544000g",
        "550e8400e29b41d4a71644665544000g",
        "{550e8400-e29b-41d4-a716-446655440000",
        "{550e8400e29b41d4a716446655440000}",
        "{{550e8400-e29b-41d4-a716-446655440000}}",
        "urn:uuid:550e8400-e29b-41d4-a716-44665544000g",
        "urn:550e8400-e29b-41d4-a716-446655440000",
        "550e8400-e29b-41d4-a716-446655440000 ",
        "5-5-5-5-5",
        "1-1-1-1-1",
        // UUID.fromString accepts a sign and non-ASCII digits; ids must not.
        "+0000000-0000-0000-0000-000000000000",
        "+0000000000000000000000000000000",
        "\u0661\u0661\u0661\u0661\u0661\u0661\u0661\u0661-0000-0000-0000-000000000000",
        "\uff10\uff10\uff10\uff10\uff10\uff10\uff10\uff10000000000000000000000000",
        "\u0661\u0662\u0663" // Arabic-Indic digits 123
      })
  void garbageIsRejected(String s) {
    assertThatThrownBy(() -> PointId.parse(s))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("point id must be an unsigned integer or a UUID [id=" + s + "]");
  }

  @Test
  void nullIsRejected() {
    assertThatThrownBy(() -> PointId.parse(null))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("point id must be an unsigned integer or a UUID [id=null]");
  }

  @Test
  void uuidFormsAllParseToTheCanonicalLowerCaseForm() {
    Random r = TestSeeds.random("PointIdTest.uuids");
    int n = TestSeeds.atLeast(r, 200);
    for (int i = 0; i < n; i++) {
      UUID u = randomUuid(r);
      String canonical = u.toString();
      PointId id = PointId.of(u);
      assertThat(id.isUuid()).isTrue();
      assertThat(id.uuid()).isEqualTo(u);
      assertThat(id.toString()).isEqualTo(canonical);
      for (String form :
          List.of(
              canonical,
              canonical.toUpperCase(Locale.ROOT),
              canonical.replace("-", ""),
              canonical.replace("-", "").toUpperCase(Locale.ROOT),
              "{" + canonical + "}", // braced and URN forms: Qdrant's parser takes them too
              "urn:uuid:" + canonical,
              "URN:UUID:" + canonical.toUpperCase(Locale.ROOT))) {
        assertThat(PointId.parse(form)).as(form).isEqualTo(id);
        assertThat(PointId.parse(form).toString()).as(form).isEqualTo(canonical);
      }
    }
    // 32 decimal digits are a UUID written without dashes, not a (too large) number.
    PointId digits = PointId.parse("12345678901234567890123456789012");
    assertThat(digits.isUuid()).isTrue();
    assertThat(digits.toString()).isEqualTo("12345678-9012-3456-7890-123456789012");
  }

  @Test
  void aNumberAndAUuidWithTheSameBitsDiffer() {
    PointId n = PointId.of(7);
    PointId u = PointId.of(new UUID(0, 7));
    assertThat(n).isNotEqualTo(u);
    assertThat(n.hash64()).isNotEqualTo(u.hash64());
    assertThat(n.compareTo(u)).isNegative();
    assertThatThrownBy(n::uuid).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(u::number).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void orderIsNumbersUnsignedThenUuidsUnsigned() {
    List<PointId> expected =
        List.of(
            PointId.of(0),
            PointId.of(1),
            PointId.of(Long.MAX_VALUE),
            PointId.of(Long.MIN_VALUE), // 2^63: unsigned, so after MAX_VALUE
            PointId.of(-1), // 2^64 - 1
            PointId.of(new UUID(0, 0)),
            PointId.of(new UUID(0, 1)),
            PointId.of(new UUID(0, -1)),
            PointId.of(new UUID(1, 0)),
            PointId.of(new UUID(Long.MAX_VALUE, 0)),
            PointId.of(new UUID(Long.MIN_VALUE, 0)),
            PointId.of(UUID.fromString("ffffffff-ffff-ffff-ffff-ffffffffffff")));
    Random r = TestSeeds.random("PointIdTest.order");
    List<PointId> shuffled = new ArrayList<>(expected);
    java.util.Collections.shuffle(shuffled, r);
    shuffled.sort(null);
    assertThat(shuffled).containsExactlyElementsOf(expected);
    for (int i = 0; i < expected.size(); i++) {
      for (int j = 0; j < expected.size(); j++) {
        assertThat(Integer.signum(expected.get(i).compareTo(expected.get(j))))
            .as("%s vs %s", expected.get(i), expected.get(j))
            .isEqualTo(Integer.compare(i, j));
      }
    }
  }

  @Test
  void orderMatchesTheStringOrderOfUuidsAndTheNumericOrderOfNumbers() {
    Random r = TestSeeds.random("PointIdTest.orderRandom");
    int n = TestSeeds.atLeast(r, 1000);
    for (int i = 0; i < n; i++) {
      long a = r.nextLong();
      long b = r.nextInt(3) == 0 ? a : r.nextLong();
      assertThat(Integer.signum(PointId.of(a).compareTo(PointId.of(b))))
          .isEqualTo(Integer.signum(Long.compareUnsigned(a, b)));
      UUID ua = randomUuid(r);
      UUID ub = r.nextInt(3) == 0 ? ua : randomUuid(r);
      // Canonical lower-case hex strings compare like the unsigned 128-bit values.
      assertThat(Integer.signum(PointId.of(ua).compareTo(PointId.of(ub))))
          .as("%s vs %s", ua, ub)
          .isEqualTo(Integer.signum(ua.toString().compareTo(ub.toString())));
    }
  }

  @Test
  void shardIsStableAndInRange() {
    Random r = TestSeeds.random("PointIdTest.shard");
    int n = TestSeeds.atLeast(r, 2000);
    for (int shards : new int[] {1, 2, 3, 7, 1024}) {
      int[] histogram = new int[shards];
      for (int i = 0; i < n; i++) {
        PointId id = r.nextBoolean() ? PointId.of(r.nextLong()) : PointId.of(randomUuid(r));
        int s = id.shard(shards);
        assertThat(s).isBetween(0, shards - 1);
        assertThat(PointId.parse(id.toString()).shard(shards)).isEqualTo(s);
        histogram[s]++;
      }
      if (shards <= 7) {
        // A well-mixed hash spreads ids evenly; allow a wide margin.
        for (int count : histogram) {
          assertThat(count).isGreaterThan(n / shards / 2);
        }
      }
    }
    // Negative (>= 2^63) ids must not produce negative shards.
    assertThat(PointId.of(-1).shard(3)).isBetween(0, 2);
    assertThat(PointId.of(Long.MIN_VALUE).shard(5)).isBetween(0, 4);
  }

  @Test
  void hashIsStableAcrossReleases() {
    // Shard routing depends on hash64: these values must never change, or existing points land in
    // the wrong shard after an upgrade (pinned from the first release).
    assertThat(PointId.of(0).hash64()).isEqualTo(0x0000000000000000L);
    assertThat(PointId.of(1).hash64()).isEqualTo(0x5692161d100b05e5L);
    assertThat(PointId.of(-1).hash64()).isEqualTo(0xb4d055fcf2cbbd7bL);
    assertThat(PointId.parse("550e8400-e29b-41d4-a716-446655440000").hash64())
        .isEqualTo(0x9a622efebf2e9b14L);
    assertThat(PointId.of(1).shard(3))
        .isEqualTo((int) Long.remainderUnsigned(0x5692161d100b05e5L, 3));
    assertThat(PointId.of(-1).shard(7))
        .isEqualTo((int) Long.remainderUnsigned(0xb4d055fcf2cbbd7bL, 7));
  }
}
