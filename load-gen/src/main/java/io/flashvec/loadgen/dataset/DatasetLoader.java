package io.flashvec.loadgen.dataset;

import io.flashvec.loadgen.internal.FloatKernels;
import io.flashvec.loadgen.internal.Json;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Resolves a dataset path into a {@link Dataset}, computing exact ground truth when it is needed
 * and missing, and caching it next to the data.
 *
 * <ul>
 *   <li>A directory: {@code base.fvecs} (or {@code base.fbin}, {@code base.bvecs}), {@code
 *       query.fvecs} (or {@code query.fbin}, {@code query.bvecs}), optional {@code
 *       groundtruth.ivecs} and {@code manifest.json} whose {@code metric} ({@code cosine}, {@code
 *       l2}, {@code dot}) says what the ground truth is for. Ground truth for another metric is
 *       cached as {@code groundtruth.<metric>.ivecs}.
 *   <li>An ann-benchmarks {@code .hdf5}/{@code .h5} file: {@code train}, {@code test}, {@code
 *       neighbors} and attribute {@code distance}.
 *   <li>A {@code .npy} file (float32): the base set; queries come from a sibling {@code
 *       query.npy}/{@code queries.npy}/{@code <stem>_query.npy}, else the last {@code holdout} rows
 *       are held out as queries.
 * </ul>
 */
public final class DatasetLoader {
  /** Name of the manifest file of a dataset directory. */
  public static final String MANIFEST = "manifest.json";

  /** How to load: metric override, what is needed, threads for ground truth, where to log. */
  public record Options(
      Distance distance,
      boolean needQueries,
      boolean needGroundTruth,
      int groundTruthK,
      int holdout,
      int threads,
      PrintStream log) {}

  private DatasetLoader() {}

  /** Loads the dataset at {@code path}. */
  public static Dataset load(Path path, Options o) {
    if (Files.isDirectory(path)) {
      return loadDirectory(path, o);
    }
    if (!Files.isRegularFile(path)) {
      throw new IllegalArgumentException("dataset not found [path=" + path + "]");
    }
    String name = path.getFileName().toString().toLowerCase(Locale.ROOT);
    if (name.endsWith(".hdf5") || name.endsWith(".h5")) {
      return loadHdf5(path, o);
    }
    if (name.endsWith(".npy")) {
      return loadNpy(path, o);
    }
    throw new IllegalArgumentException(
        "unsupported dataset [path=" + path + ", expected a directory, .hdf5 or .npy]");
  }

  /** Reads the {@code metric} of a directory's manifest, or null. */
  public static Distance manifestMetric(Path dir) {
    Path m = dir.resolve(MANIFEST);
    if (!Files.isRegularFile(m)) {
      return null;
    }
    JsonNode node = Json.MAPPER.readTree(m.toFile());
    JsonNode metric = node.path("metric");
    return metric.isString() ? Distance.parse(metric.asString()) : null;
  }

  /** Writes (or updates) the manifest of a dataset directory with the given entries. */
  public static void writeManifest(Path dir, Map<String, Object> entries) {
    Map<String, Object> all = new LinkedHashMap<>();
    Path m = dir.resolve(MANIFEST);
    if (Files.isRegularFile(m)) {
      JsonNode old = Json.MAPPER.readTree(m.toFile());
      for (var e : old.properties()) {
        all.put(e.getKey(), e.getValue());
      }
    }
    all.putAll(entries);
    Json.write(m, all, "manifest");
  }

