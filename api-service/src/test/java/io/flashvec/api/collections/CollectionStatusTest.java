package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.CollectionTuning;
import io.flashvec.index.IndexingState;
import io.flashvec.index.collection.Collection;
import io.flashvec.index.payload.PayloadSchema;
import io.flashvec.storage.FsyncPolicy;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link CollectionStatus}: yellow while points wait for an index or a build, compaction or merge
 * is running, queued or planned; green only once nothing is pending.
 */
class CollectionStatusTest {

  private static Collection.Info info(
      IndexingState st,
      boolean indexing,
      boolean compacting,
      int deferredBuilds,
      String buildFailure) {
    return new Collection.Info(
        1000,
        1,
        0,
        0,
        List.of(),
        indexing,
        buildFailure,
        compacting,
        0,
        null,
        deferredBuilds,
        CollectionTuning.DEFAULT,
        FsyncPolicy.ALWAYS,
        PayloadSchema.EMPTY,
        Map.of(),
        st);
  }

  private static String status(IndexingState st) {
    return CollectionStatus.of(info(st, false, false, 0, null));
  }

  @Test
  void greenOnlyWhenEveryPointIsIndexedAndNothingIsPending() {
    assertThat(status(new IndexingState(1000, 0, 0, 0, 0, 0, false))).isEqualTo("green");
    assertThat(status(IndexingState.EMPTY)).isEqualTo("green");
  }

  @Test
  void yellowWhileALiveGraphOrAFrozenSegmentHasABacklog() {
    assertThat(status(new IndexingState(400, 600, 0, 0, 0, 0, false))).isEqualTo("yellow");
    assertThat(status(new IndexingState(0, 1000, 1, 0, 0, 0, false))).isEqualTo("yellow");
  }

  @Test
  void yellowWhileAMergeIsPlannedOrRunning() {
    assertThat(status(new IndexingState(1000, 0, 0, 0, 0, 1, false)))
        .as("planned by the merge policy, not yet taken up")
        .isEqualTo("yellow");
    assertThat(status(new IndexingState(1000, 0, 0, 0, 1, 1, false)))
        .as("running")
        .isEqualTo("yellow");
    assertThat(
            CollectionStatus.of(
                info(new IndexingState(1000, 0, 0, 0, 0, 0, false), false, true, 0, null)))
        .as("a forced compaction")
        .isEqualTo("yellow");
  }

  @Test
  void yellowWhileABuildRunsEvenWithBuildsDeferredGreyWhenTheyOnlyWait() {
    IndexingState idle = new IndexingState(500, 0, 0, 0, 0, 0, true);
    assertThat(CollectionStatus.of(info(idle, false, false, 2, null))).isEqualTo("grey");
    assertThat(CollectionStatus.of(info(idle, true, false, 2, null))).isEqualTo("yellow");
  }

  @Test
  void redWhenABuildOrTheWalFailedWhateverIsPending() {
    assertThat(
            CollectionStatus.of(
                info(new IndexingState(0, 1000, 1, 1, 0, 1, false), true, false, 0, "io error")))
        .isEqualTo("red");
  }
}
