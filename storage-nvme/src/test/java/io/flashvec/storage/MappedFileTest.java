package io.flashvec.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MappedFileTest {

  @TempDir Path tmp;

  private Path file(int pages) throws IOException {
    byte[] b = new byte[pages * MappedFile.PAGE];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) (i / MappedFile.PAGE);
    }
    Path p = tmp.resolve("f.bin");
    Files.write(p, b);
    return p;
  }

  @Test
  void mapsAndReadsTheWholeFile() throws IOException {
    Path p = file(8);
    try (MappedFile f = MappedFile.open(FileIO.DEFAULT, p)) {
      assertThat(f.size()).isEqualTo(8L * MappedFile.PAGE);
      assertThat(f.mapped()).isTrue();
      for (int page = 0; page < 8; page++) {
        assertThat(f.segment().get(ValueLayout.JAVA_BYTE, (long) page * MappedFile.PAGE + 17))
            .isEqualTo((byte) page);
      }
    }
  }

  @Test
  void prefetchedAndTouchedPagesAreResident() throws IOException {
    Path p = file(16);
    try (MappedFile f = MappedFile.open(FileIO.DEFAULT, p);
        Arena a = Arena.ofConfined()) {
      MemorySegment scratch = a.allocate(16);
      f.prefetch(3 * MappedFile.PAGE + 100, 2 * MappedFile.PAGE);
      f.segment().get(ValueLayout.JAVA_BYTE, 3L * MappedFile.PAGE + 100);
      f.segment().get(ValueLayout.JAVA_BYTE, 5L * MappedFile.PAGE);
      int resident = f.residentPages(3 * MappedFile.PAGE + 100, 2 * MappedFile.PAGE, scratch);
      // -1 only where mincore is unavailable; on Linux the three touched pages are resident
      assertThat(resident).isIn(-1, 3);
      assertThat(f.residentPages(0, 16L * MappedFile.PAGE, a.allocate(1))).isEqualTo(-1);
    }
  }

  @Test
  void evictionKeepsTheContentsReadable() throws IOException {
    Path p = file(4);
    try (MappedFile f = MappedFile.open(FileIO.DEFAULT, p)) {
      f.segment().get(ValueLayout.JAVA_BYTE, 0);
      f.dropMappedPages();
      MappedFile.evictFromPageCache(p);
      assertThat(f.segment().get(ValueLayout.JAVA_BYTE, 3L * MappedFile.PAGE)).isEqualTo((byte) 3);
    }
    assertThat(MappedFile.evictFromPageCache(tmp.resolve("missing"))).isFalse();
  }

  @Test
  void pagesSpannedCountsPartialPages() {
    assertThat(MappedFile.pagesSpanned(0, 4096)).isEqualTo(1);
    assertThat(MappedFile.pagesSpanned(100, 4096)).isEqualTo(2);
    assertThat(MappedFile.pagesSpanned(4095, 2)).isEqualTo(2);
    assertThat(MappedFile.pagesSpanned(8192, 1)).isEqualTo(1);
  }

  @Test
  void readingAfterCloseFailsInsteadOfCrashing() throws IOException {
    Path p = file(2);
    MappedFile f = MappedFile.open(FileIO.DEFAULT, p);
    MemorySegment seg = f.segment();
    f.close();
    assertThatThrownBy(() -> seg.get(ValueLayout.JAVA_BYTE, 0))
        .isInstanceOf(IllegalStateException.class);
  }
}
