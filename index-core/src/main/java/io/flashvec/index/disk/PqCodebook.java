package io.flashvec.index.disk;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * A product-quantization codebook: {@code K} centroids per subspace, optionally relative to a
 * global centroid. It fills per-query lookup tables (asymmetric distance computation), encodes
 * vectors and scores codes; {@link PqCodes} pairs it with the codes of a sealed segment, and a
 * growing segment encodes its points with the codebook of its shard's newest sealed segment (so
 * sealing it needs no new training). Immutable and thread-safe.
 *
 * <p>A codebook may carry an orthonormal {@code rotation} (ADR 0013): points and queries are
 * centred and rotated into the principal axes of the training sample, whose directions are dealt to
 * the subspaces so that every subspace holds a similar share of the variance (the eigenvalue
 * allocation of optimized PQ). Rotations keep L2 distances and dot products, so the distances stay
 * those of the original space; only the quantization error shrinks, by a lot on embeddings whose
 * variance sits in a few dozen directions.
 *
 * <p>Distances are "lower is better": for L2 the squared distance to the reconstruction, for dot
 * product the negated dot product.
 */
public final class PqCodebook {

  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final VectorSpecies<Integer> ISPECIES =
      VectorSpecies.of(int.class, SPECIES.vectorShape());
  private static final VectorSpecies<Byte> BSPECIES =
      VectorSpecies.of(byte.class, VectorShape.forBitSize(SPECIES.vectorBitSize() / 4));

  final int m;
  final int k;
  final int dim;
  final float[] centroid; // null unless centered
  final int[] sizes;
  private final int[] offsets; // dimension offset of each subspace
  final float[] codebooks;
  final float[] rotation; // null, or dim x dim row-major: row r is output coordinate r
  private final short[] rotationHalf; // the rotation in bfloat16, for queries (fillTable)

  /** Per subspace, dimension-major: {@code [s][i][c]}, so a table row is one SIMD sweep. */
  private final float[] transposed;

  private final int[] codebookOffsets; // float offset of each subspace's K centroids
  private final int[] rowBase; // s * K, padded to whole vectors

  /**
   * A codebook of {@code k} centroids for each of {@code sizes.length} subspaces ({@code
   * codebooks}: subspace-major, centroid-major), relative to {@code centroid} when not null.
   */
  public PqCodebook(int k, int dim, float[] centroid, int[] sizes, float[] codebooks) {
    this(k, dim, centroid, sizes, codebooks, null);
  }

  /**
   * A codebook whose subspaces live in the coordinates {@code rotation · (x − centroid)} ({@code
   * rotation}: {@code dim × dim}, row-major, orthonormal rows; {@code null} for none).
   */
  public PqCodebook(
      int k, int dim, float[] centroid, int[] sizes, float[] codebooks, float[] rotation) {
    if (rotation != null && rotation.length != (long) dim * dim) {
      throw new IllegalArgumentException(
          "PQ rotation is not dim x dim [dim=" + dim + ", floats=" + rotation.length + "]");
    }
    this.rotation = rotation;
    this.rotationHalf = rotation == null ? null : PqRotation.toBfloat16(rotation);
    this.m = sizes.length;
    this.k = k;
    this.dim = dim;
    this.centroid = centroid;
    this.sizes = sizes;
    this.offsets = new int[m];
    this.codebookOffsets = new int[m];
    int d = 0;
    int c = 0;
    for (int i = 0; i < m; i++) {
      offsets[i] = d;
      codebookOffsets[i] = c;
      d += sizes[i];
      c += k * sizes[i];
    }
    if (d != dim || c != codebooks.length || k > 256 || k < 1) {
      throw new IllegalArgumentException(
          "inconsistent PQ codebook [dim="
              + dim
              + ", sum of sizes="
              + d
              + ", codebook floats="
              + codebooks.length
              + ", M="
              + m
              + ", K="
              + k
              + "]");
    }
    this.codebooks = codebooks;
    this.rowBase = new int[m + ISPECIES.length()];
    for (int s = 0; s < rowBase.length; s++) {
      rowBase[s] = s * k;
    }
    this.transposed = new float[codebooks.length];
    for (int s = 0; s < m; s++) {
      int co = codebookOffsets[s];
      for (int cc = 0; cc < k; cc++) {
        for (int i = 0; i < sizes[s]; i++) {
          transposed[co + i * k + cc] = codebooks[co + cc * sizes[s] + i];
        }
      }
    }
  }

