package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** API keys against the real server: full key, read-only key, missing and wrong keys. */
class ApiKeyIT {

  @TempDir Path tmp;

  @Test
  void keysGuardEveryEndpointButTheProbes() {
    try (ServerProcess server =
        new ServerProcess(
                tmp.resolve("data"),
                tmp.resolve("server.log"),
                "--flashvec.security.api-key=s3cret",
                "--flashvec.security.read-only-api-key=reader")
            .start()) {
      Http http = new Http(server.url());
      // probes stay open (the start-up wait used /readyz without a key)
      assertThat(http.get("/healthz").status()).isEqualTo(200);
      assertThat(http.get("/livez").status()).isEqualTo(200);

      Http.Response missing = http.get("/collections");
      assertThat(missing.status()).isEqualTo(401);
      assertThat(missing.error()).contains("missing API key");
      assertThat(http.send("GET", "/collections", null, "api-key", "nope").status()).isEqualTo(401);
      assertThat(http.send("GET", "/metrics", null).status()).isEqualTo(401);

      String create = "{\"vectors\":{\"size\":2,\"distance\":\"Dot\"}}";
      assertThat(http.send("PUT", "/collections/c", create, "api-key", "reader").status())
          .isEqualTo(403);
      assertThat(http.send("PUT", "/collections/c", create, "api-key", "s3cret").status())
          .isEqualTo(200);
      String upsert = "{\"points\":[{\"id\":1,\"vector\":[1,0]},{\"id\":2,\"vector\":[0,1]}]}";
      assertThat(
              http.send(
                      "PUT",
                      "/collections/c/points?wait=true",
                      upsert,
                      "Authorization",
                      "Bearer s3cret")
                  .status())
          .isEqualTo(200);
      Http.Response forbidden =
          http.send("PUT", "/collections/c/points?wait=true", upsert, "api-key", "reader");
      assertThat(forbidden.status()).isEqualTo(403);
      assertThat(forbidden.error()).contains("read-only");

      // the read-only key reads and searches
      assertThat(http.send("GET", "/collections/c", null, "api-key", "reader").status())
          .isEqualTo(200);
      Http.Response search =
          http.send(
              "POST",
              "/collections/c/points/search",
              "{\"vector\":[1,0],\"limit\":1}",
              "api-key",
              "reader");
      assertThat(search.status()).isEqualTo(200);
      assertThat(search.result().get(0).get("id").asLong()).isEqualTo(1);
      assertThat(
              http.send(
                      "POST",
                      "/collections/c/points/count",
                      "{\"exact\":true}",
                      "api-key",
                      "reader")
                  .result()
                  .get("count")
                  .asLong())
          .isEqualTo(2);
      assertThat(
              http.send(
                      "POST",
                      "/collections/c/points/delete?wait=true",
                      "{\"points\":[1]}",
                      "api-key",
                      "reader")
                  .status())
          .isEqualTo(403);
    }
  }
}
