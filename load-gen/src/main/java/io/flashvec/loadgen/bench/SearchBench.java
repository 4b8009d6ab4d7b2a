package io.flashvec.loadgen.bench;

import io.flashvec.loadgen.client.SearchParams;
import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.client.VectorDbClient.PreparedVector;
import io.flashvec.loadgen.metrics.BlockDevice;
import io.flashvec.loadgen.metrics.MetricSnapshot;
import io.flashvec.loadgen.metrics.MetricsSource;
import io.flashvec.loadgen.metrics.PointMetrics;
import io.flashvec.loadgen.metrics.ProcessIo;
import io.flashvec.loadgen.report.SearchPoint;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongUnaryOperator;
import org.HdrHistogram.Histogram;

/**
 * Closed-loop search sweep: for each (search params, concurrency) point, {@code C} client threads
 * each keep exactly one request in flight, cycling through the query set from query 0, for a
 * duration or until a query count is reached. Per point it reports QPS, latency percentiles
 * (HdrHistogram, recorded in ns), recall@k against ground truth, errors, and the deltas of the
 * server's Prometheus metrics scraped just before and just after the point — summed over the nodes
 * when the {@link MetricsSource} has several (a cluster), with per-node figures beside.
 *
 * <p>With a {@link BlockDevice}, the device's counters are read just before and just after each
 * measured window too, and the point carries the device's reads/s, MB/s and 4 KiB pages per query
 * beside the server's own pages and bytes per query ({@link BlockDevice#derive}). The device counts
 * every process's reads, not only the server's.
 *
 * <p>Each point is first warmed up, unmeasured, until its throughput is steady ({@link WarmUp}).
 * Recall is always the mean over the whole query set, each query counted once: a point bounded by
 * time or by a query count that did not reach every query runs the missing ones once after its
 * measured window, outside its timings, so that two points with the same settings report their
 * recall over the same queries. Inside a point a single progress line (queries done, of how many,
 * current QPS) is redrawn on {@link Config#progress}.
 *
 * <p>QPS is successful queries divided by the wall-clock time from the start signal until the last
 * client stopped. One instance runs one sweep at a time; client threads are created per point and
 * joined before the point returns.
 */
public final class SearchBench {

  /**
   * What to run.
   *
   * @param duration per point when {@code queriesPerPoint} is 0
   * @param queriesPerPoint stop after this many queries (0 = use duration)
   * @param warmup how to warm each point up, unmeasured, before it is measured ({@link
   *     WarmUp.Policy#NONE}: not at all)
   * @param metricPrefixes which server metrics to report (name prefixes)
   * @param beforePoint run before each measured point, after its warm-up (e.g. drop the page cache
   *     for a cold run); may be null
   * @param beforeQuery run by a client before each measured query, outside its latency (e.g. evict
   *     the index for a search from a cold cache every time); may be null
   * @param progress where a single progress line inside each point is redrawn (queries done, of how
   *     many, current QPS); null draws none
   */
  public record Config(
      String collection,
      int k,
      List<Integer> concurrency,
      List<SearchParams> params,
      Duration duration,
      long queriesPerPoint,
      WarmUp.Policy warmup,
      List<String> metricPrefixes,
      Runnable beforePoint,
      PrintStream out,
      Runnable beforeQuery,
      PrintStream progress) {}

  /** The id mapper of a plain search: ids are base rows, recall is {@link Recall#atK}. */
  public static final LongUnaryOperator IDENTITY = id -> id;

  private final VectorDbClient client;
  private final Config cfg;
  private final MetricsSource metrics;
  private BlockDevice device;
  private final double referenceIops;
  private ProcessIo process;

  /**
   * Creates a sweep over {@code client} that reads the server metrics from {@code metrics} (e.g.
   * every node of a cluster, summed); the client is not closed by this class.
   */
  public SearchBench(VectorDbClient client, Config cfg, MetricsSource metrics) {
    this(client, cfg, metrics, null, Double.NaN, null);
  }

