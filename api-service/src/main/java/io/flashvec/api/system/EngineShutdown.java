package io.flashvec.api.system;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The first step of a shutdown (SIGTERM, or the context closing) and its deadline.
 *
 * <p>Spring stops this bean before anything else (highest phase), so at once it cancels every
 * shard's running index build and compaction and starts no new ones: they stop at their next check
 * (about a second of graph building at most), remove their temporary files and run again after the
 * restart, derived from the WAL and the manifests. Meanwhile the web server finishes the requests
 * in flight (graceful, {@code spring.lifecycle.timeout-per-shutdown-phase}); then the context
 * closes the collection service, which syncs and closes every WAL. Each step is logged.
 *
 * <p>A watchdog bounds the whole: if the JVM is still shutting down {@code
 * flashvec.shutdown.grace-period} after the stop began (a stuck device, say), it logs what was
 * still running and halts, rather than being killed by Kubernetes without a word. Acknowledged
 * writes are durable before they are acknowledged (fsync policy {@code always}), so halting loses
 * none of them.
 */
final class EngineShutdown implements SmartLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(EngineShutdown.class);

  private final Supplier<List<String>> stopBackgroundWork;
  private final Duration gracePeriod;
  private volatile boolean running;
  private volatile List<String> cancelled = List.of();

  /**
   * @param stopBackgroundWork cancels the engine's builds and compactions and says what was running
   */
  EngineShutdown(Supplier<List<String>> stopBackgroundWork, Duration gracePeriod) {
    this.stopBackgroundWork = stopBackgroundWork;
    this.gracePeriod = gracePeriod;
  }

  @Override
  public void start() {
    running = true;
  }

  @Override
  public void stop() {
    if (!running) {
      return;
    }
    running = false;
    long t0 = System.nanoTime();
    LOG.info(
        "shutting down: cancelling index builds and compactions, finishing requests in flight,"
            + " then syncing and closing the WALs [gracePeriod={}]",
        gracePeriod);
    startWatchdog(t0);
    List<String> work = stopBackgroundWork.get();
    cancelled = work;
    LOG.info(
        "background work cancelled; it runs again after the restart [work={}]",
        work.isEmpty() ? "none" : String.join("; ", work));
  }

  private void startWatchdog(long t0) {
    Thread.ofPlatform()
        .name("flashvec-shutdown-watchdog")
        .daemon(true)
        .start(
            () -> {
              try {
                Thread.sleep(gracePeriod);
              } catch (InterruptedException e) {
                return;
              }
              if (!jvmShuttingDown()) {
                return; // the context was closed in a running JVM (a test, an embedding): not ours
              }
              LOG.error(
                  "shutdown did not finish within the grace period; halting [gracePeriod={}, millis={}, cancelled={}]",
                  gracePeriod,
                  (System.nanoTime() - t0) / 1_000_000,
                  cancelled);
              Runtime.getRuntime().halt(1);
            });
  }

  /** Whether the JVM is running its shutdown hooks (SIGTERM, {@code System.exit}). */
  static boolean jvmShuttingDown() {
    Thread probe = new Thread(() -> {});
    try {
      Runtime.getRuntime().addShutdownHook(probe);
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException e) {
      return true; // "Shutdown in progress"
    }
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  /** Stops first: before the web server's graceful shutdown (which waits for requests). */
  @Override
  public int getPhase() {
    return Integer.MAX_VALUE;
  }
}
