package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchParams;
import io.flashvec.index.Searches;
import io.flashvec.testing.Await;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The shard contract when sealed segments are built into on-disk DiskANN segments in the background
 * (installed, checkpointed and the WAL truncated while the test runs). Searches ask for {@code
 * exact}, so they must still match brute force; scores come from jvector's similarity functions,
 * converted back to our units, so they may differ from {@link Distance#score} by float rounding.
 */
class ShardDiskAnnTest extends ShardContractTest {

  private final ExecutorService builds =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("diskann-build").factory());

  @AfterEach
  void stopBuilds() throws InterruptedException {
    // Runs before the leak check of the superclass: no build may hold a file open by then.
    builds.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).as("builds stopped").isTrue();
  }

  @Override
  protected int sealThreshold() {
    return 60;
  }

  @Override
  protected java.util.concurrent.Executor buildExecutor() {
    return builds;
  }

  @Override
  protected SearchParams searchParams() {
    return new SearchParams(0, 0, 0, true);
  }

  @Override
  protected float tolerance(float score) {
    return 1e-4f * Math.max(1f, Math.abs(score));
  }

  @Override
  protected void settle(Shard s) {
    Await.until(
        Duration.ofSeconds(60),
        "index builds finished",
        () -> {
          assertThat(s.buildFailure()).as("index build failure").isNull();
          return !s.indexing();
        });
  }

  @Test
  void aSegmentWithOneLivePointIsIndexed() throws IOException {
    try (Shard s = open(Distance.EUCLID)) {
      float[] v = new float[DIM];
      v[3] = 1;
      s.upsert(List.of(new Point(PointId.of(1), v, null)));
      s.flush();
      settle(s);
      assertThat(s.snapshot().segments()).anyMatch(seg -> seg.diskBytes() > 0);
      List<Record> hits = Searches.search(s, v, 3, searchParams(), null, false, true);
      assertThat(hits).extracting(Record::id).containsExactly(PointId.of(1));
      assertThat(Searches.search(s, v, 3, SearchParams.DEFAULT, null, false, false)).hasSize(1);
    }
  }

  @Test
  void aTempFileOfAnInterruptedManifestWriteIsRemovedAtOpen() throws IOException {
    float[] v = new float[DIM];
    v[2] = 1;
    try (Shard s = open(Distance.EUCLID)) {
      s.upsert(List.of(new Point(PointId.of(7), v, null)));
      s.flush();
      settle(s);
    }
    // what a SIGKILL between writing the new manifest and renaming it leaves behind
    java.nio.file.Path stray = tmp.resolve("shard").resolve("manifest.fvs.tmp");
    java.nio.file.Files.write(stray, new byte[] {1, 2, 3});
    try (Shard s = open(Distance.EUCLID)) {
      assertThat(stray).doesNotExist();
      assertThat(s.get(PointId.of(7), false, true).vector()).containsExactly(v);
    }
  }
}
