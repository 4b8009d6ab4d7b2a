package io.flashvec.api.search;

import io.flashvec.api.web.Json;
import io.flashvec.api.web.Output;
import io.flashvec.api.web.Requests;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.SearchStats;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.FilterEvaluator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Qdrant's grouped queries ({@code points/query/groups}, {@code points/search/groups}): the best
 * {@code limit} groups of points that share a value of the payload key {@code group_by}, each with
 * its best {@code group_size} hits, groups ordered by their best hit.
 *
 * <p>A group's id is a string or an integer value of the key; a point whose value is an array
 * belongs to the group of each string or integer element, and other values (floats, objects, nested
 * arrays, null) put it in no group. The query runs with a growing limit until the groups are full
 * or the results run out. {@code with_lookup} adds to each group the point whose id is the group's
 * id, read from another collection.
 */
final class QueryGroups {

  /** Qdrant's default hits per group. */
  static final int DEFAULT_GROUP_SIZE = 3;

  private final CollectionService service;
  private final UniversalQuery query;
  private final int maxLimit;

  QueryGroups(CollectionService service, UniversalQuery query, int maxLimit) {
    this.service = service;
    this.query = query;
    this.maxLimit = maxLimit;
  }

  /**
   * Answers a grouped request whose query part is {@code node} ({@code node.limit()} is the number
   * of groups); {@code b} holds {@code group_by}, {@code group_size}, the output selectors and
   * {@code with_lookup}.
   */
  ObjectNode run(String collection, JsonNode b, UniversalQuery.Node node, SearchStats stats) {
    JsonNode groupBy = b.get("group_by");
    if (groupBy == null || groupBy.isNull()) {
      throw new InvalidInputException("Wrong input: missing field `group_by`");
    }
    if (!groupBy.isString() || groupBy.asString().isEmpty()) {
      throw Requests.invalid("group_by must be a payload key", "group_by", groupBy);
    }
    FieldPath path = FieldPath.parse(groupBy.asString(), "group_by");
    int groupSize = Requests.nonNegativeInt(b, "group_size", DEFAULT_GROUP_SIZE, maxLimit);
    if (groupSize < 1) {
      throw Requests.invalid("group_size must be 1 or larger", "group_size", b.get("group_size"));
    }
    int groups = node.limit();
    Output.PayloadSelector sel = Output.PayloadSelector.parse(b, "with_payload", false);
    boolean withVector = Output.withVector(b, "with_vector", false);
    java.util.Set<String> vectorNames = Output.vectorNames(b, "with_vector");
    Lookup lookup = Lookup.parse(b.get("with_lookup"));
    if (lookup != null) {
      UniversalQuery.requireLookup(service, lookup.collection());
    }
    UniversalQuery.Fetch fetch = new UniversalQuery.Fetch(true, withVector);

    long fetchLimit = Math.min(maxLimit, (long) groups * groupSize);
    Map<JsonNode, List<Record>> byValue;
    while (true) {
      UniversalQuery.Node n =
          new UniversalQuery.Node(
              node.path(),
              node.prefetch(),
              node.query(),
              node.using(),
              node.filter(),
              node.params(),
              node.threshold(),
              (int) fetchLimit,
              node.lookupFrom(),
              node.idfCorpus());
      List<Record> hits = query.run(collection, n, null, 0, fetch, stats);
      byValue = group(hits, path, groups, groupSize);
      boolean full =
          byValue.size() == groups
              && byValue.values().stream().allMatch(l -> l.size() == groupSize);
      if (full || hits.size() < fetchLimit || fetchLimit >= maxLimit) {
        break;
      }
      fetchLimit = Math.min(maxLimit, fetchLimit * 4);
    }

    Map<PointId, Record> looked =
        lookup == null ? Map.of() : lookup.fetch(service, byValue.keySet());
    ObjectNode out = Json.object();
    ArrayNode arr = out.putArray("groups");
    for (Map.Entry<JsonNode, List<Record>> e : byValue.entrySet()) {
      ObjectNode g = arr.addObject();
      g.set("id", e.getKey());
      g.set(
          "hits",
          Output.scoredList(
              Output.selectVectors(e.getValue(), vectorNames, service.config(collection)),
              sel,
              withVector));
      if (lookup != null) {
        Record r = looked.get(Lookup.idOf(e.getKey()));
        if (r != null) {
          g.set(
              "lookup",
              Output.record(
                  Output.selectVectors(r, null, service.config(lookup.collection())),
                  lookup.payload(),
                  lookup.withVector()));
        }
      }
    }
    return out;
  }

  /** Groups best-first hits: the first {@code groups} values met, up to {@code size} hits each. */
  static Map<JsonNode, List<Record>> group(
      List<Record> hits, FieldPath path, int groups, int size) {
    Map<JsonNode, List<Record>> byValue = new LinkedHashMap<>();
    for (Record r : hits) {
      if (r.payload() == null) {
        continue;
      }
      for (JsonNode v : values(Json.readStored(r.payload()), path)) {
        List<Record> g = byValue.get(v);
        if (g == null) {
          if (byValue.size() >= groups) {
            continue;
          }
          g = new ArrayList<>();
          byValue.put(v, g);
        }
        if (g.size() < size) {
          g.add(r);
        }
      }
    }
    return byValue;
  }

  /**
   * The string and integer values at {@code path} (the filters' path semantics, an array at the end
   * flattened into its elements), without repeats.
   */
  static Set<JsonNode> values(JsonNode payload, FieldPath path) {
    Set<JsonNode> out = new LinkedHashSet<>();
    for (JsonNode v : FilterEvaluator.values(path, payload)) {
      addValue(v, out);
    }
    return out;
  }

  private static void addValue(JsonNode v, Set<JsonNode> out) {
    if (v.isString() || (v.isIntegralNumber() && v.canConvertToLong())) {
      out.add(v.isString() ? v : Json.MAPPER.getNodeFactory().numberNode(v.longValue()));
    }
  }

  /**
   * {@code with_lookup}: a collection name, or {@code {"collection", "with_payload",
   * "with_vectors"}} (payload by default, no vector).
   */
  record Lookup(String collection, Output.PayloadSelector payload, boolean withVector) {

    static Lookup parse(JsonNode n) {
      if (n == null || n.isNull()) {
        return null;
      }
      if (n.isString()) {
        CollectionNames.validate(n.asString());
        return new Lookup(n.asString(), Output.PayloadSelector.ALL, false);
      }
      if (!n.isObject() || !n.path("collection").isString()) {
        throw Requests.invalid(
            "with_lookup must be a collection name or {\"collection\": name}", "with_lookup", n);
      }
      String c = n.get("collection").asString();
      CollectionNames.validate(c);
      return new Lookup(
          c,
          Output.PayloadSelector.parse(n, "with_payload", true),
          Output.withVector(n, "with_vectors", false)
              || Output.withVector(n, "with_vector", false));
    }

    /** The point id a group value names, or {@code null} when it cannot be one. */
    static PointId idOf(JsonNode v) {
      try {
        return Requests.id(v, "group id");
      } catch (InvalidInputException e) {
        return null;
      }
    }

    Map<PointId, Record> fetch(CollectionService service, Set<JsonNode> values) {
      List<PointId> ids = new ArrayList<>();
      for (JsonNode v : values) {
        PointId id = idOf(v);
        if (id != null) {
          ids.add(id);
        }
      }
      Map<PointId, Record> out = new LinkedHashMap<>();
      if (ids.isEmpty()) {
        return out;
      }
      for (Record r : service.retrieve(collection, ids, payload.any(), withVector)) {
        out.put(r.id(), r);
      }
      return out;
    }
  }
}
