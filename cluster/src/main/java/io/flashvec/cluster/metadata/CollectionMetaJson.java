package io.flashvec.cluster.metadata;

import io.flashvec.cluster.metadata.MetadataStore.CollectionMeta;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.CollectionTuning;
import io.flashvec.index.DenseVectorParams;
import io.flashvec.index.Distance;
import io.flashvec.index.FieldIndex;
import io.flashvec.index.IndexParams;
import io.flashvec.index.SparseVectorParams;
import io.flashvec.storage.FsyncPolicy;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A collection's metadata as JSON fields, as the standalone metadata file ({@link
 * LocalMetadataStore}), etcd ({@link EtcdMetadataStore}) and collection snapshots keep it: {@code
 * name}, {@code created_at}, {@code config} (with {@code index}) and {@code tuning} (with, when
 * set, Qdrant's {@code strict_mode_config} and the collection's {@code metadata} as JSON objects).
 * Fields a reader does not find take the defaults older files were written with.
 *
 * <p>{@code config.config_version} is absent (version 1) for every collection with a primary dense
 * vector, whose fields keep the shape older versions read. A collection without a primary vector
 * ({@link CollectionConfig#hasPrimary}) writes version {@value #CONFIG_NO_PRIMARY} and neither
 * {@code size} nor {@code distance}: an older binary then fails on the missing size rather than
 * open the collection as something else, and a reader refuses a version newer than it knows.
 */
public final class CollectionMetaJson {

  private static final tools.jackson.databind.ObjectMapper JSON =
      tools.jackson.databind.json.JsonMapper.builder().build();

  /** The {@code config_version} of a collection without a primary dense vector. */
  static final int CONFIG_NO_PRIMARY = 2;

  private CollectionMetaJson() {}

  /** Writes {@code m}'s fields into {@code c}. */
  public static void write(CollectionMeta m, ObjectNode c) {
    c.put("name", m.name());
    c.put("created_at", m.createdAtMillis());
    ObjectNode cfg = c.putObject("config");
    CollectionConfig k = m.config();
    if (k.hasPrimary()) {
      cfg.put("size", k.dimension());
      cfg.put("distance", k.distance().apiName());
    } else {
      cfg.put("config_version", CONFIG_NO_PRIMARY);
    }
    if (!k.vectorName().isEmpty()) {
      // only then, as sparse_vectors below
      cfg.put("vector_name", k.vectorName());
    }
    if (!k.denseVectors().isEmpty()) {
      // the other dense vectors, in the order they were declared
      ObjectNode dense = cfg.putObject("dense_vectors");
      for (var e : k.denseVectors().entrySet()) {
        ObjectNode f =
            dense
                .putObject(e.getKey())
                .put("size", e.getValue().dimension())
                .put("distance", e.getValue().distance().apiName());
        if (e.getValue().onDisk()) {
          f.put("on_disk", true);
        }
        if (e.getValue().datatype() != io.flashvec.index.VectorDatatype.FLOAT32) {
          // only then: older files read as float32
          f.put("datatype", e.getValue().datatype().apiName());
        }
        if (e.getValue().multivector()) {
          // only then: older files read as one vector per point
          f.putObject("multivector_config").put("comparator", "max_sim");
        }
        FieldIndex index = e.getValue().index();
        if (!index.equals(
            DenseVectorParams.defaultIndex(e.getValue().distance(), e.getValue().multivector()))) {
          // only then: older files read as the default index of the field's kind
          ObjectNode x = f.putObject("index").put("m", index.m());
          x.put("ef_construct", index.efConstruct());
          if (!Float.isNaN(index.quantile())) {
            x.put("quantile", index.quantile());
          }
          document(x, "hnsw_config", index.hnswConfig());
          document(x, "quantization_config", index.quantizationConfig());
          if (index.quantizationInherited()) {
            x.put("quantization_inherited", true);
          }
          if (index.turbo() != null) {
            x.put("turbo", index.turbo().apiName());
          }
        }
      }
    }
    if (k.fieldGeneration() > 0) {
      // only once a field was added after creation (the keys above carry their generation)
      cfg.put("field_generation", k.fieldGeneration());
    }
    cfg.put("shard_number", k.shardNumber());
    cfg.put("replication_factor", k.replicationFactor());
    ObjectNode idx = cfg.putObject("index");
    idx.put("type", k.index().type());
    idx.put("max_degree", k.index().maxDegree());
    idx.put("build_search_list", k.index().buildSearchList());
    idx.put("alpha", k.index().alpha());
    idx.put("pq_subspaces", k.index().pqSubspaces());
    if (!k.sparseVectors().isEmpty()) {
      // only then: a collection of dense vectors only keeps the shape older versions read
      ObjectNode sparse = cfg.putObject("sparse_vectors");
      for (String name : k.sparseVectors().keySet()) {
        sparse.putObject(name);
      }
    }
    ObjectNode t = c.putObject("tuning");
    t.put("indexing_threshold", m.tuning().indexingThreshold());
    if (m.tuning().fsyncPolicy() == null) {
      t.putNull("wal_fsync_policy");
    } else {
      t.put("wal_fsync_policy", m.tuning().fsyncPolicy().configName());
    }
    t.put("on_disk_payload", m.tuning().onDiskPayload());
    if (!m.tuning().sparseIdf().isEmpty()) {
      // only then, so that other collections keep the shape older versions read
      var idf = t.putArray("sparse_idf");
      m.tuning().sparseIdf().forEach(idf::add);
    }
    document(t, "strict_mode_config", m.tuning().strictMode());
    document(t, "metadata", m.tuning().metadata());
    document(t, "quantization_config", m.tuning().quantizationConfig());
    if (m.tuning().walSegmentBytes() > 0) {
      t.put("wal_segment_bytes", m.tuning().walSegmentBytes());
    }
    if (m.tuning().walRetainClosed() > 0) {
      t.put("wal_retain_closed", m.tuning().walRetainClosed());
    }
    if (m.tuning().optimizationJobs() > 0) {
      t.put("max_optimization_threads", m.tuning().optimizationJobs());
    }
    if (m.tuning().segmentNumber() > 0) {
      t.put("default_segment_number", m.tuning().segmentNumber());
    }
    if (!m.tuning().memoryShown().isEmpty()) {
      // only then, as sparse_idf
      var shown = t.putArray("memory_shown");
      m.tuning().memoryShown().forEach(shown::add);
    }
  }

  /** Puts the JSON object {@code json} under {@code field}; nothing when it is {@code null}. */
  private static void document(ObjectNode t, String field, String json) {
    if (json != null) {
      t.set(field, JSON.readTree(json));
    }
  }

  /** The JSON object under {@code field} as compact text, or {@code null} when there is none. */
  private static String document(JsonNode t, String field) {
    JsonNode n = t.get(field);
    return n == null || !n.isObject() ? null : n.toString();
  }

  private static java.util.Map<String, SparseVectorParams> sparseVectors(JsonNode n) {
    if (!n.isObject() || n.isEmpty()) {
      return java.util.Map.of();
    }
    java.util.Map<String, SparseVectorParams> out = new java.util.TreeMap<>();
    for (String name : n.propertyNames()) {
      out.put(name, SparseVectorParams.DEFAULT);
    }
    return out;
  }

  private static java.util.Set<String> sparseIdf(JsonNode n) {
    java.util.Set<String> out = new java.util.TreeSet<>();
    for (JsonNode f : n) {
      out.add(f.asString());
    }
    return out;
  }

  private static java.util.Map<String, DenseVectorParams> denseVectors(JsonNode n) {
    if (!n.isObject() || n.isEmpty()) {
      return java.util.Map.of();
    }
    java.util.Map<String, DenseVectorParams> out = new java.util.LinkedHashMap<>();
    for (var e : n.properties()) {
      Distance distance = Distance.parse(e.getValue().path("distance").asString());
      boolean multivector = multivector(e.getKey(), e.getValue().path("multivector_config"));
      JsonNode x = e.getValue().path("index");
      FieldIndex index =
          x.isObject()
              ? new FieldIndex(
                  x.path("m").asInt(),
                  x.path("ef_construct").asInt(),
                  x.has("quantile") ? (float) x.path("quantile").asDouble() : Float.NaN,
                  document(x, "hnsw_config"),
                  document(x, "quantization_config"),
                  x.path("quantization_inherited").asBoolean(false),
                  x.has("turbo")
                      ? io.flashvec.index.TurboQuant.Bits.parse(x.path("turbo").asString())
                      : null)
              : DenseVectorParams.defaultIndex(distance, multivector);
      out.put(
          e.getKey(),
          new DenseVectorParams(
              e.getValue().path("size").asInt(),
              distance,
              e.getValue().path("on_disk").asBoolean(false),
              multivector,
              index,
              e.getValue().has("datatype")
                  ? io.flashvec.index.VectorDatatype.parse(e.getValue().path("datatype").asString())
                  : io.flashvec.index.VectorDatatype.FLOAT32));
    }
    return out;
  }

  /** Whether a dense field's {@code multivector_config} makes it a MaxSim multivector field. */
  private static boolean multivector(String field, JsonNode n) {
    if (n.isMissingNode() || n.isNull()) {
      return false;
    }
    String comparator = n.path("comparator").asString("");
    if (!comparator.equals("max_sim")) {
      throw new IllegalStateException(
          "unknown multivector comparator in collection metadata [field="
              + field
              + ", comparator="
              + comparator
              + "]");
    }
    return true;
  }

  /** Reads the metadata {@link #write} wrote into {@code c}. */
  public static CollectionMeta read(JsonNode c) {
    JsonNode cfg = c.path("config");
    JsonNode idx = cfg.path("index");
    int version = cfg.path("config_version").asInt(1);
    if (version < 1 || version > CONFIG_NO_PRIMARY) {
      throw new IllegalStateException(
          "unsupported collection config version [collection="
              + c.path("name").asString()
              + ", config_version="
              + version
              + ", supported=1.."
              + CONFIG_NO_PRIMARY
              + "]");
    }
    boolean primary = version == 1;
    CollectionConfig config =
        new CollectionConfig(
            primary ? cfg.path("size").asInt() : CollectionConfig.NO_PRIMARY,
            primary ? Distance.parse(cfg.path("distance").asString()) : Distance.DOT,
            cfg.path("shard_number").asInt(1),
            cfg.path("replication_factor").asInt(1),
            new IndexParams(
                idx.path("type").asString(IndexParams.DISKANN),
                idx.path("max_degree").asInt(64),
                idx.path("build_search_list").asInt(100),
                (float) idx.path("alpha").asDouble(1.2),
                idx.path("pq_subspaces").asInt(0)),
            sparseVectors(cfg.path("sparse_vectors")),
            cfg.path("vector_name").asString(""),
            denseVectors(cfg.path("dense_vectors")),
            cfg.path("field_generation").asLong(0));
    JsonNode t = c.path("tuning");
    String fsync = t.path("wal_fsync_policy").asString(null);
    CollectionTuning tuning =
        new CollectionTuning(
            t.path("indexing_threshold").asInt(-1),
            fsync == null || fsync.isEmpty() ? null : FsyncPolicy.parse(fsync),
            t.path("on_disk_payload").asBoolean(true),
            document(t, "strict_mode_config"),
            document(t, "metadata"),
            sparseIdf(t.path("sparse_idf")),
            t.path("wal_segment_bytes").asLong(0),
            sparseIdf(t.path("memory_shown")),
            t.path("default_segment_number").asInt(0),
            document(t, "quantization_config"),
            t.path("wal_retain_closed").asInt(0),
            t.path("max_optimization_threads").asInt(0));
    return new CollectionMeta(
        c.path("name").asString(), config, c.path("created_at").asLong(), tuning);
  }
}
