package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.collections.StrictMode.Field;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.ValidationException;
import io.flashvec.index.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class StrictModeTest {

  private static JsonNode json(String s) {
    return Json.parse(s.getBytes(StandardCharsets.UTF_8));
  }

  private static StrictMode parse(String s) {
    return StrictMode.parse(json(s), "strict_mode_config", Set.of("text"), Set.of("m"));
  }

  @Test
  void everyEnforcedFieldParsesAndIsShownInQdrantsOrder() {
    String all =
        "{\"max_payload_index_count\":3,\"enabled\":true,\"max_query_limit\":10,\"max_timeout\":2,"
            + "\"unindexed_filtering_retrieve\":false,\"unindexed_filtering_update\":false,"
            + "\"search_max_hnsw_ef\":3,\"search_allow_exact\":false,"
            + "\"search_max_oversampling\":1.5,\"upsert_max_batchsize\":7,"
            + "\"search_max_batchsize\":8,\"max_collection_vector_size_bytes\":240,"
            + "\"read_rate_limit\":1,\"write_rate_limit\":2,"
            + "\"max_collection_payload_size_bytes\":45000,\"max_points_count\":9,"
            + "\"filter_max_conditions\":5,\"condition_max_size\":6,"
            + "\"sparse_config\":{\"text\":{\"max_length\":4}}}";
    StrictMode m = parse(all);
    assertThat(m.enabled()).isTrue();
    assertThat(m.limit(Field.MAX_QUERY_LIMIT)).isEqualTo(10);
    assertThat(m.flag(Field.SEARCH_ALLOW_EXACT)).isFalse();
    assertThat(m.maxOversampling()).isEqualTo(1.5);
    assertThat(m.sparseMaxLength()).containsEntry("text", 4L);
    assertThat(m.toJson().toString())
        .isEqualTo(
            "{\"enabled\":true,\"max_query_limit\":10,\"max_timeout\":2,"
                + "\"unindexed_filtering_retrieve\":false,\"unindexed_filtering_update\":false,"
                + "\"search_max_hnsw_ef\":3,\"search_allow_exact\":false,"
                + "\"search_max_oversampling\":1.5,\"upsert_max_batchsize\":7,"
                + "\"search_max_batchsize\":8,\"max_collection_vector_size_bytes\":240,"
                + "\"read_rate_limit\":1,\"write_rate_limit\":2,"
                + "\"max_collection_payload_size_bytes\":45000,\"max_points_count\":9,"
                + "\"filter_max_conditions\":5,\"condition_max_size\":6,"
                + "\"max_payload_index_count\":3,\"sparse_config\":{\"text\":{\"max_length\":4}}}");
    assertThat(StrictMode.fromJson(m.toJson().toString())).isEqualTo(m);
  }

  @Test
  void anUpdateReplacesTheFieldsItGivesAndKeepsTheRest() {
    StrictMode stored = parse("{\"enabled\":true,\"write_rate_limit\":1,\"max_query_limit\":4}");
    StrictMode merged =
        stored.merge(
            parse("{\"read_rate_limit\":2,\"write_rate_limit\":null,\"max_query_limit\":3}"));
    assertThat(merged.toJson().toString())
        .isEqualTo(
            "{\"enabled\":true,\"max_query_limit\":3,\"read_rate_limit\":2,"
                + "\"write_rate_limit\":1}");
    assertThat(merged.merge(parse("{\"enabled\":false}")).enabled()).isFalse();
    // sparse_config is replaced as a whole, as in Qdrant
    StrictMode sparse = parse("{\"sparse_config\":{\"text\":{\"max_length\":4}}}");
    assertThat(sparse.merge(parse("{\"sparse_config\":{\"text\":{}}}")).toJson().toString())
        .isEqualTo("{\"sparse_config\":{\"text\":{}}}");
    assertThat(sparse.merge(parse("{}")).sparseMaxLength()).containsEntry("text", 4L);
    // and multivector_config, beside it
    StrictMode multi =
        StrictMode.parse(
            json("{\"multivector_config\":{\"m\":{\"max_vectors\":5}}}"),
            "strict_mode_config",
            Set.of(),
            Set.of("m"));
    assertThat(multi.multivectorMaxVectors()).containsEntry("m", 5L);
    assertThat(sparse.merge(multi).toJson().toString())
        .isEqualTo(
            "{\"sparse_config\":{\"text\":{\"max_length\":4}},"
                + "\"multivector_config\":{\"m\":{\"max_vectors\":5}}}");
    assertThat(StrictMode.fromJson(multi.toJson().toString())).isEqualTo(multi);
    assertThatThrownBy(
            () ->
                StrictMode.parse(
                    json("{\"multivector_config\":{\"x\":{\"max_vectors\":5}}}"),
                    "strict_mode_config",
                    Set.of(),
                    Set.of("m")))
        .hasMessageContaining(
            "strict_mode_config.multivector_config.x: the collection has no"
                + " multivector of that name (it has m)");
    assertThat(StrictMode.NONE.enabled()).isFalse();
    assertThat(StrictMode.NONE.merge(parse("{\"enabled\":true}")).enabled()).isTrue();
  }

  @Test
  void wrongTypesAndUnknownFieldsAre400sAndValuesBelowTheirMinimum422s() {
    assertThatThrownBy(() -> parse("{\"max_query_limit\":\"10\"}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("strict_mode_config.max_query_limit must be a non-negative integer");
    assertThatThrownBy(() -> parse("{\"enabled\":1}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("strict_mode_config.enabled must be a boolean");
    assertThatThrownBy(() -> parse("{\"search_max_oversampling\":true}"))
        .hasMessageContaining("must be a number");
    assertThatThrownBy(() -> parse("{\"max_qeury_limit\":3}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("unknown field `strict_mode_config.max_qeury_limit`");
    assertThatThrownBy(() -> parse("{\"upsert_max_batchsize\":-1}"))
        .isInstanceOf(InvalidInputException.class);
    for (String f :
        new String[] {
          "max_query_limit",
          "max_timeout",
          "read_rate_limit",
          "write_rate_limit",
          "max_points_count"
        }) {
      assertThatThrownBy(() -> parse("{\"" + f + "\":0}"))
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining(
              "strict_mode_config." + f + ": value 0 invalid, must be 1 or larger");
    }
    assertThatThrownBy(() -> parse("{\"sparse_config\":{\"text\":{\"max_length\":0}}}"))
        .isInstanceOf(ValidationException.class);
    // zero is a limit where Qdrant allows it
    assertThat(parse("{\"max_payload_index_count\":0}").limit(Field.MAX_PAYLOAD_INDEX_COUNT))
        .isZero();
  }

  @Test
  void settingsFlashVecCannotEnforceAreRefusedNamingThem() {
    assertThatThrownBy(() -> parse("{\"max_resident_memory_percent\":50}"))
        .hasMessageContaining("strict_mode_config.max_resident_memory_percent");
    assertThatThrownBy(() -> parse("{\"multivector_config\":{\"x\":{\"max_vectors\":5}}}"))
        .hasMessageContaining("strict_mode_config.multivector_config.x")
        .hasMessageContaining("(it has m)");
    assertThatThrownBy(() -> parse("{\"sparse_config\":{\"other\":{\"max_length\":5}}}"))
        .hasMessageContaining("strict_mode_config.sparse_config.other")
        .hasMessageContaining("(it has text)");
    // null values set nothing; an empty multivector_config is no limit, shown as given
    assertThat(
            parse(
                    "{\"max_points_count\":null,\"multivector_config\":{},"
                        + "\"max_resident_memory_percent\":null}")
                .toJson()
                .toString())
        .isEqualTo("{\"multivector_config\":{}}");
  }
}
