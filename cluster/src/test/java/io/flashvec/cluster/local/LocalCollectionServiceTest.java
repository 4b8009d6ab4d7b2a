package io.flashvec.cluster.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flashvec.cluster.Aliases;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.DataDirectoryInUseException;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.ConflictException;
import io.flashvec.index.Distance;
import io.flashvec.index.FlashVecException;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.UnavailableException;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(TestSeeds.Reporter.class)
class LocalCollectionServiceTest {

  static final CollectionConfig CONFIG =
      new CollectionConfig(4, Distance.DOT, 2, 1, IndexParams.DEFAULT);

  @TempDir Path data;

  /** Never calls the real fsync; both layers track channels for the leak check. */
  private final FaultyFileIO io = new FaultyFileIO(new CrashSimulatingFileIO());

  private final List<LocalCollectionService> services = new ArrayList<>();

  @AfterEach
  void closeAndCheckLeaks() {
    services.forEach(LocalCollectionService::close);
    io.assertNoOpenChannels();
  }

  private LocalCollectionService service() {
    LocalCollectionService s =
        new LocalCollectionService(
            data, new Shard.Options(50, Wal.Options.defaults().withSegmentBytes(32 << 10), io));
    services.add(s);
    return s;
  }

  private LocalCollectionService recovered() {
    LocalCollectionService s = service();
    s.recover();
    return s;
  }

