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
}
