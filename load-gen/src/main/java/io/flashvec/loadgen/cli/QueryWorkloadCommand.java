package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.client.VectorDbClient;
import io.flashvec.loadgen.dataset.Dataset;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What the commands that run top-k queries of a dataset against a collection share ({@code search},
 * {@code mixed}): their common options, and loading the dataset with ground truth of depth {@code
 * --k} and opening the client before the workload runs.
 */
abstract class QueryWorkloadCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin ClientOptions client;

  @Mixin DatasetOptions data;

  @Mixin MetricsOptions metricsOptions;

  @Mixin TopKOption topK;

  @Override
  public final Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    PrintStream log = new PrintStream(new WriterOutputStream(o), true, StandardCharsets.UTF_8);
    try (Dataset d = data.load(true, true, topK.k, System.err);
        VectorDbClient c = client.open()) {
      int status = run(c, d, o, log);
      o.flush();
      return status;
    }
  }

  /**
   * Runs the workload and writes its results.
   *
   * @param o the command's output, for the lines that name the files written
   * @param log progress lines (the same output)
   * @return the exit status
   */
  abstract int run(VectorDbClient c, Dataset d, PrintWriter o, PrintStream log);
}
