package io.flashvec.cluster.testing;

import io.flashvec.cluster.metadata.Node;
import io.flashvec.cluster.query.LocalReplicas;
import io.flashvec.cluster.query.ShardServer;
import io.flashvec.cluster.transport.ShardClients;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.storage.testing.FaultyFileIO;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Query nodes of a cluster in one JVM: each node is a real {@link ShardServer} over real shard
 * replicas in its own directory, served by an in-process gRPC server, and registered in a shared
 * {@link InMemoryClusterMetadata}. The shared {@link #clients()} reach them by their in-process
 * names (also what the proxy and the primaries' forwarding use).
 *
 * <p>Faults are injected in front of a node's service: {@link #down} answers every call {@code
 * UNAVAILABLE} (a node that died before its lease expired), {@link #hold} keeps calls waiting until
 * {@link #release} (a node slower than any deadline). {@link #calls} counts the calls a node
 * received, faulty or not.
 */
public final class InProcessNodes implements AutoCloseable {

  private static final AtomicLong INSTANCES = new AtomicLong();

  private final ShardClients clients;
  private final Map<String, Member> members = new LinkedHashMap<>();

  /** A node: its replicas, its service and its in-process server. */
  private record Member(
      Node node,
      FaultyFileIO io,
      LocalReplicas replicas,
      ShardServer service,
      Server server,
      Faults faults) {}

  /** The faults injected in front of one node's service. */
  private static final class Faults implements ServerInterceptor {
    volatile boolean down;
    volatile CountDownLatch held;
    final Map<String, AtomicLong> calls = new ConcurrentHashMap<>();

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
      calls
          .computeIfAbsent(call.getMethodDescriptor().getBareMethodName(), m -> new AtomicLong())
          .incrementAndGet();
      if (down) {
        call.close(Status.UNAVAILABLE.withDescription("node is down (test)"), new Metadata());
        return new ServerCall.Listener<>() {};
      }
      CountDownLatch gate = held;
      if (gate != null) {
        try {
          if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("held call never released");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        if (Context.current().isCancelled()) {
          call.close(Status.CANCELLED.withDescription("caller gave up (test)"), new Metadata());
          return new ServerCall.Listener<>() {};
        }
      }
      return next.startCall(call, headers);
    }
  }

  /**
   * Starts one node per id under {@code dir}, each registered in {@code meta}; forwarded writes are
   * given {@code writeDeadline}.
   */
  public InProcessNodes(
      Path dir, InMemoryClusterMetadata meta, Duration writeDeadline, String... ids) {
    this.clients = new ShardClients(name -> InProcessChannelBuilder.forName(name));
    long instance = INSTANCES.incrementAndGet();
    try {
      for (String id : ids) {
        String address = "flashvec-" + instance + "-" + id;
        FaultyFileIO io = new FaultyFileIO(new CrashSimulatingFileIO());
        LocalReplicas replicas =
            new LocalReplicas(
                dir.resolve(id),
                new Shard.Options(100_000, Wal.Options.defaults().withSegmentBytes(64 << 10), io));
        replicas.recover();
        ShardServer service = new ShardServer(id, replicas, meta, clients, writeDeadline);
        Faults faults = new Faults();
        Server server =
            InProcessServerBuilder.forName(address)
                .addService(ServerInterceptors.intercept(service, faults))
                .build()
                .start();
        Node node = new Node(id, address, "127.0.0.1:0", List.of("query"));
        meta.register(node, Duration.ofSeconds(10));
        members.put(id, new Member(node, io, replicas, service, server, faults));
      }
    } catch (IOException e) {
      close();
      throw new UncheckedIOException(e);
    }
  }

  private Member member(String id) {
    Member m = members.get(id);
    if (m == null) {
      throw new IllegalArgumentException("no such node [node=" + id + "]");
    }
    return m;
  }

  /** The clients every node and the proxy use. */
  public ShardClients clients() {
    return clients;
  }

  public Node node(String id) {
    return member(id).node();
  }

  public LocalReplicas replicas(String id) {
    return member(id).replicas();
  }

  /** Whether every call to node {@code id} fails at once with {@code UNAVAILABLE}. */
  public void down(String id, boolean down) {
    member(id).faults().down = down;
  }

  /** Holds every call to node {@code id} until {@link #release}. */
  public void hold(String id) {
    member(id).faults().held = new CountDownLatch(1);
  }

  /** Lets the held calls of node {@code id} go on, and the next ones pass. */
  public void release(String id) {
    Faults f = member(id).faults();
    CountDownLatch gate = f.held;
    f.held = null;
    if (gate != null) {
      gate.countDown();
    }
  }

  /** Calls of {@code method} (e.g. {@code "Search"}) node {@code id} received. */
  public long calls(String id, String method) {
    AtomicLong n = member(id).faults().calls.get(method);
    return n == null ? 0 : n.get();
  }

  /** Releases held calls, stops the servers, closes the replicas and checks for leaked files. */
  @Override
  public void close() {
    List<Member> all = new ArrayList<>(members.values());
    for (Member m : all) {
      release(m.node().id());
    }
    clients.close();
    for (Member m : all) {
      m.server().shutdownNow();
      m.service().close();
      m.replicas().close();
    }
    for (Member m : all) {
      try {
        m.server().awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      m.io().assertNoOpenChannels();
    }
    members.clear();
  }
}
