package io.flashvec.cluster.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.cluster.SnapshotDescription;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shard snapshots of a standalone server: one shard of a 3-shard collection is snapshotted and
 * recovered; points of that shard are then exactly as in the snapshot, the other shards keep every
 * later write, and snapshots of another shard, another configuration or with a wrong checksum are
 * refused without touching the collection.
 */
@ExtendWith(TestSeeds.Reporter.class)
class ShardSnapshotsTest {

  static final CollectionConfig CONFIG =
      new CollectionConfig(4, Distance.COSINE, 3, 1, IndexParams.DEFAULT);

  @TempDir Path data;

  private final List<LocalCollectionService> services = new ArrayList<>();

  @AfterEach
  void close() {
    services.forEach(LocalCollectionService::close);
  }

  private LocalCollectionService open(Path dir) {
    LocalCollectionService s =
        new LocalCollectionService(
            dir,
            new Shard.Options(
                40, Wal.Options.defaults().withSegmentBytes(32 << 10), FileIO.DEFAULT));
    services.add(s);
    s.recover();
    return s;
  }

  private static List<Point> points(Random r, int from, int n, String tag) {
    List<Point> out = new ArrayList<>();
    for (int i = from; i < from + n; i++) {
      float[] v = new float[4];
      for (int j = 0; j < 4; j++) {
        v[j] = (float) r.nextGaussian();
      }
      out.add(
          new Point(
              PointId.of(i),
              v,
              ("{\"i\":" + i + ",\"tag\":\"" + tag + "\"}").getBytes(StandardCharsets.UTF_8)));
    }
    return out;
  }

  /** Every point's payload, by id. */
  private static Map<PointId, String> contents(LocalCollectionService s, String c, int upTo) {
    List<PointId> ids = new ArrayList<>();
    for (int i = 0; i < upTo; i++) {
      ids.add(PointId.of(i));
    }
    Map<PointId, String> out = new HashMap<>();
    for (Record r : s.retrieve(c, ids, true, false)) {
      out.put(r.id(), new String(r.payload(), StandardCharsets.UTF_8));
    }
    return out;
  }

  @Test
  void aRecoveredShardIsAsInTheSnapshotAndTheOtherShardsKeepTheirWrites() {
    Random rnd = TestSeeds.random("ShardSnapshotsTest");
    LocalCollectionService s = open(data);
    s.createCollection("c", CONFIG);
    s.upsert("c", points(rnd, 0, 300, "before"), true);
    Map<PointId, String> atSnapshot = contents(s, "c", 600);

    assertThat(s.listShardSnapshots("c", 1)).isEmpty();
    SnapshotDescription d = s.createShardSnapshot("c", 1);
    assertThat(s.listShardSnapshots("c", 1)).containsExactly(d);
    assertThat(s.listShardSnapshots("c", 0)).isEmpty();
    assertThat(s.listSnapshots("c")).as("not a collection snapshot").isEmpty();
    Path file = s.shardSnapshotFile("c", 1, d.name());
    assertThat(CollectionSnapshots.sha256(file)).isEqualTo(d.checksum());

    // Later writes: overwrites, new points and deletions on every shard.
    s.upsert("c", points(rnd, 200, 400, "after"), true);
    List<PointId> deleted = new ArrayList<>();
    for (int i = 0; i < 100; i += 3) {
      deleted.add(PointId.of(i));
    }
    s.delete("c", deleted, true);
    Map<PointId, String> afterWrites = contents(s, "c", 600);

    s.recoverShardSnapshot("c", 1, file, d.checksum(), true);

    Map<PointId, String> now = contents(s, "c", 600);
    Map<PointId, String> expected = new HashMap<>();
    for (int i = 0; i < 600; i++) {
      PointId id = PointId.of(i);
      Map<PointId, String> from = id.shard(3) == 1 ? atSnapshot : afterWrites;
      if (from.containsKey(id)) {
        expected.put(id, from.get(id));
      }
    }
    assertThat(now).isEqualTo(expected);
    assertThat(s.count("c")).isEqualTo(expected.size());
    assertThat(now).isNotEqualTo(afterWrites); // shard 1 lost its later writes

    // And so after a restart (the swapped shard replays its own WAL).
    s.close();
    services.remove(s);
    LocalCollectionService again = open(data);
    assertThat(contents(again, "c", 600)).isEqualTo(expected);
    assertThat(data.resolve("collections/c/shards"))
        .isDirectoryNotContaining(p -> p.getFileName().toString().startsWith("."));

    // Deleting the snapshot.
    again.deleteShardSnapshot("c", 1, d.name());
    assertThat(again.listShardSnapshots("c", 1)).isEmpty();
    assertThatThrownBy(() -> again.deleteShardSnapshot("c", 1, d.name()))
        .isInstanceOf(NotFoundException.class);
  }

