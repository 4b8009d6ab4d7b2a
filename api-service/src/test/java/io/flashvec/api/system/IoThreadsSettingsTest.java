package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.FlashVecProperties;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * {@code flashvec.search.io-threads} binds with its default of 32, and a count outside 1..1024
 * stops the start-up naming it.
 */
class IoThreadsSettingsTest {

  private static FlashVecProperties bind(Map<String, String> settings) {
    return new Binder(new MapConfigurationPropertySource(settings))
        .bindOrCreate("flashvec", FlashVecProperties.class);
  }

  @Test
  void defaultAndValueBind() {
    assertThat(bind(Map.of()).search().ioThreads()).isEqualTo(32);
    assertThat(bind(Map.of("flashvec.search.io-threads", "128")).search().ioThreads())
        .isEqualTo(128);
  }

  @Test
  void nonsenseIsRefusedByName() {
    for (String bad : new String[] {"0", "-4", "1025"}) {
      assertThatThrownBy(() -> bind(Map.of("flashvec.search.io-threads", bad)))
          .rootCause()
          .hasMessage("flashvec.search.io-threads must be in 1..1024 [io-threads=" + bad + "]");
    }
  }
}
