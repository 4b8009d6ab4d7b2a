package io.flashvec.index.segment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.Searches;
import io.flashvec.testing.TestSeeds;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Appends across chunk boundaries and chunk-array growth, deletion bits, and lock-free reads. */
@ExtendWith(TestSeeds.Reporter.class)
class GrowingSegmentTest {

  static final int DIM = 3;

  /** More than 4 chunks of 1024, so the chunk array grows too. */
  static final int N = 4 * GrowingSegment.CHUNK + 700;

  private static float[] vector(int ord) {
    return new float[] {ord, -ord, ord % 7};
  }

  @Test
  void appendsReadBackAcrossChunksAndDeletionsAreCounted() {
    Random r = TestSeeds.random("GrowingSegmentTest.appends");
    GrowingSegment g = new GrowingSegment(3, DIM, null, Distance.DOT, 100);
    assertThat(g.state()).isEqualTo(Segment.State.GROWING);
    for (int i = 0; i < N; i++) {
      byte[] payload = i % 3 == 0 ? null : new byte[] {(byte) i};
      assertThat(g.append(PointId.of(i), vector(i), payload)).isEqualTo(i);
    }
    assertThat(g.size()).isEqualTo(N);
    assertThat(g.liveCount()).isEqualTo(N);
    for (int i : new int[] {0, 1, 1023, 1024, 1025, 2047, 2048, 4095, 4096, N - 1}) {
      assertThat(g.idAt(i)).isEqualTo(PointId.of(i));
      assertThat(g.vectorAt(i)).containsExactly(vector(i));
      assertThat(g.payloadAt(i)).isEqualTo(i % 3 == 0 ? null : new byte[] {(byte) i});
    }
    assertThatThrownBy(() -> g.idAt(N)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> g.idAt(-1)).isInstanceOf(IndexOutOfBoundsException.class);

    List<Integer> deleted = new ArrayList<>();
    for (int i = 0; i < N; i++) {
      if (r.nextInt(4) == 0 || i == 63 || i == 64 || i == 1023 || i == 1024) {
        deleted.add(i);
        assertThat(g.markDeleted(i)).isTrue();
      }
    }
    assertThat(g.markDeleted(deleted.getFirst())).as("already deleted").isFalse();
    assertThat(g.liveCount()).isEqualTo(N - deleted.size());
    for (int i = 0; i < N; i++) {
      assertThat(g.isDeleted(i)).isEqualTo(deleted.contains(i));
    }

    // Search scores every live point and nothing else.
    float[] q = {0.5f, 0.25f, -1f};
    TopK top = new TopK(Distance.DOT, N);
    Searches.search(g, q, SearchParams.DEFAULT, top, 9);
    int n = top.size();
    assertThat(n).isEqualTo(N - deleted.size());
    float[] scores = new float[n];
    int[] slots = new int[n];
    int[] ords = new int[n];
    top.drainBestFirst(scores, slots, ords);
    List<Integer> live = new ArrayList<>();
    for (int i = 0; i < N; i++) {
      if (!deleted.contains(i)) {
        live.add(i);
      }
    }
    live.sort(
        Comparator.comparingDouble((Integer i) -> Distance.DOT.score(q, vector(i), 0)).reversed());
    for (int i = 0; i < n; i++) {
      assertThat(slots[i]).isEqualTo(9);
      assertThat(scores[i]).isEqualTo(Distance.DOT.score(q, vector(ords[i]), 0));
      assertThat(scores[i]).isEqualTo(Distance.DOT.score(q, vector(live.get(i)), 0));
    }

    g.freeze();
    assertThat(g.state()).isEqualTo(Segment.State.SEALED);
    g.markIndexing(true);
    assertThat(g.state()).isEqualTo(Segment.State.INDEXING);
    assertThatThrownBy(() -> g.append(PointId.of(1), vector(1), null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("segment is sealed [segment=3]");
    assertThat(g.markDeleted(N - 1) || g.isDeleted(N - 1)).as("deletes still work").isTrue();
  }

  @Test
  void wrongDimensionIsRefused() {
    GrowingSegment g = new GrowingSegment(0, DIM);
    assertThatThrownBy(() -> g.append(PointId.of(1), new float[DIM + 1], null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("vector dimension mismatch [expected=3, got=4]");
    assertThat(g.size()).isZero();
  }

  @Test
  void readersSeeOnlyCompletePointsWhileTheWriterAppends() throws Exception {
    GrowingSegment g = new GrowingSegment(0, DIM, null, Distance.DOT, 100);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread writer =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    for (int i = 0; i < N; i++) {
                      g.append(PointId.of(i), vector(i), null);
                    }
                  } catch (Throwable t) {
                    failure.set(t);
                  }
                });
    float[] q = {1, 0, 0};
    int checks = 0;
    while (writer.isAlive() || checks < 10) {
      int size = g.size();
      if (size > 0) {
        int ord = size - 1;
        assertThat(g.idAt(ord)).isEqualTo(PointId.of(ord));
        assertThat(g.vectorAt(ord)).containsExactly(vector(ord));
      }
      TopK top = new TopK(Distance.DOT, 1);
      Searches.search(g, q, SearchParams.DEFAULT, top, 0);
      if (top.size() == 1) {
        float[] s = new float[1];
        int[] ord = new int[1];
        top.drainBestFirst(s, new int[1], ord);
        // The best point by the first component is the newest one the search saw, and complete.
        assertThat(s[0]).isEqualTo((float) ord[0]);
        assertThat(ord[0]).isGreaterThanOrEqualTo(size - 1);
      }
      checks++;
    }
    writer.join();
    assertThat(failure.get()).isNull();
    assertThat(g.size()).isEqualTo(N);
  }
}
