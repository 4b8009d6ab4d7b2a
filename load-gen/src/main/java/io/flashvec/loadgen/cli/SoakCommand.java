package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.bench.SoakBench;
import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.dataset.Distance;
import io.flashvec.loadgen.internal.Json;
import io.flashvec.loadgen.internal.MachineInfo;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code soak}: steady upserts, deletes, searches and compactions for hours. */
@Command(
    name = "soak",
    mixinStandardHelpOptions = true,
    description = {
      "Soak workload: fills --key-space points of random --dim vectors, then runs four paced"
          + " streams at once for --duration: upserts (--upsert-rate points/s in batches of"
          + " --batch, cycling through the key space so every id is rewritten again and again),"
          + " deletes (--delete-rate points/s, random ids of the key space), searches"
          + " (--search-rate queries/s, top --k of a random vector) and a forced compaction every"
          + " --compact-every. A rate of 0 turns a stream off.",
      "Appends cumulative counts and the interval's P99s to --progress every --progress-every;"
          + " writes the summary as JSON to --out. Exit status 1 if any operation failed."
    })
public final class SoakCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin ClientOptions client;

  @Mixin TopKOption topK;

  @Option(
      names = "--dim",
      defaultValue = "64",
      description = "Vector dimension (default: ${DEFAULT-VALUE}).")
  int dim;

  @Option(
      names = "--distance",
      converter = DistanceConverter.class,
      defaultValue = "Cosine",
      description = "Metric of a collection this command creates (default: ${DEFAULT-VALUE}).")
  Distance distance;

  @Option(
      names = "--key-space",
      defaultValue = "20000",
      description = "Ids 0..N-1 that all writes go to (default: ${DEFAULT-VALUE}).")
  int keySpace;

  @Option(
      names = "--duration",
      defaultValue = "4h",
      converter = DurationConverter.class,
      description = "How long the streams run (default: ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(
      names = "--upsert-rate",
      defaultValue = "200",
      description = "Upserted points per second (default: ${DEFAULT-VALUE}).")
  double upsertRate;

  @Option(
      names = "--delete-rate",
      defaultValue = "50",
      description = "Deleted points per second (default: ${DEFAULT-VALUE}).")
  double deleteRate;

  @Option(
      names = "--batch",
      defaultValue = "50",
      description = "Points per upsert or delete request (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(
      names = "--search-rate",
      defaultValue = "20",
      description = "Searches per second (default: ${DEFAULT-VALUE}).")
  double searchRate;

  @Option(
      names = "--compact-every",
      defaultValue = "5m",
      converter = DurationConverter.class,
      description = "Interval between forced compactions, 0 for none (default: ${DEFAULT-VALUE}).")
  Duration compactEvery;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Seed of all random vectors and ids (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--progress", description = "CSV file the progress lines are written to.")
  Path progress;

  @Option(
      names = "--progress-every",
      defaultValue = "10s",
      converter = DurationConverter.class,
      description = "Interval between progress lines (default: ${DEFAULT-VALUE}).")
  Duration progressEvery;

  @Option(names = "--out", description = "JSON summary file.")
  Path out;

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    PrintStream log = new PrintStream(new WriterOutputStream(o), true, StandardCharsets.UTF_8);
    try (VectorDbClient c = client.open()) {
      SoakBench bench =
          new SoakBench(
              c,
              new SoakBench.Config(
                  client.collection,
                  dim,
                  distance,
                  keySpace,
                  duration,
                  upsertRate,
                  deleteRate,
                  batch,
                  searchRate,
                  topK.k,
                  compactEvery,
                  seed,
                  progress,
                  progressEvery,
                  log));
      // SIGTERM/SIGINT end the run early with a summary, as the duration would
      CountDownLatch written = new CountDownLatch(1);
      Thread hook =
          new Thread(
              () -> {
                bench.stop();
                try {
                  written.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "soak-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      try {
        Map<String, Object> summary = bench.run();
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", "soak");
        root.put("target", client.target);
        root.put("url", client.describe());
        root.put(
            "date", OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS).toString());
        root.put("machine", MachineInfo.describe());
        root.putAll(summary);
        String json = Json.MAPPER.writeValueAsString(root);
        if (out != null) {
          Json.writeString(out, json, "result");
        }
        o.println(json);
        o.flush();
      } finally {
        written.countDown();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
          // already shutting down: the hook has been let go by the latch
        }
      }
      return bench.errors() == 0 ? 0 : 1;
    }
  }
}
