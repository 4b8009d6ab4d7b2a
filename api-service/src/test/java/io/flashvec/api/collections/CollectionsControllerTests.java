package io.flashvec.api.collections;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.flashvec.api.FlashVecProperties;
import io.flashvec.api.web.Blocking;
import io.flashvec.api.web.ErrorHandler;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;
import io.flashvec.storage.FsyncPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Collection settings: every field of Qdrant's create and update bodies is honoured, refused with a
 * 400 naming it, or accepted only with a value that changes nothing; values of the wrong JSON type
 * are a 400 naming the field, never a 500.
 */
@WebFluxTest(controllers = CollectionsController.class)
@Import({Blocking.class, ErrorHandler.class})
@EnableConfigurationProperties(FlashVecProperties.class)
class CollectionsControllerTests {

  @Autowired WebTestClient client;
  @MockitoBean CollectionService service;

  /** Strict mode has its own tests; here it lets every request through. */
  @MockitoBean io.flashvec.api.collections.StrictModeGuard strict;

  private String error(String method, String body) {
    var spec = method.equals("PUT") ? client.put() : client.patch();
    byte[] b =
        spec.uri("/collections/c")
            .contentType(MediaType.APPLICATION_JSON)
            .bodyValue(body)
            .exchange()
            .expectStatus()
            .isBadRequest()
            .expectBody()
            .returnResult()
            .getResponseBody();
    return Json.text(b);
  }

  @Test
  void aSettingOfTheWrongTypeIsRefusedNamingTheField() {
    String vectors = "\"vectors\":{\"size\":4,\"distance\":\"Dot\"}";
    String[][] cases = {
      {
        "{" + vectors + ",\"wal_config\":{\"fsync_policy\":{}}}",
        "Wrong input: wal_config.fsync_policy must be always, interval or never [fsync_policy={}]"
      },
      {
        "{" + vectors + ",\"wal_config\":{\"fsync_policy\":[]}}",
        "Wrong input: wal_config.fsync_policy must be always, interval or never [fsync_policy=[]]"
      },
      {
        "{" + vectors + ",\"wal_config\":{\"fsync_policy\":1}}",
        "Wrong input: wal_config.fsync_policy must be always, interval or never [fsync_policy=1]"
      },
      {"{" + vectors + ",\"wal_config\":[]}", "Wrong input: wal_config must be an object"},
      {"{" + vectors + ",\"hnsw_config\":\"x\"}", "Wrong input: hnsw_config must be an object"},
      {"{" + vectors + ",\"index\":{\"type\":{}}}", "Wrong input: index.type must be a string"},
      {
        "{" + vectors + ",\"optimizers_config\":{\"indexing_threshold\":25702906202927761719296}}",
        "Wrong input: optimizers_config.indexing_threshold must be a non-negative integer"
            + " [indexing_threshold=25702906202927761719296]"
      },
    };
    for (String[] c : cases) {
      assertThat(error("PUT", c[0])).as(c[0]).contains(c[1]);
    }
    for (String[] c : cases) {
      if (c[0].contains("wal_config") || c[0].contains("optimizers_config")) {
        assertThat(error("PATCH", c[0])).as(c[0]).contains(c[1]);
      }
    }
    verify(service, never()).createCollection(any(), any(), any());
    verify(service, never()).updateCollection(any(), any(), any(), any());
  }

  // -------------------------------------------------------------------------------------------
  // Every field of Qdrant's CreateCollection, UpdateCollection, VectorParams, VectorParamsDiff,
  // CollectionParamsDiff, HnswConfigDiff, OptimizersConfigDiff, WalConfigDiff, QuantizationConfig
  // and PayloadStorageParams, and what FlashVec does with it.

  /** What FlashVec does with a field's value. */
  enum Kind {
    /** Applied: the created collection or the update differs from the one without the field. */
    HONOURED,
    /** Accepted: the value is what FlashVec does anyway; the result equals the one without it. */
    NO_OP,
    /** A 400 whose message names the field; nothing is created or updated. */
    REFUSED
  }

  /**
   * One probe: {@code json} is the field and its value, put into a create body beside {@code
   * vectors} (or into {@code vectors}, {@code hnsw_config}, ..., as {@code schema} says) or into an
   * update body; {@code message} is part of the expected error for {@link Kind#REFUSED}.
   */
  record Probe(String schema, String field, String json, Kind kind, String message) {}

  /** Qdrant's fields per schema (its OpenAPI document), each of which must have a probe. */
  static final Map<String, List<String>> QDRANT_FIELDS = new LinkedHashMap<>();

  static {
    QDRANT_FIELDS.put(
        "CreateCollection",
        List.of(
            "vectors",
            "shard_number",
            "sharding_method",
            "replication_factor",
            "write_consistency_factor",
            "on_disk_payload",
            "payload",
            "hnsw_config",
            "wal_config",
            "optimizers_config",
            "quantization_config",
            "sparse_vectors",
            "strict_mode_config",
            "metadata"));
    QDRANT_FIELDS.put(
        "VectorParams",
        List.of(
            "size",
            "distance",
            "hnsw_config",
            "quantization_config",
            "on_disk",
            "memory",
            "datatype",
            "multivector_config"));
    QDRANT_FIELDS.put(
        "HnswConfigDiff",
        List.of(
            "m",
            "ef_construct",
            "full_scan_threshold",
            "max_indexing_threads",
            "on_disk",
            "memory",
            "payload_m",
            "inline_storage"));
    QDRANT_FIELDS.put(
        "OptimizersConfigDiff",
        List.of(
            "deleted_threshold",
            "vacuum_min_vector_number",
            "default_segment_number",
            "max_segment_size",
            "memmap_threshold",
            "indexing_threshold",
            "flush_interval_sec",
            "max_optimization_threads",
            "prevent_unoptimized"));
    QDRANT_FIELDS.put(
        "WalConfigDiff", List.of("wal_capacity_mb", "wal_segments_ahead", "wal_retain_closed"));
    QDRANT_FIELDS.put("QuantizationConfig", List.of("scalar", "product", "binary", "turbo"));
    QDRANT_FIELDS.put("PayloadStorageParams", List.of("memory"));
    QDRANT_FIELDS.put(
        "UpdateCollection",
        List.of(
            "vectors",
            "optimizers_config",
            "params",
            "hnsw_config",
            "quantization_config",
            "sparse_vectors",
            "strict_mode_config",
            "metadata"));
    QDRANT_FIELDS.put(
        "VectorParamsDiff", List.of("hnsw_config", "quantization_config", "on_disk", "memory"));
    QDRANT_FIELDS.put(
        "CollectionParamsDiff",
        List.of(
            "replication_factor",
            "write_consistency_factor",
            "read_fan_out_factor",
            "read_fan_out_delay_ms",
            "on_disk_payload",
            "payload"));
  }

