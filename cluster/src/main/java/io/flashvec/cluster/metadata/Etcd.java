package io.flashvec.cluster.metadata;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Txn;
import io.flashvec.index.UnavailableException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The jetcd client of an {@link EtcdMetadataStore} with its key prefix, and the bounded wait for a
 * call: every call answers within {@link #TIMEOUT_MS} or fails with a 503.
 */
final class Etcd implements AutoCloseable {

  static final long TIMEOUT_MS = 5_000;

  final Client client;
  final String prefix;

  Etcd(List<String> endpoints, String prefix) {
    if (endpoints == null || endpoints.isEmpty()) {
      throw new IllegalArgumentException("etcd endpoints are empty");
    }
    this.prefix = prefix.endsWith("/") ? prefix : prefix + "/";
    this.client =
        Client.builder()
            .endpoints(endpoints.stream().map(Etcd::url).toArray(String[]::new))
            // Fail a call while etcd is unreachable instead of queueing it until the connection
            // is back (jetcd's default): a change that answered 503 after TIMEOUT_MS must not be
            // applied minutes later, when nobody waits for it and the shard copies it needs are
            // never made. jetcd still retries a failed call twice within about 3 s.
            .waitForReady(false)
            .build();
  }

  private static String url(String endpoint) {
    return endpoint.contains("://") ? endpoint : "http://" + endpoint;
  }

  /** A transaction; {@link #await} its {@code commit()}. */
  Txn txn() {
    return client.getKVClient().txn();
  }

  /** The full key of {@code k} under the prefix. */
  ByteSequence key(String k) {
    return ByteSequence.from(prefix + k, StandardCharsets.UTF_8);
  }

  /** A key read back, without the prefix. */
  String keyOf(KeyValue kv) {
    return kv.getKey().toString(StandardCharsets.UTF_8).substring(prefix.length());
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  static String text(ByteSequence b) {
    return b.toString(StandardCharsets.UTF_8);
  }

  /** Waits for a call; 503 when etcd does not answer in time. */
  static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnavailableException("Service unavailable: interrupted while calling etcd", e);
    } catch (ExecutionException | TimeoutException e) {
      f.cancel(true);
      Throwable c = e instanceof ExecutionException ? e.getCause() : e;
      throw new UnavailableException(
          "Service unavailable: the metadata store (etcd) is unreachable [cause=" + c + "]", c);
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
