package io.flashvec.index;

/** The index contract for {@code diskann} collections. */
class DiskAnnIndexTypeTest extends BaseIndexTypeTestCase {
  @Override
  String type() {
    return IndexParams.DISKANN;
  }

  @Override
  double minRecall() {
    return 0.9;
  }
}
