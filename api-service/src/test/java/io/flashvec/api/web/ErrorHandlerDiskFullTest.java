package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.InsufficientStorageException;
import io.flashvec.storage.DiskFullException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

/** A full disk answers 507 with a message for clients: no server path, no Java class. */
class ErrorHandlerDiskFullTest {

  private static final MockServerWebExchange EXCHANGE =
      MockServerWebExchange.from(MockServerHttpRequest.put("/collections/c/points"));

  @Test
  void theTypedRefusalKeepsItsMessage() {
    DiskFullException full =
        new DiskFullException("upsert", Path.of("/srv/data/c/0"), 2048, 4096, 1 << 20, null);
    ResponseEntity<byte[]> r =
        ErrorHandler.toResponse(new InsufficientStorageException("upsert", full), EXCHANGE);
    assertThat(r.getStatusCode().value()).isEqualTo(507);
    assertThat(body(r))
        .contains(
            "\"Insufficient storage: upsert refused, the data directory's disk is full (2 KiB"
                + " free, 1 MiB kept in reserve); writes resume once space is freed"
                + " [usableBytes=2048, minFreeBytes=1048576]\"")
        .doesNotContain("/srv/data");
  }

  @Test
  void anyOtherFailureThatSaysNoSpaceIs507Too() {
    ResponseEntity<byte[]> r =
        ErrorHandler.toResponse(
            new UncheckedIOException(
                "cannot write [file=/srv/data/meta/collections.json]",
                new IOException("No space left on device")),
            EXCHANGE);
    assertThat(r.getStatusCode().value()).isEqualTo(507);
    assertThat(body(r))
        .contains(
            "Insufficient storage: the data directory's disk is full; writes resume once space is"
                + " freed")
        .doesNotContain("/srv/data")
        .doesNotContain("java.");
  }

  private static String body(ResponseEntity<byte[]> r) {
    return new String(r.getBody(), StandardCharsets.UTF_8);
  }
}
