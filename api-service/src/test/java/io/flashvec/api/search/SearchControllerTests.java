package io.flashvec.api.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.metrics.SearchMetrics;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.BodyLimitFilter;
import io.flashvec.api.web.ErrorHandler;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchStats;
import io.flashvec.index.query.SearchRequest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Which thread a search runs on: the event loop for a plain search of a collection served from
 * memory, a virtual thread for anything that may block or run long.
 */
@WebFluxTest(controllers = SearchController.class)
@Import({
  SearchRoutes.class,
  Blocking.class,
  ErrorHandler.class,
  BodyLimitFilter.class,
  SearchControllerTests.Metrics.class,
  SearchMetrics.class
})
@EnableConfigurationProperties(FlashVecProperties.class)
class SearchControllerTests {

  static class Metrics {
    @Bean
    SimpleMeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Autowired WebTestClient client;
  @MockitoBean CollectionService service;

  /** The collection's configuration, as its description gives it (4 x Dot when not stubbed). */
  @org.junit.jupiter.api.BeforeEach
  void configFromTheDescription() {
    io.flashvec.api.ServiceStubs.configFromTheDescription(service);
  }

  /** Strict mode has its own tests; here it lets every request through. */
  @MockitoBean io.flashvec.api.collections.StrictModeGuard strict;

  private Thread searchThread(String path, String body) {
    AtomicReference<Thread> ran = new AtomicReference<>();
    when(service.search(eq("c"), any(SearchRequest.class), any(SearchStats.class)))
        .thenAnswer(
            inv -> {
              ran.set(Thread.currentThread());
              return List.of();
            });
    client
        .post()
        .uri(path)
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue(body)
        .exchange()
        .expectStatus()
        .isOk();
    assertThat(ran.get()).as("the search ran").isNotNull();
    return ran.get();
  }

  @Test
  void aPlainSearchOfACollectionInMemoryRunsWhereTheRequestArrived() {
    when(service.searchesServedFromMemory("c")).thenReturn(true);
    assertThat(
            searchThread("/collections/c/points/search", "{\"vector\":[1,2],\"limit\":3}")
                .isVirtual())
        .isFalse();
    assertThat(
            searchThread(
                    "/collections/c/points/query",
                    "{\"query\":{\"nearest\":[1,2]},\"limit\":3,\"params\":{\"hnsw_ef\":50}}")
                .isVirtual())
        .isFalse();
  }

  @Test
  void searchesThatMayBlockOrRunLongGoToAVirtualThread() {
    when(service.searchesServedFromMemory("c")).thenReturn(true);
    String[][] cases = {
      {
        "/collections/c/points/search", "{\"vector\":[1,2],\"limit\":3,\"params\":{\"exact\":true}}"
      },
      {
        "/collections/c/points/search",
        "{\"vector\":[1,2],\"limit\":3,\"filter\":{\"must\":[{\"key\":\"a\",\"match\":{\"value\":1}}]}}"
      },
      {"/collections/c/points/search", "{\"vector\":[1,2],\"limit\":500}"},
      {"/collections/c/points/query", "{\"query\":[1,2],\"limit\":3,\"params\":{\"exact\":true}}"},
    };
    for (String[] c : cases) {
      assertThat(searchThread(c[0], c[1]).isVirtual()).as(c[1]).isTrue();
    }
  }

  @Test
  void aCollectionReadFromTheDeviceIsSearchedOnAVirtualThread() {
    when(service.searchesServedFromMemory("c")).thenReturn(false);
    assertThat(
            searchThread("/collections/c/points/search", "{\"vector\":[1,2],\"limit\":3}")
                .isVirtual())
        .isTrue();
  }

  /** The routes answer POST only: another method on their paths is still no such endpoint. */
  @Test
  void anotherMethodOnASearchPathIsNoSuchEndpoint() {
    for (String path :
        List.of(
            "/collections/c/points/search",
            "/collections/c/points/search/batch",
            "/collections/c/points/query",
            "/collections/c/points/query/batch")) {
      client
          .put()
          .uri(path)
          .contentType(MediaType.APPLICATION_JSON)
          .bodyValue("{}")
          .exchange()
          .expectStatus()
          .isNotFound()
          .expectBody()
          .jsonPath("$.status.error")
          .value(e -> assertThat((String) e).startsWith("Not found: no such endpoint"));
    }
  }

