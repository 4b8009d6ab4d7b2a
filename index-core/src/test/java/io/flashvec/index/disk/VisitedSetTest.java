package io.flashvec.index.disk;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.SearchStats;
import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@ExtendWith(TestSeeds.Reporter.class)
class VisitedSetTest {

  @TempDir Path tmp;

  @Test
  void behavesAsASetAcrossClearsAndGrowth() {
    Random r = TestSeeds.random("visited-set");
    VisitedSet set = new VisitedSet(16);
    int rounds = TestSeeds.atLeast(r, 50);
    for (int round = 0; round < rounds; round++) {
      set.clear();
      Set<Integer> reference = new HashSet<>();
      int adds = r.nextInt(2000);
      int range = 1 + r.nextInt(round % 2 == 0 ? 500 : Integer.MAX_VALUE);
      for (int i = 0; i < adds; i++) {
        int ord = r.nextInt(range);
        assertThat(set.add(ord)).isEqualTo(reference.add(ord));
      }
      for (int i = 0; i < 200; i++) {
        int ord = r.nextInt(range);
        assertThat(set.contains(ord)).isEqualTo(reference.contains(ord));
      }
      for (int ord : reference) {
        assertThat(set.contains(ord)).isTrue();
      }
      assertThat(set.capacity()).isGreaterThanOrEqualTo(2 * reference.size());
    }
  }

  /**
   * Bits while they take at most twice the set's table, so a searcher never grows with its graph.
   */
  @Test
  void aSearcherKeepsBitsOnlyWhileTheyTakeLittleMoreThanTheSet() {
    int visits = 100 * 64;
    long set = VisitedSet.bytesFor(visits);
    assertThat(set).isEqualTo(8L * 16384);
    assertThat(BeamSearcher.bitsFor(2 * 1024 * 1024, visits, BeamSearcher.MAX_BIT_NODES)).isTrue();
    assertThat(BeamSearcher.bitsFor(2 * 1024 * 1024 + 64, visits, BeamSearcher.MAX_BIT_NODES))
        .isFalse();
    assertThat(BeamSearcher.bitsFor(1000, visits, 999)).isFalse();
  }

  /**
   * The same results and costs with a bit per node and with the set, over searches that clear the
   * bits word by word (200,000 nodes, edges to near nodes) and all at once (3,000, random edges).
   */
  @ParameterizedTest
  @ValueSource(ints = {3000, 200_000})
  void aSearcherWithTheSetFindsWhatOneWithBitsFinds(int n) throws IOException {
    Random r = TestSeeds.random("visited-set-search-" + n);
    int dim = 8;
    int degree = 12;
    float[][] v = new float[n][dim];
    for (float[] x : v) {
      for (int j = 0; j < dim; j++) {
        x[j] = (float) r.nextGaussian();
      }
    }
    // 3,000 nodes: a ring and random edges, a search touches most words of the bits and clears
    // them all; 200,000: only near edges, a search stays within a few hundred nodes of the entry
    // and clears only the words it set
    boolean local = n > 100_000;
    int[][] adj = new int[n][degree];
    for (int i = 0; i < n; i++) {
      adj[i][0] = (i + 1) % n; // a ring keeps the graph connected
      for (int j = 1; j < degree; j++) {
        adj[i][j] = local ? (i + n - j) % n : r.nextInt(n);
      }
    }
    Path p = tmp.resolve("g.fvg");
    GraphFile.write(
        FileIO.DEFAULT,
        p,
        n,
        dim,
        degree,
        0,
        new GraphFile.NodeSource() {
          @Override
          public float[] vector(int ord) {
            return v[ord];
          }

          @Override
          public int neighbours(int ord, int[] out) {
            System.arraycopy(adj[ord], 0, out, 0, degree);
            return degree;
          }
        });
    try (GraphFile g = GraphFile.open(FileIO.DEFAULT, p, false)) {
      BeamSearcher bitted = new BeamSearcher(g, null, true);
      BeamSearcher hashed = new BeamSearcher(g, null, true, 0);
      SearchStats a = new SearchStats();
      SearchStats b = new SearchStats();
      for (int q = 0; q < 50; q++) {
        float[] query = v[r.nextInt(n)].clone();
        query[0] += 0.1f;
        int list = 10 + r.nextInt(300); // past the set's first size: it grows
        int beam = 1 + (q % 4);
        bitted.search(query, 10, list, beam, false, null, a);
        hashed.search(query, 10, list, beam, false, null, b);
        assertThat(hashed.resultCount()).isEqualTo(bitted.resultCount());
        for (int i = 0; i < bitted.resultCount(); i++) {
          assertThat(hashed.resultOrdinal(i)).isEqualTo(bitted.resultOrdinal(i));
          // up to the last bits: interpreted and compiled Vector API kernels sum differently
          assertThat(hashed.resultDistance(i))
              .isCloseTo(bitted.resultDistance(i), org.assertj.core.data.Offset.offset(1e-4f));
        }
      }
      assertThat(b.visited).isEqualTo(a.visited);
      assertThat(b.expanded).isEqualTo(a.expanded);
    }
  }
}
