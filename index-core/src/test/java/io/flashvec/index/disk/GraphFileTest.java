package io.flashvec.index.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.SearchStats;
import io.flashvec.index.TestVectors;
import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import io.flashvec.storage.FormatVersionException;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class GraphFileTest {

  @TempDir Path tmp;

  /** A ring: node i links to i-1 and i+1. */
  private static GraphFile.NodeSource ring(float[][] v, int degree) {
    int n = v.length;
    return new GraphFile.NodeSource() {
      @Override
      public float[] vector(int ord) {
        return v[ord];
      }

      @Override
      public int neighbours(int ord, int[] out) {
        int c = 0;
        for (int d = 1; d <= degree / 2 && c < n - 1; d++) {
          out[c++] = (ord + d) % n;
          if (c < n - 1) {
            out[c++] = (ord - d + n) % n;
          }
        }
        return c;
      }
    };
  }

  /** Reading ahead in the write's order is advice only: the rewritten file is the same bytes. */
  @Test
  void aRewriteReadInOrderWritesWhatThePlainRewriteWrites() throws IOException {
    Random r = TestSeeds.random("GraphFileTest.readInOrder");
    int n = 1_000;
    float[][] v = TestVectors.latent(r, n, 8);
    Path src = tmp.resolve("src.fvg");
    GraphFile.write(FileIO.DEFAULT, src, n, 8, 6, 0, ring(v, 6));
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    Path plain = tmp.resolve("plain.fvg");
    Path ahead = tmp.resolve("ahead.fvg");
    try (GraphFile g = GraphFile.open(FileIO.DEFAULT, src, false)) {
      GraphFile.write(FileIO.DEFAULT, plain, n, 8, 6, g.entry(), g.nodes(), order);
      GraphFile.write(
          FileIO.DEFAULT, ahead, n, 8, 6, g.entry(), g.nodesReadInOrder(order, 16), order);
    }
    assertThat(Files.readAllBytes(ahead)).isEqualTo(Files.readAllBytes(plain));
    assertThat(Files.readAllBytes(plain)).isNotEqualTo(Files.readAllBytes(src));
  }

  @Test
  void formatIsPinned() throws IOException {
    // A change to these bytes is a file-format change: bump GraphFile.VERSION and keep a reader.
    float[][] v = {{1f, 2f}, {3f, 4f}, {5f, 6f}};
    Path p = tmp.resolve("g.fvg");
    GraphFile.write(FileIO.DEFAULT, p, 3, 2, 2, 1, ring(v, 2));
    byte[] b = Files.readAllBytes(p);
    assertThat(b).hasSize(2 * 4096);
    assertThat(HexFormat.of().formatHex(b, 0, 40))
        .isEqualTo(
            "4656475241504831" // "FVGRAPH1"
                + "01000000" // version 1
                + "03000000" // count
                + "02000000" // dim
                + "02000000" // max degree
                + "14000000" // record bytes: 2*4 + 4 + 2*4 = 20
                + "cc000000" // records per page: 4096 / 20 = 204
                + "01000000" // pages per record
                + "01000000"); // entry
    // record 1 at 4096 + 20: vector (3, 4), degree 2, neighbours 2, 0
    assertThat(HexFormat.of().formatHex(b, 4096 + 20, 4096 + 40))
        .isEqualTo("0000404000008040" + "02000000" + "02000000" + "00000000");
  }

  @Test
  void rawFormatIsPinned() throws IOException {
    // A change to these bytes is a file-format change: bump the version and keep a reader.
    float[][] v = {{1f, 2f}, {3f, 4f}, {5f, 6f}};
    Path p = tmp.resolve("raw.fvg");
    GraphFile.writeRaw(FileIO.DEFAULT, p, 3, 2, i -> v[i]);
    byte[] b = Files.readAllBytes(p);
    assertThat(b).hasSize(2 * 4096);
    assertThat(HexFormat.of().formatHex(b, 0, 44))
        .isEqualTo(
            "4656475241504831" // "FVGRAPH1"
                + "02000000" // version 2
                + "03000000" // count
                + "02000000" // dim
                + "00000000" // max degree 0
                + "0c000000" // record bytes: 2*4 + 4 = 12
                + "55010000" // records per page: 4096 / 12 = 341
                + "01000000" // pages per record
                + "00000000" // entry
                + "01000000"); // flags: no edges
    // record 1 at 4096 + 12: vector (3, 4), degree 0
    assertThat(HexFormat.of().formatHex(b, 4096 + 12, 4096 + 24))
        .isEqualTo("0000404000008040" + "00000000");
    try (GraphFile g = GraphFile.open(FileIO.DEFAULT, p, false)) {
      assertThat(g.hasEdges()).isFalse();
      assertThat(g.maxDegree()).isZero();
      assertThat(g.vector(2)).containsExactly(5f, 6f);
      assertThat(g.degree(g.recordOffset(2))).isZero();
    }
    // a version 1 file is a graph
    Path graph = tmp.resolve("g.fvg");
    GraphFile.write(FileIO.DEFAULT, graph, 3, 2, 2, 1, ring(v, 2));
    try (GraphFile g = GraphFile.open(FileIO.DEFAULT, graph, false)) {
      assertThat(g.hasEdges()).isTrue();
    }
  }

  @Test
  void rawFilesWithUnknownFlagsOrEdgesAreRejected() throws IOException {
    float[][] v = {{1f, 2f}, {3f, 4f}};
    Path p = tmp.resolve("raw.fvg");
    GraphFile.writeRaw(FileIO.DEFAULT, p, 2, 2, i -> v[i]);
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.seek(40);
      f.write(new byte[] {3, 0, 0, 0}); // an unknown flag beside "no edges"
    }
    assertThatThrownBy(() -> GraphFile.open(FileIO.DEFAULT, p, false))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("flags=0x3");
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.seek(40);
      f.write(new byte[] {0, 0, 0, 0}); // no flag: a graph, but with max degree 0
    }
    assertThatThrownBy(() -> GraphFile.open(FileIO.DEFAULT, p, false))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("maxDegree=0");
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.seek(8);
      f.write(new byte[] {3, 0, 0, 0}); // a version from the future
    }
    assertThatThrownBy(() -> GraphFile.open(FileIO.DEFAULT, p, false))
        .isInstanceOf(FormatVersionException.class);
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 96, 768, 1500})
  void recordsRoundTripAndNeverStraddleAPage(int dim) throws IOException {
    Random r = TestSeeds.random("graph-file-" + dim);
    int n = 50;
    float[][] v = TestVectors.latent(r, n, dim);
    Path p = tmp.resolve("g" + dim + ".fvg");
    GraphFile.write(FileIO.DEFAULT, p, n, dim, 16, 7, ring(v, 16));
    try (GraphFile g = GraphFile.open(FileIO.DEFAULT, p, false)) {
      assertThat(g.count()).isEqualTo(n);
      assertThat(g.entry()).isEqualTo(7);
      for (int i = 0; i < n; i++) {
        assertThat(g.vector(i)).containsExactly(v[i]);
        long off = g.recordOffset(i);
        if (g.recordBytes() <= GraphFile.PAGE) {
          assertThat(off / GraphFile.PAGE).isEqualTo((off + g.recordBytes() - 1) / GraphFile.PAGE);
        } else {
          assertThat(off % GraphFile.PAGE).isZero();
        }
        int deg = g.degree(off);
        assertThat(deg).isEqualTo(Math.min(16, n - 1));
        assertThat(g.neighbour(off, 0)).isEqualTo((i + 1) % n);
      }
    }
    try (GraphFile heap = GraphFile.open(FileIO.DEFAULT, p, true)) {
      assertThat(heap.vector(49)).containsExactly(v[49]);
      assertThat(heap.file().mapped()).isFalse();
    }
  }

  @Test
  void badHeadersAreRejected() throws IOException {
    float[][] v = {{1f, 2f}, {3f, 4f}};
    Path p = tmp.resolve("g.fvg");
    GraphFile.write(FileIO.DEFAULT, p, 2, 2, 2, 0, ring(v, 2));
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.seek(8);
      f.write(new byte[] {9, 0, 0, 0});
    }
    assertThatThrownBy(() -> GraphFile.open(FileIO.DEFAULT, p, false))
        .isInstanceOf(FormatVersionException.class);
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.seek(8);
      f.write(new byte[] {1, 0, 0, 0});
      f.seek(12);
      f.write(new byte[] {(byte) 0xff, 0, 0, 0}); // count 255: longer than the file
    }
    assertThatThrownBy(() -> GraphFile.open(FileIO.DEFAULT, p, false))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("count=255");
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.seek(0);
      f.write(0);
    }
    assertThatThrownBy(() -> GraphFile.open(FileIO.DEFAULT, p, false))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("magic");
  }

  @Test
  void pqDistancesMatchTheTableSumsAndSurviveARoundTrip() throws IOException {
    Random r = TestSeeds.random("pq-codes");
    int n = 40;
    int dim = 10;
    int[] sizes = {3, 3, 2, 2};
    int k = 8;
    float[] books = new float[k * dim];
    for (int i = 0; i < books.length; i++) {
      books[i] = (float) r.nextGaussian();
    }
    byte[] codes = new byte[n * sizes.length];
    r.nextBytes(codes);
    for (int i = 0; i < codes.length; i++) {
      codes[i] = (byte) ((codes[i] & 0xff) % k);
    }
    float[] centroid = new float[dim];
    for (int i = 0; i < dim; i++) {
      centroid[i] = (float) r.nextGaussian();
    }
    PqCodes pq = new PqCodes(n, k, dim, centroid, sizes, books, codes);
    Path p = tmp.resolve("pq.fvs");
    pq.write(FileIO.DEFAULT, p, 5);
    PqCodes back = PqCodes.read(FileIO.DEFAULT, p, 5);
    float[] q = new float[dim];
    for (int i = 0; i < dim; i++) {
      q[i] = (float) r.nextGaussian();
    }
    for (boolean euclid : new boolean[] {true, false}) {
      float[] table = back.newTable();
      back.fillTable(q, euclid, table, new float[dim]);
      int[] ids = new int[n];
      for (int i = 0; i < n; i++) {
        ids[i] = n - 1 - i;
      }
      float[] got = new float[n];
      back.distances(table, ids, n, got);
      for (int j = 0; j < n; j++) {
        // decode the point: centroid + its subspace centroids, then the exact distance to it
        float[] x = centroid.clone();
        int off = 0;
        int bookOff = 0;
        for (int s = 0; s < sizes.length; s++) {
          int c = codes[ids[j] * sizes.length + s] & 0xff;
          for (int i = 0; i < sizes[s]; i++) {
            x[off + i] += books[bookOff + c * sizes[s] + i];
          }
          off += sizes[s];
          bookOff += k * sizes[s];
        }
        double want = 0;
        for (int i = 0; i < dim; i++) {
          want += euclid ? (q[i] - x[i]) * (q[i] - x[i]) : -q[i] * x[i];
        }
        assertThat((double) got[j]).isCloseTo(want, org.assertj.core.data.Offset.offset(1e-3));
      }
    }
    assertThatThrownBy(() -> PqCodes.read(FileIO.DEFAULT, p, 6))
        .isInstanceOf(CorruptFileException.class);
  }

  @Test
  void gatheredPqDistancesEqualTheScalarOnes() {
    Random r = TestSeeds.random("pq-gather");
    int n = 100;
    int m = 40; // not a multiple of the vector length: exercises the tail
    int k = 256;
    int dim = 2 * m;
    int[] sizes = new int[m];
    java.util.Arrays.fill(sizes, 2);
    float[] books = new float[k * dim];
    for (int i = 0; i < books.length; i++) {
      books[i] = (float) r.nextGaussian();
    }
    byte[] codes = new byte[n * m];
    r.nextBytes(codes);
    PqCodes pq = new PqCodes(n, k, dim, null, sizes, books, codes);
    float[] q = new float[dim];
    for (int i = 0; i < dim; i++) {
      q[i] = (float) r.nextGaussian();
    }
    float[] table = pq.newTable();
    pq.fillTable(q, false, table, new float[dim]);
    int[] ids = r.ints(64, 0, n).toArray();
    float[] a = new float[64];
    float[] b = new float[64];
    pq.distances(table, ids, 64, a);
    pq.distancesGather(table, ids, 64, b, new int[pq.gatherScratchLength()]);
    for (int j = 0; j < 64; j++) {
      assertThat(b[j]).isCloseTo(a[j], org.assertj.core.data.Offset.offset(1e-3f));
    }
  }

  @Test
  void beamSearchOnARingFindsTheNearestNodes() throws IOException {
    // 1-d points on a circle; the ring graph is navigable, so a wide enough beam is exact.
    int n = 200;
    float[][] v = new float[n][];
    for (int i = 0; i < n; i++) {
      double a = 2 * Math.PI * i / n;
      v[i] = new float[] {(float) Math.cos(a), (float) Math.sin(a)};
    }
    Path p = tmp.resolve("ring.fvg");
    GraphFile.write(FileIO.DEFAULT, p, n, 2, 4, 0, ring(v, 4));
    try (GraphFile g = GraphFile.open(FileIO.DEFAULT, p, false)) {
      BeamSearcher s = new BeamSearcher(g, null, true);
      SearchStats stats = new SearchStats();
      s.search(v[123], 3, 10, 4, true, ord -> ord != 123, stats);
      assertThat(s.resultCount()).isEqualTo(3);
      assertThat(new int[] {s.resultOrdinal(0), s.resultOrdinal(1)})
          .containsExactlyInAnyOrder(122, 124);
      assertThat(s.resultOrdinal(2)).isIn(121, 125);
      assertThat(stats.expanded).isGreaterThan(0);
      s.scan(v[10], 1, null, stats);
      assertThat(s.resultOrdinal(0)).isEqualTo(10);
      assertThat(s.resultDistance(0)).isZero();
    }
  }
}
