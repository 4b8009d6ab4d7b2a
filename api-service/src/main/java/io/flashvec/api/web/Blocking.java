package io.flashvec.api.web;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.node.EngineThreads;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

/**
 * Runs blocking engine calls (WAL fsync, exact scans) on virtual threads so that the Netty event
 * loop never blocks. Virtual threads suit the mix: writers park in fsync while the two carrier
 * threads keep scoring vectors.
 *
 * <p>{@link #answer} and {@link #answerWrite} also time the request and answer the work's result in
 * Qdrant's envelope ({@link Json#ok}), so that an endpoint states only its own work.
 *
 * <p>A request that is cancelled (its client went away) never interrupts the thread that runs it:
 * work that has started runs to its end, work that has not is skipped.
 */
@Component
public class Blocking implements AutoCloseable {

  private final ExecutorService executor =
      Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("flashvec-req-", 0).factory());
  private final Scheduler scheduler = uninterruptible(executor);
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
          EngineThreads.lowering(
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
      writeScheduler = uninterruptible(pool);
    } else {
      writeExecutor = null;
      writeScheduler = scheduler;
    }
  }

  /**
   * A scheduler on {@code executor} whose cancelled tasks are skipped if they have not started and
   * never interrupted if they have. Reactor's scheduler for an {@code ExecutorService} cancels a
   * task with {@code Future.cancel(true)}, so a request whose client hung up or timed out (or one
   * Reactor Netty disposes when a rejected request shares its connection) interrupted the thread
   * running it, and an interrupt closes the FileChannel that thread was using for everyone: the
   * shard's WAL refused every later write until a restart. Handing Reactor a plain {@code Executor}
   * gives its {@code ExecutorScheduler}, which does not interrupt; a write that started runs to its
   * end, as Qdrant applies a write whose client went away.
   */
  static Scheduler uninterruptible(ExecutorService executor) {
    java.util.concurrent.Executor plain = executor::execute; // not an ExecutorService
    return Schedulers.fromExecutor(plain);
  }

  /**
   * The key in a request's Reactor context of its Qdrant {@code timeout} (a {@link
   * java.time.Duration}), which {@link ReadParamsFilter} puts there.
   */
  public static final String TIMEOUT = "flashvec.request-timeout";

  /**
   * {@code work} bounded by the request's {@code timeout} when it has one: when the time is up the
   * request fails with 408 ({@link RequestTimeoutException}), as Qdrant's does. The work itself is
   * not interrupted (see {@link #uninterruptible}): it runs to its end and its answer is dropped,
   * so a write that timed out may still be applied, as in Qdrant.
   */
  static Mono<ResponseEntity<byte[]>> bounded(Mono<ResponseEntity<byte[]>> work) {
    return Mono.deferContextual(
        ctx -> {
          java.time.Duration t = ctx.getOrDefault(TIMEOUT, null);
          return t == null
              ? work
              : work.timeout(t, Mono.error(() -> new RequestTimeoutException(t)));
        });
  }

  /**
   * {@code work} with the errors Reactor treats as fatal to the JVM, but which end only this
   * request (a {@link StackOverflowError}, a {@link LinkageError} such as a class that cannot
   * load), turned into an exception: Reactor rethrows fatal errors on the worker thread and never
   * completes the request, which would hang its client. The error handler answers it as an internal
   * error (500). An {@link OutOfMemoryError} stays fatal: the server exits on it ({@code
   * -XX:+ExitOnOutOfMemoryError}).
   */
  static <T> Callable<T> contained(Callable<T> work) {
    return () -> {
      try {
        return work.call();
      } catch (StackOverflowError | LinkageError e) {
        throw new IllegalStateException("request failed with " + e, e);
      }
    };
  }

  /** Calls {@code work} off the event loop, for answers other than JSON (a file to stream). */
  public <T> Mono<T> supply(Callable<T> work) {
    return Mono.fromCallable(contained(work)).subscribeOn(scheduler);
  }

  /** Calls {@code work} off the event loop. */
  public Mono<ResponseEntity<byte[]>> call(Callable<ResponseEntity<byte[]>> work) {
    return bounded(Mono.fromCallable(contained(work)).subscribeOn(scheduler));
  }

  /**
   * Calls {@code work}, a write request (upsert, delete, payload change: parse the body, apply,
   * wait for the WAL), off the event loop at the write priority ({@code flashvec.writes.nice}): a
   * batch of 100 768-d vectors is ~0.8 MB of JSON, milliseconds of parsing, and at the priority of
   * searches it takes a core from them for that long; a search that must wait for a time slice
   * shows in P99 (ADR 0016).
   */
  public Mono<ResponseEntity<byte[]>> write(Callable<ResponseEntity<byte[]>> work) {
    return bounded(Mono.fromCallable(contained(work)).subscribeOn(writeScheduler));
  }

  /**
   * Calls {@code work} on the calling thread (the Netty event loop) when {@code inline}, else as
   * {@link #call}. Only for work that cannot block: a search of data in memory, which is CPU work
   * of a fraction of a millisecond. The hop to a virtual thread and back costs two thread wake-ups
   * per request; without it a 768-d search at search list 15 ran 3,645–3,844 instead of 2,958–3,052
   * requests/s on 2 cores (2 clients).
   */
  public Mono<ResponseEntity<byte[]>> call(boolean inline, Callable<ResponseEntity<byte[]>> work) {
    return inline ? bounded(Mono.fromCallable(contained(work))) : call(work);
  }

  /** A request's work on its parsed JSON body; its result is answered in Qdrant's envelope. */
  @FunctionalInterface
  public interface BodyWork {
    JsonNode apply(JsonNode body);
  }

  /**
   * Calls {@code work} off the event loop ({@link #call}) and answers its result in Qdrant's
   * envelope, with the time taken since this call.
   */
  public Mono<ResponseEntity<byte[]>> answer(Callable<? extends JsonNode> work) {
    long t0 = System.nanoTime();
    return call(() -> Json.ok(work.call(), t0));
  }

  /**
   * {@link #answer} of {@code work} on a request to collection {@code name}: off the event loop,
   * the name is checked ({@link CollectionNames#validate}), then {@code body} is parsed by {@code
   * parse} ({@link Json#parse} or {@link Json#parseOptional}) and handed to {@code work}.
   */
  public Mono<ResponseEntity<byte[]>> answer(
      String name, byte[] body, Function<byte[], JsonNode> parse, BodyWork work) {
    return answer(() -> onBody(name, body, parse, work));
  }

  /**
   * As {@link #answer(String, byte[], Function, BodyWork)} for a write request with a required body
   * ({@link Json#parse}), at the write priority ({@link #write}).
   */
  public Mono<ResponseEntity<byte[]>> answerWrite(String name, byte[] body, BodyWork work) {
    long t0 = System.nanoTime();
    return write(() -> Json.ok(onBody(name, body, Json::parse, work), t0));
  }

  /**
   * {@link #answerWrite} for a write that waits to be durable (Qdrant's {@code wait=true}): when
   * the request's {@code timeout} passes after the write was applied ({@link
   * io.flashvec.index.collection.Collection#ON_APPLIED}) but before it was durable, the answer is
   * Qdrant's {@code {operation_id, status: wait_timeout}} and the write goes on to be durable. A
   * timeout that passes before the write was applied answers 408, as for any request. {@code work}
   * must apply one write: the operation of a write in several parts would not tell the rest.
   */
  public Mono<ResponseEntity<byte[]>> answerWaitedWrite(String name, byte[] body, BodyWork work) {
    long t0 = System.nanoTime();
    java.util.concurrent.atomic.AtomicLong applied = new java.util.concurrent.atomic.AtomicLong(-1);
    Mono<ResponseEntity<byte[]>> run =
        Mono.fromCallable(
                contained(
                    () ->
                        ScopedValue.where(
                                io.flashvec.index.collection.Collection.ON_APPLIED, applied::set)
                            .call(() -> Json.ok(onBody(name, body, Json::parse, work), t0))))
            .subscribeOn(writeScheduler);
    return Mono.deferContextual(
        ctx -> {
          java.time.Duration t = ctx.getOrDefault(TIMEOUT, null);
          return t == null
              ? run
              : run.timeout(t, Mono.defer(() -> waitTimeout(applied.get(), t, t0)));
        });
  }

  private static Mono<ResponseEntity<byte[]>> waitTimeout(
      long operation, java.time.Duration timeout, long t0) {
    if (operation < 0) {
      return Mono.error(new RequestTimeoutException(timeout));
    }
    tools.jackson.databind.node.ObjectNode o = Json.object();
    o.put("operation_id", operation);
    o.put("status", "wait_timeout");
    return Mono.just(Json.ok(o, t0));
  }

  private static JsonNode onBody(
      String name, byte[] body, Function<byte[], JsonNode> parse, BodyWork work) {
    CollectionNames.validate(name);
    return work.apply(parse.apply(body));
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
