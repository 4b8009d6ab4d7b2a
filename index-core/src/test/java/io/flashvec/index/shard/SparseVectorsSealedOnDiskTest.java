package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.diskann.DiskAnnSegment;
import io.flashvec.index.diskann.SegmentVectors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Set;

/**
 * The contract with sealed segments whose second dense field and multivector field stay in the
 * mapped vectors file ({@code on_disk: true}): the same exact results, its vectors read on demand,
 * not held on the heap.
 */
class SparseVectorsSealedOnDiskTest extends SparseVectorsSealedTest {

  @Override
  protected Set<String> denseOnDisk() {
    return Set.of(OTHER, MULTI);
  }

  @Override
  protected void checkLayout(Shard s) {
    super.checkLayout(s);
    for (var seg : s.snapshot().sealed()) {
      if (!seg.hasDense()) {
        continue;
      }
      DiskAnnSegment d = (DiskAnnSegment) seg;
      long data = 0;
      for (int ord = 0; ord < seg.size(); ord++) {
        data += seg.denseAt(ord, OTHER) == null ? 0 : 4L * OTHER_DIM;
        float[] multi = seg.denseAt(ord, MULTI);
        data += multi == null ? 0 : 4L * multi.length;
      }
      long file;
      try {
        file = Files.size(d.directory().resolve(SegmentVectors.FILE));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      // the heap keeps the bitset, the sparse vectors and the slots, not the field's vectors
      assertThat(d.vectorsHeapBytes())
          .as("heap bytes of the vectors file of segment %s", seg.id())
          .isLessThanOrEqualTo(file - data + 8L * ((seg.size() + 63) / 64));
    }
  }
}