  /**
   * Creates a sweep that also samples {@code device} (null: none) around each measured window and
   * gives its reads/s as a share of {@code referenceIops} (the disk's 4 KiB random-read IOPS at
   * queue depth 32; NaN: not measured); with {@code process} (null: none, needs a device) the
   * server process's own storage reads beside the device's.
   */
  public SearchBench(
      VectorDbClient client,
      Config cfg,
      MetricsSource metrics,
      BlockDevice device,
      double referenceIops,
      ProcessIo process) {
    if (process != null && device == null) {
      throw new IllegalArgumentException(
          "a server process's reads are reported beside a device's [pid=" + process.pid() + "]");
    }
    this.device = device;
    this.referenceIops = referenceIops;
    this.process = process;
    this.client = client;
    this.cfg = cfg;
    this.metrics = metrics;
    if (cfg.duration.isZero() && cfg.queriesPerPoint <= 0) {
      throw new IllegalArgumentException("need a duration or a query count per point");
    }
  }

  /** Prepares query vectors once (serialisation off the measured path). */
  public static PreparedVector[] prepare(VectorDbClient client, float[][] queries) {
    PreparedVector[] out = new PreparedVector[queries.length];
    for (int i = 0; i < queries.length; i++) {
      out[i] = client.prepare(queries[i]);
    }
    return out;
  }

  /** Runs all points: params outer, concurrency inner. {@code gt} may be null (no recall). */
  public List<SearchPoint> run(PreparedVector[] queries, int[][] gt) {
    List<SearchPoint> points = new ArrayList<>();
    for (SearchParams p : cfg.params) {
      for (int c : cfg.concurrency) {
        points.add(runPoint(queries, gt, c, p, null, IDENTITY));
      }
    }
    return points;
  }

