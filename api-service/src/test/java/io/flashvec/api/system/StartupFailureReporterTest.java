package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.cluster.DataDirectoryInUseException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class StartupFailureReporterTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final StartupFailureReporter reporter =
      new StartupFailureReporter(new PrintStream(out, true, StandardCharsets.UTF_8));

  @Test
  void aLockedDataDirectoryDeepInTheCauseChainIsOneLineNamingTheHolder() {
    Exception failure =
        new RuntimeException(
            "bean creation failed",
            new IllegalStateException(
                "wrapped", new DataDirectoryInUseException(Path.of("/data/fv"), "4242")));
    assertThat(reporter.reportException(failure)).isTrue();
    assertThat(out.toString(StandardCharsets.UTF_8))
        .isEqualTo(
            "flashvec: cannot start: data directory is used by another FlashVec process"
                + " [dataDir=/data/fv, pid=4242]; stop that process or choose another"
                + " --flashvec.data-dir"
                + System.lineSeparator());
  }

  @Test
  void otherFailuresAreLeftToSpringsReport() {
    assertThat(reporter.reportException(new IllegalStateException("port in use"))).isFalse();
    assertThat(out.size()).isZero();
  }
}
