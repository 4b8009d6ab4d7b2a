package io.flashvec.api.web;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.storage.ThreadPriority;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
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
  private final ExecutorService writeExecutor;
  private final Scheduler writeScheduler;

  /**
   * Write requests (body parsing and apply) run on {@code writes.threads()} platform threads at
   * nice {@code writes.nice()} when it is above 0, else on virtual threads like the rest.
   */
  @org.springframework.beans.factory.annotation.Autowired
  public Blocking(FlashVecProperties props) {
    this(props.writes());
  }

  /** As {@link #Blocking(FlashVecProperties)} with only the write settings. */
  public Blocking(FlashVecProperties.Writes writes) {
    if (writes.nice() > 0) {
      int nice = writes.nice();
      ThreadFactory f =
          ThreadPriority.lowering(
              Thread.ofPlatform().name("flashvec-write-", 0).daemon(true).factory(), nice);
      ThreadPoolExecutor pool =
          new ThreadPoolExecutor(
              writes.threads(),
              writes.threads(),
              30,
              TimeUnit.SECONDS,
              new LinkedBlockingQueue<>(),
              f);
      pool.allowCoreThreadTimeOut(true);
      writeExecutor = pool;
      writeScheduler = Schedulers.fromExecutorService(pool, "flashvec-write");
    } else {
      writeExecutor = null;
      writeScheduler = scheduler;
    }
  }

  /** Calls {@code work} off the event loop. */
  public Mono<ResponseEntity<byte[]>> call(Callable<ResponseEntity<byte[]>> work) {
    return Mono.fromCallable(work).subscribeOn(scheduler);
  }

  /**
   * Calls {@code work}, a write request (upsert, delete, payload change: parse the body, apply,
   * wait for the WAL), off the event loop at the write priority ({@code flashvec.writes.nice}): a
   * batch of 100 768-d vectors is ~0.8 MB of JSON, milliseconds of parsing, and at the priority of
   * searches it takes a core from them for that long; a search that must wait for a time slice
   * shows in P99 (ADR 0016).
   */
  public Mono<ResponseEntity<byte[]>> write(Callable<ResponseEntity<byte[]>> work) {
    return Mono.fromCallable(work).subscribeOn(writeScheduler);
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
    if (writeExecutor != null) {
      writeScheduler.dispose();
      writeExecutor.shutdown();
    }
  }
}
