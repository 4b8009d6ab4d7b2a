package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.PointId;
import io.flashvec.testing.Await;
import io.flashvec.testing.SuppressForbidden;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Cluster faults with real processes: etcd, a proxy and three query nodes, one of which (query-1,
 * the primary of shard 0) runs in a network namespace of its own, joined to the others by a veth
 * pair. While clients keep writing through the proxy the test
 *
 * <ol>
 *   <li>cuts query-1 off from etcd, the proxy and the other replica (its veth end goes down) for
 *       longer than its lease, so shard 0 fails over, then heals the link;
 *   <li>SIGKILLs the primary of shard 0 mid-write and starts it again;
 *   <li>kills etcd (SIGKILL) and starts it again.
 * </ol>
 *
 * Each client writes increasing versions of its own points and reads each point back through the
 * proxy after every acknowledged write: a read older than the client's last acknowledged version
 * (or the point missing) is a violation, as is, at the end, any acknowledged version that is not
 * readable with its exact vector and payload from every replica.
 *
 * <p>The namespaced node binds and advertises its 10.77.N.2 address; etcd and the other query nodes
 * bind the root end 10.77.N.1, so everything the namespace talks to is on that veth, and the proxy
 * (127.0.0.1) reaches the namespace through it. The namespace's egress is rate-limited until the
 * partition heals, so that the primary has a replication in flight when the link goes down. Needs
 * root, iproute2 and etcd (skipped with the reason otherwise).
 */
class ClusterPartitionIT {

  private static final int CLIENTS = 6;
  private static final int KEYS = 6;
  private static final int PAD = 8_000;
  private static final String COLL = "p";

  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path tmp;

  private Netns net;
  private EtcdProcess etcd;
  private final List<ServerProcess> nodes = Collections.synchronizedList(new ArrayList<>());
  private final long t0 = System.nanoTime();

