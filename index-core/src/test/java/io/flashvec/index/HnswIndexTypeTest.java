package io.flashvec.index;

/** The index contract for {@code hnsw} collections. */
class HnswIndexTypeTest extends BaseIndexTypeTestCase {
  @Override
  String type() {
    return IndexParams.HNSW;
  }

  @Override
  double minRecall() {
    return 0.9;
  }
}
