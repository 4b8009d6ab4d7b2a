package io.flashvec.index.filter;

import io.flashvec.index.PointId;
import java.time.Instant;
import java.util.List;
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
        Condition.MatchTextAny,
        Condition.MatchPhrase,
        Condition.MatchPrefix,
        Condition.Range,
        Condition.DatetimeRange,
        Condition.HasId,
        Condition.HasVector,
        Condition.Slice,
        Condition.IsEmpty,
        Condition.IsNull,
        Condition.FieldIsEmpty,
        Condition.FieldIsNull,
        Condition.ValuesCount,
        Condition.GeoRadius,
        Condition.GeoBoundingBox,
        Condition.GeoPolygon,
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
   * {@code {"match": {"text_any": t}}}: some string value of the field holds at least one token of
   * {@code t} (on a text index), or one of its whitespace-separated words as a substring (without).
   */
  record MatchTextAny(FieldPath key, String text) implements Condition {}

  /**
   * {@code {"match": {"phrase": p}}}: some string value of the field holds the tokens of {@code p}
   * adjacent and in order (on a text index with phrase matching), or {@code p} as a substring
   * (without a text index).
   */
  record MatchPhrase(FieldPath key, String phrase) implements Condition {}

  /** {@code {"match": {"prefix": p}}}: some string value of the field starts with {@code p}. */
  record MatchPrefix(FieldPath key, String prefix) implements Condition {}

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

  /**
   * {@code {"has_vector": name}}: the point has the vector {@code name} ({@code ""}: the default
   * dense one). Evaluated with the point's vectors ({@link FilterEvaluator#matches(
   * io.flashvec.index.PointId, byte[], java.util.function.Predicate)}).
   */
  record HasVector(String name) implements Condition {}

  /** {@code {"has_id": [...]}}: the point id is in the set. */
  record HasId(Set<PointId> ids) implements Condition {
    public HasId {
      ids = Set.copyOf(ids);
    }
  }

  /**
   * {@code {"slice": {"total": t, "index": i}}}: the point is in slice {@code i} of {@code t}
   * disjoint slices of the id space, by {@link SipHash#ofPointId} modulo {@code t} (unsigned);
   * {@code 1 <= total < 2^32}, {@code index < total}.
   */
  record Slice(long total, long index) implements Condition {
    /** Whether the point with this id is in the slice. */
    public boolean contains(PointId id) {
      return Long.remainderUnsigned(SipHash.ofPointId(id), total) == index;
    }
  }

  /** {@code {"is_empty": {"key": k}}}: the field is missing, {@code null} or {@code []}. */
  record IsEmpty(FieldPath key) implements Condition {}

  /** {@code {"is_null": {"key": k}}}: the field exists and is {@code null}. */
  record IsNull(FieldPath key) implements Condition {}

  /**
   * {@code {"key": k, "is_empty": b}}, Qdrant's field-condition form: with {@code b} true, the key
   * reaches nothing, or some value it reaches is {@code null} or {@code []}; with {@code b} false,
   * the key reaches some value that is neither. (Unlike {@link IsEmpty}, values are not flattened:
   * {@code [null]} is a non-empty array.)
   */
  record FieldIsEmpty(FieldPath key, boolean empty) implements Condition {}

  /**
   * {@code {"key": k, "is_null": b}}, Qdrant's field-condition form: with {@code b} true, some
   * value the key reaches is {@code null} or an array holding {@code null}; with {@code b} false,
   * the key reaches nothing, or some value that is neither.
   */
  record FieldIsNull(FieldPath key, boolean isNull) implements Condition {}

  /**
   * {@code {"values_count": {...}}}: some value the key reaches has a count within every given
   * bound (absent: {@link #NO_BOUND}), where an array counts its elements, {@code null} counts 0
   * and any other value 1; a key that reaches nothing counts 0.
   */
  record ValuesCount(FieldPath key, long gt, long gte, long lt, long lte) implements Condition {
    /** An absent bound. */
    public static final long NO_BOUND = -1;

    /** Whether {@code count} lies within every given bound. */
    public boolean accepts(long count) {
      return (gt == NO_BOUND || count > gt)
          && (gte == NO_BOUND || count >= gte)
          && (lt == NO_BOUND || count < lt)
          && (lte == NO_BOUND || count <= lte);
    }
  }

  /**
   * A point on the globe, in degrees; valid points have {@code lon} in [-180, 180] and {@code lat}
   * in [-90, 90].
   */
  record GeoPoint(double lon, double lat) {}

  /**
   * {@code {"geo_radius": {"center": {...}, "radius": r}}}: some geo point of the field lies less
   * than {@code radius} meters from {@code center} (haversine distance on a sphere of the Earth's
   * mean radius).
   */
  record GeoRadius(FieldPath key, GeoPoint center, double radius) implements Condition {}

  /**
   * {@code {"geo_bounding_box": {"top_left": {...}, "bottom_right": {...}}}}: some geo point of the
   * field lies strictly inside the box; when {@code topLeft.lon > bottomRight.lon} the box crosses
   * the antimeridian.
   */
  record GeoBoundingBox(FieldPath key, GeoPoint topLeft, GeoPoint bottomRight)
      implements Condition {}

  /**
   * {@code {"geo_polygon": {"exterior": {"points": [...]}, "interiors": [...]}}}: some geo point of
   * the field lies strictly inside the exterior ring and not inside or on any interior ring
   * (holes). Rings are closed (first point equals last) and have at least 4 points; edges are
   * straight lines in longitude/latitude.
   */
  record GeoPolygon(FieldPath key, List<GeoPoint> exterior, List<List<GeoPoint>> interiors)
      implements Condition {
    public GeoPolygon {
      exterior = List.copyOf(exterior);
      interiors = interiors.stream().map(List::copyOf).toList();
    }
  }

  /**
   * {@code {"nested": {"key": k, "filter": f}}}: some object in the array {@code k} satisfies the
   * whole filter {@code f}, whose keys are relative to that object.
   */
  record Nested(FieldPath key, Filter filter) implements Condition {}
}