  @AfterEach
  void cleanUp() {
    for (ServerProcess s : nodes) {
      s.kill();
    }
    if (etcd != null) {
      etcd.close();
    }
    if (net != null) {
      net.close();
    }
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void noAcknowledgedWriteIsLostAndNoReadIsOlderThanTheClientsLastWrite() throws Exception {
    String why = Netns.unavailableReason();
    Assumptions.assumeTrue(why == null, "ClusterPartitionIT " + why);
    String etcdBin = EtcdProcess.find();
    Assumptions.assumeTrue(
        etcdBin != null, "etcd binary not found (./flashvec test installs Debian's etcd-server)");
    System.out.println("[flashvec] ClusterPartitionIT: logs in " + tmp + " (kept on failure)");
    long seed = TestSeeds.seed("ClusterPartitionIT");
    Netns.removeLeftovers();
    net = Netns.create("512kbit");
    etcd = EtcdProcess.start(etcdBin, tmp, net.rootAddress(), Netns.etcdName());
    log("etcd up at " + etcd.url() + "; namespace node at " + net.address());

    ServerProcess q1 =
        queryNode("query-1", net.address()).withLauncher(net.exec()); // the partitioned one
    ServerProcess q2 = queryNode("query-2", net.rootAddress());
    ServerProcess q3 = queryNode("query-3", net.rootAddress());
    CompletableFuture.allOf(
            CompletableFuture.runAsync(q1::start),
            CompletableFuture.runAsync(q2::start),
            CompletableFuture.runAsync(q3::start))
        .join();
    ServerProcess proxy =
        node(
                "proxy-1",
                "127.0.0.1",
                "--flashvec.roles=proxy",
                "--flashvec.cluster.etcd-endpoints=" + etcd.url(),
                "--flashvec.cluster.node-id=proxy-1")
            .start();
    Http api = new Http(proxy.url());
    // shard 0 on query-1 then query-2, shard 1 on query-2 then query-3 (placement by sorted id)
    Http.Response created =
        api.put(
            "/collections/" + COLL,
            "{\"vectors\":{\"size\":4,\"distance\":\"Dot\"},\"shard_number\":2,"
                + "\"replication_factor\":2}");
    assertThat(created.status()).as(created.raw()).isEqualTo(200);
    awaitNoStaleReplica(Duration.ofSeconds(30));
    log("cluster ready");

    List<Client> clients = new ArrayList<>();
    SplittableRandom seeds = new SplittableRandom(seed);
    for (int c = 0; c < CLIENTS; c++) {
      clients.add(new Client(c, proxy.url(), seeds.split()));
    }
    List<Thread> threads = new ArrayList<>();
    for (Client c : clients) {
      threads.add(Thread.ofPlatform().name("partition-client-" + c.id).start(c));
    }
    // one write of a large point of shard 0, retried until acknowledged like the others
    Client bulky = new Client(CLIENTS, proxy.url(), seeds.split(), shard0Id(), 250_000, 1);
    try {
      awaitAcks(clients, 3, Duration.ofSeconds(30));
      String firstPrimary = awaitLeader(Duration.ofSeconds(10));
      assertThat(firstPrimary)
          .as("the primary of shard 0 before the partition")
          .isEqualTo("query-1");

      // (a) query-1 cut off for longer than its lease (3 s) while it replicates a large write
      // (about 4 s through the namespace's 512 kbit/s): shard 0 fails over to query-2
      threads.add(Thread.ofPlatform().name("partition-large-write").start(bulky));
      hold(1_000);
      log("partition: query-1 cut off");
      net.partition();
      hold(9_000);
      log("leader of shard 0 during the partition: " + etcdGet("/flashvec/leaders/" + COLL + "/0"));
      net.heal();
      // The rate limit was there to have that replication in flight; kept on, it would make
      // query-1 lose its 3 s lease whenever it sends more than a lease's worth of data: a full
      // copy of shard 0 to a stale query-2 (the 250 kB point alone is 4 s at 512 kbit/s) queues
      // its etcd keep-alives behind it for longer than the TTL, so query-1 loses the primary role
      // mid-copy, registers again, leads again and starts the copy over, and query-2 never
      // catches up (the livelock this test hit on a busy machine).
      net.unthrottle();
      log("healed");
      hold(6_000);

      // (b) the primary of shard 0 SIGKILLed mid-write (clients write all the time), restarted
      String primary = awaitLeader(Duration.ofSeconds(15));
      ServerProcess victim =
          switch (primary) {
            case "query-1" -> q1;
            case "query-2" -> q2;
            default -> q3;
          };
      log("SIGKILL " + primary + " (primary of shard 0)");
      victim.kill();
      hold(5_000);
      victim.start();
      log(primary + " restarted");
      hold(3_000);

      // (c) etcd SIGKILLed and restarted while the writes go on
      log("SIGKILL etcd");
      etcd.kill();
      hold(5_000);
      etcd.restart();
      log("etcd restarted");
      hold(5_000);
    } finally {
      for (Client c : clients) {
        c.stop.set(true);
      }
      bulky.stop.set(true);
      for (Thread t : threads) {
        t.join(60_000);
      }
    }
    long acked = clients.stream().mapToLong(c -> c.acks.get()).sum();
    log(
        "writes stopped: acknowledged="
            + acked
            + ", failed attempts="
            + clients.stream().mapToLong(c -> c.failedAttempts.get()).sum()
            + ", reads="
            + clients.stream().mapToLong(c -> c.reads.get()).sum()
            + ", failed reads="
            + clients.stream().mapToLong(c -> c.failedReads.get()).sum());

    clients.add(bulky);
    List<String> violations = new ArrayList<>();
    for (Client c : clients) {
      violations.addAll(c.violations);
    }
    boolean settled = awaitNoStaleReplica(Duration.ofSeconds(45));
    // every acknowledged version readable, exactly, from every replica: four reads per point go
    // round-robin over the shard's replicas
    for (Client c : clients) {
      for (int j = 0; j < c.keys; j++) {
        for (int round = 0; round < 4; round++) {
          String v = c.check(j, true);
          if (v != null) {
            violations.add("after healing: " + v);
          }
        }
      }
    }
    assertThat(acked).as("acknowledged writes").isGreaterThan(50);
    assertThat(violations)
        .as(
            "acknowledged writes lost or read stale (logs in %s); etcd stale marks left: %s",
            tmp, settled ? "none" : etcdKeys("/flashvec/stale/"))
        .isEmpty();
    assertThat(settled).as("every replica caught up after the faults").isTrue();
  }

  // ---------------------------------------------------------------- clients

  /**
   * Writes versions 1, 2, 3, ... of its points {@code id·100 + j} (vector {@code [id, j, v, 1]},
   * payload {@code {"c": id, "v": v, "pad": ...}}), one write at a time, retrying a failed write
   * until it is acknowledged; after each acknowledgement reads that point back through the proxy
   * (and now and then another of its own).
   */
  private final class Client implements Runnable {
    final int id;
    final Http http;
    final SplittableRandom random;
    final AtomicBoolean stop = new AtomicBoolean();
    final int[] acked = new int[KEYS];
    final int[] sent = new int[KEYS];
    final AtomicLong acks = new AtomicLong();
    final AtomicLong failedAttempts = new AtomicLong();
    final AtomicLong reads = new AtomicLong();
    final AtomicLong failedReads = new AtomicLong();
    final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    final int keys;
    private final long firstId;
    private final int maxWrites;
    private final String pad;

    Client(int id, String url, SplittableRandom random) {
      this(id, url, random, id * 100L, PAD, Integer.MAX_VALUE);
    }

    /** A client of {@code maxWrites} writes at most, of point {@code firstId} alone. */
    Client(int id, String url, SplittableRandom random, long firstId, int pad, int maxWrites) {
      this.id = id;
      this.http = new Http(url);
      this.random = random;
      this.keys = maxWrites == Integer.MAX_VALUE ? KEYS : 1;
      this.firstId = firstId;
      this.maxWrites = maxWrites;
      this.pad = "x".repeat(pad);
    }

    long pointId(int j) {
      return firstId + j;
    }

    @Override
    public void run() {
      for (long i = 0; !stop.get() && i < maxWrites; i++) {
        int j = (int) (i % keys);
        int version = acked[j] + 1;
        sent[j] = Math.max(sent[j], version);
        boolean ok = false;
        while (!stop.get()) {
          try {
            Http.Response r =
                http.put("/collections/" + COLL + "/points?wait=true", body(j, version));
            if (r.status() == 200) {
              ok = true;
              break;
            }
          } catch (UncheckedIOException e) {
            // the proxy did not answer; try again
          }
          failedAttempts.incrementAndGet();
          sleepQuietly(100);
        }
        if (!ok) {
          return; // stopped with this write unacknowledged: a later read may show it or not
        }
        acked[j] = version;
        acks.incrementAndGet();
        record(check(j, false));
        if (random.nextInt(4) == 0) {
          record(check(random.nextInt(keys), false));
        }
      }
    }

    private void record(String violation) {
      if (violation != null) {
        violations.add(violation);
        log("VIOLATION " + violation);
      }
    }

    /**
     * Reads point {@code j} through the proxy; returns what is wrong with the answer, or null. A
     * read that fails (503, no answer) counts as a failure but no violation unless {@code
     * mustAnswer}.
     */
    String check(int j, boolean mustAnswer) {
      long pid = pointId(j);
      Http.Response r;
      try {
        r = http.get("/collections/" + COLL + "/points/" + pid);
      } catch (UncheckedIOException e) {
        failedReads.incrementAndGet();
        return mustAnswer ? "point " + pid + " unreadable: " + e.getMessage() : null;
      }
      reads.incrementAndGet();
      if (r.status() == 404) {
        return acked[j] > 0
            ? "point " + pid + " missing although version " + acked[j] + " was acknowledged"
            : null;
      }
      if (r.status() != 200) {
        failedReads.incrementAndGet();
        return mustAnswer ? "point " + pid + " unreadable: " + r.raw() : null;
      }
      JsonNode p = r.result();
      int v = p.path("payload").path("v").asInt(-1);
      if (v < acked[j]) {
        return "stale read of point "
            + pid
            + ": version "
            + v
            + " after version "
            + acked[j]
            + " was acknowledged to this client";
      }
      if (v > sent[j]) {
        return "point " + pid + " has version " + v + ", never written (last sent " + sent[j] + ")";
      }
      String want = Http.JSON.readTree(body(j, v)).path("points").get(0).toString();
      ObjectNode got = Http.JSON.createObjectNode();
      got.put("id", p.path("id").asLong());
      got.set("vector", p.path("vector"));
      got.set("payload", p.path("payload"));
      if (!Http.JSON.readTree(want).equals(Http.JSON.readTree(got.toString()))) {
        return "point " + pid + " version " + v + " differs: " + got + " instead of " + want;
      }
      return null;
    }

    String body(int j, int version) {
      ObjectNode root = Http.JSON.createObjectNode();
      ArrayNode pts = root.putArray("points");
      ObjectNode p = pts.addObject();
      p.put("id", pointId(j));
      ArrayNode v = p.putArray("vector");
      v.add((float) id).add((float) j).add((float) version).add(1f);
      p.putObject("payload").put("c", id).put("v", version).put("pad", pad);
      return root.toString();
    }
  }

  // ---------------------------------------------------------------- helpers

  /** A point id of shard 0 of 2 (the proxy routes by {@link PointId#shard}), above the clients'. */
  private static long shard0Id() {
    for (long id = 10_000; ; id++) {
      if (PointId.of(id).shard(2) == 0) {
        return id;
      }
    }
  }

  private ServerProcess queryNode(String id, String host) {
    return node(
        id,
        host,
        "--flashvec.roles=query",
        "--flashvec.cluster.etcd-endpoints=" + etcd.url(),
        "--flashvec.cluster.node-id=" + id,
        "--flashvec.cluster.grpc-port=" + ServerProcess.freePort(),
        "--flashvec.cluster.lease-ttl=3s");
  }

  private ServerProcess node(String id, String host, String... args) {
    ServerProcess s =
        new ServerProcess(tmp.resolve(id), tmp.resolve(id + ".log"), args)
            .withHost(host)
            .withJvmOptions(Netns.ownerOption());
    nodes.add(s);
    return s;
  }

  private void awaitAcks(List<Client> clients, int each, Duration timeout) {
    Await.until(
        timeout,
        "every client acknowledged " + each,
        () -> clients.stream().allMatch(c -> c.acks.get() >= each));
  }

  private String awaitLeader(Duration timeout) {
    String[] l = new String[1];
    Await.until(
        timeout,
        "a primary for shard 0",
        () -> (l[0] = etcdGet("/flashvec/leaders/" + COLL + "/0")) != null);
    return l[0];
  }

  private boolean awaitNoStaleReplica(Duration timeout) {
    try {
      Await.until(
          timeout,
          "no replica marked stale",
          () -> {
            try {
              return etcdKeys("/flashvec/stale/").isEmpty();
            } catch (UncheckedIOException e) {
              return false; // etcd not answering yet
            }
          });
      return true;
    } catch (AssertionError e) {
      return false;
    }
  }

  private String etcdGet(String key) {
    JsonNode kvs = etcdRange(key, null).get("kvs");
    if (kvs == null || kvs.isEmpty()) {
      return null;
    }
    JsonNode value = kvs.get(0).get("value");
    return value == null ? "" : decode(value.asString());
  }

  private List<String> etcdKeys(String prefix) {
    byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
    end[end.length - 1]++;
    JsonNode kvs = etcdRange(prefix, new String(end, StandardCharsets.UTF_8)).get("kvs");
    List<String> keys = new ArrayList<>();
    if (kvs != null) {
      for (JsonNode kv : kvs) {
        keys.add(decode(kv.get("key").asString()));
      }
    }
    return keys;
  }

  /** etcd's JSON gateway: {@code /v3/kv/range} of one key or of {@code [key, end)}. */
  private JsonNode etcdRange(String key, String end) {
    Base64.Encoder b64 = Base64.getEncoder();
    String body =
        "{\"key\":\""
            + b64.encodeToString(key.getBytes(StandardCharsets.UTF_8))
            + "\""
            + (end == null
                ? ""
                : ",\"range_end\":\""
                    + b64.encodeToString(end.getBytes(StandardCharsets.UTF_8))
                    + "\"")
            + "}";
    try {
      HttpResponse<String> r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(etcd.url() + "/v3/kv/range"))
                      .timeout(Duration.ofSeconds(5))
                      .POST(HttpRequest.BodyPublishers.ofString(body))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      return Http.JSON.readTree(r.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static String decode(String b64) {
    return new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8);
  }

  private void log(String what) {
    System.out.printf(
        Locale.ROOT,
        "[flashvec] ClusterPartitionIT +%.1fs %s%n",
        (System.nanoTime() - t0) / 1e9,
        what);
  }

  @SuppressForbidden("the fault schedule holds each fault for a set time while the clients write")
  private static void hold(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @SuppressForbidden("a client that got no answer waits a moment before it tries again")
  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
