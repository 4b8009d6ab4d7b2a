package io.flashvec.index.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.FileIO;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The page-local order is a permutation that starts at the entry, fills each page with the nodes
 * its members list nearest, reaches nodes the walk cannot, and is a function of the graph; a graph
 * file written in it holds the same nodes renumbered.
 */
@ExtendWith(TestSeeds.Reporter.class)
class PageOrderTest {

  @TempDir Path tmp;

  /** A random directed graph with {@code isolated} nodes no edge reaches. */
  private static int[][] randomGraph(Random r, int n, int degree, int isolated) {
    int[][] adj = new int[n][];
    for (int u = 0; u < n; u++) {
      int d = u >= n - isolated ? 0 : 1 + r.nextInt(degree);
      adj[u] = new int[d];
      for (int i = 0; i < d; i++) {
        adj[u][i] = r.nextInt(n - isolated);
      }
    }
    return adj;
  }

  private static PageOrder.Adjacency of(int[][] adj) {
    return (ord, out) -> {
      int d = Math.min(adj[ord].length, out.length);
      System.arraycopy(adj[ord], 0, out, 0, d);
      return d;
    };
  }

  @Test
  void isAPermutationStartingAtTheEntryAndDeterministic() {
    Random r = TestSeeds.random("PageOrderTest.permutation");
    for (int round = 0; round < 50; round++) {
      int n = 1 + r.nextInt(2000);
      int isolated = r.nextInt(Math.max(1, n / 10));
      int[][] adj = randomGraph(r, n, 12, isolated);
      int entry = r.nextInt(n - isolated > 0 ? n - isolated : n);
      int rpp = 2 + r.nextInt(8);
      int[] order = PageOrder.compute(n, entry, rpp, 12, of(adj));
      if (n == 1) {
        assertThat(order).isNull();
        continue;
      }
      PageOrder.checkPermutation(order, n);
      assertThat(order[0]).isEqualTo(entry);
      assertThat(PageOrder.compute(n, entry, rpp, 12, of(adj))).isEqualTo(order);
      int[] inv = PageOrder.inverse(order);
      for (int i = 0; i < n; i++) {
        assertThat(order[inv[i]]).isEqualTo(i);
      }
    }
  }

  @Test
  void eachPageIsFilledWithTheNodesItsMembersListNearest() {
    // 0 -> 1..9 (nearest first); each of those -> its own leaves
    int n = 40;
    int[][] adj = new int[n][0];
    adj[0] = new int[] {3, 1, 2, 4, 5, 6, 7, 8, 9};
    for (int u = 1; u < 10; u++) {
      adj[u] = new int[] {0, 10 + 3 * (u - 1), 11 + 3 * (u - 1), 12 + 3 * (u - 1)};
    }
    int[] order = PageOrder.compute(n, 0, 4, 16, of(adj));
    // page 0: the entry and its three nearest neighbours, in list order
    assertThat(Arrays.copyOfRange(order, 0, 4)).containsExactly(0, 3, 1, 2);
    // page 1: the next node of the walk (4) and its unplaced neighbours
    assertThat(Arrays.copyOfRange(order, 4, 8)).containsExactly(4, 19, 20, 21);
    // page 2: 5 and its leaves
    assertThat(Arrays.copyOfRange(order, 8, 12)).containsExactly(5, 22, 23, 24);
  }

  @Test
  void aNodeSeveralMembersListNearTheTopBeatsTheSeedsNextNeighbour() {
    int n = 12;
    int[][] adj = new int[n][0];
    adj[0] = new int[] {1, 2, 3, 4, 5}; // scores 5, 4, 3, 2, 1
    adj[1] = new int[] {5, 6, 7, 8}; // 5 gains 4: 5 beats 2
    int[] order = PageOrder.compute(n, 0, 3, 16, of(adj));
    assertThat(Arrays.copyOfRange(order, 0, 3)).containsExactly(0, 1, 5);
    PageOrder.checkPermutation(order, n);
  }

