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
import io.flashvec.index.SearchRequest;
import io.flashvec.index.SearchStats;
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
}
