package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The server on a real, small file system (a loop-mounted ext4 of 96 MiB, or a size-limited tmpfs
 * where loop devices are missing) that fills up: writes answer 507 with a clear message, reads go
 * on, writes resume without a restart once the test deletes its filler file, and after a restart
 * every acknowledged point is there and no temporary file is left. With a reserve ({@code
 * flashvec.storage.min-free-bytes}) writes stop while that much is still free, and the full server
 * still shuts down cleanly and starts again. Needs root (mount); skipped otherwise.
 */
class DiskFullIT {

  private static final int DIM = 64;
  private static final int BATCH = 200;
  private static final long MIB = 1 << 20;

  @TempDir Path tmp;

  private final Map<Long, float[]> acked = new HashMap<>();
  private long nextId = 1;

  @Test
  void writesOnAFullDiskAnswer507AndResumeOnceSpaceIsFreedWithoutARestart() throws Exception {
    try (SmallFileSystem fs = SmallFileSystem.mount(tmp, 96)) {
      Random rnd = new Random(TestSeeds.seed("DiskFullIT#noReserve"));
      Path data = fs.root().resolve("data");
      Path log = tmp.resolve("server.log");
      try (ServerProcess server = new ServerProcess(data, log, args(0)).start()) {
        Http http = new Http(server.url());
        createCollection(http);
        Path filler = fs.fill(20 * MIB);
        long t0 = System.nanoTime();
        Http.Response refused = writeUntilRefused(http, rnd);
        long usableAtRefusal = fs.usable();
        System.out.printf(
            Locale.ROOT,
            "[flashvec] DiskFullIT: 507 after %d acknowledged points in %d ms, %d bytes free%n",
            acked.size(),
            (System.nanoTime() - t0) / 1_000_000,
            usableAtRefusal);
        assertClear507(refused, data);

        assertReadsWork(http);
        // Still full: still 507, still the same clear answer (the WAL did not give up).
        List<Long> ids = new ArrayList<>();
        String body = batch(rnd, ids);
        assertThat(http.put("/collections/c/points?wait=true", body).status()).isEqualTo(507);

        Files.delete(filler);
        Http.Response resumed = http.put("/collections/c/points?wait=true", body);
        assertThat(resumed.status())
            .as("writes resume by themselves: %s", resumed.raw())
            .isEqualTo(200);
        ack(ids, body);
        for (int i = 0; i < 10; i++) {
          writeOk(http, rnd);
        }
        assertThat(Files.readString(log)).doesNotContain("WAL failed");
        assertNoTempFilesOnceStopped(server, data);
        server.start();
        assertAllAcknowledgedAreThere(new Http(server.url()));
        assertNoTempFilesOnceStopped(server, data);
        assertThat(Files.readString(log)).contains("WAL synced and closed");
      }
    }
  }

  @Test
  void theReserveStopsWritesEarlySoTheFullServerStillShutsDownAndRestarts() throws Exception {
    try (SmallFileSystem fs = SmallFileSystem.mount(tmp, 96)) {
      Random rnd = new Random(TestSeeds.seed("DiskFullIT#reserve"));
      Path data = fs.root().resolve("data");
      Path log = tmp.resolve("server.log");
      long reserve = 16 * MIB;
      try (ServerProcess server = new ServerProcess(data, log, args(reserve)).start()) {
        Http http = new Http(server.url());
        createCollection(http);
        Path filler = fs.fill(reserve + 20 * MIB);
        Http.Response refused = writeUntilRefused(http, rnd);
        long usable = fs.usable();
        System.out.printf(
            Locale.ROOT,
            "[flashvec] DiskFullIT: with a %d-byte reserve, 507 after %d points with %d bytes"
                + " still free%n",
            reserve,
            acked.size(),
            usable);
        assertClear507(refused, data);
        assertThat(refused.error()).contains("16 MiB kept in reserve");
        // The reserve held: one batch (~60 KiB of WAL) and a build's margin at most below it.
        assertThat(usable).isGreaterThan(reserve - 4 * MIB);
        assertReadsWork(http);

        // Full, then SIGTERM: a clean shutdown that syncs and closes the WAL.
        long t0 = System.nanoTime();
        server.stop();
        long stopMillis = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf(
            Locale.ROOT, "[flashvec] DiskFullIT: the full server stopped in %d ms%n", stopMillis);
        String text = Files.readString(log);
        assertThat(text).contains("WAL synced and closed").doesNotContain("WAL failed");
        assertThat(stopMillis).isLessThan(20_000);

        // It starts again on the full disk, serves reads, still refuses writes ...
        server.start();
        http = new Http(server.url());
        assertAllAcknowledgedAreThere(http);
        List<Long> ids = new ArrayList<>();
        String body = batch(rnd, ids);
        assertThat(http.put("/collections/c/points?wait=true", body).status()).isEqualTo(507);
        // ... until space is freed.
        Files.delete(filler);
        assertThat(http.put("/collections/c/points?wait=true", body).status()).isEqualTo(200);
        ack(ids, body);
        assertNoTempFilesOnceStopped(server, data);
        server.start();
        assertAllAcknowledgedAreThere(new Http(server.url()));
        assertNoTempFilesOnceStopped(server, data);
      }
    }
  }

