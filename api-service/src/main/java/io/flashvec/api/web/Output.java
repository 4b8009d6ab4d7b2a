package io.flashvec.api.web;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Record;
import io.flashvec.index.SparseVector;
import io.flashvec.index.filter.FieldPath;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Renders stored points as Qdrant does, and parses {@code with_payload} / {@code with_vector}.
 *
 * <p>{@code with_payload} may be a boolean, a list of keys to include, or {@code {"include":
 * [...]}} / {@code {"exclude": [...]}}; keys are paths as in filters ({@link PayloadPaths}).
 */
public final class Output {

  private Output() {}

  /** Which payload keys to return. */
  public record PayloadSelector(boolean any, List<FieldPath> include, List<FieldPath> exclude) {
    public static final PayloadSelector ALL = new PayloadSelector(true, null, null);
    public static final PayloadSelector NONE = new PayloadSelector(false, null, null);

    /** Parses {@code field} of {@code parent}, defaulting to {@code dflt}. */
    public static PayloadSelector parse(JsonNode parent, String field, boolean dflt) {
      JsonNode n = parent.get(field);
      if (n == null || n.isNull()) {
        return dflt ? ALL : NONE;
      }
      if (n.isBoolean()) {
        return n.booleanValue() ? ALL : NONE;
      }
      if (n.isArray()) {
        return new PayloadSelector(true, keys(n, field), null);
      }
      if (n.isObject() && n.size() == 1 && n.has("include")) {
        return new PayloadSelector(true, keys(n.get("include"), field + ".include"), null);
      }
      if (n.isObject() && n.size() == 1 && n.has("exclude")) {
        return new PayloadSelector(true, null, keys(n.get("exclude"), field + ".exclude"));
      }
      throw Requests.invalid(
          field + " must be a boolean, a list of keys, or {include|exclude: [...]}", field, n);
    }

    private static List<FieldPath> keys(JsonNode arr, String field) {
      if (arr == null || !arr.isArray()) {
        throw new InvalidInputException(
            "Wrong input: " + field + " must be a list of payload keys");
      }
      List<FieldPath> s = new ArrayList<>();
      for (JsonNode k : arr) {
        if (!k.isString()) {
          throw Requests.invalid("payload key must be a string", field, k);
        }
        s.add(FieldPath.parse(k.asString(), field + "[" + s.size() + "]"));
      }
      return s;
    }
  }

  /**
   * Parses {@code with_vector} (or Qdrant's alias {@code with_vectors}): a boolean, or a list of
   * vector names ({@link #vectorNames}).
   */
  public static boolean withVector(JsonNode parent, String field, boolean dflt) {
    JsonNode n = withVectorNode(parent, field);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (n.isBoolean()) {
      return n.booleanValue();
    }
    if (n.isArray()) {
      return !n.isEmpty();
    }
    throw Requests.invalid(field + " must be a boolean", field, n);
  }

  /**
   * The vector names {@code with_vector} selects: {@code null} for all (or {@code true}), else the
   * names its list gives.
   */
  public static Set<String> vectorNames(JsonNode parent, String field) {
    JsonNode n = withVectorNode(parent, field);
    if (n == null || !n.isArray()) {
      return null;
    }
    Set<String> out = new HashSet<>();
    for (JsonNode x : n) {
      if (!x.isString()) {
        throw Requests.invalid(field + " must be a boolean or a list of vector names", field, n);
      }
      out.add(x.asString());
    }
    return out;
  }

  private static JsonNode withVectorNode(JsonNode parent, String field) {
    JsonNode n = parent.get(field);
    if (n == null && field.equals("with_vector")) {
      n = parent.get("with_vectors");
    }
    return n;
  }

