package io.flashvec.index;

import java.util.Locale;

/**
 * How sealed segments are indexed.
 *
 * @param type {@code diskann} (default), {@code hnsw} or {@code flat}
 * @param maxDegree graph max degree R
 * @param buildSearchList construction search list L
 * @param alpha pruning factor
 * @param pqSubspaces PQ subspaces, i.e. bytes per vector in RAM (0: dimension / 4, at least 32 up
 *     to dimension / 2)
 */
public record IndexParams(
    String type, int maxDegree, int buildSearchList, float alpha, int pqSubspaces) {

  public static final String DISKANN = "diskann";
  public static final String HNSW = "hnsw";
  public static final String FLAT = "flat";

  public static final IndexParams DEFAULT = new IndexParams(DISKANN, 64, 100, 1.2f, 0);

  public IndexParams {
    type = type == null ? DISKANN : type.toLowerCase(Locale.ROOT);
    if (!type.equals(DISKANN) && !type.equals(HNSW) && !type.equals(FLAT)) {
      throw new InvalidInputException(
          "unknown index type [type=" + type + ", allowed=diskann|hnsw|flat]");
    }
    if (maxDegree < 2 || maxDegree > 512) {
      throw new InvalidInputException(
          "max_degree out of range [max_degree=" + maxDegree + ", allowed=2..512]");
    }
    if (buildSearchList < 1 || buildSearchList > 10_000) {
      throw new InvalidInputException(
          "build_search_list out of range [build_search_list="
              + buildSearchList
              + ", allowed=1..10000]");
    }
    if (!(alpha >= 1.0f && alpha <= 4.0f)) {
      throw new InvalidInputException("alpha out of range [alpha=" + alpha + ", allowed=1.0..4.0]");
    }
    if (pqSubspaces < 0) {
      throw new InvalidInputException(
          "pq_subspaces must not be negative [pq_subspaces=" + pqSubspaces + "]");
    }
  }
}
