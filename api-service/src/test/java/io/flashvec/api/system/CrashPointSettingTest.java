package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.cluster.node.EngineSettings;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code flashvec.testing.crash-point}: off by default, a named point halts (the file system the
 * engine then runs on is checked by the cluster module's {@code EngineTest}), a wrong one stops.
 */
class CrashPointSettingTest {

  private static void apply(String point, int hit) {
    NodeConfiguration.crashPoint(
        EngineSettings.builder(Path.of("unused")), new FlashVecProperties.Testing(point, hit));
  }

  @Test
  void blankMeansTheRealFileSystem() {
    assertThatCode(() -> apply("", 1)).doesNotThrowAnyException();
    assertThatCode(() -> apply(null, 1)).doesNotThrowAnyException();
  }

  @Test
  void aNamedPointHaltsAtItsHit() {
    assertThatCode(() -> apply("seal-frozen", 3)).doesNotThrowAnyException();
  }

  @Test
  void anUnknownPointOrHitIsRefused() {
    assertThatThrownBy(() -> apply("seal-frozn", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "flashvec.testing.crash-point: unknown crash point [value=seal-frozn, known=[");
    assertThatThrownBy(() -> apply("seal-frozen", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("flashvec.testing.crash-point-hit must be at least 1 [crash-point-hit=0]");
  }
}
