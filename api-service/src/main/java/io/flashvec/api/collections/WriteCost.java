package io.flashvec.api.collections;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;
import tools.jackson.databind.JsonNode;

/**
 * The points a filtered write is charged to a write rate limiter, as Qdrant estimates the points a
 * filter selects ({@code query_estimator.rs}): each condition's count, combined clause by clause as
 * if the conditions were independent. A condition FlashVec can count with a payload index is
 * counted exactly; one on a key without an index is Qdrant's unknown, half the points. {@code must}
 * multiplies the fractions, {@code should} combines them by the complement rule ({@code 1 - ∏(1 -
 * pᵢ)}), {@code must_not} takes the complement of each, {@code min_should} combines the {@code
 * must} of every choice of {@code min_count} conditions by the {@code should} rule, and a filter
 * combines its clauses as a {@code must}.
 */
final class WriteCost {

  /**
   * Beyond this many choices of {@code min_count} conditions, a {@code min_should} is its should.
   */
  private static final long MAX_COMBINATIONS = 1024;

  private final long total;
  private final ToLongFunction<JsonNode> leaf;

  /**
   * @param total the points of the collection
   * @param leaf a condition's exact count, or {@code -1} when no payload index serves it
   */
  private WriteCost(long total, ToLongFunction<JsonNode> leaf) {
    this.total = total;
    this.leaf = leaf;
  }

  /** Qdrant's expected count of the points {@code filter} selects out of {@code total}. */
  static long estimate(JsonNode filter, long total, ToLongFunction<JsonNode> leaf) {
    if (total <= 0) {
      return 0;
    }
    return new WriteCost(total, leaf).filter(filter);
  }

  private long filter(JsonNode f) {
    List<Long> clauses = new ArrayList<>();
    List<JsonNode> must = list(f.get("must"));
    if (!must.isEmpty()) {
      clauses.add(must(estimates(must)));
    }
    List<JsonNode> should = list(f.get("should"));
    if (!should.isEmpty()) {
      clauses.add(should(estimates(should)));
    }
    JsonNode minShould = f.get("min_should");
    if (minShould != null && minShould.isObject()) {
      clauses.add(
          minShould(
              estimates(list(minShould.get("conditions"))), minShould.path("min_count").asLong(0)));
    }
    List<JsonNode> mustNot = list(f.get("must_not"));
    if (!mustNot.isEmpty()) {
      List<Long> inverted = new ArrayList<>();
      for (long e : estimates(mustNot)) {
        inverted.add(Math.max(0, total - e));
      }
      clauses.add(must(inverted));
    }
    return must(clauses);
  }

  private List<Long> estimates(List<JsonNode> conditions) {
    List<Long> out = new ArrayList<>();
    for (JsonNode c : conditions) {
      out.add(condition(c));
    }
    return out;
  }

  private long condition(JsonNode c) {
    if (c.isObject()
        && !c.has("key")
        && !c.has("nested")
        && (c.has("must") || c.has("should") || c.has("must_not") || c.has("min_should"))) {
      return filter(c);
    }
    long n = leaf.applyAsLong(c);
    return n < 0 ? total / 2 : Math.min(n, total);
  }

  /** Qdrant's {@code combine_must_estimations}: the product of the fractions (none: all). */
  private long must(List<Long> estimates) {
    double p = 1;
    for (long e : estimates) {
      p *= (double) e / total;
    }
    return Math.round(p * total);
  }

  /** Qdrant's {@code expected_should_estimation}: the complement rule. */
  private long should(List<Long> estimates) {
    double miss = 1;
    for (long e : estimates) {
      miss *= 1 - (double) e / total;
    }
    return Math.round((1 - miss) * total);
  }

  /** Qdrant's {@code combine_min_should_estimations}: should over the musts of each choice. */
  private long minShould(List<Long> estimates, long minCount) {
    int n = estimates.size();
    if (minCount > n) {
      return 0;
    }
    if (minCount <= 0) {
      return total; // the one empty choice: every point
    }
    if (minCount == 1 || combinations(n, (int) minCount) > MAX_COMBINATIONS) {
      return should(estimates);
    }
    List<Long> intersections = new ArrayList<>();
    choose(estimates, (int) minCount, 0, new ArrayList<>(), intersections);
    return should(intersections);
  }

  private void choose(
      List<Long> estimates, int k, int from, List<Long> chosen, List<Long> intersections) {
    if (chosen.size() == k) {
      intersections.add(must(chosen));
      return;
    }
    for (int i = from; i < estimates.size(); i++) {
      chosen.add(estimates.get(i));
      choose(estimates, k, i + 1, chosen, intersections);
      chosen.removeLast();
    }
  }

  private static long combinations(int n, int k) {
    long c = 1;
    for (int i = 1; i <= k; i++) {
      c = c * (n - k + i) / i;
      if (c > MAX_COMBINATIONS) {
        return c;
      }
    }
    return c;
  }

  /** A clause's conditions: a list, or one condition given alone as Qdrant accepts it. */
  private static List<JsonNode> list(JsonNode clause) {
    List<JsonNode> out = new ArrayList<>();
    if (clause == null || clause.isNull()) {
      return out;
    }
    if (clause.isArray()) {
      clause.forEach(out::add);
    } else {
      out.add(clause);
    }
    return out;
  }
}
