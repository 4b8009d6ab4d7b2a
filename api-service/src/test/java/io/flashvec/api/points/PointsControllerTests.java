package io.flashvec.api.points;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyList;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.BodyLimitFilter;
import io.flashvec.api.web.ContentTypeFilter;
import io.flashvec.api.web.ErrorHandler;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.Filter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The points endpoints' parsing and error mapping, with the engine mocked. */
@WebFluxTest(controllers = PointsController.class)
@Import({Blocking.class, ErrorHandler.class, BodyLimitFilter.class, ContentTypeFilter.class})
@EnableConfigurationProperties(FlashVecProperties.class)
class PointsControllerTests {

  @Autowired WebTestClient client;
  @MockitoBean CollectionService service;

  /** The collection's configuration, as its description gives it (4 x Dot when not stubbed). */
  @org.junit.jupiter.api.BeforeEach
  void configFromTheDescription() {
    io.flashvec.api.ServiceStubs.configFromTheDescription(service);
  }

  /** Strict mode has its own tests; here it lets every request through. */
  @MockitoBean io.flashvec.api.collections.StrictModeGuard strict;

  @Test
  void upsertParsesListFormAndWaits() {
    when(service.upsert(eq("c"), anyList(), eq(true)))
        .thenReturn(new Collection.UpdateResult(7, true));
    client
        .put()
        .uri("/collections/c/points?wait=true")
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue(
            "{\"points\":[{\"id\":1,\"vector\":[1,2],\"payload\":{\"a\":\"b\"}},"
                + "{\"id\":\"00000000-0000-0000-0000-00000000002a\",\"vector\":[3,4]}]}")
        .exchange()
        .expectStatus()
        .isOk()
        .expectBody()
        .jsonPath("$.result.operation_id")
        .isEqualTo(7)
        .jsonPath("$.result.status")
        .isEqualTo("completed")
        .jsonPath("$.status")
        .isEqualTo("ok");
    @SuppressWarnings("unchecked")
    ArgumentCaptor<List<Point>> points = ArgumentCaptor.forClass(List.class);
    verify(service).upsert(eq("c"), points.capture(), eq(true));
    org.assertj.core.api.Assertions.assertThat(points.getValue()).hasSize(2);
    org.assertj.core.api.Assertions.assertThat(
            new String(points.getValue().getFirst().payload(), StandardCharsets.UTF_8))
        .isEqualTo("{\"a\":\"b\"}");
    org.assertj.core.api.Assertions.assertThat(points.getValue().get(1).id().toString())
        .isEqualTo("00000000-0000-0000-0000-00000000002a");
  }

  @Test
  void malformedPointsAreRejectedBeforeTheEngineSeesThem() {
    String[][] cases = {
      {"{\"points\":[{\"id\":1,\"vector\":[1,\"x\"]}]}", "vector element is not a number"},
      {"{\"points\":[{\"id\":1.5,\"vector\":[1,2]}]}", "point id must be"},
      {
        "{\"points\":[{\"id\":1,\"vector\":[1,2],\"payload\":[1]}]}",
        "payload must be a JSON object"
      },
      {"{\"batch\":{\"ids\":[1,2],\"vectors\":[[1,2]]}}", "one vector per id [ids=2, vectors=1]"},
      {"{\"nothing\":1}", "upsert needs `points`"},
      {"[1,2", "Format error in JSON body"},
      {
        "{\"points\":[{\"id\":1,\"vector\":{\"image\":[1,2]}}]}",
        "Not existing vector name error: image"
      },
    };
    for (String[] c : cases) {
      client
          .put()
          .uri("/collections/c/points")
          .contentType(MediaType.APPLICATION_JSON)
          .bodyValue(c[0])
          .exchange()
          .expectStatus()
          .isBadRequest()
          .expectBody()
          .jsonPath("$.status.error")
          .value(String.class, e -> org.assertj.core.api.Assertions.assertThat(e).contains(c[1]));
    }
    verify(service, never()).upsert(any(), anyList(), anyBoolean());
  }

