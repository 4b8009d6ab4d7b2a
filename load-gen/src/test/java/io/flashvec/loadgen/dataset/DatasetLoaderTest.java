package io.flashvec.loadgen.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.loadgen.TestVectors;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatasetLoaderTest {
  @TempDir Path dir;

  static DatasetLoader.Options opts(Distance d) {
    return new DatasetLoader.Options(d, true, true, 100, 10, 2, null);
  }

  @Test
  void computesAndCachesGroundTruthInADirectory() {
    SplittableRandom r = TestSeeds.splittableRandom("loaderDirectory");
    float[][] base = TestVectors.gaussian(r, 300, 6);
    float[][] q = TestVectors.gaussian(r, 9, 6);
    VecsFiles.writeFvecs(dir.resolve("base.fvecs"), base);
    VecsFiles.writeFvecs(dir.resolve("query.fvecs"), q);

    Dataset d = DatasetLoader.load(dir, opts(null));

    assertThat(d.distance()).isEqualTo(Distance.COSINE);
    assertThat(d.groundTruthDepth()).isEqualTo(100);
    assertThat(Files.exists(dir.resolve("groundtruth.ivecs"))).isTrue();
    assertThat(DatasetLoader.manifestMetric(dir)).isEqualTo(Distance.COSINE);
    assertThat(VecsFiles.readIvecs(dir.resolve("groundtruth.ivecs")))
        .isDeepEqualTo(GroundTruth.compute(base, q, 100, Distance.COSINE, 1));

    // another metric gets its own cache file; the declared one stays untouched
    Dataset l2 = DatasetLoader.load(dir, opts(Distance.EUCLID));
    assertThat(Files.exists(dir.resolve("groundtruth.l2.ivecs"))).isTrue();
    assertThat(l2.groundTruth())
        .isDeepEqualTo(GroundTruth.compute(base, q, 100, Distance.EUCLID, 1));
  }

  @Test
  void npyWithoutQueryFileHoldsOutTheLastRows() {
    SplittableRandom r = TestSeeds.splittableRandom("loaderNpy");
    float[][] all = TestVectors.gaussian(r, 120, 4);
    Path f = dir.resolve("emb.npy");
    NpyFiles.writeFloats(f, all);

    Dataset d = DatasetLoader.load(f, opts(Distance.DOT));

    assertThat(d.size()).isEqualTo(110);
    assertThat(d.queries()).hasNumberOfRows(10);
    assertThat(d.queries()[0]).containsExactly(all[110]);
    assertThat(Files.exists(dir.resolve("emb.groundtruth.dot.ivecs"))).isTrue();
  }

  @Test
  void aDirectoryBaseIsMappedAndAGroundTruthSampleLimitsTheQueries() {
    SplittableRandom r = TestSeeds.splittableRandom("loaderSample");
    float[][] base = TestVectors.gaussian(r, 200, 5);
    float[][] q = TestVectors.gaussian(r, 12, 5);
    VecsFiles.writeFvecs(dir.resolve("base.fvecs"), base);
    VecsFiles.writeFvecs(dir.resolve("query.fvecs"), q);
    DatasetLoader.writeManifest(dir, java.util.Map.of("metric", "l2", "gt_queries", 4));

    try (Dataset d = DatasetLoader.load(dir, opts(null))) {
      assertThat(d.base()).isInstanceOf(VectorFile.class);
      assertThat(d.base().get(199)).containsExactly(base[199]);
      assertThat(d.queries()).hasNumberOfRows(4);
      assertThat(d.groundTruth())
          .isDeepEqualTo(
              GroundTruth.compute(base, java.util.Arrays.copyOf(q, 4), 100, Distance.EUCLID, 1));
    }
    // the cached sample is read back as such
    try (Dataset d = DatasetLoader.load(dir, opts(null))) {
      assertThat(d.queries()).hasNumberOfRows(4);
      assertThat(d.groundTruth()).hasNumberOfRows(4);
    }
  }

  @Test
  void aGroundTruthFileShorterThanTheQueriesIsRefusedWithoutASampleInTheManifest() {
    SplittableRandom r = TestSeeds.splittableRandom("loaderShortGt");
    VecsFiles.writeFvecs(dir.resolve("base.fvecs"), TestVectors.gaussian(r, 50, 3));
    VecsFiles.writeFvecs(dir.resolve("query.fvecs"), TestVectors.gaussian(r, 6, 3));
    VecsFiles.writeIvecs(dir.resolve("groundtruth.ivecs"), new int[][] {{1, 2}, {3, 4}});
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> DatasetLoader.load(dir, opts(null)))
        .isInstanceOf(DatasetFormatException.class)
        .hasMessage(
            "ground truth has fewer rows than there are queries [file="
                + dir.resolve("groundtruth.ivecs")
                + ", rows=2, queries=6]");
  }

  @Test
  void aDirectoryOfFbinFilesLoads() throws Exception {
    SplittableRandom r = TestSeeds.splittableRandom("loaderFbin");
    float[][] base = TestVectors.gaussian(r, 90, 4);
    float[][] q = TestVectors.gaussian(r, 3, 4);
    VectorFileTest.writeFbin(dir.resolve("base.fbin"), base);
    VectorFileTest.writeFbin(dir.resolve("query.fbin"), q);
    try (Dataset d = DatasetLoader.load(dir, opts(Distance.DOT))) {
      assertThat(d.base()).isInstanceOf(VectorFile.class);
      assertThat(d.size()).isEqualTo(90);
      assertThat(d.queries()).isDeepEqualTo(q);
      assertThat(d.groundTruth()).isDeepEqualTo(GroundTruth.compute(base, q, 100, Distance.DOT, 1));
    }
  }
}