  /**
   * A codebook of these contents ({@link #PqCodebook(int, int, float[], int[], float[], float[])}),
   * the same object as a live one of equal contents: consecutive seals of a shard share their
   * codebook (ADR 0047), and a shard of a hundred segments would otherwise hold a hundred copies of
   * it (about 250 KB each at 96 dimensions: the centroids twice, the rotation in two precisions).
   * Process-wide and weak: a codebook no segment holds any more is collected.
   */
  public static PqCodebook shared(
      int k, int dim, float[] centroid, int[] sizes, float[] codebooks, float[] rotation) {
    int hash = contentHash(k, dim, centroid, sizes, codebooks, rotation);
    synchronized (SHARED) {
      forgetCollected();
      List<Shared> same = SHARED.get(hash);
      if (same != null) {
        for (Shared ref : same) {
          PqCodebook book = ref.get();
          if (book != null && book.holds(k, dim, centroid, sizes, codebooks, rotation)) {
            return book;
          }
        }
      }
      PqCodebook made = new PqCodebook(k, dim, centroid, sizes, codebooks, rotation);
      SHARED.computeIfAbsent(hash, h -> new ArrayList<>(1)).add(new Shared(hash, made));
      return made;
    }
  }

  /**
   * Live shared codebooks by the hash of their contents ({@link #shared}). The references hold only
   * the hash, so a collected codebook leaves nothing of its arrays behind; guarded by itself.
   */
  private static final Map<Integer, List<Shared>> SHARED = new HashMap<>();

  private static final ReferenceQueue<PqCodebook> SHARED_GONE = new ReferenceQueue<>();

  /**
   * How many codebooks are registered under the hash of these contents, collected ones not yet
   * purged excluded (for tests).
   */
  static int sharedWith(
      int k, int dim, float[] centroid, int[] sizes, float[] codebooks, float[] rotation) {
    int hash = contentHash(k, dim, centroid, sizes, codebooks, rotation);
    synchronized (SHARED) {
      forgetCollected();
      List<Shared> same = SHARED.get(hash);
      return same == null ? 0 : same.size();
    }
  }

  /** Drops the entries of collected codebooks; the caller holds {@code SHARED}'s monitor. */
  private static void forgetCollected() {
    for (Object gone; (gone = SHARED_GONE.poll()) != null; ) {
      forget((Shared) gone);
    }
  }

  private static void forget(Shared ref) {
    List<Shared> same = SHARED.get(ref.hash);
    if (same != null && same.remove(ref) && same.isEmpty()) {
      SHARED.remove(ref.hash);
    }
  }

  private static final class Shared extends WeakReference<PqCodebook> {
    final int hash;

    Shared(int hash, PqCodebook book) {
      super(book, SHARED_GONE);
      this.hash = hash;
    }
  }

  private static int contentHash(
      int k, int dim, float[] centroid, int[] sizes, float[] codebooks, float[] rotation) {
    int h = 31 * k + dim;
    h = 31 * h + Arrays.hashCode(sizes);
    h = 31 * h + Arrays.hashCode(centroid);
    h = 31 * h + Arrays.hashCode(codebooks);
    return 31 * h + Arrays.hashCode(rotation);
  }

  /** Whether this codebook was made of arrays equal to these. */
  private boolean holds(
      int k, int dim, float[] centroid, int[] sizes, float[] codebooks, float[] rotation) {
    return this.k == k
        && this.dim == dim
        && Arrays.equals(this.sizes, sizes)
        && Arrays.equals(this.centroid, centroid)
        && Arrays.equals(this.codebooks, codebooks)
        && Arrays.equals(this.rotation, rotation);
  }

  public int subspaces() {
    return m;
  }

  public int clusters() {
    return k;
  }

  public int dimension() {
    return dim;
  }

  /** Whether this codebook can encode {@code dim}-dimensional vectors of metric {@code euclid}. */
  public boolean fits(int dim) {
    return this.dim == dim;
  }

  /** Whether points are rotated before they are quantized. */
  public boolean rotated() {
    return rotation != null;
  }

  /**
   * Squared L2 distances between the centroids of each subspace, {@code [s][a][b]} flat ({@code
   * M*K*K} floats): with {@link #symmetric}, the distance between two encoded points estimated
   * without their vectors (rotation and centring keep L2 distances).
   */
  public float[] symmetricTable() {
    return pairTable(false);
  }

  /**
   * Dot products between the centroids of each subspace, {@code [s][a][b]} flat: with {@link
   * #symmetric}, the estimated dot product of two encoded points' rotated, centred vectors; add
   * {@code dot(centre, x) + dot(centre, y) - dot(centre, centre)} ({@link #centre()}) for theirs.
   */
  public float[] symmetricDotTable() {
    return pairTable(true);
  }

  private float[] pairTable(boolean dot) {
    float[] t = new float[m * k * k];
    for (int s = 0; s < m; s++) {
      int co = codebookOffsets[s];
      int size = sizes[s];
      for (int a = 0; a < k; a++) {
        for (int b = a; b < k; b++) {
          float d = 0;
          for (int i = 0; i < size; i++) {
            float x = codebooks[co + a * size + i];
            float y = codebooks[co + b * size + i];
            d += dot ? x * y : (x - y) * (x - y);
          }
          t[(s * k + a) * k + b] = d;
          t[(s * k + b) * k + a] = d;
        }
      }
    }
    return t;
  }

