package io.flashvec.index.diskann;

import io.flashvec.index.disk.PqCodes;
import io.github.jbellis.jvector.graph.ListRandomAccessVectorValues;
import io.github.jbellis.jvector.quantization.PQVectors;
import io.github.jbellis.jvector.quantization.ProductQuantization;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.ByteSequence;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import io.github.jbellis.jvector.vector.types.VectorTypeSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;

/**
 * Trains the product quantizer of a segment and encodes its vectors: codebooks in rotated principal
 * axes (ADR 0013), trained by jvector's k-means on a sample, and one code of {@code subspaces}
 * bytes per vector. The codes stay in RAM and guide the beam search; every expanded node is
 * rescored exactly.
 *
 * <p>Stateless; a training runs on the given fork-join pool ({@code null}: jvector's default
 * pools).
 */
public final class PqTrainer {

  private static final VectorTypeSupport VTS =
      VectorizationProvider.getInstance().getVectorTypeSupport();

  private PqTrainer() {}

  /** PQ bytes per vector of a segment: {@code configured} if set (above 0), else the default. */
  public static int subspaces(int configured, int dim) {
    return Math.min(configured > 0 ? configured : defaultSubspaces(dim), dim);
  }

  /**
   * PQ bytes per vector when the collection does not set {@code pq_subspaces}: {@code dim / 8} from
   * {@value #EIGHTH_FROM_DIM} dimensions, else {@code dim / 4} but at least 32 (at most {@code dim
   * / 2}), so that small vectors keep codes fine enough to rank near neighbours (1M × 96: 32 bytes
   * give recall@10 0.96 at search_list 100 where 24 give 0.94). With rotated PQ (ADR 0013) larger
   * vectors do better per CPU with the shorter code: one thread, 100k points, at recall@10 0.95
   * 768-d needs search list ~17 with 96 bytes (~133 µs per search) against 15 with 192 (170 µs), at
   * 0.99 40 (184 µs) against 30–40 (221–241 µs); 384-d at 0.95 L=20 with 48 bytes (75 µs) against
   * ~17 with 96 (~80 µs), at 0.988 108 against ~120 µs — and the codes take half the RAM.
   */
  public static int defaultSubspaces(int dim) {
    if (dim >= EIGHTH_FROM_DIM) {
      return dim / 8;
    }
    return Math.max(1, Math.max(dim / 4, Math.min(dim / 2, 32)));
  }

  /**
   * The smallest PQ code a memory budget may choose when the collection sets none: {@code dim / 32}
   * bytes, at least 4 (at most {@code dim}).
   */
  public static int minimumSubspaces(int dim) {
    return Math.min(dim, Math.max(4, dim / 32));
  }

  /** Dimension from which the default PQ code is {@code dim / 8} bytes. */
  static final int EIGHTH_FROM_DIM = 384;

  /** Points PQ is trained on when a codebook is trained from a live graph's segment. */
  public static final int TRAINING_SAMPLE = 25_000;

  /**
   * Heap that training a codebook of {@code dim}-dimensional vectors takes at most, about: the
   * {@link #TRAINING_SAMPLE} vectors, the rotation's sample, the rotated copies and k-means' own
   * copy of them (38 MB at 96 dimensions, 154 MB at 384).
   */
  public static long trainingBytes(int dim) {
    return trainingBytes(dim, TRAINING_SAMPLE);
  }

  /** Heap that training on {@code sample} points of {@code dim} dimensions takes at most, about. */
  public static long trainingBytes(int dim, int sample) {
    return 4L * sample * (4L * dim + 16);
  }

  /**
   * The fewest points a codebook is trained on: 20 for each of the 256 centroids of a subspace.
   * Fewer leave centroids that stand for one or two points.
   */
  public static final int MIN_TRAINING_SAMPLE = 5_120;

  /**
   * The largest training sample of {@code dim}-dimensional points, at most {@link
   * #TRAINING_SAMPLE}, whose training fits {@code bytes} of heap ({@link #trainingBytes(int,
   * int)}), or 0 when not even {@link #MIN_TRAINING_SAMPLE} points fit.
   */
  public static int trainingSampleWithin(int dim, long bytes) {
    long fits = bytes / trainingBytes(dim, 1);
    return fits < MIN_TRAINING_SAMPLE ? 0 : (int) Math.min(TRAINING_SAMPLE, fits);
  }

  /** Points whose covariance gives the rotation, and points the rotated codebook is trained on. */
  static final int ROTATION_SAMPLE = 20_000;

  static final int ROTATED_PQ_SAMPLE = 50_000;

  /**
   * Trains a product quantizer for {@code ravv}'s {@code n} vectors and encodes them, in rotated
   * principal axes ({@link io.flashvec.index.disk.PqRotation}, ADR 0013) with jvector's k-means for
   * the codebooks.
   */
  public static PqCodes train(
      ListRandomAccessVectorValues ravv,
      int n,
      int dim,
      int subspaces,
      boolean euclid,
      ForkJoinPool pool) {
    return train(ravv, n, dim, subspaces, euclid, pool, true);
  }

