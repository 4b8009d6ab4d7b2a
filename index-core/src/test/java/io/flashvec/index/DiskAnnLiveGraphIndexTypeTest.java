package io.flashvec.index;

/**
 * The index contract, with growing segments built into live graphs and sealed from them, for {@code
 * diskann} collections.
 */
class DiskAnnLiveGraphIndexTypeTest extends DiskAnnIndexTypeTest {
  @Override
  boolean liveGraph() {
    return true;
  }
}