  /**
   * {@code records} with their vectors under the names the collection {@code config} gives them,
   * and only the vectors {@code names} ({@code null}: all) kept.
   *
   * @throws io.flashvec.index.InvalidInputException with Qdrant's text for a name the collection
   *     does not have
   */
  public static List<Record> selectVectors(
      List<Record> records, Set<String> names, CollectionConfig config) {
    checkNames(names, config);
    if (names == null
        && config.vectorName().isEmpty()
        && config.multivectors().isEmpty()
        && config.denseVectors().isEmpty()
        && config.fieldGeneration() == 0) {
      return records;
    }
    List<Record> out = new ArrayList<>(records.size());
    for (Record r : records) {
      out.add(select(r, names, config));
    }
    return out;
  }

  /** One record as {@link #selectVectors(List, Set, CollectionConfig)}. */
  public static Record selectVectors(Record r, Set<String> names, CollectionConfig config) {
    checkNames(names, config);
    return select(r, names, config);
  }

  private static void checkNames(Set<String> names, CollectionConfig config) {
    if (names != null) {
      for (String n : names) {
        config.internalName(n);
      }
    }
  }

  private static Record select(Record r, Set<String> names, CollectionConfig config) {
    float[] primary = r.vector();
    Map<String, float[]> dense = r.dense();
    if (dense != null && !dense.isEmpty()) {
      // by the names requests give (a field added after creation is stored under a key with its
      // generation; the unnamed multivector is shown unnamed), without the values of deleted
      // fields, which the segments may still hold under keys the config no longer has
      Map<String, float[]> shown = new HashMap<>();
      for (Map.Entry<String, float[]> e : dense.entrySet()) {
        if (config.denseField(e.getKey()) != null) {
          shown.put(CollectionConfig.shownName(e.getKey()), e.getValue());
        }
      }
      dense = shown;
    }
    if (!config.vectorName().isEmpty()
        && (primary != null || r.sparse() != null || dense != null)) {
      // a named primary vector is shown by its name, as the other dense vectors; a deleted one not
      // at all
      dense = dense == null ? new HashMap<>() : new HashMap<>(dense);
      if (primary != null && !config.primaryRetired()) {
        dense.put(config.vectorName(), primary);
      }
      primary = null;
    }
    Map<String, SparseVector> sparse = r.sparse();
    if (names != null) {
      if (!names.contains("")) {
        primary = null;
      }
      if (sparse != null) {
        sparse = new HashMap<>(sparse);
        sparse.keySet().retainAll(names);
      }
      if (dense != null) {
        dense = new HashMap<>(dense);
        dense.keySet().retainAll(names);
      }
    }
    Map<String, Integer> shownMulti = new HashMap<>();
    config.multivectors().forEach((k, d) -> shownMulti.put(CollectionConfig.shownName(k), d));
    Map<String, Integer> multi = shownMulti;
    if (config.unnamedExact() && !multi.isEmpty()) {
      // shown as Qdrant's unnamed vector
      multi = Map.of("", config.denseField(CollectionConfig.UNNAMED_EXACT).dimension());
    }
    if (dense != null && (!multi.isEmpty() || config.unnamedExact())) {
      dense = new ShownVectors(dense, multi);
    }
    return new Record(r.id(), r.score(), primary, r.payload(), sparse, dense);
  }

  /**
   * The dense vectors of a record to show, with the size of the vectors of each multivector field
   * (whose values hold their vectors back to back and are shown as a list of lists).
   */
  private static final class ShownVectors extends HashMap<String, float[]> {
    private final Map<String, Integer> multi;

    ShownVectors(Map<String, float[]> dense, Map<String, Integer> multi) {
      super(dense);
      this.multi = multi;
    }
  }

  /** A point as returned by get/retrieve/scroll. */
  public static ObjectNode record(Record r, PayloadSelector sel, boolean withVector) {
    ObjectNode o = Json.object();
    Json.putId(o, "id", r.id());
    putPayload(o, r.payload(), sel);
    putVector(o, r, withVector);
    return o;
  }

