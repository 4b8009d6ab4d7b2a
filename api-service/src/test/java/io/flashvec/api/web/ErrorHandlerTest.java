package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.index.UnavailableException;
import io.flashvec.storage.CorruptFileException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;

/**
 * Error bodies name no Java class and no server path; a 500 gives an id the log has too; a client
 * that went away is recognised; refusals are counted by reason.
 */
class ErrorHandlerTest {

  @TempDir Path dataDir;

  private ErrorHandler handler() {
    FlashVecProperties props =
        new Binder(
                new MapConfigurationPropertySource(Map.of("flashvec.data-dir", dataDir.toString())))
            .bind("flashvec", FlashVecProperties.class)
            .get();
    return new ErrorHandler(props);
  }

  private record Answer(int status, String body) {}

  private Answer answer(Throwable ex) {
    MockServerWebExchange exchange =
        MockServerWebExchange.from(MockServerHttpRequest.put("/collections/c/points"));
    handler().handle(exchange, ex).block();
    String body = exchange.getResponse().getBodyAsString().block();
    return new Answer(exchange.getResponse().getStatusCode().value(), body);
  }

  private void assertNoInternals(String body) {
    assertThat(body)
        .doesNotContain(dataDir.toString())
        .doesNotContain("java.")
        .doesNotContain("Exception")
        .doesNotContain("tools.jackson")
        .doesNotContainPattern("\\bat [a-z]+\\.");
  }

  @Test
  void aFailureOfTheServerAnswersAGenericMessageWithAnErrorId() {
    Path file = dataDir.resolve("collections/c/shards/0/wal/wal-1.log");
    for (Throwable ex :
        new Throwable[] {
          new UncheckedIOException(new NoSuchFileException(file.toString())),
          new IllegalStateException("broken [file=" + file + "]"),
          new UncheckedIOException("cannot read [file=" + file + "]", new IOException("EIO")),
          new NullPointerException()
        }) {
      Answer a = answer(ex);
      assertThat(a.status()).isEqualTo(500);
      assertThat(a.body())
          .matches(
              "\\{\"status\":\\{\"error\":\"Service internal error: the request failed; the server"
                  + " log has the details \\[error_id=[0-9a-f]{8}]\"},\"time\":.*");
      assertNoInternals(a.body());
    }
    Answer corrupt = answer(new CorruptFileException("bad checksum", file));
    assertThat(corrupt.status()).isEqualTo(500);
    assertThat(corrupt.body()).contains("stored data is corrupt").contains("error_id=");
    assertNoInternals(corrupt.body());
  }

  @Test
  void aServiceStateMessageKeepsItsWordsButNotTheDataDirectory() {
    Answer a =
        answer(
            new UnavailableException(
                "Service unavailable: shard is closed [dir="
                    + dataDir.resolve("collections/c/shards/0")
                    + "]"));
    assertThat(a.status()).isEqualTo(503);
    assertThat(a.body())
        .contains("Service unavailable: shard is closed [dir=<data-dir>/collections/c/shards/0]");
    assertNoInternals(a.body());
  }

  @Test
  void aClientThatWentAwayIsRecognised() {
    assertThat(ErrorHandler.isClientAbort(new AbortedException("Connection has been closed")))
        .isTrue();
    assertThat(ErrorHandler.isClientAbort(new IOException("Connection reset by peer"))).isTrue();
    assertThat(ErrorHandler.isClientAbort(new IOException("Broken pipe"))).isTrue();
    assertThat(ErrorHandler.isClientAbort(new ClosedChannelException())).isTrue();
    assertThat(
            ErrorHandler.isClientAbort(
                new IllegalStateException("wrapped", new IOException("Connection reset by peer"))))
        .isTrue();
    assertThat(ErrorHandler.isClientAbort(new IOException("No space left on device"))).isFalse();
    assertThat(ErrorHandler.isClientAbort(new IllegalStateException("x"))).isFalse();
    // a connection of the server's own (to etcd, another node) that broke is not the client's
    assertThat(
            ErrorHandler.isClientAbort(
                new io.flashvec.index.UnavailableException(
                    "Service unavailable: the metadata store (etcd) is unreachable",
                    new IOException("x", new ClosedChannelException()))))
        .isFalse();

    MockServerWebExchange exchange =
        MockServerWebExchange.from(MockServerHttpRequest.put("/collections/c/points"));
    handler().handle(exchange, new IOException("Connection reset by peer")).block();
    assertThat(exchange.getResponse().getStatusCode().value())
        .isEqualTo(ErrorHandler.CLIENT_CLOSED_REQUEST);
    assertThat(exchange.getResponse().getBodyAsString().block()).isEmpty();
  }

  @Test
  void refusalsAreCountedByReason() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    HttpRejections rejections = new HttpRejections(registry);
    for (int status : new int[] {400, 400, 404, 415, 499, 500, 200}) {
      MockServerWebExchange exchange =
          MockServerWebExchange.from(MockServerHttpRequest.put("/collections/c/points"));
      if (status == 415) {
        HttpRejections.reject(exchange, "unsupported_media_type", "not JSON");
      }
      rejections
          .filter(
              exchange,
              e -> {
                e.getResponse().setStatusCode(HttpStatusCode.valueOf(status));
                return Mono.empty();
              })
          .then(exchange.getResponse().setComplete())
          .block();
    }
    assertThat(
            registry.get("flashvec.http.rejected").tag("reason", "bad_request").counter().count())
        .isEqualTo(2);
    assertThat(registry.get("flashvec.http.rejected").tag("reason", "not_found").counter().count())
        .isEqualTo(1);
    assertThat(
            registry
                .get("flashvec.http.rejected")
                .tag("reason", "unsupported_media_type")
                .counter()
                .count())
        .isEqualTo(1);
    assertThat(registry.find("flashvec.http.rejected").counters()).hasSize(3);
  }

  @Test
  void anUnknownRouteAndAKnownPathWithAnotherMethodAnswer404NoSuchEndpoint() {
    MockServerWebExchange unknown = MockServerWebExchange.from(MockServerHttpRequest.post("/foo"));
    handler().handle(unknown, new ResponseStatusException(HttpStatus.NOT_FOUND)).block();
    assertThat(unknown.getResponse().getStatusCode().value()).isEqualTo(404);
    assertThat(unknown.getResponse().getBodyAsString().block())
        .startsWith(
            "{\"status\":{\"error\":\"Not found: no such endpoint [method=POST, path=/foo]\"},"
                + "\"time\":");

    MockServerWebExchange wrongMethod =
        MockServerWebExchange.from(MockServerHttpRequest.patch("/collections/c/points"));
    handler()
        .handle(
            wrongMethod,
            new MethodNotAllowedException(
                HttpMethod.PATCH, List.of(HttpMethod.PUT, HttpMethod.POST)))
        .block();
    assertThat(wrongMethod.getResponse().getStatusCode().value()).isEqualTo(404);
    assertThat(wrongMethod.getResponse().getBodyAsString().block())
        .contains("Not found: no such endpoint [method=PATCH, path=/collections/c/points]")
        .doesNotContain("not supported");
  }
}
