package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official Qdrant Python client, in REST mode, drives a real server through collections,
 * upserts (list and batch), retrieve, count, scroll, query, query batch, delete and an error.
 * {@code ./flashvec test} installs the client in a venv and sets {@code FLASHVEC_QDRANT_PYTHON}; a
 * plain {@code mvn verify} without it skips this test and says so.
 */
class QdrantClientIT {

  @TempDir Path tmp;

  @Test
  void officialQdrantPythonClientWorksUnchanged() throws Exception {
    String python = System.getenv("FLASHVEC_QDRANT_PYTHON");
    assumeTrue(
        python != null && !python.isBlank(),
        "FLASHVEC_QDRANT_PYTHON is not set (./flashvec test sets it); skipping the Qdrant client check");
    Path script = Path.of("src/test/python/qdrant_client_check.py").toAbsolutePath();
    try (ServerProcess server =
        new ServerProcess(tmp.resolve("data"), tmp.resolve("server.log")).start()) {
      Process p =
          new ProcessBuilder(python, script.toString(), server.url())
              .redirectErrorStream(true)
              .start();
      boolean done = p.waitFor(120, TimeUnit.SECONDS);
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!done) {
        p.destroyForcibly();
      }
      assertThat(done).as("client check finished in time: " + out).isTrue();
      assertThat(p.exitValue()).as(out + "\nserver log:\n" + server.logTail()).isZero();
      assertThat(out).contains("qdrant-client check passed");
    }
  }
}
