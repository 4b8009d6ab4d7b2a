package io.flashvec.index.filter;

import io.flashvec.index.FlashVecException;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * Parses Qdrant's filter JSON into a {@link Filter}. Every error is an {@link
 * InvalidInputException} whose message names the path of the bad part and its value, e.g. {@code
 * Wrong input: filter.must[1].range: unknown field 'gtx'}.
 *
 * <p>Accepted conditions: a nested filter ({@code must}/{@code should}/{@code must_not}/{@code
 * min_should}), a field condition ({@code key} with one of {@code match} — {@code value}, {@code
 * any}, {@code except}, {@code text}, {@code text_any}, {@code phrase} or {@code prefix} — {@code
 * range} over numbers or RFC 3339 datetimes, {@code values_count}, {@code geo_radius}, {@code
 * geo_bounding_box} or {@code geo_polygon}), {@code has_id}, {@code slice}, {@code is_empty},
 * {@code is_null} and {@code nested}. A clause may be a list or a single condition, as in Qdrant.
 * Geo points are validated (longitude in [-180, 180], latitude in [-90, 90]), polygon rings must be
 * closed and have at least 4 points, a radius must be a non-negative number of meters.
 */
public final class FilterParser {

  private static final BigInteger MAX_U64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
  private static final Set<String> FILTER_FIELDS =
      Set.of("must", "should", "must_not", "min_should");
  private static final Set<String> RANGE_FIELDS = Set.of("gt", "gte", "lt", "lte");
  private static final String FIELD_CONDITIONS =
      "match, range, values_count, geo_radius, geo_bounding_box, geo_polygon, is_empty or is_null";
  private static final String MATCHES = "value, any, except, text, text_any, phrase or prefix";

  private FilterParser() {}

  /**
   * A filter that is well-formed JSON of the right shape but not a valid filter, answered with 422
   * as Qdrant answers its validation errors (a field condition without any condition).
   */
  public static final class ValidationException extends FlashVecException {
    /** A validation error answered with 422, with Qdrant's {@code message}. */
    public ValidationException(String message) {
      super(422, message, null);
    }
  }