  /**
   * The sum over subspaces of {@code table} ({@link #symmetricTable} or {@link #symmetricDotTable})
   * at the codes of the points encoded at {@code codes[a*M ..]} and {@code codes[b*M ..]}.
   */
  public float symmetric(float[] table, byte[] codes, int a, int b) {
    int ao = a * m;
    int bo = b * m;
    float d = 0;
    for (int s = 0; s < m; s++) {
      d += table[(s * k + (codes[ao + s] & 0xFF)) * k + (codes[bo + s] & 0xFF)];
    }
    return d;
  }

  /** A copy of the vector subtracted before encoding, or {@code null} for none. */
  public float[] centre() {
    return centroid == null ? null : centroid.clone();
  }

  /** Floats of scratch {@link #fillTable} and {@link #encode} need. */
  public int scratchLength() {
    return rotation == null ? dim : 2 * dim;
  }

  /** The per-query lookup table: {@code M*K} partial distances. */
  public float[] newTable() {
    return new float[m * k];
  }

  /**
   * Fills {@code table} for a query: entry {@code s*K + c} is subspace {@code s}'s contribution of
   * centroid {@code c} (squared L2, or the negated dot product). {@code scratch}: {@link
   * #scratchLength()} floats.
   */
  public void fillTable(float[] query, boolean euclid, float[] table, float[] scratch) {
    float[] q = query;
    if (centroid != null && euclid) {
      q = scratch;
      for (int i = 0; i < dim; i++) {
        q[i] = query[i] - centroid[i];
      }
    }
    if (rotation != null) {
      // dot(q, x − c) = dot(Rq, R(x − c)), and |q − x| = |R(q − c) − R(x − c)|
      // bfloat16: half the bytes of a memory-bound matrix (768-d, one thread at search list 15:
      // 224 → 171 µs per search; recall@10 0.9523 → 0.9522); the data was encoded exactly
      PqRotation.rotateHalf(rotationHalf, dim, q, scratch, dim);
      q = scratch;
      System.arraycopy(scratch, dim, q, 0, dim);
    }
    int bound = SPECIES.loopBound(k);
    for (int s = 0; s < m; s++) {
      int t = s * k;
      int qo = offsets[s];
      int co = codebookOffsets[s];
      int size = sizes[s];
      int c = 0;
      for (; c < bound; c += SPECIES.length()) {
        FloatVector acc = FloatVector.zero(SPECIES);
        for (int i = 0; i < size; i++) {
          FloatVector vq = FloatVector.broadcast(SPECIES, q[qo + i]);
          FloatVector b = FloatVector.fromArray(SPECIES, transposed, co + i * k + c);
          if (euclid) {
            FloatVector d = vq.sub(b);
            acc = d.fma(d, acc);
          } else {
            acc = vq.fma(b, acc);
          }
        }
        acc.intoArray(table, t + c);
      }
      for (; c < k; c++) {
        float acc = 0;
        for (int i = 0; i < size; i++) {
          float qi = q[qo + i];
          float b = transposed[co + i * k + c];
          acc += euclid ? (qi - b) * (qi - b) : qi * b;
        }
        table[t + c] = acc;
      }
    }
    if (!euclid) {
      for (int i = 0; i < m * k; i++) {
        table[i] = -table[i];
      }
    }
    if (centroid != null && !euclid) {
      // dot(q, x) = dot(q, centroid) + dot(q, x - centroid): a constant per query, kept so the
      // approximate distances stay on the scale of the exact ones.
      float base = 0;
      for (int i = 0; i < dim; i++) {
        base -= query[i] * centroid[i];
      }
      for (int c = 0; c < k; c++) {
        table[c] += base;
      }
    }
  }

