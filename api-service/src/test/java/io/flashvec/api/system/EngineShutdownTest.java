package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.cluster.node.EngineSettings;
import io.flashvec.cluster.node.FlashVecNode;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.testing.Await;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first step of a shutdown cancels background work once, and its watchdog halts only a JVM that
 * is shutting down (a context closed in a running JVM, as tests do, is left alone).
 */
class EngineShutdownTest {

  @TempDir Path data;

  @Test
  void stopCancelsBackgroundWorkOnceAndTheWatchdogSparesARunningJvm() throws Exception {
    try (FlashVecNode node =
        FlashVecNode.standalone(EngineSettings.builder(data).sealThresholdPoints(100).build())) {
      node.start();
      Await.until(Duration.ofSeconds(60), "the engine is ready", () -> node.service().ready());
      node.service()
          .createCollection("c", new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT));
      EngineShutdown shutdown =
          new EngineShutdown(node::stopBackgroundWork, Duration.ofMillis(100));
      assertThat(shutdown.getPhase())
          .as("stops before the web server")
          .isEqualTo(Integer.MAX_VALUE);
      shutdown.start();
      assertThat(shutdown.isRunning()).isTrue();
      shutdown.stop();
      assertThat(shutdown.isRunning()).isFalse();
      shutdown.stop(); // idempotent
      // past the grace period: this JVM is not shutting down, so no halt
      Await.holdsFor(
          Duration.ofMillis(400),
          "this JVM is not shutting down",
          () -> !EngineShutdown.jvmShuttingDown());
      // Reads and writes go on until the service closes.
      assertThat(node.service().count("c")).isZero();
    }
  }
}
