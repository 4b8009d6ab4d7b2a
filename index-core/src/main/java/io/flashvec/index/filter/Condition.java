package io.flashvec.index.filter;

import io.flashvec.index.PointId;
import java.time.Instant;
import java.util.Set;

/**
 * One condition of a {@link Filter}: a nested filter, a condition on a payload field, on the point
 * id, or on the shape of a field. Immutable; see {@link FilterEvaluator} for the semantics.
 */
public sealed interface Condition
    permits Filter,
        Condition.MatchValue,
        Condition.MatchAny,
        Condition.MatchExcept,
        Condition.MatchText,
        Condition.Range,
        Condition.DatetimeRange,
        Condition.HasId,
        Condition.IsEmpty,
        Condition.IsNull,
        Condition.Nested {

  /** {@code {"key": k, "match": {"value": v}}}: some value of the field equals {@code value}. */
  record MatchValue(FieldPath key, Object value) implements Condition {}

  /** {@code {"match": {"any": [...]}}}: some value of the field is in the list. */
  record MatchAny(FieldPath key, Set<Object> values) implements Condition {
    public MatchAny {
      values = Set.copyOf(values);
    }
  }

  /**
   * {@code {"match": {"except": [...]}}}: the field has no value, or some value not in the list.
   */
  record MatchExcept(FieldPath key, Set<Object> values) implements Condition {
    public MatchExcept {
      values = Set.copyOf(values);
    }
  }

  /** {@code {"match": {"text": t}}}: some string value of the field contains {@code t}. */
  record MatchText(FieldPath key, String text) implements Condition {}

  /**
   * {@code {"range": {...}}} over numbers; an absent bound is {@code NaN}. Some numeric value of
   * the field lies within every given bound.
   */
  record Range(FieldPath key, double gt, double gte, double lt, double lte) implements Condition {}

  /**
   * {@code {"range": {...}}} with RFC 3339 datetime bounds (absent: {@code null}). Some string
   * value of the field that parses as a datetime lies within every given bound.
   */
  record DatetimeRange(FieldPath key, Instant gt, Instant gte, Instant lt, Instant lte)
      implements Condition {}

  /** {@code {"has_id": [...]}}: the point id is in the set. */
  record HasId(Set<PointId> ids) implements Condition {
    public HasId {
      ids = Set.copyOf(ids);
    }
  }

  /** {@code {"is_empty": {"key": k}}}: the field is missing, {@code null} or {@code []}. */
  record IsEmpty(FieldPath key) implements Condition {}

  /** {@code {"is_null": {"key": k}}}: the field exists and is {@code null}. */
  record IsNull(FieldPath key) implements Condition {}

  /**
   * {@code {"nested": {"key": k, "filter": f}}}: some object in the array {@code k} satisfies the
   * whole filter {@code f}, whose keys are relative to that object.
   */
  record Nested(FieldPath key, Filter filter) implements Condition {}
}
