package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.testing.SuppressForbidden;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.http.ResponseEntity;

/**
 * Where requests run (the kernel's view of their thread's priority), and that they run to the end.
 */
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
  void anErrorReactorHoldsFatalFailsTheRequestInsteadOfHangingIt() {
    try (Blocking b = new Blocking(new FlashVecProperties.Writes(0, 2))) {
      for (Error e :
          new Error[] {
            new NoClassDefFoundError("jdk/incubator/vector/Vector"), new StackOverflowError()
          }) {
        java.util.concurrent.Callable<ResponseEntity<byte[]>> work =
            () -> {
              throw e;
            };
        for (var mono : java.util.List.of(b.call(work), b.write(work), b.call(true, work))) {
          org.assertj.core.api.Assertions.assertThatThrownBy(
                  () -> mono.block(java.time.Duration.ofSeconds(10)))
              .isInstanceOf(IllegalStateException.class)
              .hasMessageContaining("request failed with " + e.getClass().getName())
              .hasCause(e);
        }
      }
    }
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

  /**
   * A request whose subscriber goes away (the client hung up) is not interrupted: an interrupt
   * would close the FileChannel the work is writing (the WAL) for every other request too.
   */
  @Test
  @SuppressForbidden("the work takes 200 ms, so that the cancellation arrives while it runs")
  void aCancelledRequestRunsToItsEndUninterrupted() throws Exception {
    for (int nice : new int[] {0, 5}) { // virtual threads, and the write pool
      try (Blocking b = new Blocking(new FlashVecProperties.Writes(nice, 2))) {
        for (boolean write : new boolean[] {true, false}) {
          var started = new java.util.concurrent.CountDownLatch(1);
          var finished = new java.util.concurrent.CountDownLatch(1);
          var interrupted = new java.util.concurrent.atomic.AtomicBoolean();
          java.util.concurrent.Callable<ResponseEntity<byte[]>> work =
              () -> {
                started.countDown();
                try {
                  Thread.sleep(200);
                } catch (InterruptedException e) {
                  interrupted.set(true);
                }
                finished.countDown();
                return ResponseEntity.ok().build();
              };
          var subscription = (write ? b.write(work) : b.call(work)).subscribe();
          assertThat(started.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
          subscription.dispose();
          assertThat(finished.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
          assertThat(interrupted).as("nice %d, write %s", nice, write).isFalse();
        }
      }
    }
  }

  /**
   * A write with wait bounded by a timeout: past the timeout, Qdrant's wait_timeout with the
   * operation id once the write was applied, 408 before; within it, the write's own answer.
   */
  @Test
  void aWaitedWriteAppliedWhenItsTimeoutPassesAnswersWaitTimeout() throws Exception {
    try (Blocking b = new Blocking(new FlashVecProperties.Writes(0, 2))) {
      for (boolean applied : new boolean[] {true, false}) {
        // long enough for the work to start on a loaded machine where it must be applied first
        java.time.Duration t =
            applied ? java.time.Duration.ofSeconds(3) : java.time.Duration.ofMillis(100);
        var release = new java.util.concurrent.CountDownLatch(1);
        var finished = new java.util.concurrent.CountDownLatch(1);
        Blocking.BodyWork work =
            body -> {
              if (applied) {
                io.flashvec.index.collection.Collection.ON_APPLIED.get().accept(7);
              }
              try {
                release.await(); // the durability wait that outlasts the timeout
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              finished.countDown();
              return Json.object().put("status", "completed");
            };
        var answer =
            b.answerWaitedWrite("c", "{}".getBytes(StandardCharsets.UTF_8), work)
                .contextWrite(ctx -> ctx.put(Blocking.TIMEOUT, t));
        if (applied) {
          String body = new String(answer.block().getBody(), StandardCharsets.UTF_8);
          assertThat(body).contains("\"operation_id\":7").contains("\"status\":\"wait_timeout\"");
        } else {
          org.assertj.core.api.Assertions.assertThatThrownBy(answer::block)
              .isInstanceOf(RequestTimeoutException.class);
        }
        release.countDown();
        assertThat(finished.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      }
      // applied and durable within the timeout: the write's own answer
      String body =
          new String(
              b.answerWaitedWrite(
                      "c",
                      "{}".getBytes(StandardCharsets.UTF_8),
                      x -> {
                        io.flashvec.index.collection.Collection.ON_APPLIED.get().accept(8);
                        return Json.object().put("status", "completed");
                      })
                  .contextWrite(ctx -> ctx.put(Blocking.TIMEOUT, java.time.Duration.ofSeconds(30)))
                  .block()
                  .getBody(),
              StandardCharsets.UTF_8);
      assertThat(body).contains("\"status\":\"completed\"");
    }
  }
}