  /**
   * The walk asks for lists ahead of reading them, and the advice never changes the order: most
   * lists read were asked for first (the next seeds, a placed node's nearest new candidates).
   */
  @Test
  void listsAreAskedForAheadWithoutChangingTheOrder() {
    Random r = TestSeeds.random("PageOrderTest.ahead");
    int n = 20_000;
    int[][] adj = randomGraph(r, n, 32, 0);
    int[] plain = PageOrder.compute(n, 0, 6, 32, of(adj));
    java.util.BitSet asked = new java.util.BitSet(n);
    int[] readAfterAsking = {0};
    int[] asks = {0};
    PageOrder.Adjacency advised =
        new PageOrder.Adjacency() {
          @Override
          public int neighbours(int ord, int[] out) {
            if (asked.get(ord)) {
              readAfterAsking[0]++;
            }
            return of(adj).neighbours(ord, out);
          }

          @Override
          public void willNeed(int ord) {
            asked.set(ord);
            asks[0]++;
          }
        };
    assertThat(PageOrder.compute(n, 0, 6, 32, advised)).isEqualTo(plain);
    assertThat(readAfterAsking[0])
        .as("lists read after being asked for, of %d", n)
        .isGreaterThan(n * 8 / 10);
    assertThat(asks[0])
        .as("about the seeds ahead and four per placed node, not a list's worth")
        .isLessThan(6 * n);
  }

  @Test
  void onePerPageOrOneNodeNeedsNoOrder() {
    int[][] adj = {{1}, {0}};
    assertThat(PageOrder.compute(2, 0, 1, 4, of(adj))).isNull();
    assertThat(PageOrder.compute(1, 0, 6, 4, of(new int[][] {{}}))).isNull();
    assertThatThrownBy(() -> PageOrder.compute(2, 2, 6, 4, of(adj)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("entry=2");
  }

  @Test
  void checkPermutationNamesTheOffendingEntry() {
    assertThatThrownBy(() -> PageOrder.checkPermutation(new int[] {0, 2, 2}, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("index=2")
        .hasMessageContaining("value=2");
    assertThatThrownBy(() -> PageOrder.checkPermutation(new int[] {0, 1}, 3))
        .hasMessageContaining("length=2");
  }

  @Test
  void gatherRearrangesInPlace() {
    Random r = TestSeeds.random("PageOrderTest.gather");
    for (int round = 0; round < 20; round++) {
      int n = 1 + r.nextInt(500);
      int[] order = new int[n];
      Arrays.setAll(order, i -> i);
      for (int i = n - 1; i > 0; i--) {
        int j = r.nextInt(i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
      Integer[] refs = new Integer[n];
      Arrays.setAll(refs, i -> i * 10);
      PageOrder.gather(order, refs);
      int w = 3;
      byte[] bytes = new byte[n * w];
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = (byte) (i / w * 7 + i % w);
      }
      PageOrder.gather(order, bytes, w);
      for (int i = 0; i < n; i++) {
        assertThat(refs[i]).isEqualTo(order[i] * 10);
        for (int k = 0; k < w; k++) {
          assertThat(bytes[i * w + k]).isEqualTo((byte) (order[i] * 7 + k));
        }
      }
    }
  }

  @Test
  void aGraphFileWrittenInAnOrderHoldsTheNodesRenumbered() throws IOException {
    Random r = TestSeeds.random("PageOrderTest.file");
    int n = 500;
    int dim = 8;
    int degree = 6;
    int[][] adj = randomGraph(r, n, degree, 5);
    float[][] v = new float[n][dim];
    for (float[] x : v) {
      for (int j = 0; j < dim; j++) {
        x[j] = r.nextFloat();
      }
    }
    GraphFile.NodeSource nodes =
        new GraphFile.NodeSource() {
          @Override
          public float[] vector(int ord) {
            return v[ord];
          }

          @Override
          public int neighbours(int ord, int[] out) {
            return of(adj).neighbours(ord, out);
          }
        };
    int entry = 17;
    int[] order =
        PageOrder.compute(n, entry, GraphFile.recordsPerPage(dim, degree), degree, of(adj));
    Path p = tmp.resolve("g.fvg");
    GraphFile.write(FileIO.DEFAULT, p, n, dim, degree, entry, nodes, order);
    int[] inv = PageOrder.inverse(order);
    try (GraphFile g = GraphFile.open(FileIO.DEFAULT, p, false)) {
      assertThat(g.entry()).isZero();
      int[] out = new int[degree];
      for (int i = 0; i < n; i++) {
        assertThat(g.vector(i)).isEqualTo(v[order[i]]);
        int d = g.nodes().neighbours(i, out);
        assertThat(d).isEqualTo(adj[order[i]].length);
        for (int k = 0; k < d; k++) {
          assertThat(out[k]).isEqualTo(inv[adj[order[i]][k]]);
        }
      }
    }
    assertThatThrownBy(
            () ->
                GraphFile.write(
                    FileIO.DEFAULT,
                    tmp.resolve("bad.fvg"),
                    n,
                    dim,
                    degree,
                    entry,
                    nodes,
                    new int[n - 1]))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
