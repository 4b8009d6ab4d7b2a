package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.segment.BuildSpec;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.storage.testing.FaultyFileIO;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import io.flashvec.testing.TestSeeds;
import io.github.jbellis.jvector.graph.GraphIndexBuilder;
import io.github.jbellis.jvector.graph.ListRandomAccessVectorValues;
import io.github.jbellis.jvector.graph.similarity.BuildScoreProvider;
import io.github.jbellis.jvector.vector.VectorSimilarityFunction;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicBoolean;
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
    int slices =
        (N + DiskAnnWriter.GRAPH_SLICE_PER_THREAD - 1) / DiskAnnWriter.GRAPH_SLICE_PER_THREAD;
    AtomicInteger checks = new AtomicInteger();
    try (GraphIndexBuilder builder = builder()) {
      var graph =
          DiskAnnWriter.buildGraph(
              builder,
              vectors(),
              N,
              pool,
              () -> {
                checks.incrementAndGet();
                return false;
              },
              1);
      assertThat(graph.size(0)).isEqualTo(N);
    }
    assertThat(checks.get())
        .as(
            "one check per slice of %d nodes, then at least one during the cleanup",
            DiskAnnWriter.GRAPH_SLICE_PER_THREAD)
        .isGreaterThanOrEqualTo(slices + 1);

    // Cancelled before the third slice: it stops there.
    AtomicInteger seen = new AtomicInteger();
    try (GraphIndexBuilder builder = builder()) {
      assertThatThrownBy(
              () ->
                  DiskAnnWriter.buildGraph(
                      builder, vectors(), N, pool, () -> seen.incrementAndGet() >= 3, 2))
          .isInstanceOf(CancellationException.class)
          .hasMessage("segment build cancelled [segment=2]");
    }
    assertThat(seen.get()).isEqualTo(3);
  }

  @Test
  void aCancelledBuildStopsAtOnceAndLeavesNothing() throws IOException {
    Path dir = tmp.resolve("seg-0000000002");
    AtomicInteger seen = new AtomicInteger();
    // The second check is the first wait for PQ training, which is given up.
    assertThatThrownBy(
            () ->
                DiskAnnWriter.write(
                    new BuildSpec(
                        io,
                        dir,
                        2,
                        List.of(source),
                        List.<int[]>of(all()),
                        DIM,
                        Distance.EUCLID,
                        IndexParams.DEFAULT,
                        pool,
                        () -> seen.incrementAndGet() >= 2)))
        .isInstanceOf(CancellationException.class)
        .hasMessage("segment build cancelled [segment=2]");
    assertThat(seen.get()).isEqualTo(2);
    assertThat(dir).doesNotExist();
    assertThat(dir.resolveSibling(dir.getFileName() + ".tmp")).doesNotExist();

    // Uncancelled, the same build completes.
    assertThat(
            DiskAnnWriter.write(
                new BuildSpec(
                    io,
                    dir,
                    2,
                    List.of(source),
                    List.<int[]>of(all()),
                    DIM,
                    Distance.EUCLID,
                    IndexParams.DEFAULT,
                    pool,
                    () -> false)))
        .isEqualTo(N);
    assertThat(dir).isDirectory();
  }

  @Test
  void aStepThatCannotBeStoppedIsGivenUpWhenTheBuildIsCancelled() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    AtomicBoolean cancelled = new AtomicBoolean();
    AtomicBoolean finished = new AtomicBoolean();
    Thread canceller =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    started.await();
                  } catch (InterruptedException e) {
                    return;
                  }
                  cancelled.set(true);
                });
    try {
      assertThatThrownBy(
              () ->
                  DiskAnnWriter.abandonable(
                      () -> {
                        started.countDown();
                        try {
                          finish.await();
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        finished.set(true);
                        return 1;
                      },
                      cancelled::get,
                      7))
          .isInstanceOf(CancellationException.class)
          .hasMessage("segment build cancelled [segment=7]");
      assertThat(finished).as("given up while it still ran").isFalse();
    } finally {
      finish.countDown();
      canceller.join();
    }
    // Failures of the step come through as they are.
    assertThatThrownBy(
            () ->
                DiskAnnWriter.abandonable(
                    () -> {
                      throw new IllegalArgumentException("bad input");
                    },
                    () -> false,
                    8))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("bad input");
  }

  private ListRandomAccessVectorValues vectors() {
    List<VectorFloat<?>> vs = new ArrayList<>(N);
    var vts = VectorizationProvider.getInstance().getVectorTypeSupport();
    for (int i = 0; i < N; i++) {
      vs.add(vts.createFloatVector(source.vectorAt(i)));
    }
    return new ListRandomAccessVectorValues(vs, DIM);
  }

  private GraphIndexBuilder builder() {
    return new GraphIndexBuilder(
        BuildScoreProvider.randomAccessScoreProvider(vectors(), VectorSimilarityFunction.EUCLIDEAN),
        DIM,
        16,
        32,
        1.2f,
        1.2f,
        false,
        true,
        pool,
        pool);
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
                DiskAnnWriter.writeFromGraph(
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
                  DiskAnnWriter.write(
                      new BuildSpec(
                          io,
                          dir,
                          4,
                          List.of(source),
                          List.<int[]>of(all()),
                          DIM,
                          Distance.EUCLID,
                          IndexParams.DEFAULT,
                          pool,
                          null)))
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
