package io.flashvec.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.loadgen.client.SearchParams;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {
  @Test
  void parsesUnits() {
    assertThat(DurationConverter.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(DurationConverter.parse("10s")).isEqualTo(Duration.ofSeconds(10));
    assertThat(DurationConverter.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(DurationConverter.parse("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(DurationConverter.parse("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(DurationConverter.parse("7")).isEqualTo(Duration.ofSeconds(7));
    assertThat(DurationConverter.parse("0s")).isEqualTo(Duration.ZERO);
    assertThat(DurationConverter.parse("PT3S")).isEqualTo(Duration.ofSeconds(3));
    assertThatThrownBy(() -> DurationConverter.parse("ten"))
        .isInstanceOf(TypeConversionException.class)
        .hasMessage("invalid duration [value=ten, expected e.g. 500ms, 10s, 2m, 1h]");
  }

  @Test
  void sweepIsTheCartesianProductOfGivenLists() {
    assertThat(SearchCommand.sweep(null, null, null)).containsExactly(SearchParams.DEFAULTS);
    assertThat(SearchCommand.sweep(new int[] {10, 20}, new int[] {1, 4}, null))
        .containsExactly(
            new SearchParams(10, 1, null),
            new SearchParams(10, 4, null),
            new SearchParams(20, 1, null),
            new SearchParams(20, 4, null));
    assertThat(new SearchParams(40, null, 100).asMap())
        .containsExactly(
            java.util.Map.entry("search_list", 40), java.util.Map.entry("rerank_k", 100));
  }
}
