package io.flashvec.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.testing.TestSeeds;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PageReaderTest {

  private static final int PAGE = MappedFile.PAGE;

  @TempDir Path tmp;

  private final IoThreads threads = new IoThreads(8);

  @AfterEach
  void stop() {
    threads.close();
  }

  /** A file whose every int is its own index, so any misplaced byte shows. */
  private Path file(int pages) throws IOException {
    byte[] b = new byte[pages * PAGE];
    MemorySegment s = MemorySegment.ofArray(b);
    for (int i = 0; i < b.length / 4; i++) {
      s.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, i);
    }
    Path p = tmp.resolve("f.bin");
    Files.write(p, b);
    return p;
  }

  private static IOException readNow(PageReader r, long offset, MemorySegment dst)
      throws Exception {
    CompletableFuture<IOException> f = new CompletableFuture<>();
    r.read(offset, dst, 7, (tag, e) -> f.complete(tag == 7 ? e : new IOException("wrong tag")));
    return f.get(30, TimeUnit.SECONDS);
  }

  @Test
  void readsTheRightBytes() throws Exception {
    Path p = file(16);
    try (PageReader r = PageReader.open(p, threads);
        Arena a = Arena.ofShared()) {
      MemorySegment dst = a.allocate(3L * PAGE, PAGE);
      assertThat(readNow(r, 5L * PAGE, dst)).isNull();
      for (int i = 0; i < 3 * PAGE / 4; i++) {
        assertThat(dst.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i)).isEqualTo(5 * PAGE / 4 + i);
      }
      assertThat(threads.pagesRead()).isEqualTo(3);
      assertThat(threads.bytesRead()).isEqualTo(3L * PAGE);
    }
  }

  @Test
  void manyConcurrentReadsEachGetTheirPage() throws Exception {
    int pages = 256;
    Path p = file(pages);
    Random rnd = TestSeeds.random("page-reader-concurrent");
    int reads = 2000;
    try (PageReader r = PageReader.open(p, threads)) {
      MemorySegment dst = Arena.ofAuto().allocate((long) reads * PAGE, PAGE);
      int[] page = new int[reads];
      AtomicReferenceArray<IOException> errors = new AtomicReferenceArray<>(reads);
      CountDownLatch done = new CountDownLatch(reads);
      // submitted from many virtual threads at once
      try (var submitters = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
        for (int i = 0; i < reads; i++) {
          page[i] = rnd.nextInt(pages);
          int at = i;
          submitters.execute(
              () ->
                  r.read(
                      (long) page[at] * PAGE,
                      dst.asSlice((long) at * PAGE, PAGE),
                      at,
                      (tag, e) -> {
                        errors.set(tag, e);
                        done.countDown();
                      }));
        }
      }
      assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
      for (int i = 0; i < reads; i++) {
        assertThat(errors.get(i)).isNull();
        int first = dst.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, (long) i * PAGE / 4);
        assertThat(first).as("read %d of page %d", i, page[i]).isEqualTo(page[i] * PAGE / 4);
      }
    }
  }

  @Test
  void errorsReachTheCompletion() throws Exception {
    Path p = file(4);
    try (PageReader r = PageReader.open(p, threads);
        Arena a = Arena.ofShared()) {
      IOException e = readNow(r, 4L * PAGE, a.allocate(PAGE, PAGE));
      assertThat(e).hasMessageContaining("past the end").hasMessageContaining("offset=16384");
      assertThat(readNow(r, 3L * PAGE, a.allocate(2L * PAGE, PAGE))).isNotNull();
      assertThatThrownBy(() -> r.read(100, a.allocate(PAGE), 0, (t, x) -> {}))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("offset=100");
    }
    assertThatThrownBy(() -> PageReader.open(tmp.resolve("missing"), threads))
        .isInstanceOf(IOException.class);
  }

  @Test
  void closeWhileReadsAreInFlightCompletesEveryRead() throws Exception {
    Path p = file(64);
    int reads = 5000;
    PageReader r = PageReader.open(p, threads);
    MemorySegment dst = Arena.ofAuto().allocate((long) reads * PAGE, PAGE);
    CountDownLatch done = new CountDownLatch(reads);
    AtomicReferenceArray<IOException> errors = new AtomicReferenceArray<>(reads);
    for (int i = 0; i < reads; i++) {
      r.read(
          (long) (i % 64) * PAGE,
          dst.asSlice((long) i * PAGE, PAGE),
          i,
          (tag, e) -> {
            errors.set(tag, e);
            done.countDown();
          });
    }
    r.close();
    // every read completes, either with its bytes or with the reader's closing
    assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
    for (int i = 0; i < reads; i++) {
      IOException e = errors.get(i);
      if (e == null) {
        assertThat(dst.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, (long) i * PAGE / 4))
            .isEqualTo((i % 64) * PAGE / 4);
      } else {
        assertThat(e).hasMessageContaining("closed");
      }
    }
    CompletableFuture<IOException> after = new CompletableFuture<>();
    r.read(0, dst.asSlice(0, PAGE), 0, (tag, e) -> after.complete(e));
    assertThat(after.get(10, TimeUnit.SECONDS)).hasMessageContaining("closed");
  }

  @Test
  void refusesNonsenseThreadCounts() {
    for (int n : new int[] {0, -3, IoThreads.MAX_THREADS + 1}) {
      assertThatThrownBy(() -> new IoThreads(n))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ioThreads=" + n);
    }
  }
}
