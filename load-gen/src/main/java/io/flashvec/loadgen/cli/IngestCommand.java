package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.bench.IngestBench;
import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.dataset.Dataset;
import io.flashvec.loadgen.internal.Json;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ingest}: creates the collection and uploads the base vectors. */
@Command(
    name = "ingest",
    mixinStandardHelpOptions = true,
    description = {
      "Create the collection if absent (PUT /collections/{name}) and upsert the dataset's base"
          + " vectors (ids = row numbers) in batches from parallel clients, with a progress line.",
      "Reports vectors/s, the time until all points are searchable and until the collection"
          + " reports status green with every point indexed (indexed_vectors_count = points_count on"
          + " FlashVec), printing indexed/points every 5 s while it waits."
    })
public final class IngestCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin ClientOptions client;

  @Mixin DatasetOptions data;

  @Option(
      names = "--index",
      description = "Index type sent as index.type: diskann, hnsw or flat (default: server's).")
  String index;

  @Option(
      names = "--index-param",
      description = "Extra index parameter passed through, e.g. --index-param max_degree=64.")
  Map<String, String> indexParams = new LinkedHashMap<>();

  @Option(
      names = "--batch",
      defaultValue = "256",
      description = "Points per upsert request (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(
      names = "--clients",
      defaultValue = "2",
      description = "Parallel upload clients (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(names = "--recreate", description = "Delete the collection first if it exists.")
  boolean recreate;

  @Option(
      names = "--index-timeout",
      defaultValue = "30m",
      converter = DurationConverter.class,
      description =
          "How long to wait for status green; 0 = do not wait (default: ${DEFAULT-VALUE}).")
  Duration indexTimeout;

  @Option(
      names = "--rows",
      description =
          "Upload only base rows FROM:TO (ids stay the row numbers, so the ground truth holds once"
              + " every row is in), e.g. 24000:100000 sealed first and 0:24000 as fresh data.")
  String rows;

  @Option(names = "--no-progress", description = "No progress line on stderr.")
  boolean noProgress;

  @Option(names = "--out", description = "Write the ingest result as JSON here.")
  Path out;

  private int rowsFrom(int n) {
    return rows == null ? 0 : rowsPart(0, n);
  }

  private int rowsTo(int n) {
    return rows == null ? n : rowsPart(1, n);
  }

  private int rowsPart(int i, int n) {
    String[] p = rows.split(":", -1);
    try {
      if (p.length != 2) {
        throw new NumberFormatException();
      }
      int from = Integer.parseInt(p[0].trim());
      int to = Integer.parseInt(p[1].trim());
      if (from < 0 || to > n || from > to) {
        throw new NumberFormatException();
      }
      return i == 0 ? from : to;
    } catch (NumberFormatException e) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(), "--rows must be FROM:TO within 0:" + n + " [rows=" + rows + "]");
    }
  }

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    PrintStream log = new PrintStream(new WriterOutputStream(o), true, StandardCharsets.UTF_8);
    try (Dataset d = data.load(false, false, 0, System.err);
        VectorDbClient c = client.open()) {
      IngestBench.Result r =
          new IngestBench(
                  c,
                  new IngestBench.Config(
                      client.collection,
                      d.distance(),
                      index,
                      indexParams,
                      batch,
                      clients,
                      recreate,
                      indexTimeout,
                      noProgress ? null : System.err,
                      log))
              .run(d.base(), rowsFrom(d.size()), rowsTo(d.size()));
      if (out != null) {
        Map<String, Object> root = Metadata.of("ingest", d, client);
        root.put("index", index);
        root.putAll(r.toMap());
        Json.write(out, root, "result");
        o.printf(Locale.ROOT, "wrote %s%n", out);
      }
      o.flush();
      return r.failedBatches() == 0 ? 0 : 1;
    }
  }
}
