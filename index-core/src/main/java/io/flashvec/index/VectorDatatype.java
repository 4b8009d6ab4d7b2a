package io.flashvec.index;

import java.util.Locale;

/**
 * Qdrant's {@code datatype} of a dense vector: the element type its values are converted to when
 * they are written and when a query is made of them. FlashVec applies the conversion, so stored
 * values, returned vectors and scores are those of the converted values, but keeps the converted
 * values as {@code float32}: the setting does not reduce memory or disk (ADR text in the report
 * that introduced it).
 */
public enum VectorDatatype {
  /** Values kept as given. */
  FLOAT32("float32"),
  /** Values rounded to the nearest IEEE 754 half-precision value (ties to even). */
  FLOAT16("float16"),
  /**
   * Values truncated toward zero and clamped to {@code 0..255}, as Rust's {@code x as u8} (NaN is
   * refused before, as for every vector).
   */
  UINT8("uint8"),
  /**
   * Qdrant's {@code turbo4}: values coded with 4-bit TurboQuant ({@link TurboQuant}, the rotation
   * over the vector's own coordinates) and decoded again, so the vector keeps its length and,
   * closely, its direction. Deterministic: the same values always store the same result. Queries
   * are not converted (Qdrant compares them with the codes at full precision).
   */
  TURBO4("turbo4");

  /** The 4-bit encoders of {@link #TURBO4} by dimension (built once: the rotation's tables). */
  private static final java.util.concurrent.ConcurrentHashMap<Integer, TurboQuant> TURBO4_CODERS =
      new java.util.concurrent.ConcurrentHashMap<>();

  private static TurboQuant turbo4(int dim) {
    return TURBO4_CODERS.computeIfAbsent(dim, d -> new TurboQuant(d, TurboQuant.Bits.BITS4, false));
  }

  /**
   * {@code v}, {@code count} vectors of {@code dim} back to back (a multivector), each converted by
   * {@link #convert}.
   */
  public float[] convertEach(float[] v, int dim) {
    if (this != TURBO4 || v.length == dim) {
      return convert(v);
    }
    float[] out = new float[v.length];
    TurboQuant tq = turbo4(dim);
    for (int at = 0; at < v.length; at += dim) {
      System.arraycopy(
          tq.roundTrip(java.util.Arrays.copyOfRange(v, at, at + dim)), 0, out, at, dim);
    }
    return out;
  }

  /** The largest finite half-precision value. */
  static final float FLOAT16_MAX = 65504f;

  private final String apiName;

  VectorDatatype(String apiName) {
    this.apiName = apiName;
  }

  /** The name in Qdrant's API: {@code float32}, {@code float16}, {@code uint8}, {@code turbo4}. */
  public String apiName() {
    return apiName;
  }

  /** The datatype named {@code name} in Qdrant's API, or {@code null} for another name. */
  public static VectorDatatype parse(String name) {
    for (VectorDatatype d : values()) {
      if (d.apiName.equals(name.toLowerCase(Locale.ROOT))) {
        return d;
      }
    }
    return null;
  }

  /**
   * {@code v} converted to this datatype's values: {@code v} itself for {@code float32}, else a new
   * array. Values must be finite.
   *
   * @throws InvalidInputException for a {@code float16} value beyond the half-precision range
   *     (Qdrant would store an infinity)
   */
  public float[] convert(float[] v) {
    if (this == FLOAT32) {
      return v;
    }
    if (this == TURBO4) {
      return turbo4(v.length).roundTrip(v);
    }
    float[] out = new float[v.length];
    for (int i = 0; i < v.length; i++) {
      float x = v[i];
      if (this == UINT8) {
        out[i] = Math.clamp((long) x, 0, 255);
      } else {
        if (Math.abs(x) > FLOAT16_MAX) {
          throw new InvalidInputException(
              "Wrong input: vector value out of the float16 range (|value| <= 65504) [index="
                  + i
                  + ", value="
                  + x
                  + "]");
        }
        out[i] = Float.float16ToFloat(Float.floatToFloat16(x));
      }
    }
    return out;
  }
}