  @Test
  void aSnapshotRecoversIntoAnotherServersCollectionOfTheSameConfiguration() throws Exception {
    Random rnd = TestSeeds.random("ShardSnapshotsTest.other");
    LocalCollectionService a = open(data.resolve("a"));
    a.createCollection("c", CONFIG);
    a.upsert("c", points(rnd, 0, 200, "a"), true);
    Path file = a.shardSnapshotFile("c", 2, a.createShardSnapshot("c", 2).name());

    LocalCollectionService b = open(data.resolve("b"));
    b.createCollection("other", CONFIG);
    b.upsert("other", points(rnd, 0, 200, "b"), true);
    Path copy = Files.createTempFile("shard", ".snapshot");
    try {
      Files.copy(file, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      b.recoverShardSnapshot("other", 2, copy, null, false);
    } finally {
      Files.deleteIfExists(copy);
    }
    Map<PointId, String> inA = contents(a, "c", 200);
    Map<PointId, String> inB = contents(b, "other", 200);
    for (int i = 0; i < 200; i++) {
      PointId id = PointId.of(i);
      if (id.shard(3) == 2) {
        assertThat(inB.get(id)).isEqualTo(inA.get(id)).contains("\"a\"");
      } else {
        assertThat(inB.get(id)).contains("\"b\"");
      }
    }
  }

  @Test
  void mismatchesAreRefusedAndTheShardIsKept() {
    Random rnd = TestSeeds.random("ShardSnapshotsTest.refused");
    LocalCollectionService s = open(data);
    s.createCollection("c", CONFIG);
    s.createCollection("wide", new CollectionConfig(8, Distance.DOT, 3, 1, IndexParams.DEFAULT));
    s.createCollection("two", new CollectionConfig(4, Distance.COSINE, 2, 1, IndexParams.DEFAULT));
    s.upsert("c", points(rnd, 0, 100, "c"), true);
    Path one = s.shardSnapshotFile("c", 1, s.createShardSnapshot("c", 1).name());
    Path whole = s.snapshotFile("c", s.createSnapshot("c").name());
    Map<PointId, String> before = contents(s, "c", 100);

    assertThatThrownBy(() -> s.recoverShardSnapshot("c", 1, one, "3".repeat(64), true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("Snapshot checksum mismatch: expected " + "3".repeat(64));
    assertThatThrownBy(() -> s.recoverShardSnapshot("wide", 1, one, null, true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "Wrong input: the shard snapshot is of a collection configured differently from"
                + " `wide`: dimension 4 vs 8, distance COSINE vs DOT (snapshot vs collection)");
    assertThatThrownBy(() -> s.recoverShardSnapshot("two", 1, one, null, true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("shard_number 3 vs 2");
    assertThatThrownBy(() -> s.recoverShardSnapshot("c", 0, one, null, true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("the snapshot is of shard 1, not of shard 0");
    assertThatThrownBy(() -> s.recoverShardSnapshot("c", 1, whole, null, true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("not a FlashVec shard snapshot");
    assertThatThrownBy(() -> s.recoverSnapshot("x", one, null, true))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("not a FlashVec collection snapshot");
    assertThatThrownBy(() -> s.recoverShardSnapshot("c", 3, one, null, true))
        .isInstanceOf(NotFoundException.class)
        .hasMessage("Not found: shard 3 not found");
    assertThatThrownBy(() -> s.createShardSnapshot("c", 7))
        .isInstanceOf(NotFoundException.class)
        .hasMessage("Not found: shard 7 not found");
    assertThatThrownBy(() -> s.listShardSnapshots("missing", 0))
        .isInstanceOf(NotFoundException.class);
    assertThat(contents(s, "c", 100)).isEqualTo(before);
    assertThat(s.exists("x")).isFalse();
  }

  @Test
  void requestsGet503WhileTheCollectionIsReopenedAndAFailedChangeKeepsIt() {
    Random rnd = TestSeeds.random("ShardSnapshotsTest.reopen");
    LocalCollectionService s = open(data);
    s.createCollection("c", CONFIG);
    s.upsert("c", points(rnd, 0, 50, "c"), true);
    s.directory()
        .reopen(
            "c",
            "shard 1 is recovered from a snapshot",
            d -> {
              assertThatThrownBy(() -> s.count("c"))
                  .isInstanceOf(UnavailableException.class)
                  .hasMessage(
                      "Service unavailable: collection `c` is closed while shard 1 is recovered"
                          + " from a snapshot; retry shortly");
              assertThat(s.listCollections()).containsExactly("c");
            });
    assertThat(s.count("c")).isEqualTo(50);
    assertThatThrownBy(
            () ->
                s.directory()
                    .reopen(
                        "c",
                        "testing",
                        d -> {
                          throw new java.io.IOException("injected");
                        }))
        .hasMessageContaining("injected");
    assertThat(s.count("c")).isEqualTo(50);
  }

  @Test
  void aCrashDuringTheSwapLeavesTheOldOrTheNewShard() throws Exception {
    Path c = data.resolve("c");
    Path shards = Files.createDirectories(c.resolve("shards"));
    // moved aside, replacement not yet in place: moved back
    Files.createDirectories(shards.resolve(".old-1"));
    Files.writeString(shards.resolve(".old-1/wal"), "old");
    Files.createDirectories(shards.resolve(".incoming-1"));
    // swapped, old not yet deleted: the new one stays
    Files.createDirectories(shards.resolve("2"));
    Files.writeString(shards.resolve("2/wal"), "new");
    Files.createDirectories(shards.resolve(".old-2"));
    CollectionSnapshots.repairShardSwaps(c);
    try (var l = Files.list(shards)) {
      assertThat(l.map(p -> p.getFileName().toString()).sorted().toList())
          .containsExactly("1", "2");
    }
    assertThat(Files.readString(shards.resolve("1/wal"))).isEqualTo("old");
    assertThat(Files.readString(shards.resolve("2/wal"))).isEqualTo("new");
  }
}
