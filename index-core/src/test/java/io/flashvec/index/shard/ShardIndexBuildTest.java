package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.Searches;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sealing builds DiskANN segments in the background, installs them, checkpoints and truncates the
 * WAL; a reopened shard loads the segments instead of replaying the WAL.
 */
class ShardIndexBuildTest {

  static final int DIM = 16;

  @TempDir Path tmp;
  final ExecutorService builds = Executors.newSingleThreadExecutor();

  @AfterEach
  void shutdown() {
    builds.shutdownNow();
  }

  private Shard.Options options() {
    return new Shard.Options(
        300, Wal.Options.defaults().withSegmentBytes(16 << 10), FileIO.DEFAULT, builds, 64);
  }

  private static void awaitIndexed(Shard s) {
    Await.until(Duration.ofSeconds(60), "builds finished", () -> !s.indexing());
    assertThat(s.buildFailure()).isNull();
  }

  @Test
  void sealedSegmentsAreIndexedCheckpointedAndReopened() throws Exception {
    Random r = TestSeeds.random("shard-index-build");
    Path dir = tmp.resolve("shard");
    List<float[]> vectors = new ArrayList<>();
    try (Shard s = Shard.open(dir, 0, DIM, Distance.EUCLID, IndexParams.DEFAULT, options())) {
      for (int batch = 0; batch < 10; batch++) {
        List<Point> pts = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          float[] v = new float[DIM];
          for (int j = 0; j < DIM; j++) {
            v[j] = (float) r.nextGaussian();
          }
          vectors.add(v);
          int id = vectors.size() - 1;
          pts.add(
              new Point(
                  PointId.of(id), v, ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8)));
        }
        s.awaitDurable(s.upsert(pts));
      }
      // Deletes and an update that land before and during the builds.
      s.delete(List.of(PointId.of(3), PointId.of(700)));
      s.upsert(List.of(new Point(PointId.of(5), new float[DIM], null)));
      awaitIndexed(s);
      s.awaitDurable(s.delete(List.of(PointId.of(10))));
      long disk = s.snapshot().segments().stream().filter(x -> x.diskBytes() > 0).count();
      assertThat(disk).as("sealed segments became disk segments").isGreaterThanOrEqualTo(2);
      assertThat(s.count()).isEqualTo(1000 - 3);
      assertThat(s.get(PointId.of(3), false, false)).isNull();
      assertThat(s.get(PointId.of(5), false, true).vector()).containsOnly(0f);
      assertThat(Files.exists(dir.resolve("manifest.fvs"))).isTrue();
      assertThat(s.wal().segmentCount())
          .as("WAL truncated after checkpoint")
          .isLessThanOrEqualTo(3);
      assertSearchFinds(s, vectors);
    }
    try (Shard s = Shard.open(dir, 0, DIM, Distance.EUCLID, IndexParams.DEFAULT, options())) {
      assertThat(s.wal().recovery().recordsReplayed())
          .as("only records after the checkpoint")
          .isLessThan(10);
      assertThat(s.count()).isEqualTo(1000 - 3);
      assertThat(s.get(PointId.of(3), false, false)).isNull();
      assertThat(s.get(PointId.of(10), false, false)).isNull();
      assertThat(s.get(PointId.of(700), false, false)).isNull();
      assertThat(new String(s.get(PointId.of(999), true, false).payload(), StandardCharsets.UTF_8))
          .isEqualTo("{\"id\":999}");
      assertThat(s.get(PointId.of(5), false, true).vector()).containsOnly(0f);
      assertSearchFinds(s, vectors);
    }
  }

  private static void assertSearchFinds(Shard s, List<float[]> vectors) {
    int found = 0;
    for (int id = 100; id < 200; id++) {
      List<Record> hits =
          Searches.search(s, vectors.get(id), 1, SearchParams.DEFAULT, null, false, false);
      if (!hits.isEmpty() && hits.getFirst().id().equals(PointId.of(id))) {
        found++;
      }
    }
    assertThat(found).as("each stored vector finds itself").isGreaterThanOrEqualTo(95);
    for (Segment seg : s.snapshot().segments()) {
      assertThat(seg.state()).isNotEqualTo(Segment.State.INDEXING);
    }
  }
}
