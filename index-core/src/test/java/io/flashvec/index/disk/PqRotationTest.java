package io.flashvec.index.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.flashvec.storage.ChecksummedFile;
import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PqRotationTest {

  @TempDir Path tmp;

  @Test
  void theStrongestAxesAreDealtOnePerSubspaceInASnake() {
    // subspaces of 3, 3, 2, 2 coordinates start at 0, 3, 6, 8
    int[] slot = PqRotation.eigenvalueAllocation(new int[] {3, 3, 2, 2}, 10);
    assertThat(slot).containsExactly(0, 3, 6, 8, 9, 7, 4, 1, 2, 5);
  }

  @Test
  void theRotationIsOrthonormalAndRanksTheAxesByVariance() {
    Random r = TestSeeds.random("pq-rotation-train");
    int dim = 12;
    float[][] sample = new float[2000][dim];
    for (float[] x : sample) {
      for (int i = 0; i < dim; i++) {
        // variance grows with the coordinate, fast enough that 2,000 points rank the axes
        // (with a standard deviation of i + 1 the top two variances were 144 and 121, and the
        // strongest axis came out mixed with the next one for some seeds)
        x[i] = (float) (r.nextGaussian() * (i + 1) * (i + 1) + 3);
      }
    }
    PqRotation.Trained t = PqRotation.train(sample, dim, new int[] {4, 4, 4});
    float[] rot = t.rotation();
    for (int a = 0; a < dim; a++) {
      for (int b = 0; b < dim; b++) {
        double dot = 0;
        for (int i = 0; i < dim; i++) {
          dot += rot[a * dim + i] * rot[b * dim + i];
        }
        assertThat(dot).isCloseTo(a == b ? 1.0 : 0.0, offset(1e-4));
      }
    }
    for (int i = 1; i < dim; i++) {
      assertThat(t.eigenvalues()[i]).isLessThanOrEqualTo(t.eigenvalues()[i - 1]);
    }
    assertThat(t.mean()[0]).isCloseTo(3f, offset(0.2f));
    // the strongest axis (coordinate 11) sits at the first coordinate of subspace 0
    assertThat(Math.abs(rot[11])).isGreaterThan(0.95f);
  }

  @Test
  void rotatedTablesScoreTheDecodedPointInTheOriginalSpaceAndSurviveARoundTrip()
      throws IOException {
    Random r = TestSeeds.random("pq-rotation-codes");
    int n = 30;
    int dim = 10;
    int[] sizes = {3, 3, 2, 2};
    int k = 8;
    float[][] sample = new float[500][dim];
    for (float[] x : sample) {
      for (int i = 0; i < dim; i++) {
        x[i] = (float) (r.nextGaussian() * (1 + i % 3));
      }
    }
    PqRotation.Trained t = PqRotation.train(sample, dim, sizes);
    float[] books = new float[k * dim];
    for (int i = 0; i < books.length; i++) {
      books[i] = (float) r.nextGaussian();
    }
    byte[] codes = new byte[n * sizes.length];
    for (int i = 0; i < codes.length; i++) {
      codes[i] = (byte) r.nextInt(k);
    }
    PqCodes written =
        new PqCodes(new PqCodebook(k, dim, t.mean(), sizes, books, t.rotation()), n, codes);
    Path p = tmp.resolve("pq.fvs");
    written.write(FileIO.DEFAULT, p, 3);
    PqCodes pq = PqCodes.read(FileIO.DEFAULT, p, 3);
    assertThat(pq.codebook().rotated()).isTrue();
    float[] q = new float[dim];
    for (int i = 0; i < dim; i++) {
      q[i] = (float) r.nextGaussian();
    }
    float[] rot = t.rotation();
    for (boolean euclid : new boolean[] {true, false}) {
      float[] table = pq.newTable();
      pq.fillTable(q, euclid, table, new float[pq.codebook().scratchLength()]);
      int[] ids = new int[n];
      for (int i = 0; i < n; i++) {
        ids[i] = i;
      }
      float[] got = new float[n];
      pq.distances(table, ids, n, got);
      for (int j = 0; j < n; j++) {
        // the reconstruction in rotated coordinates, rotated back and the mean added
        float[] y = new float[dim];
        int off = 0;
        int bookOff = 0;
        for (int s = 0; s < sizes.length; s++) {
          int c = codes[j * sizes.length + s] & 0xff;
          for (int i = 0; i < sizes[s]; i++) {
            y[off + i] = books[bookOff + c * sizes[s] + i];
          }
          off += sizes[s];
          bookOff += k * sizes[s];
        }
        double want = 0;
        double qq = 0;
        double xx = 0;
        for (int i = 0; i < dim; i++) {
          double xi = t.mean()[i];
          for (int row = 0; row < dim; row++) {
            xi += rot[row * dim + i] * y[row];
          }
          want += euclid ? (q[i] - xi) * (q[i] - xi) : -q[i] * xi;
          qq += q[i] * q[i];
          xx += xi * xi;
        }
        // queries are rotated with a bfloat16 copy of the matrix (8-bit mantissa): the rotated
        // query is off by well under 1% of its length, so a score by under 1% of |q| (|q| + |x|)
        double tol = 1e-3 + 0.01 * Math.sqrt(qq) * (Math.sqrt(qq) + Math.sqrt(xx));
        assertThat((double) got[j]).isCloseTo(want, offset(tol));
      }
    }
    // encoding picks, per subspace, the centroid nearest to the rotated point
    byte[] enc = new byte[sizes.length];
    float[] scratch = new float[pq.codebook().scratchLength()];
    float[] x = sample[7];
    pq.codebook().encode(x, 0, enc, 0, scratch);
    float[] centred = new float[dim];
    for (int i = 0; i < dim; i++) {
      centred[i] = x[i] - t.mean()[i];
    }
    float[] y = new float[dim];
    PqRotation.rotate(rot, dim, centred, y, 0);
    int off = 0;
    int bookOff = 0;
    for (int s = 0; s < sizes.length; s++) {
      int best = -1;
      double bestD = Double.MAX_VALUE;
      for (int c = 0; c < k; c++) {
        double d = 0;
        for (int i = 0; i < sizes[s]; i++) {
          double e = y[off + i] - books[bookOff + c * sizes[s] + i];
          d += e * e;
        }
        if (d < bestD) {
          bestD = d;
          best = c;
        }
      }
      assertThat(enc[s] & 0xff).as("subspace %d", s).isEqualTo(best);
      off += sizes[s];
      bookOff += k * sizes[s];
    }
  }

  @Test
  void aVersionOneFileWithoutARotationIsStillRead() throws IOException {
    int dim = 4;
    int[] sizes = {2, 2};
    int k = 2;
    float[] books = {1, 0, 0, 1, 2, 2, -1, -1};
    byte[] codes = {0, 1, 1, 0};
    ByteBuffer b =
        ByteBuffer.allocate(4 * 4 + 1 + 4 * 2 + 4 * books.length + codes.length)
            .order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(2).putInt(2).putInt(k).putInt(dim).put((byte) 0).putInt(2).putInt(2);
    for (float f : books) {
      b.putFloat(f);
    }
    b.put(codes);
    Path p = tmp.resolve("v1.fvs");
    ChecksummedFile.write(FileIO.DEFAULT, p, PqCodes.FORMAT, 1, 9, b.array());
    PqCodes pq = PqCodes.read(FileIO.DEFAULT, p, 9);
    assertThat(pq.codebook().rotated()).isFalse();
    float[] table = pq.newTable();
    pq.fillTable(new float[] {1, 0, 0, 0}, true, table, new float[dim]);
    float[] got = new float[2];
    pq.distances(table, new int[] {0, 1}, 2, got);
    // point 0 = (1,0 | -1,-1): |(0,0,1,1)|^2 = 2; point 1 = (0,1 | 2,2): 1 + 1 + 4 + 4 = 10
    assertThat(got).containsExactly(2f, 10f);
  }
}
