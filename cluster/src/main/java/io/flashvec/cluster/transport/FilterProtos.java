package io.flashvec.cluster.transport;

import io.flashvec.cluster.transport.grpc.ConditionMsg;
import io.flashvec.cluster.transport.grpc.DatetimeRangeMsg;
import io.flashvec.cluster.transport.grpc.FieldFlag;
import io.flashvec.cluster.transport.grpc.FieldText;
import io.flashvec.cluster.transport.grpc.FieldValue;
import io.flashvec.cluster.transport.grpc.FieldValues;
import io.flashvec.cluster.transport.grpc.FilterMsg;
import io.flashvec.cluster.transport.grpc.GeoBoundingBoxMsg;
import io.flashvec.cluster.transport.grpc.GeoPointMsg;
import io.flashvec.cluster.transport.grpc.GeoPolygonMsg;
import io.flashvec.cluster.transport.grpc.GeoRadiusMsg;
import io.flashvec.cluster.transport.grpc.GeoRingMsg;
import io.flashvec.cluster.transport.grpc.InstantMsg;
import io.flashvec.cluster.transport.grpc.MatchValueMsg;
import io.flashvec.cluster.transport.grpc.MinShouldMsg;
import io.flashvec.cluster.transport.grpc.NestedFilter;
import io.flashvec.cluster.transport.grpc.NumberRange;
import io.flashvec.cluster.transport.grpc.PointIds;
import io.flashvec.cluster.transport.grpc.SliceMsg;
import io.flashvec.cluster.transport.grpc.ValuesCountMsg;
import io.flashvec.index.PointId;
import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.Filter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A {@link Filter} as the protobuf message tree of {@code ShardService} ({@code FilterMsg}) and
 * back: {@code filter(message(f))} equals {@code f}. A shard runs exactly the filter the proxy
 * parsed, without a detour through JSON. Payload keys travel as written and are parsed again.
 */
public final class FilterProtos {

  private FilterProtos() {}

  /** The message of {@code f}; the default (empty) message for {@code null}. */
  public static FilterMsg message(Filter f) {
    FilterMsg.Builder b = FilterMsg.newBuilder();
    if (f == null) {
      return b.build();
    }
    f.must().forEach(c -> b.addMust(condition(c)));
    f.should().forEach(c -> b.addShould(condition(c)));
    f.mustNot().forEach(c -> b.addMustNot(condition(c)));
    if (f.minShould() != null) {
      MinShouldMsg.Builder m = MinShouldMsg.newBuilder().setMinCount(f.minShould().minCount());
      f.minShould().conditions().forEach(c -> m.addConditions(condition(c)));
      b.setMinShould(m);
    }
    return b.build();
  }

  /** The filter of {@code m}; {@code null} when it has no condition (every point matches). */
  public static Filter filter(FilterMsg m) {
    Filter f = tree(m);
    return f.isEmpty() ? null : f;
  }

  private static Filter tree(FilterMsg m) {
    return new Filter(
        conditions(m.getMustList()),
        conditions(m.getShouldList()),
        conditions(m.getMustNotList()),
        m.hasMinShould()
            ? new Filter.MinShould(
                conditions(m.getMinShould().getConditionsList()), m.getMinShould().getMinCount())
            : null);
  }