  private static Dataset loadDirectory(Path dir, Options o) {
    Distance declared = manifestMetric(dir);
    Distance distance =
        o.distance != null ? o.distance : declared != null ? declared : Distance.COSINE;
    Vectors base = openBase(dir);
    try {
      float[][] queries =
          o.needQueries || o.needGroundTruth ? readVectors(dir, "query") : new float[0][];
      int[][] gt = null;
      if (o.needGroundTruth) {
        String gtName =
            declared == null || declared == distance
                ? "groundtruth.ivecs"
                : "groundtruth." + distance.manifestName() + ".ivecs";
        Path gtFile = dir.resolve(gtName);
        int sample = manifestGroundTruthQueries(dir, queries.length);
        gt = cachedGroundTruth(gtFile, base, sampleOf(queries, sample), distance, o);
        queries = sampleWithGroundTruth(queries, gt, gtFile, o);
        if (declared == null) {
          writeManifest(dir, Map.of("metric", distance.manifestName()));
        }
      }
      return new Dataset(dir.getFileName().toString(), dir, base, queries, gt, distance);
    } catch (RuntimeException | Error e) {
      if (base instanceof VectorFile f) {
        f.close();
      }
      throw e;
    }
  }

  /**
   * The base of a directory: {@code base.fvecs} or {@code base.fbin} mapped in place, or {@code
   * base.bvecs} read.
   */
  private static Vectors openBase(Path dir) {
    for (String name : new String[] {"base.fvecs", "base.fbin"}) {
      Path f = dir.resolve(name);
      if (Files.isRegularFile(f)) {
        return VectorFile.open(f);
      }
    }
    return Vectors.onHeap(readVectors(dir, "base"));
  }

  /**
   * The number of queries whose ground truth the manifest says was computed ({@code gt_queries},
   * written by {@code generate --gt-queries}), capped at {@code queries}; {@code queries} when the
   * manifest does not say.
   */
  private static int manifestGroundTruthQueries(Path dir, int queries) {
    Path m = dir.resolve(MANIFEST);
    if (!Files.isRegularFile(m)) {
      return queries;
    }
    JsonNode n = Json.MAPPER.readTree(m.toFile()).path("gt_queries");
    return n.isInt() && n.asInt() >= 0 ? Math.min(n.asInt(), queries) : queries;
  }

  private static float[][] sampleOf(float[][] queries, int sample) {
    return sample == queries.length ? queries : Arrays.copyOf(queries, sample);
  }

  /**
   * The queries that have ground truth: a ground truth file computed for a sample (the first {@code
   * gt.length} queries, {@code generate --gt-queries}) limits the queries to that sample.
   */
  private static float[][] sampleWithGroundTruth(
      float[][] queries, int[][] gt, Path gtFile, Options o) {
    if (gt.length >= queries.length) {
      return queries;
    }
    if (o.log != null) {
      o.log.printf(
          Locale.ROOT,
          "ground truth covers the first %d of %d queries; using those [file=%s]%n",
          gt.length,
          queries.length,
          gtFile);
    }
    return Arrays.copyOf(queries, gt.length);
  }

  private static float[][] readVectors(Path dir, String stem) {
    Path f = dir.resolve(stem + ".fvecs");
    if (Files.isRegularFile(f)) {
      return VecsFiles.readFvecs(f);
    }
    Path fbin = dir.resolve(stem + ".fbin");
    if (Files.isRegularFile(fbin)) {
      try (VectorFile v = VectorFile.open(fbin)) {
        float[][] rows = new float[v.size()][];
        for (int i = 0; i < rows.length; i++) {
          rows[i] = v.get(i);
        }
        return rows;
      }
    }
    Path b = dir.resolve(stem + ".bvecs");
    if (Files.isRegularFile(b)) {
      return VecsFiles.readBvecs(b, Integer.MAX_VALUE);
    }
    throw new IllegalArgumentException(
        "dataset directory lacks vectors [dir=" + dir + ", expected=" + stem + ".fvecs]");
  }

  private static Dataset loadHdf5(Path file, Options o) {
    Hdf5Files.AnnBenchmarks a = Hdf5Files.read(file);
    Distance declared = a.metric();
    Distance distance =
        o.distance != null ? o.distance : declared != null ? declared : Distance.EUCLID;
    int[][] gt = null;
    if (o.needGroundTruth) {
      if (a.neighbors() != null && (declared == null || declared == distance)) {
        gt = checkGroundTruth(a.neighbors(), a.train().length, a.test().length, file);
      } else {
        gt =
            cachedGroundTruth(
                sibling(file, ".groundtruth." + distance.manifestName() + ".ivecs"),
                Vectors.onHeap(a.train()),
                a.test(),
                distance,
                o);
      }
    }
    return new Dataset(stem(file), file, Vectors.onHeap(a.train()), a.test(), gt, distance);
  }

