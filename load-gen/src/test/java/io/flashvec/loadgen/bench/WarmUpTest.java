package io.flashvec.loadgen.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The warm-up's stop rule, fed window figures directly: no clock, no sleeping. */
class WarmUpTest {
  private static final WarmUp.Policy POLICY =
      new WarmUp.Policy(Duration.ofSeconds(2), Duration.ofSeconds(1), 0.10, Duration.ofSeconds(8));

  @Test
  void stopsOnceThreeSuccessiveWindowsAgreeWithinTheTolerance() {
    WarmUp w = new WarmUp(POLICY);
    // a server just started: QPS climbs while caches fill and the JIT compiles, then settles
    assertThat(w.add(1.0, 200)).isFalse();
    assertThat(w.add(1.0, 600)).isFalse();
    assertThat(w.add(1.0, 950)).isFalse();
    assertThat(w.add(1.0, 1000)).isFalse(); // 600..1000: 40% apart
    assertThat(w.add(1.0, 1020)).isTrue(); // 950, 1000, 1020: within 7%
    assertThat(w.stable()).isTrue();
    assertThat(w.seconds()).isEqualTo(5.0);
  }

  @Test
  void steadyWindowsBeforeTheMinimumDoNotEndIt() {
    WarmUp w =
        new WarmUp(
            new WarmUp.Policy(
                Duration.ofSeconds(4), Duration.ofSeconds(1), 0.10, Duration.ofSeconds(8)));
    assertThat(w.add(1.0, 1000)).isFalse();
    assertThat(w.add(1.0, 1000)).isFalse();
    assertThat(w.add(1.0, 1000)).isFalse(); // steady, but only 3 s of the 4 s floor
    assertThat(w.stable()).isTrue();
    assertThat(w.add(1.0, 1000)).isTrue();
  }

  @Test
  void stopsAtTheCapAndSaysItDidNotSettle() {
    WarmUp w = new WarmUp(POLICY);
    boolean done = false;
    int windows = 0;
    while (!done) {
      // alternates between 500 and 1000 QPS: never within 10%
      done = w.add(1.0, windows++ % 2 == 0 ? 500 : 1000);
    }
    assertThat(windows).isEqualTo(8);
    assertThat(w.stable()).isFalse();
    assertThat(w.windowQps()).hasSize(8);
  }

  @Test
  void windowsOfDifferentLengthsAreComparedAsRates() {
    WarmUp w = new WarmUp(POLICY);
    w.add(0.5, 500);
    w.add(2.0, 2000);
    assertThat(w.add(1.0, 1050)).isTrue(); // 1000, 1000, 1050 QPS after 3.5 s
  }

  @Test
  void aFixedWarmUpRunsItsTimeAndReportsWhetherItSettled() {
    WarmUp w = new WarmUp(WarmUp.Policy.fixed(Duration.ofSeconds(3)));
    assertThat(w.add(1.0, 100)).isFalse();
    assertThat(w.add(1.0, 500)).isFalse();
    assertThat(w.add(1.0, 900)).isTrue();
    assertThat(w.stable()).isFalse();
    assertThat(WarmUp.Policy.fixed(Duration.ZERO).enabled()).isFalse();
  }

  @Test
  void refusesPoliciesItCannotHonour() {
    assertThatThrownBy(
            () ->
                new WarmUp.Policy(
                    Duration.ofSeconds(5), Duration.ofSeconds(1), 0.1, Duration.ofSeconds(2)))
        .hasMessageContaining("cap is below its minimum")
        .hasMessageContaining("PT2S");
    assertThatThrownBy(
            () ->
                new WarmUp.Policy(
                    Duration.ofSeconds(1), Duration.ofSeconds(1), 1.5, Duration.ofSeconds(2)))
        .hasMessageContaining("tolerance=1.5");
    assertThat(WarmUp.Policy.atLeast(Duration.ofSeconds(60)).max())
        .isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void variationIsTheCoefficientOfVariationOfWindowQps() {
    assertThat(WarmUp.variation(List.of(100.0, 100.0))).isNaN();
    assertThat(WarmUp.variation(List.of(100.0, 100.0, 100.0))).isZero();
    // mean 100, population standard deviation sqrt(200/3)
    assertThat(WarmUp.variation(List.of(90.0, 100.0, 110.0)))
        .isCloseTo(Math.sqrt(200.0 / 3) / 100, within(1e-12));
  }
}
