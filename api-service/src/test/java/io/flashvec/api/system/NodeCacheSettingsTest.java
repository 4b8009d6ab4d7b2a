package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.FlashVecProperties;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * {@code flashvec.search.node-cache-bytes} binds with its default of 64 MiB, takes 0 (no caches),
 * and a negative size stops the start-up naming it.
 */
class NodeCacheSettingsTest {

  private static FlashVecProperties bind(Map<String, String> settings) {
    return new Binder(new MapConfigurationPropertySource(settings))
        .bindOrCreate("flashvec", FlashVecProperties.class);
  }

  @Test
  void defaultsAndValuesReachTheEngineSettings() {
    assertThat(bind(Map.of()).search().nodeCacheBytes()).isNull();
    FlashVecProperties set = bind(Map.of("flashvec.search.node-cache-bytes", "256MB"));
    assertThat(set.search().nodeCacheBytes().toBytes()).isEqualTo(256L << 20);
    assertThat(NodeConfiguration.engineSettings(set, null)).isNotNull();
    FlashVecProperties off = bind(Map.of("flashvec.search.node-cache-bytes", "0"));
    assertThat(off.search().nodeCacheBytes().toBytes()).isZero();
    assertThat(NodeConfiguration.engineSettings(off, null)).isNotNull();
  }

  @Test
  void aNegativeSizeIsRefusedByName() {
    assertThatThrownBy(() -> bind(Map.of("flashvec.search.node-cache-bytes", "-1")))
        .rootCause()
        .hasMessage("flashvec.search.node-cache-bytes must be at least 0 [node-cache-bytes=-1B]");
  }
}
