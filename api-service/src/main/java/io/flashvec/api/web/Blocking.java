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

  /**
   * Calls {@code work} on the calling thread (the Netty event loop) when {@code inline}, else as
   * {@link #call}. Only for work that cannot block: a search of data in memory, which is CPU work
   * of a fraction of a millisecond. The hop to a virtual thread and back costs two thread wake-ups
   * per request; without it a 768-d search at search list 15 ran 3,645–3,844 instead of 2,958–3,052
   * requests/s on 2 cores (2 clients).
   */
  public Mono<ResponseEntity<byte[]>> call(boolean inline, Callable<ResponseEntity<byte[]>> work) {
    return inline ? Mono.fromCallable(work) : call(work);
  }

  @Override
  public void close() {
    scheduler.dispose();
    executor.shutdown();
  }
}
