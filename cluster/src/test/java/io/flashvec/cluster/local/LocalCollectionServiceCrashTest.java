package io.flashvec.cluster.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FsyncPolicy;
import io.flashvec.storage.Wal;
import io.flashvec.storage.testing.CrashSimulatingFileIO;
import io.flashvec.testing.TestSeeds;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Crashes the standalone service at the crash points of the collection lifecycle (create, delete,
 * settings change: the metadata write, its atomic replacement, the deletion of the files) and
 * checks the recovery: other collections keep every acknowledged point, no collection fails to
 * open, and the operation in flight either happened or did not, whole: a created collection is
 * usable or absent, a deleted one is complete or gone with its files (a new one of the same name
 * starts empty), changed settings are the old or the new ones.
 */
@ExtendWith(TestSeeds.Reporter.class)
class LocalCollectionServiceCrashTest {

  private static final CollectionConfig CONFIG =
      new CollectionConfig(4, Distance.EUCLID, 2, 1, IndexParams.DEFAULT);

  @TempDir Path data;

  private final List<LocalCollectionService> services = new ArrayList<>();
  private final List<CrashSimulatingFileIO> ios = new ArrayList<>();

  @AfterEach
  void closeAndCheckLeaks() {
    services.forEach(LocalCollectionService::close);
    for (CrashSimulatingFileIO io : ios) {
      if (!io.crashed()) {
        io.assertNoOpenChannels();
      }
    }
  }

  private LocalCollectionService recovered(CrashSimulatingFileIO io) {
    ios.add(io);
    LocalCollectionService s =
        new LocalCollectionService(
            data, new Shard.Options(50, Wal.Options.defaults().withSegmentBytes(32 << 10), io));
    services.add(s);
    s.recover();
    return s;
  }

  /** The lifecycle operation crashed. */
  enum Op {
    CREATE,
    DELETE,
    RETUNE
  }

  static Stream<Arguments> crashes() {
    return Stream.of(
        Arguments.of(Op.CREATE, CrashPoint.ATOMIC_WRITE_TEMP_WRITTEN),
        Arguments.of(Op.CREATE, CrashPoint.ATOMIC_WRITE_RENAMED),
        Arguments.of(Op.CREATE, CrashPoint.COLLECTION_CREATE_METADATA_WRITTEN),
        Arguments.of(Op.CREATE, CrashPoint.WAL_SEGMENT_CREATED),
        Arguments.of(Op.DELETE, CrashPoint.ATOMIC_WRITE_TEMP_WRITTEN),
        Arguments.of(Op.DELETE, CrashPoint.ATOMIC_WRITE_RENAMED),
        Arguments.of(Op.DELETE, CrashPoint.COLLECTION_DELETE_METADATA_REMOVED),
        Arguments.of(Op.DELETE, CrashPoint.TREE_DELETE_PARTIAL),
        Arguments.of(Op.RETUNE, CrashPoint.ATOMIC_WRITE_TEMP_WRITTEN),
        Arguments.of(Op.RETUNE, CrashPoint.ATOMIC_WRITE_RENAMED),
        Arguments.of(Op.RETUNE, CrashPoint.COLLECTION_TUNING_WRITTEN));
  }

  private static List<Point> points(Random r, int n) {
    List<Point> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      float[] v = {(float) r.nextGaussian(), (float) r.nextGaussian(), 1, i};
      out.add(new Point(PointId.of(i), v, ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
    }
    return out;
  }

  private static void assertHolds(LocalCollectionService s, String name, List<Point> points) {
    assertThat(s.count(name)).as("points of %s", name).isEqualTo(points.size());
    for (Point p : points) {
      Record got = s.retrieve(name, List.of(p.id()), true, true).stream().findFirst().orElseThrow();
      assertThat(got.vector()).isEqualTo(p.vector());
      assertThat(got.payload()).isEqualTo(p.payload());
    }
  }

  @ParameterizedTest
  @MethodSource("crashes")
  void aCrashInTheCollectionLifecycleLeavesEveryCollectionOpenableAndTheOperationWholeOrUndone(
      Op op, CrashPoint point) throws Exception {
    Random r = TestSeeds.random("LocalCollectionServiceCrashTest." + op + point);
    CrashSimulatingFileIO io = new CrashSimulatingFileIO();
    LocalCollectionService s = recovered(io);
    List<Point> keep = points(r, 120);
    List<Point> victim = points(r, 70);
    s.createCollection("keep", CONFIG);
    s.upsert("keep", keep, true);
    s.flush("keep");
    s.createCollection("victim", CONFIG);
    s.upsert("victim", victim, true);
    CollectionTuning retuned = new CollectionTuning(0, FsyncPolicy.NEVER);

    io.armCrashPoint(point, 1);
    assertThatThrownBy(
            () -> {
              switch (op) {
                case CREATE -> s.createCollection("fresh", CONFIG);
                case DELETE -> s.deleteCollection("victim");
                case RETUNE -> s.updateCollection("victim", 0, FsyncPolicy.NEVER);
              }
            })
        .isInstanceOf(CrashSimulatingFileIO.Halt.class);
    CrashSimulatingFileIO.CrashReport report = io.crash(r);
    System.out.println("[flashvec] " + op + " crashed at " + point + ": " + report);
    s.close();

    LocalCollectionService after = recovered(new CrashSimulatingFileIO());
    assertThat(after.failed()).as("collections that failed to open").isEmpty();
    assertHolds(after, "keep", keep);
    switch (op) {
      case CREATE -> {
        if (after.exists("fresh")) {
          assertThat(after.count("fresh")).isZero();
          after.upsert("fresh", victim, true);
          assertHolds(after, "fresh", victim);
        }
        assertHolds(after, "victim", victim);
      }
      case DELETE -> {
        if (after.exists("victim")) {
          assertHolds(after, "victim", victim);
        } else {
          try (Stream<Path> dirs = Files.list(data.resolve("collections"))) {
            assertThat(dirs.map(p -> p.getFileName().toString()))
                .as("the deleted collection's files are gone")
                .doesNotContain("victim");
          }
          after.createCollection("victim", CONFIG);
          assertThat(after.count("victim")).as("a new collection of the same name").isZero();
        }
      }
      case RETUNE -> {
        assertHolds(after, "victim", victim);
        assertThat(after.describe("victim").info().tuning())
            .isIn(CollectionTuning.DEFAULT, retuned);
      }
    }
  }
}