  @Test
  void anEmptyBodyIsRefusedAsBefore() {
    for (String path :
        List.of("/collections/c/points/search", "/collections/c/points/search/batch")) {
      client
          .post()
          .uri(path)
          .contentType(MediaType.APPLICATION_JSON)
          .exchange()
          .expectStatus()
          .isBadRequest()
          .expectBody()
          .jsonPath("$.status.error")
          .isEqualTo("Wrong input: Format error in JSON body: request body is empty");
    }
  }

  @Test
  void badInputIsRejectedWithoutAskingWhereToRun() {
    client
        .post()
        .uri("/collections/c/points/search")
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue("{\"vector\":[1,\"x\"],\"limit\":3}")
        .exchange()
        .expectStatus()
        .isBadRequest()
        .expectBody()
        .jsonPath("$.status.error")
        .value(e -> assertThat((String) e).contains("vector element is not a number"));
    verify(service, never()).searchesServedFromMemory(any());
  }

  /** As Qdrant: a query by a point's id searches with its vector and leaves the point out. */
  @Test
  void aQueryByIdLeavesThePointItselfOut() {
    when(service.retrieve(eq("c"), any(), eq(false), eq(true)))
        .thenReturn(
            List.of(new io.flashvec.index.Record(PointId.of(7), 0f, new float[] {1, 2}, null)));
    when(service.describe("c"))
        .thenReturn(
            new CollectionService.CollectionDescription(
                "c",
                new io.flashvec.index.CollectionConfig(
                    2, io.flashvec.index.Distance.DOT, 1, 1, io.flashvec.index.IndexParams.DEFAULT),
                null));
    List<SearchRequest> seen = new java.util.ArrayList<>();
    when(service.search(eq("c"), any(SearchRequest.class), any(SearchStats.class)))
        .thenAnswer(
            inv -> {
              seen.add(inv.getArgument(1));
              return List.of();
            });
    for (String body :
        List.of(
            "{\"query\":7,\"limit\":3}",
            "{\"query\":{\"nearest\":7},\"limit\":3,\"filter\":{\"must\":[{\"key\":\"a\",\"match\":{\"value\":1}}]}}",
            "{\"prefetch\":[{\"query\":7,\"limit\":5}],\"query\":{\"fusion\":\"rrf\"}}")) {
      client
          .post()
          .uri("/collections/c/points/query")
          .contentType(MediaType.APPLICATION_JSON)
          .bodyValue(body)
          .exchange()
          .expectStatus()
          .isOk();
    }
    assertThat(seen).hasSize(3);
    for (SearchRequest r : seen) {
      assertThat(r.vector()).containsExactly(1f, 2f);
      assertThat(r.filter()).isNotNull();
      assertThat(r.filter().toString()).contains("HasId[ids=[7]]");
    }
    assertThat(seen.get(1).filter().toString()).contains("key=a");
  }

  // -------------------------------------------------------------------------------------------
  // Qdrant's read settings: honoured, or refused naming the value

  private WebTestClient.ResponseSpec post(String path, String body) {
    return client
        .post()
        .uri(path)
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue(body)
        .exchange();
  }

  private String errorOf(WebTestClient.ResponseSpec r, int status) {
    byte[] b = r.expectStatus().isEqualTo(status).expectBody().returnResult().getResponseBody();
    return new String(b, java.nio.charset.StandardCharsets.UTF_8);
  }

  private SearchRequest searched(String path, String body) {
    AtomicReference<SearchRequest> seen = new AtomicReference<>();
    when(service.search(eq("c"), any(SearchRequest.class), any(SearchStats.class)))
        .thenAnswer(
            inv -> {
              seen.set(inv.getArgument(1));
              return List.of();
            });
    post(path, body).expectStatus().isOk();
    return seen.get();
  }

