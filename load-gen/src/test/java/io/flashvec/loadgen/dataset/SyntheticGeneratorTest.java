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
  void writeBaseStreamsTheSameBytesAsTheInMemoryRowsForAnyThreadCount() throws Exception {
    System.out.println("generator seed=9");
    // 9 full blocks and a partial one: several batches, the last one short
    int n = SyntheticGenerator.BLOCK * 9 + 17;
    SyntheticGenerator g =
        new SyntheticGenerator(new SyntheticGenerator.Spec(n, 1500, 8, 5, 4, 0.2, true, 9));
    assertThat(SyntheticGenerator.batchBlocks(8, 1)).isLessThan(10);
    Path expected = dir.resolve("expected.fvecs");
    VecsFiles.writeFvecs(expected, g.base(2));
    Path expectedQueries = dir.resolve("expected-query.fvecs");
    VecsFiles.writeFvecs(expectedQueries, g.queries(2));
    for (int threads : new int[] {1, 3}) {
      Path streamed = dir.resolve("streamed-" + threads + ".fvecs");
      g.writeBase(streamed, threads);
      assertThat(Files.readAllBytes(streamed))
          .as("threads=%d", threads)
          .isEqualTo(Files.readAllBytes(expected));
      Path queries = dir.resolve("query-" + threads + ".fvecs");
      g.writeQueries(queries, threads);
      assertThat(Files.readAllBytes(queries)).isEqualTo(Files.readAllBytes(expectedQueries));
    }
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).noneMatch(f -> f.endsWith(".tmp"));
    }
  }

  /**
   * The generator's output is part of every published figure (same seed, same data): a change to
   * the mixture, the random streams or the float arithmetic must be deliberate. The digest is of
   * the file the generator wrote before it streamed to disk.
   */
  @Test
  void outputForAFixedSpecIsPinned() throws Exception {
    SyntheticGenerator g =
        new SyntheticGenerator(new SyntheticGenerator.Spec(20_001, 37, 33, 7, 5, 0.3, false, 7));
    Path f = dir.resolve("base.fvecs");
    g.writeBase(f, 2);
    assertThat(sha256(f))
        .isEqualTo("57a46a24a8695869cee0e8f28cac45e5b8c4cd3d035464fe99a3a55a79446d81");
    Path q = dir.resolve("query.fvecs");
    g.writeQueries(q, 1);
    assertThat(sha256(q))
        .isEqualTo("3eaffa90b8e898d3ebf2f248a985d13f0cd5d62b920d0866ac729a44c659e417");
  }

  private static String sha256(Path f) throws Exception {
    return java.util.HexFormat.of()
        .formatHex(
            java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f)));
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
