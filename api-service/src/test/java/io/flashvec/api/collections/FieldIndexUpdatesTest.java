package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.api.web.Json;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.DenseVectorParams;
import io.flashvec.index.Distance;
import io.flashvec.index.FieldIndex;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * A collection update of the graph settings of named vectors other than the primary one (ADR 0040):
 * what it merges into each vector's index, and what it refuses naming the field.
 */
class FieldIndexUpdatesTest {

  private static final String SCALAR = "{\"scalar\":{\"type\":\"int8\",\"quantile\":0.95}}";

  private static CollectionConfig config(FieldIndex txt, FieldIndex other) {
    Map<String, DenseVectorParams> dense = new LinkedHashMap<>();
    dense.put("txt", new DenseVectorParams(8, Distance.EUCLID, false, false, txt));
    dense.put("other", new DenseVectorParams(8, Distance.COSINE, false, false, other));
    dense.put("man", new DenseVectorParams(8, Distance.MANHATTAN, false, false));
    dense.put("multi", new DenseVectorParams(8, Distance.DOT, false, true));
    return new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT, Map.of(), "img", dense);
  }

  private static final CollectionConfig PLAIN = config(FieldIndex.DEFAULT, FieldIndex.DEFAULT);

  private static JsonNode json(String s) {
    return Json.parse(s.getBytes(StandardCharsets.UTF_8));
  }

  /** The indexes an update body gives, after the checks a PATCH runs first. */
  private static Map<String, FieldIndex> update(CollectionConfig config, String body) {
    JsonNode b = json(body);
    CollectionSettings.quantizationAlias(b, false);
    CollectionSettings.checkUpdate(b, () -> config, () -> 32, new CollectionSettings.Server(0.2));
    return CollectionSettings.fieldIndexUpdates(b, config);
  }

  @Test
  void mAndEfConstructMergeIntoTheVectorsIndex() {
    assertThat(update(PLAIN, "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 8}}}}"))
        .containsExactly(
            Map.entry("txt", new FieldIndex(8, 100, Float.NaN, "{\"m\":8}", null, false)));
    FieldIndex own = new FieldIndex(8, 100, Float.NaN, "{\"m\":8}", null, false);
    assertThat(
            update(
                config(own, FieldIndex.DEFAULT),
                "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"ef_construct\": 50}}}}"))
        .containsExactly(
            Map.entry(
                "txt",
                new FieldIndex(8, 50, Float.NaN, "{\"m\":8,\"ef_construct\":50}", null, false)));
    // no change: nothing to rebuild
    assertThat(
            update(
                config(own, FieldIndex.DEFAULT),
                "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 8}}}}"))
        .isEmpty();
    // m 0: no graph
    assertThat(update(PLAIN, "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 0}}}}").get("txt"))
        .matches(f -> !f.graph());
  }

  @Test
  void aVectorWithoutAGraphShowsTheNoIndexItWasGiven() {
    assertThat(update(PLAIN, "{\"vectors\": {\"multi\": {\"hnsw_config\": {\"m\": 0}}}}"))
        .containsExactly(
            Map.entry("multi", new FieldIndex(0, 100, Float.NaN, "{\"m\":0}", null, false)));
  }

  @Test
  void payloadMZeroIsTheNoPayloadLinksFlashVecHas() {
    // a multivector without a graph: m 0 with payload_m 0 is still no index, shown as given
    assertThat(
            update(
                PLAIN,
                "{\"vectors\": {\"multi\": {\"hnsw_config\": {\"m\": 0, \"payload_m\": 0}}}}"))
        .containsExactly(
            Map.entry(
                "multi",
                new FieldIndex(0, 100, Float.NaN, "{\"m\":0,\"payload_m\":0}", null, false)));
    // a vector with a graph: payload_m 0 changes nothing of it
    assertThat(
            update(
                PLAIN, "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 8, \"payload_m\": 0}}}}"))
        .containsExactly(
            Map.entry(
                "txt",
                new FieldIndex(8, 100, Float.NaN, "{\"m\":8,\"payload_m\":0}", null, false)));
    refused(
        "{\"vectors\": {\"multi\": {\"hnsw_config\": {\"m\": 0, \"payload_m\": 1}}}}",
        "vectors.multi.hnsw_config");
    refused(
        "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"payload_m\": 16}}}}",
        "vectors.txt.hnsw_config.payload_m");
  }

  @Test
  void scalarQuantizationIsSetChangedAndDisabled() {
    FieldIndex set =
        update(PLAIN, "{\"vectors\": {\"txt\": {\"quantization\": " + SCALAR + "}}}").get("txt");
    assertThat(set).isEqualTo(new FieldIndex(16, 100, 0.95f, null, SCALAR, false));
    FieldIndex off =
        update(
                config(set, FieldIndex.DEFAULT),
                "{\"vectors\": {\"txt\": {\"quantization_config\": \"Disabled\"}}}")
            .get("txt");
    assertThat(off).isEqualTo(FieldIndex.DEFAULT);
    // disabling the vector's own leaves the collection's, as Qdrant's vector falls back to it
    FieldIndex inherited = new FieldIndex(16, 100, 0.95f, null, SCALAR, true);
    String own = "{\"scalar\":{\"type\":\"int8\",\"quantile\":0.9}}";
    FieldIndex mine = new FieldIndex(16, 100, 0.9f, null, own, false);
    assertThat(
            update(
                    config(mine, inherited),
                    "{\"vectors\": {\"txt\": {\"quantization_config\": \"Disabled\"}}}")
                .get("txt"))
        .isEqualTo(inherited);
  }

  /** The primary vector's index an update body gives ({@code null}: unchanged). */
  private static IndexParams primary(CollectionConfig config, String body) {
    JsonNode b = json(body);
    CollectionSettings.checkUpdate(b, () -> config, () -> 32, new CollectionSettings.Server(0.2));
    return CollectionSettings.primaryIndexUpdate(b, config);
  }

  @Test
  void thePrimaryVectorsMAndEfConstructChangeItsGraphAndItsOwnWin() {
    IndexParams d = IndexParams.DEFAULT;
    assertThat(primary(PLAIN, "{\"vectors\": {\"img\": {\"hnsw_config\": {\"m\": 8}}}}"))
        .isEqualTo(new IndexParams(d.type(), 16, d.buildSearchList(), d.alpha(), 0));
    assertThat(primary(PLAIN, "{\"hnsw_config\": {\"ef_construct\": 64}}"))
        .isEqualTo(new IndexParams(d.type(), d.maxDegree(), 64, d.alpha(), 0));
    assertThat(
            primary(
                PLAIN,
                "{\"hnsw_config\": {\"m\": 4, \"ef_construct\": 64}, \"vectors\": {\"img\":"
                    + " {\"hnsw_config\": {\"m\": 10}}}}"))
        .isEqualTo(new IndexParams(d.type(), 20, 64, d.alpha(), 0));
    // the same values, or a named vector's: the primary's graph stays
    assertThat(primary(PLAIN, "{\"hnsw_config\": {\"m\": 32, \"ef_construct\": 100}}")).isNull();
    assertThat(primary(PLAIN, "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 8}}}}")).isNull();
    // a flat collection has no graph to change
    CollectionConfig flat =
        new CollectionConfig(
            4, Distance.DOT, 1, 1, new IndexParams(IndexParams.FLAT, 64, 100, 1.2f, 0));
    assertThatThrownBy(() -> primary(flat, "{\"hnsw_config\": {\"m\": 16}}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("hnsw_config.m");
    assertThatThrownBy(() -> primary(flat, "{\"hnsw_config\": {\"ef_construct\": 50}}"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("hnsw_config.ef_construct");
    assertThatThrownBy(() -> primary(PLAIN, "{\"hnsw_config\": {\"ef_construct\": 20000}}"))
        .hasMessageContaining("ef_construct");
  }

  @Test
  void whatCannotBeHonouredIsRefusedNamingTheField() {
    refused("{\"vectors\": {\"img\": {\"hnsw_config\": {\"m\": 0}}}}", "vectors.img.hnsw_config.m");
    refused(
        "{\"vectors\": {\"txt\": {\"quantization_config\": {\"product\": {\"compression\":"
            + " \"x16\"}}}}}",
        "vectors.txt.quantization_config");
    refused(
        "{\"vectors\": {\"txt\": {\"quantization_config\": {\"binary\": {\"query_encoding\":"
            + " \"binary\"}}}}}",
        "vectors.txt.quantization_config.binary.query_encoding");
    refused("{\"vectors\": {\"txt\": {\"on_disk\": true}}}", "vectors.txt.on_disk");
    refused(
        "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"m\": 0}, \"quantization_config\": "
            + SCALAR
            + "}}}",
        "vectors.txt.quantization_config");
    refused(
        "{\"vectors\": {\"txt\": {\"hnsw_config\": {\"payload_m\": 4}}}}",
        "vectors.txt.hnsw_config.payload_m");
    refused("{\"vectors\": {\"man\": {\"hnsw_config\": {\"m\": 16}}}}", "vectors.man.hnsw_config");
    refused(
        "{\"vectors\": {\"multi\": {\"quantization_config\": " + SCALAR + "}}}",
        "vectors.multi.quantization_config");
  }

  @Test
  void theConfigKeepsTheVectorsKeyAndValues() {
    CollectionConfig added =
        PLAIN.withDenseVector("late", new DenseVectorParams(8, Distance.DOT, false, false));
    String key = added.denseKey("late");
    FieldIndex m8 = new FieldIndex(8, 100, Float.NaN, "{\"m\":8}", null, false);
    CollectionConfig next = added.withDenseIndex("late", m8);
    assertThat(next.denseKey("late")).isEqualTo(key);
    assertThat(next.denseField(key).index()).isEqualTo(m8);
    assertThat(next.fieldGeneration()).isEqualTo(added.fieldGeneration());
    assertThat(next.denseField(key).dimension()).isEqualTo(8);
  }

  private static void refused(String body, String field) {
    assertThatThrownBy(() -> update(PLAIN, body))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining(field);
  }
}
