package io.flashvec.index;

import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * TurboQuant codes of dense vectors (ADR 0045), the encoder behind Qdrant's {@code turbo}
 * quantization and its {@code turbo4} datatype.
 *
 * <p>A vector is zero-padded to {@link #paddedDim()} coordinates, rotated by a fixed pseudo-random
 * orthogonal transform (rounds of random signs, a random permutation and a normalised
 * Walsh-Hadamard transform over power-of-two blocks), and rescaled to length {@code
 * sqrt(paddedDim)}, so every coordinate is about standard normal whatever the input's spread. Each
 * coordinate is then coded by the Lloyd-Max quantiser of the standard normal distribution at the
 * configured bits (2, 4 or 16 centroids), packed low bits first. Two floats follow the packed
 * codes: the factor that maps centroids back to the vector's length ({@code length / |centroids|},
 * so a decoded vector has exactly the input's length) and the length itself.
 *
 * <p>A query is rotated once ({@link #query}) and compared with codes asymmetrically: its dot
 * product with the decoded vector, computed in the rotated space ({@link Query#estimate}).
 *
 * <p>The rotation is fixed by constant seeds, so the same input always gets the same code, on any
 * machine and run. Immutable and thread-safe.
 */
public final class TurboQuant {

  /** Qdrant's {@code bits} of TurboQuant: bits per coordinate. */
  public enum Bits {
    /** One bit per coordinate. */
    BITS1("bits1", 1),
    /**
     * One bit per coordinate over 1.5 times as many coordinates (the rotation spreads into them).
     */
    BITS1_5("bits1_5", 1),
    /** Two bits per coordinate. */
    BITS2("bits2", 2),
    /** Four bits per coordinate. */
    BITS4("bits4", 4);

    private final String apiName;
    private final int bitSize;

    Bits(String apiName, int bitSize) {
      this.apiName = apiName;
      this.bitSize = bitSize;
    }

    /** The name in Qdrant's API: {@code bits1}, {@code bits1_5}, {@code bits2}, {@code bits4}. */
    public String apiName() {
      return apiName;
    }

    /** Bits each coded coordinate takes. */
    public int bitSize() {
      return bitSize;
    }

    /** The bits named {@code name} in Qdrant's API, or {@code null} for another name. */
    public static Bits parse(String name) {
      for (Bits b : values()) {
        if (b.apiName.equals(name.toLowerCase(Locale.ROOT))) {
          return b;
        }
      }
      return null;
    }
  }

  // Lloyd-Max quantisers of the standard normal distribution (Max, 1960)
  private static final float[] CENTROIDS_1 = {-0.7978846f, 0.7978846f};
  private static final float[] CENTROIDS_2 = {-1.510f, -0.4528f, 0.4528f, 1.510f};
  private static final float[] CENTROIDS_4 = {
    -2.733f, -2.069f, -1.618f, -1.256f, -0.9424f, -0.6568f, -0.3881f, -0.1284f, 0.1284f, 0.3881f,
    0.6568f, 0.9424f, 1.256f, 1.618f, 2.069f, 2.733f
  };

  /** Rounds of signs, permutation and Hadamard transform. */
  static final int ROUNDS = 3;

  private static final long SEED = 0x7452_4251_4f51_5455L;

  /** Bytes after the packed codes: the decode factor and the length, two floats. */
  public static final int EXTRA_BYTES = 8;

  private final int dim;
  private final Bits bits;
  private final int paddedDim;
  private final int rotationDim;
  private final float[] centroids;
  private final float[] boundaries;
  private final int packedBytes;
  private final int[][] permutations;
  private final boolean[][] flips;
  private final int[] blocks; // power-of-two block sizes, largest first, summing to rotationDim

  /**
   * An encoder of {@code dim}-dimensional vectors at {@code bits}.
   *
   * @param padded whether the rotation spans the padded coordinates too (quantization codes; {@code
   *     bits1_5} needs it); {@code false} rotates the {@code dim} coordinates only, so the padding
   *     stays zero and a decoded vector loses nothing to it (the {@code turbo4} datatype)
   */
  public TurboQuant(int dim, Bits bits, boolean padded) {
    if (dim < 1) {
      throw new IllegalArgumentException("dimension must be positive [dim=" + dim + "]");
    }
    if (bits == Bits.BITS1_5 && !padded) {
      throw new IllegalArgumentException("bits1_5 needs a padded rotation");
    }
    this.dim = dim;
    this.bits = bits;
    this.paddedDim = bits == Bits.BITS1_5 ? dim + (dim + 1) / 2 : dim;
    this.rotationDim = padded ? paddedDim : dim;
    this.centroids =
        switch (bits.bitSize()) {
          case 1 -> CENTROIDS_1;
          case 2 -> CENTROIDS_2;
          default -> CENTROIDS_4;
        };
    this.boundaries = new float[centroids.length - 1];
    for (int i = 0; i < boundaries.length; i++) {
      boundaries[i] = (centroids[i] + centroids[i + 1]) / 2f;
    }
    this.packedBytes = (paddedDim * bits.bitSize() + 7) / 8;
    this.permutations = new int[ROUNDS][];
    this.flips = new boolean[ROUNDS][];
    for (int r = 0; r < ROUNDS; r++) {
      SplittableRandom rnd = new SplittableRandom(SEED + 31L * r + rotationDim);
      int[] p = new int[rotationDim];
      for (int i = 0; i < rotationDim; i++) {
        p[i] = i;
      }
      for (int i = rotationDim - 1; i > 0; i--) {
        int j = rnd.nextInt(i + 1);
        int t = p[i];
        p[i] = p[j];
        p[j] = t;
      }
      boolean[] f = new boolean[rotationDim];
      for (int i = 0; i < rotationDim; i++) {
        f[i] = rnd.nextBoolean();
      }
      permutations[r] = p;
      flips[r] = f;
    }
    int n = Integer.bitCount(rotationDim);
    this.blocks = new int[n];
    int rest = rotationDim;
    for (int i = 0; i < n; i++) {
      blocks[i] = Integer.highestOneBit(rest);
      rest -= blocks[i];
    }
  }

  public int dim() {
    return dim;
  }

  public Bits bits() {
    return bits;
  }

  /** Coordinates coded: {@code dim}, or {@code dim + ceil(dim / 2)} for {@code bits1_5}. */
  public int paddedDim() {
    return paddedDim;
  }

  /** Bytes of one vector's code: the packed coordinates and {@value #EXTRA_BYTES} more. */
  public int codeBytes() {
    return packedBytes + EXTRA_BYTES;
  }

  // ------------------------------------------------------------- rotation

  /** Rotates {@code x[0, rotationDim)} in place. */
  void rotate(double[] x) {
    double[] t = new double[rotationDim];
    for (int r = 0; r < ROUNDS; r++) {
      boolean[] f = flips[r];
      int[] p = permutations[r];
      for (int i = 0; i < rotationDim; i++) {
        t[i] = f[p[i]] ? -x[p[i]] : x[p[i]];
      }
      System.arraycopy(t, 0, x, 0, rotationDim);
      hadamard(x);
    }
  }

  /** The inverse of {@link #rotate}. */
  void rotateBack(double[] x) {
    double[] t = new double[rotationDim];
    for (int r = ROUNDS - 1; r >= 0; r--) {
      hadamard(x); // a normalised Hadamard transform is its own inverse
      boolean[] f = flips[r];
      int[] p = permutations[r];
      for (int i = 0; i < rotationDim; i++) {
        t[p[i]] = f[p[i]] ? -x[i] : x[i];
      }
      System.arraycopy(t, 0, x, 0, rotationDim);
    }
  }

  /** The normalised Walsh-Hadamard transform of each block of {@code x}. */
  private void hadamard(double[] x) {
    int start = 0;
    for (int len : blocks) {
      for (int h = 1; h < len; h <<= 1) {
        for (int i = start; i < start + len; i += h << 1) {
          for (int j = i; j < i + h; j++) {
            double a = x[j];
            double b = x[j + h];
            x[j] = a + b;
            x[j + h] = a - b;
          }
        }
      }
      double norm = 1.0 / Math.sqrt(len);
      for (int i = start; i < start + len; i++) {
        x[i] *= norm;
      }
      start += len;
    }
  }

  // ------------------------------------------------------------- encoding

  /** The code of {@code v[off, off + dim)}, a new array of {@link #codeBytes()}. */
  public byte[] encode(float[] v, int off) {
    byte[] out = new byte[codeBytes()];
    encode(v, off, out, 0);
    return out;
  }

  /** Writes the code of {@code v[off, off + dim)} into {@code out[outOff, outOff + codeBytes)}. */
  public void encode(float[] v, int off, byte[] out, int outOff) {
    double[] x = new double[paddedDim];
    for (int i = 0; i < dim; i++) {
      x[i] = v[off + i];
    }
    rotate(x);
    double sq = 0;
    for (int i = 0; i < paddedDim; i++) {
      sq += x[i] * x[i];
    }
    double length = Math.sqrt(sq);
    double rescale = length > 0 && Double.isFinite(length) ? Math.sqrt(paddedDim) / length : 0;
    Arrays.fill(out, outOff, outOff + packedBytes, (byte) 0);
    int b = bits.bitSize();
    double centroidSq = 0;
    for (int i = 0; i < paddedDim; i++) {
      int idx = code((float) (x[i] * rescale));
      double c = centroids[idx];
      centroidSq += c * c;
      int bit = i * b;
      out[outOff + (bit >>> 3)] |= (byte) (idx << (bit & 7));
    }
    float factor = length > 0 ? (float) (length / Math.sqrt(centroidSq)) : 0f;
    putFloat(out, outOff + packedBytes, factor);
    putFloat(out, outOff + packedBytes + 4, (float) length);
  }

  /** The centroid index of a rescaled coordinate. */
  private int code(float x) {
    int lo = 0;
    int hi = boundaries.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (x > boundaries[mid]) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** The centroid index of coordinate {@code i} of the code at {@code off}. */
  int index(byte[] code, int off, int i) {
    int b = bits.bitSize();
    int bit = i * b;
    return (code[off + (bit >>> 3)] >>> (bit & 7)) & ((1 << b) - 1);
  }

  /** The factor that maps the code's centroids back to its vector's length. */
  public float factor(byte[] code, int off) {
    return getFloat(code, off + packedBytes);
  }

  /** The length of the coded vector. */
  public float length(byte[] code, int off) {
    return getFloat(code, off + packedBytes + 4);
  }

  /** The vector the code at {@code off} stands for: centroids scaled, rotated back, unpadded. */
  public float[] decode(byte[] code, int off) {
    double factor = factor(code, off);
    double[] x = new double[paddedDim];
    for (int i = 0; i < paddedDim; i++) {
      x[i] = centroids[index(code, off, i)] * factor;
    }
    rotateBack(x);
    float[] out = new float[dim];
    for (int i = 0; i < dim; i++) {
      out[i] = (float) x[i] + 0f; // + 0f: a zero vector decodes to zeros, not negative zeros
    }
    return out;
  }

  /** {@code v} coded and decoded again: the values it is stored as with the {@code turbo4} type. */
  public float[] roundTrip(float[] v) {
    return decode(encode(v, 0), 0);
  }

  /** The dot product of the vectors two codes stand for, estimated from the codes alone. */
  public float dot(byte[] a, int ao, byte[] b, int bo) {
    double s = 0;
    for (int i = 0; i < paddedDim; i++) {
      s += (double) centroids[index(a, ao, i)] * centroids[index(b, bo, i)];
    }
    return (float) (s * factor(a, ao) * factor(b, bo));
  }

  /** A query prepared for {@link Query#estimate}: {@code q} rotated as the codes are. */
  public Query query(float[] q, int off) {
    return new Query(q, off);
  }

  /** A query rotated once, compared with any number of codes. Not thread-safe. */
  public final class Query {
    private final float[] rotated;
    private final float[] table; // rotated[i] * centroid[c], (1 << bits) entries per coordinate
    private final float squaredLength;

    private Query(float[] q, int off) {
      double[] x = new double[paddedDim];
      for (int i = 0; i < dim; i++) {
        x[i] = q[off + i];
      }
      rotate(x);
      rotated = new float[paddedDim];
      double sq = 0;
      for (int i = 0; i < paddedDim; i++) {
        rotated[i] = (float) x[i];
        sq += x[i] * x[i];
      }
      squaredLength = (float) sq;
      int c = centroids.length;
      table = new float[paddedDim * c];
      for (int i = 0; i < paddedDim; i++) {
        for (int j = 0; j < c; j++) {
          table[i * c + j] = rotated[i] * centroids[j];
        }
      }
    }

    /** The query's dot product with the vector the code at {@code off} stands for. */
    public float dot(byte[] code, int off) {
      int b = bits.bitSize();
      int c = centroids.length;
      int perByte = 8 / b;
      int mask = (1 << b) - 1;
      float s = 0f;
      int i = 0;
      for (int k = 0; i < paddedDim; k++) {
        int v = code[off + k];
        for (int j = 0; j < perByte && i < paddedDim; j++, i++) {
          s += table[i * c + ((v >>> (j * b)) & mask)];
        }
      }
      return s * factor(code, off);
    }

    /**
     * A distance estimate (lower is better): the squared L2 distance with {@code l2}, else the
     * negated dot product.
     */
    public float estimate(byte[] code, int off, boolean l2) {
      float d = dot(code, off);
      if (!l2) {
        return -d;
      }
      float len = length(code, off);
      return squaredLength + len * len - 2f * d;
    }
  }

  private static void putFloat(byte[] b, int off, float f) {
    int v = Float.floatToRawIntBits(f);
    b[off] = (byte) v;
    b[off + 1] = (byte) (v >>> 8);
    b[off + 2] = (byte) (v >>> 16);
    b[off + 3] = (byte) (v >>> 24);
  }

  private static float getFloat(byte[] b, int off) {
    return Float.intBitsToFloat(
        (b[off] & 0xff)
            | (b[off + 1] & 0xff) << 8
            | (b[off + 2] & 0xff) << 16
            | (b[off + 3] & 0xff) << 24);
  }
}
