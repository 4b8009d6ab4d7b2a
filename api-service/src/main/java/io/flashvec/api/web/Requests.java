package io.flashvec.api.web;

import io.flashvec.index.CollectionConfig;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.Point;
import io.flashvec.index.PointId;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SparseVector;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.payload.Bm25Embedding;
import io.flashvec.index.payload.PayloadDocuments;
import io.flashvec.index.query.OrderedScrollRequest;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.BooleanNode;

/**
 * Reads request fields from JSON with Qdrant's conventions and exact error messages that name the
 * field and the offending value.
 */
public final class Requests {

  private static final BigInteger MAX_U64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  private Requests() {}

  /** A point id: a non-negative integer below 2^64 or a UUID string. */
  public static PointId id(JsonNode n, String field) {
    if (n == null || n.isMissingNode() || n.isNull()) {
      throw new InvalidInputException("Wrong input: missing point id [field=" + field + "]");
    }
    if (n.isIntegralNumber()) {
      BigInteger v = n.bigIntegerValue();
      if (v.signum() < 0 || v.compareTo(MAX_U64) > 0) {
        throw new InvalidInputException(
            "Wrong input: point id must be an unsigned 64-bit integer or a UUID ["
                + field
                + "="
                + v
                + "]");
      }
      return PointId.of(v.longValue());
    }
    if (n.isString()) {
      String s = n.asString();
      try {
        PointId id = PointId.parse(s);
        if (!id.isUuid()) {
          // Qdrant accepts only UUID strings; a numeric string is a type error there too.
          throw new InvalidInputException(
              "Wrong input: point id string must be a UUID [" + field + "=" + s + "]");
        }
        return id;
      } catch (InvalidInputException e) {
        throw new InvalidInputException(
            "Wrong input: point id must be an unsigned 64-bit integer or a UUID ["
                + field
                + "="
                + s
                + "]");
      }
    }
    throw new InvalidInputException(
        "Wrong input: point id must be an unsigned 64-bit integer or a UUID ["
            + field
            + "="
            + n
            + "]");
  }

  /** A list of point ids. */
  public static List<PointId> ids(JsonNode arr, String field) {
    if (arr == null || !arr.isArray()) {
      throw new InvalidInputException("Wrong input: " + field + " must be an array of point ids");
    }
    List<PointId> out = new ArrayList<>(arr.size());
    for (int i = 0; i < arr.size(); i++) {
      out.add(id(arr.get(i), field + "[" + i + "]"));
    }
    return out;
  }

  /**
   * A dense vector: an array of numbers, or Qdrant's named form with the default (empty) name
   * ({@code {"": [...]}}, {@code {"name": "", "vector": [...]}}).
   */
  public static float[] vector(JsonNode n, String field) {
    if (n != null && n.isObject()) {
      if (n.has("vector") && n.size() <= 2 && (n.path("name").asString("").isEmpty())) {
        return vector(n.get("vector"), field + ".vector");
      }
      if (n.size() == 1 && n.has("")) {
        return vector(n.get(""), field);
      }
      throw invalid("named vectors are not supported, use one unnamed dense vector", field, n);
    }
    if (n == null || !n.isArray()) {
      throw invalid(field + " must be an array of numbers", field, n);
    }
    if (n instanceof NumberArrayNode numbers && numbers.doubles() != null) {
      return vector(numbers.doubles(), numbers.count(), field);
    }
    float[] v = new float[n.size()];
    for (int i = 0; i < v.length; i++) {
      JsonNode x = n.get(i);
      if (!x.isNumber()) {
        throw new InvalidInputException(
            "Wrong input: vector element is not a number [field="
                + field
                + ", index="
                + i
                + ", value="
                + abbreviate(x)
                + "]");
      }
      double d = x.doubleValue();
      v[i] = (float) d;
      if (!Float.isFinite(v[i])) {
        throw notAFloat(field, i, d);
      }
    }
    return v;
  }

