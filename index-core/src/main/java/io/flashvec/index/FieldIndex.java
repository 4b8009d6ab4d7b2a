package io.flashvec.index;

/**
 * How sealed segments index a dense field other than the primary one (ADR 0040): a graph over the
 * points that have it, navigated by int8 codes held in memory and rescored with the full vectors,
 * or none (the field is scanned exactly, as growing segments always scan it).
 *
 * @param m Qdrant's {@code m}: the graph keeps {@code 2m} neighbours per node; {@code 0}: no graph
 * @param efConstruct the graph's construction search list, and the default search list
 * @param quantile the fraction of values the int8 codes cover unclipped, from Qdrant's scalar
 *     quantization ({@code NaN}: the largest sampled magnitude with headroom)
 * @param hnswConfig the field's own {@code hnsw_config} as given, compact JSON ({@code null}: none)
 * @param quantizationConfig the scalar {@code quantization_config} in force for the field as given,
 *     compact JSON ({@code null}: none)
 * @param quantizationInherited whether {@code quantizationConfig} is the collection's rather than
 *     the field's own
 * @param turbo the bits of Qdrant's {@code turbo} quantization, whose TurboQuant codes the graph's
 *     searches navigate by ({@link TurboQuant}, ADR 0045); {@code null}: int8 codes only
 */
public record FieldIndex(
    int m,
    int efConstruct,
    float quantile,
    String hnswConfig,
    String quantizationConfig,
    boolean quantizationInherited,
    TurboQuant.Bits turbo) {

  /** An index navigated by int8 codes (no turbo quantization). */
  public FieldIndex(
      int m,
      int efConstruct,
      float quantile,
      String hnswConfig,
      String quantizationConfig,
      boolean quantizationInherited) {
    this(m, efConstruct, quantile, hnswConfig, quantizationConfig, quantizationInherited, null);
  }

  /** Qdrant's defaults: {@code m} 16, {@code ef_construct} 100, no quantization. */
  public static final FieldIndex DEFAULT = new FieldIndex(16, 100, Float.NaN, null, null, false);

  /** No graph: every search scans the field exactly. */
  public static final FieldIndex NONE = new FieldIndex(0, 100, Float.NaN, null, null, false);

  public FieldIndex {
    if (m < 0 || m > 256 || efConstruct < 1) {
      throw new InvalidInputException(
          "invalid field index [m=" + m + ", ef_construct=" + efConstruct + "]");
    }
    if (!Float.isNaN(quantile) && !(quantile >= 0.5f && quantile <= 1f)) {
      throw new InvalidInputException("quantile must be from 0.5 to 1 [quantile=" + quantile + "]");
    }
    if (turbo != null && (quantizationConfig == null || !Float.isNaN(quantile))) {
      throw new InvalidInputException(
          "turbo quantization needs its quantization_config and no scalar quantile");
    }
  }

  /** Whether sealed segments build a graph of the field. */
  public boolean graph() {
    return m > 0;
  }

  /**
   * Whether quantization (scalar, or turbo: {@link #turbo}) is configured for the field, its own or
   * the collection's.
   */
  public boolean scalar() {
    return quantizationConfig != null;
  }
}