  static final List<Probe> PROBES = new ArrayList<>();

  private static void probe(String schema, String field, String json, Kind kind, String message) {
    PROBES.add(new Probe(schema, field, json, kind, message));
  }

  private static void probe(String schema, String field, String json, Kind kind) {
    probe(schema, field, json, kind, null);
  }

  static {
    String c = "CreateCollection";
    probe(c, "vectors", "{\"vectors\":{\"size\":8,\"distance\":\"Dot\"}}", Kind.HONOURED);
    probe(c, "shard_number", "\"shard_number\":2", Kind.HONOURED);
    probe(c, "sharding_method", "\"sharding_method\":\"auto\"", Kind.NO_OP);
    probe(
        c,
        "sharding_method",
        "\"sharding_method\":\"custom\"",
        Kind.REFUSED,
        "sharding_method: only auto is supported");
    probe(c, "replication_factor", "\"replication_factor\":2", Kind.HONOURED);
    probe(c, "write_consistency_factor", "\"write_consistency_factor\":1", Kind.NO_OP);
    probe(
        c,
        "write_consistency_factor",
        "\"write_consistency_factor\":2",
        Kind.REFUSED,
        "write_consistency_factor: only 1 is supported");
    probe(c, "on_disk_payload", "\"on_disk_payload\":true", Kind.NO_OP);
    probe(c, "on_disk_payload", "\"on_disk_payload\":false", Kind.HONOURED);
    probe(
        c,
        "on_disk_payload",
        "\"on_disk_payload\":\"no\"",
        Kind.REFUSED,
        "on_disk_payload must be a boolean");
    probe(c, "payload", "\"payload\":{\"memory\":\"cold\"}", Kind.NO_OP);
    probe(c, "payload", "\"payload\":{\"memory\":\"cached\"}", Kind.HONOURED);
    probe(c, "payload", "\"on_disk_payload\":false,\"payload\":{\"memory\":\"cold\"}", Kind.NO_OP);
    probe(c, "hnsw_config", "\"hnsw_config\":{\"m\":8}", Kind.HONOURED);
    probe(c, "wal_config", "\"wal_config\":{\"fsync_policy\":\"never\"}", Kind.HONOURED);
    probe(
        c, "optimizers_config", "\"optimizers_config\":{\"indexing_threshold\":0}", Kind.HONOURED);
    probe(c, "quantization_config", "\"quantization_config\":null", Kind.NO_OP);
    // scalar quantization: the vector gets a graph of its own, navigated by int8 codes (ADR 0040)
    probe(
        c,
        "quantization_config",
        "\"quantization_config\":{\"scalar\":{\"type\":\"int8\"}}",
        Kind.HONOURED);
    probe(c, "sparse_vectors", "\"sparse_vectors\":{}", Kind.NO_OP);
    probe(c, "sparse_vectors", "\"sparse_vectors\":null", Kind.NO_OP);
    probe(c, "sparse_vectors", "\"sparse_vectors\":{\"text\":{}}", Kind.HONOURED);
    probe(
        c, "sparse_vectors", "\"sparse_vectors\":{\"text\":{\"modifier\":\"idf\"}}", Kind.HONOURED);
    probe(
        c,
        "sparse_vectors",
        "\"sparse_vectors\":{\"text\":{\"modifier\":\"bm25\"}}",
        Kind.REFUSED,
        "modifier must be none or idf [sparse_vectors.text.modifier=\"bm25\"]");
    probe(
        c,
        "sparse_vectors",
        "\"sparse_vectors\":{\"text\":{\"index\":{\"on_disk\":true}}}",
        Kind.REFUSED,
        "sparse_vectors.text.index.on_disk: only false is supported");
    probe(
        c,
        "sparse_vectors",
        "\"sparse_vectors\":{\"text\":{\"index\":{\"datatype\":\"turbo4\"}}}",
        Kind.REFUSED,
        "sparse vectors do not support the `turbo4` datatype");
    probe(
        c,
        "sparse_vectors",
        "\"sparse_vectors\":{\"text\":{\"index\":{\"memory\":\"cold\"}}}",
        Kind.REFUSED,
        "sparse_vectors.text.index.memory: is not supported: sealed segments keep sparse vectors"
            + " on the heap");
    probe(c, "strict_mode_config", "\"strict_mode_config\":null", Kind.NO_OP);
    probe(c, "strict_mode_config", "\"strict_mode_config\":{\"enabled\":false}", Kind.HONOURED);
    probe(c, "strict_mode_config", "\"strict_mode_config\":{\"enabled\":true}", Kind.HONOURED);
    probe(
        c, "strict_mode_config", "\"strict_mode_config\":{\"max_query_limit\":10}", Kind.HONOURED);
    probe(
        c,
        "strict_mode_config",
        "\"strict_mode_config\":{\"max_collection_payload_size_bytes\":10}",
        Kind.HONOURED);
    probe(
        c,
        "strict_mode_config",
        "\"strict_mode_config\":{\"multivector_config\":{\"m\":{\"max_vectors\":2}}}",
        Kind.REFUSED,
        "strict_mode_config.multivector_config.m: the collection has no multivector of that"
            + " name (it has none)");
    probe(c, "metadata", "\"metadata\":null", Kind.NO_OP);
    probe(c, "metadata", "\"metadata\":{}", Kind.HONOURED);
    probe(c, "metadata", "\"metadata\":{\"a\":1}", Kind.HONOURED);
    probe(c, "metadata", "\"metadata\":[1]", Kind.REFUSED, "metadata must be a JSON object");
    probe(c, "(FlashVec) index", "\"index\":{\"type\":\"hnsw\"}", Kind.HONOURED);
    probe(
        c,
        "(unknown)",
        "\"shard_numbr\":2",
        Kind.REFUSED,
        "Wrong input: unknown field `shard_numbr`; known: hnsw_config, index,");
    probe(c, "(unknown)", "\"init_from\":null", Kind.NO_OP);

    String v = "VectorParams";
    probe(v, "size", "{\"vectors\":{\"size\":5,\"distance\":\"Dot\"}}", Kind.HONOURED);
    probe(v, "distance", "{\"vectors\":{\"size\":4,\"distance\":\"Cosine\"}}", Kind.HONOURED);
    probe(v, "hnsw_config", "vectors:\"hnsw_config\":{\"m\":8}", Kind.HONOURED);
    probe(v, "hnsw_config", "vectors:\"hnsw_config\":{\"m\":0}", Kind.HONOURED);
    probe(
        v,
        "hnsw_config",
        "vectors:\"hnsw_config\":{\"payload_m\":16}",
        Kind.REFUSED,
        "vectors.hnsw_config.payload_m: only 0 is supported");
    probe(v, "hnsw_config", "vectors:\"hnsw_config\":{\"payload_m\":0}", Kind.NO_OP);
    probe(v, "quantization_config", "vectors:\"quantization_config\":null", Kind.NO_OP);
    // binary: one-bit TurboQuant codes, which make the vector one with a graph of its own
    probe(
        v, "quantization_config", "vectors:\"quantization_config\":{\"binary\":{}}", Kind.HONOURED);
    probe(
        v,
        "quantization_config",
        "vectors:\"quantization_config\":{\"binary\":{\"query_encoding\":\"scalar8bits\"}}",
        Kind.REFUSED,
        "vectors.quantization_config.binary.query_encoding: only default is supported");
    probe(v, "on_disk", "vectors:\"on_disk\":true", Kind.NO_OP);
    // vectors in RAM: without an explicit index type, the in-memory hnsw index is chosen
    probe(v, "on_disk", "vectors:\"on_disk\":false", Kind.HONOURED);
    probe(
        v,
        "on_disk",
        "vectors:\"on_disk\":false},\"index\":{\"type\":\"diskann\"",
        Kind.REFUSED,
        "vectors.on_disk: false (vectors in RAM) is not supported; FlashVec keeps vectors on disk");
    // the in-memory index types keep vectors in RAM: on_disk false is what they do
    probe(v, "on_disk", "vectors:\"on_disk\":false},\"index\":{\"type\":\"hnsw\"", Kind.HONOURED);
    probe(
        v,
        "on_disk",
        "vectors:\"on_disk\":true},\"index\":{\"type\":\"flat\"",
        Kind.REFUSED,
        "vectors.on_disk: must be false: index.type flat keeps vectors in memory");
    probe(v, "memory", "vectors:\"memory\":\"cold\"", Kind.NO_OP);
    probe(
        v,
        "memory",
        "vectors:\"memory\":\"cached\"",
        Kind.REFUSED,
        "vectors.memory: only cold is supported");
    probe(v, "datatype", "vectors:\"datatype\":\"float32\"", Kind.NO_OP);
    // a converted vector is a field of its own: its values are converted on every write
    probe(v, "datatype", "vectors:\"datatype\":\"uint8\"", Kind.HONOURED);
    probe(v, "datatype", "vectors:\"datatype\":\"float16\"", Kind.HONOURED);
    probe(v, "datatype", "vectors:\"datatype\":\"turbo4\"", Kind.HONOURED);
    probe(
        v,
        "datatype",
        "{\"vectors\":{\"size\":4,\"distance\":\"Cosine\",\"datatype\":\"uint8\"}}",
        Kind.REFUSED,
        "vectors.datatype: uint8 is not supported with Cosine");
    probe(v, "multivector_config", "vectors:\"multivector_config\":null", Kind.NO_OP);
    // the unnamed vector as a multivector: a collection without a graph (ADR 0037)
    probe(
        v,
        "multivector_config",
        "vectors:\"multivector_config\":{\"comparator\":\"max_sim\"}",
        Kind.HONOURED);
    probe(
        v,
        "multivector_config",
        "vectors:\"multivector_config\":{\"comparator\":\"sum\"}",
        Kind.REFUSED,
        "vectors.multivector_config.comparator");
    probe(
        v,
        "(unknown)",
        "vectors:\"on_disc\":true",
        Kind.REFUSED,
        "unknown field `vectors.on_disc`");

    String h = "HnswConfigDiff";
    probe(h, "m", "hnsw:\"m\":8", Kind.HONOURED);
    probe(h, "m", "hnsw:\"m\":0", Kind.HONOURED);
    probe(h, "ef_construct", "hnsw:\"ef_construct\":50", Kind.HONOURED);
    // the value collection info reports (and Qdrant's default): a copied config is accepted
    probe(h, "full_scan_threshold", "hnsw:\"full_scan_threshold\":10000", Kind.NO_OP);
    probe(
        h,
        "full_scan_threshold",
        "hnsw:\"full_scan_threshold\":5000",
        Kind.REFUSED,
        "hnsw_config.full_scan_threshold: only 10000 (what collection info reports) is supported");
    probe(h, "max_indexing_threads", "hnsw:\"max_indexing_threads\":0", Kind.NO_OP);
    probe(
        h,
        "max_indexing_threads",
        "hnsw:\"max_indexing_threads\":4",
        Kind.REFUSED,
        "hnsw_config.max_indexing_threads: only 0 is supported");
    probe(h, "on_disk", "hnsw:\"on_disk\":true", Kind.NO_OP);
    // Qdrant's default graph in RAM: without an explicit index type, the in-memory hnsw index
    probe(h, "on_disk", "hnsw:\"on_disk\":false", Kind.HONOURED);
    probe(
        h,
        "on_disk",
        "hnsw:\"on_disk\":false},\"index\":{\"type\":\"diskann\"",
        Kind.REFUSED,
        "hnsw_config.on_disk: must be true for index.type diskann");
    probe(h, "memory", "hnsw:\"memory\":\"cold\"", Kind.NO_OP);
    probe(
        h,
        "memory",
        "hnsw:\"memory\":\"pinned\"",
        Kind.REFUSED,
        "hnsw_config.memory: only cold is supported");
    probe(
        h,
        "payload_m",
        "hnsw:\"payload_m\":16",
        Kind.REFUSED,
        "hnsw_config.payload_m: only 0 is supported");
    probe(h, "payload_m", "hnsw:\"payload_m\":0", Kind.NO_OP);
    probe(h, "inline_storage", "hnsw:\"inline_storage\":true", Kind.NO_OP);
    probe(
        h,
        "inline_storage",
        "hnsw:\"inline_storage\":false",
        Kind.REFUSED,
        "hnsw_config.inline_storage: must be true for index.type diskann");

    String o = "OptimizersConfigDiff";
    probe(o, "deleted_threshold", "opt:\"deleted_threshold\":0.2", Kind.NO_OP);
    probe(
        o,
        "deleted_threshold",
        "opt:\"deleted_threshold\":0.5",
        Kind.REFUSED,
        "optimizers_config.deleted_threshold: must be 0.2");
    probe(o, "vacuum_min_vector_number", "opt:\"vacuum_min_vector_number\":1000", Kind.NO_OP);
    probe(
        o,
        "vacuum_min_vector_number",
        "opt:\"vacuum_min_vector_number\":100",
        Kind.REFUSED,
        "optimizers_config.vacuum_min_vector_number: only 1000 (what collection info reports)");
    probe(o, "default_segment_number", "opt:\"default_segment_number\":0", Kind.NO_OP);
    // each shard merges its smallest sealed segments while it has more (TieredMergePolicy)
    probe(o, "default_segment_number", "opt:\"default_segment_number\":2", Kind.HONOURED);
    probe(
        o,
        "default_segment_number",
        "opt:\"default_segment_number\":-1",
        Kind.REFUSED,
        "default_segment_number must be a non-negative integer");
    probe(
        o,
        "default_segment_number",
        "PATCH{\"optimizers_config\":{\"default_segment_number\":6}}",
        Kind.HONOURED);
    probe(
        o,
        "default_segment_number",
        "PATCH{\"optimizers_config\":{\"default_segment_number\":1001}}",
        Kind.REFUSED,
        "optimizers_config.default_segment_number: at most 1000 is supported");
    probe(
        o,
        "max_segment_size",
        "opt:\"max_segment_size\":100000",
        Kind.REFUSED,
        "optimizers_config.max_segment_size: is not supported");
    probe(
        o,
        "memmap_threshold",
        "opt:\"memmap_threshold\":20000",
        Kind.REFUSED,
        "optimizers_config.memmap_threshold: is not supported");
    probe(o, "indexing_threshold", "opt:\"indexing_threshold\":0", Kind.HONOURED);
    probe(o, "flush_interval_sec", "opt:\"flush_interval_sec\":5", Kind.NO_OP);
    probe(
        o,
        "flush_interval_sec",
        "opt:\"flush_interval_sec\":1",
        Kind.REFUSED,
        "optimizers_config.flush_interval_sec: only 5 (what collection info reports)");
    probe(o, "max_optimization_threads", "opt:\"max_optimization_threads\":\"auto\"", Kind.NO_OP);
    probe(o, "max_optimization_threads", "opt:\"max_optimization_threads\":1", Kind.HONOURED);
    probe(
        o,
        "max_optimization_threads",
        "opt:\"max_optimization_threads\":0",
        Kind.REFUSED,
        "optimizers_config.max_optimization_threads: 0 (no optimizations) is not supported");
    probe(o, "prevent_unoptimized", "opt:\"prevent_unoptimized\":false", Kind.NO_OP);
    probe(
        o,
        "prevent_unoptimized",
        "opt:\"prevent_unoptimized\":true",
        Kind.REFUSED,
        "optimizers_config.prevent_unoptimized: only false is supported");

    String w = "WalConfigDiff";
    probe(w, "wal_capacity_mb", "wal:\"wal_capacity_mb\":64", Kind.NO_OP);
    probe(w, "wal_capacity_mb", "wal:\"wal_capacity_mb\":32", Kind.HONOURED);
    probe(
        w,
        "wal_capacity_mb",
        "PATCH{\"wal_config\":{\"wal_capacity_mb\":32}}",
        Kind.REFUSED,
        "wal_config.wal_capacity_mb: is set when the collection is created (64)");
    probe(w, "wal_segments_ahead", "wal:\"wal_segments_ahead\":0", Kind.NO_OP);
    probe(
        w,
        "wal_segments_ahead",
        "wal:\"wal_segments_ahead\":1",
        Kind.REFUSED,
        "wal_config.wal_segments_ahead: only 0 is supported");
    probe(w, "wal_retain_closed", "wal:\"wal_retain_closed\":1", Kind.HONOURED);
    probe(w, "wal_retain_closed", "wal:\"wal_retain_closed\":0", Kind.NO_OP);
    probe(
        w,
        "wal_retain_closed",
        "wal:\"wal_retain_closed\":-1",
        Kind.REFUSED,
        "wal_config.wal_retain_closed must be an integer from 0 to 1000");
    probe(w, "(FlashVec) fsync_policy", "wal:\"fsync_policy\":\"interval\"", Kind.HONOURED);

    String q = "QuantizationConfig";
    probe(
        q,
        "scalar",
        "\"quantization_config\":{\"scalar\":{\"type\":\"int8\",\"quantile\":0.9}}",
        Kind.HONOURED);
    probe(
        q,
        "scalar",
        "\"quantization_config\":{\"scalar\":{\"type\":\"int8\",\"always_ram\":false}}",
        Kind.REFUSED,
        "quantization_config.scalar.always_ram: must be true or absent");
    probe(
        q,
        "turbo",
        "\"quantization_config\":{\"turbo\":{\"bits\":\"bits2\",\"always_ram\":true}}",
        Kind.HONOURED);
    probe(q, "turbo", "\"quantization_config\":{\"turbo\":{}}", Kind.HONOURED);
    probe(
        q,
        "turbo",
        "\"quantization_config\":{\"turbo\":{\"bits\":\"bits3\"}}",
        Kind.REFUSED,
        "quantization_config.turbo.bits must be one of bits1, bits1_5, bits2, bits4");
    probe(
        q,
        "turbo",
        "\"quantization_config\":{\"turbo\":{\"always_ram\":false}}",
        Kind.REFUSED,
        "quantization_config.turbo.always_ram: must be true or absent");
    probe(
        q,
        "product",
        "\"quantization_config\":{\"product\":{}}",
        Kind.REFUSED,
        "quantization_config: product quantization is not supported");
    probe(q, "binary", "\"quantization_config\":{\"binary\":{}}", Kind.HONOURED);

    probe("PayloadStorageParams", "memory", "\"payload\":{\"memory\":\"cold\"}", Kind.NO_OP);
    probe("PayloadStorageParams", "memory", "\"payload\":{\"memory\":\"cached\"}", Kind.HONOURED);
    probe(
        "PayloadStorageParams",
        "memory",
        "\"payload\":{\"memory\":\"warm\"}",
        Kind.REFUSED,
        "payload.memory must be cold or cached [payload.memory=\"warm\"]");

    // updates (PATCH) of a collection created with the defaults: 4 x Dot, diskann, m 32
    String u = "UpdateCollection";
    probe(u, "vectors", "PATCH{\"vectors\":{\"\":{\"on_disk\":true}}}", Kind.NO_OP);
    probe(
        u,
        "vectors",
        "PATCH{\"vectors\":{\"image\":{}}}",
        Kind.REFUSED,
        "Wrong input: Not existing vector name error: image");
    probe(
        u,
        "optimizers_config",
        "PATCH{\"optimizers_config\":{\"indexing_threshold\":0}}",
        Kind.HONOURED);
    probe(
        u,
        "optimizers_config",
        "PATCH{\"optimizers_config\":{\"max_segment_size\":1}}",
        Kind.REFUSED,
        "optimizers_config.max_segment_size: is not supported");
    probe(u, "params", "PATCH{\"params\":{}}", Kind.NO_OP);
    probe(u, "hnsw_config", "PATCH{\"hnsw_config\":{\"m\":32,\"ef_construct\":100}}", Kind.NO_OP);
    // m and ef_construct rebuild the graphs (primaryGraphSettingsChangeByAnUpdate)
    probe(
        u,
        "hnsw_config",
        "PATCH{\"hnsw_config\":{\"m\":0}}",
        Kind.REFUSED,
        "hnsw_config.m: cannot be 0 on a collection with a graph (it is 32)");
    probe(u, "quantization_config", "PATCH{\"quantization_config\":\"Disabled\"}", Kind.NO_OP);
    probe(
        u,
        "quantization_config",
        "PATCH{\"quantization_config\":{\"product\":{\"compression\":\"x16\"}}}",
        Kind.REFUSED,
        "quantization_config: product quantization is not supported");
    probe(u, "sparse_vectors", "PATCH{\"sparse_vectors\":{}}", Kind.NO_OP);
    probe(
        u,
        "sparse_vectors",
        "PATCH{\"sparse_vectors\":{\"text\":{\"modifier\":\"idf\"}}}",
        Kind.REFUSED,
        "Wrong input: Sparse vector `text` is not specified in collection config");
    probe(u, "strict_mode_config", "PATCH{\"strict_mode_config\":null}", Kind.NO_OP);
    probe(
        u,
        "strict_mode_config",
        "PATCH{\"strict_mode_config\":{\"enabled\":false}}",
        Kind.HONOURED);
    probe(
        u, "strict_mode_config", "PATCH{\"strict_mode_config\":{\"enabled\":true}}", Kind.HONOURED);
    probe(
        u,
        "strict_mode_config",
        "PATCH{\"strict_mode_config\":{\"max_resident_memory_percent\":50}}",
        Kind.REFUSED,
        "strict_mode_config.max_resident_memory_percent: is not supported");
    probe(
        u,
        "strict_mode_config",
        "PATCH{\"strict_mode_config\":{\"max_query_limit\":\"ten\"}}",
        Kind.REFUSED,
        "strict_mode_config.max_query_limit must be a non-negative integer");
    probe(u, "metadata", "PATCH{\"metadata\":null}", Kind.NO_OP);
    probe(u, "metadata", "PATCH{\"metadata\":{\"a\":1}}", Kind.HONOURED);
    probe(
        u, "metadata", "PATCH{\"metadata\":\"a\"}", Kind.REFUSED, "metadata must be a JSON object");
    probe(
        u,
        "(FlashVec) wal_config",
        "PATCH{\"wal_config\":{\"fsync_policy\":\"never\"}}",
        Kind.HONOURED);
    probe(
        u,
        "(unknown)",
        "PATCH{\"optimizer_config\":{}}",
        Kind.REFUSED,
        "unknown field `optimizer_config`");

    String d = "VectorParamsDiff";
    probe(d, "hnsw_config", "PATCH{\"vectors\":{\"\":{\"hnsw_config\":{\"m\":32}}}}", Kind.NO_OP);
    probe(
        d,
        "hnsw_config",
        "PATCH{\"vectors\":{\"\":{\"hnsw_config\":{\"m\":0}}}}",
        Kind.REFUSED,
        "vectors.hnsw_config.m: cannot be 0 on a collection with a graph");
    probe(
        d,
        "quantization_config",
        "PATCH{\"vectors\":{\"\":{\"quantization_config\":\"Disabled\"}}}",
        Kind.NO_OP);
    probe(
        d,
        "quantization_config",
        "PATCH{\"vectors\":{\"\":{\"quantization_config\":{\"scalar\":{\"type\":\"int8\"}}}}}",
        Kind.REFUSED,
        "vectors.quantization_config: scalar quantization cannot be added to the primary vector by an update");
    probe(d, "on_disk", "PATCH{\"vectors\":{\"\":{\"on_disk\":true}}}", Kind.NO_OP);
    probe(
        d,
        "on_disk",
        "PATCH{\"vectors\":{\"\":{\"on_disk\":false}}}",
        Kind.REFUSED,
        "vectors.on_disk: false (vectors in RAM) is not supported; FlashVec keeps vectors on disk");
    probe(d, "memory", "PATCH{\"vectors\":{\"\":{\"memory\":\"cold\"}}}", Kind.NO_OP);
    probe(
        d,
        "memory",
        "PATCH{\"vectors\":{\"\":{\"memory\":\"cached\"}}}",
        Kind.REFUSED,
        "vectors.memory: only cold is supported");

    String pd = "CollectionParamsDiff";
    probe(pd, "replication_factor", "PATCH{\"params\":{\"replication_factor\":1}}", Kind.NO_OP);
    probe(
        pd,
        "replication_factor",
        "PATCH{\"params\":{\"replication_factor\":2}}",
        Kind.REFUSED,
        "params.replication_factor: cannot be changed on an existing collection (it is 1)");
    probe(
        pd,
        "write_consistency_factor",
        "PATCH{\"params\":{\"write_consistency_factor\":1}}",
        Kind.NO_OP);
    probe(
        pd,
        "write_consistency_factor",
        "PATCH{\"params\":{\"write_consistency_factor\":3}}",
        Kind.REFUSED,
        "params.write_consistency_factor: only 1 is supported");
    probe(pd, "read_fan_out_factor", "PATCH{\"params\":{\"read_fan_out_factor\":0}}", Kind.NO_OP);
    probe(
        pd,
        "read_fan_out_factor",
        "PATCH{\"params\":{\"read_fan_out_factor\":1}}",
        Kind.REFUSED,
        "params.read_fan_out_factor: only 0 is supported");
    probe(
        pd,
        "read_fan_out_delay_ms",
        "PATCH{\"params\":{\"read_fan_out_delay_ms\":100}}",
        Kind.REFUSED,
        "params.read_fan_out_delay_ms: is not supported");
    probe(pd, "on_disk_payload", "PATCH{\"params\":{\"on_disk_payload\":true}}", Kind.HONOURED);
    probe(pd, "on_disk_payload", "PATCH{\"params\":{\"on_disk_payload\":false}}", Kind.HONOURED);
    probe(pd, "payload", "PATCH{\"params\":{\"payload\":{\"memory\":\"cached\"}}}", Kind.HONOURED);
    probe(
        pd,
        "payload",
        "PATCH{\"params\":{\"payload\":{\"memory\":7}}}",
        Kind.REFUSED,
        "params.payload.memory must be cold or cached [params.payload.memory=7]");
  }

