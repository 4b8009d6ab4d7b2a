package io.flashvec.cluster.metadata;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.options.PutOption;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's registration: its key {@code nodes/<id>} under a lease of its own that it keeps alive.
 *
 * <p>One loop on a thread of its own does everything, one step at a time, so there is never more
 * than one lease in use and one attempt under way:
 *
 * <ul>
 *   <li><b>registered</b>: every third of the TTL it renews the lease with one keep-alive request
 *       ({@code keepAliveOnce}), answered within that third or counted as failed. etcd answering
 *       that the lease is gone ({@code requested lease not found}: it expired while the node was
 *       cut off or paused, or was revoked) loses the registration at once; so does a lease no
 *       renewal confirmed for a whole TTL (etcd has expired it by then, whatever the connection
 *       says).
 *   <li><b>not registered</b>: it grants a new lease and puts the node's key under it, retrying
 *       with a jittered back-off of at most {@link #MAX_BACKOFF_MS} ms, so the node is back within
 *       about two seconds of etcd answering again. A lost lease is revoked (best effort), which
 *       also releases the primary keys this node held under it.
 * </ul>
 *
 * <p>jetcd's shared keep-alive stream is not used: its first-response deadline (5 s) is longer than
 * short TTLs, so a lease granted while that stream reconnects could expire on etcd seconds before
 * the client noticed, and its error and expiry callbacks come from several threads, which made
 * overlapping re-registrations possible. The lease id (read by {@link ShardFencing}) is 0 whenever
 * the node is not registered. Proxies skip the node meanwhile; the other nodes re-connect and
 * resync its stale replicas as soon as its key is back (their watch sees it).
 */
final class NodeRegistration {

  private static final Logger LOG = LoggerFactory.getLogger(NodeRegistration.class);

  /** The longest pause between two registration attempts while etcd does not answer. */
  static final long MAX_BACKOFF_MS = 2_000;

  private static final long MIN_BACKOFF_MS = 100;

  final Node node;
  private final long ttlSeconds;
  private final Etcd etcd;
  private final ScheduledExecutorService loop;
  private final BooleanSupplier current;
  private final Consumer<Node> registered;
  private final long renewEveryMs;
  private final SplittableRandom jitter;

  // state of the loop: only its thread writes these
  private volatile long leaseId;
  private long confirmedAtNanos;
  private long lostAtNanos;
  private int failedAttempts;
  private volatile boolean closed;

  /**
   * @param current whether this registration is still the store's (else it stops trying)
   * @param registered told every time the node is registered (again)
   */
  NodeRegistration(
      Node node, long ttlSeconds, Etcd etcd, BooleanSupplier current, Consumer<Node> registered) {
    this.node = node;
    this.ttlSeconds = ttlSeconds;
    this.etcd = etcd;
    this.current = current;
    this.registered = registered;
    this.renewEveryMs = Math.max(100, ttlSeconds * 1000 / 3);
    this.jitter = new SplittableRandom(node.id().hashCode());
    ScheduledThreadPoolExecutor s =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().name("flashvec-etcd-lease").daemon(true).factory());
    s.setRemoveOnCancelPolicy(true);
    this.loop = s;
  }

  /** The lease the node's keys live under, 0 while it is not registered. */
  long leaseId() {
    return leaseId;
  }

  /**
   * Starts the loop and waits for its first attempt, so that a node that can reach etcd is
   * registered when this returns (a node reports ready after it); if that attempt fails the loop
   * keeps trying.
   */
  void start() {
    lostAtNanos = System.nanoTime();
    try {
      loop.submit(this::step).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | RejectedExecutionException e) {
      LOG.warn("node registration did not start [node={}]: {}", node.id(), e.toString());
    }
  }

  private void schedule(long delayMs) {
    if (closed || !current.getAsBoolean()) {
      return;
    }
    try {
      loop.schedule(this::step, delayMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // closed meanwhile
    }
  }

  private void step() {
    if (closed || !current.getAsBoolean()) {
      return;
    }
    try {
      if (leaseId == 0) {
        register();
      } else {
        renew();
      }
    } catch (RuntimeException e) {
      // never let the loop die: whatever happened, try again shortly
      LOG.warn("node registration step failed [node={}]", node.id(), e);
      schedule(backoffMs());
    }
  }

  /** Grants a lease and puts the node's key under it; on failure tries again after a back-off. */
  private void register() {
    long id = 0;
    long sentAt = System.nanoTime();
    try {
      id = call(etcd.client.getLeaseClient().grant(ttlSeconds)).getID();
      long grantedAt = System.nanoTime();
      call(
          etcd.client
              .getKVClient()
              .put(
                  etcd.key("nodes/" + node.id()),
                  Etcd.bytes(EtcdJson.encodeNode(node)),
                  PutOption.builder().withLeaseId(id).build()));
      confirmedAtNanos = grantedAt;
      leaseId = id;
      int attempts = failedAttempts;
      failedAttempts = 0;
      registered.accept(node);
      LOG.info(
          "node registered [node={}, lease={}, ttlSeconds={}, unregisteredMs={}, failedAttempts={}]",
          node,
          id,
          ttlSeconds,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostAtNanos),
          attempts);
      schedule(
          Math.max(0, renewEveryMs - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt)));
    } catch (EtcdCallException e) {
      if (id != 0) {
        revokeQuietly(id); // granted, but the key is not under it: do not leave it behind
      }
      failedAttempts++;
      long delay = backoffMs();
      if (failedAttempts == 1 || failedAttempts % 10 == 0) {
        LOG.warn(
            "cannot register the node; retrying [node={}, attempt={}, retryInMs={}]: {}",
            node.id(),
            failedAttempts,
            delay,
            e.getCause().toString());
      }
      schedule(delay);
    }
  }

  /**
   * Renews the lease once; loses the registration if etcd no longer has it. The renewal may take
   * until the lease has certainly run out (a slow answer, from a congested link say, still renewed
   * it); only one is under way at a time.
   */
  private void renew() {
    long id = leaseId;
    long sentAt = System.nanoTime();
    long leftMs = ttlSeconds * 1000 - TimeUnit.NANOSECONDS.toMillis(sentAt - confirmedAtNanos);
    if (leftMs <= 0) {
      lost(id, "no renewal confirmed within the lease's TTL");
      return;
    }
    try {
      long ttl = call(etcd.client.getLeaseClient().keepAliveOnce(id), leftMs).getTTL();
      if (ttl <= 0) {
        lost(id, "requested lease not found");
        return;
      }
      // etcd renewed it between sentAt and now: the next renewal is due a third of the TTL after
      // sentAt, and the lease certainly runs out no later than a TTL after now
      confirmedAtNanos = System.nanoTime();
      long sinceSentMs = TimeUnit.NANOSECONDS.toMillis(confirmedAtNanos - sentAt);
      schedule(Math.max(0, renewEveryMs - sinceSentMs));
    } catch (EtcdCallException e) {
      if (leaseGone(e.getCause())) {
        lost(id, e.getCause().getMessage());
        return;
      }
      // not answered (etcd unreachable): keep trying until the lease has certainly run out
      LOG.debug(
          "lease renewal failed; trying again [node={}]: {}", node.id(), e.getCause().toString());
      schedule(Math.min(renewEveryMs, 250));
    }
  }

  /** The lease is gone: register again at once under a new one. */
  private void lost(long id, String why) {
    leaseId = 0;
    lostAtNanos = System.nanoTime();
    LOG.warn(
        "node registration lost; registering again [node={}, lease={}, reason={}]",
        node.id(),
        id,
        why);
    revokeQuietly(id);
    schedule(0);
  }

  private static boolean leaseGone(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof EtcdException ee && ee.getErrorCode() == ErrorCode.NOT_FOUND) {
        return true;
      }
      if (c.getMessage() != null && c.getMessage().contains("requested lease not found")) {
        return true;
      }
    }
    return false;
  }

  /** Exponential in the failed attempts, capped, with jitter (half to all of it). */
  private long backoffMs() {
    long base = MIN_BACKOFF_MS << Math.min(5, Math.max(0, failedAttempts - 1));
    long capped = Math.min(MAX_BACKOFF_MS, base);
    return capped / 2 + jitter.nextLong(capped / 2 + 1);
  }

  /** Revokes a lease without waiting (it is gone already, or nobody renews it any more). */
  private void revokeQuietly(long id) {
    try {
      etcd.client
          .getLeaseClient()
          .revoke(id)
          .whenComplete(
              (r, t) -> {
                if (t != null) {
                  LOG.debug("cannot revoke lease {} [node={}]: {}", id, node.id(), t.toString());
                }
              });
    } catch (RuntimeException e) {
      LOG.debug("cannot revoke lease {} [node={}]: {}", id, node.id(), e.toString());
    }
  }

  /** An etcd call that failed or did not answer in time; the cause says which. */
  private static final class EtcdCallException extends Exception {
    EtcdCallException(Throwable cause) {
      super(cause);
    }
  }

  private <T> T call(CompletableFuture<T> f) throws EtcdCallException {
    return call(f, Math.min(Etcd.TIMEOUT_MS, Math.max(1_000, ttlSeconds * 1000 / 2)));
  }

  private static <T> T call(CompletableFuture<T> f, long timeoutMs) throws EtcdCallException {
    try {
      return f.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EtcdCallException(e);
    } catch (ExecutionException e) {
      throw new EtcdCallException(e.getCause());
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new EtcdCallException(e);
    }
  }

  /** Stops the loop and revokes the lease: the node disappears from the registry at once. */
  void close() {
    closed = true;
    loop.shutdownNow();
    try {
      loop.awaitTermination(Etcd.TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long id = leaseId;
    leaseId = 0;
    if (id != 0) {
      try {
        etcd.client.getLeaseClient().revoke(id).get(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        LOG.debug("cannot revoke lease on shutdown [node={}]", node.id(), e);
      }
    }
  }
}
