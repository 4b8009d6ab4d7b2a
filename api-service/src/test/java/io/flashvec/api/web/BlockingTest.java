package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flashvec.api.FlashVecProperties;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;

/** Where write requests run: the kernel's view of their thread's priority. */
class BlockingTest {

  /** Field 19 of /proc/thread-self/stat (after the parenthesised name) is the nice value. */
  private static int niceOfCurrentThread() throws Exception {
    String stat = Files.readString(Path.of("/proc/thread-self/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Integer.parseInt(f[16]);
  }

  private static String where(Blocking b, boolean write) {
    var work =
        (java.util.concurrent.Callable<ResponseEntity<byte[]>>)
            () ->
                ResponseEntity.ok(
                    ((Thread.currentThread().isVirtual() ? "virtual " : "platform ")
                            + niceOfCurrentThread())
                        .getBytes(StandardCharsets.UTF_8));
    ResponseEntity<byte[]> r = (write ? b.write(work) : b.call(work)).block();
    return new String(r.getBody(), StandardCharsets.UTF_8);
  }

  @Test
  void writesRunAtTheirLowerPriorityAndOtherRequestsDoNot() throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/thread-self/stat")), "Linux only");
    int base = niceOfCurrentThread();
    try (Blocking b = new Blocking(new FlashVecProperties.Writes(Math.min(19, base + 7), 2))) {
      for (int i = 0; i < 5; i++) { // more tasks than threads: the pool's threads are reused
        assertThat(where(b, true)).isEqualTo("platform " + Math.min(19, base + 7));
      }
      assertThat(where(b, false)).isEqualTo("virtual " + base);
    }
    assertThat(niceOfCurrentThread()).as("the caller's own thread").isEqualTo(base);
  }

  @Test
  void niceZeroKeepsWritesOnVirtualThreads() throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/thread-self/stat")), "Linux only");
    int base = niceOfCurrentThread();
    try (Blocking b = new Blocking(new FlashVecProperties.Writes(0, 2))) {
      assertThat(where(b, true)).isEqualTo("virtual " + base);
    }
  }
}