  @Test
  void aBodyThatIsNotCleanJsonIsRefusedAndNothingIsStored() {
    String[][] cases = {
      {
        "{\"points\":[{\"id\":1,\"vector\":[1,2],\"payload\":{\"\\ud83d\":\"x\"}}]}",
        "Wrong input: Format error in JSON body: lone UTF-16 surrogate in an object key"
            + " [at=points[0].payload, escape=\\ud83d, text=\"\", offset=46]"
      },
      {
        "{\"points\":[{\"id\":1,\"vector\":[1,2],\"payload\":{\"a\":\"x\\udc00\"}}]}",
        "Wrong input: Format error in JSON body: lone UTF-16 surrogate in a string"
            + " [at=points[0].payload.a, escape=\\udc00, text=\"x\", offset=51]"
      },
      {
        "{\"points\":[{\"id\":1,\"vector\":[1,2],\"payload\":{\"a\":1,\"a\":2}}]}",
        "Wrong input: Format error in JSON body: duplicate key in an object"
            + " [at=points[0].payload, key=\"a\", offset=51]"
      },
      {
        "{\"points\":[{\"id\":1,\"vector\":[1,2]}],\"points\":[]}",
        "Wrong input: Format error in JSON body: duplicate key in an object"
            + " [key=\"points\", offset=36]"
      },
    };
    for (String[] c : cases) {
      client
          .put()
          .uri("/collections/c/points")
          .contentType(MediaType.APPLICATION_JSON)
          .bodyValue(c[0])
          .exchange()
          .expectStatus()
          .isBadRequest()
          .expectBody()
          .jsonPath("$.status.error")
          .isEqualTo(c[1]);
    }
    for (String type :
        new String[] {
          "application/x-www-form-urlencoded", "text/plain", "application/json; charset=latin1"
        }) {
      client
          .put()
          .uri("/collections/c/points")
          .header("Content-Type", type)
          .bodyValue("{\"points\":[{\"id\":1,\"vector\":[1,2]}]}")
          .exchange()
          .expectStatus()
          .isEqualTo(415)
          .expectBody()
          .jsonPath("$.status.error")
          .value(
              String.class,
              e ->
                  org.assertj.core.api.Assertions.assertThat(e)
                      .startsWith("Unsupported media type: ")
                      .endsWith(
                          "; send the body as Content-Type: application/json [content-type="
                              + type
                              + "]"));
    }
    verify(service, never()).upsert(any(), anyList(), anyBoolean());
  }

  @Test
  void aBodyThatIsNotJsonToAMissingRouteIsTheRoutes404() {
    for (String[] r :
        new String[][] {
          {"POST", "/collections/c/shards/0/snapshot/partial/recover?checksum=abc"},
          {"POST", "/collections/c/no-such-route"},
          // another method's path is a missing route too (Qdrant routes by method and path)
          {"PATCH", "/collections/c/points"},
        }) {
      client
          .method(org.springframework.http.HttpMethod.valueOf(r[0]))
          .uri(r[1])
          .header("Content-Type", "multipart/form-data; boundary=x")
          .bodyValue("--x--")
          .exchange()
          .expectStatus()
          .isNotFound()
          .expectBody()
          .jsonPath("$.status.error")
          .value(
              String.class,
              e ->
                  org.assertj.core.api.Assertions.assertThat(e)
                      .as(r[0] + " " + r[1])
                      .startsWith("Not found: no such endpoint [method=" + r[0]));
    }
  }

  @Test
  void aBadQueryParameterIsNamedWithoutJavaTypes() {
    client
        .put()
        .uri("/collections/c/points?wait=maybe")
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue("{\"points\":[]}")
        .exchange()
        .expectStatus()
        .isBadRequest()
        .expectBody()
        .jsonPath("$.status.error")
        .isEqualTo("Wrong input: query parameter wait must be true or false [wait=maybe]");
  }

