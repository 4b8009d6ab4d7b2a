package io.flashvec.loadgen.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SyntheticGeneratorTest {
  @TempDir Path dir;

  static SyntheticGenerator.Spec spec(long seed, boolean normalize) {
    return new SyntheticGenerator.Spec(3000, 200, 48, 20, 8, 0.1, normalize, seed);
  }

  @Test
  void sameSeedGivesSameBytesForAnyThreadCount() throws Exception {
    System.out.println("generator seed=7");
    Path a = dir.resolve("a.fvecs");
    Path b = dir.resolve("b.fvecs");
    VecsFiles.writeFvecs(a, new SyntheticGenerator(spec(7, false)).base(1));
    VecsFiles.writeFvecs(b, new SyntheticGenerator(spec(7, false)).base(3));
    assertThat(Files.readAllBytes(a)).isEqualTo(Files.readAllBytes(b));

    Path c = dir.resolve("c.fvecs");
    VecsFiles.writeFvecs(c, new SyntheticGenerator(spec(8, false)).base(2));
    assertThat(Files.readAllBytes(c)).isNotEqualTo(Files.readAllBytes(a));
  }

  @Test
  void hasTheRequestedShapeAndUnitNormsWhenNormalized() {
    SyntheticGenerator g = new SyntheticGenerator(spec(11, true));
    float[][] base = g.base(2);
    float[][] q = g.queries(2);
    assertThat(base).hasNumberOfRows(3000);
    assertThat(q).hasNumberOfRows(200);
    for (float[] v : base) {
      assertThat(v).hasSize(48);
      assertThat(Math.sqrt(Distance.dot(v, v)))
          .isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-4));
    }
  }

  @Test
  void queriesAreFromTheDistributionButNotCopiesOfBaseRows() {
    SyntheticGenerator g = new SyntheticGenerator(spec(12, false));
    float[][] base = g.base(2);
    float[][] q = g.queries(2);
    double meanNnDist = 0;
    double meanBaseNorm = 0;
    for (float[] v : base) {
      meanBaseNorm += Math.sqrt(Distance.dot(v, v)) / base.length;
    }
    int[][] nn = GroundTruth.compute(base, q, 1, Distance.EUCLID, 2);
    for (int i = 0; i < q.length; i++) {
      double d = Math.sqrt(Distance.squaredL2(q[i], base[nn[i][0]]));
      assertThat(d).isGreaterThan(0);
      meanNnDist += d / q.length;
    }
    // clustered data: a query's nearest base row is much closer than the typical vector length
    assertThat(meanNnDist).isLessThan(0.6 * meanBaseNorm);
  }

  @Test
  void lowIntrinsicDimension() {
    // with little noise, the data lives near an 8-dim subspace of the 48-dim space: the
    // residual after projecting on the latent map is small (checked via Gram-Schmidt rank)
    SyntheticGenerator g =
        new SyntheticGenerator(new SyntheticGenerator.Spec(400, 0, 48, 10, 8, 0.0, false, 5));
    float[][] base = g.base(1);
    double[][] basis = new double[48][];
    int rank = 0;
    for (float[] v : base) {
      double[] r = new double[v.length];
      for (int i = 0; i < v.length; i++) {
        r[i] = v[i];
      }
      double norm0 = Math.sqrt(dot(r, r));
      for (int j = 0; j < rank; j++) {
        double p = dot(r, basis[j]);
        for (int i = 0; i < r.length; i++) {
          r[i] -= p * basis[j][i];
        }
      }
      double n = Math.sqrt(dot(r, r));
      if (n > 1e-3 * norm0 && rank < 48) {
        for (int i = 0; i < r.length; i++) {
          r[i] /= n;
        }
        basis[rank++] = r;
      }
    }
    assertThat(rank).isEqualTo(8);
  }

  private static double dot(double[] a, double[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }
}
