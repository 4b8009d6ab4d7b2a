package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.bench.SearchBench;
import io.flashvec.loadgen.bench.WarmUp;
import io.flashvec.loadgen.client.SearchParams;
import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.client.VectorDbClient.PreparedVector;
import io.flashvec.loadgen.dataset.Dataset;
import io.flashvec.loadgen.metrics.BlockDevice;
import io.flashvec.loadgen.metrics.ServerIo;
import io.flashvec.loadgen.report.BenchmarkResult;
import io.flashvec.loadgen.report.HtmlReport;
import io.flashvec.loadgen.report.SearchPoint;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code search}: the concurrency and search-parameter sweep. */
@Command(
    name = "search",
    mixinStandardHelpOptions = true,
    description = {
      "Concurrency sweep (and optional search-parameter sweep): for each point, C closed-loop"
          + " clients each keep one search in flight, cycling through query.fvecs, for --duration"
          + " or --queries, after a warm-up that lasts until QPS is steady (see --warmup).",
      "Per point: QPS, P50/P95/P99/max latency, recall@k against ground truth (computed and"
          + " cached when missing) over every query of the set (queries the point did not reach"
          + " are run once after it, untimed), errors, and the deltas of the server's /metrics (summed over"
          + " every --metrics-url node of a cluster, and per node); with --device, the block"
          + " device's reads/s, MB/s and pages per query beside the server's own.",
      "Writes a JSON result (--out) and optionally an HTML report (--html)."
    })
public final class SearchCommand extends QueryWorkloadCommand {
  @Option(
      names = "--concurrency",
      split = ",",
      defaultValue = "1",
      description = "Clients per point, e.g. 1,2,4,8 (default: ${DEFAULT-VALUE}).")
  int[] concurrency;

  @Option(
      names = "--duration",
      defaultValue = "10s",
      converter = DurationConverter.class,
      description = "Duration of each point (default: ${DEFAULT-VALUE}); ignored with --queries.")
  Duration duration;

  @Option(
      names = "--queries",
      defaultValue = "0",
      description = "Queries per point instead of a duration.")
  long queries;

  @Option(
      names = "--warmup",
      defaultValue = "2s",
      converter = DurationConverter.class,
      description =
          "Least unmeasured warm-up before each point (default: ${DEFAULT-VALUE}); it goes on"
              + " until the QPS of 3 successive 1 s windows agree within --warmup-tolerance, at most"
              + " --warmup-max. 0s: no warm-up (cold runs).")
  Duration warmup;

  @Option(
      names = "--warmup-max",
      defaultValue = "30s",
      converter = DurationConverter.class,
      description =
          "Longest warm-up of a point (default: ${DEFAULT-VALUE}); a point that reaches it is"
              + " flagged as not steady.")
  Duration warmupMax;

  @Option(
      names = "--warmup-tolerance",
      defaultValue = "0.10",
      description =
          "Largest relative spread of the warm-up windows' QPS that counts as steady (default:"
              + " ${DEFAULT-VALUE}).")
  double warmupTolerance;

  @Option(names = "--no-progress", description = "No progress line inside each point on stderr.")
  boolean noProgress;

  @Option(
      names = "--search-list",
      split = ",",
      description = "search_list values to sweep (also sent as hnsw_ef).")
  int[] searchList;

  @Option(names = "--beam-width", split = ",", description = "beam_width values to sweep.")
  int[] beamWidth;

  @Option(names = "--rerank-k", split = ",", description = "rerank_k values to sweep.")
  int[] rerankK;

  @Option(
      names = "--metric-prefix",
      split = ",",
      description =
          "Server metric name prefixes to report deltas of (default: flashvec_,process_cpu,"
              + "system_cpu,http_server_requests).")
  List<String> metricPrefixes;

  @Option(
      names = "--drop-caches",
      description =
          "Cold runs: sync and write 1 to /proc/sys/vm/drop_caches before each measured point"
              + " (needs root and the server on this machine).")
  boolean dropCaches;

  @Option(
      names = "--evict",
      description =
          "Cold runs against FlashVec: POST /collections/{c}/evict before each measured point"
              + " (after its warm-up), which unmaps the collection's index pages in the server and"
              + " drops them from the page cache. Use with --warmup 0s.")
  boolean evict;

  @Option(
      names = "--evict-each-query",
      description =
          "Cold search every time, against FlashVec: POST /collections/{c}/evict before every"
              + " measured query (outside its latency), so pages read per query are those of a"
              + " search from a cold cache. Use with --concurrency 1 (another client's eviction"
              + " would land inside a query) and --warmup 0s.")
  boolean evictEachQuery;

  @Mixin DeviceOptions deviceOptions;

  @Option(names = "--out", required = true, description = "JSON result file.")
  Path out;

  @Option(names = "--html", description = "Also write an HTML report here.")
  Path html;