  /**
   * Runs one point.
   *
   * @param idMapper maps returned ids before recall is computed (the mixed workload maps copies of
   *     base rows back to their row)
   */
  public SearchPoint runPoint(
      PreparedVector[] queries,
      int[][] gt,
      int concurrency,
      SearchParams params,
      String label,
      LongUnaryOperator idMapper) {
    if (queries.length == 0) {
      throw new IllegalArgumentException("no queries [collection=" + cfg.collection + "]");
    }
    if (gt != null && gt.length > 0 && gt[0].length < cfg.k) {
      throw new IllegalArgumentException(
          "ground truth is shallower than k [depth=" + gt[0].length + ", k=" + cfg.k + "]");
    }
    String what =
        String.format(
            Locale.ROOT,
            "%s c=%d %s",
            label == null ? "search" : label,
            concurrency,
            params.label());
    WarmUp warm = new WarmUp(cfg.warmup);
    if (cfg.warmup.enabled()) {
      while (true) {
        Outcome w =
            drive(
                queries,
                null,
                null,
                concurrency,
                params,
                cfg.warmup.window(),
                0,
                idMapper,
                null,
                warm.windowQps().isEmpty()
                    ? what + " warm-up"
                    : String.format(
                        Locale.ROOT,
                        "%s warm-up %.0f s (last window %.0f QPS)",
                        what,
                        warm.seconds(),
                        warm.windowQps().getLast()));
        if (warm.add(w.seconds, w.ok + w.errors)) {
          break;
        }
      }
      if (!warm.stable() && cfg.out != null) {
        cfg.out.printf(
            Locale.ROOT,
            "%s: QPS not steady after the %.1f s warm-up cap (windows: %s)%n",
            what,
            warm.seconds(),
            warm.windowQps().stream().map(q -> String.format(Locale.ROOT, "%.0f", q)).toList());
      }
    }
    if (cfg.beforePoint != null) {
      cfg.beforePoint.run();
    }
    Map<String, MetricSnapshot> before = metrics.scrape();
    BlockDevice.Sample deviceBefore = sampleDevice();
    ProcessIo.Sample processBefore = deviceBefore == null ? null : sampleProcess();
    double[] perQuery = gt == null ? null : new double[queries.length];
    if (perQuery != null) {
      Arrays.fill(perQuery, Double.NaN);
    }
    Outcome o =
        drive(
            queries,
            gt,
            perQuery,
            concurrency,
            params,
            cfg.duration,
            cfg.queriesPerPoint,
            idMapper,
            cfg.beforeQuery,
            what);
    ProcessIo.Sample processAfter = processBefore == null ? null : sampleProcess();
    BlockDevice.Sample deviceAfter = deviceBefore == null ? null : sampleDevice();
    Map<String, MetricSnapshot> after = metrics.scrape();
    long extra =
        perQuery == null
            ? 0
            : completeRecall(queries, gt, perQuery, concurrency, params, idMapper, what);
    PointMetrics server = PointMetrics.of(before, after, cfg.metricPrefixes, o.ok, o.seconds);
    LatencySummary lat = LatencySummary.of(o.histogram);
    double qps = o.seconds > 0 ? o.ok / o.seconds : 0;
    long recallQueries = 0;
    double recallSum = 0;
    if (perQuery != null) {
      for (double r : perQuery) {
        if (!Double.isNaN(r)) {
          recallSum += r;
          recallQueries++;
        }
      }
    }
    double recall = recallQueries == 0 ? Double.NaN : recallSum / recallQueries;
    Map<String, Double> dev =
        deviceAfter == null
            ? Map.of()
            : BlockDevice.derive(deviceBefore, deviceAfter, o.ok, server.io(), referenceIops);
    if (!dev.isEmpty() && processAfter != null) {
      dev = new LinkedHashMap<>(dev);
      dev.putAll(ProcessIo.derive(processBefore, processAfter, o.ok, server.io()));
    }
    SearchPoint point =
        new SearchPoint(
            label,
            concurrency,
            cfg.k,
            params.asMap(),
            o.ok,
            o.errors,
            o.seconds,
            qps,
            lat.p50Ms(),
            lat.p95Ms(),
            lat.p99Ms(),
            lat.p999Ms(),
            lat.maxMs(),
            lat.meanMs(),
            recall,
            server.deltas(),
            server.gauges(),
            server.io(),
            server.nodes(),
            dev,
            new SearchPoint.Quality(
                recallQueries,
                extra,
                warm.seconds(),
                cfg.warmup.enabled() ? warm.stable() : null,
                WarmUp.variation(o.windowQps)));
    if (cfg.out != null) {
      cfg.out.printf(
          Locale.ROOT,
          "%s c=%-3d %-16s qps=%9.1f p50=%7.2fms p95=%7.2fms p99=%7.2fms max=%7.2fms"
              + " recall@%d=%s%s errors=%d%s%n",
          label == null ? "search" : label,
          concurrency,
          params.label(),
          qps,
          lat.p50Ms(),
          lat.p95Ms(),
          lat.p99Ms(),
          lat.maxMs(),
          cfg.k,
          Double.isNaN(recall) ? "n/a" : String.format(Locale.ROOT, "%.4f", recall),
          extra == 0
              ? ""
              : String.format(Locale.ROOT, " (%d queries run after the window for recall)", extra),
          o.errors,
          o.firstError == null ? "" : " first error: " + o.firstError);
      if (!server.nodes().isEmpty()) {
        cfg.out.println(workLine(server));
      }
      if (!dev.isEmpty()) {
        cfg.out.println(deviceLine(device.name(), dev));
      }
    }
    return point;
  }

  /**
   * One line of the work per query summed over the nodes and per node: distance computations, pages
   * read and CPU milliseconds.
   */
  static String workLine(PointMetrics m) {
    StringBuilder sb =
        new StringBuilder("  per query over ").append(m.nodes().size()).append(" nodes: ");
    sb.append(figures(m.io()));
    for (var e : m.nodes().entrySet()) {
      sb.append(" | ").append(e.getKey()).append(' ').append(figures(e.getValue()));
    }
    return sb.toString();
  }

