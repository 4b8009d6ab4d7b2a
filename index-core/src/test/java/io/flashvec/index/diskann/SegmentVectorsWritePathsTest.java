package io.flashvec.index.diskann;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.index.PointId;
import io.flashvec.index.SparseVector;
import io.flashvec.index.TestVectors;
import io.flashvec.index.segment.BuildSpec;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every way a sealed segment is written keeps what its points have beyond the default dense vector
 * ({@link SegmentVectors}: sparse vectors, and which points lack the dense one), at the ordinal
 * each point ends up at: a raw seal (input order), a build from a frozen segment, one shot or in
 * partitions (page order), and the merge of raw segments that builds their graph.
 */
@ExtendWith(TestSeeds.Reporter.class)
class SegmentVectorsWritePathsTest {

  static final int DIM = 8;
  static final Distance D = Distance.EUCLID;

  /** Below what {@link #N} points need at {@link #DIM} dimensions: a partitioned build. */
  static final long TINY_BUDGET = DiskAnnSettings.MIN_BUILD_MEMORY_BYTES;

  static final int N = 3000;

  @TempDir Path tmp;

  /** What a point was written with. */
  record Expected(
      float[] dense,
      Map<String, SparseVector> sparse,
      byte[] payload,
      Map<String, float[]> other) {}

  private final Map<PointId, Expected> model = new HashMap<>();

  static SparseVector sparse(Random r) {
    int nnz = 1 + r.nextInt(5);
    long[] idx = new long[nnz];
    float[] val = new float[nnz];
    long at = r.nextInt(5);
    for (int i = 0; i < nnz; i++) {
      idx[i] = at;
      at += 1 + r.nextInt(1000);
      val[i] = (float) r.nextGaussian();
    }
    return SparseVector.of(idx, val, "test");
  }

  /** A frozen growing segment of ids {@code from..from+n}: a third lack the dense vector. */
  private GrowingSegment source(Random r, int segmentId, int from, int n) {
    GrowingSegment g = new GrowingSegment(segmentId, DIM, null, D, 100);
    for (int i = 0; i < n; i++) {
      PointId id = PointId.of(from + i);
      float[] dense = r.nextInt(3) == 0 ? null : D.prepare(TestVectors.gaussian(r, DIM));
      Map<String, SparseVector> sparse = new HashMap<>();
      if (dense == null || r.nextBoolean()) {
        sparse.put("a", sparse(r));
      }
      if (r.nextInt(4) == 0) {
        sparse.put("b", sparse(r));
      }
      byte[] payload = ("{\"i\":" + (from + i) + "}").getBytes(StandardCharsets.UTF_8);
      // a second dense field of another size on half of the points
      Map<String, float[]> other =
          r.nextBoolean() ? Map.of("img", TestVectors.gaussian(r, 3)) : Map.of();
      g.append(id, dense, payload, sparse, other);
      model.put(id, new Expected(dense, sparse, payload, other));
    }
    g.freeze();
    return g;
  }