  /**
   * A limit above FlashVec's largest (10000 here) is taken as that largest when the collection
   * holds no more points, and refused when it holds more.
   */
  @Test
  void aLimitAboveTheLargestIsTakenWhenTheCollectionCannotFillIt() {
    String huge = "18446744073709551615";
    when(service.count("c")).thenReturn(7L);
    assertThat(
            searched("/collections/c/points/search", "{\"vector\":[1,2],\"limit\":" + huge + "}")
                .limit())
        .isEqualTo(10_000);
    assertThat(
            searched("/collections/c/points/query", "{\"query\":[1,2],\"limit\":" + huge + "}")
                .limit())
        .isEqualTo(10_000);
    when(service.count("c")).thenReturn(10_001L);
    for (String[] r :
        new String[][] {
          {"/collections/c/points/search", "{\"vector\":[1,2],\"limit\":" + huge + "}"},
          {"/collections/c/points/query", "{\"query\":[1,2],\"limit\":10001}"},
        }) {
      assertThat(errorOf(post(r[0], r[1]), 400)).as(r[1]).contains("limit is too large");
    }
    assertThat(errorOf(post("/collections/c/points/query", "{\"query\":[1,2],\"limit\":-1}"), 400))
        .contains("limit must be a non-negative integer");
    // as Qdrant's validation: a limit of 0 is 422, for a search as for a query
    assertThat(errorOf(post("/collections/c/points/search", "{\"vector\":[1,2],\"limit\":0}"), 422))
        .contains("limit: value 0 invalid, must be 1 or larger");
    assertThat(
            errorOf(
                post(
                    "/collections/c/points/search/batch",
                    "{\"searches\":[{\"vector\":[1,2],\"limit\":1},{\"vector\":[1,2],\"limit\":0}]}"),
                422))
        .contains("limit: value 0 invalid");
  }

  @Test
  void quantizationOversamplingWidensTheRescoredCandidatesAndOtherValuesAreRefused() {
    String s = "/collections/c/points/search";
    assertThat(
            searched(
                    s,
                    "{\"vector\":[1,2],\"limit\":10,\"offset\":2,"
                        + "\"params\":{\"quantization\":{\"oversampling\":3}}}")
                .params()
                .rerankK())
        .isEqualTo(36);
    assertThat(
            searched(
                    "/collections/c/points/query",
                    "{\"query\":[1,2],\"limit\":4,"
                        + "\"params\":{\"quantization\":{\"oversampling\":2.4}}}")
                .params()
                .rerankK())
        .isEqualTo(10);
    assertThat(
            searched(
                    s,
                    "{\"vector\":[1,2],\"limit\":10,\"params\":{\"quantization\":"
                        + "{\"ignore\":false,\"rescore\":true,\"oversampling\":null}}}")
                .params())
        .isEqualTo(io.flashvec.index.SearchParams.DEFAULT);
    String[][] refused = {
      {"{\"ignore\":true}", "400", "[params.quantization.ignore=true]"},
      {"{\"rescore\":false}", "400", "[params.quantization.rescore=false]"},
      {"{\"oversampling\":\"x\"}", "400", "[params.quantization.oversampling=\\\"x\\\"]"},
      {"{\"oversample\":2}", "400", "unknown field `params.quantization.oversample`"},
      {
        "{\"oversampling\":0.5}",
        "422",
        "[params.quantization.oversampling: value 0.5 invalid, must be 1.0 or larger]"
      },
    };
    for (String[] r : refused) {
      String body = "{\"vector\":[1,2],\"limit\":3,\"params\":{\"quantization\":" + r[0] + "}}";
      assertThat(errorOf(post(s, body), Integer.parseInt(r[1]))).as(body).contains(r[2]);
    }
  }

