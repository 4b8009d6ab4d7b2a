package io.flashvec.cluster.metadata;

import io.flashvec.index.payload.PayloadSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** The values of {@link EtcdMetadataStore}'s keys: a collection with its placement, and a node. */
final class EtcdJson {

  private static final ObjectMapper JSON = JsonMapper.builder().build();

  private EtcdJson() {}

  static String encodeCollection(Placement p) {
    ObjectNode c = JSON.createObjectNode();
    CollectionMetaJson.write(p.meta(), c);
    if (!p.payloadSchema().isEmpty()) {
      c.set("payload_schema", p.payloadSchema().toJson());
    }
    ArrayNode pl = c.putArray("placement");
    for (List<String> replicas : p.replicas()) {
      ArrayNode a = pl.addArray();
      replicas.forEach(a::add);
    }
    return JSON.writeValueAsString(c);
  }

  static Placement decodeCollection(byte[] json) {
    JsonNode c = JSON.readTree(json);
    List<List<String>> placement = new ArrayList<>();
    for (JsonNode shard : c.path("placement")) {
      placement.add(strings(shard));
    }
    return new Placement(
        CollectionMetaJson.read(c),
        placement,
        c.has("payload_schema")
            ? PayloadSchema.fromJson(c.get("payload_schema"))
            : PayloadSchema.EMPTY,
        0);
  }

  /** Aliases as {@code {"alias": "collection", ...}}. */
  static String encodeAliases(Map<String, String> aliases) {
    ObjectNode o = JSON.createObjectNode();
    new TreeMap<>(aliases).forEach(o::put);
    return JSON.writeValueAsString(o);
  }

  static Map<String, String> decodeAliases(byte[] json) {
    Map<String, String> out = new TreeMap<>();
    for (var e : JSON.readTree(json).properties()) {
      out.put(e.getKey(), e.getValue().asString());
    }
    return Map.copyOf(out);
  }

  static String encodeNode(Node n) {
    ObjectNode o = JSON.createObjectNode();
    o.put("id", n.id());
    o.put("grpc", n.grpcAddress());
    o.put("http", n.httpAddress());
    ArrayNode r = o.putArray("roles");
    n.roles().forEach(r::add);
    return JSON.writeValueAsString(o);
  }

  static Node decodeNode(byte[] json) {
    JsonNode o = JSON.readTree(json);
    return new Node(
        o.path("id").asString(),
        o.path("grpc").asString(),
        o.path("http").asString(),
        strings(o.path("roles")));
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    for (JsonNode n : array) {
      out.add(n.asString());
    }
    return List.copyOf(out);
  }
}