  /** Every third ordinal of {@code n} is left out (replaced or deleted before the write). */
  private static int[] someOrds(int n, int phase) {
    List<Integer> ords = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (i % 3 != phase) {
        ords.add(i);
      }
    }
    return ords.stream().mapToInt(Integer::intValue).toArray();
  }

  /** The segment holds exactly the points of {@code ords} of {@code sources}, as written. */
  private void check(Segment seg, List<? extends Segment> sources, List<int[]> ords) {
    int points = 0;
    int without = 0;
    boolean anySparse = false;
    boolean anyOther = false;
    Map<PointId, Boolean> want = new HashMap<>();
    for (int s = 0; s < sources.size(); s++) {
      for (int ord : ords.get(s)) {
        PointId id = sources.get(s).idAt(ord);
        want.put(id, Boolean.TRUE);
        points++;
        Expected e = model.get(id);
        if (e.dense() == null) {
          without++;
        }
        anySparse |= !e.sparse().isEmpty();
        anyOther |= !e.other().isEmpty();
      }
    }
    assertThat(seg.size()).isEqualTo(points);
    assertThat(seg.withoutVector()).as("points without the dense vector").isEqualTo(without);
    assertThat(seg.hasSparse()).isEqualTo(anySparse);
    assertThat(seg.hasDense()).isEqualTo(anyOther);
    for (int ord = 0; ord < seg.size(); ord++) {
      PointId id = seg.idAt(ord);
      assertThat(want.remove(id))
          .as("ordinal %d holds a point written once: %s", ord, id)
          .isNotNull();
      Expected e = model.get(id);
      assertThat(seg.hasVector(ord)).as("dense presence of %s", id).isEqualTo(e.dense() != null);
      if (e.dense() != null) {
        assertThat(seg.vectorAt(ord)).as("dense vector of %s", id).containsExactly(e.dense());
      }
      assertThat(seg.sparseAt(ord)).as("sparse vectors of %s", id).isEqualTo(e.sparse());
      for (String f : List.of("a", "b")) {
        assertThat(seg.sparseAt(ord, f)).as("%s of %s", f, id).isEqualTo(e.sparse().get(f));
      }
      assertThat(seg.payloadAt(ord)).as("payload of %s", id).isEqualTo(e.payload());
      assertThat(seg.denseAt(ord).keySet())
          .as("other dense of %s", id)
          .isEqualTo(e.other().keySet());
      float[] img = e.other().get("img");
      assertThat(seg.denseAt(ord, "img")).as("img of %s", id).isEqualTo(img);
      assertThat(seg.hasVector(ord, "img")).as("has img: %s", id).isEqualTo(img != null);
      if (img != null) {
        float[] q = {1f, -2f, 0.5f};
        assertThat(seg.denseScore("img", ord, q, Distance.EUCLID))
            .as("img score of %s", id)
            .isCloseTo(
                Distance.EUCLID.score(q, img, 0), org.assertj.core.api.Assertions.offset(1e-5f));
      } else {
        assertThat(seg.denseScore("img", ord, new float[3], Distance.DOT)).isNaN();
      }
    }
  }

  private DiskAnnSegment writeRaw(GrowingSegment src, int[] ords, int segmentId)
      throws IOException {
    Path dir = tmp.resolve("raw-" + segmentId);
    DiskAnnWriter.writeRaw(
        FileIO.DEFAULT, dir, segmentId, src, ords, D, IndexParams.DEFAULT, null, null, null);
    return DiskAnnSegment.open(FileIO.DEFAULT, dir, segmentId, 100);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aRawSealKeepsTheSparseVectorsAndWhichPointsLackTheDenseOne(boolean payloadsOnHeap)
      throws IOException {
    Random r = TestSeeds.random("SegmentVectorsWritePathsTest.raw-" + payloadsOnHeap);
    GrowingSegment src = source(r, 0, 0, N);
    int[] ords = someOrds(N, 1);
    Path dir = tmp.resolve("raw");
    DiskAnnWriter.writeRaw(
        FileIO.DEFAULT, dir, 4, src, ords, D, IndexParams.DEFAULT, null, null, null);
    try (DiskAnnSegment seg =
        DiskAnnSegment.open(
            FileIO.DEFAULT, dir, 4, 100, false, DiskAnnSettings.DEFAULT, payloadsOnHeap)) {
      assertThat(seg.hasGraph()).isFalse();
      assertThat(seg.payloadsOnHeap()).isEqualTo(payloadsOnHeap);
      check(seg, List.of(src), List.<int[]>of(ords));
      checkBytes(seg, src);
    }
  }

  /**
   * The segment's disk bytes count its vectors file, and the seal's free-space estimate of that
   * file ({@link GrowingSegment#vectorsFileBytes}) is not below what was written.
   */
  private static void checkBytes(DiskAnnSegment seg, GrowingSegment src) throws IOException {
    Path dir = seg.directory();
    long files = 0;
    for (String f :
        List.of(
            DiskAnnFormat.GRAPH_FILE,
            DiskAnnFormat.PQ_FILE,
            DiskAnnFormat.META_FILE,
            SegmentVectors.FILE)) {
      files += Files.size(dir.resolve(f));
    }
    assertThat(seg.diskBytes()).isEqualTo(files);
    assertThat(src.vectorsFileBytes())
        .isGreaterThanOrEqualTo(Files.size(dir.resolve(SegmentVectors.FILE)));
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aBuildKeepsThemInPageOrder(boolean partitioned) throws IOException {
    Random r = TestSeeds.random("SegmentVectorsWritePathsTest.build-" + partitioned);
    GrowingSegment src = source(r, 0, 0, N);
    int[] ords = someOrds(N, 2);
    Path dir = tmp.resolve("built");
    assertThat(
            DiskAnnWriter.buildsInPartitions(
                ords.length, DIM, IndexParams.DEFAULT.maxDegree(), TINY_BUDGET))
        .isTrue();
    DiskAnnWriter.write(
        new BuildSpec(
            FileIO.DEFAULT,
            dir,
            7,
            List.of(src),
            List.<int[]>of(ords),
            DIM,
            D,
            IndexParams.DEFAULT,
            null,
            null),
        partitioned ? TINY_BUDGET : DiskAnnSettings.defaultBuildMemoryBytes());
    try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 7, 100)) {
      assertThat(seg.hasGraph()).isTrue();
      assertThat(seg.buildOrder(FileIO.DEFAULT)).as("page order").isNotNull();
      check(seg, List.of(src), List.<int[]>of(ords));
      checkBytes(seg, src);
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void theMergeOfRawSegmentsKeepsThemForEveryLivePoint(boolean partitioned) throws IOException {
    Random r = TestSeeds.random("SegmentVectorsWritePathsTest.merge-" + partitioned);
    GrowingSegment g1 = source(r, 0, 0, N / 2);
    GrowingSegment g2 = source(r, 1, N / 2, N / 2);
    try (DiskAnnSegment raw1 = writeRaw(g1, someOrds(N / 2, 0), 2);
        DiskAnnSegment raw2 = writeRaw(g2, someOrds(N / 2, 1), 3)) {
      // deletes after the raw seals: the merge takes the live points only
      int[] live1 = someOrds(raw1.size(), 2);
      int[] live2 = someOrds(raw2.size(), 0);
      List<DiskAnnSegment> sources = List.of(raw1, raw2);
      List<int[]> ords = List.of(live1, live2);
      Path dir = tmp.resolve("merged");
      DiskAnnWriter.write(
          new BuildSpec(
              FileIO.DEFAULT, dir, 9, sources, ords, DIM, D, IndexParams.DEFAULT, null, null),
          partitioned ? TINY_BUDGET : DiskAnnSettings.defaultBuildMemoryBytes());
      try (DiskAnnSegment seg = DiskAnnSegment.open(FileIO.DEFAULT, dir, 9, 100)) {
        assertThat(seg.hasGraph()).isTrue();
        check(seg, sources, ords);
      }
    }
  }

  @Test
  void aSegmentWithoutSuchPointsHasNoVectorsFile() throws IOException {
    GrowingSegment g = new GrowingSegment(0, DIM, null, D, 100);
    Random r = TestSeeds.random("SegmentVectorsWritePathsTest.plain");
    for (int i = 0; i < 50; i++) {
      g.append(PointId.of(i), D.prepare(TestVectors.gaussian(r, DIM)), null);
    }
    g.freeze();
    try (DiskAnnSegment seg = writeRaw(g, someOrds(50, 0), 1)) {
      assertThat(seg.withoutVector()).isZero();
      assertThat(seg.hasSparse()).isFalse();
      assertThat(seg.directory().resolve(SegmentVectors.FILE)).doesNotExist();
      assertThat(g.vectorsFileBytes()).isZero();
    }
  }
}
