package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.FlashVecProperties;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * {@code flashvec.merge.*} bind with their defaults, out-of-range values stop the start-up naming
 * them, and the removed {@code flashvec.compaction.max-small-segments} is refused naming its
 * replacement rather than ignored.
 */
class MergeSettingsTest {

  private static FlashVecProperties bind(Map<String, String> settings) {
    return new Binder(new MapConfigurationPropertySource(settings))
        .bindOrCreate("flashvec", FlashVecProperties.class);
  }

  @Test
  void defaultsAndValuesReachTheEngineSettings() {
    FlashVecProperties defaults = bind(Map.of());
    assertThat(defaults.merge().segmentsPerTier()).isEqualTo(3);
    assertThat(defaults.merge().maxSegmentPoints()).isEqualTo(20_000_000);
    FlashVecProperties set =
        bind(
            Map.of(
                "flashvec.merge.segments-per-tier", "4",
                "flashvec.merge.max-segment-points", "250000"));
    assertThat(set.merge().segmentsPerTier()).isEqualTo(4);
    assertThat(set.merge().maxSegmentPoints()).isEqualTo(250_000);
    assertThat(NodeConfiguration.engineSettings(set, null)).isNotNull();
  }

  @Test
  void outOfRangeValuesAreRefusedByName() {
    assertThatThrownBy(() -> bind(Map.of("flashvec.merge.segments-per-tier", "1")))
        .rootCause()
        .hasMessage("flashvec.merge.segments-per-tier must be at least 2 [segments-per-tier=1]");
    assertThatThrownBy(() -> bind(Map.of("flashvec.merge.max-segment-points", "0")))
        .rootCause()
        .hasMessage("flashvec.merge.max-segment-points must be at least 1 [max-segment-points=0]");
  }

  @Test
  void theRemovedMaxSmallSegmentsIsRefusedNamingItsReplacement() {
    assertThatThrownBy(() -> bind(Map.of("flashvec.compaction.max-small-segments", "2")))
        .rootCause()
        .hasMessageStartingWith("flashvec.compaction.max-small-segments is no longer supported")
        .hasMessageContaining("flashvec.merge.segments-per-tier");
  }
}
