package io.flashvec.loadgen.bench;

import io.flashvec.loadgen.client.SearchParams;
import io.flashvec.loadgen.client.ServerException;
import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.client.VectorDbClient.CollectionInfo;
import io.flashvec.loadgen.dataset.Distance;
import io.flashvec.loadgen.dataset.Vectors;
import io.flashvec.loadgen.metrics.MetricSnapshot;
import io.flashvec.loadgen.metrics.PrometheusText;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Bulk ingest: creates the collection if absent, uploads the base vectors (id = row number) in
 * batches from {@code clients} parallel threads that pull the next batch from a shared counter,
 * then measures the time until all points are searchable (the point count reaches n and a probe
 * search answers) and until the collection reports {@code status == "green"} (fully indexed, and on
 * FlashVec {@code indexed_vectors_count == points_count}; progress every 5 s). Times are measured
 * from the start of the upload.
 *
 * <p>A failed batch is retried {@value #ATTEMPTS} times with exponential back-off; batches that
 * still fail are counted as errors and the run goes on. Not reusable: one instance, one run.
 */
public final class IngestBench {
  static final int ATTEMPTS = 4;

  /**
   * What to run.
   *
   * @param indexType sent as {@code index.type} when not null
   * @param recreate delete the collection first if it exists
   * @param indexTimeout how long to wait for {@code green}; zero = do not wait
   */
  public record Config(
      String collection,
      Distance distance,
      String indexType,
      Map<String, String> indexParams,
      int batch,
      int clients,
      boolean recreate,
      Duration indexTimeout,
      PrintStream progress,
      PrintStream out) {}

  /**
   * What happened; seconds are NaN when not reached. {@code timeline} holds (seconds since the
   * start of the upload, vectors uploaded so far) about once a second during the upload, from (0,
   * 0) to its end.
   */
  public record Result(
      int n,
      int dim,
      int batch,
      int clients,
      boolean created,
      long uploaded,
      long failedBatches,
      double uploadSeconds,
      double vectorsPerSecond,
      double searchableSeconds,
      double indexedSeconds,
      String finalStatus,
      LatencySummary batchLatency,
      Map<String, Double> server,
      List<double[]> timeline) {

    /** The result as a JSON-ready map with snake_case keys. */
    public Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("n", n);
      m.put("dim", dim);
      m.put("batch", batch);
      m.put("clients", clients);
      m.put("created", created);
      m.put("uploaded", uploaded);
      m.put("failed_batches", failedBatches);
      m.put("upload_seconds", nanToNull(uploadSeconds));
      m.put("vectors_per_second", nanToNull(vectorsPerSecond));
      m.put("searchable_seconds", nanToNull(searchableSeconds));
      m.put("indexed_seconds", nanToNull(indexedSeconds));
      m.put("final_status", finalStatus);
      m.put("batch_p50_ms", batchLatency.p50Ms());
      m.put("batch_p99_ms", batchLatency.p99Ms());
      m.put("batch_max_ms", batchLatency.maxMs());
      long raw = (long) n * dim * Float.BYTES;
      m.put("raw_vector_bytes", raw);
      double written = 0;
      for (var e : MetricSnapshot.sumAllByName(server).entrySet()) {
        String name = e.getKey();
        if (name.contains("bytes") && (name.contains("written") || name.contains("appended"))) {
          written += e.getValue();
        }
      }
      if (written > 0 && raw > 0) {
        // bytes the server reports writing per byte of vectors ingested
        m.put("write_amplification", Math.round(written / raw * 1000) / 1000.0);
      }
      m.put("server", server);
      List<List<Double>> t = new ArrayList<>();
      for (double[] p : timeline) {
        t.add(List.of(Math.round(p[0] * 1000) / 1000.0, p[1]));
      }
      m.put("timeline", t);
      return m;
    }

    private static Object nanToNull(double v) {
      return Double.isNaN(v) ? null : Math.round(v * 1000) / 1000.0;
    }
  }

  private final VectorDbClient client;
  private final Config cfg;

  /** Creates the run; the client is not closed by this class. */
  public IngestBench(VectorDbClient client, Config cfg) {
    if (cfg.batch < 1 || cfg.clients < 1) {
      throw new IllegalArgumentException(
          "batch and clients must be positive [batch="
              + cfg.batch
              + ", clients="
              + cfg.clients
              + "]");
    }
    this.client = client;
    this.cfg = cfg;
  }

  /** Runs the ingest of {@code base}. */
  public Result run(Vectors base) {
    return run(base, 0, base.size());
  }

  /**
   * Runs the ingest of rows {@code [first, end)} of {@code base}, each with its row number as id (a
   * part of a dataset beside another part uploaded earlier, keeping the ground truth valid).
   */
  public Result run(Vectors base, int first, int end) {
    if (first < 0 || end > base.size() || first > end) {
      throw new IllegalArgumentException(
          "rows out of range [rows=" + first + ":" + end + ", base=" + base.size() + "]");
    }
    int n = end - first;
    int dim = base.dim();
    MetricSnapshot before = scrape();
    boolean exists = client.collectionExists(cfg.collection);
    if (exists && cfg.recreate) {
      client.deleteCollection(cfg.collection);
      exists = false;
    }
    if (!exists) {
      client.createCollection(cfg.collection, dim, cfg.distance, cfg.indexType, cfg.indexParams);
    }
    log(
        "collection %s %s [dim=%d, distance=%s, index=%s]",
        cfg.collection,
        exists ? "exists, upserting into it" : "created",
        dim,
        cfg.distance.apiName(),
        cfg.indexType == null ? "server default" : cfg.indexType);

    int batches = (n + cfg.batch - 1) / cfg.batch;
    AtomicInteger nextBatch = new AtomicInteger();
    AtomicLong uploaded = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    List<Histogram> hists = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    long t0 = System.nanoTime();
    List<double[]> timeline = new ArrayList<>();
    timeline.add(new double[] {0, 0});
    long lastSample = t0;
    try (ProgressBar bar = new ProgressBar("ingest", n, cfg.progress)) {
      for (int c = 0; c < cfg.clients; c++) {
        Histogram h = LatencySummary.newHistogram();
        hists.add(h);
        Thread t =
            new Thread(
                () -> {
                  for (int b; (b = nextBatch.getAndIncrement()) < batches; ) {
                    int from = first + b * cfg.batch;
                    int to = Math.min(end, from + cfg.batch);
                    long[] ids = new long[to - from];
                    float[][] vs = new float[to - from][];
                    for (int i = from; i < to; i++) {
                      ids[i - from] = i;
                      vs[i - from] = base.get(i);
                    }
                    long s = System.nanoTime();
                    if (upsertWithRetry(ids, vs)) {
                      LatencySummary.record(h, System.nanoTime() - s);
                      uploaded.addAndGet(to - from);
                    } else {
                      failed.incrementAndGet();
                    }
                    bar.add(to - from);
                  }
                },
                "ingest-" + c);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        while (!join(t, TIMELINE_NANOS)) {
          long now = System.nanoTime();
          if (now - lastSample >= TIMELINE_NANOS) {
            timeline.add(new double[] {(now - t0) / 1e9, uploaded.get()});
            lastSample = now;
          }
        }
      }
    }
    double uploadSeconds = (System.nanoTime() - t0) / 1e9;
    timeline.add(new double[] {uploadSeconds, uploaded.get()});
    Histogram all = LatencySummary.newHistogram();
    hists.forEach(all::add);
    double rate = uploaded.get() / Math.max(1e-9, uploadSeconds);
    log(
        "uploaded %d vectors in %.2f s: %.0f vectors/s [batch=%d, clients=%d, failedBatches=%d]",
        uploaded.get(), uploadSeconds, rate, cfg.batch, cfg.clients, failed.get());

    double searchable = waitSearchable(base, first, end, t0);
    log("searchable after %.2f s", searchable);
    double indexed = Double.NaN;
    String status = "unknown";
    if (!cfg.indexTimeout.isZero()) {
      long deadline = System.nanoTime() + cfg.indexTimeout.toNanos();
      long nextProgress = System.nanoTime() + PROGRESS_NANOS;
      long sleep = 100;
      while (true) {
        VectorDbClient.CollectionInfo info = null;
        try {
          info = client.collectionInfo(cfg.collection);
          status = info.status();
        } catch (RuntimeException e) {
          status = "error: " + e.getMessage();
        }
        if (info != null && info.fullyIndexed()) {
          indexed = (System.nanoTime() - t0) / 1e9;
          break;
        }
        if (System.nanoTime() > deadline) {
          break;
        }
        if (System.nanoTime() - nextProgress >= 0) {
          nextProgress += PROGRESS_NANOS;
          String running = client.runningOptimizations(cfg.collection);
          log(
              (info == null || info.indexedCount() < 0
                      ? "indexing: status=%s"
                      : "indexing: %3$d/%2$d points indexed, status=%1$s")
                  + (running == null ? "" : " [running: %4$s]"),
              status,
              info == null ? 0 : info.pointsCount(),
              info == null ? 0 : info.indexedCount(),
              running);
        }
        sleep(sleep);
        sleep = Math.min(1000, sleep * 2);
      }
      log(
          Double.isNaN(indexed)
              ? "not fully indexed within %s [status=" + status + "]"
              : "fully indexed (green) after %.2f s",
          Double.isNaN(indexed) ? cfg.indexTimeout : indexed);
    }
    Map<String, Double> server =
        MetricSnapshot.deltas(before, scrape(), List.of("flashvec_", "process_cpu"));
    return new Result(
        n,
        dim,
        cfg.batch,
        cfg.clients,
        !exists,
        uploaded.get(),
        failed.get(),
        uploadSeconds,
        rate,
        searchable,
        indexed,
        status,
        LatencySummary.of(all),
        server,
        timeline);
  }

  private MetricSnapshot scrape() {
    String text = client.metricsText();
    return text == null ? MetricSnapshot.EMPTY : PrometheusText.parse(text);
  }

  private boolean upsertWithRetry(long[] ids, float[][] vectors) {
    long backoff = 200;
    for (int attempt = 1; ; attempt++) {
      try {
        client.upsert(cfg.collection, ids, vectors);
        return true;
      } catch (ServerException | UncheckedIOException e) {
        boolean retryable =
            !(e instanceof ServerException se)
                || se.status() >= 500
                || se.status() == 429
                || se.status() == 0;
        if (!retryable || attempt >= ATTEMPTS) {
          log("\nbatch failed [firstId=%d, attempts=%d]: %s", ids[0], attempt, e.getMessage());
          return false;
        }
        sleep(backoff);
        backoff *= 2;
      }
    }
  }

  /**
   * Polls until the server counts at least the uploaded rows {@code [first, end)} and a probe
   * search (the last of them) answers; seconds since {@code t0}, or NaN after 10 minutes.
   */
  private double waitSearchable(Vectors base, int first, int end, long t0) {
    if (end == first) {
      return 0;
    }
    VectorDbClient.PreparedVector probe = client.prepare(base.get(end - 1));
    long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
    long sleep = 20;
    while (System.nanoTime() < deadline) {
      try {
        CollectionInfo info = client.collectionInfo(cfg.collection);
        boolean counted = info.pointsCount() < 0 || info.pointsCount() >= end - first;
        if (counted && client.search(cfg.collection, probe, 1, SearchParams.DEFAULTS).length > 0) {
          return (System.nanoTime() - t0) / 1e9;
        }
      } catch (RuntimeException e) {
        // not ready yet
      }
      sleep(sleep);
      sleep = Math.min(500, sleep * 2);
    }
    return Double.NaN;
  }

  /** How often the wait for green prints its progress. */
  private static final long PROGRESS_NANOS = 5_000_000_000L;

  private void log(String fmt, Object... args) {
    if (cfg.out != null) {
      cfg.out.printf(Locale.ROOT, fmt + "%n", args);
    }
  }

  /** How often the upload's progress is added to the timeline. */
  private static final long TIMELINE_NANOS = 1_000_000_000L;

  /** Waits up to {@code nanos} for {@code t}; true when it has ended. */
  private static boolean join(Thread t, long nanos) {
    try {
      return t.join(Duration.ofNanos(nanos));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + t.getName(), e);
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
