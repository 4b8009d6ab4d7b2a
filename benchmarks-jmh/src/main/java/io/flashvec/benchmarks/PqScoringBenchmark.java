package io.flashvec.benchmarks;

import io.flashvec.index.disk.PqCodes;
import io.flashvec.index.diskann.PqTrainer;
import io.flashvec.index.internal.VectorOps;
import io.github.jbellis.jvector.graph.ListRandomAccessVectorValues;
import io.github.jbellis.jvector.graph.similarity.ScoreFunction;
import io.github.jbellis.jvector.quantization.PQVectors;
import io.github.jbellis.jvector.quantization.ProductQuantization;
import io.github.jbellis.jvector.vector.VectorSimilarityFunction;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import io.github.jbellis.jvector.vector.types.VectorTypeSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Scoring {@value #CANDIDATES} candidates of one query with jvector's product quantization, the way
 * {@code DiskAnnSegment} guides its beam search, against exact dot products on the full vectors.
 *
 * <ul>
 *   <li>{@code pqTable}: building the query's lookup table ({@code subspaces × 256} partial dot
 *       products), paid once per query and segment.
 *   <li>{@code pqScore}: the table plus {@value #CANDIDATES} lookups ({@code similarityTo}); {@code
 *       pqScore − pqTable} is the lookup cost.
 *   <li>{@code flashvecTable} / {@code flashvecScore}: the same with FlashVec's own {@link PqCodes}
 *       (same codebook and codes), scoring the candidates in batches of {@value #BATCH} — one
 *       neighbour list at a time, as {@code BeamSearcher} does — with one tight loop per batch
 *       instead of a virtual call per candidate.
 *   <li>{@code exactScore}: {@value #CANDIDATES} {@link VectorOps#dot} calls on the full vectors of
 *       the same ordinals (on-heap, one flat array), the rerank cost PQ saves.
 * </ul>
 *
 * <p>The codebook is trained exactly as {@code DiskAnnWriter.write} trains it (cosine data, so
 * dot-product similarity, no global centering, {@code min(256, n)} clusters); the segment keeps its
 * codes private, so this benchmark calls jvector itself and must follow a jvector upgrade.
 * Candidates are {@value #CANDIDATES} seeded random ordinals per query: a graph search visits
 * scattered nodes, not a range. Default {@code subspaces} of the segment is {@code dim / 8}.
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PqScoringBenchmark extends AbstractBenchmark {

  static final int CANDIDATES = 1000;
  static final int QUERIES = 256;
  static final int BATCH = 64;
  static final VectorSimilarityFunction VSF = VectorSimilarityFunction.DOT_PRODUCT;
  private static final VectorTypeSupport VTS =
      VectorizationProvider.getInstance().getVectorTypeSupport();

  @Param("20000")
  public int n;

  @Param("128")
  public int dim;

  @Param({"16", "32"})
  public int subspaces;

  PQVectors codes;
  PqCodes ours;
  float[] table;
  float[] scratch;
  int[] batch = new int[BATCH];
  float[] batchOut = new float[BATCH];
  int[] idx = new int[64];
  float[] flat; // n × dim, the full vectors back to back
  float[][] queries;
  VectorFloat<?>[] jvQueries;
  int[][] candidates;
  int cursor;

  @Setup(Level.Trial)
  public void setup() {
    if ((long) n * dim > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "data too large for one array [n=" + n + ", dim=" + dim + "]");
    }
    if (subspaces < 1 || subspaces > dim) {
      throw new IllegalArgumentException(
          "subspaces out of range [subspaces=" + subspaces + ", allowed=1.." + dim + "]");
    }
    SyntheticVectors model = new SyntheticVectors(SEED, dim);
    float[][] data = model.sample(n, 1);
    flat = new float[n * dim];
    List<VectorFloat<?>> vectors = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      System.arraycopy(data[i], 0, flat, i * dim, dim);
      vectors.add(VTS.createFloatVector(data[i]));
    }
    var ravv = new ListRandomAccessVectorValues(vectors, dim);
    ProductQuantization pq =
        ProductQuantization.compute(ravv, subspaces, Math.max(2, Math.min(256, n)), false);
    codes = pq.encodeAll(ravv, ForkJoinPool.commonPool());
    ours = PqTrainer.train(ravv, n, dim, subspaces, false, null);
    table = ours.newTable();
    scratch = new float[dim];
    queries = model.sample(QUERIES, 2);
    jvQueries = new VectorFloat<?>[QUERIES];
    candidates = new int[QUERIES][CANDIDATES];
    SplittableRandom r = new SplittableRandom(SEED);
    for (int q = 0; q < QUERIES; q++) {
      jvQueries[q] = VTS.createFloatVector(queries[q]);
      for (int c = 0; c < CANDIDATES; c++) {
        candidates[q][c] = r.nextInt(n);
      }
    }
  }

  private int next() {
    int q = cursor;
    cursor = q + 1 == QUERIES ? 0 : q + 1;
    return q;
  }

  @Benchmark
  public void pqTable(Blackhole bh) {
    bh.consume(codes.precomputedScoreFunctionFor(jvQueries[next()], VSF));
  }

  @Benchmark
  public void pqScore(Blackhole bh) {
    int q = next();
    ScoreFunction.ApproximateScoreFunction f = codes.precomputedScoreFunctionFor(jvQueries[q], VSF);
    for (int ord : candidates[q]) {
      bh.consume(f.similarityTo(ord));
    }
  }

  @Benchmark
  public void exactScore(Blackhole bh) {
    int q = next();
    float[] query = queries[q];
    for (int ord : candidates[q]) {
      bh.consume(VectorOps.dot(query, 0, flat, ord * dim, dim));
    }
  }

  @Benchmark
  public void flashvecTable(Blackhole bh) {
    ours.fillTable(queries[next()], false, table, scratch);
    bh.consume(table);
  }

  @Benchmark
  public void flashvecScore(Blackhole bh) {
    scoreBatches(bh, false);
  }

  @Benchmark
  public void flashvecScoreGather(Blackhole bh) {
    scoreBatches(bh, true);
  }

  private void scoreBatches(Blackhole bh, boolean gather) {
    int q = next();
    ours.fillTable(queries[q], false, table, scratch);
    int[] c = candidates[q];
    for (int i = 0; i < CANDIDATES; i += BATCH) {
      int len = Math.min(BATCH, CANDIDATES - i);
      System.arraycopy(c, i, batch, 0, len);
      if (gather) {
        ours.distancesGather(table, batch, len, batchOut, idx);
      } else {
        ours.distances(table, batch, len, batchOut);
      }
      bh.consume(batchOut);
    }
  }
}
