package io.flashvec.index;

/**
 * Per-request search parameters. Zero means "the index's default".
 *
 * @param searchList size of the candidate list during graph search (alias {@code hnsw_ef})
 * @param beamWidth reads in flight per search step
 * @param rerankK how many approximate candidates are rescored with full vectors
 * @param exact scan every point instead of using the index
 */
public record SearchParams(int searchList, int beamWidth, int rerankK, boolean exact) {
  public static final SearchParams DEFAULT = new SearchParams(0, 0, 0, false);

  public SearchParams {
    if (searchList < 0 || beamWidth < 0 || rerankK < 0) {
      throw new InvalidInputException(
          "search params must not be negative [search_list="
              + searchList
              + ", beam_width="
              + beamWidth
              + ", rerank_k="
              + rerankK
              + "]");
    }
  }
}