  @Test
  void aShardKeyIsRefusedInEveryBodyThatCarriesOne() {
    String[][] cases = {
      {
        "/collections/c/points/search",
        "{\"vector\":[1,2],\"shard_key\":\"eu\"}",
        "[shard_key=\\\"eu\\\"]"
      },
      {
        "/collections/c/points/search/batch",
        "{\"searches\":[{\"vector\":[1,2]},{\"vector\":[1,2],\"shard_key\":[\"a\"]}]}",
        "searches[1].shard_key: custom sharding is not supported"
      },
      {"/collections/c/points/query", "{\"query\":[1,2],\"shard_key\":7}", "[shard_key=7]"},
      {
        "/collections/c/points/query",
        "{\"query\":{\"recommend\":{\"positive\":[1]}},"
            + "\"lookup_from\":{\"collection\":\"d\",\"shard_key\":\"eu\"}}",
        "[lookup_from.shard_key=\\\"eu\\\"]"
      },
      {
        "/collections/c/points/query",
        "{\"prefetch\":[{\"query\":[1,2]},{\"prefetch\":{\"query\":[1,2],"
            + "\"lookup_from\":{\"collection\":\"d\",\"shard_key\":1}}}],\"query\":{\"fusion\":\"rrf\"}}",
        "prefetch[1].prefetch.lookup_from.shard_key: custom sharding is not supported"
      },
    };
    for (String[] c : cases) {
      assertThat(errorOf(post(c[0], c[1]), 400)).as(c[1]).contains(c[2]);
    }
    verify(service, never()).search(any(), any(), any());
    assertThat(
            searched(
                "/collections/c/points/search",
                "{\"vector\":[1,2],\"limit\":1,\"shard_key\":null}"))
        .isNotNull();
  }

