package io.flashvec.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.segment.Segment;
import io.flashvec.index.shard.Shard;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.Wal;
import io.flashvec.testing.Await;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract every index type keeps: recall against brute force, deletions and updates never
 * returned, counts, and the same answers after a restart. Subclasses pick the type and its recall
 * floor.
 */
abstract class BaseIndexTypeTestCase {

  static final int DIM = 32;
  static final int N = 1500;
  static final int K = 10;

  @TempDir Path tmp;
  final ExecutorService builds = Executors.newSingleThreadExecutor();
  final ExecutorService live = Executors.newSingleThreadExecutor();

  @AfterEach
  void shutdown() {
    builds.shutdownNow();
    live.shutdownNow();
  }

  /** Whether growing segments build live graphs that seals write (ADR 0011). */
  boolean liveGraph() {
    return false;
  }

  /** The index type under test. */
  abstract String type();

  /** The lowest recall@10 this type must reach with default search parameters. */
  abstract double minRecall();

  private Shard open(Path dir) {
    Shard.Options o =
        new Shard.Options(500, Wal.Options.defaults(), FileIO.DEFAULT, builds, 100)
            .withLiveIndexer(liveGraph() ? live : null);
    return Shard.open(dir, 0, DIM, Distance.COSINE, new IndexParams(type(), 32, 64, 1.2f, 0), o);
  }

  private static void awaitIndexed(Shard s) {
    Await.until(Duration.ofSeconds(60), "builds finished", () -> !s.indexing());
    assertThat(s.buildFailure()).isNull();
  }

  @Test
  void recallDeletesUpdatesAndRestart() throws Exception {
    Random r = TestSeeds.random("index-contract-" + type());
    float[][] data = TestVectors.latent(r, N, DIM);
    float[][] prepared = new float[N][];
    Path dir = tmp.resolve("shard");
    Set<Integer> deleted = new HashSet<>();
    try (Shard s = open(dir)) {
      List<Point> pts = new ArrayList<>();
      for (int i = 0; i < N; i++) {
        prepared[i] = Distance.COSINE.prepare(data[i]);
        pts.add(new Point(PointId.of(i), prepared[i], null));
      }
      s.awaitDurable(s.upsert(pts));
      for (int i = 0; i < N; i += 7) {
        deleted.add(i);
      }
      s.delete(deleted.stream().map(i -> PointId.of(i)).toList());
      s.flush();
      awaitIndexed(s);
      assertThat(s.count()).isEqualTo(N - deleted.size());
      check(s, r, prepared, deleted);
    }
    try (Shard s = open(dir)) {
      assertThat(s.count()).isEqualTo(N - deleted.size());
      for (Segment seg : s.snapshot().segments()) {
        assertThat(seg.state()).isNotEqualTo(Segment.State.INDEXING);
      }
      check(s, r, prepared, deleted);
    }
  }

  private void check(Shard s, Random r, float[][] prepared, Set<Integer> deleted) {
    int hits = 0;
    int queries = 40;
    for (int q = 0; q < queries; q++) {
      float[] query = Distance.COSINE.prepare(TestVectors.latent(r, 1, DIM)[0]);
      List<Integer> truth = bruteForce(query, prepared, deleted);
      List<Record> got = Searches.search(s, query, K, SearchParams.DEFAULT, null, false, false);
      assertThat(got).hasSize(K);
      for (Record rec : got) {
        int id = (int) rec.id().number();
        assertThat(deleted).as("a deleted point is never returned").doesNotContain(id);
        if (truth.contains(id)) {
          hits++;
        }
      }
    }
    double recall = hits / (double) (queries * K);
    System.out.println(
        "[flashvec] " + type() + (liveGraph() ? " (live graphs)" : "") + " recall@10 = " + recall);
    assertThat(recall).isGreaterThanOrEqualTo(minRecall());
  }

  private static List<Integer> bruteForce(float[] q, float[][] data, Set<Integer> deleted) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < data.length; i++) {
      if (!deleted.contains(i)) {
        ids.add(i);
      }
    }
    ids.sort(
        (a, b) ->
            Float.compare(
                Distance.COSINE.score(q, data[b], 0), Distance.COSINE.score(q, data[a], 0)));
    return ids.subList(0, K);
  }
}
