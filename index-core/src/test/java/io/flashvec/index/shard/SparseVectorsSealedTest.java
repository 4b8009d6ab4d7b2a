package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;

/**
 * The sparse vector contract with segments sealed every 40 points into on-disk DiskANN segments
 * (their vectors file written, merged by no one, read back on reopen).
 */
class SparseVectorsSealedTest extends SparseVectorsContractTest {

  private final ExecutorService builds =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("diskann-build").factory());

  @AfterEach
  void stopBuilds() throws InterruptedException {
    builds.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).as("builds stopped").isTrue();
  }

  @Override
  protected int sealThreshold() {
    return 40;
  }

  @Override
  protected java.util.concurrent.Executor buildExecutor() {
    return builds;
  }

  @Override
  protected void checkLayout(Shard s) {
    var segs = s.snapshot().segments();
    assertThat(segs).anyMatch(seg -> seg.onDisk() && seg.hasSparse());
    assertThat(segs).anyMatch(seg -> seg.onDisk() && seg.hasDense());
    assertThat(segs).anyMatch(seg -> seg.onDisk() && seg.withoutVector() > 0);
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
}