  private static String[] args(long minFreeBytes) {
    return new String[] {
      "--flashvec.storage.min-free-bytes=" + minFreeBytes,
      "--flashvec.wal.segment-bytes=1MB",
      "--flashvec.segment.seal-threshold-points=5000",
      "--flashvec.merge.segments-per-tier=2"
    };
  }

  private static void createCollection(Http http) {
    Http.Response r =
        http.put("/collections/c", "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"}}");
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
  }

  /** Writes batches until one is refused; fails on anything but 200 and 507. */
  private Http.Response writeUntilRefused(Http http, Random rnd) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      List<Long> ids = new ArrayList<>();
      String body = batch(rnd, ids);
      Http.Response r = http.put("/collections/c/points?wait=true", body);
      if (r.status() == 507) {
        return r;
      }
      assertThat(r.status()).as("a write before the disk is full: %s", r.raw()).isEqualTo(200);
      ack(ids, body);
    }
    throw new AssertionError("the disk did not fill up within 90 s");
  }

  private void writeOk(Http http, Random rnd) {
    List<Long> ids = new ArrayList<>();
    String body = batch(rnd, ids);
    Http.Response r = http.put("/collections/c/points?wait=true", body);
    assertThat(r.status()).as(r.raw()).isEqualTo(200);
    ack(ids, body);
  }

  private final Map<String, Map<Long, float[]>> pending = new HashMap<>();

  private String batch(Random rnd, List<Long> ids) {
    ObjectNode body = Http.JSON.createObjectNode();
    ArrayNode pts = body.putArray("points");
    Map<Long, float[]> vs = new HashMap<>();
    for (int i = 0; i < BATCH; i++) {
      long id = nextId++;
      ids.add(id);
      float[] v = new float[DIM];
      ObjectNode p = pts.addObject();
      p.put("id", id);
      ArrayNode va = p.putArray("vector");
      double norm = 0;
      for (int d = 0; d < DIM; d++) {
        v[d] = (float) rnd.nextGaussian();
        norm += v[d] * v[d];
      }
      for (int d = 0; d < DIM; d++) {
        v[d] = (float) (v[d] / Math.sqrt(norm)); // cosine stores normalised vectors
        va.add(v[d]);
      }
      p.putObject("payload").put("id", id);
      vs.put(id, v);
    }
    String s = body.toString();
    pending.put(s, vs);
    return s;
  }

  private void ack(List<Long> ids, String body) {
    acked.putAll(pending.remove(body));
  }

  private void assertClear507(Http.Response r, Path data) {
    assertThat(r.status()).isEqualTo(507);
    assertThat(r.error())
        .startsWith("Insufficient storage: upsert refused, the data directory's disk is full (")
        .contains("writes resume once space is freed")
        .doesNotContain(data.toString())
        .doesNotContain("Exception")
        .doesNotContain("java.");
  }

  private void assertReadsWork(Http http) {
    long id = acked.keySet().iterator().next();
    Http.Response one = http.get("/collections/c/points/" + id);
    assertThat(one.status()).as(one.raw()).isEqualTo(200);
    assertThat(one.result().get("id").asLong()).isEqualTo(id);
    ObjectNode q = Http.JSON.createObjectNode();
    ArrayNode v = q.putArray("vector");
    for (float x : acked.get(id)) {
      v.add(x);
    }
    q.put("limit", 3);
    Http.Response hits = http.post("/collections/c/points/search", q.toString());
    assertThat(hits.status()).as(hits.raw()).isEqualTo(200);
    assertThat(hits.result()).isNotEmpty();
    assertThat(http.get("/collections/c").status()).isEqualTo(200);
    Http.Response count = http.post("/collections/c/points/count", "{\"exact\":true}");
    assertThat(count.status()).isEqualTo(200);
    assertThat(count.result().get("count").asLong()).isEqualTo(acked.size());
  }

  private void assertAllAcknowledgedAreThere(Http http) {
    Http.Response count = http.post("/collections/c/points/count", "{\"exact\":true}");
    assertThat(count.status()).as(count.raw()).isEqualTo(200);
    assertThat(count.result().get("count").asLong()).isEqualTo(acked.size());
    List<Long> ids = new ArrayList<>(acked.keySet());
    for (int from = 0; from < ids.size(); from += 1000) {
      ObjectNode req = Http.JSON.createObjectNode();
      ArrayNode arr = req.putArray("ids");
      ids.subList(from, Math.min(ids.size(), from + 1000)).forEach(arr::add);
      req.put("with_vector", true);
      Http.Response r = http.post("/collections/c/points", req.toString());
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.result().size()).isEqualTo(Math.min(1000, ids.size() - from));
      for (JsonNode p : r.result()) {
        float[] want = acked.get(p.get("id").asLong());
        for (int d = 0; d < DIM; d++) {
          assertThat(p.get("vector").get(d).floatValue()).isCloseTo(want[d], within());
        }
      }
    }
  }

  private static org.assertj.core.data.Offset<Float> within() {
    return org.assertj.core.data.Offset.offset(1e-5f);
  }

  /**
   * Stops the server (SIGTERM) and checks that no {@code .tmp} file is left. While it runs, builds
   * may be writing theirs: a seal of a WAL replay or of a load that outran its live graph writes a
   * raw {@code seg-N.tmp} at once and may train its PQ codebook there for a minute on a loaded
   * machine. A clean stop cancels them and removes their files, so a {@code .tmp} found then was
   * left behind (by a build that failed on the full disk, say); the next open would remove it.
   */
  private static void assertNoTempFilesOnceStopped(ServerProcess server, Path data)
      throws IOException {
    server.stop();
    assertThat(tempFiles(data)).as("left behind: %s", server.logTail()).isEmpty();
  }

  private static List<String> tempFiles(Path data) throws IOException {
    try (Stream<Path> walk = Files.walk(data)) {
      return walk.map(Path::toString).filter(p -> p.endsWith(".tmp")).toList();
    } catch (UncheckedIOException e) {
      return List.of("(a file vanished during the walk: " + e.getMessage() + ")");
    }
  }

  /** A small file system mounted for the test; unmounted and deleted by {@link #close}. */
  static final class SmallFileSystem implements AutoCloseable {
    private final Path image;
    private final Path root;
    private final String kind;

    private SmallFileSystem(Path image, Path root, String kind) {
      this.image = image;
      this.root = root;
      this.kind = kind;
    }

    /**
     * An ext4 image of {@code megabytes} (no blocks reserved for root, so root sees ENOSPC where
     * everyone else would), loop-mounted; a tmpfs of that size if loop devices are missing. Skips
     * the test unless this runs as root with a working {@code mount}.
     */
    static SmallFileSystem mount(Path work, int megabytes) throws Exception {
      Assumptions.assumeTrue(
          "0".equals(output("id", "-u")), "DiskFullIT needs root to mount a small file system");
      Path image = work.resolve("disk.img");
      Path root = Files.createDirectories(work.resolve("mnt"));
      if (run("truncate", "-s", megabytes + "M", image.toString())
          && run("mkfs.ext4", "-q", "-F", "-m", "0", image.toString())
          && run("mount", "-o", "loop", image.toString(), root.toString())) {
        System.out.println("[flashvec] DiskFullIT: ext4 of " + megabytes + " MiB at " + root);
        return new SmallFileSystem(image, root, "ext4");
      }
      Files.deleteIfExists(image);
      Assumptions.assumeTrue(
          run("mount", "-t", "tmpfs", "-o", "size=" + megabytes + "m", "tmpfs", root.toString()),
          "DiskFullIT needs mount (loop-mounted ext4 or tmpfs); neither works here");
      System.out.println("[flashvec] DiskFullIT: tmpfs of " + megabytes + " MiB at " + root);
      return new SmallFileSystem(null, root, "tmpfs");
    }

    Path root() {
      return root;
    }

    long usable() {
      return root.toFile().getUsableSpace();
    }

    /** Writes a filler file (real blocks, not sparse) until {@code leave} bytes are free. */
    Path fill(long leave) throws IOException {
      Path f = root.resolve("filler.bin");
      ByteBuffer zeros = ByteBuffer.allocateDirect((int) MIB);
      try (FileChannel ch =
          FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        while (usable() - MIB > leave) {
          zeros.clear();
          while (zeros.hasRemaining()) {
            ch.write(zeros);
          }
        }
        ch.force(true);
      }
      System.out.printf(
          Locale.ROOT,
          "[flashvec] DiskFullIT: filler of %d MiB on %s, %d bytes left%n",
          Files.size(f) / MIB,
          kind,
          usable());
      return f;
    }

    @Override
    public void close() throws Exception {
      if (!run("umount", root.toString())) {
        run("umount", "-l", root.toString());
      }
      if (image != null) {
        Files.deleteIfExists(image);
      }
    }

    private static boolean run(String... cmd) throws Exception {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      boolean ok = p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
      if (!ok) {
        System.out.println("[flashvec] DiskFullIT: " + String.join(" ", cmd) + " failed: " + out);
      }
      return ok;
    }

    private static String output(String... cmd) throws Exception {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      p.waitFor(10, TimeUnit.SECONDS);
      return out;
    }
  }
}
