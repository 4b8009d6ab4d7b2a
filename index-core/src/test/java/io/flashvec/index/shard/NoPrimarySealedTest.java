package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.IndexingState;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.SparseVector;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.testing.TestSeeds;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The sparse vector contract for a collection without a primary dense vector, sealed every 40
 * points: each sealed segment is its metadata, vectors file and deletion bits, without a graph or
 * PQ codes, and the shard reports all of its points as needing no index build.
 */
class NoPrimarySealedTest extends SparseVectorsSealedTest {

  @Override
  protected boolean noPrimary() {
    return true;
  }

  @Override
  protected void checkLayout(Shard s) {
    checkNoPrimary(s);
    assertThat(s.snapshot().sealed()).isNotEmpty();
  }

  @Test
  void bulkLoadSealsRawWithoutAGraphAndReopens() throws Exception {
    Random r = TestSeeds.random("NoPrimarySealedTest.bulkLoad");
    Map<PointId, SparseVector> model = new HashMap<>();
    Shard s = open();
    try {
      s.setDeferBuilds(true); // indexing_threshold 0: every seal is raw
      for (int i = 0; i < 130; i++) {
        PointId id = PointId.of(i);
        SparseVector v = randomSparse(r);
        s.upsert(List.of(new Point(id, null, null, Map.of("a", v))));
        model.put(id, v);
      }
      s.flush();
      settle(s);
      checkNoPrimary(s);
      assertThat(s.snapshot().sealed()).hasSizeGreaterThanOrEqualTo(3);
      assertThat(s.deferredBuilds()).as("nothing waits for a graph").isZero();
      s.setDeferBuilds(false);
      s.close();
      s = open();
      settle(s);
      checkNoPrimary(s);
      assertThat(s.count()).isEqualTo(model.size());
      for (int q = 0; q < 5; q++) {
        SparseVector query = randomSparse(r);
        var got = s.sparseSearch("a", query, 200, null, null, false, false);
        long want = model.values().stream().filter(v -> query.dot(v) != 0f).count();
        assertThat(got).hasSize((int) want);
        for (var rec : got) {
          assertThat(rec.score()).isEqualTo(query.dot(model.get(rec.id())));
        }
      }
    } finally {
      s.close();
    }
  }

  /** What every segment of a shard without a primary vector must look like. */
  static void checkNoPrimary(Shard s) {
    for (Segment seg : s.snapshot().segments()) {
      assertThat(seg.withoutVector())
          .as("segment %s: no point has the primary", seg.id())
          .isEqualTo(seg.size());
      if (seg instanceof GrowingSegment g) {
        assertThat(g.graph()).as("growing segment %s: no live graph", g.id()).isNull();
        assertThat(g.dimension()).isZero();
      }
      if (seg instanceof SealedSegment d) {
        assertThat(d.hasGraph()).as("segment %s: nothing left to build", d.id()).isTrue();
        assertThat(d.codebook()).as("segment %s: no PQ codes", d.id()).isNull();
        assertThat(Files.exists(d.directory().resolve("graph.fvg"))).isFalse();
        assertThat(Files.exists(d.directory().resolve("pq.fvs"))).isFalse();
        assertThat(Files.exists(d.directory().resolve("order.fvs"))).isFalse();
        assertThat(Files.exists(d.directory().resolve("meta.fvs"))).isTrue();
        if (d.size() > 0) {
          assertThat(Files.exists(d.directory().resolve("vectors.fvs"))).isTrue();
        }
      }
    }
    IndexingState st = s.indexingState();
    assertThat(st.backlog()).as("nothing to index").isZero();
    assertThat(s.rawSegments()).isZero();
  }
}