  /**
   * Parses a filter; {@code null}, JSON {@code null} and {@code {}} give {@link Filter#ALL}.
   *
   * @param path how the filter is named in messages, e.g. {@code filter} or {@code
   *     searches[2].filter}
   */
  public static Filter parse(JsonNode node, String path) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return Filter.ALL;
    }
    return filter(node, path);
  }

  private static Filter filter(JsonNode n, String path) {
    if (!n.isObject()) {
      throw bad(path, "expected an object", n);
    }
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      if (!FILTER_FIELDS.contains(e.getKey())) {
        throw new InvalidInputException(
            "Wrong input: "
                + path
                + ": unknown field '"
                + e.getKey()
                + "', expected must, should, must_not or min_should");
      }
    }
    Filter.MinShould minShould = null;
    JsonNode ms = n.get("min_should");
    if (ms != null && !ms.isNull()) {
      String p = path + ".min_should";
      objectOf(ms, p, "conditions", "min_count");
      JsonNode mc = ms.get("min_count");
      if (mc == null || !mc.isIntegralNumber() || mc.bigIntegerValue().signum() < 0) {
        throw bad(p + ".min_count", "expected a non-negative integer", mc);
      }
      minShould =
          new Filter.MinShould(
              clause(ms.get("conditions"), p + ".conditions"),
              mc.bigIntegerValue().min(BigInteger.valueOf(Integer.MAX_VALUE)).intValue());
    }
    return new Filter(
        clause(n.get("must"), path + ".must"),
        clause(n.get("should"), path + ".should"),
        clause(n.get("must_not"), path + ".must_not"),
        minShould);
  }

  private static List<Condition> clause(JsonNode n, String path) {
    if (n == null || n.isNull()) {
      return List.of();
    }
    if (n.isObject()) {
      return List.of(condition(n, path));
    }
    if (!n.isArray()) {
      throw bad(path, "expected a list of conditions", n);
    }
    List<Condition> out = new ArrayList<>(n.size());
    for (int i = 0; i < n.size(); i++) {
      out.add(condition(n.get(i), path + "[" + i + "]"));
    }
    return out;
  }

  private static Condition condition(JsonNode n, String path) {
    if (!n.isObject()) {
      throw bad(path, "expected a condition object", n);
    }
    if (n.has("key")) {
      return fieldCondition(n, path);
    }
    if (n.has("has_id")) {
      only(n, path, "has_id");
      return hasId(n.get("has_id"), path + ".has_id");
    }
    if (n.has("has_vector")) {
      only(n, path, "has_vector");
      JsonNode v = n.get("has_vector");
      if (!v.isString()) {
        throw bad(path + ".has_vector", "expected a vector name", v);
      }
      return new Condition.HasVector(v.asString());
    }
    if (n.has("slice")) {
      only(n, path, "slice");
      return slice(n.get("slice"), path + ".slice");
    }
    if (n.has("is_empty")) {
      only(n, path, "is_empty");
      return new Condition.IsEmpty(keyOf(n.get("is_empty"), path + ".is_empty"));
    }
    if (n.has("is_null")) {
      only(n, path, "is_null");
      return new Condition.IsNull(keyOf(n.get("is_null"), path + ".is_null"));
    }
    if (n.has("nested")) {
      only(n, path, "nested");
      JsonNode nn = n.get("nested");
      String p = path + ".nested";
      objectOf(nn, p, "key", "filter");
      FieldPath key = key(nn.get("key"), p + ".key");
      JsonNode f = nn.get("filter");
      if (f == null || f.isNull()) {
        throw new InvalidInputException("Wrong input: " + p + ": missing field 'filter'");
      }
      Filter inner = filter(f, p + ".filter");
      if (containsHasId(inner)) {
        throw new InvalidInputException(
            "Wrong input: " + p + ".filter: has_id is not allowed inside nested");
      }
      return new Condition.Nested(key, inner);
    }
    if (n.isEmpty()) {
      return Filter.ALL;
    }
    for (String f : FILTER_FIELDS) {
      if (n.has(f)) {
        return filter(n, path);
      }
    }
    String first = n.propertyNames().iterator().next();
    throw new InvalidInputException(
        "Wrong input: "
            + path
            + ": unknown condition '"
            + first
            + "', expected key (with "
            + FIELD_CONDITIONS
            + "), has_id, has_vector, slice, is_empty, is_null, nested or a nested filter");
  }

  private static boolean containsHasId(Condition c) {
    return switch (c) {
      case Condition.HasId h -> true;
      case Filter f -> {
        List<Condition> all = new ArrayList<>(f.must());
        all.addAll(f.should());
        all.addAll(f.mustNot());
        if (f.minShould() != null) {
          all.addAll(f.minShould().conditions());
        }
        yield all.stream().anyMatch(FilterParser::containsHasId);
      }
      default -> false;
    };
  }

  /**
   * Checks that {@code n} at {@code path} is an object with no keys but {@code a} and {@code b}.
   */
  private static void objectOf(JsonNode n, String path, String a, String b) {
    if (!n.isObject()) {
      throw bad(path, "expected an object with " + a + " and " + b, n);
    }
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      if (!e.getKey().equals(a) && !e.getKey().equals(b)) {
        throw unknown(path, e.getKey());
      }
    }
  }

  private static void only(JsonNode n, String path, String field) {
    for (String name : n.propertyNames()) {
      if (!name.equals(field)) {
        throw new InvalidInputException(
            "Wrong input: "
                + path
                + ": unexpected field '"
                + name
                + "' beside '"
                + field
                + "', one condition per object");
      }
    }
  }

  private static Condition fieldCondition(JsonNode n, String path) {
    FieldPath key = key(n.get("key"), path + ".key");
    Condition c = null;
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      String f = e.getKey();
      JsonNode v = e.getValue();
      if (f.equals("key") || v.isNull()) {
        continue;
      }
      Condition next =
          switch (f) {
            case "match" -> match(key, v, path + ".match");
            case "range" -> range(key, v, path + ".range");
            case "values_count" -> valuesCount(key, v, path + ".values_count");
            case "geo_radius" -> geoRadius(key, v, path + ".geo_radius");
            case "geo_bounding_box" -> geoBoundingBox(key, v, path + ".geo_bounding_box");
            case "geo_polygon" -> geoPolygon(key, v, path + ".geo_polygon");
            case "is_empty" -> new Condition.FieldIsEmpty(key, flag(v, path + ".is_empty"));
            case "is_null" -> new Condition.FieldIsNull(key, flag(v, path + ".is_null"));
            default -> throw unknownField(path, f, FIELD_CONDITIONS + " beside key");
          };
      if (c != null) {
        throw new InvalidInputException(
            "Wrong input: " + path + ": give one of " + FIELD_CONDITIONS + " per condition");
      }
      c = next;
    }
    if (c == null) {
      throw new ValidationException(
          "Validation error in JSON body: "
              + path
              + ": At least one field condition must be specified, one of "
              + FIELD_CONDITIONS
              + " [key="
              + key
              + "]");
    }
    return c;
  }

  private static FieldPath key(JsonNode n, String path) {
    if (n == null || !n.isString()) {
      throw bad(path, "expected a string key", n);
    }
    return FieldPath.parse(n.asString(), path);
  }

  private static FieldPath keyOf(JsonNode n, String path) {
    if (n == null || !n.isObject() || !n.has("key")) {
      throw bad(path, "expected {\"key\": ...}", n);
    }
    for (String name : n.propertyNames()) {
      if (!name.equals("key")) {
        throw unknown(path, name);
      }
    }
    return key(n.get("key"), path + ".key");
  }

  private static Condition match(FieldPath key, JsonNode m, String path) {
    if (!m.isObject() || m.size() != 1) {
      throw bad(path, "expected one of " + MATCHES, m);
    }
    String f = m.propertyNames().iterator().next();
    JsonNode v = m.get(f);
    String p = path + "." + f;
    return switch (f) {
      case "value" -> new Condition.MatchValue(key, matchable(v, p));
      case "any" -> new Condition.MatchAny(key, matchables(v, p));
      case "except" -> new Condition.MatchExcept(key, matchables(v, p));
      case "text" -> new Condition.MatchText(key, string(v, p));
      case "text_any" -> new Condition.MatchTextAny(key, string(v, p));
      case "phrase" -> new Condition.MatchPhrase(key, string(v, p));
      case "prefix" -> new Condition.MatchPrefix(key, string(v, p));
      default -> throw unknownField(path, f, MATCHES);
    };
  }

  private static boolean flag(JsonNode v, String path) {
    if (!v.isBoolean()) {
      throw bad(path, "expected true or false", v);
    }
    return v.booleanValue();
  }

  private static String string(JsonNode v, String path) {
    if (!v.isString()) {
      throw bad(path, "expected a string", v);
    }
    return v.asString();
  }

  private static Condition.ValuesCount valuesCount(FieldPath key, JsonNode n, String path) {
    if (!n.isObject()) {
      throw bad(path, "expected an object with gt, gte, lt or lte", n);
    }
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      if (!RANGE_FIELDS.contains(e.getKey())) {
        throw unknown(path, e.getKey());
      }
    }
    return new Condition.ValuesCount(
        key,
        count(n, "gt", path),
        count(n, "gte", path),
        count(n, "lt", path),
        count(n, "lte", path));
  }

  private static long count(JsonNode n, String f, String path) {
    JsonNode v = n.get(f);
    if (v == null || v.isNull()) {
      return Condition.ValuesCount.NO_BOUND;
    }
    if (!v.isIntegralNumber() || v.bigIntegerValue().signum() < 0) {
      throw bad(path + "." + f, "expected a non-negative integer", v);
    }
    return v.bigIntegerValue().min(BigInteger.valueOf(Long.MAX_VALUE)).longValue();
  }

  private static Condition.GeoRadius geoRadius(FieldPath key, JsonNode n, String path) {
    objectOf(n, path, "center", "radius");
    Condition.GeoPoint center = geoPoint(n.get("center"), path + ".center");
    JsonNode r = n.get("radius");
    if (r == null || !r.isNumber() || !Double.isFinite(r.doubleValue()) || r.doubleValue() < 0) {
      throw bad(path + ".radius", "expected a non-negative number of meters", r);
    }
    return new Condition.GeoRadius(key, center, r.doubleValue());
  }

  private static Condition.GeoBoundingBox geoBoundingBox(FieldPath key, JsonNode n, String path) {
    objectOf(n, path, "top_left", "bottom_right");
    return new Condition.GeoBoundingBox(
        key,
        geoPoint(n.get("top_left"), path + ".top_left"),
        geoPoint(n.get("bottom_right"), path + ".bottom_right"));
  }

  private static Condition.GeoPolygon geoPolygon(FieldPath key, JsonNode n, String path) {
    objectOf(n, path, "exterior", "interiors");
    List<Condition.GeoPoint> exterior = ring(n.get("exterior"), path + ".exterior");
    List<List<Condition.GeoPoint>> interiors = new ArrayList<>();
    JsonNode in = n.get("interiors");
    if (in != null && !in.isNull()) {
      if (!in.isArray()) {
        throw bad(path + ".interiors", "expected a list of rings", in);
      }
      for (int i = 0; i < in.size(); i++) {
        interiors.add(ring(in.get(i), path + ".interiors[" + i + "]"));
      }
    }
    return new Condition.GeoPolygon(key, exterior, interiors);
  }

  /** A closed ring {@code {"points": [...]}} of at least 4 points. */
  private static List<Condition.GeoPoint> ring(JsonNode n, String path) {
    if (n == null || !n.isObject() || !n.has("points")) {
      throw bad(path, "expected {\"points\": [...]}", n);
    }
    for (String name : n.propertyNames()) {
      if (!name.equals("points")) {
        throw unknown(path, name);
      }
    }
    JsonNode ps = n.get("points");
    if (!ps.isArray()) {
      throw bad(path + ".points", "expected a list of geo points", ps);
    }
    if (ps.size() < 4) {
      throw bad(
          path + ".points", "polygon invalid, the size must be at least 4, got " + ps.size(), ps);
    }
    List<Condition.GeoPoint> out = new ArrayList<>(ps.size());
    for (int i = 0; i < ps.size(); i++) {
      out.add(geoPoint(ps.get(i), path + ".points[" + i + "]"));
    }
    if (!out.getFirst().equals(out.getLast())) {
      throw bad(
          path + ".points",
          "polygon invalid, the first and the last points should be the same to form a closed line",
          ps);
    }
    return out;
  }

  /** {@code {"lon": x, "lat": y}} within the valid ranges. */
  private static Condition.GeoPoint geoPoint(JsonNode n, String path) {
    if (n == null || !n.isObject()) {
      throw bad(path, "expected a geo point {\"lon\": ..., \"lat\": ...}", n);
    }
    objectOf(n, path, "lon", "lat");
    JsonNode lon = n.get("lon");
    JsonNode lat = n.get("lat");
    if (lon == null || !lon.isNumber() || lat == null || !lat.isNumber()) {
      throw bad(path, "expected a geo point with numeric lon and lat", n);
    }
    if (!Geo.valid(lon.doubleValue(), lat.doubleValue())) {
      throw bad(path, "expected lat within [-90, 90] and lon within [-180, 180]", n);
    }
    // -0.0 and 0.0 are the same coordinate: keep equals (closed rings, round trips) exact
    return new Condition.GeoPoint(lon.doubleValue() + 0.0, lat.doubleValue() + 0.0);
  }

  private static Object matchable(JsonNode v, String path) {
    if (v != null && v.isString()) {
      return v.asString();
    }
    if (v != null && v.isBoolean()) {
      return v.booleanValue();
    }
    if (v != null && v.isIntegralNumber() && v.canConvertToLong()) {
      return v.longValue();
    }
    throw bad(path, "expected a string, integer or bool", v);
  }

  private static Set<Object> matchables(JsonNode v, String path) {
    if (v == null || !v.isArray()) {
      throw bad(path, "expected a list of strings or integers", v);
    }
    Set<Object> out = new LinkedHashSet<>();
    for (int i = 0; i < v.size(); i++) {
      out.add(matchable(v.get(i), path + "[" + i + "]"));
    }
    return out;
  }

  private static Condition range(FieldPath key, JsonNode r, String path) {
    if (!r.isObject()) {
      throw bad(path, "expected an object with gt, gte, lt or lte", r);
    }
    boolean anyString = false;
    boolean anyNumber = false;
    for (Map.Entry<String, JsonNode> e : r.properties()) {
      if (!RANGE_FIELDS.contains(e.getKey())) {
        throw unknown(path, e.getKey());
      }
      JsonNode v = e.getValue();
      if (v.isString()) {
        anyString = true;
      } else if (v.isNumber()) {
        if (!Double.isFinite(v.doubleValue())) {
          throw bad(path + "." + e.getKey(), "expected a finite number", v);
        }
        anyNumber = true;
      } else if (!v.isNull()) {
        throw bad(path + "." + e.getKey(), "expected a number or an RFC 3339 datetime", v);
      }
    }
    if (anyString && anyNumber) {
      throw bad(path, "bounds must be all numbers or all datetimes", r);
    }
    if (anyString) {
      return new Condition.DatetimeRange(
          key,
          datetimeBound(r, "gt", path),
          datetimeBound(r, "gte", path),
          datetimeBound(r, "lt", path),
          datetimeBound(r, "lte", path));
    }
    return new Condition.Range(
        key, bound(r, "gt"), bound(r, "gte"), bound(r, "lt"), bound(r, "lte"));
  }

  private static double bound(JsonNode r, String f) {
    JsonNode v = r.get(f);
    return v == null || v.isNull() ? Double.NaN : v.doubleValue();
  }

  private static Instant datetimeBound(JsonNode r, String f, String path) {
    JsonNode v = r.get(f);
    if (v == null || v.isNull()) {
      return null;
    }
    Instant t = parseDatetime(v.asString());
    if (t == null) {
      throw bad(path + "." + f, "expected an RFC 3339 datetime", v);
    }
    return t;
  }

  /**
   * Parses a datetime as Qdrant accepts it: RFC 3339 ({@code 2024-05-01T10:00:00Z}, an offset,
   * fractional seconds), the same without a zone (UTC), with a space instead of {@code T}, or a
   * bare date (midnight UTC). Returns {@code null} if the string is none of these.
   */
  public static Instant parseDatetime(String s) {
    if (s.length() < 10) {
      return null;
    }
    String t =
        s.length() > 10 && s.charAt(10) == ' ' ? s.substring(0, 10) + 'T' + s.substring(11) : s;
    try {
      if (t.length() == 10) {
        return LocalDate.parse(t).atStartOfDay().toInstant(ZoneOffset.UTC);
      }
      char last = t.charAt(t.length() - 1);
      boolean zoned =
          last == 'Z' || last == 'z' || t.lastIndexOf('+') > 10 || t.lastIndexOf('-') > 10;
      if (zoned) {
        return OffsetDateTime.parse(t.replace('z', 'Z')).toInstant();
      }
      return LocalDateTime.parse(t).toInstant(ZoneOffset.UTC);
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  private static final long MAX_U32 = 0xFFFF_FFFFL;

  private static Condition.Slice slice(JsonNode n, String path) {
    objectOf(n, path, "total", "index");
    JsonNode total = n.get("total");
    JsonNode index = n.get("index");
    if (total == null
        || !total.isIntegralNumber()
        || total.bigIntegerValue().signum() <= 0
        || total.bigIntegerValue().compareTo(BigInteger.valueOf(MAX_U32)) > 0) {
      throw bad(path + ".total", "expected an integer in [1, 4294967295]", total);
    }
    if (index == null
        || !index.isIntegralNumber()
        || index.bigIntegerValue().signum() < 0
        || index.bigIntegerValue().compareTo(BigInteger.valueOf(MAX_U32)) > 0) {
      throw bad(path + ".index", "expected an integer in [0, 4294967295]", index);
    }
    if (index.longValue() >= total.longValue()) {
      throw new ValidationException(
          "Validation error in JSON body: "
              + path
              + ": Slice index must be less than the total number of slices [index="
              + index.longValue()
              + ", total="
              + total.longValue()
              + "]");
    }
    return new Condition.Slice(total.longValue(), index.longValue());
  }

  private static Condition.HasId hasId(JsonNode n, String path) {
    if (n == null || !n.isArray()) {
      throw bad(path, "expected a list of point ids", n);
    }
    Set<PointId> ids = new HashSet<>();
    for (int i = 0; i < n.size(); i++) {
      ids.add(pointId(n.get(i), path + "[" + i + "]"));
    }
    return new Condition.HasId(ids);
  }

  private static PointId pointId(JsonNode n, String path) {
    if (n.isIntegralNumber()) {
      BigInteger v = n.bigIntegerValue();
      if (v.signum() >= 0 && v.compareTo(MAX_U64) <= 0) {
        return PointId.of(v.longValue());
      }
    } else if (n.isString()) {
      try {
        PointId id = PointId.parse(n.asString());
        if (id.isUuid()) {
          return id;
        }
      } catch (InvalidInputException e) {
        // reported below with the path
      }
    }
    throw bad(path, "point id must be an unsigned 64-bit integer or a UUID", n);
  }

  /** A field {@code f} of the condition at {@code path} that is none of {@code expected}. */
  private static InvalidInputException unknownField(String path, String f, String expected) {
    return new InvalidInputException(
        "Wrong input: " + path + ": unknown field '" + f + "', expected " + expected);
  }

  private static InvalidInputException unknown(String path, String field) {
    return new InvalidInputException("Wrong input: " + path + ": unknown field '" + field + "'");
  }

  private static InvalidInputException bad(String path, String what, JsonNode value) {
    return new InvalidInputException(
        "Wrong input: " + path + ": " + what + " [" + path + "=" + abbreviate(value) + "]");
  }

  private static String abbreviate(JsonNode n) {
    if (n == null) {
      return "missing";
    }
    String s = n.toString();
    return s.length() > 80 ? s.substring(0, 77) + "..." : s;
  }
}
