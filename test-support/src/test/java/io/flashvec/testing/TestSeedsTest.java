package io.flashvec.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The seed is hex, as printed, and everything derived from it is reproducible. */
class TestSeedsTest {

  @Test
  void theSeedIsReadAsTheHexItIsPrintedAs() {
    long seed = 0xDEADBEEF12345678L;
    assertThat(TestSeeds.parse(TestSeeds.hex(seed))).isEqualTo(seed);
    assertThat(TestSeeds.parse("0x" + TestSeeds.hex(seed))).isEqualTo(seed);
    assertThat(TestSeeds.parse(" 1a ")).isEqualTo(0x1AL);
    // 10 is sixteen, not ten: a decimal reading would silently run another seed
    assertThat(TestSeeds.parse("10")).isEqualTo(16L);
    assertThatThrownBy(() -> TestSeeds.parse("seed"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tests.seed is not a hex number [tests.seed=seed]");
  }

  @Test
  void generatorsDependOnlyOnTheMasterSeedAndTheSalt() {
    assertThat(TestSeeds.random("a").nextLong()).isEqualTo(TestSeeds.random("a").nextLong());
    assertThat(TestSeeds.seed("a")).isNotEqualTo(TestSeeds.seed("b"));
    assertThat(TestSeeds.splittableRandom("a").nextLong())
        .isEqualTo(TestSeeds.splittableRandom("a").nextLong());
    assertThat(TestSeeds.reproduceWith())
        .isEqualTo("-Dtests.seed=" + TestSeeds.hex(TestSeeds.masterSeed()));
  }

  @Test
  void roundsGetDistinctSeedsDerivedFromTheSalt() throws Exception {
    List<Long> seeds = new ArrayList<>();
    TestSeeds.rounds("TestSeedsTest", 3, (round, seed) -> seeds.add(seed));
    assertThat(seeds)
        .containsExactly(
            TestSeeds.derive(TestSeeds.seed("TestSeedsTest"), 0),
            TestSeeds.derive(TestSeeds.seed("TestSeedsTest"), 1),
            TestSeeds.derive(TestSeeds.seed("TestSeedsTest"), 2))
        .doesNotHaveDuplicates();
  }
}
