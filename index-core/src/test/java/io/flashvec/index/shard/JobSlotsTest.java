package io.flashvec.index.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.testing.Await;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class JobSlotsTest {

  @Test
  void jobsOnTwoExecutorsShareTheSlotsAndAllRun() throws Exception {
    ExecutorService builds = Executors.newFixedThreadPool(4);
    ExecutorService merges = Executors.newFixedThreadPool(4);
    try {
      JobSlots slots = new JobSlots(2);
      Executor b = slots.wrap(builds);
      Executor m = slots.wrap(merges);
      AtomicInteger now = new AtomicInteger();
      AtomicInteger most = new AtomicInteger();
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch done = new CountDownLatch(8);
      for (int i = 0; i < 8; i++) {
        (i % 2 == 0 ? b : m)
            .execute(
                () -> {
                  most.accumulateAndGet(now.incrementAndGet(), Math::max);
                  try {
                    release.await(10, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  } finally {
                    now.decrementAndGet();
                    done.countDown();
                  }
                });
      }
      // two hold their slots; the other six wait without a pool thread
      assertThat(slots.running()).isEqualTo(2);
      assertThat(slots.waiting()).isEqualTo(6);
      Await.until(Duration.ofSeconds(10), "two jobs running", () -> now.get() == 2);
      release.countDown();
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(most.get()).isEqualTo(2);
      // the last release frees its slot after its job ran
      Await.until(Duration.ofSeconds(10), "every slot free", () -> slots.running() == 0);
      assertThat(slots.waiting()).isZero();
    } finally {
      builds.shutdownNow();
      merges.shutdownNow();
    }
  }

  @Test
  void aJobItsExecutorRefusesGivesItsSlotBack() {
    JobSlots slots = new JobSlots(1);
    Executor refusing =
        slots.wrap(
            job -> {
              throw new RejectedExecutionException("shut down");
            });
    assertThatThrownBy(() -> refusing.execute(() -> {}))
        .isInstanceOf(RejectedExecutionException.class);
    assertThat(slots.running()).isZero();
    AtomicInteger ran = new AtomicInteger();
    slots.wrap(Runnable::run).execute(ran::incrementAndGet);
    assertThat(ran.get()).isEqualTo(1);
    assertThat(slots.running()).isZero();
  }

  @Test
  void noSlotsIsNotACap() {
    assertThatThrownBy(() -> new JobSlots(0)).isInstanceOf(IllegalArgumentException.class);
    assertThat(new JobSlots(1).wrap(null)).isNull();
  }
}