  private static final String VECTORS = "\"vectors\":{\"size\":4,\"distance\":\"Dot\"";

  /** The request body of a probe ({@code PATCH...}: an update). */
  private static String body(Probe p) {
    String j = p.json();
    if (j.startsWith("PATCH") || j.startsWith("{")) {
      return j.startsWith("PATCH") ? j.substring(5) : j;
    }
    if (j.startsWith("vectors:")) {
      return "{" + VECTORS + "," + j.substring(8) + "}}";
    }
    for (String[] prefix :
        new String[][] {
          {"hnsw:", "hnsw_config"}, {"opt:", "optimizers_config"}, {"wal:", "wal_config"}
        }) {
      if (j.startsWith(prefix[0])) {
        return "{" + VECTORS + "},\"" + prefix[1] + "\":{" + j.substring(prefix[0].length()) + "}}";
      }
    }
    return "{" + VECTORS + "}," + j + "}";
  }

  private record Created(CollectionConfig config, CollectionTuning tuning) {}

  /** The tuning without the memory placements shown (which only the description reads). */
  private static CollectionTuning withoutShown(CollectionTuning t) {
    return t == null
        ? null
        : new CollectionTuning(
            t.indexingThreshold(),
            t.fsyncPolicy(),
            t.onDiskPayload(),
            t.strictMode(),
            t.metadata(),
            t.sparseIdf(),
            t.walSegmentBytes());
  }

