package io.flashvec.index.jvector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import io.flashvec.storage.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A segment build stops at its next check once cancelled, also in the middle of the graph build,
 * and a build that fails (cancelled, or the disk full) leaves neither its temporary directory nor
 * its target behind.
 */
@ExtendWith(TestSeeds.Reporter.class)
class SegmentBuildCancellationTest {

  private static final int DIM = 16;
  private static final int N = 3000;

  @TempDir Path tmp;

  private FaultyFileIO io;
  private GrowingSegment source;
  private ForkJoinPool pool;

  @BeforeEach
  void setUp() {
    io = new FaultyFileIO();
    Random r = TestSeeds.random("SegmentBuildCancellationTest");
    source = new GrowingSegment(0, DIM);
    for (int i = 0; i < N; i++) {
      float[] v = new float[DIM];
      for (int d = 0; d < DIM; d++) {
        v[d] = (float) r.nextGaussian();
      }
      source.append(PointId.of(i), v, null);
    }
    source.freeze();
    pool = new ForkJoinPool(1);
  }

  @AfterEach
  void tearDown() {
    pool.shutdownNow();
    io.assertNoOpenChannels();
  }

  private int[] all() {
    int[] o = new int[N];
    for (int i = 0; i < N; i++) {
      o[i] = i;
    }
    return o;
  }

  @Test
  void theGraphBuildChecksForCancellationBetweenSlices() throws IOException {
    Path dir = tmp.resolve("seg-0000000001");
    // Checks: before PQ training, after it, then one per slice of 256 nodes (one thread).
    int slices =
        (N + DiskAnnSegment.GRAPH_SLICE_PER_THREAD - 1) / DiskAnnSegment.GRAPH_SLICE_PER_THREAD;
    AtomicInteger checks = new AtomicInteger();
    int built =
        DiskAnnSegment.build(
            io,
            dir,
            1,
            List.of(source),
            List.of(all()),
            DIM,
            Distance.EUCLID,
            IndexParams.DEFAULT,
            pool,
            () -> {
              checks.incrementAndGet();
              return false;
            });
    assertThat(built).isEqualTo(N);
    assertThat(checks.get())
        .as("checks of an uncancelled build")
        .isGreaterThanOrEqualTo(2 + slices);

    // Cancelled at the fourth check: the second slice of the graph.
    Path other = tmp.resolve("seg-0000000002");
    AtomicInteger seen = new AtomicInteger();
    assertThatThrownBy(
            () ->
                DiskAnnSegment.build(
                    io,
                    other,
                    2,
                    List.of(source),
                    List.of(all()),
                    DIM,
                    Distance.EUCLID,
                    IndexParams.DEFAULT,
                    pool,
                    () -> seen.incrementAndGet() >= 4))
        .isInstanceOf(CancellationException.class)
        .hasMessage("segment build cancelled [segment=2]");
    assertThat(seen.get()).as("stopped at the check that said so").isEqualTo(4);
    assertThat(other).doesNotExist();
    assertThat(other.resolveSibling(other.getFileName() + ".tmp")).doesNotExist();
    assertThat(dir).isDirectory();
  }

  @Test
  void aBuildFromALiveGraphIsCancelledAndLeavesNothing() throws IOException {
    GrowingSegment live =
        new GrowingSegment(
            1,
            DIM,
            new io.flashvec.index.segment.LiveGraph.Params(16, 32, 1.2f),
            Distance.EUCLID,
            32);
    Random r = TestSeeds.random("SegmentBuildCancellationTest#live");
    for (int i = 0; i < 5000; i++) {
      float[] v = new float[DIM];
      for (int d = 0; d < DIM; d++) {
        v[d] = (float) r.nextGaussian();
      }
      live.append(PointId.of(i), v, null);
    }
    live.freeze();
    live.indexSome(Integer.MAX_VALUE, () -> false);
    Path dir = tmp.resolve("seg-0000000003");
    AtomicInteger seen = new AtomicInteger();
    assertThatThrownBy(
            () ->
                DiskAnnSegment.buildFromGraph(
                    io,
                    dir,
                    3,
                    live,
                    Distance.EUCLID,
                    IndexParams.DEFAULT,
                    null,
                    pool,
                    () -> seen.incrementAndGet() >= 2))
        .isInstanceOf(CancellationException.class);
    assertThat(seen.get()).as("checked while writing the graph file").isEqualTo(2);
    assertThat(dir).doesNotExist();
    assertThat(dir.resolveSibling(dir.getFileName() + ".tmp")).doesNotExist();
  }

  @Test
  void aBuildThatFindsTheDiskFullLeavesNoFiles() throws IOException {
    for (Op op : new Op[] {Op.WRITE, Op.ATOMIC_MOVE, Op.FSYNC_DIRECTORY}) {
      Path dir = tmp.resolve("seg-" + op);
      io.noSpaceFailures(true).failOnce(op, 1);
      assertThatThrownBy(
              () ->
                  DiskAnnSegment.build(
                      io,
                      dir,
                      4,
                      List.of(source),
                      List.of(all()),
                      DIM,
                      Distance.EUCLID,
                      IndexParams.DEFAULT,
                      pool))
          .as("ENOSPC at %s", op)
          .isInstanceOf(IOException.class)
          .hasMessageContaining(FaultyFileIO.NO_SPACE);
      io.disarm();
      try (Stream<Path> s = Files.list(tmp)) {
        assertThat(s.map(p -> p.getFileName().toString()))
            .as("ENOSPC at %s", op)
            .noneMatch(n -> n.startsWith("seg-" + op));
      }
    }
  }
}
