package io.flashvec.cluster.proxy;

import io.flashvec.cluster.metadata.ClusterMetadata;
import io.flashvec.cluster.metadata.Node;
import io.flashvec.cluster.metadata.Placement;
import io.flashvec.cluster.transport.GrpcErrors;
import io.flashvec.cluster.transport.ShardClients;
import io.flashvec.cluster.transport.grpc.ShardRef;
import io.flashvec.cluster.transport.grpc.ShardServiceGrpc.ShardServiceBlockingStub;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.UnavailableException;
import io.grpc.StatusRuntimeException;
import java.io.Closeable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the proxy calls the replicas of a shard: which may answer and in which order, the deadline,
 * and failover.
 *
 * <ul>
 *   <li>Candidates: live replicas not marked stale, the elected primary first, then placement
 *       order.
 *   <li>Writes go to the first candidate (the primary); reads round-robin over the candidates. A
 *       call that fails in a way another replica may not (an error status other than a client
 *       error, a dead node, the deadline) is retried on the next candidate; when all fail, {@link
 *       ShardUnavailableException} names collection, shard and node.
 *   <li>A write whose shard has no primary that answers (it died and its lease has not expired yet,
 *       or the next one is being elected) is retried every 250 ms until the write deadline.
 * </ul>
 *
 * <p>Thread-safe. Owns the fan-out executor (virtual threads) that runs one task per shard.
 */
final class ShardCalls implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(ShardCalls.class);

  private final ClusterMetadata meta;
  private final ShardClients clients;
  private final Duration writeDeadline;
  private final AtomicInteger roundRobin = new AtomicInteger();
  private final ExecutorService fanOut =
      Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("flashvec-fanout-", 0).factory());

  ShardCalls(ClusterMetadata meta, ShardClients clients, Duration writeDeadline) {
    this.meta = meta;
    this.clients = clients;
    this.writeDeadline = writeDeadline;
  }

  static ShardRef ref(String collection, int shard) {
    return ShardRef.newBuilder().setCollection(collection).setShard(shard).build();
  }

  /** A stub for {@code node} whose next call has {@code deadline}. */
  ShardServiceBlockingStub stub(Node node, Duration deadline) {
    return clients
        .stub(node.grpcAddress())
        .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Replicas that may serve a shard now: live and not stale, the elected primary first, then
   * placement order.
   */
  List<Node> candidates(Placement p, int shard) {
    List<Node> out = new ArrayList<>();
    String leader = meta.leader(p.name(), shard).orElse(null);
    for (String id : p.replicas(shard)) {
      if (meta.isStale(p.name(), shard, id)) {
        continue;
      }
      meta.node(id)
          .ifPresent(
              n -> {
                if (n.id().equals(leader)) {
                  out.addFirst(n);
                } else {
                  out.add(n);
                }
              });
    }
    return out;
  }

  /**
   * {@link #callOnce}; a write is retried every 250 ms until the write deadline while no primary
   * answers.
   */
  <T> T call(
      Placement p,
      int shard,
      boolean write,
      Duration deadline,
      Function<ShardServiceBlockingStub, T> body) {
    long end = System.nanoTime() + writeDeadline.toNanos();
    while (true) {
      try {
        return callOnce(p, shard, write, deadline, body);
      } catch (ShardUnavailableException e) {
        if (!write || System.nanoTime() + 250_000_000L > end) {
          throw e;
        }
        LOG.info(
            "no primary answered; retrying the write [collection={}, shard={}]: {}",
            p.name(),
            shard,
            e.getMessage());
        try {
          Thread.sleep(250);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
        p = meta.placed(p.name()).orElse(p);
      }
    }
  }

  /**
   * Calls one replica of a shard, then the next ones while the call fails in a way another replica
   * may not: primary-first for writes, round-robin for reads.
   */
  private <T> T callOnce(
      Placement p,
      int shard,
      boolean write,
      Duration deadline,
      Function<ShardServiceBlockingStub, T> body) {
    List<Node> nodes = candidates(p, shard);
    if (nodes.isEmpty()) {
      throw new ShardUnavailableException(
          "Service unavailable: no live replica for shard [collection="
              + p.name()
              + ", shard="
              + shard
              + ", node="
              + String.join("|", p.replicas(shard))
              + "]",
          null);
    }
    int start = write ? 0 : Math.floorMod(roundRobin.getAndIncrement(), nodes.size());
    StatusRuntimeException last = null;
    Node lastNode = null;
    for (int i = 0; i < nodes.size(); i++) {
      Node n = nodes.get((start + i) % nodes.size());
      try {
        return body.apply(stub(n, deadline));
      } catch (StatusRuntimeException e) {
        if (!GrpcErrors.retryable(e)) {
          FlashVecException f = GrpcErrors.clientError(e);
          throw f != null ? f : e;
        }
        LOG.warn(
            "shard call failed; trying another replica [collection={}, shard={}, node={}]: {}",
            p.name(),
            shard,
            n.id(),
            e.getStatus());
        last = e;
        lastNode = n;
      }
    }
    throw new ShardUnavailableException(
        "Service unavailable: shard call failed on every replica [collection="
            + p.name()
            + ", shard="
            + shard
            + ", node="
            + lastNode.id()
            + ", cause="
            + last.getStatus().getCode()
            + ": "
            + last.getStatus().getDescription()
            + "]",
        last);
  }

  /** Runs {@code task} on the fan-out executor. */
  <T> Future<T> submit(Callable<T> task) {
    return fanOut.submit(task);
  }

  /** Runs one task per shard on the fan-out executor and returns their results in shard order. */
  <T> List<T> perShard(int shards, IntFunction<T> task) {
    List<Future<T>> fs = new ArrayList<>(shards);
    for (int s = 0; s < shards; s++) {
      int shard = s;
      fs.add(fanOut.submit(() -> task.apply(shard)));
    }
    List<T> out = new ArrayList<>(shards);
    for (Future<T> f : fs) {
      out.add(join(f));
    }
    return out;
  }

  /** The result of {@code f}; its failure as it was thrown. */
  static <T> T join(Future<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnavailableException("Service unavailable: interrupted", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  @Override
  public void close() {
    fanOut.shutdownNow();
  }
}
