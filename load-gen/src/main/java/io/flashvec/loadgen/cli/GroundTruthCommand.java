package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.dataset.Dataset;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code groundtruth}: computes and caches exact ground truth for a dataset. */
@Command(
    name = "groundtruth",
    mixinStandardHelpOptions = true,
    description =
        "Compute exact top-k ground truth (multi-threaded brute force) for a dataset when missing"
            + " and cache it next to the data (groundtruth.ivecs).")
public final class GroundTruthCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin DatasetOptions data;

  @Option(names = "--k", defaultValue = "100", description = "Depth (default: ${DEFAULT-VALUE}).")
  int k;

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    try (Dataset d = data.load(true, true, k, System.err)) {
      o.printf(
          Locale.ROOT,
          "ground truth ready [dataset=%s, queries=%d, depth=%d, distance=%s]%n",
          d.source(),
          d.queries().length,
          d.groundTruthDepth(),
          d.distance().apiName());
    }
    o.flush();
    return 0;
  }
}