  private static ConditionMsg condition(Condition c) {
    ConditionMsg.Builder b = ConditionMsg.newBuilder();
    switch (c) {
      case Filter f -> b.setFilter(message(f));
      case Condition.MatchValue m ->
          b.setMatchValue(FieldValue.newBuilder().setKey(key(m.key())).setValue(value(m.value())));
      case Condition.MatchAny m -> b.setMatchAny(values(m.key(), m.values()));
      case Condition.MatchExcept m -> b.setMatchExcept(values(m.key(), m.values()));
      case Condition.MatchText m ->
          b.setMatchText(FieldText.newBuilder().setKey(key(m.key())).setText(m.text()));
      case Condition.MatchTextAny m ->
          b.setMatchTextAny(FieldText.newBuilder().setKey(key(m.key())).setText(m.text()));
      case Condition.MatchPhrase m ->
          b.setMatchPhrase(FieldText.newBuilder().setKey(key(m.key())).setText(m.phrase()));
      case Condition.MatchPrefix m ->
          b.setMatchPrefix(FieldText.newBuilder().setKey(key(m.key())).setText(m.prefix()));
      case Condition.ValuesCount v -> {
        ValuesCountMsg.Builder n = ValuesCountMsg.newBuilder().setKey(key(v.key()));
        if (v.gt() != Condition.ValuesCount.NO_BOUND) {
          n.setGt(v.gt());
        }
        if (v.gte() != Condition.ValuesCount.NO_BOUND) {
          n.setGte(v.gte());
        }
        if (v.lt() != Condition.ValuesCount.NO_BOUND) {
          n.setLt(v.lt());
        }
        if (v.lte() != Condition.ValuesCount.NO_BOUND) {
          n.setLte(v.lte());
        }
        b.setValuesCount(n);
      }
      case Condition.GeoRadius g ->
          b.setGeoRadius(
              GeoRadiusMsg.newBuilder()
                  .setKey(key(g.key()))
                  .setCenter(point(g.center()))
                  .setRadius(g.radius()));
      case Condition.GeoBoundingBox g ->
          b.setGeoBoundingBox(
              GeoBoundingBoxMsg.newBuilder()
                  .setKey(key(g.key()))
                  .setTopLeft(point(g.topLeft()))
                  .setBottomRight(point(g.bottomRight())));
      case Condition.GeoPolygon g -> {
        GeoPolygonMsg.Builder p =
            GeoPolygonMsg.newBuilder().setKey(key(g.key())).setExterior(ring(g.exterior()));
        g.interiors().forEach(r -> p.addInteriors(ring(r)));
        b.setGeoPolygon(p);
      }
      case Condition.Range r -> {
        NumberRange.Builder n = NumberRange.newBuilder().setKey(key(r.key()));
        if (!Double.isNaN(r.gt())) {
          n.setGt(r.gt());
        }
        if (!Double.isNaN(r.gte())) {
          n.setGte(r.gte());
        }
        if (!Double.isNaN(r.lt())) {
          n.setLt(r.lt());
        }
        if (!Double.isNaN(r.lte())) {
          n.setLte(r.lte());
        }
        b.setRange(n);
      }
      case Condition.DatetimeRange r -> {
        DatetimeRangeMsg.Builder d = DatetimeRangeMsg.newBuilder().setKey(key(r.key()));
        if (r.gt() != null) {
          d.setGt(instant(r.gt()));
        }
        if (r.gte() != null) {
          d.setGte(instant(r.gte()));
        }
        if (r.lt() != null) {
          d.setLt(instant(r.lt()));
        }
        if (r.lte() != null) {
          d.setLte(instant(r.lte()));
        }
        b.setDatetimeRange(d);
      }
      case Condition.HasId h -> b.setHasId(PointIds.newBuilder().addAllIds(Protos.ids(sorted(h))));
      case Condition.HasVector h ->
          throw new io.flashvec.index.InvalidInputException(
              "Wrong input: has_vector is not supported in cluster mode yet [has_vector="
                  + h.name()
                  + "]");
      case Condition.Slice sl ->
          b.setSlice(SliceMsg.newBuilder().setTotal((int) sl.total()).setIndex((int) sl.index()));
      case Condition.FieldIsEmpty e ->
          b.setFieldIsEmpty(FieldFlag.newBuilder().setKey(key(e.key())).setValue(e.empty()));
      case Condition.FieldIsNull n ->
          b.setFieldIsNull(FieldFlag.newBuilder().setKey(key(n.key())).setValue(n.isNull()));
      case Condition.IsEmpty e -> b.setIsEmpty(key(e.key()));
      case Condition.IsNull n -> b.setIsNull(key(n.key()));
      case Condition.Nested n ->
          b.setNested(
              NestedFilter.newBuilder().setKey(key(n.key())).setFilter(message(n.filter())));
    }
    return b.build();
  }

