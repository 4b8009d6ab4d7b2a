package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.Searches;
import io.flashvec.index.diskann.DiskAnnSegment;
import io.flashvec.index.diskann.DiskAnnSettings;
import io.flashvec.index.diskann.DiskAnnWriter;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shard whose build memory is far below its segments' size seals and merges them through
 * partitioned builds, and searches them as well as a shard that builds them in one piece.
 */
@ExtendWith(TestSeeds.Reporter.class)
class ShardPartitionedMergeTest {

  private static final int DIM = 16;
  private static final int SEAL = 2_000;
  private static final int SEALS = 4;
  private static final long TINY_BUDGET = 1L << 20;

  @TempDir Path tmp;

  private final ExecutorService builds =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("test-build").factory());
  private final ExecutorService compactions =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("test-compaction").factory());

  @AfterEach
  void stop() throws InterruptedException {
    builds.shutdown();
    compactions.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    assertThat(compactions.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
  }

  private Shard open(Path dir, long buildMemory) {
    return Shard.open(
        dir,
        0,
        DIM,
        Distance.EUCLID,
        IndexParams.DEFAULT,
        new Shard.Options(
                SEAL,
                Wal.Options.defaults(),
                FileIO.DEFAULT,
                builds,
                64,
                new Shard.Compaction(
                    compactions, null, 0.2, 2, Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS, true))
            .withDiskAnn(DiskAnnSettings.DEFAULT.withBuildMemoryBytes(buildMemory)));
  }

  private static void settle(Shard s) {
    Await.until(
        Duration.ofSeconds(300),
        "index builds and compactions finished",
        () -> {
          assertThat(s.buildFailure()).as("index build failure").isNull();
          assertThat(s.compactionFailure()).as("compaction failure").isNull();
          return !s.indexing() && !s.compacting();
        });
  }

  private static int largestDiskSegment(Shard s) {
    int largest = 0;
    for (Segment seg : s.snapshot().segments()) {
      if (seg instanceof DiskAnnSegment) {
        largest = Math.max(largest, seg.size());
      }
    }
    return largest;
  }

  @Test
  void aMergeFarLargerThanTheBudgetSearchesAsWellAsAOneShotMerge() throws Exception {
    Random r = TestSeeds.random("ShardPartitionedMergeTest");
    int n = SEAL * SEALS;
    float[][] data = new float[n][];
    float[][] centres = new float[16][DIM];
    for (float[] c : centres) {
      for (int j = 0; j < DIM; j++) {
        c[j] = (float) (2 * r.nextGaussian());
      }
    }
    for (int i = 0; i < n; i++) {
      float[] c = centres[r.nextInt(centres.length)];
      data[i] = new float[DIM];
      for (int j = 0; j < DIM; j++) {
        data[i][j] = c[j] + (float) r.nextGaussian();
      }
    }
    assertThat(
            DiskAnnWriter.buildsInPartitions(
                SEAL, DIM, IndexParams.DEFAULT.maxDegree(), TINY_BUDGET))
        .as("even a seal is larger than the budget")
        .isTrue();
    double[] recall = new double[2];
    long[] budgets = {TINY_BUDGET, DiskAnnSettings.defaultBuildMemoryBytes()};
    float[][] queries = new float[400][DIM];
    for (float[] q : queries) {
      float[] c = centres[r.nextInt(centres.length)];
      for (int j = 0; j < DIM; j++) {
        q[j] = c[j] + (float) r.nextGaussian();
      }
    }
    for (int run = 0; run < 2; run++) {
      Path dir = tmp.resolve("shard-" + run);
      try (Shard s = open(dir, budgets[run])) {
        for (int seal = 0; seal < SEALS; seal++) {
          List<Point> batch = new ArrayList<>();
          for (int i = seal * SEAL; i < (seal + 1) * SEAL; i++) {
            batch.add(new Point(PointId.of(i), data[i], null));
          }
          s.awaitDurable(s.upsert(batch));
          s.flush();
          settle(s);
        }
        s.compact(true).get(300, TimeUnit.SECONDS);
        settle(s);
        assertThat(s.compactionsDone()).as("merges ran").isPositive();
        assertThat(largestDiskSegment(s)).as("a merged segment").isGreaterThan(SEAL);
        assertThat(s.count()).isEqualTo(n);
        recall[run] = recall(s, data, queries);
      }
      try (Stream<Path> left = Files.walk(dir)) {
        assertThat(left.map(p -> p.getFileName().toString()))
            .as("no scratch or temporary files left")
            .noneMatch(f -> f.endsWith(".tmp") || f.startsWith("part-"));
      }
    }
    System.out.printf(
        Locale.ROOT,
        "[flashvec] shard recall@10 L=16 after merges of %d x %d: budget %d B %.4f, default %.4f%n",
        n,
        DIM,
        TINY_BUDGET,
        recall[0],
        recall[1]);
    // 400 queries at search list 16 over 8,000 points: the one-shot figure alone moves by about a
    // point from run to run (measured 0.9583–0.9740), and a partitioned build loses up to about
    // two more (0.9388 against 0.9658 with seed BA5C4C0E5E52C958)
    assertThat(recall[0]).isGreaterThanOrEqualTo(0.9);
    assertThat(recall[0]).isGreaterThanOrEqualTo(recall[1] - 0.035);
  }

  private static double recall(Shard s, float[][] data, float[][] queries) {
    int k = 10;
    int hits = 0;
    for (float[] q : queries) {
      Integer[] idx = new Integer[data.length];
      Arrays.setAll(idx, i -> i);
      float[] d = new float[data.length];
      for (int i = 0; i < data.length; i++) {
        d[i] = Distance.EUCLID.score(q, data[i], 0);
      }
      Arrays.sort(idx, (a, b) -> Float.compare(d[a], d[b]));
      Set<Long> truth = new HashSet<>();
      for (int i = 0; i < k; i++) {
        truth.add((long) idx[i]);
      }
      for (Record rec :
          Searches.search(s, q, k, new SearchParams(16, 0, 0, false), null, false, false)) {
        if (truth.contains(rec.id().loBits())) {
          hits++;
        }
      }
    }
    return hits / (double) (queries.length * k);
  }
}