  private static List<Point> points(Random r, int from, int n) {
    List<Point> out = new ArrayList<>();
    for (int i = from; i < from + n; i++) {
      float[] v = new float[4];
      for (int j = 0; j < 4; j++) {
        v[j] = (float) r.nextGaussian();
      }
      out.add(new Point(PointId.of(i), v, ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
    }
    return out;
  }

  private static SearchRequest query(float[] v, int limit) {
    return new SearchRequest(v, limit, 0, null, SearchParams.DEFAULT, true, true, null);
  }

  private static void assertStatus(ThrowingCallable call, Class<?> type, int status, String msg) {
    assertThatThrownBy(call)
        .isInstanceOf(type)
        .hasMessage(msg)
        .satisfies(e -> assertThat(((FlashVecException) e).httpStatus()).isEqualTo(status));
  }

  /** Every per-collection operation of the service, on one collection name. */
  private static List<ThrowingCallable> everyOperation(LocalCollectionService s, String name) {
    return List.of(
        () -> s.describe(name),
        () -> s.upsert(name, List.of(new Point(PointId.of(1), new float[4], null)), true),
        () -> s.delete(name, List.of(PointId.of(1)), true),
        () -> s.retrieve(name, List.of(PointId.of(1)), true, true),
        () -> s.count(name),
        () -> s.scroll(name, ScrollRequest.of(null, 10, false, false)),
        () -> s.search(name, query(new float[4], 3), new SearchStats()),
        () -> s.flush(name));
  }

  @Test
  void aSecondServiceOnTheSameDirectoryIsRefused() {
    LocalCollectionService first = recovered();
    first.createCollection("docs", CONFIG);
    for (int attempt = 0; attempt < 2; attempt++) {
      assertThatThrownBy(this::service)
          .isInstanceOf(DataDirectoryInUseException.class)
          .hasMessage(
              "data directory is used by another FlashVec process [dataDir="
                  + data.toAbsolutePath()
                  + ", pid="
                  + ProcessHandle.current().pid()
                  + "]");
    }
    // The refused attempt did not disturb the first service, nor drop its OS-level lock.
    assertThat(first.exists("docs")).isTrue();
    assertThat(osLockHeld()).as("the OS lock on the data directory is still held").isTrue();
    first.close();
    assertThat(osLockHeld()).as("close releases the OS lock").isFalse();
    LocalCollectionService again = recovered();
    assertThat(again.exists("docs")).isTrue();
  }

  /** Linux only: whether this process holds a lock on the data directory's lock file. */
  private boolean osLockHeld() {
    Path procLocks = Path.of("/proc/locks");
    assumeTrue(Files.isReadable(procLocks), "needs /proc/locks");
    try {
      long inode = (Long) Files.getAttribute(data.resolve(".lock"), "unix:ino");
      String pid = Long.toString(ProcessHandle.current().pid());
      // "1: POSIX  ADVISORY  WRITE 4242 08:01:1234567 0 EOF"
      return Files.readAllLines(procLocks).stream()
          .map(l -> l.trim().split("\\s+"))
          .anyMatch(f -> f.length > 5 && f[4].equals(pid) && f[5].endsWith(":" + inode));
    } catch (IOException | UnsupportedOperationException e) {
      assumeTrue(false, "cannot read lock state: " + e);
      return false;
    }
  }

  @Test
  void nothingIsServedBeforeRecover() {
    LocalCollectionService s = service();
    assertThat(s.ready()).isFalse();
    String msg = "Service is not ready: recovering the write-ahead logs";
    assertStatus(() -> s.createCollection("docs", CONFIG), UnavailableException.class, 503, msg);
    assertStatus(() -> s.deleteCollection("docs"), UnavailableException.class, 503, msg);
    assertStatus(s::listCollections, UnavailableException.class, 503, msg);
    assertStatus(() -> s.exists("docs"), UnavailableException.class, 503, msg);
    for (ThrowingCallable op : everyOperation(s, "docs")) {
      assertStatus(op, UnavailableException.class, 503, msg);
    }
    s.recover();
    assertThat(s.ready()).isTrue();
    assertThat(s.listCollections()).isEmpty();
    s.close();
    assertThat(s.ready()).isFalse();
    for (ThrowingCallable op : everyOperation(s, "docs")) {
      assertStatus(op, UnavailableException.class, 503, "Service is shutting down");
    }
  }

  @Test
  void createExistsDescribeAndDelete() {
    LocalCollectionService s = recovered();
    assertThat(s.exists("docs")).isFalse();
    s.createCollection("docs", CONFIG);
    s.createCollection("a-first", CONFIG);
    assertThat(s.exists("docs")).isTrue();
    assertThat(s.listCollections()).containsExactly("a-first", "docs");
    assertThat(s.describe("docs").config()).isEqualTo(CONFIG);
    assertThat(s.describe("docs").info().points()).isZero();
    Path dir = data.resolve("collections").resolve("docs");
    assertThat(dir).isDirectory();

    assertThat(s.deleteCollection("docs")).isTrue();
    assertThat(s.exists("docs")).isFalse();
    assertThat(dir).doesNotExist();
    assertThat(s.deleteCollection("docs")).as("already gone").isFalse();
    assertThat(s.listCollections()).containsExactly("a-first");
    // The name is free again, with a new configuration and no old data.
    CollectionConfig other = new CollectionConfig(8, Distance.COSINE, 1, 1, IndexParams.DEFAULT);
    s.createCollection("docs", other);
    assertThat(s.describe("docs").config()).isEqualTo(other);
    assertThat(s.count("docs")).isZero();
  }

  @Test
  void duplicatesAre409AndBadNames422() {
    LocalCollectionService s = recovered();
    s.createCollection("docs", CONFIG);
    assertStatus(
        () -> s.createCollection("docs", CONFIG),
        ConflictException.class,
        409,
        "Wrong input: Collection `docs` already exists!");
    for (String bad : new String[] {"../x", "a/b", ".hidden", "", "x".repeat(256)}) {
      assertThatThrownBy(() -> s.createCollection(bad, CONFIG))
          .isInstanceOf(CollectionNames.InvalidNameException.class);
      assertThatThrownBy(() -> s.deleteCollection(bad))
          .isInstanceOf(CollectionNames.InvalidNameException.class);
    }
    assertThat(data.resolve("x")).doesNotExist();
    assertThat(s.listCollections()).containsExactly("docs");
  }

  @Test
  void unknownCollectionsAre404() {
    LocalCollectionService s = recovered();
    s.createCollection("docs", CONFIG);
    for (ThrowingCallable op : everyOperation(s, "nope")) {
      assertStatus(op, NotFoundException.class, 404, "Not found: Collection `nope` doesn't exist!");
    }
  }

  @Test
  void aCollectionDirectoryWithoutMetadataIsRemovedAtRecover() throws IOException {
    try (LocalCollectionService s = recovered()) {
      s.createCollection("kept", CONFIG);
      s.upsert("kept", points(TestSeeds.random("orphans"), 0, 5), true);
    }
    // What a crash between creating the files and writing the metadata (or between removing the
    // metadata and the files) leaves behind.
    Path orphan = data.resolve("collections").resolve("orphan");
    Files.createDirectories(orphan.resolve("shards").resolve("0").resolve("wal"));
    Files.writeString(orphan.resolve("shards").resolve("0").resolve("wal").resolve("x.log"), "x");
    LocalCollectionService s = service();
    assertThat(orphan).as("nothing is removed before recover").exists();
    s.recover();
    assertThat(orphan).doesNotExist();
    assertThat(s.listCollections()).containsExactly("kept");
    assertThat(s.count("kept")).isEqualTo(5);
  }

  @Test
  void aCreateThatFailsLeavesNoCollection() {
    LocalCollectionService s = recovered();
    // Fail opening the first WAL segment of the new collection: after the metadata is written.
    io.failOnce(FaultyFileIO.Op.OPEN, 1, p -> p.getFileName().toString().startsWith("wal-"));
    assertThatThrownBy(() -> s.createCollection("docs", CONFIG))
        .hasRootCauseInstanceOf(FaultyFileIO.InjectedIOException.class);
    assertThat(s.exists("docs")).isFalse();
    assertThat(s.listCollections()).isEmpty();
    s.close();
    LocalCollectionService again = recovered();
    assertThat(again.listCollections()).as("metadata was rolled back").isEmpty();
    assertThat(data.resolve("collections").resolve("docs")).doesNotExist();
    again.createCollection("docs", CONFIG);
    assertThat(again.exists("docs")).isTrue();
  }

  @Test
  void dataSurvivesCloseAndReopen() {
    Random r = TestSeeds.random("LocalCollectionServiceTest.reopen");
    List<Point> pts = points(r, 0, 120);
    List<Record> before;
    float[] q = {1, 0, -1, 0.5f};
    try (LocalCollectionService s = recovered()) {
      s.createCollection("docs", CONFIG);
      s.createCollection("empty", new CollectionConfig(3, Distance.EUCLID, 1, 1, null));
      s.upsert("docs", pts, true);
      s.delete("docs", List.of(PointId.of(7), PointId.of(8)), true);
      s.flush("docs");
      s.upsert("docs", List.of(new Point(PointId.of(9), new float[] {1, 1, 1, 1}, null)), false);
      before = s.search("docs", query(q, 10), new SearchStats());
      assertThat(s.count("docs")).isEqualTo(118);
    }
    LocalCollectionService s = recovered();
    assertThat(s.listCollections()).containsExactly("docs", "empty");
    assertThat(s.describe("empty").config().dimension()).isEqualTo(3);
    assertThat(s.count("docs")).isEqualTo(118);
    assertThat(s.retrieve("docs", List.of(PointId.of(7), PointId.of(9)), false, true))
        .singleElement()
        .satisfies(rec -> assertThat(rec.vector()).containsExactly(1, 1, 1, 1));
    assertThat(s.retrieve("docs", List.of(PointId.of(100)), true, false).getFirst().payload())
        .isEqualTo(pts.get(100).payload());
    List<Record> after = s.search("docs", query(q, 10), new SearchStats());
    assertThat(after).extracting(Record::id).isEqualTo(before.stream().map(Record::id).toList());
    assertThat(after)
        .extracting(Record::score)
        .isEqualTo(before.stream().map(Record::score).toList());
    assertThat(s.scroll("docs", ScrollRequest.of(null, 1000, false, false)).points()).hasSize(118);
  }

  @Test
  void aliasesNameTheirCollectionEverywhereAndSurviveAReopen() {
    Random r = TestSeeds.random("LocalCollectionServiceTest.aliases");
    try (LocalCollectionService s = recovered()) {
      s.createCollection("docs_v1", CONFIG);
      s.createCollection("docs_v2", CONFIG);
      s.updateAliases(List.of(new Aliases.Create("docs", "docs_v1")));
      s.upsert("docs", points(r, 0, 10), true);
      assertThat(s.count("docs_v1")).isEqualTo(10);
      assertThat(s.count("docs")).isEqualTo(10);
      assertThat(s.exists("docs")).isTrue();
      assertThat(s.describe("docs").name()).isEqualTo("docs_v1");
      assertThat(s.search("docs", query(new float[] {1, 0, 0, 0}, 3), new SearchStats()))
          .hasSize(3);
      assertThat(s.updateCollection("docs", 500, null).indexingThreshold()).isEqualTo(500);
      assertThat(s.listCollections()).as("an alias is no collection").doesNotContain("docs");
      // switch the alias to the new version in one request
      s.updateAliases(List.of(new Aliases.Delete("docs"), new Aliases.Create("docs", "docs_v2")));
      assertThat(s.count("docs")).isZero();
      s.updateAliases(List.of(new Aliases.Create("old", "docs_v1")));
    }
    LocalCollectionService s = recovered();
    assertThat(s.aliases())
        .containsExactly(Map.entry("docs", "docs_v2"), Map.entry("old", "docs_v1"));
    assertThat(s.count("old")).isEqualTo(10);
    assertThat(s.updateCollection("old", null, null).indexingThreshold()).isEqualTo(500);
  }

  @Test
  void aliasErrorsChangeNothing() {
    LocalCollectionService s = recovered();
    s.createCollection("docs", CONFIG);
    s.updateAliases(List.of(new Aliases.Create("prod", "docs")));
    assertStatus(
        () -> s.updateAliases(List.of(new Aliases.Delete("prod"), new Aliases.Create("x", "nope"))),
        NotFoundException.class,
        404,
        "Not found: Collection `nope` doesn't exist!");
    assertStatus(
        () -> s.updateAliases(List.of(new Aliases.Create("docs", "docs"))),
        ConflictException.class,
        409,
        "Wrong input: Collection `docs` already exists!");
    assertStatus(
        () -> s.updateAliases(List.of(new Aliases.Create("a/b", "docs"))),
        CollectionNames.InvalidNameException.class,
        422,
        "Validation error in JSON body: [alias_name: invalid collection name [name=a/b,"
            + " allowed=1-255 characters of A-Z a-z 0-9 _ - . not starting with .]]");
    assertStatus(
        () -> s.createCollection("prod", CONFIG),
        InvalidInputException.class,
        400,
        "Wrong input: Can't create collection with name prod. Alias with the same name already"
            + " exists");
    assertStatus(
        () -> s.count("nope"),
        NotFoundException.class,
        404,
        "Not found: Collection `nope` doesn't exist!");
    assertThat(s.aliases()).containsExactly(Map.entry("prod", "docs"));
    // a write that fails on the disk keeps the aliases as they were, in memory and on disk
    io.failOnce(FaultyFileIO.Op.ATOMIC_MOVE, 1);
    assertThatThrownBy(() -> s.updateAliases(List.of(new Aliases.Delete("prod"))))
        .hasRootCauseInstanceOf(FaultyFileIO.InjectedIOException.class);
    assertThat(s.aliases()).containsExactly(Map.entry("prod", "docs"));
    assertThat(s.count("prod")).isZero();
    s.close();
    assertThat(recovered().aliases()).containsExactly(Map.entry("prod", "docs"));
  }

  @Test
  void deletingACollectionDeletesItsAliases() {
    try (LocalCollectionService s = recovered()) {
      s.createCollection("a", CONFIG);
      s.createCollection("b", CONFIG);
      s.updateAliases(
          List.of(
              new Aliases.Create("a1", "a"),
              new Aliases.Create("a2", "a"),
              new Aliases.Create("b1", "b")));
      assertThat(s.deleteCollection("a1")).as("collections are deleted by name only").isFalse();
      assertThat(s.deleteCollection("a")).isTrue();
      assertThat(s.aliases()).containsExactly(Map.entry("b1", "b"));
      assertThat(s.exists("a1")).isFalse();
      s.createCollection("a1", CONFIG); // the name is free again
    }
    assertThat(recovered().aliases()).containsExactly(Map.entry("b1", "b"));
  }

  @Test
  void aCollectionThatFailsToOpenAnswers503AndCanBeDeleted() throws IOException {
    try (LocalCollectionService s = recovered()) {
      s.createCollection("good", CONFIG);
      s.createCollection("bad", CONFIG);
      s.upsert("good", points(TestSeeds.random("corrupt"), 0, 3), true);
    }
    // A damaged shard manifest: the collection cannot be opened.
    Path manifest =
        data.resolve("collections")
            .resolve("bad")
            .resolve("shards")
            .resolve("1")
            .resolve("manifest.fvs");
    Files.write(manifest, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17});
    LocalCollectionService s = recovered();
    assertThat(s.count("good")).isEqualTo(3);
    assertThat(s.exists("bad")).isTrue();
    assertThat(s.listCollections()).containsExactly("bad", "good");
    Consumer<ThrowingCallable> unavailable =
        op ->
            assertThatThrownBy(op)
                .isInstanceOf(UnavailableException.class)
                .hasMessageStartingWith("Service unavailable: collection `bad` failed to open")
                .hasMessageContaining("manifest.fvs");
    everyOperation(s, "bad").forEach(unavailable);
    assertThatThrownBy(() -> s.createCollection("bad", CONFIG))
        .isInstanceOf(ConflictException.class);
    assertThat(s.deleteCollection("bad")).isTrue();
    assertThat(s.exists("bad")).isFalse();
    assertThat(data.resolve("collections").resolve("bad")).doesNotExist();
    s.createCollection("bad", CONFIG);
    assertThat(s.count("bad")).isZero();
  }
}