  /**
   * One line of the device's figures beside the server's own: reads/s, MB/s, busy fraction, 4 KiB
   * pages and bytes per query of the device, then of the server, and their ratio.
   */
  static String deviceLine(String name, Map<String, Double> d) {
    Double share = d.get("reads_of_reference_iops");
    StringBuilder sb =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "  device %s: reads/s=%.0f%s MB/s=%.1f busy=%.0f%% avg read=%.1fKiB"
                    + " | pages/query device=%s server=%s (x%s) | bytes/query device=%s server=%s"
                    + " (x%s)",
                name,
                d.getOrDefault("reads_per_s", Double.NaN),
                share == null
                    ? ""
                    : String.format(Locale.ROOT, " (%.1f%% of fio QD32)", share * 100),
                d.getOrDefault("read_mb_per_s", Double.NaN),
                d.getOrDefault("busy", Double.NaN) * 100,
                d.getOrDefault("avg_read_kib", Double.NaN),
                num(d.get("pages_per_query"), "%.1f"),
                num(d.get("server_pages_per_query"), "%.1f"),
                num(d.get("device_to_server_pages"), "%.2f"),
                num(d.get("read_bytes_per_query"), "%.0f"),
                num(d.get("server_bytes_per_query"), "%.0f"),
                num(d.get("device_to_server_bytes"), "%.2f")));
    if (d.containsKey("process_read_mb_per_s")) {
      sb.append(
          String.format(
              Locale.ROOT,
              " | server process: MB/s=%.1f pages/query=%s (x%s of its own count)",
              d.get("process_read_mb_per_s"),
              num(d.get("process_pages_per_query"), "%.1f"),
              num(d.get("process_to_server_bytes"), "%.2f")));
    }
    return sb.toString();
  }

  private static String num(Double v, String format) {
    return v == null || v.isNaN() ? "n/a" : String.format(Locale.ROOT, format, v);
  }

  /**
   * Reads the device's counters, or null without a device; a device that cannot be read any more is
   * reported once and dropped for the rest of the sweep (no figure rather than a made-up one).
   */
  /** Like {@link #sampleDevice} for the server process (gone: reported once, then dropped). */
  private ProcessIo.Sample sampleProcess() {
    if (process == null) {
      return null;
    }
    try {
      return process.sample();
    } catch (java.io.UncheckedIOException | IllegalArgumentException e) {
      if (cfg.out != null) {
        cfg.out.println(
            "server process I/O counters unreadable, carrying on without them [pid="
                + process.pid()
                + ", error="
                + e.getMessage()
                + "]");
      }
      process = null;
      return null;
    }
  }

  private BlockDevice.Sample sampleDevice() {
    if (device == null) {
      return null;
    }
    try {
      return device.sample();
    } catch (java.io.UncheckedIOException | IllegalArgumentException e) {
      if (cfg.out != null) {
        cfg.out.println(
            "device counters unreadable, carrying on without them [device="
                + device.name()
                + ", error="
                + e.getMessage()
                + "]");
      }
      device = null;
      return null;
    }
  }

  private static String figures(Map<String, Double> io) {
    return String.format(
        java.util.Locale.ROOT,
        "dist=%.0f pages=%.1f cpu=%.3fms",
        io.getOrDefault("search_distance_computations_per_query", 0.0),
        io.getOrDefault("pages_read_per_query", 0.0),
        io.getOrDefault("cpu_ms_per_query", Double.NaN));
  }

  /**
   * Runs, once each and outside the timings, the queries the measured window did not reach, so that
   * {@code perQuery} holds the recall of every query; returns how many were run.
   */
  private long completeRecall(
      PreparedVector[] queries,
      int[][] gt,
      double[] perQuery,
      int concurrency,
      SearchParams params,
      LongUnaryOperator idMapper,
      String what) {
    int missing = 0;
    for (double r : perQuery) {
      if (Double.isNaN(r)) {
        missing++;
      }
    }
    if (missing == 0) {
      return 0;
    }
    PreparedVector[] qs = new PreparedVector[missing];
    int[][] g = new int[missing][];
    int[] index = new int[missing];
    for (int i = 0, j = 0; i < perQuery.length; i++) {
      if (Double.isNaN(perQuery[i])) {
        qs[j] = queries[i];
        g[j] = gt[i];
        index[j++] = i;
      }
    }
    double[] rest = new double[missing];
    Arrays.fill(rest, Double.NaN);
    drive(
        qs,
        g,
        rest,
        concurrency,
        params,
        Duration.ZERO,
        missing,
        idMapper,
        null,
        what + " recall of the remaining queries");
    for (int j = 0; j < missing; j++) {
      perQuery[index[j]] = rest[j];
    }
    return missing;
  }

  private record Outcome(
      long ok,
      long errors,
      double seconds,
      Histogram histogram,
      String firstError,
      List<Double> windowQps) {}

  /** How often the progress line is redrawn; QPS windows are whole seconds. */
  private static final long TICK_NANOS = 250_000_000L;

  private static final long WINDOW_NANOS = 1_000_000_000L;

  /**
   * Runs {@code concurrency} closed-loop clients for {@code duration} or {@code maxQueries}; with
   * {@code perQuery}, each answered query's recall is stored at its index. While the clients run,
   * this thread redraws the progress line and counts the queries of each whole second.
   */
  private Outcome drive(
      PreparedVector[] queries,
      int[][] gt,
      double[] perQuery,
      int concurrency,
      SearchParams params,
      Duration duration,
      long maxQueries,
      LongUnaryOperator idMapper,
      Runnable beforeQuery,
      String what) {
    AtomicLong seq = new AtomicLong();
    AtomicLong done = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    Worker[] workers = new Worker[concurrency];
    Thread[] threads = new Thread[concurrency];
    long durationNanos = duration.toNanos();
    long[] deadline = new long[1];
    for (int i = 0; i < concurrency; i++) {
      Worker w = new Worker();
      workers[i] = w;
      threads[i] =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  return;
                }
                w.loop(
                    queries,
                    gt,
                    perQuery,
                    params,
                    seq,
                    done,
                    maxQueries,
                    deadline[0],
                    idMapper,
                    beforeQuery);
              },
              "search-c" + concurrency + "-" + i);
      threads[i].setDaemon(true);
      threads[i].start();
    }
    long t0 = System.nanoTime();
    deadline[0] = maxQueries > 0 ? Long.MAX_VALUE : t0 + durationNanos;
    start.countDown();
    Progress progress = new Progress(what, maxQueries, durationNanos, t0, done);
    for (Thread t : threads) {
      try {
        while (!t.join(Duration.ofNanos(TICK_NANOS))) {
          progress.tick(System.nanoTime());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for search clients", e);
      }
    }
    long end = System.nanoTime();
    progress.finish();
    double seconds = (end - t0) / 1e9;
    Histogram h = LatencySummary.newHistogram();
    long ok = 0;
    long errors = 0;
    String firstError = null;
    for (Worker w : workers) {
      h.add(w.histogram);
      ok += w.ok;
      errors += w.errors;
      if (firstError == null) {
        firstError = w.firstError;
      }
    }
    return new Outcome(ok, errors, seconds, h, firstError, progress.windowQps);
  }

  /**
   * The progress line of one drive ({@code \r}-redrawn on {@link Config#progress}) and the query
   * counts of its whole one-second windows. Used by the driving thread only.
   */
  private final class Progress {
    final String what;
    final long total;
    final long durationNanos;
    final long t0;
    final AtomicLong done;
    final List<Double> windowQps = new ArrayList<>();
    long windowStart;
    long windowDone;
    long lastNanos;
    long lastDone;
    boolean drawn;

    Progress(String what, long total, long durationNanos, long t0, AtomicLong done) {
      this.what = what;
      this.total = total;
      this.durationNanos = durationNanos;
      this.t0 = t0;
      this.done = done;
      this.windowStart = t0;
      this.lastNanos = t0;
    }

    void tick(long now) {
      long d = done.get();
      if (now - windowStart >= WINDOW_NANOS) {
        windowQps.add((d - windowDone) * 1e9 / (now - windowStart));
        windowStart = now;
        windowDone = d;
      }
      if (cfg.progress != null) {
        double qps = now > lastNanos ? (d - lastDone) * 1e9 / (now - lastNanos) : 0;
        cfg.progress.print("\r" + progressLine(what, d, total, now - t0, durationNanos, qps));
        cfg.progress.flush();
        drawn = true;
      }
      lastNanos = now;
      lastDone = d;
    }

    void finish() {
      if (drawn) {
        // clear the line so that the point's summary starts on a clean one
        cfg.progress.print("\r\033[2K");
        cfg.progress.flush();
      }
    }
  }

  /**
   * The progress line inside a point: queries done of how many (or seconds of how many, for a point
   * bounded by time) and the QPS since the previous line.
   */
  static String progressLine(
      String what, long done, long total, long elapsedNanos, long durationNanos, double qps) {
    if (total > 0) {
      return String.format(
          Locale.ROOT,
          "%s: %d/%d queries (%.0f%%), %.0f QPS",
          what,
          done,
          total,
          100.0 * Math.min(done, total) / total,
          qps);
    }
    return String.format(
        Locale.ROOT,
        "%s: %.1f/%.1f s, %d queries, %.0f QPS",
        what,
        Math.min(elapsedNanos, durationNanos) / 1e9,
        durationNanos / 1e9,
        done,
        qps);
  }

  private static final java.lang.invoke.VarHandle RECALL =
      java.lang.invoke.MethodHandles.arrayElementVarHandle(double[].class);

  /** One closed-loop client; its fields are read only after its thread has been joined. */
  private final class Worker {
    final Histogram histogram = LatencySummary.newHistogram();
    long ok;
    long errors;
    String firstError;

    void loop(
        PreparedVector[] queries,
        int[][] gt,
        double[] perQuery,
        SearchParams params,
        AtomicLong seq,
        AtomicLong done,
        long maxQueries,
        long deadline,
        LongUnaryOperator idMapper,
        Runnable beforeQuery) {
      int k = cfg.k;
      while (true) {
        long s = seq.getAndIncrement();
        if (maxQueries > 0 && s >= maxQueries) {
          return;
        }
        if (beforeQuery != null && System.nanoTime() < deadline) {
          beforeQuery.run();
        }
        long t0 = System.nanoTime();
        if (t0 >= deadline) {
          return;
        }
        int q = (int) (s % queries.length);
        try {
          long[] ids = client.search(cfg.collection, queries[q], k, params);
          LatencySummary.record(histogram, System.nanoTime() - t0);
          ok++;
          if (perQuery != null) {
            double r;
            if (idMapper == IDENTITY) {
              r = Recall.atK(ids, gt[q], k);
            } else {
              for (int i = 0; i < ids.length; i++) {
                ids[i] = idMapper.applyAsLong(ids[i]);
              }
              r = Recall.atKDistinct(ids, gt[q], k);
            }
            // two clients may answer the same query of a cycle: either's recall is that query's,
            // written whole (opaque), and read only after every client thread has been joined
            RECALL.setOpaque(perQuery, q, r);
          }
          done.incrementAndGet();
        } catch (RuntimeException e) {
          done.incrementAndGet();
          errors++;
          if (firstError == null) {
            firstError = e.getMessage();
          }
          try {
            // do not spin on a dead server: it would only burn the CPU the server needs
            Thread.sleep(5);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    }
  }
}
