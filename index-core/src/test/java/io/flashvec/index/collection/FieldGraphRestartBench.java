package io.flashvec.index.collection;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.DenseVectorParams;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.TestVectors;
import io.flashvec.index.segment.FieldGraph;
import io.flashvec.index.shard.Shard;
import io.flashvec.index.shard.Snapshot;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.testing.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How long a collection with a named vector takes to open until that vector's graph is complete:
 * with its file (read back) and without it (built again, as before ADR 0040's amendment). Not part
 * of the suite (no {@code Test} suffix); run it by name:
 *
 * <pre>
 * ./mvnw -B -ntp -o test -pl index-core -am -Dtest=FieldGraphRestartBench \
 *     -Dsurefire.failIfNoSpecifiedTests=false [-Dbench.points=50000 -Dbench.dim=128]
 * </pre>
 */
class FieldGraphRestartBench {

  @TempDir Path tmp;

  @Test
  void restartWithAndWithoutTheGraphFile() throws Exception {
    int points = Integer.getInteger("bench.points", 50_000);
    int dim = Integer.getInteger("bench.dim", 128);
    CollectionConfig config =
        new CollectionConfig(
            4,
            Distance.DOT,
            1,
            1,
            IndexParams.DEFAULT,
            Map.of(),
            "image",
            Map.of("text", new DenseVectorParams(dim, Distance.COSINE)));
    ExecutorService builds = Executors.newSingleThreadExecutor();
    Shard.Options options =
        new Shard.Options(points + 1, Wal.Options.defaults(), FileIO.DEFAULT)
            .withBuildExecutor(builds)
            .withIndexedFields(config.denseVectors());
    Path dir = tmp.resolve("bench");
    try {
      Collection c = Collection.open("bench", dir, config, options);
      Random r = new Random(42);
      for (int from = 0; from < points; from += 5000) {
        List<Point> batch = new ArrayList<>();
        for (int i = from; i < Math.min(points, from + 5000); i++) {
          batch.add(
              new Point(
                  PointId.of(i),
                  TestVectors.gaussian(r, 4),
                  null,
                  Map.of(),
                  Map.of("text", TestVectors.gaussian(r, dim))));
        }
        c.upsert(batch, true);
      }
      c.flush();
      long t0 = System.nanoTime();
      awaitGraph(c, true);
      System.out.printf(
          Locale.ROOT, "[bench] first build and write: %.2f s%n", (System.nanoTime() - t0) / 1e9);
      c.close();
      Path file = graphFile(dir);
      System.out.printf(
          Locale.ROOT, "[bench] graph file: %.1f MB%n", Files.size(file) / (1024.0 * 1024));

      // with the file
      long withFile = Long.MAX_VALUE;
      for (int run = 0; run < 3; run++) {
        t0 = System.nanoTime();
        c = Collection.open("bench", dir, config, options);
        assertThat(graph(c).loaded()).isTrue();
        awaitGraph(c, false);
        withFile = Math.min(withFile, System.nanoTime() - t0);
        c.close();
      }

      // without it: the graph is built again after the open
      Path saved = tmp.resolve("saved.fvs");
      Files.move(file, saved);
      t0 = System.nanoTime();
      c = Collection.open("bench", dir, config, options);
      long opened = System.nanoTime() - t0;
      assertThat(graph(c).loaded()).isFalse();
      awaitGraph(c, false);
      long without = System.nanoTime() - t0;
      c.close();
      System.out.printf(
          Locale.ROOT,
          "[bench] %d x %d, open until the graph is complete: with its file %.3f s, without"
              + " %.3f s (open alone %.3f s): %.0fx%n",
          points,
          dim,
          withFile / 1e9,
          without / 1e9,
          opened / 1e9,
          (double) without / withFile);
    } finally {
      builds.shutdownNow();
    }
  }

  private static FieldGraph graph(Collection c) {
    Snapshot snap = c.shards().get(0).acquire();
    try {
      return snap.sealed().isEmpty() ? null : snap.sealed().get(0).fieldGraph("text");
    } finally {
      snap.release();
    }
  }

  private static void awaitGraph(Collection c, boolean written) {
    Await.until(
        Duration.ofMinutes(30),
        "the field graph complete",
        () -> {
          FieldGraph g = graph(c);
          return g != null && g.built() == g.nodes() && (!written || g.fileBytes() > 0);
        });
  }

  private static Path graphFile(Path dir) throws IOException {
    try (var s = Files.walk(dir)) {
      return s.filter(p -> p.getFileName().toString().equals(FieldGraph.fileName("text")))
          .findFirst()
          .orElseThrow();
    }
  }
}
