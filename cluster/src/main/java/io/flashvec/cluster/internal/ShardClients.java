package io.flashvec.cluster.internal;

import io.flashvec.cluster.GrpcTls;
import io.flashvec.cluster.grpc.ShardServiceGrpc;
import io.grpc.ManagedChannel;
import java.io.Closeable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One gRPC channel per query-node address, created on first use and shared by all callers (channels
 * multiplex calls and reconnect by themselves), plaintext or TLS as {@link GrpcTls} says.
 * Thread-safe; {@link #close()} shuts every channel down (not the {@link GrpcTls}, which the caller
 * owns).
 */
public final class ShardClients implements Closeable {

  /** Upsert batches can be as large as a REST body (64 MB by default) plus protobuf overhead. */
  public static final int MAX_MESSAGE_BYTES = 512 * 1024 * 1024;

  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final GrpcTls tls;
  private volatile boolean closed;

  /** Plaintext channels. */
  public ShardClients() {
    this(GrpcTls.plaintext());
  }

  /** Channels with {@code tls}'s credentials. */
  public ShardClients(GrpcTls tls) {
    this.tls = java.util.Objects.requireNonNull(tls, "tls");
  }

  /** A blocking stub for {@code address} ({@code host:port}); set a deadline per call. */
  public ShardServiceGrpc.ShardServiceBlockingStub stub(String address) {
    return ShardServiceGrpc.newBlockingStub(channel(address))
        .withMaxOutboundMessageSize(MAX_MESSAGE_BYTES);
  }

  /** The channel to {@code address} ({@code host:port}), for the index service's stubs. */
  public ManagedChannel channel(String address) {
    if (closed) {
      throw new IllegalStateException("shard clients are closed");
    }
    return channels.computeIfAbsent(
        address, a -> tls.channelBuilder(a).maxInboundMessageSize(MAX_MESSAGE_BYTES).build());
  }

  /**
   * Lets the channel to {@code address} reconnect at once: after a node was down, gRPC waits up to
   * minutes (exponential back-off) before trying again, and fails calls meanwhile.
   */
  public void resetBackoff(String address) {
    ManagedChannel ch = channels.get(address);
    if (ch != null) {
      ch.resetConnectBackoff();
    }
  }

  @Override
  public void close() {
    closed = true;
    for (ManagedChannel ch : channels.values()) {
      ch.shutdownNow();
    }
    for (ManagedChannel ch : channels.values()) {
      try {
        ch.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    channels.clear();
  }
}
