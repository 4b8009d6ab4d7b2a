package io.flashvec.index;

/** The index contract for {@code flat} collections. */
class FlatIndexTypeTest extends BaseIndexTypeTestCase {
  @Override
  String type() {
    return IndexParams.FLAT;
  }

  @Override
  double minRecall() {
    return 1.0;
  }
}
