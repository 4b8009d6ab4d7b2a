package io.flashvec.loadgen.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per-request search parameters; a null field is not sent (the server's default applies).
 *
 * @param searchList beam search list size L (Qdrant's {@code hnsw_ef} is sent alongside)
 * @param beamWidth reads in flight per search step
 * @param rerankK candidates re-ranked with full-precision vectors
 */
public record SearchParams(Integer searchList, Integer beamWidth, Integer rerankK) {
  /** No parameters: server defaults. */
  public static final SearchParams DEFAULTS = new SearchParams(null, null, null);

  /** The parameters as they appear in a result ({@code search_list}, ...), only those set. */
  public Map<String, Integer> asMap() {
    Map<String, Integer> m = new LinkedHashMap<>();
    if (searchList != null) {
      m.put("search_list", searchList);
    }
    if (beamWidth != null) {
      m.put("beam_width", beamWidth);
    }
    if (rerankK != null) {
      m.put("rerank_k", rerankK);
    }
    return m;
  }

  /** A short label such as {@code L=40 W=4}, or {@code default}. */
  public String label() {
    StringBuilder sb = new StringBuilder();
    if (searchList != null) {
      sb.append("L=").append(searchList);
    }
    if (beamWidth != null) {
      sb.append(sb.isEmpty() ? "" : " ").append("W=").append(beamWidth);
    }
    if (rerankK != null) {
      sb.append(sb.isEmpty() ? "" : " ").append("R=").append(rerankK);
    }
    return sb.isEmpty() ? "default" : sb.toString();
  }
}
