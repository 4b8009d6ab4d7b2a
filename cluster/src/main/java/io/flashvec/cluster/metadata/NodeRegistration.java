package io.flashvec.cluster.metadata;

import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's registration: its key {@code nodes/<id>} under a lease of its own that it keeps alive.
 * If the lease is lost (etcd unreachable longer than the TTL, the process paused past it) it
 * registers again once etcd answers; proxies skip the node meanwhile.
 */
final class NodeRegistration {

  private static final Logger LOG = LoggerFactory.getLogger(NodeRegistration.class);

  final Node node;
  private final long ttlSeconds;
  private final Etcd etcd;
  private final ScheduledExecutorService scheduler;
  private final BooleanSupplier current;
  private final Consumer<Node> registered;
  private volatile CloseableClient keepAlive;
  private volatile long leaseId;

  /**
   * @param current whether this registration is still the store's (else it stops trying)
   * @param registered told once the node is registered
   */
  NodeRegistration(
      Node node,
      long ttlSeconds,
      Etcd etcd,
      ScheduledExecutorService scheduler,
      BooleanSupplier current,
      Consumer<Node> registered) {
    this.node = node;
    this.ttlSeconds = ttlSeconds;
    this.etcd = etcd;
    this.scheduler = scheduler;
    this.current = current;
    this.registered = registered;
  }

  /** The lease the node's keys live under, 0 while it is not registered. */
  long leaseId() {
    return leaseId;
  }

  void start() {
    if (!current.getAsBoolean()) {
      return;
    }
    try {
      long id = Etcd.await(etcd.client.getLeaseClient().grant(ttlSeconds)).getID();
      Etcd.await(
          etcd.client
              .getKVClient()
              .put(
                  etcd.key("nodes/" + node.id()),
                  Etcd.bytes(EtcdJson.encodeNode(node)),
                  PutOption.builder().withLeaseId(id).build()));
      leaseId = id;
      keepAlive =
          etcd.client
              .getLeaseClient()
              .keepAlive(
                  id,
                  new StreamObserver<LeaseKeepAliveResponse>() {
                    @Override
                    public void onNext(LeaseKeepAliveResponse value) {}

                    @Override
                    public void onError(Throwable t) {
                      retry("keep-alive failed: " + t, 1);
                    }

                    @Override
                    public void onCompleted() {
                      // etcd answered that the lease is gone (this process was paused past its
                      // TTL, say): register again at once, the proxies skip it meanwhile
                      retry("lease expired", 0);
                    }
                  });
      registered.accept(node);
      LOG.info("node registered [node={}, lease={}, ttlSeconds={}]", node, id, ttlSeconds);
    } catch (RuntimeException e) {
      retry("cannot register: " + e, 1);
    }
  }

  /** Registers again after {@code delaySeconds}, on the store's scheduler. */
  private void retry(String why, long delaySeconds) {
    if (!current.getAsBoolean()) {
      return;
    }
    LOG.warn("node registration lost; registering again [node={}, reason={}]", node.id(), why);
    CloseableClient k = keepAlive;
    if (k != null) {
      k.close();
    }
    scheduler.schedule(this::start, delaySeconds, TimeUnit.SECONDS);
  }

  /** Stops the keep-alive and revokes the lease: the node disappears from the registry at once. */
  void close() {
    CloseableClient k = keepAlive;
    if (k != null) {
      k.close();
    }
    if (leaseId != 0) {
      try {
        etcd.client.getLeaseClient().revoke(leaseId).get(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        LOG.debug("cannot revoke lease on shutdown [node={}]", node.id(), e);
      }
    }
  }
}
