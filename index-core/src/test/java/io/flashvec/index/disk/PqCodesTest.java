package io.flashvec.index.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.CorruptFileException;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PqCodesTest {

  @TempDir Path tmp;

  private static PqCodebook book(float shift) {
    return new PqCodebook(
        2,
        4,
        new float[] {shift, 0, 0, 0},
        new int[] {2, 2},
        new float[] {1, 0, 0, 1, 2, 2, -1, -1});
  }

  /** Segments sealed with one codebook share it in memory once their files are read back. */
  @Test
  void filesOfEqualCodebooksShareOneInMemory() throws IOException {
    Path a = tmp.resolve("a.fvs");
    Path b = tmp.resolve("b.fvs");
    Path c = tmp.resolve("c.fvs");
    new PqCodes(book(0.5f), 2, new byte[] {0, 1, 1, 0}).write(FileIO.DEFAULT, a, 1);
    new PqCodes(book(0.5f), 3, new byte[] {1, 1, 0, 0, 1, 0}).write(FileIO.DEFAULT, b, 2);
    new PqCodes(book(0.25f), 2, new byte[] {0, 1, 1, 0}).write(FileIO.DEFAULT, c, 3);

    PqCodes ra = PqCodes.read(FileIO.DEFAULT, a, 1);
    PqCodes rb = PqCodes.read(FileIO.DEFAULT, b, 2);
    PqCodes rc = PqCodes.read(FileIO.DEFAULT, c, 3);

    assertThat(rb.codebook()).isSameAs(ra.codebook());
    assertThat(rc.codebook()).as("another centroid, another codebook").isNotSameAs(ra.codebook());
    // the codes stay each segment's own
    assertThat(ra.count()).isEqualTo(2);
    assertThat(rb.count()).isEqualTo(3);
    float[] table = ra.newTable();
    float[] scratch = new float[4];
    float[] got = new float[3];
    rb.fillTable(new float[] {1, 0, 0, 0}, true, table, scratch);
    rb.distances(table, new int[] {0, 1, 2}, 3, got);
    float[] alone = new float[3];
    PqCodes own = new PqCodes(book(0.5f), 3, new byte[] {1, 1, 0, 0, 1, 0});
    own.fillTable(new float[] {1, 0, 0, 0}, true, table, scratch);
    own.distances(table, new int[] {0, 1, 2}, 3, alone);
    assertThat(got).containsExactly(alone);
  }

  /**
   * A shared codebook no segment holds any more is collected, and the registry forgets it: it keeps
   * nothing of the codebook's arrays (at 1536 dimensions the rotation alone is 9 MiB).
   */
  @Test
  void aSharedCodebookNoSegmentHoldsIsCollectedAndForgotten() {
    float[] centroid = {0.125f, -3, 7, 0.5f};
    int[] sizes = {2, 2};
    float[] books = {1, 0, 0, 1, 2, 2, -1, -1};
    PqCodebook first = PqCodebook.shared(2, 4, centroid.clone(), sizes, books, null);
    assertThat(PqCodebook.shared(2, 4, centroid.clone(), sizes.clone(), books.clone(), null))
        .isSameAs(first);
    assertThat(PqCodebook.sharedWith(2, 4, centroid, sizes, books, null)).isEqualTo(1);

    WeakReference<PqCodebook> weak = new WeakReference<>(first);
    first = null;
    for (int i = 0; i < 200 && PqCodebook.sharedWith(2, 4, centroid, sizes, books, null) > 0; i++) {
      System.gc();
    }
    assertThat(weak.get()).as("collected once nothing holds it").isNull();
    assertThat(PqCodebook.sharedWith(2, 4, centroid, sizes, books, null))
        .as("the registry forgets a collected codebook")
        .isZero();
    PqCodebook again = PqCodebook.shared(2, 4, centroid, sizes, books, null);
    assertThat(again.clusters()).isEqualTo(2);
    assertThat(PqCodebook.sharedWith(2, 4, centroid, sizes, books, null)).isEqualTo(1);
  }

  /**
   * A file read back streamed is the one written, byte for byte through the codes, and a flipped
   * byte, a truncation or a file of another segment is refused as corrupt, never read as codes.
   */
  @Test
  void aDamagedFileIsRefusedAndAnIntactOneReadsBack() throws IOException {
    Path a = tmp.resolve("pq.fvs");
    byte[] codes = new byte[2 * 5000];
    for (int i = 0; i < codes.length; i++) {
      codes[i] = (byte) (i % 2);
    }
    new PqCodes(book(0.5f), 5000, codes).write(FileIO.DEFAULT, a, 7);
    PqCodes back = PqCodes.read(FileIO.DEFAULT, a, 7);
    assertThat(back.count()).isEqualTo(5000);
    assertThat(back.memoryBytes()).isEqualTo(new PqCodes(book(0.5f), 5000, codes).memoryBytes());

    assertThatThrownBy(() -> PqCodes.read(FileIO.DEFAULT, a, 8))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("another segment");
    byte[] bytes = Files.readAllBytes(a);
    byte[] flipped = bytes.clone();
    flipped[flipped.length - 100] ^= 1; // in the codes
    Files.write(a, flipped);
    assertThatThrownBy(() -> PqCodes.read(FileIO.DEFAULT, a, 7))
        .isInstanceOf(CorruptFileException.class)
        .hasMessageContaining("checksum");
    Files.write(a, java.util.Arrays.copyOf(bytes, bytes.length - 3000));
    assertThatThrownBy(() -> PqCodes.read(FileIO.DEFAULT, a, 7))
        .isInstanceOf(CorruptFileException.class);
  }
}