  /**
   * {@link #train(ListRandomAccessVectorValues, int, int, int, boolean, ForkJoinPool)}; without
   * {@code rotate}, plain codebooks in the original coordinates (for comparisons in tests and
   * benchmarks).
   */
  static PqCodes train(
      ListRandomAccessVectorValues ravv,
      int n,
      int dim,
      int subspaces,
      boolean euclid,
      ForkJoinPool pool,
      boolean rotate) {
    if (n == 0) {
      return new PqCodes(
          0, 1, dim, null, subspaceSizes(dim, subspaces), new float[dim], new byte[0]);
    }
    if (rotate && n >= 2 && dim >= 2) {
      return trainRotatedPq(ravv, n, dim, subspaces, pool);
    }
    return trainPlainPq(ravv, n, dim, subspaces, euclid, pool);
  }

  /** jvector's split of {@code dim} coordinates into {@code subspaces} consecutive groups. */
  private static int[] subspaceSizes(int dim, int subspaces) {
    int[] sizes = new int[subspaces];
    for (int s = 0; s < subspaces; s++) {
      sizes[s] = dim / subspaces + (s < dim % subspaces ? 1 : 0);
    }
    return sizes;
  }

  private static float[] toArray(VectorFloat<?> v, int dim) {
    float[] a = new float[dim];
    for (int i = 0; i < dim; i++) {
      a[i] = v.get(i);
    }
    return a;
  }

  private static PqCodes trainRotatedPq(
      ListRandomAccessVectorValues ravv, int n, int dim, int subspaces, ForkJoinPool pool) {
    int[] sizes = subspaceSizes(dim, subspaces);
    int rs = Math.min(n, ROTATION_SAMPLE);
    float[][] sample = new float[rs][];
    for (int i = 0; i < rs; i++) {
      sample[i] = toArray(ravv.getVector((int) ((long) i * n / rs)), dim);
    }
    io.flashvec.index.disk.PqRotation.Trained t =
        io.flashvec.index.disk.PqRotation.train(sample, dim, sizes);
    float[] mean = t.mean();
    float[] rotation = t.rotation();
    int ts = Math.min(n, ROTATED_PQ_SAMPLE);
    List<VectorFloat<?>> rotated = new ArrayList<>(ts);
    float[] x = new float[dim];
    for (int i = 0; i < ts; i++) {
      VectorFloat<?> v = ravv.getVector((int) ((long) i * n / ts));
      for (int d = 0; d < dim; d++) {
        x[d] = v.get(d) - mean[d];
      }
      float[] y = new float[dim];
      io.flashvec.index.disk.PqRotation.rotate(rotation, dim, x, y, 0);
      rotated.add(VTS.createFloatVector(y));
    }
    var rravv = new ListRandomAccessVectorValues(rotated, dim);
    int clusters = Math.min(256, ts);
    // k-means in the rotated, already centred space: no second centring
    ProductQuantization pq =
        pool != null
            ? ProductQuantization.compute(rravv, subspaces, clusters, false, -1f, pool, pool)
            : ProductQuantization.compute(rravv, subspaces, clusters, false);
    int m = pq.getSubspaceCount();
    for (int s = 0; s < m; s++) {
      if (m != sizes.length || pq.getSubvectorSize(s) != sizes[s]) {
        throw new IllegalStateException(
            "jvector split the subspaces differently [subspace="
                + s
                + ", jvector="
                + pq.getSubvectorSize(s)
                + ", expected="
                + (s < sizes.length ? sizes[s] : -1)
                + "]");
      }
    }
    io.flashvec.index.disk.PqCodebook book =
        new io.flashvec.index.disk.PqCodebook(
            clusters, dim, mean, sizes, codebookFloats(pq, clusters, sizes), rotation);
    byte[] codes = encodeAll(book, n, i -> toArray(ravv.getVector(i), dim), pool);
    return new PqCodes(book, n, codes);
  }

  /** Lloyd iterations of a seeded codebook's k-means (jvector runs as many). */
  static final int SEEDED_ITERATIONS = 6;

