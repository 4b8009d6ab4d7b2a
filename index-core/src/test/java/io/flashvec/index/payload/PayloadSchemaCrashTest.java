package io.flashvec.index.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * A payload-index change that dies before it commits (here: the rename of a built Lucene index
 * fails, as when the process is killed before it) leaves the old schema, in memory and after a
 * restart, and leaves nothing behind that stops the collection from opening: the half-built {@code
 * payload-<hash>.tmp/} directory, which is never empty, is removed at start-up.
 */
@ExtendWith(TestSeeds.Reporter.class)
class PayloadSchemaCrashTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  @TempDir Path tmp;

  private final ExecutorService builds = Executors.newSingleThreadExecutor();
  private final List<Collection> open = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (Collection c : open) {
      c.close();
    }
    builds.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
  }

  private Collection open(FileIO io) {
    Shard.Options o =
        new Shard.Options(50, Wal.Options.defaults().withSegmentBytes(32 << 10), io)
            .withBuildExecutor(builds);
    Collection c =
        Collection.open(
            "c",
            tmp.resolve("c"),
            new CollectionConfig(4, Distance.EUCLID, 1, 1, IndexParams.DEFAULT),
            o);
    open.add(c);
    return c;
  }

  private static void settle(Collection c) {
    Await.until(Duration.ofSeconds(60), "builds finish", () -> !c.info().indexing());
  }

  private static PayloadFieldSchema field(String key, String type) {
    return PayloadFieldSchema.parse(key, M.getNodeFactory().stringNode(type));
  }

  private static byte[] payload(long i) {
    return ("{\"color\":\"c" + (i % 3) + "\",\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> leftovers(Path dir) throws Exception {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.map(Path::toString).filter(p -> p.endsWith(".tmp")).toList();
    }
  }

  /**
   * The points written, the schema acknowledged before the killed change, and the one the
   * collection showed after the killed change failed.
   */
  private record Killed(List<Point> points, PayloadSchema acknowledged, PayloadSchema visible) {}

  /**
   * Writes points into a disk segment, creates one payload index, then creates a second one whose
   * build is "killed" before its rename: Lucene has written and fsynced its files into {@code
   * payload-<hash>.tmp/}, the rename fails and nothing is cleaned up after it (every delete fails
   * too), as after a SIGKILL at that moment. The collection is closed.
   */
  private Killed killAPayloadIndexBuild(String salt) throws Exception {
    Random r = TestSeeds.random("PayloadSchemaCrashTest." + salt);
    FaultyFileIO faulty = new FaultyFileIO(new CrashSimulatingFileIO());
    Collection c = open(faulty);
    List<Point> points = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      points.add(
          new Point(
              PointId.of(i),
              new float[] {r.nextFloat(), r.nextFloat(), r.nextFloat(), r.nextFloat()},
              payload(i)));
    }
    c.upsert(points, true);
    c.flush();
    settle(c);
    c.createPayloadIndex(field("color", "keyword"), true);
    PayloadSchema acknowledged = c.payloadSchema();

    faulty.failFrom(
        FaultyFileIO.Op.ATOMIC_MOVE, 1, p -> p.getFileName().toString().startsWith("payload-"));
    faulty.failFrom(FaultyFileIO.Op.DELETE, 1);
    assertThatThrownBy(() -> c.createPayloadIndex(field("n", "integer"), true))
        .isInstanceOf(RuntimeException.class);
    assertThat(leftovers(tmp)).as("the killed build left its directory").isNotEmpty();
    PayloadSchema visible = c.payloadSchema();
    open.remove(c);
    c.close();
    return new Killed(points, acknowledged, visible);
  }

  @Test
  void aCollectionOpensAfterAPayloadIndexBuildWasKilledAndTheBuildLeavesNothing() throws Exception {
    Killed k = killAPayloadIndexBuild("opens");
    Collection again = open(new CrashSimulatingFileIO());
    assertThat(again.count()).isEqualTo(120);
    for (Point p : k.points()) {
      Record got = again.get(p.id(), true, true);
      assertThat(got.vector()).isEqualTo(p.vector());
      assertThat(got.payload()).isEqualTo(p.payload());
    }
    assertThat(leftovers(tmp)).as("no leftovers of the interrupted build").isEmpty();
  }

  @Test
  void aPayloadIndexChangeKilledBeforeItsCommitIsNotInTheSchemaAfterARestart() throws Exception {
    Killed k = killAPayloadIndexBuild("schema");
    assertThat(k.visible())
        .as("a change that was not acknowledged is not visible")
        .isEqualTo(k.acknowledged());
    try (var dirs = Files.walk(tmp)) {
      // Whatever the open does with the leftover, the schema file must not name the new index.
      assertThat(dirs.filter(p -> p.getFileName().toString().equals(PayloadSchema.FILE)))
          .allSatisfy(
              f -> assertThat(Files.readString(f)).contains("\"color\"").doesNotContain("\"n\""));
    }
    Collection again = open(new CrashSimulatingFileIO());
    assertThat(again.payloadSchema())
        .as("the schema after a restart is the acknowledged one")
        .isEqualTo(k.acknowledged());
  }
}
