package io.flashvec.loadgen.bench;

import io.flashvec.loadgen.client.SearchParams;
import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.client.VectorDbClient.PreparedVector;
import io.flashvec.loadgen.dataset.Vectors;
import io.flashvec.loadgen.metrics.MetricsSource;
import io.flashvec.loadgen.report.BenchmarkResult;
import io.flashvec.loadgen.report.SearchPoint;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongUnaryOperator;
import org.HdrHistogram.Histogram;

/**
 * Mixed read/write workload (docs/benchmarks/mixed.md): the same closed-loop query stream is run
 * twice, first alone, then beside an insert stream of {@code insertRate} vectors/s, and the two are
 * compared (QPS, P50, P99 and their ratios).
 *
 * <p>Inserted points get ids {@code n, n+1, ...} and copy base rows ({@code id − n} mod n), so the
 * data distribution stays the same; for recall a returned copy is mapped back to its base row and
 * recall is {@link Recall#atKDistinct} (a row and its copies tie, so an exact answer lists them
 * side by side; each duplicate shrinks the depth compared against). The insert stream is paced
 * open-loop: batch {@code i} is sent at {@code i · batch / rate} seconds after the start (late
 * batches go at once; the achieved rate is reported). The rows it will send are formatted before
 * either run, as the queries are ({@link #MAX_PREPARED_BYTES} at most).
 */
public final class MixedBench {

  /** What to run. */
  public record Config(
      String collection,
      int k,
      int concurrency,
      SearchParams params,
      Duration duration,
      Duration warmup,
      double insertRate,
      int insertBatch,
      boolean keepInserts,
      List<String> metricPrefixes,
      PrintStream out) {}

  /** Both runs, the insert stream's figures and the ratios (with-inserts / queries-only). */
  public record Result(
      SearchPoint queriesOnly, SearchPoint withInserts, Map<String, Object> inserts) {

    /**
     * The JSON-ready map: {@code queries_only}, {@code with_inserts}, {@code inserts}, {@code
     * ratios}.
     */
    public Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queries_only", BenchmarkResult.toMap(queriesOnly));
      m.put("with_inserts", BenchmarkResult.toMap(withInserts));
      m.put("inserts", inserts);
      m.put("ratios", ratios());
      return m;
    }

    /** with-inserts / queries-only for QPS, P50 and P99. */
    public Map<String, Double> ratios() {
      Map<String, Double> r = new LinkedHashMap<>();
      r.put("qps", ratio(withInserts.qps(), queriesOnly.qps()));
      r.put("p50", ratio(withInserts.p50Ms(), queriesOnly.p50Ms()));
      r.put("p99", ratio(withInserts.p99Ms(), queriesOnly.p99Ms()));
      return r;
    }