  private static List<Condition> conditions(List<ConditionMsg> ms) {
    List<Condition> out = new ArrayList<>(ms.size());
    for (ConditionMsg m : ms) {
      out.add(condition(m));
    }
    return out;
  }

  private static Condition condition(ConditionMsg m) {
    return switch (m.getKindCase()) {
      case FILTER -> tree(m.getFilter());
      case MATCH_VALUE ->
          new Condition.MatchValue(
              path(m.getMatchValue().getKey()), value(m.getMatchValue().getValue()));
      case MATCH_ANY ->
          new Condition.MatchAny(path(m.getMatchAny().getKey()), values(m.getMatchAny()));
      case MATCH_EXCEPT ->
          new Condition.MatchExcept(path(m.getMatchExcept().getKey()), values(m.getMatchExcept()));
      case MATCH_TEXT ->
          new Condition.MatchText(path(m.getMatchText().getKey()), m.getMatchText().getText());
      case MATCH_TEXT_ANY ->
          new Condition.MatchTextAny(
              path(m.getMatchTextAny().getKey()), m.getMatchTextAny().getText());
      case MATCH_PHRASE ->
          new Condition.MatchPhrase(
              path(m.getMatchPhrase().getKey()), m.getMatchPhrase().getText());
      case MATCH_PREFIX ->
          new Condition.MatchPrefix(
              path(m.getMatchPrefix().getKey()), m.getMatchPrefix().getText());
      case VALUES_COUNT -> {
        ValuesCountMsg v = m.getValuesCount();
        long none = Condition.ValuesCount.NO_BOUND;
        yield new Condition.ValuesCount(
            path(v.getKey()),
            v.hasGt() ? v.getGt() : none,
            v.hasGte() ? v.getGte() : none,
            v.hasLt() ? v.getLt() : none,
            v.hasLte() ? v.getLte() : none);
      }
      case GEO_RADIUS ->
          new Condition.GeoRadius(
              path(m.getGeoRadius().getKey()),
              point(m.getGeoRadius().getCenter()),
              m.getGeoRadius().getRadius());
      case GEO_BOUNDING_BOX ->
          new Condition.GeoBoundingBox(
              path(m.getGeoBoundingBox().getKey()),
              point(m.getGeoBoundingBox().getTopLeft()),
              point(m.getGeoBoundingBox().getBottomRight()));
      case GEO_POLYGON -> {
        GeoPolygonMsg g = m.getGeoPolygon();
        List<List<Condition.GeoPoint>> holes = new ArrayList<>();
        g.getInteriorsList().forEach(r -> holes.add(ring(r)));
        yield new Condition.GeoPolygon(path(g.getKey()), ring(g.getExterior()), holes);
      }
      case RANGE -> {
        NumberRange r = m.getRange();
        yield new Condition.Range(
            path(r.getKey()),
            r.hasGt() ? r.getGt() : Double.NaN,
            r.hasGte() ? r.getGte() : Double.NaN,
            r.hasLt() ? r.getLt() : Double.NaN,
            r.hasLte() ? r.getLte() : Double.NaN);
      }
      case DATETIME_RANGE -> {
        DatetimeRangeMsg r = m.getDatetimeRange();
        yield new Condition.DatetimeRange(
            path(r.getKey()),
            r.hasGt() ? instant(r.getGt()) : null,
            r.hasGte() ? instant(r.getGte()) : null,
            r.hasLt() ? instant(r.getLt()) : null,
            r.hasLte() ? instant(r.getLte()) : null);
      }
      case HAS_ID -> new Condition.HasId(Set.copyOf(Protos.pointIds(m.getHasId().getIdsList())));
      case SLICE ->
          new Condition.Slice(
              Integer.toUnsignedLong(m.getSlice().getTotal()),
              Integer.toUnsignedLong(m.getSlice().getIndex()));
      case FIELD_IS_EMPTY ->
          new Condition.FieldIsEmpty(
              path(m.getFieldIsEmpty().getKey()), m.getFieldIsEmpty().getValue());
      case FIELD_IS_NULL ->
          new Condition.FieldIsNull(
              path(m.getFieldIsNull().getKey()), m.getFieldIsNull().getValue());
      case IS_EMPTY -> new Condition.IsEmpty(path(m.getIsEmpty()));
      case IS_NULL -> new Condition.IsNull(path(m.getIsNull()));
      case NESTED ->
          new Condition.Nested(path(m.getNested().getKey()), tree(m.getNested().getFilter()));
      case KIND_NOT_SET ->
          throw new IllegalArgumentException(
              "filter condition without a kind [condition=" + m + "]");
    };
  }

