package io.flashvec.loadgen.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LatencySummaryTest {

  @Test
  void percentilesOfOneToHundredMilliseconds() {
    Histogram h = LatencySummary.newHistogram();
    for (int ms = 1; ms <= 100; ms++) {
      LatencySummary.record(h, ms * 1_000_000L);
    }
    LatencySummary s = LatencySummary.of(h);
    // 3 significant digits: values are exact to within 0.1 %
    assertThat(s.count()).isEqualTo(100);
    assertThat(s.p50Ms()).isCloseTo(50, within(0.1));
    assertThat(s.p95Ms()).isCloseTo(95, within(0.1));
    assertThat(s.p99Ms()).isCloseTo(99, within(0.1));
    assertThat(s.maxMs()).isCloseTo(100, within(0.1));
    assertThat(s.meanMs()).isCloseTo(50.5, within(0.1));
  }

  @Test
  void aSingleOutlierShowsInP99AndMaxOnly() {
    Histogram h = LatencySummary.newHistogram();
    for (int i = 0; i < 999; i++) {
      LatencySummary.record(h, 2_000_000L);
    }
    LatencySummary.record(h, 5_000_000_000L);
    LatencySummary s = LatencySummary.of(h);
    assertThat(s.p50Ms()).isCloseTo(2, within(0.01));
    assertThat(s.p99Ms()).isCloseTo(2, within(0.01));
    assertThat(s.maxMs()).isCloseTo(5000, within(5.0));
  }

  @Test
  void emptyHistogramIsAllZeros() {
    assertThat(LatencySummary.of(LatencySummary.newHistogram()))
        .isEqualTo(new LatencySummary(0, 0, 0, 0, 0, 0, 0));
  }

  @Test
  void clampsOutOfRangeValues() {
    Histogram h = LatencySummary.newHistogram();
    LatencySummary.record(h, 0);
    LatencySummary.record(h, Long.MAX_VALUE);
    assertThat(h.getTotalCount()).isEqualTo(2);
  }

  @Test
  void progressLineShowsRateAndEta() {
    try (ProgressBar bar = new ProgressBar("ingest", 1000, null)) {
      bar.add(250);
      assertThat(bar.line()).contains("25.0%").contains("250/1000").contains("ETA");
    }
    assertThat(ProgressBar.formatSeconds(3725)).isEqualTo("1:02:05");
    assertThat(ProgressBar.formatSeconds(65)).isEqualTo("1:05");
  }
}