    private static double ratio(double a, double b) {
      return b == 0 ? Double.NaN : Math.round(a / b * 10000) / 10000.0;
    }
  }

  private final VectorDbClient client;
  private final Config cfg;
  private final MetricsSource metrics;

  /**
   * Creates the run, reading the server metrics from {@code metrics} (summed over its nodes); the
   * client is not closed by this class.
   */
  public MixedBench(VectorDbClient client, Config cfg, MetricsSource metrics) {
    if (cfg.insertRate <= 0 || cfg.insertBatch < 1) {
      throw new IllegalArgumentException(
          "insert rate and batch must be positive [rate="
              + cfg.insertRate
              + ", batch="
              + cfg.insertBatch
              + "]");
    }
    this.client = client;
    this.cfg = cfg;
    this.metrics = metrics;
  }

  /** Runs queries alone, then queries with inserts. */
  public Result run(Vectors base, PreparedVector[] queries, int[][] gt, long firstInsertId) {
    int n = base.size();
    SearchBench search =
        new SearchBench(
            client,
            new SearchBench.Config(
                cfg.collection,
                cfg.k,
                List.of(cfg.concurrency),
                List.of(cfg.params),
                cfg.duration,
                0,
                WarmUp.Policy.fixed(cfg.warmup),
                cfg.metricPrefixes,
                null,
                cfg.out,
                null,
                null),
            metrics);
    LongUnaryOperator mapper = id -> id >= n ? Math.floorMod(id - n, (long) n) : id;
    PreparedVector[] rows = prepareInsertRows(base);
    SearchPoint alone =
        search.runPoint(queries, gt, cfg.concurrency, cfg.params, "queries-only", mapper);

    AtomicBoolean stop = new AtomicBoolean();
    Inserter inserter = new Inserter(base, rows, firstInsertId, stop);
    Thread t = new Thread(inserter, "mixed-inserts");
    t.setDaemon(true);
    t.start();
    SearchPoint mixed;
    try {
      mixed = search.runPoint(queries, gt, cfg.concurrency, cfg.params, "with-inserts", mapper);
    } finally {
      stop.set(true);
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    Map<String, Object> ins = inserter.summary();
    if (!cfg.keepInserts && inserter.vectors > 0) {
      // leave the collection as ingest made it, so later runs compare against the same data
      long[] ids = new long[(int) inserter.vectors];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = firstInsertId + i;
      }
      try {
        for (int from = 0; from < ids.length; from += 10_000) {
          client.delete(
              cfg.collection,
              java.util.Arrays.copyOfRange(ids, from, Math.min(ids.length, from + 10_000)));
        }
        ins.put("deleted_after_run", ids.length);
      } catch (RuntimeException e) {
        ins.put("delete_error", e.getMessage());
      }
    }
    if (cfg.out != null) {
      cfg.out.printf(Locale.ROOT, "inserts %s%n", ins);
    }
    return new Result(alone, mixed, ins);
  }

  /**
   * Most JSON a run prepares for its insert stream, at ~10 bytes per dimension (768-d: ~35k rows,
   * 35 s at 1,000 vectors/s); rows beyond are prepared as they are sent.
   */
  static final long MAX_PREPARED_BYTES = 256L << 20;

  /**
   * The base rows the insert stream will send, {@link VectorDbClient#prepare prepared} before
   * either run, as the queries are: formatting a 768-d batch of 100 as JSON costs the client ~8 ms
   * of CPU, which on a machine shared with the server would be charged to the server's QPS. Enough
   * rows for the paced rate over warm-up and duration, with a tenth to spare.
   */
  private PreparedVector[] prepareInsertRows(Vectors base) {
    double seconds = (cfg.warmup.toMillis() + cfg.duration.toMillis()) / 1000.0;
    long wanted = (long) Math.ceil(cfg.insertRate * seconds * 1.1) + cfg.insertBatch;
    int dim = Math.max(1, base.dim());
    long budget = MAX_PREPARED_BYTES / (10L * dim);
    int count = (int) Math.min(Math.min(wanted, base.size()), budget);
    PreparedVector[] rows = new PreparedVector[count];
    for (int i = 0; i < count; i++) {
      rows[i] = client.prepare(base.get(i));
    }
    return rows;
  }

  /** The paced insert stream; its fields are read after its thread has been joined. */
  private final class Inserter implements Runnable {
    private final Vectors base;
    private final PreparedVector[] rows;
    private final long firstId;
    private final AtomicBoolean stop;
    private final Histogram histogram = LatencySummary.newHistogram();
    private long vectors;
    private long batches;
    private long errors;
    private String firstError;
    private double seconds;

    Inserter(Vectors base, PreparedVector[] rows, long firstId, AtomicBoolean stop) {
      this.base = base;
      this.rows = rows;
      this.firstId = firstId;
      this.stop = stop;
    }

    @Override
    public void run() {
      int n = base.size();
      double secondsPerBatch = cfg.insertBatch / cfg.insertRate;
      long t0 = System.nanoTime();
      long next = firstId;
      for (long i = 0; !stop.get(); i++) {
        long due = t0 + (long) (i * secondsPerBatch * 1e9);
        long wait = due - System.nanoTime();
        while (wait > 0 && !stop.get()) {
          try {
            Thread.sleep(Math.min(50, wait / 1_000_000), (int) Math.min(999_999, wait % 1_000_000));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
          wait = due - System.nanoTime();
        }
        if (stop.get()) {
          break;
        }
        long[] ids = new long[cfg.insertBatch];
        PreparedVector[] vs = new PreparedVector[cfg.insertBatch];
        for (int j = 0; j < ids.length; j++) {
          ids[j] = next + j;
          int row = (int) Math.floorMod(next + j - firstId, (long) n);
          vs[j] = row < rows.length ? rows[row] : client.prepare(base.get(row));
        }
        long s = System.nanoTime();
        try {
          client.upsert(cfg.collection, ids, vs);
          LatencySummary.record(histogram, System.nanoTime() - s);
          vectors += ids.length;
          batches++;
          next += ids.length;
        } catch (RuntimeException e) {
          errors++;
          if (firstError == null) {
            firstError = e.getMessage();
          }
        }
      }
      seconds = (System.nanoTime() - t0) / 1e9;
    }

    Map<String, Object> summary() {
      LatencySummary lat = LatencySummary.of(histogram);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("target_rate", cfg.insertRate);
      m.put("achieved_rate", seconds > 0 ? Math.round(vectors / seconds * 10) / 10.0 : 0.0);
      m.put("batch", cfg.insertBatch);
      m.put("vectors", vectors);
      m.put("batches", batches);
      m.put("errors", errors);
      m.put("first_id", firstId);
      m.put("batch_p50_ms", lat.p50Ms());
      m.put("batch_p99_ms", lat.p99Ms());
      if (firstError != null) {
        m.put("first_error", firstError);
      }
      return m;
    }
  }
}
