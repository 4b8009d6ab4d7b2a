package io.flashvec.api.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.flashvec.api.web.Json;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Qdrant's formula expressions, evaluated as its FormulaScorer does (cases of its tests). */
class FormulaTest {

  private static final PointId ID = PointId.of(7);
  private static final JsonNode PAYLOAD =
      Json.MAPPER.readTree(
          "{\"number\":85.0,\"array_of_one\":[1.2],\"array\":[1.2,2.3],\"none\":null,"
              + "\"geo_point\":{\"lat\":25.628482424190565,\"lon\":-100.23881855976},"
              + "\"when\":\"2024-01-01T00:00:00Z\",\"tag\":\"a\"}");
  private static final List<Map<PointId, Float>> SCORES =
      List.of(Map.of(ID, 1.0f), Map.of(ID, 2.0f));

  private static Formula formula(String json) {
    return Formula.parse(Json.MAPPER.readTree(json), "query");
  }

  private static double eval(String expression) {
    return eval(expression, "{}");
  }

  private static double eval(String expression, String defaults) {
    Formula f = formula("{\"formula\":" + expression + ",\"defaults\":" + defaults + "}");
    List<Set<PointId>> matches = f.conditions().stream().map(c -> Set.of(ID)).toList();
    return f.score(new Formula.Point(ID, PAYLOAD), SCORES, matches);
  }

  @Test
  void variablesScoresAndConstants() {
    assertThat(eval("5.0")).isEqualTo(5.0);
    assertThat(eval("\"number\"")).isEqualTo(85.0);
    assertThat(eval("\"array_of_one\""))
        .as("an array of one is its element")
        .isEqualTo(1.2, within(1e-6));
    assertThat(eval("\"$score\"")).isEqualTo(1.0);
    assertThat(eval("\"$score[0]\"")).isEqualTo(1.0);
    assertThat(eval("\"$score[1]\"")).isEqualTo(2.0);
    assertThat(eval("\"$score[2]\"")).as("no such prefetch: 0").isEqualTo(0.0);
    assertThat(eval("\"$score[2]\"", "{\"$score[2]\":1.5}")).isEqualTo(1.5);
    assertThat(eval("\"missing\"", "{\"missing\":3}")).isEqualTo(3.0);
    assertThat(eval("\"none\"", "{\"none\":0.5}")).as("a null takes the default").isEqualTo(0.5);
  }

  @Test
  void arithmeticAsQdrant() {
    assertThat(eval("{\"sum\":[{\"mult\":[\"$score\",0.4]},{\"mult\":[\"number\",0.6]}]}"))
        .isEqualTo(0.4 + 0.6 * 85, within(1e-4));
    assertThat(
            eval("{\"div\":{\"left\":\"number\",\"right\":{\"sum\":[1.0,{\"abs\":\"number\"}]}}}"))
        .isEqualTo(85.0 / 86.0, within(1e-6));
    assertThat(eval("{\"mult\":[0,\"missing\"]}")).as("a zero factor ends the product").isZero();
    assertThat(eval("{\"div\":{\"left\":0,\"right\":0}}")).as("0 divided is 0").isZero();
    assertThat(eval("{\"div\":{\"left\":1,\"right\":0,\"by_zero_default\":42}}")).isEqualTo(42);
    assertThat(eval("{\"neg\":\"number\"}")).isEqualTo(-85);
    assertThat(eval("{\"pow\":{\"base\":2,\"exponent\":10}}")).isEqualTo(1024);
    assertThat(eval("{\"sqrt\":16}")).isEqualTo(4);
    assertThat(eval("{\"log10\":1000}")).isEqualTo(3, within(1e-6));
    assertThat(eval("{\"ln\":1}")).isZero();
    assertThat(eval("{\"exp\":0}")).isEqualTo(1);
    assertThat(eval("{\"key\":\"tag\",\"match\":{\"value\":\"a\"}}"))
        .as("a condition")
        .isEqualTo(1);
  }

  @Test
  void geoDatetimeAndDecays() {
    assertThat(
            eval(
                "{\"geo_distance\":{\"origin\":{\"lat\":25.717877679163667,\"lon\":-100.43383200156751},"
                    + "\"to\":\"geo_point\"}}"))
        .isEqualTo(21926.494151786308, within(1.0));
    // seconds since the epoch, returned as a float score as in Qdrant
    assertThat(eval("{\"datetime\":\"2024-01-01T00:00:01Z\"}"))
        .isEqualTo((double) (float) 1704067201.0);
    assertThat(eval("{\"datetime_key\":\"when\"}")).isEqualTo(1704067200.0);
    // at |x - target| == scale the decay is the midpoint
    assertThat(eval("{\"lin_decay\":{\"x\":3,\"target\":1,\"scale\":2,\"midpoint\":0.3}}"))
        .isEqualTo(0.3, within(1e-6));
    assertThat(eval("{\"exp_decay\":{\"x\":3,\"target\":1,\"scale\":2,\"midpoint\":0.3}}"))
        .isEqualTo(0.3, within(1e-6));
    assertThat(eval("{\"gauss_decay\":{\"x\":-1,\"target\":1,\"scale\":2,\"midpoint\":0.3}}"))
        .isEqualTo(0.3, within(1e-6));
    assertThat(eval("{\"lin_decay\":{\"x\":10}}")).as("scale 1, midpoint 0.5: zero").isZero();
  }

  @Test
  void errorsAreQdrants() {
    assertThatThrownBy(() -> eval("\"missing\""))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "Bad request: Expected number value for missing in the payload and/or in the formula"
                + " defaults. Error: No value found in a payload nor defaults");
    assertThatThrownBy(() -> eval("\"array\"")).hasMessageContaining("Value is not a number");
    assertThatThrownBy(() -> eval("{\"div\":{\"left\":1,\"right\":0}}"))
        .hasMessage("Bad request: The expression 1.0/0.0 = Infinity produced a non-finite number");
    assertThatThrownBy(() -> eval("{\"sqrt\":-1}")).hasMessageContaining("non-finite");
    assertThatThrownBy(() -> formula("{\"formula\":\"$scores\"}"))
        .hasMessageContaining("Invalid reserved variable: $scores");
    assertThatThrownBy(() -> formula("{\"formula\":{\"exp_decay\":{\"x\":1,\"midpoint\":1}}}"))
        .hasMessageContaining("Decay midpoint should be in the range (0.0, 1.0), got 1.0");
    assertThatThrownBy(() -> formula("{\"formula\":{\"lin_decay\":{\"x\":1,\"scale\":0}}}"))
        .hasMessageContaining("Decay scale should be non-zero positive, got 0.0");
    assertThatThrownBy(() -> formula("{\"formula\":1,\"bogus\":2}"))
        .hasMessageContaining("unknown field `bogus`");
    assertThatThrownBy(() -> formula("{\"formula\":{\"sum\":[1],\"neg\":2}}"))
        .hasMessageContaining("exactly one operator");
  }
}