  private static Dataset loadNpy(Path file, Options o) {
    float[][] all = NpyFiles.readFloats(file, Integer.MAX_VALUE);
    float[][] base = all;
    float[][] queries = null;
    String stem = stem(file);
    for (Path q :
        new Path[] {
          file.resolveSibling("query.npy"),
          file.resolveSibling("queries.npy"),
          file.resolveSibling(stem + "_query.npy")
        }) {
      if (!q.equals(file) && Files.isRegularFile(q)) {
        queries = NpyFiles.readFloats(q, Integer.MAX_VALUE);
        break;
      }
    }
    if (queries == null) {
      int h = Math.min(o.holdout, all.length / 2);
      base = Arrays.copyOf(all, all.length - h);
      queries = Arrays.copyOfRange(all, all.length - h, all.length);
      if (o.log != null) {
        o.log.printf(
            Locale.ROOT,
            "dataset %s: no query file, holding out the last %d rows as queries%n",
            file,
            h);
      }
    }
    Distance distance = o.distance != null ? o.distance : Distance.COSINE;
    int[][] gt = null;
    if (o.needGroundTruth) {
      gt =
          cachedGroundTruth(
              sibling(file, ".groundtruth." + distance.manifestName() + ".ivecs"),
              Vectors.onHeap(base),
              queries,
              distance,
              o);
    }
    return new Dataset(stem, file, Vectors.onHeap(base), queries, gt, distance);
  }

  private static int[][] cachedGroundTruth(
      Path gtFile, Vectors base, float[][] queries, Distance distance, Options o) {
    if (Files.isRegularFile(gtFile)) {
      int[][] gt = VecsFiles.readIvecs(gtFile);
      return checkGroundTruth(gt, base.size(), queries.length, gtFile);
    }
    long t0 = System.nanoTime();
    if (o.log != null) {
      o.log.printf(
          Locale.ROOT,
          "computing exact ground truth [queries=%d, base=%d, dim=%d, k=%d, distance=%s,"
              + " threads=%d, kernels=%s]%n",
          queries.length,
          base.size(),
          base.dim(),
          o.groundTruthK,
          distance.apiName(),
          o.threads,
          FloatKernels.get().name());
    }
    int[][] gt = GroundTruth.compute(base, queries, o.groundTruthK, distance, o.threads);
    VecsFiles.writeIvecs(gtFile, gt);
    if (o.log != null) {
      o.log.printf(
          Locale.ROOT,
          "ground truth written [file=%s, seconds=%.1f]%n",
          gtFile,
          (System.nanoTime() - t0) / 1e9);
    }
    return gt;
  }

  private static int[][] checkGroundTruth(int[][] gt, int baseSize, int queryCount, Path file) {
    if (gt.length < queryCount) {
      throw new DatasetFormatException(
          "ground truth has fewer rows than there are queries [file="
              + file
              + ", rows="
              + gt.length
              + ", queries="
              + queryCount
              + "]");
    }
    for (int[] row : gt) {
      for (int id : row) {
        if (id >= baseSize) {
          throw new DatasetFormatException(
              "ground truth id out of range [file="
                  + file
                  + ", id="
                  + id
                  + ", base="
                  + baseSize
                  + "]");
        }
      }
    }
    return gt.length == queryCount ? gt : Arrays.copyOf(gt, queryCount);
  }

  private static Path sibling(Path file, String suffix) {
    return file.resolveSibling(stem(file) + suffix);
  }

  private static String stem(Path file) {
    String n = file.getFileName().toString();
    int dot = n.lastIndexOf('.');
    return dot > 0 ? n.substring(0, dot) : n;
  }
}
