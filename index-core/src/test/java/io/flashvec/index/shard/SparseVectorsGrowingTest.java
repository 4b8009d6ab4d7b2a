package io.flashvec.index.shard;

/** The sparse vector contract with every point in one growing segment (replayed on reopen). */
class SparseVectorsGrowingTest extends SparseVectorsContractTest {

  @Override
  protected int sealThreshold() {
    return 100_000;
  }
}