  /**
   * Encodes {@code v[off, off+dim)}: per subspace the nearest centroid (squared L2, after the
   * global centroid is subtracted and the rotation applied), written to {@code out[outOff,
   * outOff+M)}. {@code scratch}: at least {@link #scratchLength()} floats.
   */
  public void encode(float[] v, int off, byte[] out, int outOff, float[] scratch) {
    float[] x = scratch;
    for (int i = 0; i < dim; i++) {
      x[i] = centroid == null ? v[off + i] : v[off + i] - centroid[i];
    }
    if (rotation != null) {
      PqRotation.rotate(rotation, dim, x, scratch, dim);
      System.arraycopy(scratch, dim, x, 0, dim);
    }
    int lanes = SPECIES.length();
    int bound = SPECIES.loopBound(k);
    for (int s = 0; s < m; s++) {
      int qo = offsets[s];
      int co = codebookOffsets[s];
      int size = sizes[s];
      // SIMD: the distances of `lanes` centroids at a time, keeping the running minimum per lane
      FloatVector best = FloatVector.broadcast(SPECIES, Float.MAX_VALUE);
      IntVector bestIdx = IntVector.zero(ISPECIES);
      IntVector lane = IntVector.zero(ISPECIES).addIndex(1);
      int c = 0;
      for (; c < bound; c += lanes) {
        FloatVector acc = FloatVector.zero(SPECIES);
        for (int i = 0; i < size; i++) {
          FloatVector d =
              FloatVector.broadcast(SPECIES, x[qo + i])
                  .sub(FloatVector.fromArray(SPECIES, transposed, co + i * k + c));
          acc = d.fma(d, acc);
        }
        var lt = acc.lt(best);
        best = best.blend(acc, lt);
        bestIdx = bestIdx.blend(lane.add(c), lt.cast(ISPECIES));
      }
      float bestDist = Float.MAX_VALUE;
      int bestC = 0;
      for (int l = 0; l < lanes && bound > 0; l++) {
        float d = best.lane(l);
        int idx = bestIdx.lane(l);
        if (d < bestDist || (d == bestDist && idx < bestC)) {
          bestDist = d;
          bestC = idx;
        }
      }
      for (; c < k; c++) {
        float acc = 0;
        for (int i = 0; i < size; i++) {
          float d = x[qo + i] - transposed[co + i * k + c];
          acc += d * d;
        }
        if (acc < bestDist) {
          bestDist = acc;
          bestC = c;
        }
      }
      out[outOff + s] = (byte) bestC;
    }
  }

  /**
   * Approximate distances of {@code n} points at once: {@code out[j]} for the codes at {@code
   * codes[ids[j] * M]}. The loop walks each point's {@code M} code bytes in order with four
   * independent sums, so the table lookups pipeline instead of waiting on one accumulator.
   */
  public void distances(float[] table, byte[] codes, int[] ids, int n, float[] out) {
    final byte[] c = codes;
    final int mm = m;
    final int kk = k;
    final int m4 = mm & ~3;
    for (int j = 0; j < n; j++) {
      int base = ids[j] * mm;
      float a0 = 0;
      float a1 = 0;
      float a2 = 0;
      float a3 = 0;
      int s = 0;
      int t = 0;
      for (; s < m4; s += 4, t += 4 * kk) {
        a0 += table[t + (c[base + s] & 0xff)];
        a1 += table[t + kk + (c[base + s + 1] & 0xff)];
        a2 += table[t + 2 * kk + (c[base + s + 2] & 0xff)];
        a3 += table[t + 3 * kk + (c[base + s + 3] & 0xff)];
      }
      for (; s < mm; s++, t += kk) {
        a0 += table[t + (c[base + s] & 0xff)];
      }
      out[j] = (a0 + a1) + (a2 + a3);
    }
  }

  /**
   * The approximate distance of the codes at {@code codes[base, base+M)} with SIMD gathers: the
   * code bytes are widened to table indices ({@code s*K + code}) {@code lanes} at a time and the
   * table entries gathered and summed in vector registers. {@code idx} is scratch of at least
   * {@link #gatherScratchLength()} ints.
   */
  public float distanceGather(float[] table, byte[] codes, int base, int[] idx) {
    final int mm = m;
    final int lanes = ISPECIES.length();
    final int bound = mm - mm % lanes;
    FloatVector acc = FloatVector.zero(SPECIES);
    int s = 0;
    for (; s < bound; s += lanes) {
      IntVector iv =
          (IntVector)
              ByteVector.fromArray(BSPECIES, codes, base + s)
                  .convertShape(VectorOperators.ZERO_EXTEND_B2I, ISPECIES, 0);
      iv.add(IntVector.fromArray(ISPECIES, rowBase, s)).intoArray(idx, 0);
      acc = acc.add(FloatVector.fromArray(SPECIES, table, 0, idx, 0));
    }
    float sum = acc.reduceLanes(VectorOperators.ADD);
    for (; s < mm; s++) {
      sum += table[s * k + (codes[base + s] & 0xff)];
    }
    return sum;
  }

  /** Whether SIMD gathers beat the scalar loop for this codebook (JMH PqScoringBenchmark). */
  public boolean gatherWins() {
    return m >= ISPECIES.length();
  }

  public int gatherScratchLength() {
    return ISPECIES.length();
  }

  /** Heap bytes held. */
  public long memoryBytes() {
    return 8L * codebooks.length
        + (centroid == null ? 0 : 4L * dim)
        + (rotation == null ? 0 : 6L * rotation.length)
        + 64;
  }
}