  private static Created withoutShown(Created c) {
    return new Created(c.config(), withoutShown(c.tuning()));
  }

  /** An update's changes without the memory placements shown: none when they were all it made. */
  private static Updated withoutShown(Updated u) {
    CollectionTuning d = withoutShown(u.documents());
    return new Updated(
        u.indexingThreshold(),
        u.fsync(),
        u.onDiskPayload(),
        CollectionTuning.DEFAULT.equals(d) ? null : d);
  }

  private Created create(String body) {
    clearInvocations(service);
    client
        .put()
        .uri("/collections/c")
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue(body)
        .exchange()
        .expectStatus()
        .isOk();
    ArgumentCaptor<CollectionConfig> config = ArgumentCaptor.forClass(CollectionConfig.class);
    ArgumentCaptor<CollectionTuning> tuning = ArgumentCaptor.forClass(CollectionTuning.class);
    verify(service).createCollection(eq("c"), config.capture(), tuning.capture());
    return new Created(config.getValue(), tuning.getValue());
  }

  /**
   * An update's arguments; {@code documents}: the strict mode and metadata change applied to the
   * default settings, {@code null} when there was none.
   */
  private record Updated(
      Integer indexingThreshold,
      FsyncPolicy fsync,
      Boolean onDiskPayload,
      CollectionTuning documents) {
    Updated(Integer indexingThreshold, FsyncPolicy fsync, Boolean onDiskPayload) {
      this(indexingThreshold, fsync, onDiskPayload, null);
    }
  }

