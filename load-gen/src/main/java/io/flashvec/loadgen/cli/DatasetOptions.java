package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.dataset.Dataset;
import io.flashvec.loadgen.dataset.DatasetLoader;
import io.flashvec.loadgen.dataset.Distance;
import io.flashvec.loadgen.dataset.GroundTruth;
import io.flashvec.loadgen.internal.Parallel;
import java.io.PrintStream;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Options that name and load a dataset; a picocli mixin. */
public final class DatasetOptions {
  @Option(
      names = "--dataset",
      required = true,
      description =
          "Dataset: a directory with base.fvecs, query.fvecs [, groundtruth.ivecs] (or .fbin,"
              + " .bvecs), or an ann-benchmarks .hdf5 file, or a .npy file.")
  Path dataset;

  @Option(
      names = "--distance",
      converter = DistanceConverter.class,
      description =
          "Metric: Cosine, Dot or Euclid (default: the dataset's manifest/attribute, else Cosine).")
  Distance distance;

  @Option(
      names = "--threads",
      description = "Threads for ground truth computation (default: all processors).")
  Integer threads;

  @Option(
      names = "--holdout",
      defaultValue = "1000",
      description =
          "For a .npy dataset without a query file: hold out this many last rows as queries"
              + " (default: ${DEFAULT-VALUE}).")
  int holdout;

  int threads() {
    return threads == null ? Parallel.defaultThreads() : threads;
  }

  Dataset load(boolean needQueries, boolean needGroundTruth, int gtK, PrintStream log) {
    return DatasetLoader.load(
        dataset,
        new DatasetLoader.Options(
            distance,
            needQueries,
            needGroundTruth,
            Math.max(gtK, GroundTruth.DEFAULT_K),
            holdout,
            threads(),
            log));
  }
}
