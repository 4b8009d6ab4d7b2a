package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.bench.MixedBench;
import io.flashvec.loadgen.bench.SearchBench;
import io.flashvec.loadgen.client.SearchParams;
import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.dataset.Dataset;
import io.flashvec.loadgen.internal.Json;
import io.flashvec.loadgen.metrics.ServerIo;
import io.flashvec.loadgen.report.BenchmarkResult;
import io.flashvec.loadgen.report.HtmlReport;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code mixed}: queries with and without a steady insert stream. */
@Command(
    name = "mixed",
    mixinStandardHelpOptions = true,
    description = {
      "Mixed read/write workload: the same closed-loop query stream (fixed --concurrency) runs"
          + " first alone, then beside an insert stream of --insert-rate vectors/s (ids from"
          + " the base size up, copies of base rows), each for --duration. Queries and the"
          + " inserted rows are formatted as JSON before either run, so the client's own CPU"
          + " (on a machine shared with the server) is not charged to the server.",
      "Reports QPS and P50/P99 of both runs and their ratios (with inserts / queries only) as JSON."
    })
public final class MixedCommand extends QueryWorkloadCommand {
  @Option(
      names = "--concurrency",
      defaultValue = "4",
      description = "Query clients (default: ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(
      names = "--duration",
      defaultValue = "30s",
      converter = DurationConverter.class,
      description = "Duration of each run (default: ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(
      names = "--warmup",
      defaultValue = "1s",
      converter = DurationConverter.class,
      description = "Unmeasured warm-up before each run (default: ${DEFAULT-VALUE}).")
  Duration warmup;

  @Option(
      names = "--insert-rate",
      defaultValue = "1000",
      description = "Inserted vectors per second (default: ${DEFAULT-VALUE}).")
  double insertRate;

  @Option(
      names = "--insert-batch",
      defaultValue = "100",
      description = "Vectors per insert request (default: ${DEFAULT-VALUE}).")
  int insertBatch;

  @Option(
      names = "--insert-id-start",
      description = "First id of inserted points (default: the base size).")
  Long insertIdStart;

  @Option(
      names = "--keep-inserts",
      description = "Keep the inserted points (default: delete them after the run).")
  boolean keepInserts;

  @Option(names = "--search-list", description = "search_list (also sent as hnsw_ef).")
  Integer searchList;

  @Option(names = "--beam-width", description = "beam_width.")
  Integer beamWidth;

  @Option(names = "--rerank-k", description = "rerank_k.")
  Integer rerankK;

  @Option(names = "--out", required = true, description = "JSON result file.")
  Path out;

  @Option(names = "--html", description = "Also write an HTML report of both runs here.")
  Path html;

  @Override
  int run(VectorDbClient c, Dataset d, PrintWriter o, PrintStream log) {
    SearchParams params = new SearchParams(searchList, beamWidth, rerankK);
    MixedBench.Result r =
        new MixedBench(
                c,
                new MixedBench.Config(
                    client.collection,
                    topK.k,
                    concurrency,
                    params,
                    duration,
                    warmup,
                    insertRate,
                    insertBatch,
                    keepInserts,
                    ServerIo.DEFAULT_PREFIXES,
                    log),
                metricsOptions.open(c, client, log))
            .run(
                d.base(),
                SearchBench.prepare(c, d.queries()),
                d.groundTruth(),
                insertIdStart == null ? d.size() : insertIdStart);
    Map<String, Object> root = Metadata.of("mixed", d, client);
    root.put("k", topK.k);
    metricsOptions.describe(root);
    root.put("duration_s", duration.toMillis() / 1000.0);
    root.putAll(r.toMap());
    root.put(
        "points",
        List.of(BenchmarkResult.toMap(r.queriesOnly()), BenchmarkResult.toMap(r.withInserts())));
    Json.write(out, root, "result");
    o.printf(Locale.ROOT, "ratios (with inserts / queries only): %s%nwrote %s%n", r.ratios(), out);
    if (html != null) {
      HtmlReport.write(
          html,
          List.of(new HtmlReport.Named(out.getFileName().toString(), BenchmarkResult.read(out))));
      o.printf(Locale.ROOT, "wrote %s%n", html);
    }
    return 0;
  }
}