  @Test
  void jsonContentTypesAreRead() {
    when(service.upsert(eq("c"), anyList(), eq(false)))
        .thenReturn(new Collection.UpdateResult(1, false));
    for (String type :
        new String[] {
          "application/json", "application/json; charset=UTF-8", "application/vnd.x+json"
        }) {
      client
          .put()
          .uri("/collections/c/points")
          .header("Content-Type", type)
          .bodyValue("{\"points\":[{\"id\":1,\"vector\":[1,2]}]}")
          .exchange()
          .expectStatus()
          .isOk();
    }
  }

  @Test
  void deleteCountAndScrollPassTheParsedFilter() {
    when(service.deleteByFilter(eq("c"), any(Filter.class), eq(true)))
        .thenReturn(new Collection.UpdateResult(3, true));
    when(service.count(eq("c"), any(Filter.class))).thenReturn(5L);
    when(service.scroll(eq("c"), argThat(r -> r.limit() == 2 && r.filter() != null)))
        .thenReturn(new ScrollPage(List.of(new Record(PointId.of(4), 0f, null, null)), null));
    String f = "{\"must\":[{\"key\":\"city\",\"match\":{\"value\":\"Berlin\"}}]}";
    Filter expected = Filter.must(new Condition.MatchValue(FieldPath.parse("city", "k"), "Berlin"));
    client
        .post()
        .uri("/collections/c/points/delete?wait=true")
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue("{\"filter\":" + f + "}")
        .exchange()
        .expectStatus()
        .isOk()
        .expectBody()
        .jsonPath("$.result.operation_id")
        .isEqualTo(3);
    verify(service).deleteByFilter("c", expected, true);
    client
        .post()
        .uri("/collections/c/points/count")
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue("{\"exact\":false,\"filter\":" + f + "}")
        .exchange()
        .expectStatus()
        .isOk()
        .expectBody()
        .jsonPath("$.result.count")
        .isEqualTo(5);
    verify(service).count("c", expected);
    client
        .post()
        .uri("/collections/c/points/scroll")
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue("{\"limit\":2,\"filter\":" + f + "}")
        .exchange()
        .expectStatus()
        .isOk()
        .expectBody()
        .jsonPath("$.result.points[0].id")
        .isEqualTo(4);
  }

  @Test
  void badFiltersAreRejectedNamingThePart() {
    String[][] cases = {
      {
        "/collections/c/points/delete",
        "{\"filter\":{\"must\":[{\"key\":\"a\",\"match\":{\"value\":1}},"
            + "{\"key\":\"a\",\"range\":{\"gtx\":1}}]}}",
        "Wrong input: filter.must[1].range: unknown field 'gtx'"
      },
      {
        "/collections/c/points/delete",
        "{\"points\":[1],\"filter\":{}}",
        "Wrong input: delete needs either `points` (a list of ids) or `filter`, not both"
      },
      {
        "/collections/c/points/count",
        "{\"filter\":{\"must\":[{\"key\":\"\",\"match\":{\"value\":1}}]}}",
        "Wrong input: filter.must[0].key: key must not be empty"
      },
      {
        "/collections/c/points/scroll",
        "{\"filter\":{\"should\":[{\"is_empty\":{\"field\":\"a\"}}]}}",
        "Wrong input: filter.should[0].is_empty: expected {\"key\": ...}"
            + " [filter.should[0].is_empty={\"field\":\"a\"}]"
      },
    };
    for (String[] c : cases) {
      client
          .post()
          .uri(c[0])
          .contentType(MediaType.APPLICATION_JSON)
          .bodyValue(c[1])
          .exchange()
          .expectStatus()
          .isBadRequest()
          .expectBody()
          .jsonPath("$.status.error")
          .isEqualTo(c[2]);
    }
    verify(service, never()).deleteByFilter(any(), any(), anyBoolean());
    verify(service, never()).delete(any(), anyList(), anyBoolean());
  }

  @Test
  void engineErrorsKeepTheirStatus() {
    when(service.count("gone", null))
        .thenThrow(new NotFoundException("Not found: Collection `gone` doesn't exist!"));
    client
        .post()
        .uri("/collections/gone/points/count")
        .exchange()
        .expectStatus()
        .isNotFound()
        .expectBody()
        .jsonPath("$.status.error")
        .isEqualTo("Not found: Collection `gone` doesn't exist!");
  }
}
