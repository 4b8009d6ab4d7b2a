package io.flashvec.loadgen.bench;

import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.dataset.Distance;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Soak workload: upserts, deletes, searches and compactions at steady rates for hours, against a
 * bounded key space so the collection's size settles and any growth of the server's memory, file
 * descriptors or threads is a leak rather than data.
 *
 * <p>Each stream runs on its own thread, paced open-loop: operation {@code i} is due at {@code i /
 * rate} seconds after the stream's start. A stream more than a second behind (the server stalled)
 * restarts its schedule from now rather than firing the missed operations back to back, so the
 * offered rate stays steady; the skipped operations are counted as {@code lag_resets}.
 *
 * <ul>
 *   <li>upserts: batches of {@code batch} ids cycling through {@code [0, keySpace)}, fresh random
 *       vectors, so every id is rewritten over and over (old versions become deleted rows for
 *       compaction to drop);
 *   <li>deletes: batches of {@code batch} random ids of the key space (the upserts bring them
 *       back);
 *   <li>searches: top-{@code k} of a random vector;
 *   <li>compactions: {@code POST /collections/{name}/compact} every {@code compactEvery}.
 * </ul>
 *
 * Every {@code progressEvery} a CSV line with the cumulative counts and the interval's P99s is
 * appended to {@code progress} (for a sampler that runs beside, e.g. {@code
 * scripts/bench/soak.sh}). Every failed operation is an error; the first {@link #LOGGED_ERRORS} are
 * printed with their time. All randomness comes from {@code seed}.
 */
public final class SoakBench {

  /** Errors printed in full; later ones are only counted. */
  static final int LOGGED_ERRORS = 50;

  /** The progress file's header. */
  public static final String PROGRESS_HEADER =
      "elapsed_s,upserted_points,deleted_points,searches,compactions,errors,"
          + "upsert_p99_ms,delete_p99_ms,search_p99_ms";

  /** What to run; rates are per second, a rate of 0 turns that stream off. */
  public record Config(
      String collection,
      int dim,
      Distance distance,
      int keySpace,
      Duration duration,
      double upsertRate,
      double deleteRate,
      int batch,
      double searchRate,
      int k,
      Duration compactEvery,
      long seed,
      Path progress,
      Duration progressEvery,
      PrintStream out) {
    public Config {
      if (dim < 1 || keySpace < 1 || batch < 1 || k < 1) {
        throw new IllegalArgumentException(
            "dim, key space, batch and k must be positive [dim="
                + dim
                + ", keySpace="
                + keySpace
                + ", batch="
                + batch
                + ", k="
                + k
                + "]");
      }
      if (upsertRate < 0 || deleteRate < 0 || searchRate < 0) {
        throw new IllegalArgumentException(
            "rates must not be negative [upsert="
                + upsertRate
                + ", delete="
                + deleteRate
                + ", search="
                + searchRate
                + "]");
      }
      if (progressEvery.isZero() || progressEvery.isNegative()) {
        throw new IllegalArgumentException(
            "progress interval must be positive [progressEvery=" + progressEvery + "]");
      }
    }
  }

  private final VectorDbClient client;
  private final Config cfg;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicLong errors = new AtomicLong();
  private final long t0 = System.nanoTime();

  /** Creates the run; the client is not closed by this class. */
  public SoakBench(VectorDbClient client, Config cfg) {
    this.client = client;
    this.cfg = cfg;
  }

  /** Stops the streams early (e.g. from a shutdown hook); {@link #run} then returns. */
  public void stop() {
    stop.set(true);
  }

  /**
   * Creates the collection if it does not exist, fills the key space once, runs the streams for the
   * configured duration and returns the summary (JSON-ready).
   */
  public Map<String, Object> run() {
    cfg.out.printf(
        Locale.ROOT,
        "soak: seed=%d collection=%s dim=%d key_space=%d duration=%s%n",
        cfg.seed,
        cfg.collection,
        cfg.dim,
        cfg.keySpace,
        cfg.duration);
    if (!client.collectionExists(cfg.collection)) {
      client.createCollection(cfg.collection, cfg.dim, cfg.distance, null, Map.of());
    }
    fill();
    writeProgress(PROGRESS_HEADER, false);
    Upserts upserts = new Upserts();
    Deletes deletes = new Deletes();
    Searches searches = new Searches();
    Compactions compactions = new Compactions();
    List<Stream> streams = new ArrayList<>();
    if (cfg.upsertRate > 0) {
      streams.add(upserts);
    }
    if (cfg.deleteRate > 0) {
      streams.add(deletes);
    }
    if (cfg.searchRate > 0) {
      streams.add(searches);
    }
    if (!cfg.compactEvery.isZero()) {
      streams.add(compactions);
    }
    List<Thread> threads = new ArrayList<>();
    long start = System.nanoTime();
    for (Stream s : streams) {
      Thread t = new Thread(s, "soak-" + s.name);
      t.setDaemon(true);
      t.start();
      threads.add(t);
    }
    long end = start + cfg.duration.toNanos();
    long every = cfg.progressEvery.toNanos();
    for (long next = start + every; !stop.get(); next += every) {
      sleepUntil(Math.min(next, end));
      progress(start, upserts, deletes, searches, compactions);
      if (System.nanoTime() >= end) {
        break;
      }
    }
    stop.set(true);
    for (Thread t : threads) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("seed", cfg.seed);
    m.put("collection", cfg.collection);
    m.put("dim", cfg.dim);
    m.put("key_space", cfg.keySpace);
    m.put("seconds", Math.round(seconds * 10) / 10.0);
    m.put("errors", errors.get());
    for (Stream s : streams) {
      m.put(s.name, s.summary(seconds));
    }
    return m;
  }

  /** Total failed operations so far. */
  public long errors() {
    return errors.get();
  }

  private void fill() {
    int chunk = 500;
    SplittableRandom r = new SplittableRandom(cfg.seed * 31);
    for (int from = 0; from < cfg.keySpace; from += chunk) {
      int n = Math.min(chunk, cfg.keySpace - from);
      long[] ids = new long[n];
      float[][] vs = new float[n][];
      for (int i = 0; i < n; i++) {
        ids[i] = from + i;
        vs[i] = randomVector(r, cfg.dim);
      }
      client.upsert(cfg.collection, ids, vs);
    }
    cfg.out.printf(Locale.ROOT, "soak: filled %d points%n", cfg.keySpace);
  }

  private void progress(long start, Upserts u, Deletes d, Searches s, Compactions c) {
    writeProgress(
        String.format(
            Locale.ROOT,
            "%.1f,%d,%d,%d,%d,%d,%.2f,%.2f,%.2f",
            (System.nanoTime() - start) / 1e9,
            u.done.get() * cfg.batch,
            d.done.get() * cfg.batch,
            s.done.get(),
            c.done.get(),
            errors.get(),
            u.intervalP99Ms(),
            d.intervalP99Ms(),
            s.intervalP99Ms()),
        true);
  }

  private void writeProgress(String line, boolean append) {
    if (cfg.progress == null) {
      return;
    }
    try {
      Files.writeString(
          cfg.progress,
          line + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.WRITE,
          append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write progress [file=" + cfg.progress + "]", e);
    }
  }

  private void sleepUntil(long deadline) {
    long wait;
    while (!stop.get() && (wait = deadline - System.nanoTime()) > 0) {
      try {
        Thread.sleep(Math.min(100, Math.max(1, wait / 1_000_000)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        stop.set(true);
      }
    }
  }

  static float[] randomVector(SplittableRandom r, int dim) {
    float[] v = new float[dim];
    double norm = 0;
    for (int i = 0; i < dim; i++) {
      // Box-Muller would do too; a uniform cube is enough to spread points for a soak
      v[i] = (float) (r.nextDouble() * 2 - 1);
      norm += v[i] * v[i];
    }
    float inv = (float) (1 / Math.sqrt(Math.max(norm, 1e-12)));
    for (int i = 0; i < dim; i++) {
      v[i] *= inv;
    }
    return v;
  }

  /** One paced stream of operations. */
  private abstract class Stream implements Runnable {
    final String name;
    final double rate;
    final AtomicLong done = new AtomicLong();
    final Recorder interval = new Recorder(LatencySummary.MAX_TRACKABLE_NANOS, 3);
    final Histogram total = LatencySummary.newHistogram();
    long failed;
    long lagResets;

    /** The stream's own random source (seeded from the run's seed), or null if it needs none. */
    final SplittableRandom r;

    Stream(String name, double rate, SplittableRandom r) {
      this.name = name;
      this.rate = rate;
      this.r = r;
    }

    /** Runs operation {@code i}; throws on failure. */
    abstract void op(long i);

    @Override
    public void run() {
      double period = 1e9 / rate;
      long base = System.nanoTime();
      long i0 = 0;
      for (long i = 0; !stop.get(); i++) {
        long due = base + (long) ((i - i0) * period);
        long now = System.nanoTime();
        if (now - due > 1_000_000_000L) {
          lagResets += (long) ((now - due) / period);
          base = now;
          i0 = i;
          due = now;
        }
        sleepUntil(due);
        if (stop.get()) {
          break;
        }
        long s = System.nanoTime();
        try {
          op(i);
          long ns =
              Math.max(1, Math.min(System.nanoTime() - s, LatencySummary.MAX_TRACKABLE_NANOS));
          interval.recordValue(ns);
          synchronized (total) {
            total.recordValue(ns);
          }
          done.incrementAndGet();
        } catch (RuntimeException e) {
          failed++;
          long n = errors.incrementAndGet();
          if (n <= LOGGED_ERRORS) {
            cfg.out.printf(
                Locale.ROOT,
                "soak: error %d at %.1f s in %s: %s%n",
                n,
                (System.nanoTime() - t0) / 1e9,
                name,
                e.getMessage());
          }
        }
      }
    }

    double intervalP99Ms() {
      Histogram h = interval.getIntervalHistogram();
      return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(99) / 1e6;
    }

    Map<String, Object> summary(double seconds) {
      LatencySummary lat;
      synchronized (total) {
        lat = LatencySummary.of(total);
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("target_rate", rate);
      m.put("operations", done.get());
      m.put(
          "achieved_rate", seconds > 0 ? Math.round(done.get() / seconds * 10000) / 10000.0 : 0.0);
      m.put("errors", failed);
      m.put("lag_resets", lagResets);
      m.put("p50_ms", lat.p50Ms());
      m.put("p99_ms", lat.p99Ms());
      m.put("max_ms", lat.maxMs());
      return m;
    }
  }

  private final class Upserts extends Stream {
    Upserts() {
      super("upserts", cfg.upsertRate / cfg.batch, new SplittableRandom(cfg.seed * 31 + 1));
    }

    @Override
    void op(long i) {
      long[] ids = new long[cfg.batch];
      float[][] vs = new float[cfg.batch][];
      for (int j = 0; j < ids.length; j++) {
        ids[j] = Math.floorMod(i * cfg.batch + j, (long) cfg.keySpace);
        vs[j] = randomVector(r, cfg.dim);
      }
      client.upsert(cfg.collection, ids, vs);
    }
  }

  private final class Deletes extends Stream {
    Deletes() {
      super("deletes", cfg.deleteRate / cfg.batch, new SplittableRandom(cfg.seed * 31 + 2));
    }

    @Override
    void op(long i) {
      long[] ids = new long[cfg.batch];
      for (int j = 0; j < ids.length; j++) {
        ids[j] = r.nextInt(cfg.keySpace);
      }
      client.delete(cfg.collection, ids);
    }
  }

  private final class Searches extends Stream {
    Searches() {
      super("searches", cfg.searchRate, new SplittableRandom(cfg.seed * 31 + 3));
    }

    @Override
    void op(long i) {
      long[] ids =
          client.search(cfg.collection, client.prepare(randomVector(r, cfg.dim)), cfg.k, null);
      for (long id : ids) {
        if (id < 0 || id >= cfg.keySpace) {
          throw new IllegalStateException(
              "search returned an id outside the key space [id="
                  + id
                  + ", keySpace="
                  + cfg.keySpace
                  + "]");
        }
      }
    }
  }

  private final class Compactions extends Stream {
    Compactions() {
      super("compactions", 1e9 / cfg.compactEvery.toNanos(), null);
    }

    @Override
    void op(long i) {
      client.compact(cfg.collection);
    }
  }
}