  @SuppressWarnings("unchecked")
  private Updated update(String body) {
    clearInvocations(service);
    when(service.settings("c"))
        .thenReturn(
            new CollectionService.Settings(
                new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT),
                CollectionTuning.DEFAULT,
                io.flashvec.index.payload.PayloadSchema.EMPTY));
    client
        .patch()
        .uri("/collections/c")
        .contentType(MediaType.APPLICATION_JSON)
        .bodyValue(body)
        .exchange()
        .expectStatus()
        .isOk();
    ArgumentCaptor<Integer> threshold = ArgumentCaptor.forClass(Integer.class);
    ArgumentCaptor<FsyncPolicy> fsync = ArgumentCaptor.forClass(FsyncPolicy.class);
    ArgumentCaptor<Boolean> onDiskPayload = ArgumentCaptor.forClass(Boolean.class);
    verify(service)
        .updateCollection(eq("c"), threshold.capture(), fsync.capture(), onDiskPayload.capture());
    ArgumentCaptor<java.util.function.UnaryOperator<CollectionTuning>> change =
        ArgumentCaptor.forClass(java.util.function.UnaryOperator.class);
    verify(service, org.mockito.Mockito.atMost(1)).updateCollection(eq("c"), change.capture());
    CollectionTuning documents =
        change.getAllValues().isEmpty() ? null : change.getValue().apply(CollectionTuning.DEFAULT);
    return new Updated(threshold.getValue(), fsync.getValue(), onDiskPayload.getValue(), documents);
  }

  /**
   * The primary vector's m and ef_construct, given in its own hnsw_config or the collection's,
   * change the config's index (persisted and applied by {@code changeVectors}); the vector's own
   * wins.
   */
  @Test
  void primaryGraphSettingsChangeByAnUpdate() {
    CollectionConfig current = new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT);
    when(service.describe("c"))
        .thenReturn(new CollectionService.CollectionDescription("c", current, null));
    for (String[] c :
        new String[][] {
          {"{\"vectors\":{\"\":{\"hnsw_config\":{\"m\":8,\"ef_construct\":40}}}}", "16", "40"},
          {"{\"hnsw_config\":{\"ef_construct\":64}}", "64", "64"},
          {
            "{\"hnsw_config\":{\"m\":4,\"ef_construct\":50},"
                + "\"vectors\":{\"\":{\"hnsw_config\":{\"m\":12}}}}",
            "24",
            "50"
          }
        }) {
      update(c[0]);
      ArgumentCaptor<java.util.function.UnaryOperator<CollectionConfig>> change =
          ArgumentCaptor.forClass(java.util.function.UnaryOperator.class);
      verify(service).changeVectors(eq("c"), change.capture());
      IndexParams next = change.getValue().apply(current).index();
      assertThat(next)
          .as(c[0])
          .isEqualTo(
              new IndexParams(
                  IndexParams.DISKANN,
                  Integer.parseInt(c[1]),
                  Integer.parseInt(c[2]),
                  IndexParams.DEFAULT.alpha(),
                  0));
    }
    // the same settings: nothing to rebuild
    update("{\"hnsw_config\":{\"m\":32,\"ef_construct\":100}}");
    verify(service, never()).changeVectors(any(), any());
  }

  @Test
  void payloadPlacementIsHonouredAndPinnedIsRefusedAsQdrantDoes() {
    CollectionConfig current = new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT);
    when(service.describe("c"))
        .thenReturn(new CollectionService.CollectionDescription("c", current, null));
    assertThat(create("{" + VECTORS + "},\"on_disk_payload\":false}").tuning())
        .isEqualTo(new CollectionTuning(-1, null, false));
    assertThat(create("{" + VECTORS + "},\"payload\":{\"memory\":\"cached\"}}").tuning())
        .isEqualTo(
            new CollectionTuning(-1, null, false)
                .withMemoryShown(Set.of(CollectionTuning.PAYLOAD_MEMORY)));
    assertThat(
            create("{\"vectors\":{\"size\":4,\"distance\":\"Dot\",\"memory\":\"cold\"}}")
                .tuning()
                .memoryShown())
        .containsExactly(CollectionTuning.VECTORS_MEMORY);
    assertThat(update("{\"vectors\":{\"\":{\"memory\":\"cold\"}}}").documents().memoryShown())
        .containsExactly(CollectionTuning.VECTORS_MEMORY);
    assertThat(update("{\"params\":{\"on_disk_payload\":false}}").documents()).isNull();
    assertThat(update("{\"params\":{\"on_disk_payload\":false}}").onDiskPayload()).isFalse();
    assertThat(update("{\"params\":{\"payload\":{\"memory\":\"cold\"}}}").onDiskPayload()).isTrue();
    for (String[] c :
        new String[][] {
          {"PUT", "{" + VECTORS + "},\"payload\":{\"memory\":\"pinned\"}}", "payload.memory"},
          {"PATCH", "{\"params\":{\"payload\":{\"memory\":\"pinned\"}}}", "params.payload.memory"},
          {
            "PUT",
            "{\"vectors\":{\"size\":4,\"distance\":\"Dot\",\"memory\":\"pinned\"}}",
            "vectors.memory"
          }
        }) {
      clearInvocations(service);
      var spec = c[0].equals("PUT") ? client.put() : client.patch();
      String body =
          Json.text(
              spec.uri("/collections/c")
                  .contentType(MediaType.APPLICATION_JSON)
                  .bodyValue(c[1])
                  .exchange()
                  .expectStatus()
                  .isEqualTo(422)
                  .expectBody()
                  .returnResult()
                  .getResponseBody());
      assertThat(body)
          .contains(
              "Validation error in JSON body: ["
                  + c[2]
                  + ": `pinned` memory placement is not supported for "
                  + (c[2].startsWith("vectors") ? "dense vector" : "payload")
                  + " storage]");
      verify(service, never()).createCollection(any(), any(), any());
      verify(service, never()).updateCollection(any(), any(), any(), any());
    }
  }

  @Test
  void inlineStorageOnAVectorWithAGraphInMemoryIsRefusedSayingWhy() {
    // the only declared vector, but with scalar quantization: its graph is not the diskann one
    String body =
        Json.text(
            client
                .put()
                .uri("/collections/c")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(
                    "{\"vectors\":{\"v\":{\"size\":4,\"distance\":\"Dot\","
                        + "\"hnsw_config\":{\"inline_storage\":true},"
                        + "\"quantization_config\":{\"scalar\":{\"type\":\"int8\"}}}}}")
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .returnResult()
                .getResponseBody());
    assertThat(body)
        .contains(
            "vectors.v.hnsw_config.inline_storage: must be false: the graph of this vector (a named"
                + " vector after the first declared, or one with scalar quantization) is held in"
                + " memory");
    verify(service, never()).createCollection(any(), any(), any());
  }

  @Test
  void everyQdrantCollectionFieldIsHonouredRefusedOrANoOp() {
    CollectionConfig current = new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT);
    when(service.describe("c"))
        .thenReturn(new CollectionService.CollectionDescription("c", current, null));
    Created baseline = create("{" + VECTORS + "}}");
    assertThat(baseline.config()).isEqualTo(current);
    Updated noUpdate = update("{}");
    assertThat(noUpdate).isEqualTo(new Updated(null, null, null));
    Map<String, Set<String>> probed = new LinkedHashMap<>();
    for (Probe p : PROBES) {
      probed.computeIfAbsent(p.schema(), k -> new TreeSet<>()).add(p.field());
      String body = body(p);
      boolean patch = p.json().startsWith("PATCH");
      String what = p.schema() + "." + p.field() + " " + body;
      switch (p.kind()) {
        case HONOURED ->
            assertThat(patch ? update(body) : create(body))
                .as(what)
                .isNotEqualTo(patch ? noUpdate : baseline);
        case NO_OP ->
            // a memory placement given is shown in the description, and changes nothing else
            assertThat(patch ? withoutShown(update(body)) : withoutShown(create(body)))
                .as(what)
                .isEqualTo(patch ? noUpdate : baseline);
        case REFUSED -> {
          clearInvocations(service);
          assertThat(error(patch ? "PATCH" : "PUT", body)).as(what).contains(p.message());
          verify(service, never()).createCollection(any(), any(), any());
          verify(service, never()).updateCollection(any(), any(), any(), any());
          verify(service, never()).updateCollection(any(), any());
        }
      }
    }
    for (Map.Entry<String, List<String>> e : QDRANT_FIELDS.entrySet()) {
      assertThat(probed.get(e.getKey())).as("probes of %s", e.getKey()).containsAll(e.getValue());
    }
    // the field lists the controller knows are Qdrant's (and FlashVec's extensions), no others
    assertThat(CollectionSettings.CREATE_FIELDS)
        .containsExactlyInAnyOrderElementsOf(with(QDRANT_FIELDS.get("CreateCollection"), "index"));
    assertThat(CollectionSettings.UPDATE_FIELDS)
        .containsExactlyInAnyOrderElementsOf(
            with(QDRANT_FIELDS.get("UpdateCollection"), "wal_config"));
    assertThat(CollectionSettings.VECTOR_FIELDS)
        .containsExactlyInAnyOrderElementsOf(QDRANT_FIELDS.get("VectorParams"));
    assertThat(CollectionSettings.VECTOR_DIFF_FIELDS)
        .containsExactlyInAnyOrderElementsOf(QDRANT_FIELDS.get("VectorParamsDiff"));
    assertThat(CollectionSettings.HNSW_FIELDS)
        .containsExactlyInAnyOrderElementsOf(QDRANT_FIELDS.get("HnswConfigDiff"));
    assertThat(CollectionSettings.OPTIMIZER_FIELDS)
        .containsExactlyInAnyOrderElementsOf(QDRANT_FIELDS.get("OptimizersConfigDiff"));
    assertThat(CollectionSettings.WAL_FIELDS)
        .containsExactlyInAnyOrderElementsOf(
            with(QDRANT_FIELDS.get("WalConfigDiff"), "fsync_policy"));
    assertThat(CollectionSettings.PARAMS_FIELDS)
        .containsExactlyInAnyOrderElementsOf(QDRANT_FIELDS.get("CollectionParamsDiff"));
  }

  @Test
  void hnswMZeroIsTheExactFlatIndexAndConflictsWithAGraphType() {
    assertThat(create("{" + VECTORS + "},\"hnsw_config\":{\"m\":0}}").config().index().type())
        .isEqualTo(IndexParams.FLAT);
    assertThat(
            create("{" + VECTORS + ",\"hnsw_config\":{\"m\":8}},\"hnsw_config\":{\"m\":0}}")
                .config()
                .index())
        .satisfies(i -> assertThat(i.type()).isEqualTo(IndexParams.DISKANN))
        .satisfies(i -> assertThat(i.maxDegree()).isEqualTo(16));
    assertThat(
            error(
                "PUT",
                "{" + VECTORS + "},\"hnsw_config\":{\"m\":0},\"index\":{\"type\":\"diskann\"}}"))
        .contains("hnsw_config.m 0 (no graph, exact search) conflicts with index.type diskann");
  }

  private static List<String> with(List<String> fields, String extra) {
    List<String> out = new ArrayList<>(fields);
    out.add(extra);
    return out;
  }

  @Test
  void valuesBelowQdrantsMinimumAre422NamingThePathAndUnsupportedOnes400() {
    String vectors = "\"vectors\":{\"size\":4,\"distance\":\"Dot\"}";
    String[][] invalid = {
      {"\"shard_number\":0", "[shard_number: value 0 invalid, must be 1 or larger]"},
      {"\"replication_factor\":0", "[replication_factor: value 0 invalid, must be 1 or larger]"},
      {
        "\"write_consistency_factor\":0",
        "[write_consistency_factor: value 0 invalid, must be 1 or larger]"
      },
      {
        "\"hnsw_config\":{\"ef_construct\":3}",
        "[hnsw_config.ef_construct: value 3 invalid, must be 4 or larger]"
      },
    };
    for (String[] c : invalid) {
      byte[] b =
          client
              .put()
              .uri("/collections/c")
              .contentType(MediaType.APPLICATION_JSON)
              .bodyValue("{" + vectors + "," + c[0] + "}")
              .exchange()
              .expectStatus()
              .isEqualTo(422)
              .expectBody()
              .returnResult()
              .getResponseBody();
      assertThat(Json.text(b)).as(c[0]).isEqualTo("Validation error in JSON body: " + c[1]);
    }
    byte[] timeout =
        client
            .put()
            .uri("/collections/c?timeout=0")
            .contentType(MediaType.APPLICATION_JSON)
            .bodyValue("{" + vectors + "}")
            .exchange()
            .expectStatus()
            .isEqualTo(422)
            .expectBody()
            .returnResult()
            .getResponseBody();
    assertThat(Json.text(timeout))
        .isEqualTo(
            "Validation error in query parameters: [timeout: value 0 invalid, must be 1 or larger]");
    assertThat(error("PUT", "{" + vectors + ",\"shard_number\":-1}"))
        .contains("shard_number must be a non-negative integer");
    assertThat(error("PUT", "{" + vectors + ",\"write_consistency_factor\":2}"))
        .contains("write_consistency_factor: only 1 is supported");
    verify(service, never()).createCollection(any(), any(), any());
  }

  /** Reads an error body's message. */
  private static final class Json {
    static String text(byte[] body) {
      return io.flashvec.api.web.Json.MAPPER.readTree(body).path("status").path("error").asString();
    }
  }
}
