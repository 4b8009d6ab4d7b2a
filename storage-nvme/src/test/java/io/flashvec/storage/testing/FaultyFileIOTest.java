package io.flashvec.storage.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.storage.testing.FaultyFileIO.InjectedIOException;
import io.flashvec.storage.testing.FaultyFileIO.Op;
import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Failure injection counts calls the way the storage tests assume. */
@ExtendWith(TestSeeds.Reporter.class)
class FaultyFileIOTest {

  @TempDir Path tmp;

  @Test
  void failOnceFailsOnlyTheNthCallFromArming() throws IOException {
    FaultyFileIO io = new FaultyFileIO();
    Path file = tmp.resolve("f");
    try (FileChannel ch = io.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      io.writeFully(ch, ByteBuffer.wrap(new byte[] {1}));
      io.failOnce(Op.WRITE, 2);
      io.writeFully(ch, ByteBuffer.wrap(new byte[] {2}));
      assertThatThrownBy(() -> io.writeFully(ch, ByteBuffer.wrap(new byte[] {3})))
          .isInstanceOf(InjectedIOException.class)
          .hasMessage("injected I/O failure [op=WRITE, call=3, path=" + file + "]");
      io.writeFully(ch, ByteBuffer.wrap(new byte[] {4}));
    }
    assertThat(Files.readAllBytes(file)).containsExactly(1, 2, 4);
    assertThat(io.calls(Op.WRITE)).isEqualTo(4);
    assertThat(io.injectedFailures()).isEqualTo(1);
    io.assertNoOpenChannels();
  }

  @Test
  void failFromFailsEveryLaterCallUntilDisarmed() throws IOException {
    FaultyFileIO io = new FaultyFileIO().failFrom(Op.FSYNC_DIRECTORY, 2);
    io.fsyncDirectory(tmp);
    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(() -> io.fsyncDirectory(tmp)).isInstanceOf(InjectedIOException.class);
    }
    io.disarm();
    io.fsyncDirectory(tmp);
    assertThat(io.injectedFailures()).isEqualTo(3);
  }

  @Test
  void pathFilterCountsOnlyMatchingCalls() throws IOException {
    FaultyFileIO io = new FaultyFileIO();
    Path keep = tmp.resolve("keep");
    Path victim = tmp.resolve("victim");
    Files.writeString(keep, "k");
    Files.writeString(victim, "v");
    io.failOnce(Op.DELETE, 1, p -> p.getFileName().toString().equals("victim"));
    io.deleteIfExists(keep);
    assertThatThrownBy(() -> io.deleteIfExists(victim)).isInstanceOf(InjectedIOException.class);
    assertThat(victim).exists();
  }

  @Test
  void partialWriteWritesHalfBeforeFailing() throws IOException {
    FaultyFileIO io = new FaultyFileIO().partialWrites(true).failOnce(Op.WRITE, 1);
    Path file = tmp.resolve("f");
    try (FileChannel ch = io.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ByteBuffer buf = ByteBuffer.wrap(new byte[10]);
      assertThatThrownBy(() -> io.writeFully(ch, buf)).isInstanceOf(InjectedIOException.class);
      assertThat(buf.position()).isEqualTo(5);
    }
    assertThat(Files.size(file)).isEqualTo(5);
  }

  @Test
  void leakCheckNamesTheFilesStillOpen() throws IOException {
    FaultyFileIO io = new FaultyFileIO();
    Path file = tmp.resolve("f");
    FileChannel ch = io.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    assertThatThrownBy(io::assertNoOpenChannels)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("file channels leaked")
        .hasMessageContaining(file.toString());
    ch.close();
    io.assertNoOpenChannels();
  }
}
