package io.flashvec.index;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What a collection is created with; immutable afterwards.
 *
 * <p><b>Without a primary vector.</b> A collection that declares no plain dense vector (Qdrant's
 * {@code {"sparse_vectors": {...}}} without {@code vectors}, or {@code vectors: {}}) has no primary
 * field: {@code dimension} is {@link #NO_PRIMARY} (0), {@code vectorName} is empty and every
 * declared field is stored beside the points ({@link #hasPrimary}). Its shards build no graph, PQ
 * codes or live graph, and its sealed segments hold ids, payloads and the vectors file only.
 *
 * @param dimension vector size, 1..{@value #MAX_DIMENSION}; {@link #NO_PRIMARY} for a collection
 *     without a primary dense vector
 * @param distance the metric of the primary vector (for a collection without one, only a
 *     placeholder that nothing scores with)
 * @param shardNumber shards the points are hashed over
 * @param replicationFactor copies of each shard (1 in standalone)
 * @param index how sealed segments are indexed
 * @param sparseVectors the sparse vector fields by name (empty: none); a point may have any of them
 * @param vectorName the name of the primary dense vector (the one {@code dimension}, {@code
 *     distance} and {@code index} describe, kept in the graph): {@code ""} for Qdrant's unnamed
 *     vector. A point may lack the primary vector when it is named or the collection has other
 *     fields ({@link #primaryOptional})
 * @param denseVectors the other dense vector fields by their storage key, in the order they were
 *     declared (empty: none); each is optional on a point and searched exactly ({@link
 *     DenseVectorParams}). A field declared at creation is stored under its name; one added later
 *     ({@link #withDenseVector}) under {@code name + GENERATION + generation} ({@link #shownName})
 * @param fieldGeneration the generation the next field added after creation takes: it only grows,
 *     so the storage key of a deleted field is never given to another one and the values segments
 *     and WAL still hold under it stay unreachable
 */
public record CollectionConfig(
    int dimension,
    Distance distance,
    int shardNumber,
    int replicationFactor,
    IndexParams index,
    Map<String, SparseVectorParams> sparseVectors,
    String vectorName,
    Map<String, DenseVectorParams> denseVectors,
    long fieldGeneration) {

  /** A collection as created, before any field was added or deleted. */
  public CollectionConfig(
      int dimension,
      Distance distance,
      int shardNumber,
      int replicationFactor,
      IndexParams index,
      Map<String, SparseVectorParams> sparseVectors,
      String vectorName,
      Map<String, DenseVectorParams> denseVectors) {
    this(
        dimension,
        distance,
        shardNumber,
        replicationFactor,
        index,
        sparseVectors,
        vectorName,
        denseVectors,
        0);
  }

  /** A collection of one dense vector per point. */
  public CollectionConfig(
      int dimension, Distance distance, int shardNumber, int replicationFactor, IndexParams index) {
    this(dimension, distance, shardNumber, replicationFactor, index, Map.of());
  }

  /** A collection whose primary dense vector is unnamed. */
  public CollectionConfig(
      int dimension,
      Distance distance,
      int shardNumber,
      int replicationFactor,
      IndexParams index,
      Map<String, SparseVectorParams> sparseVectors) {
    this(dimension, distance, shardNumber, replicationFactor, index, sparseVectors, "", Map.of());
  }

  /** A collection with one dense vector, named {@code vectorName}. */
  public CollectionConfig(
      int dimension,
      Distance distance,
      int shardNumber,
      int replicationFactor,
      IndexParams index,
      Map<String, SparseVectorParams> sparseVectors,
      String vectorName) {
    this(
        dimension,
        distance,
        shardNumber,
        replicationFactor,
        index,
        sparseVectors,
        vectorName,
        Map.of());
  }

  public static final int MAX_DIMENSION = 16_000;
  public static final int MAX_SHARDS = 1024;

  /** The {@code dimension} of a collection without a primary dense vector ({@link #hasPrimary}). */
  public static final int NO_PRIMARY = 0;

  /**
   * The field name FlashVec keeps Qdrant's unnamed vector under when it searches it exactly: a
   * multivector ({@code vectors: {size, distance, multivector_config}}) or a vector of a metric no
   * graph indexes ({@link Distance#graphable}, Manhattan). Such a collection has no primary vector
   * and this one dense field, which requests name {@code ""} ({@link #internalName}) and responses
   * show unnamed ({@link #shownName}). No request can give this name.
   */
  public static final String UNNAMED_EXACT = "\u0000";

  /**
   * Separates a field's name from its generation in the storage key of a dense field added after
   * creation ({@link #withDenseVector}); no vector name a request gives may contain it.
   */
  public static final char GENERATION = '\u0001';

  /**
   * The prefix of {@link #vectorName} once the primary vector is deleted ({@link
   * #withoutDenseVector}): the graph and the vectors it holds stay, but no request can name it.
   */
  public static final String RETIRED = "\u0000";

  /** The name responses show for the dense field {@code internal}. */
  public static String shownName(String internal) {
    if (internal.equals(UNNAMED_EXACT)) {
      return "";
    }
    int g = internal.indexOf(GENERATION);
    return g < 0 ? internal : internal.substring(0, g);
  }

  /**
   * Checks a vector name a request declares: not empty and free of the characters FlashVec keeps
   * for its own keys (NUL, {@link #GENERATION}).
   *
   * @throws InvalidInputException naming it otherwise
   */
  public static void checkDeclaredName(String name) {
    if (name.isEmpty()) {
      throw new InvalidInputException("Wrong input: Vector name cannot be empty");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '\u0000' || c == GENERATION) {
        throw new InvalidInputException(
            "Wrong input: vector name must not contain the control character U+000"
                + (int) c
                + " [name="
                + name.replace(c, '?')
                + "]");
      }
    }
  }

  /**
   * Whether the primary vector was deleted: it still holds the graph of the points that have it,
   * but no request reaches it and responses do not show it.
   */
  public boolean primaryRetired() {
    return vectorName.startsWith(RETIRED);
  }

  /**
   * The name a request without one means: the primary vector's ({@code ""} when it is unnamed, or
   * retired: no vector then).
   */
  public String defaultVectorName() {
    return primaryRetired() ? "" : vectorName;
  }

  /** The primary vector's name as requests give it; {@code null} once it is retired. */
  public String shownPrimaryName() {
    return primaryRetired() ? null : vectorName;
  }

  /** The storage key of the dense field other than the primary one named {@code name}, or null. */
  public String denseKey(String name) {
    if (denseVectors.containsKey(name)) {
      return name;
    }
    for (String k : denseVectors.keySet()) {
      if (k.indexOf(GENERATION) > 0 && shownName(k).equals(name)) {
        return k;
      }
    }
    return null;
  }

  /**
   * Whether the collection has a vector field (dense or sparse) that requests call {@code name}.
   */
  public boolean hasVectorNamed(String name) {
    return (!primaryRetired() && hasPrimary() && name.equals(vectorName))
        || sparseVectors.containsKey(name)
        || (!name.isEmpty() && denseKey(name) != null);
  }

  /**
   * This collection with the dense field {@code name} added: stored beside the points under a key
   * of a new generation, searched exactly. Points written so far do not have it.
   *
   * @throws InvalidInputException when the collection has a vector of that name, or its primary
   *     vector is unnamed (Qdrant's unnamed vector has no siblings)
   */
  public CollectionConfig withDenseVector(String name, DenseVectorParams params) {
    checkDeclaredName(name);
    if (sparseVectors.containsKey(name)) {
      throw new InvalidInputException(
          "Wrong input: Vector `" + name + "` already exists as a sparse vector");
    }
    if (hasVectorNamed(name)) {
      throw new InvalidInputException(
          "Wrong input: Vector `" + name + "` already exists with a different configuration");
    }
    if (hasPrimary() && vectorName.isEmpty()) {
      throw new InvalidInputException(
          "Wrong input: the collection's vector is unnamed; named vectors can be added only to a"
              + " collection with named vectors or without dense vectors [name="
              + name
              + "]");
    }
    if (unnamedExact()) {
      throw new InvalidInputException(
          "Wrong input: the collection's vector is unnamed; named vectors can be added only to a"
              + " collection with named vectors or without dense vectors [name="
              + name
              + "]");
    }
    Map<String, DenseVectorParams> next = new LinkedHashMap<>(denseVectors);
    next.put(name + GENERATION + fieldGeneration, params);
    return new CollectionConfig(
        dimension,
        distance,
        shardNumber,
        replicationFactor,
        index,
        sparseVectors,
        vectorName,
        next,
        fieldGeneration + 1);
  }

  /**
   * This collection with the primary vector's graph built with {@code index}'s max degree and
   * construction search list (a collection update of its {@code m} and {@code ef_construct}): the
   * segments built with other ones are rebuilt in the background.
   */
  public CollectionConfig withIndex(IndexParams index) {
    return new CollectionConfig(
        dimension,
        distance,
        shardNumber,
        replicationFactor,
        index,
        sparseVectors,
        vectorName,
        denseVectors,
        fieldGeneration);
  }

  /**
   * This collection with the dense vector {@code name} (other than the primary one) indexed by
   * {@code index}: its storage key and values stay, its sealed segments build its graphs with the
   * new settings (ADR 0040).
   */
  public CollectionConfig withDenseIndex(String name, FieldIndex index) {
    String key = denseKey(name);
    if (key == null) {
      throw notExisting(name);
    }
    DenseVectorParams f = denseVectors.get(key);
    Map<String, DenseVectorParams> next = new LinkedHashMap<>(denseVectors);
    next.put(
        key,
        new DenseVectorParams(
            f.dimension(), f.distance(), f.onDisk(), f.multivector(), index, f.datatype()));
    return new CollectionConfig(
        dimension,
        distance,
        shardNumber,
        replicationFactor,
        index(),
        sparseVectors,
        vectorName,
        next,
        fieldGeneration);
  }

  /**
   * This collection without the dense vector {@code name}. A field beside the points is dropped
   * from the config; its key is never given again, so the values segments and the WAL hold under it
   * are unreachable. The primary vector is retired ({@link #primaryRetired}): its graph stays for
   * the points that have it, and no request reaches it.
   *
   * @throws InvalidInputException with Qdrant's text when there is no such dense vector, and when
   *     it is the collection's last vector or a sparse one (whose values no seal drops yet)
   */
  public CollectionConfig withoutDenseVector(String name) {
    if (sparseVectors.containsKey(name)) {
      throw new InvalidInputException(
          "Wrong input: sparse vector `"
              + name
              + "` cannot be deleted: only dense vectors can be deleted from an existing"
              + " collection");
    }
    String key = name.isEmpty() ? null : denseKey(name);
    boolean primary =
        !name.isEmpty() && hasPrimary() && !primaryRetired() && name.equals(vectorName);
    if (key == null && !primary) {
      throw notExisting(name);
    }
    int left =
        sparseVectors.size() + denseVectors.size() + (hasPrimary() && !primaryRetired() ? 1 : 0);
    if (left <= 1) {
      throw new InvalidInputException(
          "Wrong input: cannot delete vector `"
              + name
              + "`, the collection's only vector; delete the collection instead");
    }
    Map<String, DenseVectorParams> next = new LinkedHashMap<>(denseVectors);
    if (key != null) {
      next.remove(key);
    }
    return new CollectionConfig(
        dimension,
        distance,
        shardNumber,
        replicationFactor,
        index,
        sparseVectors,
        primary ? RETIRED + vectorName : vectorName,
        next,
        // counts every change, so that a collection that ever changed its fields says so
        fieldGeneration + 1);
  }

  /**
   * Whether Qdrant's unnamed vector of this collection is searched exactly ({@link
   * #UNNAMED_EXACT}).
   */
  public boolean unnamedExact() {
    return denseVectors.containsKey(UNNAMED_EXACT);
  }

  /**
   * A collection without a primary dense vector: its sparse fields and its other dense fields (each
   * searched exactly), with the given index settings kept for its description only.
   */
  public static CollectionConfig withoutPrimary(
      int shardNumber,
      int replicationFactor,
      IndexParams index,
      Map<String, SparseVectorParams> sparseVectors,
      Map<String, DenseVectorParams> denseVectors) {
    return new CollectionConfig(
        NO_PRIMARY,
        Distance.DOT,
        shardNumber,
        replicationFactor,
        index,
        sparseVectors,
        "",
        denseVectors,
        0);
  }

  public CollectionConfig {
    boolean others =
        (sparseVectors != null && !sparseVectors.isEmpty())
            || (denseVectors != null && !denseVectors.isEmpty());
    if (dimension == NO_PRIMARY && others) {
      // a collection whose every field is stored beside the points
      if (vectorName != null && !vectorName.isEmpty()) {
        throw new IllegalArgumentException(
            "a collection without a primary vector names none [vector_name=" + vectorName + "]");
      }
    } else if (dimension < 1 || dimension > MAX_DIMENSION) {
      throw new InvalidInputException(
          "vector size out of range [size=" + dimension + ", allowed=1.." + MAX_DIMENSION + "]");
    }
    Objects.requireNonNull(distance, "distance");
    if (dimension != NO_PRIMARY && !distance.graphable()) {
      throw new IllegalArgumentException(
          "the primary vector is indexed by a graph, which " + distance + " vectors are not");
    }
    if (shardNumber < 1 || shardNumber > MAX_SHARDS) {
      throw new InvalidInputException(
          "shard_number out of range [shard_number="
              + shardNumber
              + ", allowed=1.."
              + MAX_SHARDS
              + "]");
    }
    if (replicationFactor < 1 || replicationFactor > 16) {
      throw new InvalidInputException(
          "replication_factor out of range [replication_factor="
              + replicationFactor
              + ", allowed=1..16]");
    }
    if (index == null) {
      index = IndexParams.DEFAULT;
    }
    sparseVectors =
        sparseVectors == null || sparseVectors.isEmpty()
            ? Map.of()
            : Collections.unmodifiableMap(new TreeMap<>(sparseVectors));
    for (String name : sparseVectors.keySet()) {
      if (name.isEmpty()) {
        throw new InvalidInputException("Wrong input: Sparse vector name cannot be empty");
      }
    }
    vectorName = vectorName == null ? "" : vectorName;
    denseVectors =
        denseVectors == null || denseVectors.isEmpty()
            ? Map.of()
            : Collections.unmodifiableMap(new LinkedHashMap<>(denseVectors));
    if (fieldGeneration < 0) {
      throw new IllegalArgumentException("negative field generation " + fieldGeneration);
    }
    if (!denseVectors.isEmpty() && vectorName.isEmpty() && dimension != NO_PRIMARY) {
      throw new InvalidInputException(
          "Wrong input: a collection with several dense vectors names each of them");
    }
    if (denseVectors.containsKey(vectorName)) {
      throw new InvalidInputException(
          "Wrong input: vector names must be unique - duplicate found with '" + vectorName + "'");
    }
    for (String name : denseVectors.keySet()) {
      if (name.isEmpty()) {
        throw new InvalidInputException(
            "Wrong input: a collection with several dense vectors names each of them");
      }
      if (name.equals(UNNAMED_EXACT) && (dimension != NO_PRIMARY || denseVectors.size() != 1)) {
        throw new IllegalArgumentException(
            "an unnamed vector searched exactly is a collection's only dense vector");
      }
    }
    for (String name : sparseVectors.keySet()) {
      if (name.equals(vectorName) || denseVectors.containsKey(name)) {
        throw new InvalidInputException(
            "Wrong input: Dense and sparse vector names must be unique - duplicate found with '"
                + name
                + "'");
      }
    }
  }

  /**
   * Whether the collection has a primary dense vector (the graph's); false when every declared
   * field is stored beside the points.
   */
  public boolean hasPrimary() {
    return dimension != NO_PRIMARY;
  }

  /**
   * Whether a point may lack the primary dense vector: when it is named (Qdrant's named vectors are
   * each optional) or the collection has other vector fields.
   */
  public boolean primaryOptional() {
    return !vectorName.isEmpty() || !sparseVectors.isEmpty() || !denseVectors.isEmpty();
  }

  /** The dense fields other than the primary one whose sealed vectors stay on disk. */
  public java.util.Set<String> denseOnDisk() {
    java.util.Set<String> out = new java.util.HashSet<>();
    denseVectors.forEach(
        (name, f) -> {
          if (f.onDisk()) {
            out.add(name);
          }
        });
    return out;
  }

  /** The multivector fields: name to the size of each of their vectors. */
  public Map<String, Integer> multivectors() {
    Map<String, Integer> out = new java.util.HashMap<>();
    denseVectors.forEach(
        (name, f) -> {
          if (f.multivector()) {
            out.put(name, f.dimension());
          }
        });
    return out;
  }

  /** The dense field {@code name} other than the primary one, or {@code null}. */
  public DenseVectorParams denseField(String name) {
    return denseVectors.get(name);
  }

  /** The dimension of the dense vector {@code internal} ({@code ""}: the primary one). */
  public int dimension(String internal) {
    return internal.isEmpty() ? dimension : denseVectors.get(internal).dimension();
  }

  /** The metric of the dense vector {@code internal} ({@code ""}: the primary one). */
  public Distance distance(String internal) {
    return internal.isEmpty() ? distance : denseVectors.get(internal).distance();
  }

  /** Whether {@code internal} names a dense vector ({@code ""}: the primary one). */
  public boolean isDense(String internal) {
    return internal.isEmpty() || denseVectors.containsKey(internal);
  }

  /**
   * The name a request's vector name stands for inside FlashVec: {@code ""} for the primary dense
   * vector (whatever its name), else the name of another field.
   *
   * @throws InvalidInputException with Qdrant's text when the collection has no such vector
   */
  public String internalName(String name) {
    if (!hasPrimary() && name.isEmpty()) {
      if (unnamedExact()) {
        return UNNAMED_EXACT;
      }
      throw missingDefault();
    }
    if (name.equals(UNNAMED_EXACT) || name.startsWith(RETIRED)) {
      throw notExisting(name);
    }
    if (name.equals(vectorName)) {
      return "";
    }
    if (sparseVectors.containsKey(name)) {
      return name;
    }
    // a dense field by its name or (inside FlashVec) by its storage key
    String key = denseKey(name);
    if (key != null) {
      return key;
    }
    throw notExisting(name);
  }

  /** Qdrant's error for a vector name the collection does not have. */
  public static InvalidInputException notExisting(String name) {
    return new InvalidInputException(
        "Wrong input: Not existing vector name error: " + shownName(name));
  }

  /**
   * Qdrant's error for a request on the unnamed (default) vector of a collection without a primary
   * vector, listing the vectors it has (dense ones first, in declaration order, then sparse ones).
   */
  public InvalidInputException missingDefault() {
    java.util.List<String> names = new java.util.ArrayList<>();
    denseVectors.keySet().forEach(k -> names.add(shownName(k)));
    names.addAll(sparseVectors.keySet());
    return new InvalidInputException(
        "Wrong input: Collection requires specified vector name in the request, available names: "
            + String.join(", ", names));
  }

  /**
   * Checks that {@code name} is a sparse vector field of this collection.
   *
   * @throws InvalidInputException with Qdrant's text naming it otherwise
   */
  public void checkSparseName(String name) {
    if (!sparseVectors.containsKey(name)) {
      throw notExisting(name);
    }
  }

  /**
   * A point's vectors validated for this collection: the dense one prepared for the metric (when
   * given; a point without it only when {@link #primaryOptional}) and the sparse ones checked to be
   * fields of the collection.
   */
  public Point preparePoint(Point p) {
    float[] v = p.vector();
    if (v != null && !hasPrimary()) {
      throw notExisting("");
    }
    if (v == null && !primaryOptional()) {
      checkVector(p.id(), null);
    }
    for (String name : p.sparse().keySet()) {
      checkSparseName(name);
    }
    Map<String, float[]> dense = p.dense();
    if (!dense.isEmpty()) {
      Map<String, float[]> prepared = new java.util.HashMap<>();
      for (Map.Entry<String, float[]> e : dense.entrySet()) {
        DenseVectorParams f = denseVectors.get(e.getKey());
        if (f == null) {
          throw notExisting(e.getKey());
        }
        prepared.put(e.getKey(), prepareVector(p.id(), e.getValue(), f, e.getKey()));
      }
      dense = prepared;
    }
    return new Point(
        p.id(), v == null ? null : prepareVector(p.id(), v), p.payload(), p.sparse(), dense);
  }

  /**
   * Checks a vector against this config: present, {@link #dimension} values, all finite.
   *
   * @param id the point the vector belongs to, for the message ({@code null}: a query)
   * @throws InvalidInputException naming the id, the expected and the actual dimension, or the
   *     first non-finite value
   */
  public void checkVector(PointId id, float[] v) {
    if (!hasPrimary()) {
      throw id == null ? missingDefault() : notExisting("");
    }
    checkVector(id, v, dimension, "");
  }

  private static void checkVector(PointId id, float[] v, int dimension, String name) {
    if (v == null) {
      throw new InvalidInputException("Wrong input: point has no vector [id=" + id + "]");
    }
    if (v.length != dimension) {
      String where =
          (id == null ? "" : "id=" + id)
              + (name.isEmpty() ? "" : (id == null ? "" : ", ") + "vector=" + name);
      throw new InvalidInputException(
          "Wrong input: Vector dimension error: expected dim: "
              + dimension
              + ", got "
              + v.length
              + (where.isEmpty() ? "" : " [" + where + "]"));
    }
    for (int i = 0; i < v.length; i++) {
      if (!Float.isFinite(v[i])) {
        throw new InvalidInputException(
            "Wrong input: vector contains a non-finite value ["
                + (id == null ? "" : "id=" + id + ", ")
                + "index="
                + i
                + ", value="
                + v[i]
                + "]");
      }
    }
  }

  /** {@link #checkVector} and the vector prepared for the metric (cosine: normalised). */
  public float[] prepareVector(PointId id, float[] v) {
    checkVector(id, v);
    return distance.prepare(v);
  }

  /**
   * A query or point vector of the dense field {@code internal} ({@code ""}: the primary one)
   * checked against its dimension and prepared for its metric.
   */
  public float[] prepareVector(PointId id, float[] v, String internal) {
    if (internal.isEmpty()) {
      return prepareVector(id, v);
    }
    DenseVectorParams f = denseVectors.get(internal);
    if (f == null) {
      throw notExisting(internal);
    }
    return prepareVector(id, v, f, internal);
  }

  private static float[] prepareVector(PointId id, float[] v, DenseVectorParams f, String name) {
    if (!f.multivector()) {
      checkVector(id, v, f.dimension(), name);
      // as Qdrant: prepared for the metric, then converted to the datatype (uint8 has no Cosine,
      // so its preparation changes nothing); a query (no id) is not coded with turbo4
      float[] prepared = f.distance().prepare(v);
      return id == null && f.datatype() == VectorDatatype.TURBO4
          ? prepared
          : f.datatype().convert(prepared);
    }
    if (v == null || v.length == 0 || v.length % f.dimension() != 0) {
      // Qdrant's text: a multivector's vectors are checked one by one, so a flat vector of the
      // wrong size is a dimension error
      String shown = shownName(name);
      throw new InvalidInputException(
          "Wrong input: Vector dimension error: expected dim: "
              + f.dimension()
              + ", got "
              + (v == null ? 0 : v.length)
              + (shown.isEmpty() && id == null
                  ? ""
                  : " ["
                      + (shown.isEmpty() ? "" : "vector=" + shown)
                      + (id == null ? "" : (shown.isEmpty() ? "" : ", ") + "id=" + id)
                      + "]"));
    }
    checkVector(id, v, v.length, shownName(name));
    float[] prepared = f.distance().prepareMulti(v, f.dimension());
    return id == null && f.datatype() == VectorDatatype.TURBO4
        ? prepared
        : f.datatype().convertEach(prepared, f.dimension());
  }
}