  @Test
  void aSearchThatOutlivesItsTimeoutAnswers408() throws InterruptedException {
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    when(service.search(eq("c"), any(SearchRequest.class), any(SearchStats.class)))
        .thenAnswer(
            inv -> {
              // held until the client has its answer
              assertThat(release.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
              return List.of();
            });
    long t0 = System.nanoTime();
    String body =
        errorOf(
            post("/collections/c/points/search?timeout=1", "{\"vector\":[1,2],\"limit\":1}"), 408);
    assertThat(body).contains("Timeout: the request did not finish within its timeout of 1 s");
    assertThat(System.nanoTime() - t0).as("answered at the timeout").isLessThan(20_000_000_000L);
    release.countDown();
    post("/collections/c/points/search?timeout=5", "{\"vector\":[1,2],\"limit\":1}")
        .expectStatus()
        .isOk();
    assertThat(
            errorOf(
                post("/collections/c/points/search?timeout=0", "{\"vector\":[1,2],\"limit\":1}"),
                422))
        .contains("[timeout: value 0 invalid, must be 1 or larger]");
    assertThat(
            errorOf(
                post("/collections/c/points/search?timeout=1s", "{\"vector\":[1,2],\"limit\":1}"),
                400))
        .contains("[timeout=1s]");
  }

  /**
   * A field Qdrant's request schema does not have (a misspelt setting) is refused with a 400 that
   * names it, at the top of a body, in a batch, in a prefetch and in the nested selectors, instead
   * of being accepted and doing nothing.
   */
  @Test
  void unknownFieldsAreRefusedWhereverTheyAre() {
    String[][] cases = {
      {
        "/collections/c/points/search",
        "{\"vector\":[1,2],\"limit\":1,\"with_vectorz\":true}",
        "with_vectorz"
      },
      {
        "/collections/c/points/search/batch",
        "{\"searches\":[{\"vector\":[1,2],\"limit\":1,\"fliter\":{}}]}",
        "searches[0].fliter"
      },
      {
        "/collections/c/points/search/batch", "{\"searches\":[],\"oops\":1}", "unknown field `oops`"
      },
      {"/collections/c/points/query", "{\"query\":[1,2],\"lmit\":3}", "unknown field `lmit`"},
      {
        "/collections/c/points/query",
        "{\"prefetch\":[{\"query\":[1,2],\"offset\":2}],\"query\":{\"fusion\":\"rrf\"}}",
        "prefetch[0].offset"
      },
      {
        "/collections/c/points/query",
        "{\"query\":[1,2],\"lookup_from\":{\"collection\":\"d\",\"vectr\":\"x\"}}",
        "lookup_from.vectr"
      },
      {
        "/collections/c/points/search",
        "{\"vector\":[1,2],\"limit\":1,\"with_payload\":{\"include\":[\"a\"],\"zz\":1}}",
        "with_payload"
      },
      {
        "/collections/c/points/recommend",
        "{\"positive\":[1],\"limit\":1,\"positve\":[2]}",
        "positve"
      },
    };
    for (String[] c : cases) {
      assertThat(errorOf(post(c[0], c[1]), 400)).as(c[1]).contains(c[2]);
    }
    assertThat(
            errorOf(
                post(
                    "/collections/c/points/search",
                    "{\"vector\":[1,2],\"limit\":1,\"params\":{\"acorn\":{\"max_selectivity\":1.5}}}"),
                422))
        .contains("params.acorn.max_selectivity: value 1.5 invalid");
    assertThat(
            errorOf(
                post(
                    "/collections/c/points/search",
                    "{\"vector\":[1,2],\"limit\":1,\"params\":{\"acorn\":{\"enabel\":true}}}"),
                400))
        .contains("params.acorn.enabel");
    // the query's own checks come first, as Qdrant's (which ignores the field) answers them
    assertThat(
            errorOf(
                post(
                    "/collections/c/points/query",
                    "{\"vector\":[1,2],\"using\":\"v\",\"query\":{\"fusion\":\"rrf\"}}"),
                400))
        .contains("Fusion queries cannot be combined with the 'using' field");
    // null sets nothing, as before
    assertThat(
            searched("/collections/c/points/search", "{\"vector\":[1,2],\"limit\":1,\"x\":null}"))
        .isNotNull();
  }

  /** Writes are ordered through each shard's primary (strong); other values are refused. */
  @Test
  void orderingIsAcceptedForQdrantsLevelsAndRefusedOtherwise() {
    String body = "{\"vector\":[1,2],\"limit\":1}";
    for (String level : List.of("weak", "medium", "strong")) {
      assertThat(searched("/collections/c/points/search?ordering=" + level, body))
          .as(level)
          .isNotNull();
    }
    assertThat(errorOf(post("/collections/c/points/search?ordering=bogus", body), 400))
        .contains("ordering must be weak, medium or strong")
        .contains("[ordering=bogus]");
  }

  @Test
  void consistencyIsAcceptedWhereOneReplicaIsAllThereIs() {
    String s = "/collections/c/points/search?consistency=";
    String body = "{\"vector\":[1,2],\"limit\":1}";
    // standalone: every level reads the one copy
    for (String level : List.of("1", "2", "majority", "quorum", "all")) {
      assertThat(searched(s + level, body)).as(level).isNotNull();
    }
    assertThat(errorOf(post(s + "most", body), 400)).contains("[consistency=most]");
    assertThat(errorOf(post(s + "0", body), 422)).contains("value 0 invalid");
    // a cluster: levels above one are refused on a replicated collection
    when(service.peers()).thenReturn(new CollectionService.Peers(1, List.of()));
    when(service.describe("c"))
        .thenReturn(
            new CollectionService.CollectionDescription(
                "c",
                new io.flashvec.index.CollectionConfig(
                    2, io.flashvec.index.Distance.DOT, 1, 2, null),
                null));
    assertThat(errorOf(post(s + "majority", body), 400))
        .contains("consistency: only 1 is supported on a collection with replication_factor 2")
        .contains("[consistency=majority]");
    assertThat(searched(s + "1", body)).isNotNull();
    when(service.describe("c"))
        .thenReturn(
            new CollectionService.CollectionDescription(
                "c",
                new io.flashvec.index.CollectionConfig(
                    2, io.flashvec.index.Distance.DOT, 1, 1, null),
                null));
    assertThat(searched(s + "all", body)).isNotNull();
  }
}
