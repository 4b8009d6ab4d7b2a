package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sparse vector contract for a collection without a primary dense vector, sealed raw every 40
 * points and merged as deletions call for it: raw seals and merges write the same graph-less
 * segments, and no merge waits for a graph.
 */
class NoPrimaryRawMergedTest extends SparseVectorsRawMergedTest {

  @Override
  protected boolean noPrimary() {
    return true;
  }

  @Override
  protected void checkLayout(Shard s) {
    NoPrimarySealedTest.checkNoPrimary(s);
    var sealed = s.snapshot().sealed();
    assertThat(sealed).isNotEmpty();
    assertThat(sealed).anyMatch(seg -> seg.hasSparse());
    assertThat(sealed).anyMatch(seg -> seg.hasDense());
  }
}
