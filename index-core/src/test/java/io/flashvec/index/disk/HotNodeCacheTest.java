package io.flashvec.index.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HotNodeCacheTest {

  @TempDir Path tmp;

  /** A graph of {@code n} 4-d nodes whose adjacency lists are {@code adj} (missing: none). */
  private GraphFile graph(int n, int entry, int[][] adj) throws IOException {
    Path p = tmp.resolve("g-" + n + "-" + entry + ".fvg");
    GraphFile.write(
        FileIO.DEFAULT,
        p,
        n,
        4,
        4,
        entry,
        new GraphFile.NodeSource() {
          @Override
          public float[] vector(int ord) {
            return new float[] {ord, -ord, 0.5f * ord, 1};
          }

          @Override
          public int neighbours(int ord, int[] out) {
            int[] a = ord < adj.length && adj[ord] != null ? adj[ord] : new int[0];
            System.arraycopy(a, 0, out, 0, a.length);
            return a.length;
          }
        });
    return GraphFile.open(FileIO.DEFAULT, p, false);
  }

  @Test
  void walksBreadthFirstFromTheEntryInAdjacencyOrder() throws IOException {
    int[][] adj = new int[200][];
    adj[7] = new int[] {30, 12, 7, 30}; // itself and a repeat are skipped
    adj[30] = new int[] {40, 7};
    adj[12] = new int[] {50, 41};
    adj[40] = new int[] {60};
    adj[50] = new int[] {61, 62};
    adj[41] = new int[] {63};
    adj[60] = new int[] {64};
    try (GraphFile g = graph(200, 7, adj)) {
      HotNodeCache c = HotNodeCache.build(g, Long.MAX_VALUE);
      // level 0: 7; level 1: 30, 12; level 2: 40 (from 30), 50, 41 (from 12); level 3: 60, 61,
      // 62, 63; level 4: 64. At most a tenth of the 200 nodes: all 11 reached fit.
      assertThat(c.order()).containsExactly(7, 30, 12, 40, 50, 41, 60, 61, 62, 63, 64);
      HotNodeCache small = HotNodeCache.build(g, 5L * g.recordBytes());
      assertThat(small.order()).containsExactly(7, 30, 12, 40, 50);
      assertThat(small.slot(50)).isEqualTo(4);
      assertThat(small.slot(41)).isEqualTo(-1);
    }
  }

  /**
   * The records are freed when the last reference goes, not by the collector: a search that holds
   * the cache keeps it readable after its owner let it go, and once freed it can no longer be taken
   * (a search then reads the file).
   */
  @Test
  void theLastReleaseFreesTheRecords() throws IOException {
    int[][] adj = new int[200][];
    adj[7] = new int[] {30, 12};
    try (GraphFile g = graph(200, 7, adj)) {
      HotNodeCache c = HotNodeCache.build(g, Long.MAX_VALUE);
      assertThat(c.acquire()).as("a search takes it").isTrue();
      c.release(); // the owner swaps it out
      assertThat(c.held()).isTrue();
      long first = c.records().get(java.lang.foreign.ValueLayout.JAVA_LONG, 0);
      assertThat(first)
          .isEqualTo(
              g.segment()
                  .get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, g.recordOffset(7)));
      c.release(); // the search ends
      assertThat(c.held()).isFalse();
      assertThat(c.acquire()).as("freed: no search may take it").isFalse();
      assertThatThrownBy(() -> c.records().get(java.lang.foreign.ValueLayout.JAVA_LONG, 0))
          .as("its memory is gone")
          .isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(c::release).isInstanceOf(IllegalStateException.class);
      assertThat(c.nativeBytes()).as("still reported for what it was").isPositive();
    }
  }

  @Test
  void holdsNoMoreThanTheBudgetNorATenthOfTheNodes() throws IOException {
    int n = 1000;
    int[][] ring = new int[n][];
    for (int i = 0; i < n; i++) {
      ring[i] = new int[] {(i + 1) % n, (i + n - 1) % n, (i + 7) % n, (i + 31) % n};
    }
    try (GraphFile g = graph(n, 0, ring)) {
      int rb = g.recordBytes();
      for (long budget : new long[] {0, rb - 1, rb, 35L * rb + rb / 2, 99L * rb, 1L << 40}) {
        HotNodeCache c = HotNodeCache.build(g, budget);
        int expected = (int) Math.min(budget / rb, n / 10);
        if (expected == 0) {
          assertThat(c).as("budget %d", budget).isNull();
          continue;
        }
        assertThat(c.size()).as("budget %d", budget).isEqualTo(expected);
        assertThat(c.records().byteSize()).isLessThanOrEqualTo(budget);
      }
    }
  }

  @Test
  void cachedRecordsAreTheFilesBytes() throws IOException {
    int n = 300;
    int[][] adj = new int[n][];
    for (int i = 0; i < n; i++) {
      adj[i] = new int[] {(i * 3 + 1) % n, (i * 5 + 2) % n};
    }
    try (GraphFile g = graph(n, 11, adj)) {
      HotNodeCache c = HotNodeCache.build(g, Long.MAX_VALUE);
      assertThat(c.size()).isEqualTo(30);
      int rb = g.recordBytes();
      for (int ord : c.order()) {
        MemorySegment cached = c.records().asSlice(c.offset(c.slot(ord)), rb);
        MemorySegment file = g.segment().asSlice(g.recordOffset(ord), rb);
        assertThat(cached.mismatch(file)).as("node %d", ord).isEqualTo(-1L);
      }
    }
  }

  /** A member that records the shares it is told. */
  private static final class Member implements NodeCacheBudget.Member {
    final int nodes;
    long bytes = -1;

    Member(int nodes) {
      this.nodes = nodes;
    }

    @Override
    public int nodes() {
      return nodes;
    }

    @Override
    public void cacheBytes(long bytes) {
      this.bytes = bytes;
    }
  }

  @Test
  void budgetIsSplitByLog2OfTheNodesAndNeverOverspent() {
    long total = 64L << 20;
    NodeCacheBudget budget = new NodeCacheBudget(total);
    Member small = new Member(1 << 10);
    Member large = new Member(1 << 20);
    budget.join(small);
    assertThat(small.bytes).isEqualTo(total);
    budget.join(large);
    // log2: 10 and 20
    assertThat(small.bytes).isEqualTo(total / 3);
    assertThat(large.bytes).isEqualTo(2 * total / 3);
    List<Member> many = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      Member m = new Member(1000 + 997 * i);
      many.add(m);
      budget.join(m);
    }
    long sum = small.bytes + large.bytes;
    for (Member m : many) {
      sum += m.bytes;
    }
    assertThat(sum).isLessThanOrEqualTo(total).isGreaterThan(total - 10);
    long smallBefore = small.bytes;
    budget.leave(large);
    budget.leave(large); // a second leave changes nothing
    assertThat(budget.members()).isEqualTo(8);
    // a leave (perhaps on a search's thread) copies nothing: the shares stay until a join
    assertThat(small.bytes).isEqualTo(smallBefore);
    Member next = new Member(1 << 10);
    budget.join(next);
    assertThat(small.bytes).isGreaterThan(smallBefore).isEqualTo(next.bytes);
    sum = small.bytes + next.bytes;
    for (Member m : many) {
      sum += m.bytes;
      assertThat(m.bytes / (double) small.bytes)
          .isCloseTo(
              NodeCacheBudget.weight(m.nodes) / 10.0, org.assertj.core.data.Offset.offset(1e-6));
    }
    assertThat(sum).isLessThanOrEqualTo(total).isGreaterThan(total - 10);
  }

  @Test
  void aNegativeBudgetIsRefusedByValue() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new NodeCacheBudget(-5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("node-cache-bytes=-5");
  }

  @Test
  void noBudgetTellsNobody() {
    Member m = new Member(1000);
    NodeCacheBudget.NONE.join(m);
    assertThat(m.bytes).isEqualTo(-1);
    assertThat(NodeCacheBudget.NONE.members()).isZero();
  }
}
