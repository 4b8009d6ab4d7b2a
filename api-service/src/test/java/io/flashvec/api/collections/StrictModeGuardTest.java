package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.api.web.Json;
import io.flashvec.index.payload.PayloadFieldSchema;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

class StrictModeGuardTest {

  private static JsonNode json(String s) {
    return Json.parse(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void conditionsAreCountedAsQdrantCountsThemNestedOnesIncluded() {
    JsonNode f =
        json(
            "{\"must\": [{\"key\": \"a\", \"match\": {\"value\": 1}},"
                + " {\"nested\": {\"key\": \"x\", \"filter\": {\"must\": [{\"key\": \"b\","
                + " \"match\": {\"any\": [1, 2, 3]}}, {\"key\": \"c\", \"range\": {\"gt\": 1}}]}}}],"
                + " \"should\": {\"has_id\": [1, 2, 3, 4]},"
                + " \"must_not\": [{\"must\": [{\"is_empty\": {\"key\": \"d\"}}]}],"
                + " \"min_should\": {\"conditions\": [{\"key\": \"e\", \"match\": {\"except\":"
                + " [\"p\", \"q\"]}}], \"min_count\": 1}}");
    assertThat(StrictModeGuard.conditions(f)).isEqualTo(6);
    assertThat(StrictModeGuard.maxConditionSize(f)).isEqualTo(4);
    assertThat(StrictModeGuard.conditions(json("{}"))).isZero();
    assertThat(StrictModeGuard.conditions(null)).isZero();
  }

  private static StrictModeGuard.Unindexed unindexed(String filter, PayloadFieldSchema... fs) {
    Map<String, PayloadFieldSchema> indexes = new java.util.HashMap<>();
    for (PayloadFieldSchema f : fs) {
      indexes.put(f.field(), f);
    }
    StrictModeGuard.Unindexed u = new StrictModeGuard.Unindexed(indexes);
    u.filter("", json(filter));
    return u;
  }

  private static PayloadFieldSchema schema(String field, String schema) {
    return PayloadFieldSchema.parse(field, json(schema));
  }

  @Test
  void aKeyNeedsAnIndexThatServesItsCondition() {
    String city = "{\"must\": [{\"key\": \"city\", \"match\": {\"value\": \"Berlin\"}}]}";
    StrictModeGuard.Unindexed u = unindexed(city);
    assertThat(u.key).isEqualTo("city");
    assertThat(u.types).containsExactly("keyword");
    assertThat(unindexed(city, schema("city", "\"keyword\"")).key).isNull();
    // an integer index does not serve a string match
    assertThat(unindexed(city, schema("city", "\"integer\"")).key).isEqualTo("city");
    String range = "{\"must\": [{\"key\": \"n\", \"range\": {\"gte\": 1}}]}";
    assertThat(unindexed(range).types).containsExactly("float", "integer");
    assertThat(unindexed(range, schema("n", "\"float\"")).key).isNull();
    String uuid =
        "{\"must\": [{\"key\": \"u\", \"match\": {\"value\":"
            + " \"f47ac10b-58cc-4372-a567-0e02b2c3d479\"}}]}";
    assertThat(unindexed(uuid).types).containsExactly("keyword", "uuid");
    String phrase = "{\"must\": [{\"key\": \"t\", \"match\": {\"phrase\": \"a b\"}}]}";
    assertThat(unindexed(phrase, schema("t", "{\"type\": \"text\"}")).types)
        .containsExactly("text (with phrase_matching: true)");
    assertThat(
            unindexed(phrase, schema("t", "{\"type\": \"text\", \"phrase_matching\": true}")).key)
        .isNull();
    String prefix = "{\"must\": [{\"key\": \"u\", \"match\": {\"prefix\": \"ht\"}}]}";
    assertThat(unindexed(prefix, schema("u", "\"keyword\"")).types)
        .containsExactly("keyword (with prefix: true)");
    assertThat(unindexed(prefix, schema("u", "{\"type\": \"keyword\", \"prefix\": true}")).key)
        .isNull();
    // ids, vectors and empty lists need no index
    assertThat(
            unindexed(
                    "{\"must\": [{\"has_id\": [1]}, {\"has_vector\": \"\"},"
                        + " {\"key\": \"k\", \"match\": {\"any\": []}}]}")
                .key)
        .isNull();
  }

  @Test
  void anIntegerIndexWithoutLookupOrRangeDoesNotServeThoseConditions() {
    String match = "{\"must\": [{\"key\": \"n\", \"match\": {\"value\": 1}}]}";
    String range = "{\"must\": [{\"key\": \"n\", \"range\": {\"gte\": 1}}]}";
    PayloadFieldSchema both =
        schema("n", "{\"type\": \"integer\", \"lookup\": true, \"range\": true}");
    PayloadFieldSchema noLookup = schema("n", "{\"type\": \"integer\", \"lookup\": false}");
    PayloadFieldSchema noRange = schema("n", "{\"type\": \"integer\", \"range\": false}");
    assertThat(unindexed(match, both).key).isNull();
    assertThat(unindexed(range, both).key).isNull();
    assertThat(unindexed(match, noLookup).key).isEqualTo("n");
    assertThat(unindexed(match, noLookup).types).containsExactly("integer");
    assertThat(unindexed(range, noLookup).key).isNull();
    assertThat(unindexed(match, noRange).key).isNull();
    assertThat(unindexed(range, noRange).key).isEqualTo("n");
    // a formula's variable is served by either capability
    for (PayloadFieldSchema f : List.of(noLookup, noRange)) {
      StrictModeGuard.Unindexed u = new StrictModeGuard.Unindexed(Map.of("n", f));
      u.expression(json("{\"sum\": [\"$score\", \"n\"]}"));
      assertThat(u.key).as(f.toString()).isNull();
    }
  }

  @Test
  void nestedKeysAreTheArrayPathAndFormulasNeedNumericIndexes() {
    String nested =
        "{\"must\": [{\"nested\": {\"key\": \"country.cities\", \"filter\": {\"must\":"
            + " [{\"key\": \"population\", \"range\": {\"gte\": 8}}]}}}]}";
    assertThat(unindexed(nested).key).isEqualTo("country.cities[].population");
    assertThat(unindexed(nested, schema("country.cities[].population", "\"float\"")).key).isNull();
    StrictModeGuard.Unindexed f = new StrictModeGuard.Unindexed(Map.of());
    f.expression(json("{\"sum\": [\"$score\", {\"mult\": [2, \"price\"]}]}"));
    assertThat(f.key).isEqualTo("price");
    assertThat(f.types).containsExactly("float", "integer");
  }

  @Test
  void numbersArePrintedAsQdrantPrintsThem() {
    assertThat(StrictModeGuard.number(2.0)).isEqualTo("2");
    assertThat(StrictModeGuard.number(1.9)).isEqualTo("1.9");
  }

  @Test
  void metadataIsMergedKeyByKeyAndNullRemovesAKey() {
    ObjectNode diff = (ObjectNode) json("{\"a\": 2, \"b\": null, \"c\": {\"x\": 1}}");
    assertThat(CollectionsController.mergeMetadata("{\"a\":1,\"b\":1,\"d\":1}", diff))
        .isEqualTo("{\"a\":2,\"d\":1,\"c\":{\"x\":1}}");
    assertThat(CollectionsController.mergeMetadata(null, diff))
        .isEqualTo("{\"a\":2,\"c\":{\"x\":1}}");
  }
}
