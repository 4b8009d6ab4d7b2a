package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.testing.Await;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;

/**
 * The sparse vector contract with segments sealed raw every 40 points and merged at once into
 * segments with a graph (the merge that builds raw segments), while the writes go on and after each
 * reopen.
 */
class SparseVectorsRawMergedTest extends SparseVectorsContractTest {

  private final ExecutorService builds =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("diskann-build").factory());
  private final ExecutorService merges =
      Executors.newSingleThreadExecutor(Thread.ofPlatform().name("diskann-merge").factory());

  /** Runs nothing: the live graphs stay empty, so every seal is raw. */
  private static final Executor NEVER = task -> {};

  @AfterEach
  void stopBuilds() throws InterruptedException {
    builds.shutdown();
    merges.shutdown();
    assertThat(builds.awaitTermination(60, TimeUnit.SECONDS)).as("builds stopped").isTrue();
    assertThat(merges.awaitTermination(60, TimeUnit.SECONDS)).as("merges stopped").isTrue();
  }

  @Override
  protected int sealThreshold() {
    return 40;
  }

  @Override
  protected Executor buildExecutor() {
    return builds;
  }

  @Override
  protected Shard.Options options(Shard.Options o) {
    return o.withLiveIndexer(LiveIndexer.of(NEVER))
        .withCompaction(
            new Shard.Compaction(
                    merges,
                    null,
                    0.2,
                    Shard.Compaction.DEFAULT_SEGMENTS_PER_TIER,
                    Shard.Compaction.DEFAULT_MAX_SEGMENT_POINTS,
                    true)
                .withRawQuietNanos(0));
  }

  @Override
  protected void checkLayout(Shard s) {
    var sealed = s.snapshot().sealed();
    assertThat(sealed).as("merged").isNotEmpty().allMatch(seg -> seg.hasGraph());
    assertThat(sealed).anyMatch(seg -> seg.hasSparse());
    assertThat(sealed).anyMatch(seg -> seg.hasDense());
    assertThat(sealed).anyMatch(seg -> seg.withoutVector() > 0);
  }

  @Override
  protected void settle(Shard s) {
    Await.until(
        Duration.ofSeconds(120),
        "raw seals and their merges finished",
        () -> {
          assertThat(s.buildFailure()).as("index build failure").isNull();
          assertThat(s.compactionFailure()).as("merge failure").isNull();
          return !s.indexing() && !s.compacting() && s.rawSegments() == 0;
        });
  }
}