  @Override
  int run(VectorDbClient c, Dataset d, PrintWriter o, PrintStream log) {
    WarmUp.Policy warm = warmupPolicy();
    List<SearchParams> params = sweep(searchList, beamWidth, rerankK);
    PreparedVector[] prepared = SearchBench.prepare(c, d.queries());
    BlockDevice device = deviceOptions.open(log);
    SearchBench bench =
        new SearchBench(
            c,
            new SearchBench.Config(
                client.collection,
                topK.k,
                Arrays.stream(concurrency).boxed().toList(),
                params,
                duration,
                queries,
                warm,
                metricPrefixes == null ? ServerIo.DEFAULT_PREFIXES : metricPrefixes,
                coldHook(log),
                log,
                evictEachQuery ? () -> PageCache.evict(client.url, client.collection, log) : null,
                noProgress ? null : System.err),
            metricsOptions.open(c, client, log),
            device,
            deviceOptions.referenceIops(),
            deviceOptions.process());
    int[][] gt = d.groundTruth();
    if (client.filterBucketsBelow > 0) {
      gt = filteredGroundTruth(d, client.payloadBuckets, client.filterBucketsBelow, log);
    }
    List<SearchPoint> points = bench.run(prepared, gt);
    Map<String, Object> meta = Metadata.of("search", d, client);
    meta.put("k", topK.k);
    metricsOptions.describe(meta);
    deviceOptions.describe(meta, device);
    if (client.filterBucketsBelow > 0) {
      meta.put(
          "filter",
          "bucket < " + client.filterBucketsBelow + " of " + client.payloadBuckets + " buckets");
    }
    if (queries > 0) {
      meta.put("queries_per_point", queries);
    } else {
      meta.put("duration_s", duration.toMillis() / 1000.0);
    }
    meta.put("warmup_s", warmup.toMillis() / 1000.0);
    meta.put("warmup", warm.describe());
    if (gt != null) {
      meta.put(
          "recall",
          "mean over all "
              + d.queries().length
              + " queries, each once; queries a point did not reach are run after it, untimed");
    }
    meta.put(
        "page_cache",
        evictEachQuery
            ? "cold: index files evicted (POST /collections/{c}/evict) before each query"
            : evict
                ? "cold: index files evicted (POST /collections/{c}/evict) before each point"
                : dropCaches
                    ? "cold: dropped before each point (after its warm-up)"
                    : "warm (not dropped)");
    BenchmarkResult result = new BenchmarkResult(meta, points);
    result.write(out);
    o.printf(Locale.ROOT, "wrote %s%n", out);
    if (html != null) {
      HtmlReport.write(html, List.of(new HtmlReport.Named(out.getFileName().toString(), result)));
      o.printf(Locale.ROOT, "wrote %s%n", html);
    }
    long errors = points.stream().mapToLong(SearchPoint::errors).sum();
    long ok = points.stream().mapToLong(SearchPoint::queries).sum();
    return ok == 0 && errors > 0 ? 1 : 0;
  }

  /**
   * The warm-up of the options; the default cap is raised to a longer {@code --warmup}, a cap given
   * below it is refused.
   */
  private WarmUp.Policy warmupPolicy() {
    boolean maxGiven = spec.commandLine().getParseResult().hasMatchedOption("--warmup-max");
    try {
      return warmup.isZero()
          ? WarmUp.Policy.NONE
          : new WarmUp.Policy(
              warmup,
              WarmUp.Policy.DEFAULT_WINDOW,
              warmupTolerance,
              !maxGiven && warmupMax.compareTo(warmup) < 0 ? warmup : warmupMax);
    } catch (IllegalArgumentException e) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  private Runnable coldHook(PrintStream log) {
    if (evict) {
      return () -> PageCache.evict(client.url, client.collection, log);
    }
    return dropCaches ? () -> PageCache.drop(log) : null;
  }

  /** The cartesian product of the given parameter lists (a missing list = server default). */
  static List<SearchParams> sweep(int[] searchList, int[] beamWidth, int[] rerankK) {
    List<SearchParams> out = new ArrayList<>();
    for (Integer l : values(searchList)) {
      for (Integer w : values(beamWidth)) {
        for (Integer r : values(rerankK)) {
          out.add(new SearchParams(l, w, r));
        }
      }
    }
    return out;
  }

  private static List<Integer> values(int[] a) {
    if (a == null || a.length == 0) {
      List<Integer> none = new ArrayList<>();
      none.add(null);
      return none;
    }
    return Arrays.stream(a).boxed().toList();
  }

  /**
   * Exact top-k among the base rows whose bucket ({@code row % buckets}, the payload {@code
   * --payload-buckets} ingested) is below {@code below}, as base row ids.
   */
  private int[][] filteredGroundTruth(Dataset d, int buckets, int below, PrintStream log) {
    if (buckets <= 0) {
      throw new IllegalArgumentException("--filter-buckets-below needs --payload-buckets");
    }
    int n = d.size();
    int b = Math.min(below, buckets);
    int matching = n / buckets * b + Math.min(n % buckets, b);
    log.printf(Locale.ROOT, "filtered ground truth over %d of %d points%n", matching, n);
    return io.flashvec.loadgen.dataset.GroundTruth.compute(
        d.base(),
        d.queries(),
        topK.k,
        d.distance(),
        Runtime.getRuntime().availableProcessors(),
        row -> row % buckets < below);
  }
}
