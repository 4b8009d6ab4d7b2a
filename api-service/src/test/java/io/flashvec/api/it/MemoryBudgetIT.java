package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.testing.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server started with {@code flashvec.memory.budget}: it logs what the budget gives to each
 * part, exports the slices as gauges, seals growing segments at their share of the growing slice
 * (logged), and a budget too small or malformed stops the start-up naming the setting and the
 * minimum.
 */
class MemoryBudgetIT {

  @TempDir Path tmp;

  @Test
  void theBudgetIsLoggedExportedAndSizesTheSealThreshold() throws Exception {
    try (ServerProcess server =
        new ServerProcess(
                tmp.resolve("data"), tmp.resolve("server.log"), "--flashvec.memory.budget=1Gi")
            .start()) {
      assertThat(log(tmp.resolve("server.log")))
          .containsPattern(
              "memory budget \\[total=1 GiB, jvmNative=[0-9.]+ MiB, heap=[0-9.]+ MiB\\{resident=.*"
                  + " growing=.*, build=.*, working=.*\\}, nodeCache=51.2 MiB, pageCache=.*\\]");
      Http http = new Http(server.url());
      String metrics = http.send("GET", "/metrics", null).raw();
      assertThat(metrics)
          .containsPattern(
              "flashvec_memory_budget_bytes\\{[^}]*part=\"total\"[^}]*\\} 1\\.073741824E9")
          .contains("part=\"heap\"", "part=\"growing\"", "part=\"build\"", "part=\"page_cache\"");

      assertThat(
              http.put("/collections/c", "{\"vectors\":{\"size\":4,\"distance\":\"Euclid\"}}")
                  .status())
          .isEqualTo(200);
      assertThat(
              http.put(
                      "/collections/c/points?wait=true",
                      "{\"points\":[{\"id\":1,\"vector\":[1,2,3,4]},{\"id\":2,\"vector\":[4,3,2,1]}]}")
                  .status())
          .isEqualTo(200);
      Await.until(
          Duration.ofSeconds(10),
          "the seal threshold from the memory budget is logged",
          () -> log(tmp.resolve("server.log")).contains("seal threshold from the memory budget ["));
      assertThat(log(tmp.resolve("server.log")))
          .containsPattern("configured=100000, effective=[0-9]+, dim=4,");
    }
  }

  private static String log(Path file) throws java.io.IOException {
    return Files.readString(file, StandardCharsets.UTF_8);
  }

  @Test
  void aBudgetTooSmallStopsTheStartUpNamingTheMinimum() {
    try (ServerProcess server =
        new ServerProcess(
            tmp.resolve("small"), tmp.resolve("small.log"), "--flashvec.memory.budget=100Mi")) {
      assertThatThrownBy(server::start)
          .hasMessageContaining("server exited during start-up")
          .hasMessageContaining(
              "flashvec.memory.budget: memory budget too small [budget=100 MiB (104857600), needs≥");
    }
  }

  @Test
  void aMalformedBudgetStopsTheStartUpNamingIt() {
    try (ServerProcess server =
        new ServerProcess(
            tmp.resolve("bad"), tmp.resolve("bad.log"), "--flashvec.memory.budget=8 gigs")) {
      assertThatThrownBy(server::start)
          .hasMessageContaining(
              "flashvec.memory.budget must be a positive size such as 768Mi, 2Gi, 2GB or 805306368"
                  + " [budget=8 gigs]");
    }
  }
}