  /**
   * A point's vectors as the request gives them: {@code unnamed} (a bare array, {@code null}: not
   * given), and the dense and sparse ones by name ({@code ""} is Qdrant's unnamed vector).
   */
  public record PointVectors(
      float[] unnamed,
      Map<String, float[]> dense,
      Map<String, SparseVector> sparse,
      Map<String, Integer> multi) {

    /** Vectors without a multivector. */
    public PointVectors(
        float[] unnamed, Map<String, float[]> dense, Map<String, SparseVector> sparse) {
      this(unnamed, dense, sparse, Map.of());
    }

    /**
     * These vectors as a point of a collection configured as {@code config}: the primary dense
     * vector by its name (a bare array only when it is unnamed), the sparse ones by theirs.
     *
     * @throws InvalidInputException with Qdrant's text for a name the collection does not have, or
     *     naming a vector given in the wrong kind (dense for a sparse field or the reverse)
     */
    public Point toPoint(PointId id, byte[] payload, CollectionConfig config) {
      float[] primary = null;
      Map<String, float[]> others = new HashMap<>();
      if (unnamed != null && config.unnamedExact()) {
        // the unnamed vector searched exactly (a plain vector is a multivector of one, as Qdrant
        // takes it)
        others.put(CollectionConfig.UNNAMED_EXACT, unnamed);
      } else if (unnamed != null) {
        if (!config.vectorName().isEmpty() || !config.hasPrimary()) {
          throw CollectionConfig.notExisting("");
        }
        primary = unnamed;
      }
      for (Map.Entry<String, float[]> e : dense.entrySet()) {
        String internal = config.internalName(e.getKey());
        if (!config.isDense(internal)) {
          throw new InvalidInputException(
              "Wrong input: vector "
                  + e.getKey()
                  + " is a sparse vector: give it as {\"indices\": [...], \"values\": [...]}");
        }
        Integer multiDim = multi.get(e.getKey());
        if (internal.isEmpty()) {
          if (multiDim != null) {
            throw notMultivector(e.getKey(), config.dimension());
          }
          primary = e.getValue();
        } else {
          io.flashvec.index.DenseVectorParams f = config.denseField(internal);
          if (multiDim != null) {
            if (!f.multivector()) {
              throw notMultivector(e.getKey(), f.dimension());
            }
            if (multiDim != f.dimension()) {
              throw multivectorDimension(e.getKey(), f.dimension(), multiDim);
            }
          }
          // a multivector field takes a plain vector as a multivector of one, as Qdrant does
          others.put(internal, e.getValue());
        }
      }
      for (String name : sparse.keySet()) {
        if (config.isDense(config.internalName(name))) {
          throw new InvalidInputException(
              "Wrong input: vector " + name + " is a dense vector: give it as an array of numbers");
        }
      }
      return new Point(id, primary, payload, sparse, others);
    }
  }

