package io.flashvec.cluster.transport;

import io.flashvec.cluster.transport.grpc.ShardServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.Closeable;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One gRPC channel per node address, created on first use and shared by all callers (channels
 * multiplex calls and reconnect by themselves), plaintext or TLS as {@link GrpcTls} says.
 * Thread-safe; {@link #close()} shuts every channel down (not the {@link GrpcTls}, which the caller
 * owns).
 */
public final class ShardClients implements Closeable {

  /** Upsert batches can be as large as a REST body (64 MB by default) plus protobuf overhead. */
  public static final int MAX_MESSAGE_BYTES = 512 * 1024 * 1024;

  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final Function<String, ? extends ManagedChannelBuilder<?>> builders;
  private volatile boolean closed;

  /** Plaintext channels. */
  public ShardClients() {
    this(GrpcTls.plaintext());
  }

  /** Channels with {@code tls}'s credentials. */
  public ShardClients(GrpcTls tls) {
    this(Objects.requireNonNull(tls, "tls")::channelBuilder);
  }

  /**
   * Channels from {@code builders} (an address to a channel builder): other transports, such as
   * in-process channels in tests.
   */
  public ShardClients(Function<String, ? extends ManagedChannelBuilder<?>> builders) {
    this.builders = builders;
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
        address, a -> builders.apply(a).maxInboundMessageSize(MAX_MESSAGE_BYTES).build());
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
