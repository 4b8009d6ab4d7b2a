package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.testing.Await;
import io.flashvec.testing.SuppressForbidden;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * SIGTERM while an index build runs: the process exits well within the grace period (the build is
 * cancelled, not awaited), the log says what was cancelled and that the WAL was synced and closed,
 * and after the restart the build runs again and every point is there.
 */
class ShutdownIT {

  private static final int DIM = 32;
  private static final int POINTS = 20_000;

  @TempDir Path tmp;

  @Test
  @SuppressForbidden("SIGTERM comes 1.5 s into the build, in its graph phase, which logs nothing")
  void sigtermCancelsARunningBuildAndTheRestartBuildsItAgain() throws Exception {
    Random rnd = new Random(TestSeeds.seed("ShutdownIT"));
    Path data = tmp.resolve("data");
    Path log = tmp.resolve("server.log");
    String[] args = {
      "--flashvec.segment.live-graph=false", // sealing builds the graph from scratch
      "--flashvec.segment.seal-threshold-points=" + POINTS,
      "--flashvec.shutdown.grace-period=20s"
    };
    long stopMillis;
    try (ServerProcess server = new ServerProcess(data, log, args).start()) {
      Http http = new Http(server.url());
      // A slow graph (long construction lists) so that the build is still running at SIGTERM.
      String create =
          "{\"vectors\":{\"size\":"
              + DIM
              + ",\"distance\":\"Euclid\"},"
              + "\"index\":{\"max_degree\":64,\"build_search_list\":200}}";
      assertThat(http.put("/collections/c", create).status()).isEqualTo(200);
      for (int from = 1; from <= POINTS + 1; from += 2000) {
        Http.Response r =
            http.put(
                "/collections/c/points?wait=true",
                batch(rnd, from, Math.min(2000, POINTS + 2 - from)));
        assertThat(r.status()).as(r.raw()).isEqualTo(200);
      }
      // The write after the threshold sealed the segment: its build writes seg-<id>.tmp.
      Await.until(
          Duration.ofSeconds(60), "the index build started", () -> !segmentTemps(data).isEmpty());
      Thread.sleep(1500); // into the graph build

      long t0 = System.nanoTime();
      server.stop();
      stopMillis = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf(
          Locale.ROOT,
          "[flashvec] ShutdownIT: SIGTERM during an index build: exited in %d ms%n",
          stopMillis);
    }
    String text = Files.readString(log);
    assertThat(stopMillis).as("exits within the grace period").isLessThan(20_000);
    assertThat(text)
        .contains("shutting down: cancelling index builds and compactions")
        .contains("background work cancelled; it runs again after the restart [work=collection c,")
        .contains("index build cancelled, its files removed")
        .contains("WAL synced and closed")
        .contains("collections closed, their WALs synced")
        .doesNotContain("segment indexed")
        .doesNotContain("halting");
    assertThat(tempFiles(data)).isEmpty();

    Path log2 = tmp.resolve("server-restart.log");
    // the rebuild under C2: under C1 the one-writer graph build's Vector API kernels run about
    // twenty times slower (ServerProcess#withOptimizingCompiler), and the wait would measure the
    // JIT
    try (ServerProcess server =
        new ServerProcess(data, log2, args).withOptimizingCompiler().start()) {
      Http http = new Http(server.url());
      Http.Response count = http.post("/collections/c/points/count", "{\"exact\":true}");
      assertThat(count.result().get("count").asLong()).isEqualTo(POINTS + 1);
      Await.until(
          Duration.ofSeconds(300),
          "the build ran again",
          () -> Files.readString(log2).contains("segment indexed"));
      Http.Response one = http.get("/collections/c/points/" + POINTS);
      assertThat(one.status()).isEqualTo(200);
      assertThat(tempFiles(data)).isEmpty();
    }
  }

  @Test
  void aGracePeriodThatLeavesNoRoomAfterTheRequestDrainIsRefused() {
    ServerProcess server =
        new ServerProcess(
            tmp.resolve("data"),
            tmp.resolve("refused.log"),
            "--flashvec.shutdown.grace-period=10s",
            "--spring.lifecycle.timeout-per-shutdown-phase=10s");
    try {
      assertThatThrownBy(server::start)
          .hasMessageContaining(
              "flashvec.shutdown.grace-period must be longer than"
                  + " spring.lifecycle.timeout-per-shutdown-phase")
          .hasMessageContaining("[grace-period=PT10S, timeout-per-shutdown-phase=PT10S]");
    } finally {
      server.close();
    }
  }

  @Test
  void aSecondServerOnALockedDataDirectoryExitsWithOneLineNamingTheFirst() throws Exception {
    Path data = tmp.resolve("data");
    try (ServerProcess first = new ServerProcess(data, tmp.resolve("first.log")).start();
        ServerProcess second = new ServerProcess(data, tmp.resolve("second.log"))) {
      assertThatThrownBy(second::start).hasMessageContaining("server exited during start-up");
      assertThat(second.exitValue()).isNotZero();
      List<String> lines = Files.readAllLines(tmp.resolve("second.log"));
      assertThat(lines)
          .contains(
              "flashvec: cannot start: data directory is used by another FlashVec process [dataDir="
                  + data.toAbsolutePath()
                  + ", pid="
                  + first.pid()
                  + "]; stop that process or choose another --flashvec.data-dir");
      assertThat(lines).noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception"));
      assertThat(new Http(first.url()).get("/collections").status()).isEqualTo(200);
    }
  }

  @Test
  void aJvmWithoutTheVectorModuleExitsAtOnceSayingWhichFlagToAdd() throws Exception {
    String jar = System.getProperty("flashvec.server.jar", "target/flashvec.jar");
    Path log = tmp.resolve("plain.log");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-jar",
                jar,
                "--flashvec.port=0",
                "--flashvec.data-dir=" + tmp.resolve("plain"))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(2);
    List<String> lines = Files.readAllLines(log);
    assertThat(lines)
        .anyMatch(
            l ->
                l.startsWith("flashvec: cannot start: the JVM runs without the module")
                    && l.contains("--add-modules jdk.incubator.vector"));
    assertThat(lines).noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception"));
    assertThat(tmp.resolve("plain")).doesNotExist();
  }

  private static String batch(Random rnd, int from, int n) {
    ObjectNode body = Http.JSON.createObjectNode();
    ArrayNode pts = body.putArray("points");
    for (int id = from; id < from + n; id++) {
      ObjectNode p = pts.addObject();
      p.put("id", id);
      ArrayNode v = p.putArray("vector");
      for (int d = 0; d < DIM; d++) {
        v.add((float) rnd.nextGaussian());
      }
    }
    return body.toString();
  }

  private static List<Path> segmentTemps(Path data) throws Exception {
    try (Stream<Path> walk = Files.walk(data)) {
      return walk.filter(p -> p.getFileName().toString().matches("seg-\\d+\\.tmp")).toList();
    } catch (java.io.UncheckedIOException e) {
      return List.of(); // a file vanished during the walk
    }
  }

  private static List<String> tempFiles(Path data) throws Exception {
    try (Stream<Path> walk = Files.walk(data)) {
      return walk.map(Path::toString).filter(p -> p.endsWith(".tmp")).toList();
    }
  }
}
