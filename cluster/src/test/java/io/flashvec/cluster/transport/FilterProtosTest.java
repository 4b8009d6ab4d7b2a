package io.flashvec.cluster.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.cluster.transport.grpc.FilterMsg;
import io.flashvec.index.PointId;
import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.testing.TestSeeds;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

/** A filter sent to a shard as a protobuf message is the filter the proxy parsed. */
@ExtendWith(TestSeeds.Reporter.class)
class FilterProtosTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  /** The kinds of condition, to check that the random filters below reach every one. */
  private enum Kind {
    FILTER,
    MATCH_VALUE,
    MATCH_ANY,
    MATCH_EXCEPT,
    MATCH_TEXT,
    RANGE,
    DATETIME_RANGE,
    HAS_ID,
    IS_EMPTY,
    IS_NULL,
    NESTED,
    MATCH_TEXT_ANY,
    MATCH_PHRASE,
    MATCH_PREFIX,
    VALUES_COUNT,
    GEO_RADIUS,
    GEO_BOUNDING_BOX,
    GEO_POLYGON,
    SLICE,
    FIELD_IS_EMPTY,
    FIELD_IS_NULL
  }

  private static Filter roundTrip(Filter f) throws Exception {
    // through the wire bytes, as a shard receives it
    return FilterProtos.filter(FilterMsg.parseFrom(FilterProtos.message(f).toByteArray()));
  }

  @Test
  void everyConditionKindOfAParsedFilterRoundTrips() throws Exception {
    Filter f =
        FilterParser.parse(
            M.readTree(
                "{\"must\":[{\"key\":\"city\",\"match\":{\"value\":\"London\"}},"
                    + "{\"key\":\"n\",\"range\":{\"gte\":1,\"lt\":2.5}},"
                    + "{\"key\":\"flag\",\"match\":{\"value\":true}},"
                    + "{\"key\":\"big\",\"match\":{\"value\":-9007199254740993}},"
                    + "{\"key\":\"tags[]\",\"match\":{\"any\":[\"a\",2,false]}},"
                    + "{\"key\":\"a.b[1].c\",\"match\":{\"except\":[\"x\"]}},"
                    + "{\"key\":\"body\",\"match\":{\"text\":\"hello world\"}},"
                    + "{\"key\":\"body\",\"match\":{\"text_any\":\"hello world\"}},"
                    + "{\"key\":\"body\",\"match\":{\"phrase\":\"hello world\"}},"
                    + "{\"key\":\"url\",\"match\":{\"prefix\":\"https://\"}},"
                    + "{\"key\":\"tags\",\"values_count\":{\"gte\":1,\"lt\":4}},"
                    + "{\"key\":\"loc\",\"geo_radius\":{\"center\":{\"lon\":13.4,\"lat\":52.5},"
                    + "\"radius\":1500.5}},"
                    + "{\"key\":\"loc\",\"geo_bounding_box\":{\"top_left\":{\"lon\":170,"
                    + "\"lat\":10},\"bottom_right\":{\"lon\":-170,\"lat\":-10}}},"
                    + "{\"key\":\"loc\",\"geo_polygon\":{\"exterior\":{\"points\":["
                    + "{\"lon\":0,\"lat\":0},{\"lon\":1,\"lat\":0},{\"lon\":1,\"lat\":1},"
                    + "{\"lon\":0,\"lat\":0}]},\"interiors\":[{\"points\":["
                    + "{\"lon\":0.1,\"lat\":0.1},{\"lon\":0.2,\"lat\":0.1},"
                    + "{\"lon\":0.2,\"lat\":0.2},{\"lon\":0.1,\"lat\":0.1}]}]}},"
                    + "{\"key\":\"at\",\"range\":{\"gt\":\"2024-05-01T10:00:00.123456789+02:00\","
                    + "\"lte\":\"2025-01-01\"}},"
                    + "{\"has_id\":[1,18446744073709551615,"
                    + "\"123e4567-e89b-12d3-a456-426614174000\"]}],"
                    + "\"should\":{\"is_empty\":{\"key\":\"a.b\"}},"
                    + "\"must_not\":[{\"must\":[{\"is_null\":{\"key\":\"x\"}}]},{},"
                    + "{\"nested\":{\"key\":\"items\",\"filter\":{\"must\":"
                    + "{\"key\":\"q\",\"range\":{\"lt\":3}}}}}],"
                    + "\"min_should\":{\"conditions\":[{\"key\":\"k\",\"match\":{\"value\":1}}],"
                    + "\"min_count\":1}}"),
            "filter");
    assertThat(roundTrip(f)).isEqualTo(f);
  }

  @Test
  void noFilterAndTheEmptyFilterTravelAsNone() throws Exception {
    assertThat(roundTrip(null)).isNull();
    assertThat(roundTrip(Filter.ALL)).isNull();
    assertThat(FilterProtos.message(null)).isEqualTo(FilterMsg.getDefaultInstance());
  }

  @Test
  void randomFiltersOfEveryConditionKindRoundTrip() throws Exception {
    Random r = TestSeeds.random("filter-protos");
    Set<Kind> seen = EnumSet.noneOf(Kind.class);
    for (int i = 0; i < 500; i++) {
      Filter f = filter(r, 3, seen);
      assertThat(roundTrip(f)).as("filter %s", f).isEqualTo(f.isEmpty() ? null : f);
    }
    assertThat(seen).containsExactlyInAnyOrder(Kind.values());
  }

  private static Filter filter(Random r, int depth, Set<Kind> seen) {
    return new Filter(
        conditions(r, depth, seen),
        conditions(r, depth, seen),
        conditions(r, depth, seen),
        r.nextInt(4) == 0 ? new Filter.MinShould(conditions(r, depth, seen), r.nextInt(3)) : null);
  }

  private static List<Condition> conditions(Random r, int depth, Set<Kind> seen) {
    List<Condition> out = new ArrayList<>();
    for (int n = r.nextInt(3); n > 0; n--) {
      out.add(condition(r, depth, seen));
    }
    return out;
  }

  private static Condition condition(Random r, int depth, Set<Kind> seen) {
    Kind kind = Kind.values()[r.nextInt(Kind.values().length)];
    if (depth == 0 && (kind == Kind.FILTER || kind == Kind.NESTED)) {
      kind = Kind.IS_NULL;
    }
    seen.add(kind);
    return switch (kind) {
      case FILTER -> filter(r, depth - 1, seen);
      case MATCH_VALUE -> new Condition.MatchValue(key(r), value(r));
      case MATCH_ANY -> new Condition.MatchAny(key(r), values(r));
      case MATCH_EXCEPT -> new Condition.MatchExcept(key(r), values(r));
      case MATCH_TEXT -> new Condition.MatchText(key(r), "text " + r.nextInt(100));
      case RANGE -> new Condition.Range(key(r), bound(r), bound(r), bound(r), bound(r));
      case DATETIME_RANGE ->
          new Condition.DatetimeRange(key(r), instant(r), instant(r), instant(r), instant(r));
      case HAS_ID -> {
        Set<PointId> ids = new LinkedHashSet<>();
        for (int n = r.nextInt(4); n > 0; n--) {
          ids.add(
              r.nextBoolean()
                  ? PointId.of(r.nextLong())
                  : PointId.of(new UUID(r.nextLong(), r.nextLong())));
        }
        yield new Condition.HasId(ids);
      }
      case IS_EMPTY -> new Condition.IsEmpty(key(r));
      case IS_NULL -> new Condition.IsNull(key(r));
      case NESTED -> new Condition.Nested(key(r), filter(r, depth - 1, seen));
      case MATCH_TEXT_ANY -> new Condition.MatchTextAny(key(r), "any " + r.nextInt(100));
      case MATCH_PHRASE -> new Condition.MatchPhrase(key(r), "a phrase " + r.nextInt(100));
      case MATCH_PREFIX -> new Condition.MatchPrefix(key(r), r.nextBoolean() ? "" : "pre");
      case VALUES_COUNT ->
          new Condition.ValuesCount(key(r), count(r), count(r), count(r), count(r));
      case GEO_RADIUS -> new Condition.GeoRadius(key(r), point(r), r.nextDouble() * 1e6);
      case GEO_BOUNDING_BOX -> new Condition.GeoBoundingBox(key(r), point(r), point(r));
      case FIELD_IS_EMPTY -> new Condition.FieldIsEmpty(key(r), r.nextBoolean());
      case FIELD_IS_NULL -> new Condition.FieldIsNull(key(r), r.nextBoolean());
      case SLICE -> {
        long total = r.nextBoolean() ? 1 + r.nextInt(8) : 0xFFFF_FFFFL;
        yield new Condition.Slice(total, total - 1 - r.nextInt((int) Math.min(total, 8)));
      }
      case GEO_POLYGON -> {
        List<List<Condition.GeoPoint>> holes = new ArrayList<>();
        for (int n = r.nextInt(3); n > 0; n--) {
          holes.add(ring(r));
        }
        yield new Condition.GeoPolygon(key(r), ring(r), holes);
      }
    };
  }

  private static long count(Random r) {
    return r.nextBoolean() ? Condition.ValuesCount.NO_BOUND : r.nextInt(10);
  }

  private static Condition.GeoPoint point(Random r) {
    return new Condition.GeoPoint(r.nextDouble() * 360 - 180, r.nextDouble() * 180 - 90);
  }

  private static List<Condition.GeoPoint> ring(Random r) {
    List<Condition.GeoPoint> ps = new ArrayList<>();
    for (int n = 3 + r.nextInt(3); n > 0; n--) {
      ps.add(point(r));
    }
    ps.add(ps.getFirst());
    return ps;
  }

  private static FieldPath key(Random r) {
    String[] keys = {"a", "a.b", "tags[]", "items[3].price", "x.y[].z"};
    return FieldPath.parse(keys[r.nextInt(keys.length)], "key");
  }

  private static Object value(Random r) {
    return switch (r.nextInt(3)) {
      case 0 -> "v" + r.nextInt(10);
      case 1 -> r.nextLong();
      default -> r.nextBoolean();
    };
  }

  private static Set<Object> values(Random r) {
    Set<Object> out = new LinkedHashSet<>();
    for (int n = r.nextInt(4); n > 0; n--) {
      out.add(value(r));
    }
    return out;
  }

  private static double bound(Random r) {
    return r.nextBoolean() ? Double.NaN : r.nextGaussian() * 100;
  }

  private static Instant instant(Random r) {
    return r.nextBoolean()
        ? null
        : Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000_000));
  }
}