  private static GeoPointMsg point(Condition.GeoPoint p) {
    return GeoPointMsg.newBuilder().setLon(p.lon()).setLat(p.lat()).build();
  }

  private static Condition.GeoPoint point(GeoPointMsg m) {
    return new Condition.GeoPoint(m.getLon(), m.getLat());
  }

  private static GeoRingMsg ring(List<Condition.GeoPoint> ps) {
    GeoRingMsg.Builder b = GeoRingMsg.newBuilder();
    ps.forEach(p -> b.addPoints(point(p)));
    return b.build();
  }

  private static List<Condition.GeoPoint> ring(GeoRingMsg m) {
    List<Condition.GeoPoint> out = new ArrayList<>(m.getPointsCount());
    m.getPointsList().forEach(p -> out.add(point(p)));
    return out;
  }

  private static String key(FieldPath p) {
    return p.key();
  }

  private static FieldPath path(String key) {
    return FieldPath.parse(key, "filter.key");
  }

  private static MatchValueMsg value(Object v) {
    return switch (v) {
      case String s -> MatchValueMsg.newBuilder().setKeyword(s).build();
      case Boolean b -> MatchValueMsg.newBuilder().setFlag(b).build();
      case Long l -> MatchValueMsg.newBuilder().setInteger(l).build();
      case Integer i -> MatchValueMsg.newBuilder().setInteger(i).build();
      default ->
          throw new IllegalArgumentException("not a match value: " + v + " (" + v.getClass() + ")");
    };
  }

  private static Object value(MatchValueMsg m) {
    return switch (m.getKindCase()) {
      case KEYWORD -> m.getKeyword();
      case FLAG -> m.getFlag();
      case INTEGER -> m.getInteger();
      case KIND_NOT_SET -> throw new IllegalArgumentException("match value without a kind");
    };
  }

  private static FieldValues values(FieldPath key, Set<Object> vs) {
    FieldValues.Builder b = FieldValues.newBuilder().setKey(key(key));
    vs.forEach(v -> b.addValues(value(v)));
    return b.build();
  }

  private static Set<Object> values(FieldValues m) {
    Set<Object> out = new LinkedHashSet<>();
    m.getValuesList().forEach(v -> out.add(value(v)));
    return out;
  }

  private static InstantMsg instant(Instant i) {
    return InstantMsg.newBuilder().setSeconds(i.getEpochSecond()).setNanos(i.getNano()).build();
  }

  private static Instant instant(InstantMsg m) {
    return Instant.ofEpochSecond(m.getSeconds(), m.getNanos());
  }

  /** The ids in order, so that the same filter always makes the same message. */
  private static List<PointId> sorted(Condition.HasId h) {
    List<PointId> ids = new ArrayList<>(h.ids());
    ids.sort(null);
    return ids;
  }
}
