package io.flashvec.api.web;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Runs blocking engine calls (WAL fsync, exact scans) on virtual threads so that the Netty event
 * loop never blocks. Virtual threads suit the mix: writers park in fsync while the two carrier
 * threads keep scoring vectors.
 */
@Component
public class Blocking implements AutoCloseable {

  private final ExecutorService executor =
      Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("flashvec-req-", 0).factory());
  private final Scheduler scheduler = Schedulers.fromExecutorService(executor, "flashvec-req");

  /** Calls {@code work} off the event loop. */
  public Mono<ResponseEntity<byte[]>> call(Callable<ResponseEntity<byte[]>> work) {
    return Mono.fromCallable(work).subscribeOn(scheduler);
  }

  @Override
  public void close() {
    scheduler.dispose();
    executor.shutdown();
  }
}