  /**
   * A point's {@code vector}: an array of numbers (the unnamed dense vector), or an object of
   * vectors by name, dense ones as arrays and sparse ones as {@code {"indices": [...], "values":
   * [...]}}. Names are checked against the collection by {@link PointVectors#toPoint}.
   */
  public static PointVectors pointVectors(JsonNode n, String field) {
    if (n == null || n.isNull()) {
      throw invalid(field + " is missing", field, n);
    }
    if (n.isArray() && !n.isEmpty() && n.get(0).isArray()) {
      // Qdrant's unnamed multivector
      float[][] vectors = multiVector(n, field);
      return new PointVectors(
          null, Map.of("", flatten(vectors)), Map.of(), Map.of("", vectors[0].length));
    }
    if (!n.isObject()) {
      return new PointVectors(nonEmpty(vector(n, field), field), Map.of(), Map.of());
    }
    Map<String, float[]> dense = new HashMap<>();
    Map<String, SparseVector> sparse = new HashMap<>();
    Map<String, Integer> multi = new HashMap<>();
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      String name = e.getKey();
      JsonNode v = e.getValue();
      if (v != null && v.isObject() && (v.has("indices") || v.has("values"))) {
        sparse.put(name, sparseVector(v, field + ".?"));
      } else if (v != null && v.isObject() && v.has("text")) {
        sparse.put(name, document(v, field + "." + name));
      } else if (v != null && v.isArray() && !v.isEmpty() && v.get(0).isArray()) {
        // Qdrant's path for a named multivector's values, as ".?.indices" for a sparse one
        float[][] vectors = multiVector(v, field + ".?.data");
        dense.put(name, flatten(vectors));
        multi.put(name, vectors[0].length);
      } else if (v != null && v.isArray()) {
        String at = field + "[\"" + name + "\"]";
        dense.put(name, nonEmpty(vector(v, at), at));
      } else {
        throw invalid(
            "a vector must be an array of numbers or a sparse vector {indices, values}",
            field + "." + name,
            v);
      }
    }
    return new PointVectors(null, dense, sparse, multi);
  }

  /**
   * Qdrant's document {@code {"text": "...", "model": "qdrant/bm25", "options": {...}}} given as a
   * vector: the built-in BM25's sparse vector of the text ({@link Bm25Embedding#document}). Other
   * models are refused: FlashVec runs no embedding models.
   */
  public static SparseVector document(JsonNode doc, String field) {
    JsonNode text = doc.get("text");
    if (text == null || !text.isString()) {
      throw invalid("a document's text must be a string", field + ".text", text);
    }
    model(doc.get("model"), field + ".model");
    for (Map.Entry<String, JsonNode> e : doc.properties()) {
      if (!Set.of("text", "model", "options").contains(e.getKey())) {
        throw invalid("unknown document field", field + "." + e.getKey(), e.getValue());
      }
    }
    return Bm25Embedding.parse(doc.get("options"), field + ".options").document(text.asString());
  }

  /** A document's or text query's {@code model}: required, and the built-in BM25. */
  public static void model(JsonNode model, String field) {
    if (model == null || !model.isString()) {
      throw invalid(
          "a document needs `model`: qdrant/bm25 (FlashVec's built-in BM25; it runs no other"
              + " embedding model)",
          field,
          model);
    }
    if (!Bm25Embedding.isModel(model.asString())) {
      throw invalid(
          "only the built-in BM25 model (qdrant/bm25 or bm25) is supported: FlashVec runs no"
              + " embedding models",
          field,
          model);
    }
  }

  /**
   * {@code v}, or Qdrant's 422 for a dense vector of no values (also {@code []} for a multivector).
   */
  private static float[] nonEmpty(float[] v, String field) {
    if (v.length == 0) {
      throw new ValidationException(field, "dense vector must not be empty");
    }
    return v;
  }

  /**
   * A multivector {@code [[...], [...], ...]}: at least one vector, none empty, all of one size
   * (Qdrant's validation errors, naming {@code field} and the offending size).
   */
  public static float[][] multiVector(JsonNode n, String field) {
    if (n == null || !n.isArray() || n.isEmpty()) {
      throw new ValidationException(field, "a multivector must hold at least one vector");
    }
    float[][] out = new float[n.size()][];
    for (int i = 0; i < out.length; i++) {
      JsonNode sub = n.get(i);
      if (sub == null || !sub.isArray()) {
        throw invalid(
            "a multivector must be an array of arrays of numbers", field + "[" + i + "]", sub);
      }
      out[i] = vector(sub, field + "[" + i + "]");
      if (out[i].length == 0) {
        throw new ValidationException(field, "all vectors must be non-empty");
      }
      if (out[i].length != out[0].length) {
        throw new ValidationException(
            field,
            "all vectors must have the same dimension, found vector with dimension "
                + out[i].length
                + " [expected="
                + out[0].length
                + ", index="
                + i
                + "]");
      }
    }
    return out;
  }

  /** The vectors of a multivector back to back, as FlashVec holds it. */
  public static float[] flatten(float[][] vectors) {
    int dim = vectors[0].length;
    float[] out = new float[dim * vectors.length];
    for (int i = 0; i < vectors.length; i++) {
      System.arraycopy(vectors[i], 0, out, i * dim, dim);
    }
    return out;
  }

  /** A multivector given for a field that holds one vector per point. */
  public static InvalidInputException notMultivector(String name, int dim) {
    return new InvalidInputException(
        "Wrong input: vector "
            + name
            + " is not a multivector: give one array of "
            + dim
            + " numbers [vector="
            + name
            + "]");
  }

  /** A multivector whose vectors have another size than its field's. */
  public static InvalidInputException multivectorDimension(String name, int dim, int got) {
    return new InvalidInputException(
        "Wrong input: Vector dimension error: expected dim: "
            + dim
            + ", got "
            + got
            + " [vector="
            + name
            + "]");
  }

  /** Whether {@code n} is a sparse vector: an object with {@code indices} and {@code values}. */
  public static boolean isSparse(JsonNode n) {
    return n != null && n.isObject() && n.has("indices") && n.has("values");
  }

  /**
   * A sparse vector {@code {"indices": [u32...], "values": [number...]}}, sorted by index. Lengths
   * that differ and repeated indices are Qdrant's validation errors (422) naming {@code field}.
   */
  public static SparseVector sparseVector(JsonNode n, String field) {
    JsonNode idx = n.get("indices");
    JsonNode val = n.get("values");
    if (idx == null || !idx.isArray()) {
      throw invalid(
          "a sparse vector needs `indices`, an array of integers", field + ".indices", idx);
    }
    if (val == null || !val.isArray()) {
      throw invalid("a sparse vector needs `values`, an array of numbers", field + ".values", val);
    }
    if (idx.size() != val.size()) {
      throw new ValidationException(
          field + ".values", "Validation error: must be the same length as indices [{}]");
    }
    long[] indices = new long[idx.size()];
    float[] values = new float[val.size()];
    java.util.Set<Long> seen = new java.util.HashSet<>();
    for (int i = 0; i < indices.length; i++) {
      JsonNode x = idx.get(i);
      if (!x.isIntegralNumber()
          || !x.canConvertToLong()
          || x.longValue() < 0
          || x.longValue() > 0xFFFF_FFFFL) {
        throw invalid(
            "sparse vector indices must be integers from 0 to 4294967295",
            field + ".indices[" + i + "]",
            x);
      }
      indices[i] = x.longValue();
      if (!seen.add(indices[i])) {
        throw new ValidationException(field + ".indices", "Validation error: must be unique [{}]");
      }
      JsonNode y = val.get(i);
      if (!y.isNumber()) {
        throw invalid("sparse vector values must be numbers", field + ".values[" + i + "]", y);
      }
      values[i] = (float) y.doubleValue();
      if (!Float.isFinite(values[i])) {
        throw notAFloat(field + ".values", i, y.doubleValue());
      }
    }
    return SparseVector.of(indices, values, field);
  }

  /** {@link #vector(JsonNode, String)} of the first {@code n} values, read without nodes. */
  private static float[] vector(double[] values, int n, String field) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) values[i];
      if (!Float.isFinite(v[i])) {
        throw notAFloat(field, i, values[i]);
      }
    }
    return v;
  }

  private static InvalidInputException notAFloat(String field, int i, double d) {
    return new InvalidInputException(
        "Wrong input: vector value is NaN, infinite or outside the float range [field="
            + field
            + ", index="
            + i
            + ", value="
            + d
            + "]");
  }

  /** An optional boolean with a default. */
  public static boolean bool(JsonNode parent, String field, boolean dflt) {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (!n.isBoolean()) {
      throw invalid(field + " must be a boolean", field, n);
    }
    return n.booleanValue();
  }

  /** An optional non-negative integer with a default, at most {@code max}. */
  public static int nonNegativeInt(JsonNode parent, String field, int dflt, int max) {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (!n.isIntegralNumber() || n.bigIntegerValue().signum() < 0) {
      throw invalid(field + " must be a non-negative integer", field, n);
    }
    if (n.bigIntegerValue().compareTo(BigInteger.valueOf(max)) > 0) {
      throw new InvalidInputException(
          "Wrong input: " + field + " is too large [" + field + "=" + n + ", max=" + max + "]");
    }
    return n.intValue();
  }

  /**
   * A result limit: {@link #nonNegativeInt} up to {@code max}; a larger one (Qdrant takes any
   * 64-bit limit) is {@code max} when {@code points} says the collection holds at most {@code max}
   * points, as no answer can then be longer, and refused otherwise.
   *
   * @param points the collection's live points, asked only for a limit above {@code max} ({@code
   *     null}: such a limit is refused)
   */
  public static int limit(
      JsonNode parent, String field, int dflt, int max, java.util.function.LongSupplier points) {
    JsonNode n = parent.get(field);
    if (points != null
        && n != null
        && n.isIntegralNumber()
        && n.bigIntegerValue().compareTo(BigInteger.valueOf(max)) > 0
        && points.getAsLong() <= max) {
      return max;
    }
    return nonNegativeInt(parent, field, dflt, max);
  }

  /** An optional finite number. */
  public static Float optionalFloat(JsonNode parent, String field) {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return null;
    }
    if (!n.isNumber() || !Float.isFinite((float) n.doubleValue())) {
      throw invalid(field + " must be a finite number", field, n);
    }
    return (float) n.doubleValue();
  }

  /**
   * Search params: {@code hnsw_ef} (alias of {@code search_list}), {@code beam_width}, {@code
   * rerank_k}, {@code exact}, and Qdrant's {@code quantization} ({@link #quantization}).
   */
  /** The fields of a search's {@code params}: Qdrant's and FlashVec's; any other is refused. */
  private static final java.util.Set<String> PARAMS_FIELDS =
      java.util.Set.of(
          "hnsw_ef",
          "exact",
          "quantization",
          "indexed_only",
          "acorn",
          "idf",
          "search_list",
          "beam_width",
          "rerank_k");

  public static SearchParams params(JsonNode parent) {
    JsonNode p = optionalObject(parent, "params");
    if (p == null) {
      return SearchParams.DEFAULT;
    }
    for (String k : p.propertyNames()) {
      if (!PARAMS_FIELDS.contains(k)) {
        throw invalid(
            "unknown field `"
                + k
                + "`; expected hnsw_ef, exact, quantization, indexed_only, acorn, idf, and"
                + " FlashVec's search_list, beam_width, rerank_k",
            "params." + k,
            p.get(k));
      }
    }
    JsonNode indexedOnly = p.get("indexed_only");
    if (indexedOnly != null && !indexedOnly.isNull() && !indexedOnly.equals(BooleanNode.FALSE)) {
      throw invalid(
          "only false is supported: every segment is searched, those waiting for their graph by"
              + " an exact scan",
          "params.indexed_only",
          indexedOnly);
    }
    JsonNode acorn = p.get("acorn");
    if (acorn != null && acorn.isObject()) {
      refuseUnknown(acorn, java.util.Set.of("enable", "max_selectivity"), "params.acorn.");
      JsonNode sel = acorn.get("max_selectivity");
      if (sel != null && !sel.isNull()) {
        if (!sel.isNumber()) {
          throw invalid(
              "params.acorn.max_selectivity must be a number", "params.acorn.max_selectivity", sel);
        }
        if (sel.doubleValue() < 0 || sel.doubleValue() > 1) {
          throw new ValidationException(
              "params.acorn.max_selectivity",
              "value " + sel + " invalid, must be in the range 0.0..=1.0");
        }
      }
    }
    if (acorn != null && !acorn.isNull()) {
      JsonNode enable = acorn.get("enable");
      if (!acorn.isObject()
          || (enable != null && !enable.isNull() && !enable.equals(BooleanNode.FALSE))) {
        throw invalid(
            "ACORN is not supported: a filtered search walks the graph with the filter applied to"
                + " results, widening its list as the filter is selective",
            "params.acorn",
            acorn);
      }
    }
    int searchList = nonNegativeInt(p, "search_list", 0, 100_000);
    if (searchList == 0) {
      JsonNode ef = p.get("hnsw_ef");
      if (ef != null && ef.isIntegralNumber() && ef.asLong(1) == 0) {
        throw new ValidationException("params.hnsw_ef", "value 0 invalid, must be 1 or larger");
      }
      searchList = nonNegativeInt(p, "hnsw_ef", 0, 100_000);
    }
    int rerankK = nonNegativeInt(p, "rerank_k", 0, 100_000);
    idfCorpus(parent, "");
    return new SearchParams(
        searchList,
        nonNegativeInt(p, "beam_width", 0, 1024),
        Math.max(rerankK, quantization(parent, p)),
        bool(p, "exact", false));
  }

  /**
   * Qdrant's {@code params.idf} of a search: {@code "global"} (or absent: {@code null}), or {@code
   * {"corpus": filter}}, the points whose statistics a sparse search's IDF counts.
   *
   * @param path where {@code parent} is in the request ({@code ""}, {@code prefetch[1].})
   */
  public static Filter idfCorpus(JsonNode parent, String path) {
    JsonNode p = parent.get("params");
    JsonNode idf = p == null || !p.isObject() ? null : p.get("idf");
    if (idf == null || idf.isNull() || (idf.isString() && idf.asString().equals("global"))) {
      return null;
    }
    if (!idf.isObject() || idf.size() != 1 || !idf.has("corpus") || !idf.get("corpus").isObject()) {
      throw invalid(
          "params.idf must be \"global\" or {\"corpus\": filter}", path + "params.idf", idf);
    }
    return FilterParser.parse(idf.get("corpus"), path + "params.idf.corpus");
  }

  /**
   * Refuses Qdrant's {@code shard_key} in a request body ({@link Json#parse} checks every one): at
   * the top, in each of {@code searches} (batches) and in each operation of {@code operations}
   * (batch updates). FlashVec has no custom sharding (points are hashed over {@code shard_number}
   * shards), so only {@code null} is accepted.
   *
   * @return {@code body}
   */
  static JsonNode refuseShardKey(JsonNode body) {
    shardKey(body, "");
    for (String list : new String[] {"searches", "operations"}) {
      JsonNode items = body.get(list);
      if (items == null || !items.isArray()) {
        continue;
      }
      for (int i = 0; i < items.size(); i++) {
        JsonNode item = items.get(i);
        String at = list + "[" + i + "].";
        shardKey(item, at);
        if (list.equals("operations") && item.isObject()) {
          for (java.util.Map.Entry<String, JsonNode> op : item.properties()) {
            shardKey(op.getValue(), at + op.getKey() + ".");
          }
        }
      }
    }
    return body;
  }

  private static void shardKey(JsonNode n, String at) {
    noShardKey(n.isObject() ? n.get("shard_key") : null, at + "shard_key");
    lookupShardKey(n, at);
  }

  private static void noShardKey(JsonNode key, String field) {
    if (key != null && !key.isNull()) {
      throw invalid(
          field
              + ": custom sharding is not supported; points are hashed over the collection's"
              + " shard_number shards",
          field,
          key);
    }
  }

  /** {@code lookup_from.shard_key} of a query and of its prefetches, at any depth. */
  private static void lookupShardKey(JsonNode n, String at) {
    if (!n.isObject()) {
      return;
    }
    JsonNode from = n.get("lookup_from");
    if (from != null && from.isObject()) {
      noShardKey(from.get("shard_key"), at + "lookup_from.shard_key");
    }
    JsonNode prefetch = n.get("prefetch");
    if (prefetch != null && prefetch.isObject()) {
      lookupShardKey(prefetch, at + "prefetch.");
    } else if (prefetch != null && prefetch.isArray()) {
      for (int i = 0; i < prefetch.size(); i++) {
        lookupShardKey(prefetch.get(i), at + "prefetch[" + i + "].");
      }
    }
  }

  /** Most candidates an {@code oversampling} may ask for, as {@code rerank_k} allows. */
  static final int MAX_OVERSAMPLED = 100_000;

  /**
   * Qdrant's {@code params.quantization} on FlashVec's product quantisation, whose codes guide the
   * {@code diskann} graph search and whose candidates are always rescored with their full vectors:
   * {@code oversampling} (at least 1) widens the candidates rescored to {@code (limit + offset) ·
   * oversampling}, as Qdrant's does; {@code rescore: true} and {@code ignore: false} are what
   * FlashVec does, their other values are refused.
   *
   * @return the candidates to rescore that {@code oversampling} asks for, 0 when none
   */
  private static int quantization(JsonNode parent, JsonNode params) {
    JsonNode q = params.get("quantization");
    if (q == null || q.isNull()) {
      return 0;
    }
    if (!q.isObject()) {
      throw invalid("params.quantization must be an object", "params.quantization", q);
    }
    for (java.util.Map.Entry<String, JsonNode> e : q.properties()) {
      JsonNode v = e.getValue();
      String at = "params.quantization." + e.getKey();
      if (v.isNull()) {
        continue;
      }
      switch (e.getKey()) {
        case "ignore" -> {
          if (!v.isBoolean()) {
            throw invalid(at + " must be a boolean", at, v);
          }
          if (v.booleanValue()) {
            throw invalid(
                at
                    + ": true is not supported: a diskann search is always guided by its PQ codes"
                    + " (use params.exact for a search of full vectors only)",
                at,
                v);
          }
        }
        case "rescore" -> {
          if (!v.isBoolean()) {
            throw invalid(at + " must be a boolean", at, v);
          }
          if (!v.booleanValue()) {
            throw invalid(
                at + ": false is not supported: FlashVec always rescores with full vectors", at, v);
          }
        }
        case "oversampling" -> {
          if (!v.isNumber() || !Double.isFinite(v.doubleValue())) {
            throw invalid(at + " must be a number", at, v);
          }
          if (v.doubleValue() < 1) {
            throw new ValidationException(at, "value " + v + " invalid, must be 1.0 or larger");
          }
        }
        default ->
            throw invalid(
                "unknown field `" + at + "`; known: ignore, oversampling, rescore", at, v);
      }
    }
    JsonNode over = q.get("oversampling");
    if (over == null || over.isNull()) {
      return 0;
    }
    JsonNode limit = parent.get("limit");
    JsonNode offset = parent.get("offset");
    long wanted =
        (limit != null && limit.isIntegralNumber() ? limit.asLong() : 10)
            + (offset != null && offset.isIntegralNumber() ? offset.asLong() : 0);
    return (int) Math.min(MAX_OVERSAMPLED, Math.ceil(wanted * over.doubleValue()));
  }

  /** An optional object: {@code null} when absent or {@code null}. */
  public static JsonNode optionalObject(JsonNode parent, String field) {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return null;
    }
    if (!n.isObject()) {
      throw invalid(field + " must be an object", field, n);
    }
    return n;
  }

  /**
   * {@code field} of the optional object {@code object} ({@link #optionalObject}), e.g. {@code
   * optimizers_config.indexing_threshold}: {@code null} when either is absent or {@code null}.
   */
  public static JsonNode member(JsonNode parent, String object, String field) {
    JsonNode o = optionalObject(parent, object);
    JsonNode n = o == null ? null : o.get(field);
    return n == null || n.isNull() ? null : n;
  }

  /**
   * Qdrant's 400 for a bad value: {@code "Wrong input: <problem> [<field>=<value>]"}, the value
   * abbreviated.
   */
  /**
   * The fields Qdrant's request bodies have (its OpenAPI schemas, with its {@code with_vectors}
   * alias) and FlashVec's {@code with_stats}, by body. A body with any other field is refused
   * ({@link #refuseUnknown}): a misspelt setting would otherwise be accepted and do nothing.
   */
  public static final class Fields {
    private Fields() {}

    private static java.util.Set<String> of(java.util.Set<String> base, String... more) {
      java.util.Set<String> out = new java.util.HashSet<>(base);
      out.addAll(java.util.List.of(more));
      return java.util.Set.copyOf(out);
    }

    private static final java.util.Set<String> READ =
        java.util.Set.of(
            "filter", "params", "limit", "with_payload", "with_vector", "with_vectors");

    public static final java.util.Set<String> SEARCH =
        of(READ, "vector", "offset", "score_threshold", "shard_key", "with_stats");
    public static final java.util.Set<String> SEARCH_GROUPS =
        of(READ, "vector", "score_threshold", "shard_key", "group_by", "group_size", "with_lookup");
    public static final java.util.Set<String> QUERY =
        of(
            READ,
            "prefetch",
            "query",
            "using",
            "score_threshold",
            "offset",
            "lookup_from",
            "shard_key",
            "with_stats");
    public static final java.util.Set<String> QUERY_GROUPS =
        of(
            READ,
            "prefetch",
            "query",
            "using",
            "score_threshold",
            "lookup_from",
            "shard_key",
            "group_by",
            "group_size",
            "with_lookup");
    public static final java.util.Set<String> PREFETCH =
        java.util.Set.of(
            "prefetch",
            "query",
            "using",
            "filter",
            "params",
            "score_threshold",
            "limit",
            "lookup_from");
    public static final java.util.Set<String> RECOMMEND =
        of(
            READ,
            "positive",
            "negative",
            "strategy",
            "offset",
            "score_threshold",
            "using",
            "lookup_from",
            "shard_key",
            "with_stats");
    public static final java.util.Set<String> RECOMMEND_GROUPS =
        of(RECOMMEND, "group_by", "group_size", "with_lookup");
    public static final java.util.Set<String> DISCOVER =
        of(READ, "target", "context", "offset", "using", "lookup_from", "shard_key", "with_stats");
    public static final java.util.Set<String> BATCH = java.util.Set.of("searches", "with_stats");
    public static final java.util.Set<String> SCROLL =
        java.util.Set.of(
            "filter",
            "limit",
            "offset",
            "order_by",
            "shard_key",
            "with_payload",
            "with_vector",
            "with_vectors");
    public static final java.util.Set<String> COUNT =
        java.util.Set.of("exact", "filter", "shard_key");
    public static final java.util.Set<String> FACET =
        java.util.Set.of("exact", "filter", "key", "limit", "shard_key");
    public static final java.util.Set<String> MATRIX =
        java.util.Set.of("filter", "limit", "sample", "shard_key", "using");
    public static final java.util.Set<String> RETRIEVE =
        java.util.Set.of("ids", "shard_key", "with_payload", "with_vector", "with_vectors");
    public static final java.util.Set<String> SET_PAYLOAD =
        java.util.Set.of("filter", "key", "payload", "points", "shard_key");
    public static final java.util.Set<String> DELETE_PAYLOAD =
        java.util.Set.of("filter", "keys", "points", "shard_key");
    public static final java.util.Set<String> SELECTOR =
        java.util.Set.of("filter", "points", "shard_key");
    public static final java.util.Set<String> DELETE_VECTORS =
        java.util.Set.of("filter", "points", "shard_key", "vector");
    public static final java.util.Set<String> ORDER_BY =
        java.util.Set.of("key", "direction", "start_from");
    public static final java.util.Set<String> LOOKUP_FROM =
        java.util.Set.of("collection", "vector", "shard_key");
  }

  /**
   * Refuses a field of {@code body} (an object; anything else is left to the caller) that is not in
   * {@code fields}, naming it ({@code at} is the body's path, {@code ""} at the top) and the fields
   * known there. A field set to {@code null} sets nothing and is let through.
   */
  public static void refuseUnknown(JsonNode body, java.util.Set<String> fields, String at) {
    if (body == null || !body.isObject()) {
      return;
    }
    for (String k : body.propertyNames()) {
      JsonNode v = body.get(k);
      if (!fields.contains(k) && v != null && !v.isNull()) {
        throw invalid(
            "unknown field `"
                + at
                + k
                + "`; known: "
                + String.join(", ", new java.util.TreeSet<>(fields)),
            at + k,
            v);
      }
    }
  }

  public static InvalidInputException invalid(String problem, String field, JsonNode value) {
    return new InvalidInputException(
        "Wrong input: " + problem + " [" + field + "=" + abbreviate(value) + "]");
  }

  /**
   * The body's {@code filter} in Qdrant's language, or {@code null} when absent, {@code null} or
   * empty (matches everything). Errors name the bad part, e.g. {@code filter.must[1].range: unknown
   * field 'gtx'}.
   *
   * @param prefix the body's own path in messages ({@code ""} or {@code searches[2].})
   */
  public static Filter filter(JsonNode body, String prefix) {
    Filter f = FilterParser.parse(body.get("filter"), prefix + "filter");
    return f.isEmpty() ? null : f;
  }

  /**
   * Qdrant's {@code order_by}: a key, or {@code {"key": k, "direction": "asc|desc", "start_from":
   * number or RFC 3339 datetime}}.
   *
   * @param field where it came from, for messages ({@code order_by}, {@code query.order_by})
   */
  public static OrderedScrollRequest orderBy(
      JsonNode orderBy,
      String field,
      int limit,
      Filter filter,
      boolean withPayload,
      boolean withVector) {
    String key;
    boolean ascending = true;
    Double startFrom = null;
    if (orderBy.isObject()) {
      refuseUnknown(orderBy, Fields.ORDER_BY, field + ".");
    }
    if (orderBy.isString()) {
      key = orderBy.asString();
    } else if (orderBy.isObject() && orderBy.path("key").isString()) {
      key = orderBy.get("key").asString();
      JsonNode dir = orderBy.get("direction");
      if (dir != null && !dir.isNull()) {
        String d = dir.asString("");
        if (!d.equals("asc") && !d.equals("desc")) {
          throw invalid(field + ".direction must be asc or desc", "direction", dir);
        }
        ascending = d.equals("asc");
      }
      JsonNode start = orderBy.get("start_from");
      if (start != null && !start.isNull()) {
        if (start.isNumber()) {
          startFrom = start.doubleValue();
        } else if (start.isString() && FilterParser.parseDatetime(start.asString()) != null) {
          startFrom = (double) PayloadDocuments.nanos(FilterParser.parseDatetime(start.asString()));
        } else {
          throw invalid(
              field + ".start_from must be a number or an RFC 3339 datetime", "start_from", start);
        }
      }
    } else {
      throw invalid(field + " must be a key or an object with `key`", field, orderBy);
    }
    return new OrderedScrollRequest(
        key, ascending, startFrom, limit, filter, withPayload, withVector);
  }

  /** A short rendering of a value for error messages. */
  public static String abbreviate(JsonNode n) {
    if (n == null) {
      return "null";
    }
    String s = n.toString();
    return s.length() > 80 ? s.substring(0, 77) + "..." : s;
  }
}
