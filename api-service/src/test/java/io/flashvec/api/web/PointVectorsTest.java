package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.FlashVecException;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** A point's {@code vector} as Qdrant validates it before anything reaches the engine. */
class PointVectorsTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  @Test
  void anEmptyDenseVectorIsQdrantsValidationErrorNamedOrNot() {
    for (String v : new String[] {"[]", "{\"text\": []}"}) {
      assertThatThrownBy(() -> Requests.pointVectors(M.readTree(v), "points[0].vector"))
          .as(v)
          .isInstanceOfSatisfying(
              FlashVecException.class, e -> assertThat(e.httpStatus()).isEqualTo(422))
          .hasMessageContaining("dense vector must not be empty")
          .hasMessageContaining("points[0].vector");
    }
    // an empty vector inside a multivector has its own message, at Qdrant's path
    assertThatThrownBy(() -> Requests.pointVectors(M.readTree("{\"m\": [[]]}"), "v"))
        .hasMessageContaining("v.?.data: all vectors must be non-empty");
    assertThat(Requests.pointVectors(M.readTree("{\"text\": [1, 2]}"), "v")).isNotNull();
  }
}
