package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sparse vector contract for a collection without a primary dense vector, every point in one
 * growing segment (the WAL replayed on reopen): the segment holds no placeholder and no live graph.
 */
class NoPrimaryGrowingTest extends SparseVectorsGrowingTest {

  @Override
  protected boolean noPrimary() {
    return true;
  }

  @Override
  protected void checkLayout(Shard s) {
    NoPrimarySealedTest.checkNoPrimary(s);
    assertThat(s.snapshot().sealed()).isEmpty();
  }
}
