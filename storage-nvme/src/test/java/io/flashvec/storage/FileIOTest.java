package io.flashvec.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileIOTest {

  private static final long SEED = 20261128L;

  @TempDir Path dir;

  /** Heap buffers larger than a chunk go through in chunks: every byte lands once, in order. */
  @Test
  void largeHeapBuffersAreWrittenAndReadWholeFromTheirPositions() throws IOException {
    System.out.println("seed=" + SEED);
    int size = 3 * FileIO.HEAP_CHUNK + 12_345;
    byte[] data = new byte[size];
    new Random(SEED).nextBytes(data);
    Path f = dir.resolve("big.bin");
    ByteBuffer out = ByteBuffer.wrap(data, 7, size - 7); // not at position 0
    try (FileChannel ch =
        FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      FileIO.DEFAULT.writeFully(ch, out);
    }
    assertThat(out.hasRemaining()).isFalse();
    byte[] disk = Files.readAllBytes(f);
    assertThat(disk).hasSize(size - 7);
    assertThat(java.util.Arrays.equals(disk, 0, size - 7, data, 7, size)).isTrue();

    byte[] back = new byte[size];
    ByteBuffer in = ByteBuffer.wrap(back, 3, size - 3); // more room than the file from offset 5
    int n;
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      n = FileIO.DEFAULT.readFully(ch, in, 5);
    }
    assertThat(n).isEqualTo(size - 7 - 5);
    assertThat(in.position()).isEqualTo(3 + n);
    assertThat(java.util.Arrays.equals(back, 3, 3 + n, data, 12, size)).isTrue();

    assertThat(FileIO.DEFAULT.readAllBytes(f)).isEqualTo(disk);
    Path empty = Files.createFile(dir.resolve("empty.bin"));
    assertThat(FileIO.DEFAULT.readAllBytes(empty)).isEmpty();
  }
}
