package io.flashvec.benchmarks;

import io.flashvec.index.disk.GraphFile;
import io.flashvec.storage.FileIO;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * The page-order rewrite of a partitioned build (ADR 0028) against a page cache smaller than the
 * graph: reads every record of a graph file once in a random order and writes them in that order,
 * as {@code PartitionedGraphBuilder.writeInPageOrder} does, once per read-ahead depth ({@code 0}:
 * fault one record at a time, as before; otherwise {@link GraphFile#nodesReadInOrder}). Run it with
 * the process capped far below the file (for example {@code scripts/bench/memlimit.sh 256M}), or
 * the file is read from the page cache and the figures mean nothing.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.flashvec.benchmarks.PageOrderRewrite [points] [dim]
 * [dir] [aheads]} (defaults: 3,000,000, 96, a temporary directory, {@code 0,64}). The source graph
 * ({@code dir/source.fvg}: random vectors, 64 random neighbours a node, seed {@link
 * AbstractBenchmark#SEED}) is written once and kept for later runs.
 */
public final class PageOrderRewrite {

  private static final int DEGREE = 64;

  private PageOrderRewrite() {}

  public static void main(String[] args) throws IOException {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 3_000_000;
    int dim = args.length > 1 ? Integer.parseInt(args[1]) : 96;
    Path dir = args.length > 2 ? Path.of(args[2]) : Files.createTempDirectory("flashvec-rewrite");
    String aheads = args.length > 3 ? args[3] : "0,64";
    Files.createDirectories(dir);
    Path source = dir.resolve("source.fvg");
    if (!Files.exists(source)) {
      long t0 = System.nanoTime();
      GraphFile.write(FileIO.DEFAULT, source, n, dim, DEGREE, 0, synthetic(n, dim), null);
      System.out.printf(
          Locale.ROOT,
          "wrote %s: %d MB in %d ms%n",
          source,
          Files.size(source) >> 20,
          (System.nanoTime() - t0) / 1_000_000);
    }
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    Random r = new Random(AbstractBenchmark.SEED);
    for (int i = n - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    System.out.printf(Locale.ROOT, "points=%d dim=%d seed=%d%n", n, dim, AbstractBenchmark.SEED);
    for (String a : aheads.split(",")) {
      int ahead = Integer.parseInt(a.trim());
      Path out = dir.resolve("rewritten.fvg");
      Files.deleteIfExists(out);
      try (GraphFile g = GraphFile.open(FileIO.DEFAULT, source, false)) {
        GraphFile.NodeSource nodes = ahead == 0 ? g.nodes() : g.nodesReadInOrder(order, ahead);
        long t0 = System.nanoTime();
        GraphFile.write(FileIO.DEFAULT, out, n, dim, g.maxDegree(), g.entry(), nodes, order);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf(
            Locale.ROOT,
            "ahead=%d: rewrite %d ms, %.0f records/s%n",
            ahead,
            ms,
            n * 1000.0 / Math.max(1, ms));
      }
      Files.deleteIfExists(out);
    }
  }

  /** Node {@code ord}: a vector and neighbours drawn from a generator seeded by the ordinal. */
  private static GraphFile.NodeSource synthetic(int n, int dim) {
    return new GraphFile.NodeSource() {
      @Override
      public float[] vector(int ord) {
        SplittableRandom r = new SplittableRandom(AbstractBenchmark.SEED ^ ord);
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
          v[i] = (float) r.nextGaussian();
        }
        return v;
      }

      @Override
      public int neighbours(int ord, int[] out) {
        SplittableRandom r = new SplittableRandom(~AbstractBenchmark.SEED ^ ord);
        for (int i = 0; i < DEGREE; i++) {
          out[i] = r.nextInt(n);
        }
        return DEGREE;
      }
    };
  }
}
