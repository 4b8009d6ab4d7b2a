package io.flashvec.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The kernel's view of a background thread's priority after {@link ThreadPriority}. */
class ThreadPriorityTest {

  /** Field 19 of /proc/thread-self/stat (after the parenthesised name) is the nice value. */
  private static int niceOfCurrentThread() throws Exception {
    String stat = Files.readString(Path.of("/proc/thread-self/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Integer.parseInt(f[16]);
  }

  @Test
  void aPlatformThreadLowersItsOwnPriorityAndNoOtherThreads() throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/thread-self/stat")), "Linux only");
    int before = niceOfCurrentThread();
    AtomicReference<Object> seen = new AtomicReference<>();
    Thread t =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    boolean ok = ThreadPriority.lowerCurrent(Math.max(before, 7));
                    seen.set(ok ? niceOfCurrentThread() : "refused");
                  } catch (Exception e) {
                    seen.set(e);
                  }
                });
    t.join();
    assertThat(seen.get()).isEqualTo(Math.max(before, 7));
    assertThat(niceOfCurrentThread()).as("the caller's own thread").isEqualTo(before);
  }

  @Test
  void virtualThreadsAndOutOfRangeValuesAreRefused() throws Exception {
    AtomicReference<Boolean> ok = new AtomicReference<>();
    Thread.ofVirtual().start(() -> ok.set(ThreadPriority.lowerCurrent(5))).join();
    assertThat(ok.get()).as("a virtual thread shares its carrier").isFalse();
    assertThatThrownBy(() -> ThreadPriority.lowerCurrent(20))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("nice out of range [nice=20, allowed=0..19]");
  }
}
