package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.ErrorHandler;
import io.flashvec.cluster.CollectionService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Collection settings of the wrong JSON type are a 400 naming the field, never a 500. */
@WebFluxTest(controllers = CollectionsController.class)
@Import({Blocking.class, ErrorHandler.class})
@EnableConfigurationProperties(FlashVecProperties.class)
class CollectionsControllerTests {

  @Autowired WebTestClient client;
  @MockitoBean CollectionService service;

  private String error(String method, String body) {
    var spec = method.equals("PUT") ? client.put() : client.patch();
    byte[] b =
        spec.uri("/collections/c")
            .contentType(MediaType.APPLICATION_JSON)
            .bodyValue(body)
            .exchange()
            .expectStatus()
            .isBadRequest()
            .expectBody()
            .returnResult()
            .getResponseBody();
    return Json.text(b);
  }

  @Test
  void aSettingOfTheWrongTypeIsRefusedNamingTheField() {
    String vectors = "\"vectors\":{\"size\":4,\"distance\":\"Dot\"}";
    String[][] cases = {
      {
        "{" + vectors + ",\"wal_config\":{\"fsync_policy\":{}}}",
        "Wrong input: wal_config.fsync_policy must be always, interval or never [fsync_policy={}]"
      },
      {
        "{" + vectors + ",\"wal_config\":{\"fsync_policy\":[]}}",
        "Wrong input: wal_config.fsync_policy must be always, interval or never [fsync_policy=[]]"
      },
      {
        "{" + vectors + ",\"wal_config\":{\"fsync_policy\":1}}",
        "Wrong input: wal_config.fsync_policy must be always, interval or never [fsync_policy=1]"
      },
      {"{" + vectors + ",\"wal_config\":[]}", "Wrong input: wal_config must be an object"},
      {"{" + vectors + ",\"hnsw_config\":\"x\"}", "Wrong input: hnsw_config must be an object"},
      {"{" + vectors + ",\"index\":{\"type\":{}}}", "Wrong input: index.type must be a string"},
      {
        "{" + vectors + ",\"optimizers_config\":{\"indexing_threshold\":25702906202927761719296}}",
        "Wrong input: optimizers_config.indexing_threshold must be a non-negative integer"
            + " [indexing_threshold=25702906202927761719296]"
      },
    };
    for (String[] c : cases) {
      assertThat(error("PUT", c[0])).as(c[0]).contains(c[1]);
    }
    for (String[] c : cases) {
      if (c[0].contains("wal_config") || c[0].contains("optimizers_config")) {
        assertThat(error("PATCH", c[0])).as(c[0]).contains(c[1]);
      }
    }
    verify(service, never()).createCollection(any(), any(), any());
    verify(service, never()).updateCollection(any(), any(), any());
  }

  @Test
  void valuesBelowQdrantsMinimumAre422NamingThePathAndUnsupportedOnes400() {
    String vectors = "\"vectors\":{\"size\":4,\"distance\":\"Dot\"}";
    String[][] invalid = {
      {"\"shard_number\":0", "[shard_number: value 0 invalid, must be 1 or larger]"},
      {"\"replication_factor\":0", "[replication_factor: value 0 invalid, must be 1 or larger]"},
      {
        "\"write_consistency_factor\":0",
        "[write_consistency_factor: value 0 invalid, must be 1 or larger]"
      },
      {
        "\"hnsw_config\":{\"ef_construct\":3}",
        "[hnsw_config.ef_construct: value 3 invalid, must be 4 or larger]"
      },
    };
    for (String[] c : invalid) {
      byte[] b =
          client
              .put()
              .uri("/collections/c")
              .contentType(MediaType.APPLICATION_JSON)
              .bodyValue("{" + vectors + "," + c[0] + "}")
              .exchange()
              .expectStatus()
              .isEqualTo(422)
              .expectBody()
              .returnResult()
              .getResponseBody();
      assertThat(Json.text(b)).as(c[0]).isEqualTo("Validation error in JSON body: " + c[1]);
    }
    byte[] timeout =
        client
            .put()
            .uri("/collections/c?timeout=0")
            .contentType(MediaType.APPLICATION_JSON)
            .bodyValue("{" + vectors + "}")
            .exchange()
            .expectStatus()
            .isEqualTo(422)
            .expectBody()
            .returnResult()
            .getResponseBody();
    assertThat(Json.text(timeout))
        .isEqualTo(
            "Validation error in query parameters: [timeout: value 0 invalid, must be 1 or larger]");
    assertThat(error("PUT", "{" + vectors + ",\"shard_number\":-1}"))
        .contains("shard_number must be a non-negative integer");
    assertThat(error("PUT", "{" + vectors + ",\"write_consistency_factor\":2}"))
        .contains("write_consistency_factor other than 1 is not supported");
    assertThat(error("PUT", "{" + vectors + ",\"hnsw_config\":{\"m\":0}}"))
        .contains("hnsw_config.m = 0 (no graph) is not supported")
        .contains("flat");
    verify(service, never()).createCollection(any(), any(), any());
  }

  /** Reads an error body's message. */
  private static final class Json {
    static String text(byte[] body) {
      return io.flashvec.api.web.Json.MAPPER.readTree(body).path("status").path("error").asString();
    }
  }
}