  /** A search hit (ScoredPoint). */
  public static ObjectNode scored(Record r, PayloadSelector sel, boolean withVector) {
    ObjectNode o = Json.object();
    Json.putId(o, "id", r.id());
    o.put("version", 0);
    o.put("score", r.score());
    putPayload(o, r.payload(), sel);
    putVector(o, r, withVector);
    return o;
  }

  public static ArrayNode scoredList(List<Record> hits, PayloadSelector sel, boolean withVector) {
    ArrayNode a = Json.array();
    for (Record r : hits) {
      a.add(scored(r, sel, withVector));
    }
    return a;
  }

  private static void putPayload(ObjectNode o, byte[] payload, PayloadSelector sel) {
    if (!sel.any()) {
      o.putNull("payload");
      return;
    }
    if (payload == null) {
      o.putObject("payload");
      return;
    }
    JsonNode p = Json.readStored(payload);
    if (p instanceof ObjectNode map && sel.include() != null) {
      p = PayloadPaths.include(map, sel.include());
    } else if (p instanceof ObjectNode map && sel.exclude() != null) {
      p = PayloadPaths.exclude(map, sel.exclude());
    }
    o.set("payload", p);
  }

  /**
   * As Qdrant: a bare list when the point's only vector shown is the default dense one, else an
   * object by name ({@code ""}: the default dense one; sparse vectors as {@code {indices,
   * values}}).
   */
  private static void putVector(ObjectNode o, Record r, boolean withVector) {
    float[] v = r.vector();
    Map<String, SparseVector> sparse = r.sparse();
    Map<String, float[]> dense = r.dense();
    if (!withVector || (v == null && sparse == null && dense == null)) {
      o.putNull("vector");
      return;
    }
    boolean noSparse = sparse == null || sparse.isEmpty();
    boolean noDense = dense == null || dense.isEmpty();
    if (noSparse
        && v == null
        && dense instanceof ShownVectors sv
        && dense.size() == 1
        && dense.containsKey("")) {
      // the unnamed vector searched exactly, alone: a bare list (of vectors for a multivector)
      Integer dim = sv.multi.get("");
      if (dim == null) {
        putDense(o.putArray("vector"), dense.get(""));
      } else {
        putMulti(o.putArray("vector"), dense.get(""), dim);
      }
      return;
    }
    if (noSparse && noDense && dense == null) {
      if (v != null) {
        putDense(o.putArray("vector"), v);
      } else {
        o.putObject("vector");
      }
      return;
    }
    ObjectNode named = o.putObject("vector");
    if (v != null) {
      putDense(named.putArray(""), v);
    }
    if (dense != null) {
      Map<String, Integer> multi = dense instanceof ShownVectors sv ? sv.multi : Map.of();
      for (Map.Entry<String, float[]> e : new TreeMap<>(dense).entrySet()) {
        Integer dim = multi.get(e.getKey());
        if (dim == null) {
          putDense(named.putArray(e.getKey()), e.getValue());
          continue;
        }
        putMulti(named.putArray(e.getKey()), e.getValue(), dim);
      }
    }
    if (noSparse) {
      return;
    }
    for (Map.Entry<String, SparseVector> e : new TreeMap<>(sparse).entrySet()) {
      ObjectNode s = named.putObject(e.getKey());
      SparseVector sv = e.getValue();
      ArrayNode idx = s.putArray("indices");
      for (int i = 0; i < sv.size(); i++) {
        idx.add(sv.index(i));
      }
      ArrayNode val = s.putArray("values");
      for (float x : sv.values()) {
        val.add(x);
      }
    }
  }

  /** A multivector held back to back ({@code dim} values each) as a list of lists. */
  private static void putMulti(ArrayNode lists, float[] flat, int dim) {
    for (int off = 0; off < flat.length; off += dim) {
      ArrayNode one = lists.addArray();
      for (int i = off; i < off + dim; i++) {
        one.add(flat[i]);
      }
    }
  }

  private static void putDense(ArrayNode a, float[] v) {
    for (float x : v) {
      a.add(x);
    }
  }
}
