package io.flashvec.loadgen.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.loadgen.TestVectors;
import io.flashvec.testing.TestSeeds;
import io.jhdf.HdfFile;
import io.jhdf.WritableHdfFile;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class Hdf5FilesTest {
  @TempDir Path dir;

  @Test
  void readsAnnBenchmarksLayoutAndUsesItsNeighbors() {
    SplittableRandom r = TestSeeds.splittableRandom("hdf5");
    float[][] train = TestVectors.gaussian(r, 50, 8);
    float[][] test = TestVectors.gaussian(r, 5, 8);
    int[][] neighbors = GroundTruth.compute(train, test, 10, Distance.EUCLID, 1);
    Path f = dir.resolve("tiny-euclidean.hdf5");
    try (WritableHdfFile w = HdfFile.write(f)) {
      w.putDataset("train", train);
      w.putDataset("test", test);
      w.putDataset("neighbors", neighbors);
      w.putAttribute("distance", "euclidean");
    }

    Hdf5Files.AnnBenchmarks a = Hdf5Files.read(f);
    assertThat(a.train()).isDeepEqualTo(train);
    assertThat(a.test()).isDeepEqualTo(test);
    assertThat(a.neighbors()).isDeepEqualTo(neighbors);
    assertThat(a.metric()).isEqualTo(Distance.EUCLID);

    Dataset d = DatasetLoader.load(f, new DatasetLoader.Options(null, true, true, 100, 0, 1, null));
    assertThat(d.distance()).isEqualTo(Distance.EUCLID);
    assertThat(d.groundTruth()).isDeepEqualTo(neighbors);
    assertThat(d.size()).isEqualTo(50);
  }
}
