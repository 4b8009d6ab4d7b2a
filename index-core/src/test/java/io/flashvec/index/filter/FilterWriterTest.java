package io.flashvec.index.filter;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.storage.testing.TestSeeds;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

/** Writing a filter and parsing it again gives the same filter (cluster mode relies on it). */
@ExtendWith(TestSeeds.Reporter.class)
class FilterWriterTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  private static Filter parse(String json) {
    return FilterParser.parse(M.readTree(json), "filter");
  }

  private static void assertRoundTrip(Filter f) {
    String json = FilterWriter.toJsonString(f);
    Filter back = FilterWriter.fromJsonString(json);
    if (f.isEmpty()) {
      assertThat(back).isNull();
    } else {
      assertThat(back).as(json).isEqualTo(f);
    }
  }

  @Test
  void everyConditionKindRoundTrips() {
    assertRoundTrip(
        parse(
            "{\"must\":[{\"key\":\"city\",\"match\":{\"value\":\"London\"}},"
                + "{\"key\":\"n\",\"range\":{\"gte\":1,\"lt\":2.5}},"
                + "{\"key\":\"flag\",\"match\":{\"value\":true}},"
                + "{\"key\":\"big\",\"match\":{\"value\":-9007199254740993}},"
                + "{\"key\":\"tags[]\",\"match\":{\"any\":[\"a\",2,false]}},"
                + "{\"key\":\"a.b[1].c\",\"match\":{\"except\":[\"x\"]}},"
                + "{\"key\":\"body\",\"match\":{\"text\":\"hello world\"}},"
                + "{\"key\":\"at\",\"range\":{\"gt\":\"2024-05-01T10:00:00.123456789+02:00\","
                + "\"lte\":\"2025-01-01\"}},"
                + "{\"has_id\":[1,18446744073709551615,"
                + "\"123e4567-e89b-12d3-a456-426614174000\"]}],"
                + "\"should\":{\"is_empty\":{\"key\":\"a.b\"}},"
                + "\"must_not\":[{\"must\":[{\"is_null\":{\"key\":\"x\"}}]},{},"
                + "{\"nested\":{\"key\":\"items\",\"filter\":{\"must\":"
                + "{\"key\":\"q\",\"range\":{\"lt\":3}}}}}],"
                + "\"min_should\":{\"conditions\":[{\"key\":\"k\",\"match\":{\"value\":1}}],"
                + "\"min_count\":1}}"));
    assertRoundTrip(Filter.ALL);
    assertThat(FilterWriter.toJsonString(null)).isEmpty();
  }

  @Test
  void randomFiltersRoundTrip() {
    Random r = TestSeeds.random("filter-writer");
    for (int i = 0; i < 500; i++) {
      assertRoundTrip(FilterParser.parse(M.valueToTree(FilterEvaluatorTest.filter(r, 3)), "f"));
    }
  }
}
