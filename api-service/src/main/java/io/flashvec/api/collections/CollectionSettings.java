package io.flashvec.api.collections;

import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.api.web.ValidationException;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.DenseVectorParams;
import io.flashvec.index.Distance;
import io.flashvec.index.FieldIndex;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.SparseVectorParams;
import io.flashvec.index.TurboQuant;
import io.flashvec.index.VectorDatatype;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * Every field of Qdrant's collection create and update bodies that FlashVec does not set from the
 * request: each is refused with a 400 naming the field and what is supported, unless its value is
 * one FlashVec's behaviour already is (absent or {@code null}, a disabled feature, the server's own
 * setting, the placement the index type implies). Unknown fields with a value are refused too, so a
 * setting is never accepted and ignored.
 *
 * <p>The honoured fields ({@code vectors.size/distance}, {@code shard_number}, {@code
 * replication_factor}, {@code hnsw_config.m/ef_construct}, {@code
 * optimizers_config.indexing_threshold}, {@code wal_config.fsync_policy} and FlashVec's {@code
 * index}) are parsed by {@link CollectionsController}; {@code on_disk_payload} and {@code
 * payload.memory} by {@link #onDiskPayload}; {@code strict_mode_config} by {@link StrictMode} and
 * {@code metadata} by {@link CollectionsController}; this class only checks the rest.
 */
final class CollectionSettings {

  /** The server-wide settings some fields must equal, since FlashVec has no per-collection one. */
  record Server(double deletedFraction) {}

  static final Set<String> CREATE_FIELDS =
      Set.of(
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
          "metadata",
          "index");

  static final Set<String> UPDATE_FIELDS =
      Set.of(
          "vectors",
          "optimizers_config",
          "params",
          "hnsw_config",
          "quantization_config",
          "sparse_vectors",
          "strict_mode_config",
          "metadata",
          "wal_config");

  static final Set<String> VECTOR_FIELDS =
      Set.of(
          "size",
          "distance",
          "hnsw_config",
          "quantization_config",
          "on_disk",
          "memory",
          "datatype",
          "multivector_config");

  static final Set<String> VECTOR_DIFF_FIELDS =
      Set.of("hnsw_config", "quantization_config", "on_disk", "memory");

  static final Set<String> HNSW_FIELDS =
      Set.of(
          "m",
          "ef_construct",
          "full_scan_threshold",
          "max_indexing_threads",
          "on_disk",
          "memory",
          "payload_m",
          "inline_storage");

  /**
   * What collection info reports for three fields Qdrant's schema requires and FlashVec has no
   * setting for: {@code hnsw_config.full_scan_threshold} (exact scans are chosen by the filter's
   * selectivity), {@code optimizers_config.vacuum_min_vector_number} (compactions follow the share
   * of deleted points) and {@code flush_interval_sec} (writes are durable per the WAL's fsync
   * policy). A body that gives the reported value back (a client copying a collection's config, as
   * qdrant-client's {@code migrate} does; they are also Qdrant's defaults) is accepted, since it
   * asks for nothing else than what FlashVec does; any other value is refused.
   */
  static final int REPORTED_FULL_SCAN_THRESHOLD = 10_000;

  static final int REPORTED_VACUUM_MIN_VECTORS = 1_000;

  static final int REPORTED_FLUSH_INTERVAL_SEC = 5;

  static final Set<String> OPTIMIZER_FIELDS =
      Set.of(
          "deleted_threshold",
          "vacuum_min_vector_number",
          "default_segment_number",
          "max_segment_size",
          "memmap_threshold",
          "indexing_threshold",
          "flush_interval_sec",
          "max_optimization_threads",
          "prevent_unoptimized");

  static final Set<String> WAL_FIELDS =
      Set.of("wal_capacity_mb", "wal_segments_ahead", "wal_retain_closed", "fsync_policy");

  static final Set<String> PARAMS_FIELDS =
      Set.of(
          "replication_factor",
          "write_consistency_factor",
          "read_fan_out_factor",
          "read_fan_out_delay_ms",
          "on_disk_payload",
          "payload");

  private CollectionSettings() {}

  /**
   * Checks a create body against the collection it describes ({@code config}, already parsed from
   * the honoured fields).
   */
  static void checkCreate(JsonNode body, CollectionConfig config, Server server) {
    known(body, CREATE_FIELDS, "");
    IndexParams index = config.index();
    JsonNode vectors = body.get("vectors");
    if (vectors != null && vectors.isObject() && !vectors.has("size")) {
      // the named form, parsed by CollectionsController: one of them may be the primary vector
      for (Map.Entry<String, JsonNode> e : vectors.properties()) {
        String at = e.getKey().isEmpty() ? "vectors." : "vectors." + e.getKey() + ".";
        if (config.hasPrimary() && e.getKey().equals(config.vectorName())) {
          vectorSettings(e.getValue(), index, at);
        } else {
          otherVectorSettings(e.getValue(), at, VECTOR_FIELDS, null, graphed(config, e.getKey()));
        }
      }
    } else if (vectors != null && vectors.isObject() && config.unnamedExact()) {
      otherVectorSettings(
          vectors,
          "vectors.",
          VECTOR_FIELDS,
          null,
          graphed(config, CollectionConfig.UNNAMED_EXACT));
    } else if (vectors != null && vectors.isObject()) {
      vectorSettings(vectors, index, "vectors.");
    }
    JsonNode method = body.get("sharding_method");
    if (!absent(method) && !(method.isString() && method.asString().equals("auto"))) {
      throw refused(
          "sharding_method",
          method,
          "only auto is supported (points hashed over shard_number shards); custom sharding with"
              + " shard keys is not");
    }
    writeConsistency(body.get("write_consistency_factor"), "write_consistency_factor");
    onDiskPayload(body, "");
    hnsw(body.get("hnsw_config"), index, "hnsw_config", null);
    wal(body.get("wal_config"));
    walCapacityMegabytes(body);
    optimizers(body.get("optimizers_config"), server);
    JsonNode q = body.get("quantization_config");
    if (!absent(q) && !config.denseVectors().values().stream().anyMatch(f -> f.index().scalar())) {
      // scalar quantization applies to the vectors graphs of their own index; with none (a
      // primary vector or no dense vector) it would be ignored
      quantization(q, "quantization_config", false);
    }
    common(body, true);
  }

  /** The settings of the primary vector (the graph's), at {@code at}. */
  private static void vectorSettings(JsonNode vectors, IndexParams index, String at) {
    if (vectors == null || !vectors.isObject()) {
      return;
    }
    known(vectors, VECTOR_FIELDS, at);
    vectorPlacement(vectors, index, at);
    vectorStorage(vectors, at);
    hnsw(vectors.get("hnsw_config"), index, at + "hnsw_config", null);
  }

  /**
   * The settings of a dense vector other than the first: searched exactly, with its vectors on the
   * heap ({@code on_disk: false}) or in the mapped files of sealed segments ({@code true}); no
   * quantization, and {@code hnsw_config} only {@code m: 0} (no index).
   *
   * @param onDisk the field's current placement for an update ({@code null}: a create)
   */
  private static void otherVectorSettings(
      JsonNode vectors, String at, Set<String> fields, Boolean onDisk, boolean graph) {
    known(vectors, fields, at);
    if (onDisk != null) {
      JsonNode q = vectors.get("quantization_config");
      if (!graph || absent(q) || !codes(q)) {
        // a graphed vector's scalar or turbo quantization is checked by fieldIndexUpdates
        quantization(q, at + "quantization_config", true);
      }
    } else {
      JsonNode multi = vectors.get("multivector_config");
      if (!absent(multi)) {
        multivectorConfig(multi, at + "multivector_config");
      }
      // quantization: checked by fieldIndex (scalar on a graph only); datatype by datatype
    }
    JsonNode d = vectors.get("on_disk");
    if (!absent(d) && !d.isBoolean()) {
      throw Requests.invalid("on_disk must be a boolean", at + "on_disk", d);
    }
    if (!absent(d) && onDisk != null && d.booleanValue() != onDisk) {
      throw refused(
          at + "on_disk", d, "cannot be changed on an existing collection (it is " + onDisk + ")");
    }
    JsonNode m = vectors.get("memory");
    if (!absent(m)) {
      throw refused(
          at + "memory",
          m,
          "is not supported: dense vectors other than the first declared are kept in memory");
    }
    JsonNode hnsw = vectors.get("hnsw_config");
    if (absent(hnsw)) {
      return;
    }
    // m 0 alone, or with payload_m 0 (no payload-aware links either, as FlashVec has none)
    boolean noIndex =
        hnsw.isObject()
            && hnsw.has("m")
            && isInt(hnsw.get("m"), 0)
            && (hnsw.size() == 1
                || hnsw.size() == 2 && hnsw.has("payload_m") && noPayloadLinks(hnsw));
    if (onDisk == null && !graph && multivector(vectors) && hnsw.isObject()) {
      // Qdrant ignores inline_storage for a multivector (its description warns so): what is left
      // must say no index, or nothing
      JsonNode inline = hnsw.get("inline_storage");
      int rest = hnsw.size() - (hnsw.has("inline_storage") ? 1 : 0);
      boolean inlineOnly = hnsw.has("inline_storage") && (absent(inline) || inline.isBoolean());
      if (inlineOnly && (rest == 0 || rest == 1 && hnsw.has("m") && isInt(hnsw.get("m"), 0))) {
        return;
      }
    }
    if (onDisk != null && !graph) {
      if (!noIndex) {
        throw refused(
            at + "hnsw_config",
            hnsw,
            "only {\"m\": 0} (no index) is supported: a multivector or a Manhattan vector is"
                + " searched exactly, by a scan of the points that have it");
      }
      return;
    }
    if (!graph && !noIndex) {
      throw refused(
          at + "hnsw_config",
          hnsw,
          "only {\"m\": 0} (no index) is supported: a multivector or a Manhattan vector is"
              + " searched exactly, by a scan of the points that have it");
    }
    fieldHnsw(hnsw, at + "hnsw_config");
  }

  /**
   * Qdrant's alias {@code quantization} of {@code quantization_config}, in a create ({@code
   * create}) or update body and in its vectors' settings: renamed in place; both at once is a 400.
   */
  static void quantizationAlias(JsonNode body, boolean create) {
    alias(body, "");
    JsonNode vectors = body.get("vectors");
    if (vectors == null || !vectors.isObject()) {
      return;
    }
    if (create && vectors.has("size")) {
      alias(vectors, "vectors.");
      return;
    }
    for (Map.Entry<String, JsonNode> e : vectors.properties()) {
      if (e.getValue() != null && e.getValue().isObject()) {
        alias(e.getValue(), "vectors." + e.getKey() + ".");
      }
    }
  }

  private static void alias(JsonNode object, String at) {
    if (!(object instanceof tools.jackson.databind.node.ObjectNode o) || !o.has("quantization")) {
      return;
    }
    if (o.has("quantization_config")) {
      throw Requests.invalid(
          at + "quantization and " + at + "quantization_config are the same setting; give one",
          at + "quantization",
          o.get("quantization"));
    }
    o.set("quantization_config", o.remove("quantization"));
  }

  /** Whether a dense vector's settings make it a multivector. */
  private static boolean multivector(JsonNode vector) {
    return !absent(vector.get("multivector_config"));
  }

  /**
   * Qdrant's configuration warnings for a collection ({@code warnings} of its description): an
   * {@code hnsw_config.inline_storage: true} that changes nothing, on a multivector (Qdrant and
   * FlashVec ignore it) or on a vector without quantization (nothing quantized to inline; the
   * diskann graph's records always hold the full vector). Empty: none.
   */
  static List<String> warnings(CollectionConfig c, CollectionTuning tuning) {
    List<String> out = new java.util.ArrayList<>();
    if (c.hasPrimary()
        && !c.primaryRetired()
        && tuning.memoryShown().contains(CollectionTuning.INLINE_STORAGE)
        && c.index().pqSubspaces() == 0) {
      out.add(inlineWithoutQuantization(CollectionConfig.shownName(c.vectorName())));
    }
    for (Map.Entry<String, DenseVectorParams> e : c.denseVectors().entrySet()) {
      String hnsw = e.getValue().index().hnswConfig();
      if (hnsw == null
          || !Json.parse(hnsw.getBytes(java.nio.charset.StandardCharsets.UTF_8))
              .path("inline_storage")
              .asBoolean(false)) {
        continue;
      }
      String name = CollectionConfig.shownName(e.getKey());
      if (e.getValue().multivector()) {
        out.add(
            "The `hnsw_config.inline_storage` option for vector '"
                + name
                + "' is not compatible with multivectors. This option will be ignored.");
      } else if (!e.getValue().index().scalar()) {
        out.add(inlineWithoutQuantization(name));
      }
    }
    return out;
  }

  private static String inlineWithoutQuantization(String name) {
    return "The `hnsw_config.inline_storage` option for vector '"
        + name
        + "' requires quantization to be enabled. Without quantized vectors to inline it changes"
        + " nothing.";
  }

  /** Whether the dense field {@code name} (not the primary one) of {@code config} has a graph. */
  private static boolean graphed(CollectionConfig config, String name) {
    var f = config.denseField(name);
    return f != null && !f.multivector() && f.distance().graphable();
  }

  /** The settings of a field graph's {@code hnsw_config} that it does not take from m and ef. */
  static final Set<String> FIELD_HNSW_FIELDS =
      Set.of("m", "ef_construct", "on_disk", "inline_storage", "max_indexing_threads");

  /**
   * The {@code hnsw_config} of a dense vector other than the first: {@code m} and {@code
   * ef_construct} shape its graph ({@link #fieldIndex}); the graph is held in memory apart from the
   * vectors, so {@code on_disk} and {@code inline_storage} may only say so.
   */
  private static void fieldHnsw(JsonNode hnsw, String at) {
    if (!hnsw.isObject()) {
      throw Requests.invalid(at + " must be an object", at, hnsw);
    }
    for (String f : HNSW_FIELDS) {
      if (f.equals("payload_m") && noPayloadLinks(hnsw)) {
        continue;
      }
      if (!FIELD_HNSW_FIELDS.contains(f) && !absent(hnsw.get(f))) {
        throw refused(
            at + "." + f,
            hnsw.get(f),
            "is not supported for a vector other than the first declared (its graph takes m and"
                + " ef_construct)");
      }
    }
    known(hnsw, HNSW_FIELDS, at + ".");
    for (String f : List.of("on_disk", "inline_storage")) {
      JsonNode v = hnsw.get(f);
      if (!absent(v) && !(v.isBoolean() && !v.booleanValue())) {
        throw refused(
            at + "." + f,
            v,
            "must be false: the graph of this vector (a named vector after the first declared,"
                + " or one with scalar quantization) is held in memory with its int8 codes, apart"
                + " from the vectors (which on_disk places); there are no disk reads to save");
      }
    }
    JsonNode threads = hnsw.get("max_indexing_threads");
    if (!absent(threads) && !isInt(threads, 0)) {
      throw refused(
          at + ".max_indexing_threads",
          threads,
          "only 0 (automatic) is supported: graphs are built on a quarter of the cores");
    }
  }

  /** The fields of Qdrant's scalar quantization. */
  static final Set<String> SCALAR_FIELDS = Set.of("type", "quantile", "always_ram");

  /** A vector's {@code quantization_config}: its own, else the collection's; null: none. */
  static JsonNode quantizationOf(JsonNode vector, JsonNode body) {
    JsonNode own = vector == null ? null : vector.get("quantization_config");
    if (!absent(own)) {
      return own;
    }
    JsonNode c = body.get("quantization_config");
    return absent(c) ? null : c;
  }

  /**
   * Whether a vector has Qdrant's scalar or turbo quantization (codes its own graphs navigate by),
   * its own or the collection's.
   */
  static boolean scalar(JsonNode vector, JsonNode body) {
    JsonNode q = quantizationOf(vector, body);
    return q != null && codes(q);
  }

  /** Whether {@code q} is a scalar or turbo {@code quantization_config}. */
  private static boolean codes(JsonNode q) {
    return q.isObject() && (q.has("scalar") || turboCodes(q));
  }

  /**
   * The collection's scalar or turbo {@code quantization_config} of a create body, checked, as
   * compact JSON, when no vector inherits it (every quantized vector has its own): it is kept only
   * to be shown, as Qdrant shows it. {@code null} when there is none or a vector inherits it (then
   * that vector's index carries it).
   */
  static String uninheritedQuantization(JsonNode body, CollectionConfig config) {
    JsonNode q = body.get("quantization_config");
    if (absent(q) || !codes(q)) {
      return null;
    }
    for (DenseVectorParams f : config.denseVectors().values()) {
      if (f.index().scalar() && f.index().quantizationInherited()) {
        return null;
      }
    }
    if (turboCodes(q)) {
      turboBits(q, "quantization_config");
    } else {
      scalarQuantile(q, "quantization_config");
    }
    return q.toString();
  }

  /** The fields of Qdrant's turbo quantization. */
  static final Set<String> TURBO_FIELDS = Set.of("bits", "always_ram");

  /**
   * Qdrant's turbo quantization ({@code {"turbo": {"bits", "always_ram"}}}) at {@code at}: its
   * bits, Qdrant's default {@code bits4} when absent.
   */
  private static TurboQuant.Bits turboBits(JsonNode q, String at) {
    if (q.has("binary")) {
      return binaryBits(q, at);
    }
    JsonNode t = q.get("turbo");
    if (q.size() != 1 || !t.isObject()) {
      throw Requests.invalid(at + ".turbo must be an object", at + ".turbo", t);
    }
    known(t, TURBO_FIELDS, at + ".turbo.");
    JsonNode ram = t.get("always_ram");
    if (!absent(ram) && !ram.isBoolean()) {
      throw Requests.invalid(at + ".turbo.always_ram must be a boolean", at + ".turbo", ram);
    }
    if (!absent(ram) && !ram.booleanValue()) {
      throw refused(
          at + ".turbo.always_ram",
          ram,
          "must be true or absent: the TurboQuant codes of a vector's graph are always held in"
              + " memory");
    }
    JsonNode bits = t.get("bits");
    if (absent(bits)) {
      return TurboQuant.Bits.BITS4;
    }
    TurboQuant.Bits b = bits.isString() ? TurboQuant.Bits.parse(bits.asString()) : null;
    if (b == null) {
      throw Requests.invalid(
          at + ".turbo.bits must be one of bits1, bits1_5, bits2, bits4", at + ".turbo.bits", bits);
    }
    return b;
  }

  /**
   * Whether {@code q} asks for codes FlashVec keeps as TurboQuant codes: Qdrant's {@code turbo}
   * quantization, or its {@code binary} one ({@link #binaryBits}).
   */
  private static boolean turboCodes(JsonNode q) {
    return q != null && q.isObject() && (q.has("turbo") || q.has("binary"));
  }

  /** The fields of Qdrant's binary quantization. */
  static final Set<String> BINARY_FIELDS = Set.of("always_ram", "encoding", "query_encoding");

  /**
   * Qdrant's binary quantization ({@code {"binary": {"always_ram", "encoding", "query_encoding"}}})
   * at {@code at}, as the TurboQuant codes of the same bits per coordinate (ADR 0045 amendment):
   * {@code one_bit} (the default), {@code one_and_half_bits} and {@code two_bits} are {@code
   * bits1}, {@code bits1_5} and {@code bits2}, the signs (or 2-bit levels) of the rotated vector.
   * Queries are scored against them at full precision, which is Qdrant's {@code query_encoding:
   * default} for FlashVec; a coarser query encoding is refused.
   */
  private static TurboQuant.Bits binaryBits(JsonNode q, String at) {
    JsonNode b = q.get("binary");
    if (q.size() != 1 || !b.isObject()) {
      throw Requests.invalid(at + ".binary must be an object", at + ".binary", b);
    }
    known(b, BINARY_FIELDS, at + ".binary.");
    JsonNode ram = b.get("always_ram");
    if (!absent(ram) && !ram.isBoolean()) {
      throw Requests.invalid(at + ".binary.always_ram must be a boolean", at + ".binary", ram);
    }
    if (!absent(ram) && !ram.booleanValue()) {
      throw refused(
          at + ".binary.always_ram",
          ram,
          "must be true or absent: the binary codes of a vector's graph are always held in memory");
    }
    JsonNode query = b.get("query_encoding");
    if (!absent(query) && !(query.isString() && query.asString().equals("default"))) {
      if (query.isString()
          && List.of("binary", "scalar4bits", "scalar8bits").contains(query.asString())) {
        throw refused(
            at + ".binary.query_encoding",
            query,
            "only default is supported: a query is scored against the codes at full precision");
      }
      throw Requests.invalid(
          at + ".binary.query_encoding must be one of default, binary, scalar4bits, scalar8bits",
          at + ".binary.query_encoding",
          query);
    }
    JsonNode encoding = b.get("encoding");
    if (absent(encoding)) {
      return TurboQuant.Bits.BITS1;
    }
    return switch (encoding.isString() ? encoding.asString() : "") {
      case "one_bit" -> TurboQuant.Bits.BITS1;
      case "one_and_half_bits" -> TurboQuant.Bits.BITS1_5;
      case "two_bits" -> TurboQuant.Bits.BITS2;
      default ->
          throw Requests.invalid(
              at + ".binary.encoding must be one of one_bit, two_bits, one_and_half_bits",
              at + ".binary.encoding",
              encoding);
    };
  }

  /**
   * The index of a dense vector other than the primary one ({@link FieldIndex}): a graph of {@code
   * m} and {@code ef_construct} from its {@code hnsw_config}, else the collection's, else Qdrant's
   * defaults (16, 100); int8 codes whose range a scalar quantization's {@code quantile} sets. A
   * multivector or a Manhattan vector has none.
   */
  static FieldIndex fieldIndex(
      JsonNode vector, JsonNode body, String at, boolean multivector, Distance distance) {
    JsonNode own = vector.get("quantization_config");
    JsonNode q = quantizationOf(vector, body);
    String qAt = absent(own) ? "quantization_config" : at + "quantization_config";
    if (multivector || !distance.graphable()) {
      if (q != null) {
        quantization(q, qAt, false);
      }
      JsonNode hnsw = vector.get("hnsw_config");
      // no graph; the hnsw_config given (m 0, inline_storage) is shown as given
      return absent(hnsw)
          ? FieldIndex.NONE
          : new FieldIndex(
              0, FieldIndex.NONE.efConstruct(), Float.NaN, hnsw.toString(), null, false);
    }
    int m = FieldIndex.DEFAULT.m();
    int ef = FieldIndex.DEFAULT.efConstruct();
    JsonNode coll = body.get("hnsw_config");
    if (coll != null && coll.isObject()) {
      m = Requests.nonNegativeInt(coll, "m", m, 256);
      ef = CollectionsController.atLeast(coll, "hnsw_config.", "ef_construct", ef, 4, 10_000);
    }
    JsonNode hnsw = vector.get("hnsw_config");
    if (hnsw != null && hnsw.isObject()) {
      m = Requests.nonNegativeInt(hnsw, "m", m, 256);
      ef = CollectionsController.atLeast(hnsw, at + "hnsw_config.", "ef_construct", ef, 4, 10_000);
    }
    float quantile = Float.NaN;
    TurboQuant.Bits turbo = null;
    if (q != null) {
      if (turboCodes(q)) {
        turbo = turboBits(q, qAt);
      } else {
        quantile = scalarQuantile(q, qAt);
      }
      if (m == 0) {
        throw refused(
            qAt,
            q,
            "needs a graph: its codes are what the vector's graph navigates by, and its"
                + " hnsw_config.m is 0");
      }
    }
    return new FieldIndex(
        m,
        ef,
        quantile,
        absent(hnsw) ? null : hnsw.toString(),
        q == null ? null : q.toString(),
        absent(own) && q != null,
        turbo);
  }

  /**
   * Qdrant's scalar quantization ({@code {"scalar": {"type": "int8", "quantile", "always_ram"}}})
   * at {@code at}: its {@code quantile}, {@code NaN} when absent; any other kind is refused.
   */
  private static float scalarQuantile(JsonNode q, String at) {
    if (!q.isObject() || q.size() != 1 || !q.has("scalar")) {
      quantization(q, at, false);
    }
    JsonNode sc = q.get("scalar");
    if (!sc.isObject()) {
      throw Requests.invalid(at + ".scalar must be an object", at + ".scalar", sc);
    }
    known(sc, SCALAR_FIELDS, at + ".scalar.");
    JsonNode type = sc.get("type");
    if (type == null || !type.isString() || !type.asString().equals("int8")) {
      throw Requests.invalid(at + ".scalar.type must be int8", at + ".scalar.type", type);
    }
    JsonNode ram = sc.get("always_ram");
    if (!absent(ram) && !(ram.isBoolean() && ram.booleanValue())) {
      throw refused(
          at + ".scalar.always_ram",
          ram,
          "must be true or absent: the int8 codes of a vector's graph are always held in memory");
    }
    JsonNode quantile = sc.get("quantile");
    if (absent(quantile)) {
      return Float.NaN;
    }
    if (!quantile.isNumber()) {
      throw Requests.invalid(at + ".scalar.quantile must be a number", at, quantile);
    }
    double v = quantile.doubleValue();
    if (!(v >= 0.5 && v <= 1.0)) {
      throw new ValidationException(
          at + ".scalar.quantile", "value " + v + " invalid, must be from 0.5 to 1.0");
    }
    return (float) v;
  }

  /** Qdrant's maximum vector size ({@code DenseVectorConfig.size}), over which it answers 422. */
  static final long QDRANT_MAX_SIZE = 65_536;

  /**
   * The dense vector a create-vector body's {@code dense} object describes ({@code PUT
   * /collections/{c}/vectors/{name}}): a field beside the points, checked as a vector other than
   * the first is at collection creation. A size below 1 or above Qdrant's maximum is Qdrant's 422;
   * one above FlashVec's maximum a 400.
   */
  static DenseVectorParams addedDenseVector(JsonNode dense, String at) {
    if (dense == null || !dense.isObject()) {
      throw Requests.invalid("dense must be an object {\"size\": N, \"distance\": ...}", at, dense);
    }
    JsonNode size = dense.get("size");
    if (size == null || !size.isIntegralNumber()) {
      throw Requests.invalid("dense.size must be an integer", at + ".size", size);
    }
    java.math.BigInteger n = size.bigIntegerValue();
    if (n.signum() <= 0) {
      throw new io.flashvec.api.web.ValidationException(
          at + ".size", "value " + n + " invalid, must be 1 or larger");
    }
    if (n.compareTo(java.math.BigInteger.valueOf(QDRANT_MAX_SIZE)) > 0) {
      throw new io.flashvec.api.web.ValidationException(
          at + ".size", "value " + n + " invalid, must be " + QDRANT_MAX_SIZE + " or smaller");
    }
    if (n.intValue() > CollectionConfig.MAX_DIMENSION) {
      throw refused(
          at + ".size",
          size,
          "FlashVec's vectors have at most " + CollectionConfig.MAX_DIMENSION + " dimensions");
    }
    JsonNode dist = dense.get("distance");
    if (dist == null || !dist.isString()) {
      throw Requests.invalid(
          "dense.distance must be one of Cosine, Dot, Euclid, Manhattan", at + ".distance", dist);
    }
    Distance distance = Distance.parse(dist.asString());
    JsonNode multi = dense.get("multivector_config");
    otherVectorSettings(
        dense, at + ".", VECTOR_FIELDS, null, absent(multi) && distance.graphable());
    JsonNode onDisk = dense.get("on_disk");
    // the field's own hnsw_config and quantization, else Qdrant's defaults (ADR 0040)
    return new DenseVectorParams(
        n.intValue(),
        distance,
        onDisk != null && onDisk.isBoolean() && onDisk.booleanValue(),
        !absent(multi),
        fieldIndex(dense, Json.object(), at + ".", !absent(multi), distance),
        datatype(dense, at + ".", distance));
  }

  /** Datatype, quantization and multivectors of the primary vector. */
  private static void vectorStorage(JsonNode vectors, String at) {
    vectorStorage(vectors, at, false);
  }

  /**
   * Datatype and quantization of a dense vector, and its multivector configuration unless {@code
   * multivectorAllowed} (a multivector field other than the first declared vector, checked by
   * {@link #multivectorConfig}).
   */
  private static void vectorStorage(JsonNode vectors, String at, boolean multivectorAllowed) {
    quantization(vectors.get("quantization_config"), at + "quantization_config", false);
    vectorDatatype(vectors, at, multivectorAllowed);
  }

  /**
   * Whether a dense vector's settings ask for values converted to another {@code datatype} than
   * {@code float32}: such a vector is a field of its own, not the primary vector (ADR text in the
   * report that introduced datatypes).
   */
  static boolean converted(JsonNode vector) {
    JsonNode d = vector == null ? null : vector.get("datatype");
    return !absent(d) && !(d.isString() && d.asString().equals("float32"));
  }

  /**
   * The {@code datatype} of a dense vector field at {@code at}: {@code float32} (also when absent),
   * {@code float16}, {@code uint8} or {@code turbo4}, whose conversions FlashVec applies to every
   * value written (and, but for {@code turbo4}, queried); {@code uint8} is refused with Cosine
   * (stored normalised).
   */
  static VectorDatatype datatype(JsonNode vector, String at, Distance distance) {
    JsonNode d = vector.get("datatype");
    if (absent(d)) {
      return VectorDatatype.FLOAT32;
    }
    VectorDatatype t = d.isString() ? VectorDatatype.parse(d.asString()) : null;
    if (t == null) {
      throw Requests.invalid(
          "datatype must be one of float32, float16, uint8, turbo4", at + "datatype", d);
    }
    if (t == VectorDatatype.UINT8 && distance == Distance.COSINE) {
      throw refused(
          at + "datatype",
          d,
          "uint8 is not supported with Cosine: FlashVec stores Cosine vectors normalised, which"
              + " uint8 values cannot hold (use Dot, Euclid or Manhattan, or float16)");
    }
    return t;
  }

  /** Datatype and multivector configuration of a dense vector; see {@link #vectorStorage}. */
  private static void vectorDatatype(JsonNode vectors, String at, boolean multivectorAllowed) {
    JsonNode datatype = vectors.get("datatype");
    if (converted(vectors)) {
      // the primary vector: one with a datatype is made a field (CollectionsController)
      throw refused(
          at + "datatype", datatype, "only float32 is supported for the diskann graph's vector");
    }
    if (!multivectorAllowed && !absent(vectors.get("multivector_config"))) {
      throw refused(
          at + "multivector_config",
          vectors.get("multivector_config"),
          "a multivector can only be a vector other than the first declared one, which the"
              + " graph indexes with one vector per point");
    }
  }

  /**
   * Qdrant's {@code multivector_config}: {@code {"comparator": "max_sim"}}, the only comparator
   * Qdrant has; anything else is refused naming the value.
   */
  static void multivectorConfig(JsonNode multi, String at) {
    if (!multi.isObject()) {
      throw Requests.invalid(
          "multivector_config must be an object {\"comparator\": \"max_sim\"}", at, multi);
    }
    for (Map.Entry<String, JsonNode> e : multi.properties()) {
      if (!e.getKey().equals("comparator")) {
        throw Requests.invalid(
            "unknown field `" + e.getKey() + "`, expected `comparator`",
            at + "." + e.getKey(),
            e.getValue());
      }
    }
    JsonNode comparator = multi.get("comparator");
    if (comparator == null || !comparator.isString()) {
      throw Requests.invalid(
          "multivector_config.comparator is required and must be \"max_sim\"",
          at + ".comparator",
          comparator);
    }
    if (!comparator.asString().equals("max_sim")) {
      throw Requests.invalid(
          "unknown multivector comparator `" + comparator.asString() + "`, expected `max_sim`",
          at + ".comparator",
          comparator);
    }
  }

  /** Checks an update body of a collection whose configuration is {@code current}. */
  static void checkUpdate(
      JsonNode body,
      java.util.function.Supplier<CollectionConfig> current,
      java.util.function.LongSupplier currentWalMegabytes,
      Server server) {
    known(body, UPDATE_FIELDS, "");
    JsonNode vectors = Requests.optionalObject(body, "vectors");
    if (vectors != null) {
      String primary = current.get().defaultVectorName();
      for (Map.Entry<String, JsonNode> e : vectors.properties()) {
        String at = e.getKey().isEmpty() ? "vectors." : "vectors." + e.getKey() + ".";
        JsonNode diff = Requests.optionalObject(vectors, e.getKey());
        if (e.getKey().equals(primary) && current.get().primaryRetired()) {
          // the first declared vector was deleted: no name reaches it
          throw CollectionConfig.notExisting(e.getKey());
        }
        if (e.getKey().equals(primary) && !current.get().hasPrimary()) {
          // Qdrant's text for the default vector of a collection without one
          throw new InvalidInputException(
              "Wrong input: Default vector params are not specified in config");
        }
        if (e.getKey().equals(primary)) {
          if (diff != null) {
            known(diff, VECTOR_DIFF_FIELDS, at);
            IndexParams index = current.get().index();
            vectorPlacement(diff, index, at);
            primaryQuantization(diff.get("quantization_config"), at + "quantization_config");
            hnsw(diff.get("hnsw_config"), index, at + "hnsw_config", index);
          }
        } else if (!e.getKey().isEmpty() && current.get().denseKey(e.getKey()) != null) {
          if (diff != null) {
            otherVectorSettings(
                diff,
                at,
                VECTOR_DIFF_FIELDS,
                current.get().denseField(current.get().denseKey(e.getKey())).onDisk(),
                graphed(current.get(), current.get().denseKey(e.getKey())));
          }
        } else {
          throw CollectionConfig.notExisting(e.getKey());
        }
      }
    }
    JsonNode params = Requests.optionalObject(body, "params");
    if (params != null) {
      known(params, PARAMS_FIELDS, "params.");
      JsonNode rf = params.get("replication_factor");
      if (!absent(rf) && !isInt(rf, current.get().replicationFactor())) {
        throw refused(
            "params.replication_factor",
            rf,
            "cannot be changed on an existing collection (it is "
                + current.get().replicationFactor()
                + ")");
      }
      writeConsistency(params.get("write_consistency_factor"), "params.write_consistency_factor");
      JsonNode fanOut = params.get("read_fan_out_factor");
      if (!absent(fanOut) && !isInt(fanOut, 0)) {
        throw refused(
            "params.read_fan_out_factor",
            fanOut,
            "only 0 is supported: a read goes to one replica, and to the next when it fails");
      }
      if (!absent(params.get("read_fan_out_delay_ms"))) {
        throw refused(
            "params.read_fan_out_delay_ms",
            params.get("read_fan_out_delay_ms"),
            "is not supported: reads are not fanned out");
      }
      onDiskPayload(params, "params.");
    }
    JsonNode hnsw = body.get("hnsw_config");
    if (!absent(hnsw)) {
      IndexParams index = current.get().index();
      hnsw(hnsw, index, "hnsw_config", index);
    }
    walUpdate(body.get("wal_config"), currentWalMegabytes);
    optimizers(body.get("optimizers_config"), server);
    primaryQuantization(body.get("quantization_config"), "quantization_config");
    sparseUpdate(body.get("sparse_vectors"), current.get());
    common(body, false);
  }

  /**
   * The indexes an update body's {@code vectors} give the dense vectors other than the primary one
   * that have graphs (Qdrant's {@code VectorParamsDiff}, checked by {@link #checkUpdate}), by name;
   * vectors whose index does not change are left out. Each merges into the vector's current index:
   * {@code hnsw_config}'s {@code m} and {@code ef_construct} replace the current ones (the shown
   * {@code hnsw_config} takes the given fields), a scalar {@code quantization_config} replaces the
   * vector's quantization, and {@code "Disabled"} removes the vector's own, leaving the
   * collection's if it has one (as Qdrant's vector falls back to the collection's).
   */
  static Map<String, FieldIndex> fieldIndexUpdates(JsonNode body, CollectionConfig config) {
    Map<String, FieldIndex> out = new java.util.LinkedHashMap<>();
    JsonNode vectors = body.get("vectors");
    if (absent(vectors) || !vectors.isObject()) {
      return out;
    }
    for (Map.Entry<String, JsonNode> e : vectors.properties()) {
      String key = e.getKey().isEmpty() ? null : config.denseKey(e.getKey());
      JsonNode diff = e.getValue();
      if (key == null
          || e.getKey().equals(config.defaultVectorName())
          || absent(diff)
          || !diff.isObject()) {
        continue;
      }
      String at = "vectors." + e.getKey() + ".";
      FieldIndex now = config.denseField(key).index();
      if (!graphed(config, key)) {
        // no graph either way ({"m": 0} only, checked): the hnsw_config is shown as given, and
        // strict mode then treats a multivector as unindexed, as Qdrant does
        JsonNode h = diff.get("hnsw_config");
        if (!absent(h) && h.isObject()) {
          FieldIndex next =
              new FieldIndex(
                  0,
                  now.efConstruct(),
                  Float.NaN,
                  mergedHnsw(now.hnswConfig(), h),
                  now.quantizationConfig(),
                  now.quantizationInherited(),
                  now.turbo());
          if (!next.equals(now)) {
            out.put(e.getKey(), next);
          }
        }
        continue;
      }
      int m = now.m();
      int ef = now.efConstruct();
      String hnswShown = now.hnswConfig();
      JsonNode hnsw = diff.get("hnsw_config");
      if (!absent(hnsw)) {
        m = Requests.nonNegativeInt(hnsw, "m", m, 256);
        ef =
            CollectionsController.atLeast(hnsw, at + "hnsw_config.", "ef_construct", ef, 4, 10_000);
        hnswShown = mergedHnsw(hnswShown, hnsw);
      }
      float quantile = now.quantile();
      TurboQuant.Bits turbo = now.turbo();
      String quantization = now.quantizationConfig();
      boolean inherited = now.quantizationInherited();
      JsonNode q = diff.get("quantization_config");
      String qAt = at + "quantization_config";
      if (!absent(q) && q.isString() && q.asString().equals("Disabled")) {
        FieldIndex collection = collectionQuantization(config);
        quantile = collection == null ? Float.NaN : collection.quantile();
        turbo = collection == null ? null : collection.turbo();
        quantization = collection == null ? null : collection.quantizationConfig();
        inherited = collection != null;
      } else if (!absent(q)) {
        boolean isTurbo = turboCodes(q);
        turbo = isTurbo ? turboBits(q, qAt) : null;
        quantile = isTurbo ? Float.NaN : scalarQuantile(q, qAt);
        quantization = q.toString();
        inherited = false;
      }
      if (m == 0 && quantization != null) {
        throw refused(
            absent(q) ? at + "hnsw_config.m" : qAt,
            absent(q) ? hnsw.get("m") : q,
            "a scalar or turbo quantization needs a graph: its codes are what the vector's graph"
                + " navigates by, and its hnsw_config.m would be 0 (remove the quantization with"
                + " \"Disabled\" first)");
      }
      FieldIndex next = new FieldIndex(m, ef, quantile, hnswShown, quantization, inherited, turbo);
      if (!next.equals(now)) {
        out.put(e.getKey(), next);
      }
    }
    return out;
  }

  /**
   * The primary vector's index after an update body ({@link #checkUpdate}d): its graph's max degree
   * ({@code 2m}) and construction search list ({@code ef_construct}) from the top-level {@code
   * hnsw_config}, then from the primary vector's own in {@code vectors} (which wins, as at
   * creation). {@code null} when neither changes them, or the collection has no primary vector.
   */
  static IndexParams primaryIndexUpdate(JsonNode body, CollectionConfig config) {
    if (!config.hasPrimary() || config.primaryRetired()) {
      JsonNode h = body.get("hnsw_config");
      if (!absent(h)
          && h.isObject()
          && !graphDiff(h, config.index(), "hnsw_config.").equals(config.index())) {
        // nothing would take it: refused rather than stored and ignored
        throw refused(
            "hnsw_config",
            h,
            "changes no graph: the collection has no primary dense vector; a named vector takes"
                + " its own hnsw_config under vectors");
      }
      return null;
    }
    IndexParams now = config.index();
    IndexParams next = graphDiff(body.get("hnsw_config"), now, "hnsw_config.");
    JsonNode vectors = body.get("vectors");
    if (!absent(vectors) && vectors.isObject()) {
      String name = config.defaultVectorName();
      JsonNode diff = vectors.get(name);
      if (!absent(diff) && diff.isObject()) {
        String at = name.isEmpty() ? "vectors.hnsw_config." : "vectors." + name + ".hnsw_config.";
        next = graphDiff(diff.get("hnsw_config"), next, at);
      }
    }
    return next.equals(now) ? null : next;
  }

  /**
   * {@code index} with the {@code m} and {@code ef_construct} an {@code hnsw_config} diff gives.
   */
  private static IndexParams graphDiff(JsonNode hnsw, IndexParams index, String at) {
    if (absent(hnsw) || !hnsw.isObject() || index.type().equals(IndexParams.FLAT)) {
      return index;
    }
    int m = Requests.nonNegativeInt(hnsw, "m", describedM(index), 256);
    int ef =
        CollectionsController.atLeast(hnsw, at, "ef_construct", index.buildSearchList(), 4, 10_000);
    int degree = m == describedM(index) ? index.maxDegree() : Math.max(2, 2 * m);
    return new IndexParams(index.type(), degree, ef, index.alpha(), index.pqSubspaces());
  }

  /**
   * A vector's shown {@code hnsw_config} ({@code null}: none) with the fields {@code diff} gives,
   * as Qdrant's {@code HnswConfigDiff} update merges them.
   */
  private static String mergedHnsw(String shown, JsonNode diff) {
    tools.jackson.databind.node.ObjectNode out =
        shown == null
            ? Json.object()
            : (tools.jackson.databind.node.ObjectNode)
                Json.parse(shown.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    for (Map.Entry<String, JsonNode> h : diff.properties()) {
      if (!absent(h.getValue())) {
        out.set(h.getKey(), h.getValue());
      }
    }
    return out.toString();
  }

  /** The index of a vector whose quantization is the collection's, or {@code null}: none. */
  private static FieldIndex collectionQuantization(CollectionConfig config) {
    for (DenseVectorParams f : config.denseVectors().values()) {
      if (f.index().scalar() && f.index().quantizationInherited()) {
        return f.index();
      }
    }
    return null;
  }

  /**
   * An update body's {@code sparse_vectors}: each name must be a sparse field of the collection
   * (Qdrant's 400 otherwise), and its settings are taken only where they equal what FlashVec does
   * ({@link #sparseVectors}); anything else is refused naming the setting.
   */
  private static void sparseUpdate(JsonNode sparse, CollectionConfig current) {
    if (absent(sparse)) {
      return;
    }
    if (!sparse.isObject()) {
      throw Requests.invalid("sparse_vectors must be an object of names", "sparse_vectors", sparse);
    }
    for (Map.Entry<String, JsonNode> e : sparse.properties()) {
      if (!current.sparseVectors().containsKey(e.getKey())) {
        throw new InvalidInputException(
            "Wrong input: Sparse vector `"
                + e.getKey()
                + "` is not specified in collection config");
      }
      sparseField(e.getValue(), "sparse_vectors." + e.getKey());
    }
  }

  /** Fields of both bodies: sparse vectors (checked by {@link #sparseVectors} on create). */
  private static void common(JsonNode body, boolean create) {
    // strict_mode_config is parsed by StrictMode; metadata must be an object
    JsonNode metadata = body.get("metadata");
    if (!absent(metadata) && !metadata.isObject()) {
      throw Requests.invalid("metadata must be a JSON object", "metadata", metadata);
    }
  }

  /**
   * {@code on_disk} and {@code memory} of the vectors: FlashVec's {@code diskann} index keeps them
   * on disk, mapped and read on demand (Qdrant's {@code on_disk: true}, {@code memory: cold}); the
   * {@code hnsw} and {@code flat} index types keep them in memory ({@code on_disk: false}).
   */
  private static void vectorPlacement(JsonNode vectors, IndexParams index, String at) {
    boolean onDisk = index.type().equals(IndexParams.DISKANN);
    JsonNode d = vectors.get("on_disk");
    if (!absent(d) && !(d.isBoolean() && d.booleanValue() == onDisk)) {
      throw refused(
          at + "on_disk",
          d,
          onDisk
              ? "false (vectors in RAM) is not supported; FlashVec keeps vectors on disk"
                  + " (index.type hnsw or flat keep them in memory)"
              : "must be false: index.type " + index.type() + " keeps vectors in memory");
    }
    JsonNode m = vectors.get("memory");
    if (m != null && m.isString() && m.asString().equals("pinned")) {
      // Qdrant refuses it in validation, with this text
      throw new ValidationException(
          at + "memory", "`pinned` memory placement is not supported for dense vector storage");
    }
    if (!absent(m) && !(onDisk && m.isString() && m.asString().equals("cold"))) {
      throw refused(
          at + "memory",
          m,
          onDisk
              ? "only cold is supported: FlashVec keeps vectors on disk, read on demand"
              : "is not supported: index.type " + index.type() + " keeps vectors in memory");
    }
  }

  /**
   * Payload placement, Qdrant's {@code on_disk_payload} and {@code payload.memory} (which wins when
   * both are given, as in Qdrant): {@code true} / {@code cold} (the default), a sealed segment's
   * payloads are read on demand from its mapped file; {@code false} / {@code cached}, they are held
   * on the heap. Qdrant refuses {@code pinned} for payloads, and so does FlashVec.
   *
   * @return whether payloads stay on disk, or {@code null} when the body sets neither field
   */
  static Boolean onDiskPayload(JsonNode parent, String at) {
    Boolean onDisk = null;
    JsonNode d = parent.get("on_disk_payload");
    if (!absent(d)) {
      if (!d.isBoolean()) {
        throw Requests.invalid(at + "on_disk_payload must be a boolean", at + "on_disk_payload", d);
      }
      onDisk = d.booleanValue();
    }
    JsonNode p = parent.get("payload");
    if (!absent(p)) {
      if (!p.isObject()) {
        throw Requests.invalid(at + "payload must be an object", at + "payload", p);
      }
      known(p, Set.of("memory"), at + "payload.");
      JsonNode m = p.get("memory");
      if (!absent(m)) {
        String memory = m.isString() ? m.asString() : "";
        switch (memory) {
          case "cold" -> onDisk = true;
          case "cached" -> onDisk = false;
          case "pinned" ->
              throw new ValidationException(
                  at + "payload.memory",
                  "`pinned` memory placement is not supported for payload storage");
          default ->
              throw Requests.invalid(
                  at + "payload.memory must be cold or cached", at + "payload.memory", m);
        }
      }
    }
    return onDisk;
  }

  /**
   * Which of Qdrant's {@code memory} placements a create or update body gives (already checked):
   * the graph's vector's ({@code vectors.memory}, or by its name; {@code ""} in an update) and the
   * payload's ({@code payload.memory}, {@code params.payload.memory} in an update). They are shown
   * in the description from then on, as Qdrant shows a placement that was set ({@link
   * CollectionTuning#memoryShown}).
   */
  static Set<String> memoryGiven(JsonNode body, CollectionConfig config, boolean update) {
    Set<String> out = new java.util.TreeSet<>();
    JsonNode vectors = body.get("vectors");
    if (config.hasPrimary() && vectors != null && vectors.isObject()) {
      JsonNode primary =
          !update && vectors.has("size") ? vectors : vectors.get(config.vectorName());
      if (primary != null && primary.isObject() && !absent(primary.get("memory"))) {
        out.add(CollectionTuning.VECTORS_MEMORY);
      }
      // the vector's own hnsw_config overrides the collection's, as in Qdrant
      JsonNode inline = Requests.member(body, "hnsw_config", "inline_storage");
      JsonNode own =
          primary == null ? null : Requests.member(primary, "hnsw_config", "inline_storage");
      if (!absent(own)) {
        inline = own;
      }
      if (inline != null && inline.isBoolean() && inline.booleanValue()) {
        out.add(CollectionTuning.INLINE_STORAGE);
      }
    }
    JsonNode parent = update ? body.get("params") : body;
    JsonNode payload = parent == null ? null : parent.get("payload");
    if (payload != null && payload.isObject() && !absent(payload.get("memory"))) {
      out.add(CollectionTuning.PAYLOAD_MEMORY);
    }
    return out;
  }

  /**
   * The HNSW fields FlashVec does not set from the request. With {@code current} (an update) the
   * honoured {@code m} and {@code ef_construct} may change the primary vector's graph ({@link
   * #primaryIndexUpdate}), but not whether there is one: {@code m} 0 (the {@code flat} index) is
   * neither given to nor taken from an existing collection.
   */
  private static void hnsw(JsonNode hnsw, IndexParams index, String at, IndexParams current) {
    if (absent(hnsw)) {
      return;
    }
    if (!hnsw.isObject()) {
      throw Requests.invalid(at + " must be an object", at, hnsw);
    }
    known(hnsw, HNSW_FIELDS, at + ".");
    if (current != null) {
      boolean flat = current.type().equals(IndexParams.FLAT);
      JsonNode m = hnsw.get("m");
      if (!absent(m) && !isInt(m, describedM(current)) && (flat || isInt(m, 0))) {
        throw refused(
            at + ".m",
            m,
            flat
                ? "cannot give a graph to a collection created without one (m 0, index type"
                    + " flat): its segments are searched exactly"
                : "cannot be 0 on a collection with a graph (it is "
                    + describedM(current)
                    + "): the index type is set at creation");
      }
      JsonNode ef = hnsw.get("ef_construct");
      if (flat && !absent(ef) && !isInt(ef, current.buildSearchList())) {
        throw refused(
            at + ".ef_construct",
            ef,
            "cannot be changed on a collection without a graph (m 0, index type flat)");
      }
    }
    JsonNode fullScan = hnsw.get("full_scan_threshold");
    if (!absent(fullScan) && !isInt(fullScan, REPORTED_FULL_SCAN_THRESHOLD)) {
      throw refused(
          at + ".full_scan_threshold",
          fullScan,
          "only "
              + REPORTED_FULL_SCAN_THRESHOLD
              + " (what collection info reports) is supported: FlashVec chooses exact scans by"
              + " the filter's selectivity");
    }
    JsonNode threads = hnsw.get("max_indexing_threads");
    if (!absent(threads) && !isInt(threads, 0)) {
      throw refused(
          at + ".max_indexing_threads",
          threads,
          "only 0 is supported: index build threads are a server setting"
              + " (FLASHVEC_SEGMENT_BUILD_THREADS)");
    }
    boolean graphOnDisk = index.type().equals(IndexParams.DISKANN);
    JsonNode onDisk = hnsw.get("on_disk");
    if (!absent(onDisk) && !(onDisk.isBoolean() && onDisk.booleanValue() == graphOnDisk)) {
      throw refused(
          at + ".on_disk",
          onDisk,
          "must be "
              + graphOnDisk
              + " for index.type "
              + index.type()
              + ": the index type sets where the graph is (diskann on disk, hnsw in memory, flat"
              + " has none)");
    }
    JsonNode memory = hnsw.get("memory");
    if (!absent(memory)
        && !(graphOnDisk && memory.isString() && memory.asString().equals("cold"))) {
      throw refused(
          at + ".memory",
          memory,
          "only cold is supported, with index.type diskann (the graph is read on demand; index.type"
              + " is "
              + index.type()
              + ")");
    }
    if (!noPayloadLinks(hnsw)) {
      throw refused(
          at + ".payload_m",
          hnsw.get("payload_m"),
          "only 0 is supported: there are no payload-aware graph links");
    }
    JsonNode inline = hnsw.get("inline_storage");
    if (!absent(inline) && !(inline.isBoolean() && inline.booleanValue() == graphOnDisk)) {
      throw refused(
          at + ".inline_storage",
          inline,
          "must be "
              + graphOnDisk
              + " for index.type "
              + index.type()
              + ": a diskann graph record always holds its full vector (true), hnsw and flat keep"
              + " vectors apart (false)");
    }
  }

  /**
   * Whether an {@code hnsw_config} asks for no payload-aware graph links ({@code payload_m} absent
   * or 0), which is what FlashVec builds: a filtered search follows the vector's graph.
   */
  private static boolean noPayloadLinks(JsonNode hnsw) {
    JsonNode p = hnsw.get("payload_m");
    return absent(p) || isInt(p, 0);
  }

  /** Qdrant's {@code m} as the collection info reports it: 0 for flat (no graph). */
  static int describedM(IndexParams index) {
    return index.type().equals(IndexParams.FLAT) ? 0 : Math.max(1, index.maxDegree() / 2);
  }

  /**
   * {@code quantization_config}: FlashVec's own product quantisation is always on for diskann
   * ({@code index.pq_subspaces}); Qdrant's scalar, product, binary and turbo kinds are not.
   */
  private static void quantization(JsonNode q, String at, boolean update) {
    if (absent(q) || update && q.isString() && q.asString().equals("Disabled")) {
      return;
    }
    String kind = q.isObject() && q.size() == 1 ? q.propertyNames().iterator().next() : null;
    throw refused(
        at,
        q,
        (kind == null ? "Qdrant's quantization" : kind + " quantization")
            + " is not supported; FlashVec's diskann index keeps product-quantised codes in RAM,"
            + " sized by index.pq_subspaces at creation");
  }

  /**
   * An update's {@code quantization_config} for the primary vector (its own, or the collection's,
   * which reaches it): scalar, turbo and binary are honoured at creation only, where they make
   * another vector the primary one.
   */
  private static void primaryQuantization(JsonNode q, String at) {
    if (!absent(q) && codes(q)) {
      String kind = q.size() == 1 ? q.propertyNames().iterator().next() : "this";
      throw refused(
          at,
          q,
          kind
              + " quantization cannot be added to the primary vector by an update: its diskann"
              + " graph navigates by product-quantised codes sized at creation"
              + " (index.pq_subspaces); give it when the collection is created, or on a named"
              + " vector other than the first");
    }
    quantization(q, at, true);
  }

  private static void writeConsistency(JsonNode n, String at) {
    if (!absent(n) && !isInt(n, 1)) {
      throw refused(
          at,
          n,
          "only 1 is supported: a write is acknowledged once the shard's primary applied it and"
              + " forwarded it to the live replicas (a replica that misses it is marked stale)");
    }
  }

  /** The largest {@code wal_capacity_mb}: a WAL segment of 64 GiB. */
  static final long MAX_WAL_CAPACITY_MB = 64L << 10;

  /**
   * The {@code wal_config.wal_capacity_mb} of a create body: the size at which the collection's WAL
   * starts a new segment, in MiB; {@code null} when absent (the server's size).
   */
  static Long walCapacityMegabytes(JsonNode body) {
    JsonNode cap = Requests.member(body, "wal_config", "wal_capacity_mb");
    if (absent(cap)) {
      return null;
    }
    if (!cap.isIntegralNumber() || !cap.canConvertToLong()) {
      throw Requests.invalid(
          "wal_config.wal_capacity_mb must be an integer", "wal_config.wal_capacity_mb", cap);
    }
    long mb = cap.longValue();
    if (mb < 1 || mb > MAX_WAL_CAPACITY_MB) {
      throw new ValidationException(
          "wal_config.wal_capacity_mb",
          "value " + mb + " invalid, must be from 1 to " + MAX_WAL_CAPACITY_MB);
    }
    return mb;
  }

  /** A create body's {@code wal_config}: see {@link #walCapacityMegabytes}. */
  private static void wal(JsonNode wal) {
    if (absent(wal)) {
      return;
    }
    if (!wal.isObject()) {
      throw Requests.invalid("wal_config must be an object", "wal_config", wal);
    }
    known(wal, WAL_FIELDS, "wal_config.");
    walRest(wal);
  }

  /**
   * An update body's {@code wal_config}: the segment size is fixed when the collection is created
   * ({@code current}, in MiB), the fsync policy may change.
   */
  private static void walUpdate(JsonNode wal, java.util.function.LongSupplier current) {
    if (absent(wal)) {
      return;
    }
    if (!wal.isObject()) {
      throw Requests.invalid("wal_config must be an object", "wal_config", wal);
    }
    known(wal, WAL_FIELDS, "wal_config.");
    JsonNode cap = wal.get("wal_capacity_mb");
    if (!absent(cap)) {
      long currentMb = current.getAsLong();
      if (!isInt(cap, currentMb)) {
        throw refused(
            "wal_config.wal_capacity_mb",
            cap,
            "is set when the collection is created (" + currentMb + "); it cannot be changed");
      }
    }
    walRest(wal);
  }

  private static void walRest(JsonNode wal) {
    JsonNode ahead = wal.get("wal_segments_ahead");
    if (!absent(ahead) && !isInt(ahead, 0)) {
      throw refused(
          "wal_config.wal_segments_ahead",
          ahead,
          "only 0 is supported: WAL segments are created when needed");
    }
  }

  /** The largest {@code max_optimization_threads}. */
  static final int MAX_OPTIMIZATION_JOBS = 1_024;

  /**
   * Qdrant's {@code optimizers_config.max_optimization_threads}: {@code null}, absent or {@code
   * "auto"} give {@code 0} (no cap of the collection's own: the server's build and merge threads
   * decide); {@code N} lets each shard run at most {@code N} segment builds and merges at once.
   * {@code 0}, which in Qdrant stops optimizations, is refused: {@code indexing_threshold: 0}
   * defers index builds.
   */
  static int optimizationJobs(JsonNode threads) {
    if (absent(threads) || (threads.isString() && threads.asString().equals("auto"))) {
      return 0;
    }
    String at = "optimizers_config.max_optimization_threads";
    if (!threads.isIntegralNumber()
        || threads.bigIntegerValue().signum() < 0
        || threads.bigIntegerValue().compareTo(java.math.BigInteger.valueOf(MAX_OPTIMIZATION_JOBS))
            > 0) {
      throw Requests.invalid(
          at + " must be auto or an integer from 1 to " + MAX_OPTIMIZATION_JOBS, at, threads);
    }
    if (threads.intValue() == 0) {
      throw refused(
          at,
          threads,
          "0 (no optimizations) is not supported: set optimizers_config.indexing_threshold 0 to"
              + " defer index builds");
    }
    return threads.intValue();
  }

  /** The largest {@code wal_retain_closed}: closed segments kept beyond it only fill the disk. */
  static final int MAX_WAL_RETAIN_CLOSED = 1_000;

  /**
   * The {@code wal_config.wal_retain_closed} of a create body: how many closed WAL segments each
   * shard keeps after a checkpoint covers them ({@code 0}, also when absent: none; Qdrant's
   * default, {@code 1}, keeps the newest). Recovery replays from the checkpoint, so the kept
   * segments are never applied twice.
   */
  static int walRetainClosed(JsonNode body) {
    JsonNode n = Requests.member(body, "wal_config", "wal_retain_closed");
    if (n == null) {
      return 0;
    }
    if (!n.isIntegralNumber()
        || n.bigIntegerValue().signum() < 0
        || n.bigIntegerValue().compareTo(java.math.BigInteger.valueOf(MAX_WAL_RETAIN_CLOSED)) > 0) {
      throw Requests.invalid(
          "wal_config.wal_retain_closed must be an integer from 0 to " + MAX_WAL_RETAIN_CLOSED,
          "wal_config.wal_retain_closed",
          n);
    }
    return n.intValue();
  }

  /**
   * The largest {@code default_segment_number}: more segments than this would make every search
   * walk as many graphs.
   */
  static final int MAX_SEGMENT_NUMBER = 1_000;

  /**
   * Qdrant's {@code optimizers_config.default_segment_number} of a create body: {@code 0} (also
   * when absent) lets the tiers choose how many sealed segments a shard keeps, {@code N} makes each
   * shard merge its smallest sealed segments while it has more than {@code N}.
   */
  static int segmentNumber(JsonNode body) {
    Integer n =
        checkedSegmentNumber(Requests.member(body, "optimizers_config", "default_segment_number"));
    return n == null ? 0 : n;
  }

  /**
   * The {@code optimizers_config.default_segment_number} of an update body, or {@code null}: not
   * given. A change applies at once: each shard merges down to it, or stops merging below the tiers
   * while it has no more sealed segments (ADR 0043).
   */
  static Integer updatedSegmentNumber(JsonNode body) {
    return checkedSegmentNumber(
        Requests.member(body, "optimizers_config", "default_segment_number"));
  }

  /** A {@code default_segment_number} value checked, or {@code null} when absent. */
  private static Integer checkedSegmentNumber(JsonNode n) {
    if (absent(n)) {
      return null;
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < 0) {
      throw Requests.invalid(
          "optimizers_config.default_segment_number must be a non-negative integer",
          "optimizers_config.default_segment_number",
          n);
    }
    if (n.longValue() > MAX_SEGMENT_NUMBER) {
      throw refused(
          "optimizers_config.default_segment_number",
          n,
          "at most " + MAX_SEGMENT_NUMBER + " is supported (0: the tiers choose)");
    }
    return n.intValue();
  }

  private static void optimizers(JsonNode o, Server server) {
    if (absent(o)) {
      return;
    }
    if (!o.isObject()) {
      throw Requests.invalid("optimizers_config must be an object", "optimizers_config", o);
    }
    known(o, OPTIMIZER_FIELDS, "optimizers_config.");
    JsonNode deleted = o.get("deleted_threshold");
    if (!absent(deleted)
        && !(deleted.isNumber() && deleted.doubleValue() == server.deletedFraction())) {
      throw refused(
          "optimizers_config.deleted_threshold",
          deleted,
          "must be "
              + server.deletedFraction()
              + ": the share of deleted points that triggers a compaction is a server setting"
              + " (FLASHVEC_COMPACTION_DELETED_FRACTION)");
    }
    checkedSegmentNumber(o.get("default_segment_number"));
    optimizationJobs(o.get("max_optimization_threads"));
    JsonNode prevent = o.get("prevent_unoptimized");
    if (!absent(prevent) && !(prevent.isBoolean() && !prevent.booleanValue())) {
      throw refused(
          "optimizers_config.prevent_unoptimized",
          prevent,
          "only false is supported: a written point is visible at once (points not yet in a"
              + " graph are searched exactly); FlashVec does not hold back points past"
              + " indexing_threshold until they are indexed");
    }
    for (String f :
        List.of(
            "vacuum_min_vector_number",
            "max_segment_size",
            "memmap_threshold",
            "flush_interval_sec")) {
      JsonNode v = o.get(f);
      if (absent(v)
          || (f.equals("vacuum_min_vector_number") && isInt(v, REPORTED_VACUUM_MIN_VECTORS))
          || (f.equals("flush_interval_sec") && isInt(v, REPORTED_FLUSH_INTERVAL_SEC))) {
        continue;
      }
      throw refused(
          "optimizers_config." + f,
          v,
          switch (f) {
            case "vacuum_min_vector_number" ->
                "only "
                    + REPORTED_VACUUM_MIN_VECTORS
                    + " (what collection info reports) is supported: compactions are triggered"
                    + " by the share of deleted points only"
                    + " (FLASHVEC_COMPACTION_DELETED_FRACTION)";
            case "max_segment_size" ->
                "is not supported: the largest merged segment is a server setting"
                    + " (FLASHVEC_MERGE_MAX_SEGMENT_POINTS)";
            case "memmap_threshold" ->
                "is not supported: sealed segments are always memory-mapped from disk";
            default ->
                "only "
                    + REPORTED_FLUSH_INTERVAL_SEC
                    + " (what collection info reports) is supported: writes are durable per the"
                    + " WAL's fsync policy (wal_config.fsync_policy)";
          });
    }
  }

  /**
   * Refuses a field that is not in {@code fields}, naming it and the known ones; a {@code null} one
   * sets nothing (older clients send {@code "init_from": null}).
   */
  private static void known(JsonNode object, Set<String> fields, String at) {
    for (Iterator<String> it = object.propertyNames().iterator(); it.hasNext(); ) {
      String f = it.next();
      if (!fields.contains(f) && !absent(object.get(f))) {
        throw new InvalidInputException(
            "Wrong input: unknown field `"
                + at
                + f
                + "`; known: "
                + String.join(", ", new java.util.TreeSet<>(fields)));
      }
    }
  }

  /**
   * A create body's {@code sparse_vectors}: names to {@code {index, modifier}} (each optional).
   * Only settings meaning what FlashVec does are taken: sparse fields are searched by an exact scan
   * of the points that have them, held on the heap, with weights as given. So {@code index.on_disk}
   * must be false, {@code index.full_scan_threshold} is refused (there is no index to switch from
   * yet), {@code index.datatype} must be {@code float32} and {@code modifier} must be {@code none}
   * ({@code idf} is refused until the inverted index computes it).
   */
  static Map<String, SparseVectorParams> sparseVectors(JsonNode body) {
    JsonNode sparse = body.get("sparse_vectors");
    if (absent(sparse)) {
      return Map.of();
    }
    if (!sparse.isObject()) {
      throw Requests.invalid("sparse_vectors must be an object of names", "sparse_vectors", sparse);
    }
    Map<String, SparseVectorParams> out = new java.util.TreeMap<>();
    for (Map.Entry<String, JsonNode> e : sparse.properties()) {
      String name = e.getKey();
      String at = "sparse_vectors." + name;
      if (name.isEmpty()) {
        // Qdrant's text
        throw new InvalidInputException("Wrong input: Sparse vector name cannot be empty");
      }
      sparseField(e.getValue(), at);
      out.put(name, SparseVectorParams.DEFAULT);
    }
    return out;
  }

  /**
   * The {@code modifier} each field of a body's {@code sparse_vectors} gives: {@code true} for
   * {@code idf}, {@code false} for {@code none}; fields without one are absent. The body has been
   * checked ({@link #sparseVectors}, {@link #checkUpdate}).
   */
  static Map<String, Boolean> sparseModifiers(JsonNode body) {
    JsonNode sparse = body.get("sparse_vectors");
    Map<String, Boolean> out = new java.util.TreeMap<>();
    if (absent(sparse) || !sparse.isObject()) {
      return out;
    }
    for (Map.Entry<String, JsonNode> e : sparse.properties()) {
      JsonNode m = e.getValue() == null ? null : e.getValue().get("modifier");
      if (!absent(m)) {
        out.put(e.getKey(), m.asString().equals("idf"));
      }
    }
    return out;
  }

  /** One sparse field's settings at {@code at}, checked as {@link #sparseVectors} describes. */
  private static void sparseField(JsonNode f, String at) {
    if (!absent(f) && !f.isObject()) {
      throw Requests.invalid(at + " must be an object", at, f);
    }
    if (!absent(f)) {
      for (Map.Entry<String, JsonNode> k : f.properties()) {
        switch (k.getKey()) {
          case "index" -> sparseIndex(k.getValue(), at + ".index");
          case "modifier" -> {
            JsonNode m = k.getValue();
            if (!absent(m)
                && !(m.isString() && (m.asString().equals("none") || m.asString().equals("idf")))) {
              throw Requests.invalid("modifier must be none or idf", at + ".modifier", m);
            }
          }
          default ->
              throw refused(at + "." + k.getKey(), k.getValue(), "unknown sparse vector setting");
        }
      }
    }
  }

  private static void sparseIndex(JsonNode index, String at) {
    if (absent(index)) {
      return;
    }
    if (!index.isObject()) {
      throw Requests.invalid(at + " must be an object", at, index);
    }
    for (Map.Entry<String, JsonNode> k : index.properties()) {
      JsonNode v = k.getValue();
      String field = at + "." + k.getKey();
      switch (k.getKey()) {
        case "on_disk" -> {
          if (!absent(v) && !(v.isBoolean() && !v.booleanValue())) {
            throw refused(
                field, v, "only false is supported: sealed segments keep sparse vectors in memory");
          }
        }
        case "memory" -> {
          if (!absent(v)) {
            throw refused(
                field,
                v,
                "is not supported: sealed segments keep sparse vectors on the heap, neither read"
                    + " on demand from disk (cold) nor mapped (cached, pinned)");
          }
        }
        case "full_scan_threshold" -> {
          if (!absent(v)) {
            throw refused(
                field,
                v,
                "is not supported yet: sparse vectors are always searched by an exact scan of the"
                    + " points that have them");
          }
        }
        case "datatype" -> {
          if (!absent(v) && !(v.isString() && v.asString().equals("float32"))) {
            throw refused(
                field,
                v,
                v.isString() && v.asString().equals("turbo4")
                    ? "sparse vectors do not support the `turbo4` datatype"
                    : "only float32 is supported");
          }
        }
        default -> throw refused(field, v, "unknown sparse index setting");
      }
    }
  }

  private static boolean absent(JsonNode n) {
    return n == null || n.isNull();
  }

  private static boolean isInt(JsonNode n, long value) {
    return n.isIntegralNumber() && n.canConvertToLong() && n.longValue() == value;
  }

  /** A setting FlashVec does not honour, refused with a 400 naming it, its value and why. */
  static InvalidInputException refused(String field, JsonNode value, String why) {
    return new InvalidInputException(
        "Wrong input: "
            + field
            + ": "
            + why
            + " ["
            + field
            + "="
            + Requests.abbreviate(value)
            + "]");
  }
}
