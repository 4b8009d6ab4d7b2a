package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.index.InvalidInputException;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** A search's {@code params}: what FlashVec honours is read, anything else is refused by name. */
class SearchParamsParsingTest {

  private static final JsonMapper M = JsonMapper.builder().build();

  @Test
  void paramsFlashVecDoesNotHonourAreRefusedNamingThem() {
    assertThat(
            Requests.params(
                    M.readTree(
                        "{\"params\": {\"hnsw_ef\": 64, \"exact\": false, \"indexed_only\": false,"
                            + " \"acorn\": {\"enable\": false}, \"idf\": \"global\"}}"))
                .searchList())
        .isEqualTo(64);
    String[][] refused = {
      {"{\"params\": {\"hnsw_eff\": 64}}", "params.hnsw_eff"},
      {"{\"params\": {\"indexed_only\": true}}", "params.indexed_only"},
      {"{\"params\": {\"acorn\": {\"enable\": true}}}", "params.acorn"},
    };
    for (String[] r : refused) {
      assertThatThrownBy(() -> Requests.params(M.readTree(r[0])))
          .as(r[0])
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining(r[1]);
    }
  }
}
