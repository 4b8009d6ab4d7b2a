package io.flashvec.index.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** The parser builds the expected tree and rejects bad filters naming the bad part and value. */
class FilterParserTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  private static Filter parse(String json) {
    return FilterParser.parse(M.readTree(json), "filter");
  }

  @Test
  void parsesQdrantShapes() {
    Filter f =
        parse(
            "{\"must\":[{\"key\":\"city\",\"match\":{\"value\":\"London\"}},"
                + "{\"key\":\"n\",\"range\":{\"gte\":1,\"lt\":2.5}},{\"has_id\":[1,2]}],"
                + "\"should\":{\"is_empty\":{\"key\":\"a.b\"}},"
                + "\"must_not\":[{\"must\":[{\"is_null\":{\"key\":\"x\"}}]}]}");
    FieldPath city = FieldPath.parse("city", "k");
    assertThat(f.must())
        .containsExactly(
            new Condition.MatchValue(city, "London"),
            new Condition.Range(FieldPath.parse("n", "k"), Double.NaN, 1, 2.5, Double.NaN),
            new Condition.HasId(Set.of(PointId.of(1), PointId.of(2))));
    assertThat(f.should()).containsExactly(new Condition.IsEmpty(FieldPath.parse("a.b", "k")));
    assertThat(f.mustNot())
        .containsExactly(Filter.must(new Condition.IsNull(FieldPath.parse("x", "k"))));
    assertThat(parse("{}").isEmpty()).isTrue();
    assertThat(FilterParser.parse(null, "filter")).isEqualTo(Filter.ALL);
    assertThat(FieldPath.parse("a[].b[2].c", "k").steps())
        .containsExactly(
            new FieldPath.Step("a", FieldPath.ALL),
            new FieldPath.Step("b", 2),
            new FieldPath.Step("c", FieldPath.NO_INDEX));
    assertThat(parse("{\"must\":[{\"key\":\"t\",\"range\":{\"gt\":\"2024-01-01\"}}]}").must())
        .singleElement()
        .isInstanceOf(Condition.DatetimeRange.class);
    assertThat(List.of(parse("{\"must\":[{\"key\":\"c\",\"match\":{\"any\":[\"a\",1]}}]}")))
        .isNotEmpty();
  }

  @Test
  void rejectsBadFiltersNamingThePart() {
    String[][] cases = {
      {
        "{\"must\":[{}, {\"key\":\"a\",\"range\":{\"gtx\":1}}]}",
        "Wrong input: filter.must[1].range: unknown field 'gtx'"
      },
      {
        "{\"must\":[{\"key\":\"a\",\"match\":{\"value\":1.5}}]}",
        "Wrong input: filter.must[0].match.value: expected a string, integer or bool"
            + " [filter.must[0].match.value=1.5]"
      },
      {
        "{\"musts\":[]}",
        "Wrong input: filter: unknown field 'musts', expected must, should, must_not or min_should"
      },
      {
        "{\"must\":[{\"key\":\"t\",\"range\":{\"gt\":\"soon\"}}]}",
        "Wrong input: filter.must[0].range.gt: expected an RFC 3339 datetime"
            + " [filter.must[0].range.gt=\"soon\"]"
      },
      {
        "{\"must\":[{\"key\":\"t\",\"range\":{\"gt\":\"2024-01-01\",\"lt\":5}}]}",
        "Wrong input: filter.must[0].range: bounds must be all numbers or all datetimes"
      },
      {
        "{\"must\":[{\"has_id\":[-1]}]}",
        "Wrong input: filter.must[0].has_id[0]: point id must be an unsigned 64-bit integer or a"
            + " UUID [filter.must[0].has_id[0]=-1]"
      },
      {
        "{\"must\":[{\"key\":\"a..b\",\"match\":{\"value\":1}}]}",
        "Wrong input: filter.must[0].key: invalid key"
      },
      {
        "{\"must\":[{\"key\":\"loc\",\"geo_radius\":{}}]}",
        "Wrong input: filter.must[0].geo_radius.center: expected a geo point"
      },
      {
        "{\"must\":[{\"key\":\"loc\",\"geo_radius\":{\"center\":{\"lon\":10,\"lat\":91},"
            + "\"radius\":5}}]}",
        "Wrong input: filter.must[0].geo_radius.center: expected lat within [-90, 90] and lon"
            + " within [-180, 180] [filter.must[0].geo_radius.center={\"lon\":10,\"lat\":91}]"
      },
      {
        "{\"must\":[{\"key\":\"loc\",\"geo_radius\":{\"center\":{\"lon\":10,\"lat\":1},"
            + "\"radius\":-5}}]}",
        "Wrong input: filter.must[0].geo_radius.radius: expected a non-negative number of meters"
            + " [filter.must[0].geo_radius.radius=-5]"
      },
      {
        "{\"must\":[{\"key\":\"loc\",\"geo_bounding_box\":{\"top_left\":{\"lon\":-181,"
            + "\"lat\":1},\"bottom_right\":{\"lon\":1,\"lat\":0}}}]}",
        "Wrong input: filter.must[0].geo_bounding_box.top_left: expected lat within"
      },
      {
        "{\"must\":[{\"key\":\"loc\",\"geo_polygon\":{\"exterior\":{\"points\":["
            + "{\"lon\":1,\"lat\":1},{\"lon\":2,\"lat\":1},{\"lon\":1,\"lat\":1}]}}}]}",
        "Wrong input: filter.must[0].geo_polygon.exterior.points: polygon invalid, the size must be"
            + " at least 4, got 3"
      },
      {
        "{\"must\":[{\"key\":\"loc\",\"geo_polygon\":{\"exterior\":{\"points\":["
            + "{\"lon\":1,\"lat\":1},{\"lon\":2,\"lat\":1},{\"lon\":2,\"lat\":2},"
            + "{\"lon\":1,\"lat\":1}]},\"interiors\":[{\"points\":[{\"lon\":1,\"lat\":1},"
            + "{\"lon\":2,\"lat\":1},{\"lon\":2,\"lat\":2},{\"lon\":1,\"lat\":2}]}]}}]}",
        "Wrong input: filter.must[0].geo_polygon.interiors[0].points: polygon invalid, the first"
            + " and the last points should be the same to form a closed line"
      },
      {
        "{\"must\":[{\"key\":\"tags\",\"values_count\":{\"gt\":-1}}]}",
        "Wrong input: filter.must[0].values_count.gt: expected a non-negative integer"
            + " [filter.must[0].values_count.gt=-1]"
      },
      {
        "{\"must\":[{\"key\":\"tags\",\"values_count\":{\"eq\":1}}]}",
        "Wrong input: filter.must[0].values_count: unknown field 'eq'"
      },
      {
        "{\"must\":[{\"key\":\"t\",\"is_empty\":\"yes\"}]}",
        "Wrong input: filter.must[0].is_empty: expected true or false"
      },
      {
        "{\"must\":[{\"key\":\"t\",\"match\":{\"phrase\":3}}]}",
        "Wrong input: filter.must[0].match.phrase: expected a string"
      },
      {
        "{\"must\":[{\"key\":\"t\",\"match\":{\"prefix\":\"a\"},\"values_count\":{}}]}",
        "Wrong input: filter.must[0]: give one of match, range"
      },
      {"{\"must\":[{\"foo\":1}]}", "Wrong input: filter.must[0]: unknown condition 'foo'"},
      {
        "{\"must\":[{\"key\":\"a\",\"match\":{\"like\":\"x\"}}]}",
        "Wrong input: filter.must[0].match: unknown field 'like'"
      },
      {"[1]", "Wrong input: filter: expected an object [filter=[1]]"},
      {
        "{\"must\":[{\"nested\":{\"key\":\"d\",\"filter\":{\"must\":[{\"has_id\":[1]}]}}}]}",
        "Wrong input: filter.must[0].nested.filter: has_id is not allowed inside nested"
      },
    };
    for (String[] c : cases) {
      assertThatThrownBy(() -> parse(c[0]))
          .as(c[0])
          .isInstanceOf(InvalidInputException.class)
          .message()
          .startsWith(c[1]);
    }
  }

  @Test
  void parsesTheTextGeoAndCountConditions() {
    FieldPath t = FieldPath.parse("t", "k");
    assertThat(
            parse(
                    "{\"must\":[{\"key\":\"t\",\"match\":{\"text_any\":\"a b\"}},"
                        + "{\"key\":\"t\",\"match\":{\"phrase\":\"a b\"}},"
                        + "{\"key\":\"t\",\"match\":{\"prefix\":\"\"}},"
                        + "{\"key\":\"t\",\"values_count\":{\"gt\":1,\"lte\":3,\"lt\":null}}]}")
                .must())
        .containsExactly(
            new Condition.MatchTextAny(t, "a b"),
            new Condition.MatchPhrase(t, "a b"),
            new Condition.MatchPrefix(t, ""),
            new Condition.ValuesCount(t, 1, -1, -1, 3));
    Condition.GeoPoint a = new Condition.GeoPoint(13.4, 52.5);
    Condition.GeoPoint b = new Condition.GeoPoint(-180, -90);
    assertThat(
            parse(
                    "{\"should\":[{\"key\":\"t\",\"geo_radius\":{\"center\":{\"lon\":13.4,"
                        + "\"lat\":52.5},\"radius\":1000.5}},{\"key\":\"t\",\"geo_bounding_box\":"
                        + "{\"top_left\":{\"lat\":52.5,\"lon\":13.4},\"bottom_right\":{\"lon\":-180,"
                        + "\"lat\":-90}}},{\"key\":\"t\",\"geo_polygon\":{\"exterior\":{\"points\":"
                        + "[{\"lon\":13.4,\"lat\":52.5},{\"lon\":-180,\"lat\":-90},{\"lon\":0,"
                        + "\"lat\":0},{\"lon\":13.4,\"lat\":52.5}]},\"interiors\":null}}]}")
                .should())
        .containsExactly(
            new Condition.GeoRadius(t, a, 1000.5),
            new Condition.GeoBoundingBox(t, a, b),
            new Condition.GeoPolygon(t, List.of(a, b, new Condition.GeoPoint(0, 0), a), List.of()));
  }

  @Test
  void aKeyWithoutAConditionIsAValidationError() {
    for (String f :
        new String[] {
          "{\"should\":[{\"key\":\"a\"}]}", "{\"should\":[{\"key\":\"a\",\"match\":null}]}"
        }) {
      assertThatThrownBy(() -> parse(f))
          .isInstanceOf(FilterParser.ValidationException.class)
          .hasMessage(
              "Validation error in JSON body: filter.should[0]: At least one field condition must"
                  + " be specified, one of match, range, values_count, geo_radius, geo_bounding_box,"
                  + " geo_polygon, is_empty or is_null [key=a]")
          .extracting(e -> ((FilterParser.ValidationException) e).httpStatus())
          .isEqualTo(422);
    }
  }
}
