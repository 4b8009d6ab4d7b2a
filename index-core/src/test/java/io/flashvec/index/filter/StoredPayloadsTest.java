package io.flashvec.index.filter;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.PointId;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.json.JsonMapper;

/**
 * Payloads that older versions stored with lone surrogate escapes read with U+FFFD in their place;
 * everything else is returned as it is, without a copy.
 */
class StoredPayloadsTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"\\uD83D\":\"x\"}|{\"\\uFFFD\":\"x\"}",
        "{\"v\":\"a\\uD83Db\",\"w\":\"\\uDC00\"}|{\"v\":\"a\\uFFFDb\",\"w\":\"\\uFFFD\"}",
        "{\"v\":\"\\ud83d\\ud83d\\ude00\"}|{\"v\":\"\\uFFFD\\ud83d\\ude00\"}",
        "{\"v\":\"\\ude00\\ud83d\"}|{\"v\":\"\\uFFFD\\uFFFD\"}",
        "{\"v\":\"\\\\uD83D\"}|{\"v\":\"\\\\uD83D\"}",
        "{\"v\":\"\\\\\\uD83D\"}|{\"v\":\"\\\\\\uFFFD\"}",
        "{\"v\":\"\\uD83D\"|{\"v\":\"\\uFFFD\"",
      })
  void loneSurrogateEscapesBecomeReplacementCharacters(String stored, String repaired) {
    assertThat(new String(StoredPayloads.repair(bytes(stored)), StandardCharsets.UTF_8))
        .isEqualTo(repaired);
  }

  @Test
  void aPayloadWithoutOneIsReturnedAsItIs() {
    for (String s :
        new String[] {
          "{}",
          "{\"a\":\"\\ud83d\\ude00 \\n \\\"\"}",
          "{\"\u00e9\":[1,2,\"\\u0041\"]}",
          "{\"a\":\"\\"
        }) {
      byte[] b = bytes(s);
      assertThat(StoredPayloads.repair(b)).as(s).isSameAs(b);
    }
    assertThat(StoredPayloads.repair(null)).isNull();
  }

  @Test
  void aFilterMatchesAPointWhosePayloadHasALoneSurrogateKey() {
    byte[] stored = bytes("{\"\\uD83D\":\"x\",\"city\":\"Berlin\"}");
    FilterEvaluator f =
        new FilterEvaluator(
            FilterParser.parse(
                M.readTree("{\"must\":[{\"key\":\"city\",\"match\":{\"value\":\"Berlin\"}}]}"),
                "filter"));
    assertThat(f.matches(PointId.of(1), stored)).isTrue();
  }
}
