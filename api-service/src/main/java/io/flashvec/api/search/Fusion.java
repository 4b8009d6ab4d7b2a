package io.flashvec.api.search;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Fusion of the result lists of a hybrid query's prefetches, as Qdrant's universal query does it.
 *
 * <ul>
 *   <li>{@code rrf} (reciprocal rank fusion): a point scores {@code Σ 1 / (k + position)} over the
 *       lists it appears in, position starting at 0 as in Qdrant (the best of a list adds {@code
 *       1/k}); {@code k} is 2 as in Qdrant, or {@code {"rrf": {"k": n}}} with n ≥ 1. With {@code
 *       {"rrf": {"weights": [w…]}}} (one per list) a list's position p adds {@code 1 / ((p + 1) / w
 *       + k − 1)}, Qdrant's weighted form: weight 3 counts a list's third result like another's
 *       first, and a weight of 0 or less drops the list.
 *   <li>{@code dbsf} (distribution-based score fusion): each list's scores are normalised with its
 *       mean μ and sample standard deviation σ to {@code (s − (μ − 3σ)) / 6σ}, then summed per
 *       point. Lists where lower scores are better (Euclidean and Manhattan distances) are negated
 *       first, so for every list a higher normalised score is better.
 * </ul>
 *
 * Ties break by point id, so fusion is deterministic.
 *
 * @param method {@code rrf} or {@code dbsf}
 * @param k the RRF constant
 * @param weights the RRF weight of each list, {@code null} for all 1
 */
record Fusion(String method, int k, float[] weights) {

  static final int DEFAULT_RRF_K = 2;

  /** A result list and whether higher scores are better in it. */
  record Ranked(List<Record> records, boolean higherIsBetter) {}

  /**
   * Parses {@code {"fusion": "rrf"}}, {@code {"fusion": "dbsf"}} or {@code {"rrf": {"k": n}}};
   * {@code null} when {@code q} is not a fusion query.
   */
  static Fusion parse(JsonNode q, String field) {
    if (q == null || !q.isObject()) {
      return null;
    }
    if (q.has("fusion")) {
      String m = q.get("fusion").asString("");
      if (!m.equals("rrf") && !m.equals("dbsf")) {
        throw new InvalidInputException(
            "Wrong input: "
                + field
                + ".fusion must be rrf or dbsf [fusion="
                + q.get("fusion")
                + "]");
      }
      return new Fusion(m, DEFAULT_RRF_K, null);
    }
    if (q.has("rrf")) {
      JsonNode kn = q.get("rrf").get("k");
      int k = DEFAULT_RRF_K;
      if (kn != null && !kn.isNull()) {
        if (!kn.isIntegralNumber()
            || !kn.canConvertToLong()
            || kn.longValue() < 1
            || kn.longValue() > 1_000_000) {
          throw new InvalidInputException(
              "Wrong input: " + field + ".rrf.k must be a positive integer [k=" + kn + "]");
        }
        k = kn.intValue();
      }
      JsonNode wn = q.get("rrf").get("weights");
      float[] weights = null;
      if (wn != null && !wn.isNull()) {
        if (!wn.isArray()) {
          throw new InvalidInputException(
              "Wrong input: "
                  + field
                  + ".rrf.weights must be an array of numbers [weights="
                  + wn
                  + "]");
        }
        weights = new float[wn.size()];
        for (int i = 0; i < weights.length; i++) {
          JsonNode w = wn.get(i);
          if (!w.isNumber() || !Double.isFinite(w.doubleValue())) {
            throw new InvalidInputException(
                "Wrong input: "
                    + field
                    + ".rrf.weights["
                    + i
                    + "] must be a finite number [weights="
                    + wn
                    + "]");
          }
          weights[i] = (float) w.doubleValue();
        }
      }
      return new Fusion("rrf", k, weights);
    }
    return null;
  }

  /** The fused list, best first, with the fused scores. */
  List<Record> fuse(List<Ranked> lists) {
    if (weights != null && weights.length != lists.size()) {
      throw new InvalidInputException(
          "Bad request: Number of weights in RRF should match number of pre-fetches: got "
              + weights.length
              + ", expected "
              + lists.size());
    }
    Map<PointId, Double> score = new LinkedHashMap<>();
    Map<PointId, Record> first = new LinkedHashMap<>();
    for (int l = 0; l < lists.size(); l++) {
      Ranked list = lists.get(l);
      List<Record> rs = list.records();
      if (method.equals("rrf")) {
        float w = weights == null ? 1f : weights[l];
        for (int i = 0; i < rs.size(); i++) {
          Record r = rs.get(i);
          // Qdrant's position score, in f32 as Qdrant computes it; 0-based positions.
          float s = w <= 0 ? 0f : 1f / ((i + 1) / w + k - 1f);
          score.merge(r.id(), (double) s, Double::sum);
          first.putIfAbsent(r.id(), r);
        }
      } else {
        if (rs.isEmpty()) {
          continue;
        }
        double sign = list.higherIsBetter() ? 1 : -1;
        double mean = 0;
        for (Record r : rs) {
          mean += sign * r.score();
        }
        mean /= rs.size();
        double var = 0;
        for (Record r : rs) {
          double d = sign * r.score() - mean;
          var += d * d;
        }
        // Qdrant's sample variance; a single score normalises to 0.5.
        double sd = rs.size() < 2 ? 0 : Math.sqrt(var / (rs.size() - 1));
        double low = mean - 3 * sd;
        double range = 6 * sd;
        for (Record r : rs) {
          double s = range == 0 ? 0.5 : (sign * r.score() - low) / range;
          score.merge(r.id(), s, Double::sum);
          first.putIfAbsent(r.id(), r);
        }
      }
    }
    List<Map.Entry<PointId, Double>> ranked = new ArrayList<>(score.entrySet());
    ranked.sort(
        Comparator.comparingDouble((Map.Entry<PointId, Double> e) -> -e.getValue())
            .thenComparing(Map.Entry::getKey));
    List<Record> out = new ArrayList<>(ranked.size());
    for (Map.Entry<PointId, Double> e : ranked) {
      Record r = first.get(e.getKey());
      out.add(r.withScore(e.getValue().floatValue()));
    }
    return out;
  }
}
