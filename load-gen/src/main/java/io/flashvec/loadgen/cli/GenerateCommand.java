package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.dataset.DatasetLoader;
import io.flashvec.loadgen.dataset.Distance;
import io.flashvec.loadgen.dataset.GroundTruth;
import io.flashvec.loadgen.dataset.SyntheticGenerator;
import io.flashvec.loadgen.dataset.VecsFiles;
import io.flashvec.loadgen.dataset.VectorFile;
import io.flashvec.loadgen.internal.FloatKernels;
import io.flashvec.loadgen.internal.Parallel;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code generate}: writes a deterministic synthetic dataset. */
@Command(
    name = "generate",
    mixinStandardHelpOptions = true,
    description = {
      "Generate a deterministic synthetic dataset that behaves like real embeddings: a Gaussian"
          + " mixture in a low-dimensional latent space (clusters of varied spread and size),"
          + " mapped to --dim by a random linear map, plus isotropic noise, optionally unit"
          + " normalised.",
      "Writes base.fvecs, query.fvecs (drawn from the same distribution, not copies of base rows),"
          + " groundtruth.ivecs (exact top-100 of a query sample) and manifest.json to --out.",
      "The base is streamed to disk block by block and ground truth is one streaming pass over"
          + " it, so memory stays bounded whatever --n is."
    })
public final class GenerateCommand implements Callable<Integer> {
  /** Queries with ground truth when {@code --gt-queries} is not given (at most --queries). */
  static final int DEFAULT_GT_QUERIES = 1000;

  @Spec CommandSpec spec;

  @Option(names = "--out", required = true, description = "Output directory.")
  Path out;

  @Option(names = "--n", required = true, description = "Number of base vectors.")
  int n;

  @Option(names = "--dim", required = true, description = "Dimension.")
  int dim;

  @Option(
      names = "--queries",
      defaultValue = "1000",
      description = "Number of query vectors (default: ${DEFAULT-VALUE}).")
  int queries;

  @Option(
      names = "--clusters",
      defaultValue = "1000",
      description = "Mixture components (default: ${DEFAULT-VALUE}).")
  int clusters;

  @Option(
      names = "--latent-dim",
      defaultValue = "32",
      description = "Latent (intrinsic) dimension (default: ${DEFAULT-VALUE}).")
  int latentDim;

  @Option(
      names = "--noise",
      defaultValue = "0.1",
      description =
          "Isotropic noise std, relative to the signal's per-coordinate std (default:"
              + " ${DEFAULT-VALUE}).")
  double noise;

  @Option(names = "--normalize", description = "Normalise every vector to unit length.")
  boolean normalize;

  @Option(names = "--seed", defaultValue = "42", description = "Seed (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(
      names = "--distance",
      defaultValue = "Cosine",
      converter = DistanceConverter.class,
      description = "Metric of the ground truth and the manifest (default: ${DEFAULT-VALUE}).")
  Distance distance;

  @Option(
      names = "--gt-k",
      defaultValue = "100",
      description = "Ground truth depth (default: ${DEFAULT-VALUE}).")
  int gtK;

  @Option(
      names = "--gt-queries",
      description =
          "Compute ground truth for the first this many queries, a sample (default: the smaller"
              + " of 1000 and --queries); search and mixed then use that sample.")
  Integer gtQueries;

  @Option(names = "--no-groundtruth", description = "Do not compute ground truth.")
  boolean noGroundTruth;

  @Option(names = "--threads", description = "Threads (default: all processors).")
  Integer threads;

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    int t = threads == null ? Parallel.defaultThreads() : threads;
    int sample = gtQueries == null ? Math.min(DEFAULT_GT_QUERIES, queries) : gtQueries;
    if (gtQueries != null && (gtQueries < 1 || gtQueries > queries)) {
      throw new ParameterException(
          spec.commandLine(),
          "--gt-queries must be between 1 and --queries [gt-queries="
              + gtQueries
              + ", queries="
              + queries
              + "]");
    }
    SyntheticGenerator.Spec s =
        new SyntheticGenerator.Spec(n, queries, dim, clusters, latentDim, noise, normalize, seed);
    o.printf(Locale.ROOT, "generating %s [seed=%d, threads=%d]%n", s, seed, t);
    o.flush();
    long t0 = System.nanoTime();
    SyntheticGenerator g = new SyntheticGenerator(s);
    removeDerivedFiles();
    Path baseFile = out.resolve("base.fvecs");
    Path queryFile = out.resolve("query.fvecs");
    g.writeBase(baseFile, t);
    g.writeQueries(queryFile, t);
    double genSeconds = (System.nanoTime() - t0) / 1e9;
    o.printf(Locale.ROOT, "wrote %s and query.fvecs in %.1f s%n", baseFile, genSeconds);
    o.flush();
    Map<String, Object> manifest = new LinkedHashMap<>();
    manifest.put("metric", distance.manifestName());
    manifest.put("generator", "flashvec load-gen generate");
    manifest.put("n", n);
    manifest.put("queries", queries);
    manifest.put("dim", dim);
    manifest.put("clusters", clusters);
    manifest.put("latent_dim", latentDim);
    manifest.put("noise", noise);
    manifest.put("normalized", normalize);
    manifest.put("seed", seed);
    manifest.put("gen_seconds", Math.round(genSeconds * 10) / 10.0);
    if (!noGroundTruth) {
      long g0 = System.nanoTime();
      float[][] q = VecsFiles.readFvecs(queryFile, sample);
      o.printf(
          Locale.ROOT,
          "computing exact ground truth: one pass over the base [queries=%d, k=%d, threads=%d]%n",
          sample,
          gtK,
          t);
      o.flush();
      int[][] gt;
      try (VectorFile base = VectorFile.open(baseFile)) {
        gt = GroundTruth.compute(base, q, Math.max(1, gtK), distance, t);
      }
      VecsFiles.writeIvecs(out.resolve("groundtruth.ivecs"), gt);
      double gtSeconds = (System.nanoTime() - g0) / 1e9;
      manifest.put("gt_queries", sample);
      manifest.put("gt_seconds", Math.round(gtSeconds * 10) / 10.0);
      o.printf(
          Locale.ROOT,
          "wrote groundtruth.ivecs [k=%d, queries=%d, distance=%s, kernels=%s] in %.1f s%n",
          gtK,
          sample,
          distance.apiName(),
          FloatKernels.get().name(),
          gtSeconds);
    }
    DatasetLoader.writeManifest(out, manifest);
    o.flush();
    return 0;
  }

  /**
   * Removes what was derived from a base this run replaces: cached ground truth of any metric and
   * the manifest (whose entries a later write would otherwise merge into the new one).
   */
  private void removeDerivedFiles() {
    if (!Files.isDirectory(out)) {
      return;
    }
    try (DirectoryStream<Path> old = Files.newDirectoryStream(out, "groundtruth*.ivecs")) {
      for (Path f : old) {
        Files.delete(f);
      }
      Files.deleteIfExists(out.resolve(DatasetLoader.MANIFEST));
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot remove the previous ground truth [dir=" + out + "]", e);
    }
  }
}
