package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.HaltingFileIO;
import org.junit.jupiter.api.Test;

/** {@code flashvec.testing.crash-point}: off by default, a named point halts, a wrong one stops. */
class CrashPointSettingTest {

  @Test
  void blankMeansTheRealFileSystem() {
    assertThat(EngineConfiguration.fileIo(new FlashVecProperties.Testing("", 1)))
        .isSameAs(FileIO.DEFAULT);
    assertThat(EngineConfiguration.fileIo(new FlashVecProperties.Testing(null, 1)))
        .isSameAs(FileIO.DEFAULT);
  }

  @Test
  void aNamedPointHaltsAtItsHit() {
    FileIO io = EngineConfiguration.fileIo(new FlashVecProperties.Testing("seal-frozen", 3));
    assertThat(io).isInstanceOf(HaltingFileIO.class);
    assertThat(((HaltingFileIO) io).point()).isEqualTo(CrashPoint.SEAL_FROZEN);
    assertThat(((HaltingFileIO) io).hit()).isEqualTo(3);
  }

  @Test
  void anUnknownPointOrHitIsRefused() {
    assertThatThrownBy(
            () -> EngineConfiguration.fileIo(new FlashVecProperties.Testing("seal-frozn", 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "flashvec.testing.crash-point: unknown crash point [value=seal-frozn, known=[");
    assertThatThrownBy(
            () -> EngineConfiguration.fileIo(new FlashVecProperties.Testing("seal-frozen", 0)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("flashvec.testing.crash-point-hit must be at least 1 [crash-point-hit=0]");
  }
}
