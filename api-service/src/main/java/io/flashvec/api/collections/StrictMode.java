package io.flashvec.api.collections;

import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.api.web.ValidationException;
import io.flashvec.index.InvalidInputException;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A collection's strict mode configuration, Qdrant's {@code strict_mode_config}: the limits a
 * request to the collection must keep while {@code enabled} is true. Parsed and validated once
 * ({@link #parse}), merged field by field on an update as Qdrant merges it ({@link #merge}: a field
 * given replaces the stored one, a field absent or {@code null} keeps it), kept as JSON with the
 * collection ({@link #toJson}), and enforced by {@link StrictModeGuard}.
 *
 * <p>Every field of Qdrant's configuration is enforced except one, refused with a 400 naming it
 * rather than stored and ignored: the deprecated {@code max_resident_memory_percent} (the server's
 * memory budget bounds memory for every collection).
 *
 * @param values the fields that are set, each a {@link Boolean}, {@link Long} or {@link Double} as
 *     its {@link Field} says
 * @param sparseMaxLength {@code sparse_config}: sparse vector name to its {@code max_length}
 *     ({@code null} value: an entry without one); {@code null} when not set
 * @param multivectorMaxVectors {@code multivector_config}: multivector name to its {@code
 *     max_vectors} ({@code null} value: an entry without one); {@code null} when not set
 */
public record StrictMode(
    Map<Field, Object> values,
    Map<String, Long> sparseMaxLength,
    Map<String, Long> multivectorMaxVectors) {

  /** The fields of Qdrant's strict mode configuration that hold one value, in Qdrant's order. */
  public enum Field {
    ENABLED("enabled", Kind.BOOL, 0),
    MAX_QUERY_LIMIT("max_query_limit", Kind.COUNT, 1),
    MAX_TIMEOUT("max_timeout", Kind.COUNT, 1),
    UNINDEXED_FILTERING_RETRIEVE("unindexed_filtering_retrieve", Kind.BOOL, 0),
    UNINDEXED_FILTERING_UPDATE("unindexed_filtering_update", Kind.BOOL, 0),
    SEARCH_MAX_HNSW_EF("search_max_hnsw_ef", Kind.COUNT, 0),
    SEARCH_ALLOW_EXACT("search_allow_exact", Kind.BOOL, 0),
    SEARCH_MAX_OVERSAMPLING("search_max_oversampling", Kind.NUMBER, 0),
    UPSERT_MAX_BATCHSIZE("upsert_max_batchsize", Kind.COUNT, 0),
    SEARCH_MAX_BATCHSIZE("search_max_batchsize", Kind.COUNT, 0),
    MAX_COLLECTION_VECTOR_SIZE_BYTES("max_collection_vector_size_bytes", Kind.COUNT, 0),
    READ_RATE_LIMIT("read_rate_limit", Kind.COUNT, 1),
    WRITE_RATE_LIMIT("write_rate_limit", Kind.COUNT, 1),
    MAX_COLLECTION_PAYLOAD_SIZE_BYTES("max_collection_payload_size_bytes", Kind.COUNT, 0),
    MAX_POINTS_COUNT("max_points_count", Kind.COUNT, 1),
    FILTER_MAX_CONDITIONS("filter_max_conditions", Kind.COUNT, 0),
    CONDITION_MAX_SIZE("condition_max_size", Kind.COUNT, 0),
    MAX_PAYLOAD_INDEX_COUNT("max_payload_index_count", Kind.COUNT, 0);

    final String json;
    final Kind kind;
    final long min;

    Field(String json, Kind kind, long min) {
      this.json = json;
      this.kind = kind;
      this.min = min;
    }
  }

  /** How a field's value is written: a boolean, a non-negative integer, a number. */
  enum Kind {
    BOOL,
    COUNT,
    NUMBER
  }

  /** The strict mode of a collection that never had one. */
  public static final StrictMode NONE = new StrictMode(Map.of(), null, null);

  private static final String SPARSE = "sparse_config";
  private static final String MULTIVECTOR = "multivector_config";
  private static final String MEMORY = "max_resident_memory_percent";
  private static final Map<String, Field> BY_NAME = new TreeMap<>();

  static {
    for (Field f : Field.values()) {
      BY_NAME.put(f.json, f);
    }
  }

  public StrictMode {
    EnumMap<Field, Object> copy = new EnumMap<>(Field.class);
    copy.putAll(values);
    values = Collections.unmodifiableMap(copy);
    sparseMaxLength =
        sparseMaxLength == null
            ? null
            : Collections.unmodifiableMap(new TreeMap<>(sparseMaxLength));
    multivectorMaxVectors =
        multivectorMaxVectors == null
            ? null
            : Collections.unmodifiableMap(new TreeMap<>(multivectorMaxVectors));
  }

  /** {@link #parse(JsonNode, String, Set, Set)} accepting any multivector name. */
  public static StrictMode parse(JsonNode n, String at, Set<String> sparseNames) {
    return parse(n, at, sparseNames, null);
  }

  /**
   * Parses a {@code strict_mode_config} object of a request ({@code at} is its path there, for
   * errors). A wrong type or an unknown field is a 400, a value below its minimum Qdrant's 422, and
   * a sparse vector name the collection does not have ({@code sparseNames}; {@code null}: any) a
   * 400.
   */
  public static StrictMode parse(
      JsonNode n, String at, Set<String> sparseNames, Set<String> multiNames) {
    if (!n.isObject()) {
      throw Requests.invalid(at + " must be an object", at, n);
    }
    EnumMap<Field, Object> values = new EnumMap<>(Field.class);
    Map<String, Long> sparse = null;
    Map<String, Long> multi = null;
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      String name = e.getKey();
      JsonNode v = e.getValue();
      String path = at + "." + name;
      Field f = BY_NAME.get(name);
      if (v.isNull()) {
        if (f == null
            && !name.equals(SPARSE)
            && !name.equals(MULTIVECTOR)
            && !name.equals(MEMORY)) {
          throw unknown(path);
        }
        continue; // Qdrant's None: the stored value stays
      }
      if (f != null) {
        values.put(f, value(f, v, path));
      } else if (name.equals(SPARSE)) {
        sparse = perVector(v, path, sparseNames, "sparse vector", "max_length");
      } else if (name.equals(MULTIVECTOR)) {
        multi = perVector(v, path, multiNames, "multivector", "max_vectors");
      } else if (name.equals(MEMORY)) {
        throw CollectionSettings.refused(
            path,
            v,
            "is not supported: the server's memory budget (FLASHVEC_MEMORY_*) bounds memory for"
                + " every collection");
      } else {
        throw unknown(path);
      }
    }
    return new StrictMode(values, sparse, multi);
  }

  private static Object value(Field f, JsonNode v, String path) {
    switch (f.kind) {
      case BOOL -> {
        if (!v.isBoolean()) {
          throw Requests.invalid(path + " must be a boolean", path, v);
        }
        return v.booleanValue();
      }
      case NUMBER -> {
        if (!v.isNumber()) {
          throw Requests.invalid(path + " must be a number", path, v);
        }
        return v.doubleValue();
      }
      default -> {
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0) {
          throw Requests.invalid(path + " must be a non-negative integer", path, v);
        }
        long l = v.longValue();
        if (l < f.min) {
          throw new ValidationException(
              path, "value " + l + " invalid, must be " + f.min + " or larger");
        }
        return l;
      }
    }
  }

  /**
   * {@code sparse_config} or {@code multivector_config}: the name of a {@code kind} of vector (one
   * of {@code names}; {@code null}: any) to its limit {@code field}.
   */
  private static Map<String, Long> perVector(
      JsonNode v, String path, Set<String> names, String kind, String field) {
    Set<String> sparseNames = names;
    if (!v.isObject()) {
      throw Requests.invalid(path + " must be an object of " + kind + " names", path, v);
    }
    Map<String, Long> out = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : v.properties()) {
      String name = e.getKey();
      String at = path + "." + name;
      if (sparseNames != null && !sparseNames.contains(name)) {
        throw CollectionSettings.refused(
            at,
            e.getValue(),
            "the collection has no "
                + kind
                + " of that name (it has "
                + (sparseNames.isEmpty()
                    ? "none"
                    : String.join(", ", new java.util.TreeSet<>(sparseNames)))
                + ")");
      }
      JsonNode c = e.getValue();
      if (c.isNull()) {
        out.put(name, null);
        continue;
      }
      if (!c.isObject()) {
        throw Requests.invalid(at + " must be an object", at, c);
      }
      Long max = null;
      for (Map.Entry<String, JsonNode> k : c.properties()) {
        if (!k.getKey().equals(field)) {
          throw unknown(at + "." + k.getKey());
        }
        JsonNode m = k.getValue();
        if (m.isNull()) {
          continue;
        }
        if (!m.isIntegralNumber() || !m.canConvertToLong() || m.longValue() < 0) {
          throw Requests.invalid(
              at + "." + field + " must be a non-negative integer", at + "." + field, m);
        }
        if (m.longValue() < 1) {
          throw new ValidationException(
              at + "." + field, "value " + m.longValue() + " invalid, must be 1 or larger");
        }
        max = m.longValue();
      }
      out.put(name, max);
    }
    return out;
  }

  /**
   * This configuration with the fields {@code diff} sets replacing this one's, as Qdrant merges.
   */
  public StrictMode merge(StrictMode diff) {
    EnumMap<Field, Object> values = new EnumMap<>(Field.class);
    values.putAll(this.values);
    values.putAll(diff.values);
    return new StrictMode(
        values,
        diff.sparseMaxLength != null ? diff.sparseMaxLength : sparseMaxLength,
        diff.multivectorMaxVectors != null ? diff.multivectorMaxVectors : multivectorMaxVectors);
  }

  /** Whether the limits apply: {@code enabled} is true. */
  public boolean enabled() {
    return Boolean.TRUE.equals(values.get(Field.ENABLED));
  }

  /** The value of an integer field, or {@code -1} when it is not set. */
  public long limit(Field f) {
    Object v = values.get(f);
    return v == null ? -1 : (Long) v;
  }

  /** The value of a boolean field, or {@code null} when it is not set. */
  public Boolean flag(Field f) {
    return (Boolean) values.get(f);
  }

  /** {@code search_max_oversampling}, or {@code NaN} when it is not set. */
  public double maxOversampling() {
    Object v = values.get(Field.SEARCH_MAX_OVERSAMPLING);
    return v == null ? Double.NaN : (Double) v;
  }

  /** The configuration as Qdrant shows it: the fields that are set, in Qdrant's order. */
  public ObjectNode toJson() {
    ObjectNode o = Json.object();
    for (Map.Entry<Field, Object> e : values.entrySet()) {
      switch (e.getValue()) {
        case Boolean b -> o.put(e.getKey().json, b);
        case Long l -> o.put(e.getKey().json, l);
        case Double d -> o.put(e.getKey().json, d);
        default -> throw new IllegalStateException("strict mode value " + e);
      }
    }
    if (sparseMaxLength != null) {
      ObjectNode s = Json.object();
      for (Map.Entry<String, Long> e : sparseMaxLength.entrySet()) {
        ObjectNode c = s.putObject(e.getKey());
        if (e.getValue() != null) {
          c.put("max_length", e.getValue());
        }
      }
      // after the single fields, before max_payload_index_count would be Qdrant's order; the
      // order of an object's fields carries no meaning to its clients
      o.set(SPARSE, s);
    }
    if (multivectorMaxVectors != null) {
      ObjectNode m = Json.object();
      for (Map.Entry<String, Long> e : multivectorMaxVectors.entrySet()) {
        ObjectNode c = m.putObject(e.getKey());
        if (e.getValue() != null) {
          c.put("max_vectors", e.getValue());
        }
      }
      o.set(MULTIVECTOR, m);
    }
    return o;
  }

  /** Reads a configuration {@link #toJson} wrote. */
  public static StrictMode fromJson(String json) {
    return parse(
        Json.parse(json.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
        "strict_mode_config",
        null);
  }

  private static InvalidInputException unknown(String path) {
    return new InvalidInputException(
        "Wrong input: unknown field `"
            + path
            + "`; known: "
            + String.join(", ", BY_NAME.keySet())
            + ", "
            + SPARSE
            + ", "
            + MULTIVECTOR);
  }
}