  /**
   * A rotated codebook, as {@link #train} trains, from the first {@code count} points of {@code
   * sample} ({@code dim} floats each, flat), with the seeded {@link KMeans} in place of jvector's
   * k-means: the same sample and seed give the same codebook, so a partitioned build is
   * reproducible. Trains on at most {@value #TRAINING_SAMPLE} evenly spaced points of the sample.
   */
  static io.flashvec.index.disk.PqCodebook trainSeeded(
      float[] sample,
      int count,
      int dim,
      int subspaces,
      long seed,
      ForkJoinPool pool,
      java.util.function.BooleanSupplier cancelled) {
    if (count < 1) {
      throw new IllegalArgumentException("no points to train PQ on [count=" + count + "]");
    }
    int[] sizes = subspaceSizes(dim, subspaces);
    int rs = Math.min(count, ROTATION_SAMPLE);
    float[][] rsample = new float[rs][];
    for (int i = 0; i < rs; i++) {
      int at = (int) ((long) i * count / rs);
      rsample[i] = java.util.Arrays.copyOfRange(sample, at * dim, at * dim + dim);
    }
    io.flashvec.index.disk.PqRotation.Trained t =
        dim >= 2 ? io.flashvec.index.disk.PqRotation.train(rsample, dim, sizes) : null;
    float[] mean = t != null ? t.mean() : new float[dim];
    int ts = Math.min(count, TRAINING_SAMPLE);
    float[] rotated = new float[ts * dim];
    float[] x = new float[dim];
    float[] y = new float[dim];
    for (int i = 0; i < ts; i++) {
      int at = (int) ((long) i * count / ts);
      for (int d = 0; d < dim; d++) {
        x[d] = sample[at * dim + d] - mean[d];
      }
      if (t != null) {
        io.flashvec.index.disk.PqRotation.rotate(t.rotation(), dim, x, y, 0);
        System.arraycopy(y, 0, rotated, i * dim, dim);
      } else {
        System.arraycopy(x, 0, rotated, i * dim, dim);
      }
    }
    int clusters = Math.min(256, ts);
    float[] books = new float[clusters * dim];
    int dimOffset = 0;
    int bookOffset = 0;
    for (int s = 0; s < sizes.length; s++) {
      int size = sizes[s];
      float[] sub = new float[ts * size];
      for (int i = 0; i < ts; i++) {
        System.arraycopy(rotated, i * dim + dimOffset, sub, i * size, size);
      }
      float[] c =
          KMeans.cluster(sub, ts, size, clusters, SEEDED_ITERATIONS, seed + s, pool, cancelled);
      System.arraycopy(c, 0, books, bookOffset, c.length);
      dimOffset += size;
      bookOffset += clusters * size;
    }
    return new io.flashvec.index.disk.PqCodebook(
        clusters, dim, mean, sizes, books, t != null ? t.rotation() : null);
  }

  /**
   * PQ codes of {@code n} vectors ({@code vector.apply(i)}), encoded in blocks of 1,024 in parallel
   * on {@code pool} ({@code null}: the common pool).
   */
  static byte[] encodeAll(
      io.flashvec.index.disk.PqCodebook book,
      int n,
      java.util.function.IntFunction<float[]> vector,
      ForkJoinPool pool) {
    int m = book.subspaces();
    byte[] codes = new byte[Math.multiplyExact(n, m)];
    Runnable encode =
        () ->
            java.util.stream.IntStream.range(0, (n + 1023) / 1024)
                .parallel()
                .forEach(
                    block -> {
                      float[] scratch = new float[book.scratchLength()];
                      for (int i = block * 1024; i < Math.min(n, block * 1024 + 1024); i++) {
                        book.encode(vector.apply(i), 0, codes, i * m, scratch);
                      }
                    });
    (pool != null ? pool : ForkJoinPool.commonPool()).submit(encode).join();
    return codes;
  }

  /** jvector's codebooks of {@code sizes} subspaces, subspace-major and centroid-major. */
  private static float[] codebookFloats(ProductQuantization pq, int clusters, int[] sizes) {
    int total = 0;
    for (int size : sizes) {
      total += size;
    }
    float[] books = new float[clusters * total];
    int at = 0;
    for (int s = 0; s < sizes.length; s++) {
      VectorFloat<?> cb = pq.getCodebookVector(s);
      for (int i = 0; i < clusters * sizes[s]; i++) {
        books[at++] = cb.get(i);
      }
    }
    return books;
  }

  /** jvector's product quantizer in the original coordinates, copied into {@link PqCodes}. */
  private static PqCodes trainPlainPq(
      ListRandomAccessVectorValues ravv,
      int n,
      int dim,
      int subspaces,
      boolean euclid,
      ForkJoinPool pool) {
    int clusters = Math.min(256, n);
    ProductQuantization pq =
        pool != null
            ? ProductQuantization.compute(ravv, subspaces, clusters, euclid, -1f, pool, pool)
            : ProductQuantization.compute(ravv, subspaces, clusters, euclid);
    PQVectors encoded =
        (PQVectors) pq.encodeAll(ravv, pool != null ? pool : ForkJoinPool.commonPool());
    int m = pq.getSubspaceCount();
    int[] sizes = new int[m];
    for (int s = 0; s < m; s++) {
      sizes[s] = pq.getSubvectorSize(s);
    }
    float[] books = codebookFloats(pq, clusters, sizes);
    float[] centroid = null;
    VectorFloat<?> gc = pq.getGlobalCentroid();
    if (gc != null) {
      boolean zero = true;
      centroid = new float[dim];
      for (int i = 0; i < dim; i++) {
        centroid[i] = gc.get(i);
        zero &= centroid[i] == 0f;
      }
      if (zero) {
        centroid = null;
      }
    }
    byte[] codes = new byte[Math.multiplyExact(n, m)];
    for (int i = 0; i < n; i++) {
      ByteSequence<?> c = encoded.get(i);
      for (int s = 0; s < m; s++) {
        codes[i * m + s] = c.get(s);
      }
    }
    return new PqCodes(n, clusters, dim, centroid, sizes, books, codes);
  }
}
