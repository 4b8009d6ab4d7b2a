package io.flashvec.index.filter;

import java.util.List;

/**
 * A Qdrant filter: a point matches when every {@code must} condition matches, at least one {@code
 * should} condition matches (if there are any), no {@code must_not} condition matches, and at least
 * {@code minShould.minCount} of {@code minShould.conditions} match (if given). The empty filter
 * matches every point. A filter is itself a condition, so filters nest.
 *
 * @param minShould {@code null} when absent
 */
public record Filter(
    List<Condition> must, List<Condition> should, List<Condition> mustNot, MinShould minShould)
    implements Condition {

  /** Qdrant's {@code min_should}: at least {@code minCount} of {@code conditions} match. */
  public record MinShould(List<Condition> conditions, int minCount) {
    public MinShould {
      conditions = List.copyOf(conditions);
    }
  }

  /** Matches every point. */
  public static final Filter ALL = new Filter(List.of(), List.of(), List.of(), null);

  public Filter {
    must = List.copyOf(must);
    should = List.copyOf(should);
    mustNot = List.copyOf(mustNot);
  }

  /** A filter of {@code must} conditions only. */
  public static Filter must(Condition... conditions) {
    return new Filter(List.of(conditions), List.of(), List.of(), null);
  }

  /** Points where {@code key} has a value: it is not missing, {@code null} or {@code []}. */
  public static Filter hasValue(FieldPath key) {
    return new Filter(List.of(), List.of(), List.of(new Condition.IsEmpty(key)), null);
  }

  /** Whether this filter matches every point (no condition at all). */
  public boolean isEmpty() {
    return must.isEmpty() && should.isEmpty() && mustNot.isEmpty() && minShould == null;
  }
}
