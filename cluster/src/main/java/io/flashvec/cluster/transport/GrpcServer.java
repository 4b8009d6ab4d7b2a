package io.flashvec.cluster.transport;

import io.grpc.BindableService;
import io.grpc.Server;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's gRPC server: the services of its roles on one address, plaintext or TLS as {@link
 * GrpcTls} says, each call on a virtual thread, messages up to {@link
 * ShardClients#MAX_MESSAGE_BYTES}.
 */
public final class GrpcServer implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(GrpcServer.class);

  private final Server server;
  private final ExecutorService executor;

  private GrpcServer(Server server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /** Serves {@code services} on {@code bind:port}. */
  public static GrpcServer start(
      String bind, int port, GrpcTls tls, List<? extends BindableService> services) {
    ExecutorService executor =
        Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("flashvec-grpc-", 0).factory());
    try {
      var b =
          tls.serverBuilder(new InetSocketAddress(bind, port))
              .maxInboundMessageSize(ShardClients.MAX_MESSAGE_BYTES)
              .executor(executor);
      services.forEach(b::addService);
      Server server = b.build().start();
      LOG.info(
          "serving gRPC [address={}:{}, tls={}, services={}]",
          bind,
          port,
          tls.enabled(),
          services.stream().map(x -> x.bindService().getServiceDescriptor().getName()).toList());
      return new GrpcServer(server, executor);
    } catch (IOException e) {
      executor.shutdownNow();
      throw new UncheckedIOException(
          "cannot start the gRPC server [bind=" + bind + ", port=" + port + "]", e);
    }
  }

  @Override
  public void close() {
    server.shutdown();
    try {
      if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
        server.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.shutdownNow();
    }
    executor.shutdownNow();
  }
}
