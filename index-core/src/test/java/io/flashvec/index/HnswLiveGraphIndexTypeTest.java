package io.flashvec.index;

/**
 * The index contract, with growing segments built into live graphs and sealed from them, for {@code
 * hnsw} collections.
 */
class HnswLiveGraphIndexTypeTest extends HnswIndexTypeTest {
  @Override
  boolean liveGraph() {
    return true;
  }
}
