package io.flashvec.api.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.TestSeeds;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Collection snapshots against real servers: one taken while writes go on holds exactly the batches
 * acknowledged before it (no partial batch), a snapshot downloaded from one server and uploaded to
 * a fresh one answers exactly as the original (counts, searches, payload index), and bad snapshots,
 * checksums and paths are refused without touching stored data.
 */
class SnapshotIT {

  @TempDir Path tmp;

  static final int DIM = 8;
  static final int BATCH = 50;

  @Test
  void aSnapshotRestoredInAnotherServerAnswersAsTheOriginal() throws Exception {
    Random rnd = TestSeeds.random("SnapshotIT");
    try (ServerProcess a = new ServerProcess(tmp.resolve("a"), tmp.resolve("a.log")).start();
        ServerProcess b = new ServerProcess(tmp.resolve("b"), tmp.resolve("b.log")).start()) {
      Http ha = new Http(a.url());
      Http hb = new Http(b.url());
      ok(ha.put("/collections/c", "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"}}"));
      ok(ha.put("/collections/c/index", "{\"field_name\":\"tag\",\"field_schema\":\"keyword\"}"));
      for (int i = 0; i < 20; i++) {
        ok(ha.put("/collections/c/points?wait=true", batch(rnd, i * BATCH)));
      }
      ok(ha.post("/collections/c/flush", null)); // some points in a sealed segment
      ok(ha.post("/collections/c/points/delete?wait=true", "{\"points\":[1,2,3,500,999]}"));

      // A snapshot while a writer keeps adding batches.
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger acked = new AtomicInteger(20);
      Random wr = new Random(rnd.nextLong());
      Thread writer =
          Thread.ofPlatform()
              .start(
                  () -> {
                    while (!stop.get()) {
                      int n = acked.get();
                      ok(ha.put("/collections/c/points?wait=true", batch(wr, n * BATCH)));
                      acked.incrementAndGet();
                    }
                  });
      io.flashvec.testing.Await.until(
          java.time.Duration.ofSeconds(30), "the writer's first batches", () -> acked.get() > 22);
      int before = acked.get();
      JsonNode during = ha.post("/collections/c/snapshots", null).result();
      stop.set(true);
      writer.join();
      String duringName = during.get("name").asString();

      // Quiet now: a second snapshot, to compare answers exactly.
      JsonNode quiet = ha.post("/collections/c/snapshots?wait=true", null).result();
      JsonNode list = ha.get("/collections/c/snapshots").result();
      assertThat(list).hasSize(2);
      byte[] file = download(a.url() + "/collections/c/snapshots/" + quiet.get("name").asString());
      assertThat(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(file)))
          .isEqualTo(quiet.get("checksum").asString());
      assertThat((long) file.length).isEqualTo(quiet.get("size").longValue());

      // Restore the quiet snapshot into server b by upload, under another name.
      assertThat(upload(b.url() + "/collections/copy/snapshots/upload", file).statusCode())
          .isEqualTo(200);
      assertThat(count(hb, "copy")).isEqualTo(count(ha, "c"));
      for (int q = 0; q < 5; q++) {
        String query =
            "{\"query\":"
                + vector(rnd)
                + ",\"limit\":10,\"with_payload\":true,"
                + "\"filter\":{\"must\":{\"key\":\"tag\",\"match\":{\"value\":\"t"
                + q
                + "\"}}}}";
        assertThat(hb.post("/collections/copy/points/query", query).result().get("points"))
            .isEqualTo(ha.post("/collections/c/points/query", query).result().get("points"));
      }
      assertThat(
              hb.get("/collections/copy").result().at("/payload_schema/tag/data_type").asString())
          .isEqualTo("keyword");

      // The snapshot taken during writes holds whole batches, every one acknowledged before it.
      byte[] duringFile = download(a.url() + "/collections/c/snapshots/" + duringName);
      assertThat(upload(b.url() + "/collections/during/snapshots/upload", duringFile).statusCode())
          .isEqualTo(200);
      long points = count(hb, "during");
      long batches = (points + 5) / BATCH; // five points of the first batches were deleted
      assertThat((points + 5) % BATCH).isZero();
      assertThat(batches).isGreaterThanOrEqualTo(before);

      // Restart b: the restored collections are durable.
      b.restart();
      hb = new Http(b.url());
      assertThat(count(hb, "copy")).isEqualTo(count(ha, "c"));

      // A wrong checksum, a path outside the snapshots directory, a traversal: refused, data kept.
      Path inB = tmp.resolve("b").resolve("snapshots").resolve("copy");
      Files.createDirectories(inB);
      Path local = inB.resolve("x.snapshot");
      Files.write(local, file);
      Http.Response bad =
          hb.put(
              "/collections/copy/snapshots/recover",
              "{\"location\":\"" + local.toUri() + "\",\"checksum\":\"" + "0".repeat(64) + "\"}");
      assertThat(bad.status()).isEqualTo(400);
      assertThat(bad.error()).contains("checksum mismatch");
      Http.Response malformed =
          hb.put(
              "/collections/copy/snapshots/recover",
              "{\"location\":\"" + local.toUri() + "\",\"checksum\":\"00\"}");
      assertThat(malformed.status()).isEqualTo(422);
      assertThat(malformed.error()).contains("invalid_sha256_hash");
      assertThat(count(hb, "copy")).isEqualTo(count(ha, "c"));
      Path outside = tmp.resolve("outside.snapshot");
      Files.write(outside, file);
      Http.Response forbidden =
          hb.put(
              "/collections/copy/snapshots/recover", "{\"location\":\"" + outside.toUri() + "\"}");
      assertThat(forbidden.status()).isEqualTo(403);
      Http.Response notSnapshot =
          hb.put(
              "/collections/copy/snapshots/recover",
              "{\"location\":\"" + writeGarbage(inB.resolve("junk.snapshot")).toUri() + "\"}");
      assertThat(notSnapshot.status()).isEqualTo(400);
      assertThat(count(hb, "copy")).isEqualTo(count(ha, "c"));
      assertThat(hb.get("/collections/copy/snapshots/..%2F..%2Fmeta%2Fcollections.json").status())
          .isEqualTo(404);
      Http.Response remote =
          hb.put(
              "/collections/copy/snapshots/recover",
              "{\"location\":\"http://192.0.2.1/x.snapshot\"}");
      assertThat(remote.status()).isEqualTo(400);
      assertThat(remote.error()).contains("from this host only");

      // By file location inside the snapshots directory, then delete.
      ok(
          hb.put(
              "/collections/third/snapshots/recover", "{\"location\":\"" + local.toUri() + "\"}"));
      assertThat(count(hb, "third")).isEqualTo(count(ha, "c"));
      ok(ha.delete("/collections/c/snapshots/" + duringName));
      assertThat(ha.get("/collections/c/snapshots").result()).hasSize(1);

      // A full snapshot holds a collection snapshot per collection, each recoverable alone.
      JsonNode full = hb.post("/snapshots", null).result();
      assertThat(hb.get("/snapshots").result()).hasSize(1);
      byte[] fullFile = download(b.url() + "/snapshots/" + full.get("name").asString());
      java.util.Map<String, byte[]> entries = new java.util.TreeMap<>();
      try (java.util.zip.ZipInputStream zin =
          new java.util.zip.ZipInputStream(new java.io.ByteArrayInputStream(fullFile))) {
        for (var e = zin.getNextEntry(); e != null; e = zin.getNextEntry()) {
          entries.put(e.getName(), zin.readAllBytes());
        }
      }
      assertThat(entries.keySet())
          .containsExactly("copy.snapshot", "during.snapshot", "third.snapshot");
      assertThat(
              upload(b.url() + "/collections/fourth/snapshots/upload", entries.get("copy.snapshot"))
                  .statusCode())
          .isEqualTo(200);
      assertThat(count(hb, "fourth")).isEqualTo(count(ha, "c"));
      ok(hb.delete("/snapshots/" + full.get("name").asString()));
      assertThat(hb.get("/snapshots").result()).isEmpty();
      assertThat(hb.get("/snapshots/..%2F.lock").status()).isEqualTo(404);
    }
  }

  /**
   * Shard snapshots: each shard of a 3-shard collection is snapshotted on server a, downloaded, and
   * recovered into a fresh server's collection of the same configuration (by upload, by {@code
   * file:} location, by URL); after each, the recovered shard's points are a's and the others are
   * b's own, and once all three are in, b answers counts and searches exactly as a.
   */
  @Test
  void shardSnapshotsRecoverShardsOfAnotherServersCollection() throws Exception {
    Random rnd = TestSeeds.random("SnapshotIT.shards");
    String config =
        "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"},\"shard_number\":3}";
    try (ServerProcess a = new ServerProcess(tmp.resolve("a"), tmp.resolve("a.log")).start();
        ServerProcess b = new ServerProcess(tmp.resolve("b"), tmp.resolve("b.log")).start()) {
      Http ha = new Http(a.url());
      Http hb = new Http(b.url());
      ok(ha.put("/collections/c", config));
      ok(ha.put("/collections/c/index", "{\"field_name\":\"tag\",\"field_schema\":\"keyword\"}"));
      for (int i = 0; i < 12; i++) {
        ok(ha.put("/collections/c/points?wait=true", batch(rnd, i * BATCH)));
      }
      ok(ha.post("/collections/c/flush", null)); // some points in sealed segments
      ok(ha.put("/collections/c/points?wait=true", batch(rnd, 12 * BATCH)));
      int points = 13 * BATCH;

      ok(hb.put("/collections/copy", config));
      ok(
          hb.put(
              "/collections/copy/index", "{\"field_name\":\"tag\",\"field_schema\":\"keyword\"}"));
      for (int i = 0; i < 4; i++) {
        ok(hb.put("/collections/copy/points?wait=true", batch(rnd, i * BATCH + 40)));
      }

      // Create, list, download each shard's snapshot.
      String[] names = new String[3];
      byte[][] files = new byte[3][];
      for (int shard = 0; shard < 3; shard++) {
        String base = "/collections/c/shards/" + shard + "/snapshots";
        assertThat(ha.get(base).result()).isEmpty();
        JsonNode d = ha.post(base + "?wait=true", null).result();
        names[shard] = d.get("name").asString();
        assertThat(ha.get(base).result()).hasSize(1);
        files[shard] = download(a.url() + base + "/" + names[shard]);
        assertThat(
                HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(files[shard])))
            .isEqualTo(d.get("checksum").asString());
      }
      assertThat(ha.get("/collections/c/snapshots").result()).isEmpty();
      Http.Response noShard = ha.get("/collections/c/shards/3/snapshots");
      assertThat(noShard.status()).isEqualTo(404);
      assertThat(noShard.error()).isEqualTo("Not found: shard 3 not found");
      assertThat(
              ha.get("/collections/c/shards/0/snapshots/..%2F..%2F..%2Fmeta%2Fcollections.json")
                  .status())
          .isEqualTo(404);

      // A malformed checksum is a 422 on both upload routes; a wrong one a 400.
      for (String route :
          new String[] {
            "/collections/copy/shards/0/snapshots/upload", "/collections/copy/snapshots/upload"
          }) {
        HttpResponse<String> bad = upload(b.url() + route + "?checksum=abc", files[0], 422);
        assertThat(bad.body()).contains("invalid_sha256_hash");
      }
      assertThat(
              upload(
                      b.url()
                          + "/collections/copy/shards/0/snapshots/upload?checksum="
                          + "3".repeat(64),
                      files[0])
                  .statusCode())
          .isEqualTo(400);
      // A shard of another shard, or of a collection configured otherwise: refused.
      HttpResponse<String> wrongShard =
          upload(b.url() + "/collections/copy/shards/1/snapshots/upload", files[0]);
      assertThat(wrongShard.statusCode()).isEqualTo(400);
      assertThat(wrongShard.body()).contains("the snapshot is of shard 0, not of shard 1");
      ok(
          hb.put(
              "/collections/small",
              "{\"vectors\":{\"size\":4,\"distance\":\"Cosine\"},\"shard_number\":3}"));
      HttpResponse<String> wrongConfig =
          upload(b.url() + "/collections/small/shards/0/snapshots/upload", files[0]);
      assertThat(wrongConfig.statusCode()).isEqualTo(400);
      assertThat(wrongConfig.body()).contains("dimension " + DIM + " vs 4");
      Map<Long, String> bOwn = payloads(hb, "copy", points);

      // Shard 0 by upload: its points are a's, the others still b's.
      assertThat(
              upload(
                      b.url()
                          + "/collections/copy/shards/0/snapshots/upload?checksum="
                          + sha256(files[0]),
                      files[0])
                  .statusCode())
          .isEqualTo(200);
      Map<Long, String> aAll = payloads(ha, "c", points);
      Map<Long, String> mixed = new HashMap<>();
      for (long id = 0; id < points; id++) {
        Map<Long, String> from = io.flashvec.index.PointId.of(id).shard(3) == 0 ? aAll : bOwn;
        if (from.containsKey(id)) {
          mixed.put(id, from.get(id));
        }
      }
      assertThat(payloads(hb, "copy", points)).isEqualTo(mixed);

      // Shard 1 by file: location inside b's snapshots directory, shard 2 by URL on this host.
      Path local =
          Files.createDirectories(tmp.resolve("b").resolve("snapshots")).resolve("s1.snapshot");
      Files.write(local, files[1]);
      ok(
          hb.put(
              "/collections/copy/shards/1/snapshots/recover",
              "{\"location\":\""
                  + local.toUri()
                  + "\",\"checksum\":\""
                  + sha256(files[1])
                  + "\"}"));
      ok(
          hb.put(
              "/collections/copy/shards/2/snapshots/recover",
              "{\"location\":\""
                  + a.url()
                  + "/collections/c/shards/2/snapshots/"
                  + names[2]
                  + "\",\"priority\":\"snapshot\"}"));
      assertThat(count(hb, "copy")).isEqualTo(count(ha, "c")).isEqualTo(points);
      assertThat(payloads(hb, "copy", points)).isEqualTo(aAll);
      for (int q = 0; q < 5; q++) {
        String query =
            "{\"query\":"
                + vector(rnd)
                + ",\"limit\":10,\"with_payload\":true,"
                + "\"filter\":{\"must\":{\"key\":\"tag\",\"match\":{\"value\":\"t"
                + q
                + "\"}}}}";
        assertThat(hb.post("/collections/copy/points/query", query).result().get("points"))
            .isEqualTo(ha.post("/collections/c/points/query", query).result().get("points"));
      }

      // Durable across a restart; deleting snapshots.
      b.restart();
      hb = new Http(b.url());
      assertThat(payloads(hb, "copy", points)).isEqualTo(aAll);
      ok(ha.delete("/collections/c/shards/1/snapshots/" + names[1]));
      assertThat(ha.get("/collections/c/shards/1/snapshots").result()).isEmpty();
      assertThat(ha.delete("/collections/c/shards/1/snapshots/" + names[1]).status())
          .isEqualTo(404);
    }
  }

  @Test
  void aPartialShardSnapshotCarriesWhatChangedSinceTheRecipientsManifest() throws Exception {
    Random rnd = TestSeeds.random("SnapshotIT.partial");
    String config = "{\"vectors\":{\"size\":" + DIM + ",\"distance\":\"Cosine\"}}";
    try (ServerProcess a = new ServerProcess(tmp.resolve("a"), tmp.resolve("a.log")).start();
        ServerProcess b = new ServerProcess(tmp.resolve("b"), tmp.resolve("b.log")).start()) {
      Http ha = new Http(a.url());
      Http hb = new Http(b.url());
      ok(ha.put("/collections/c", config));
      for (int i = 0; i < 8; i++) {
        ok(ha.put("/collections/c/points?wait=true", batch(rnd, i * BATCH)));
      }
      sealed(ha, "c", 1); // a sealed segment
      // b's shard starts as a's: recovered from a full shard snapshot
      ok(hb.put("/collections/copy", config));
      JsonNode full = ha.post("/collections/c/shards/0/snapshots?wait=true", null).result();
      byte[] fullFile =
          download(a.url() + "/collections/c/shards/0/snapshots/" + full.get("name").asString());
      upload(b.url() + "/collections/copy/shards/0/snapshots/upload", fullFile, 200);

      // a moves on: deletions in the sealed segment, new points (a flush would merge the small
      // segments into a new one, which the partial snapshot would then carry whole)
      ok(ha.post("/collections/c/points/delete?wait=true", "{\"points\":[1,2,3,60,61]}"));
      for (int i = 8; i < 13; i++) {
        ok(ha.put("/collections/c/points?wait=true", batch(rnd, i * BATCH)));
      }
      int points = 13 * BATCH;

      // b's manifest: its segments with a version per file
      JsonNode manifest = hb.get("/collections/copy/shards/0/snapshot/partial/manifest").result();
      assertThat(manifest.size()).isPositive();
      String seg = manifest.propertyNames().iterator().next();
      assertThat(manifest.get(seg).get("segment_id").asString()).isEqualTo(seg);
      assertThat(manifest.get(seg).get("file_versions").size()).isPositive();
      assertThat(hb.get("/collections/copy/shards/1/snapshot/partial/manifest").status())
          .isEqualTo(404);

      // a's partial snapshot against it leaves b's unchanged files out
      byte[] partial =
          postForBytes(
              a.url() + "/collections/c/shards/0/snapshot/partial/create", manifest.toString());
      java.util.Set<String> entries = zipEntries(partial);
      int omitted = 0;
      for (var f : manifest.get(seg).get("file_versions").properties()) {
        if (!entries.contains("shard/segments/" + seg + "/" + f.getKey())) {
          omitted++;
        }
      }
      assertThat(omitted).as("files of %s left out of %s", seg, entries).isPositive();
      byte[] againstNothing =
          postForBytes(a.url() + "/collections/c/shards/0/snapshot/partial/create", "{}");
      assertThat(zipEntries(againstNothing)).containsAll(entries);
      assertThat(partial.length).isLessThan(againstNothing.length);

      // refusals: malformed checksum (422, before the upload), the wrong kind on either route,
      // a shard that lacks the omitted files; none touches the shard
      String partialRoute = "/collections/copy/shards/0/snapshot/partial/recover";
      assertThat(upload(b.url() + partialRoute + "?checksum=abc", partial, 422).body())
          .contains("invalid_sha256_hash");
      assertThat(upload(b.url() + partialRoute, fullFile, 400).body())
          .contains("not a partial shard snapshot");
      assertThat(
              upload(b.url() + "/collections/copy/shards/0/snapshots/upload", partial, 400).body())
          .contains("/snapshot/partial/recover");
      ok(hb.put("/collections/fresh", config));
      assertThat(
              upload(b.url() + "/collections/fresh/shards/0/snapshot/partial/recover", partial, 400)
                  .body())
          .contains("does not hold segments/");
      assertThat(count(hb, "fresh")).isZero();
      assertThat(
              hb.post(
                      "/collections/copy/shards/0/snapshot/partial/recover_from",
                      "{\"peer_url\":\"" + a.url() + "\"}")
                  .status())
          .isEqualTo(400);

      // recovered: b's shard answers as a's
      upload(b.url() + partialRoute + "?checksum=" + sha256(partial), partial, 200);
      assertThat(count(hb, "copy")).isEqualTo(count(ha, "c")).isEqualTo(points - 5);
      assertThat(payloads(hb, "copy", points)).isEqualTo(payloads(ha, "c", points));
      b.restart();
      hb = new Http(b.url());
      assertThat(payloads(hb, "copy", points)).isEqualTo(payloads(ha, "c", points));
    }
  }

  /** Flushes the collection and waits until it has at least {@code segments} sealed segments. */
  private static void sealed(Http h, String c, int segments) {
    ok(h.post("/collections/" + c + "/flush", null));
    JsonNode[] last = new JsonNode[1];
    io.flashvec.testing.Await.until(
        java.time.Duration.ofSeconds(60),
        c + " sealed",
        () -> String.valueOf(last[0]),
        () -> {
          last[0] = h.get("/collections/" + c).result();
          int n = 0;
          for (JsonNode s : last[0].at("/flashvec/segments")) {
            n += s.path("state").asString().equals("sealed") ? 1 : 0;
          }
          return n >= segments && last[0].get("status").asString().equals("green");
        });
  }

  private static byte[] postForBytes(String url, String json) throws Exception {
    HttpResponse<byte[]> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json))
                    .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
    return r.body();
  }

  private static java.util.Set<String> zipEntries(byte[] zip) throws Exception {
    java.util.Set<String> out = new java.util.TreeSet<>();
    try (java.util.zip.ZipInputStream in =
        new java.util.zip.ZipInputStream(new java.io.ByteArrayInputStream(zip))) {
      java.util.zip.ZipEntry e;
      while ((e = in.getNextEntry()) != null) {
        out.add(e.getName());
      }
    }
    return out;
  }

  /** Every point's payload and vector as JSON text, by id, of ids below {@code upTo}. */
  private static Map<Long, String> payloads(Http h, String c, int upTo) {
    StringBuilder ids = new StringBuilder("{\"ids\":[");
    for (int i = 0; i < upTo; i++) {
      ids.append(i == 0 ? "" : ",").append(i);
    }
    Http.Response r =
        h.post(
            "/collections/" + c + "/points",
            ids.append("],\"with_payload\":true,\"with_vector\":true}").toString());
    ok(r);
    Map<Long, String> out = new HashMap<>();
    for (JsonNode p : r.result()) {
      out.put(p.get("id").longValue(), p.get("payload") + " " + p.get("vector"));
    }
    return out;
  }

  private static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  private static Path writeGarbage(Path p) throws Exception {
    Files.writeString(p, "not a zip");
    return p;
  }

  static String batch(Random rnd, int first) {
    StringBuilder sb = new StringBuilder("{\"points\":[");
    for (int i = 0; i < BATCH; i++) {
      int id = first + i;
      sb.append(i == 0 ? "" : ",")
          .append("{\"id\":")
          .append(id)
          .append(",\"vector\":")
          .append(vector(rnd))
          .append(",\"payload\":{\"tag\":\"t")
          .append(id % 7)
          .append("\"}}");
    }
    return sb.append("]}").toString();
  }

  static String vector(Random rnd) {
    StringBuilder sb = new StringBuilder("[");
    for (int d = 0; d < DIM; d++) {
      sb.append(d == 0 ? "" : ",").append((float) rnd.nextGaussian());
    }
    return sb.append(']').toString();
  }

  static long count(Http h, String c) {
    Http.Response r = h.post("/collections/" + c + "/points/count", "{\"exact\":true}");
    ok(r);
    return r.result().get("count").longValue();
  }

  static byte[] download(String url) throws Exception {
    HttpResponse<byte[]> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url)).GET().build(),
                HttpResponse.BodyHandlers.ofByteArray());
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body();
  }

  static HttpResponse<String> upload(String url, byte[] file) throws Exception {
    HttpResponse<String> r = upload(url, file, -1);
    assertThat(r.statusCode()).as(r.body()).isIn(200, 400);
    return r;
  }

  /** Uploads {@code file}; {@code status} is the status expected (-1: not checked here). */
  static HttpResponse<String> upload(String url, byte[] file, int status) throws Exception {
    String boundary = "flashvec-" + System.nanoTime();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.write(
        ("--"
                + boundary
                + "\r\nContent-Disposition: form-data; name=\"snapshot\"; filename=\"s.snapshot\""
                + "\r\nContent-Type: application/octet-stream\r\n\r\n")
            .getBytes(StandardCharsets.UTF_8));
    body.write(file);
    body.write(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url))
                    .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray()))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    if (status >= 0) {
      assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    }
    return r;
  }

  static void ok(Http.Response r) {
    assertThat(r.status()).as(r.raw()).isIn(200, 202);
  }
}
