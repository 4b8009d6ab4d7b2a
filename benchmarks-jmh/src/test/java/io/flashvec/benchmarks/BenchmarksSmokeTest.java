package io.flashvec.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.index.internal.VectorOps;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Calls every benchmark method once, directly and with tiny parameters, so the benchmarks keep
 * compiling and working. Measures nothing: speed is JMH's job, never a unit test's. Data is seeded
 * with {@link AbstractBenchmark#SEED}.
 */
class BenchmarksSmokeTest {

  private final Blackhole bh =
      new Blackhole(
          "Today's password is swordfish. I understand instantiating Blackholes directly is"
              + " dangerous.");

  @AfterEach
  void evaporate() {
    bh.evaporate("Yes, I am Stephen Hawking, and know a thing or two about black holes.");
  }

  @Test
  void syntheticVectorsAreDeterministicUnitLength() {
    SyntheticVectors model = new SyntheticVectors(AbstractBenchmark.SEED, 40);
    float[][] a = model.sample(50, 1);
    float[][] b = new SyntheticVectors(AbstractBenchmark.SEED, 40).sample(50, 1);
    assertThat(a).isDeepEqualTo(b);
    assertThat(model.sample(50, 2)[0]).isNotEqualTo(a[0]);
    for (float[] v : a) {
      assertThat(v).hasSize(40);
      assertThat(VectorOps.dot(v, 0, v, 0, v.length)).isCloseTo(1f, within(1e-4f));
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {3, 96, 100})
  void distanceBaselinesAgreeWithVectorOps(int dim) {
    DistanceBenchmark s = new DistanceBenchmark();
    s.dim = dim;
    s.setup();
    for (int b = 0; b < DistanceBenchmark.BATCH; b++) {
      int off = b * dim;
      assertThat(DistanceBenchmark.scalarDot(s.query, 0, s.data, off, dim))
          .isCloseTo(VectorOps.dot(s.query, 0, s.data, off, dim), within(1e-3f * dim));
      assertThat(DistanceBenchmark.scalarSquareDistance(s.query, 0, s.data, off, dim))
          .isCloseTo(VectorOps.squareDistance(s.query, 0, s.data, off, dim), within(1e-3f * dim));
    }
    s.dotVectorOps(bh);
    s.dotScalar(bh);
    s.squareDistanceVectorOps(bh);
    s.squareDistanceScalar(bh);
  }

  @ParameterizedTest
  @ValueSource(strings = {"never", "always-sync-1", "always-sync-16"})
  void walAppendRunsAndCleansUp(String durability) throws Exception {
    WalAppendBenchmark s = new WalAppendBenchmark();
    s.recordBytes = 1024;
    s.durability = durability;
    s.setup();
    try {
      for (int i = 1; i <= 20; i++) {
        assertThat(s.append()).isEqualTo(i);
      }
      long durable =
          switch (durability) {
            case "always-sync-1" -> 20; // synced after every append
            case "always-sync-16" -> 16; // synced after the 16th only
            default -> 0; // policy never: nothing forced
          };
      assertThat(s.wal.durableSeq()).isEqualTo(durable);
    } finally {
      s.tearDown();
    }
    assertThat(Files.exists(s.dir)).isFalse();
  }

  @Test
  void pqScoringRuns() {
    PqScoringBenchmark s = new PqScoringBenchmark();
    s.n = 600;
    s.dim = 32;
    s.subspaces = 4;
    s.setup();
    s.pqTable(bh);
    s.pqScore(bh);
    s.exactScore(bh);
  }

  @Test
  void graphSearchFindsNeighboursAndCleansUp() throws Exception {
    GraphSearchBenchmark.Index index = new GraphSearchBenchmark.Index();
    index.n = 1000;
    index.dim = 32;
    index.build();
    try {
      GraphSearchBenchmark s = new GraphSearchBenchmark();
      s.searchList = 50;
      s.setup(index);
      // A sanity floor only; recall is measured by load-gen and printed by the benchmark.
      assertThat(s.recall).isGreaterThan(0.8);
      s.search(index, bh);
    } finally {
      index.close();
    }
    assertThat(Files.exists(index.root)).isFalse();
  }

  @Test
  void liveGraphSearchFindsNeighboursBesideSealedResults() {
    LiveGraphSearchBenchmark.Segment segment = new LiveGraphSearchBenchmark.Segment();
    segment.n = 3000;
    segment.dim = 64;
    segment.sealedPoints = 2000;
    segment.build();
    LiveGraphSearchBenchmark s = new LiveGraphSearchBenchmark();
    s.searchList = 60;
    s.share = 0.6;
    s.setup(segment);
    // A sanity floor only; the benchmark prints recall@10 over the growing and sealed points.
    assertThat(s.recall).isGreaterThan(0.8);
    s.search(segment, bh);
  }

  @Test
  void partitionedBuildComparisonRuns() throws Exception {
    java.nio.file.Path dir = Files.createTempDirectory("flashvec-partitioned-smoke");
    try {
      PartitionedBuildComparison.main(new String[] {"3000", "16", "0.25", dir.toString()});
      assertThat(dir.resolve("seg-1")).isDirectory();
      assertThat(dir.resolve("seg-2")).isDirectory();
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
