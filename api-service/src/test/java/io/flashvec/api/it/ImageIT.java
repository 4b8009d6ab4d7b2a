package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flashvec.testing.Await;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The container image, started with Testcontainers the way our machines need it (no bridge network
 * and no registry: host network, never pull, Ryuk off): REST smoke checks against it, and the
 * process runs as a non-root user with its data in the {@code /data} volume.
 *
 * <p>{@code ./flashvec test} builds the image and passes {@code -Dflashvec.image}; a plain {@code
 * mvn verify} without an image skips this test (and says so).
 */
class ImageIT {

  @Test
  void imageServesTheRestApi() throws Exception {
    String image = System.getProperty("flashvec.image", "");
    assumeTrue(
        !image.isBlank(),
        "no -Dflashvec.image given (./flashvec test builds the image and sets it); skipping");
    int port = ServerProcess.freePort();
    try (GenericContainer<?> c =
        new GenericContainer<>(DockerImageName.parse(image))
            .withNetworkMode("host")
            .withImagePullPolicy(name -> false)
            .withEnv("FLASHVEC_PORT", Integer.toString(port))
            .withEnv("FLASHVEC_BIND", "127.0.0.1")
            .withEnv("JAVA_OPTS", "-Xmx512m")
            .waitingFor(
                Wait.forLogMessage(".*Started FlashVecApplication.*", 1)
                    .withStartupTimeout(Duration.ofSeconds(90)))) {
      c.start();
      Http http = new Http("http://127.0.0.1:" + port);
      Await.until(Duration.ofSeconds(60), "ready", () -> http.get("/readyz").status() == 200);
      assertThat(c.execInContainer("id", "-u").getStdout().trim()).isEqualTo("10001");

      assertThat(
              http.put("/collections/img", "{\"vectors\":{\"size\":3,\"distance\":\"Cosine\"}}")
                  .status())
          .isEqualTo(200);
      assertThat(
              http.put(
                      "/collections/img/points?wait=true",
                      "{\"points\":[{\"id\":1,\"vector\":[1,0,0],\"payload\":{\"k\":\"a\"}},"
                          + "{\"id\":2,\"vector\":[0,1,0]}]}")
                  .status())
          .isEqualTo(200);
      Http.Response search =
          http.post("/collections/img/points/search", "{\"vector\":[0.9,0.1,0],\"limit\":1}");
      assertThat(search.status()).isEqualTo(200);
      assertThat(search.result().get(0).get("id").asLong()).isEqualTo(1);
      assertThat(http.post("/collections/img/points/count", "{}").result().get("count").asLong())
          .isEqualTo(2);
      // data lives in the volume
      assertThat(c.execInContainer("ls", "/data").getStdout()).isNotBlank();
      assertThat(http.delete("/collections/img").status()).isEqualTo(200);
      assertThat(http.put("/collections/img", "{}").status()).isEqualTo(400);
    }
  }
}
