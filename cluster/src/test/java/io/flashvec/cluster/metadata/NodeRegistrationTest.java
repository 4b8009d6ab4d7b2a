package io.flashvec.cluster.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.LeaseOption;
import io.flashvec.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's registration against a real etcd (Debian's {@code etcd} binary on free loopback ports;
 * skipped without it): it must come back under a new lease within a few seconds whenever its lease
 * is lost while etcd is reachable — revoked from outside (what etcd does when the TTL runs out
 * while the node is cut off), expired while etcd was frozen, or lost with an etcd restart.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class NodeRegistrationTest {

  private static final Duration TTL = Duration.ofSeconds(2);
  private static final Duration PROMPTLY = Duration.ofSeconds(5);
  private static final String PREFIX = "/nrt/";

  @TempDir Path tmp;

  private Process etcd;
  private ProcessBuilder etcdCommand;
  private String endpoint;
  private Client admin;
  private EtcdMetadataStore store;
  private final Node node = new Node("query-1", "127.0.0.1:1", "127.0.0.1:2", List.of("query"));

  @BeforeEach
  void startEtcd() throws IOException {
    Path bin = Path.of("/usr/bin/etcd");
    Assumptions.assumeTrue(Files.isExecutable(bin), "etcd binary not found at " + bin);
    int client = freePort();
    int peer = freePort();
    endpoint = "http://127.0.0.1:" + client;
    String peerUrl = "http://127.0.0.1:" + peer;
    etcdCommand =
        new ProcessBuilder(
                bin.toString(),
                "--name",
                "nrt",
                "--data-dir",
                tmp.resolve("etcd").toString(),
                "--listen-client-urls",
                endpoint,
                "--advertise-client-urls",
                endpoint,
                "--listen-peer-urls",
                peerUrl,
                "--initial-advertise-peer-urls",
                peerUrl,
                "--initial-cluster",
                "nrt=" + peerUrl)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(tmp.resolve("etcd.log").toFile()));
    etcd = etcdCommand.start();
    admin = Client.builder().endpoints(endpoint).build();
    awaitEtcd();
  }

  @AfterEach
  void stop() {
    if (store != null) {
      store.close();
    }
    if (admin != null) {
      admin.close();
    }
    if (etcd != null) {
      etcd.destroyForcibly();
    }
  }

  @Test
  void isRegisteredWhenRegisterReturns() {
    store = new EtcdMetadataStore(List.of(endpoint), PREFIX);
    store.start();

    store.register(node, TTL);

    // a node reports ready after this: the proxies must be able to place replicas on it at once
    assertThat(store.isLive(node.id())).isTrue();
    assertThat(leaseOfNode()).isNotZero();
  }

  @Test
  void registersAgainUnderANewLeaseWhenItsLeaseIsRevoked() throws Exception {
    long first = register();

    // what etcd does to the lease of a node cut off for longer than its TTL
    admin.getLeaseClient().revoke(first).get(5, TimeUnit.SECONDS);

    long second = awaitRegisteredOtherThan(first);
    assertThat(leaseExists(first)).as("the revoked lease").isFalse();
    // and it keeps the new lease alive
    Await.holdsFor(
        TTL.multipliedBy(2),
        "the node stays registered under its new lease",
        () -> leaseOfNode() == second);
  }

  @Test
  void registersAgainAfterEtcdWasUnreachableForLongerThanTheLease() throws Exception {
    long first = register();

    // frozen (its connections stay open, nothing answers) for longer than the lease
    signal("STOP");
    try {
      holdWhile(TTL.multipliedBy(2));
    } finally {
      signal("CONT");
    }

    long second = awaitRegisteredOtherThan(first);
    assertThat(second).isNotZero();
  }

  @Test
  void keepsItsLeaseThroughAPauseShorterThanTheLease() throws Exception {
    long first = register(Duration.ofSeconds(5));

    // a renewal waits for the frozen etcd and renews the lease when it answers
    signal("STOP");
    try {
      holdWhile(Duration.ofSeconds(1));
    } finally {
      signal("CONT");
    }

    Await.holdsFor(
        Duration.ofSeconds(3),
        "the node stays registered under its first lease",
        () -> leaseOfNode() == first);
  }

  @Test
  void registersAgainAfterEtcdRestartsWithoutItsData() throws Exception {
    long first = register();

    etcd.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    deleteRecursively(tmp.resolve("etcd"));
    etcd = etcdCommand.start();
    awaitEtcd();

    assertThat(leaseExists(first)).as("the lease of the wiped etcd").isFalse();
    awaitRegisteredOtherThan(first);
  }

  // ---------------------------------------------------------------- helpers

  private long register() {
    return register(TTL);
  }

  private long register(Duration ttl) {
    store = new EtcdMetadataStore(List.of(endpoint), PREFIX);
    store.start();
    store.register(node, ttl);
    return awaitRegisteredOtherThan(0);
  }

  /** Waits until the node's key is in etcd under a live lease other than {@code old}. */
  private long awaitRegisteredOtherThan(long old) {
    long[] lease = new long[1];
    Await.until(
        PROMPTLY,
        "the node registered under a lease other than " + old,
        () -> "last lease " + lease[0],
        () -> {
          lease[0] = leaseOfNode();
          return lease[0] != 0 && lease[0] != old && leaseExists(lease[0]);
        });
    Await.until(PROMPTLY, "the store sees its own node live", () -> store.isLive(node.id()));
    return lease[0];
  }

  /** The lease of the node's key in etcd, 0 if the key is missing or etcd does not answer. */
  private long leaseOfNode() {
    try {
      List<KeyValue> kvs =
          admin
              .getKVClient()
              .get(ByteSequence.from(PREFIX + "nodes/" + node.id(), StandardCharsets.UTF_8))
              .get(2, TimeUnit.SECONDS)
              .getKvs();
      if (kvs.isEmpty()) {
        return 0;
      }
      assertThat(EtcdJson.decodeNode(kvs.getFirst().getValue().getBytes())).isEqualTo(node);
      return kvs.getFirst().getLease();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private boolean leaseExists(long id) throws Exception {
    return admin
            .getLeaseClient()
            .timeToLive(id, LeaseOption.DEFAULT)
            .get(2, TimeUnit.SECONDS)
            .getTTL()
        > 0;
  }

  private void awaitEtcd() {
    Await.until(
        Duration.ofSeconds(20),
        "etcd answers",
        () -> {
          try {
            admin
                .getKVClient()
                .get(ByteSequence.from("x", StandardCharsets.UTF_8))
                .get(1, TimeUnit.SECONDS);
            return true;
          } catch (java.util.concurrent.ExecutionException
              | java.util.concurrent.TimeoutException e) {
            return false;
          }
        });
  }

  private void signal(String sig) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(etcd.pid())).start();
    assertThat(kill.waitFor()).as("kill -" + sig).isZero();
  }

  /** Lets {@code d} pass (polling, as the build forbids sleeping in tests). */
  private static void holdWhile(Duration d) {
    Await.holdsFor(d, "time passes", () -> true);
  }

  private static void deleteRecursively(Path p) throws IOException {
    try (var s = Files.walk(p)) {
      for (Path q : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(q);
      }
    }
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
