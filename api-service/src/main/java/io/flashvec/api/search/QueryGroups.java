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
import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.Filter;
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

    Map<JsonNode, List<Record>> byValue =
        collect(collection, node, path, groups, groupSize, fetch, stats);

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

  /** Requests spent finding groups, then filling the best ones that are not full: Qdrant's. */
  static final int COLLECT_REQUESTS = 5;

  static final int FILL_REQUESTS = 5;

  /**
   * The best {@code groups} groups of {@code node}'s results by {@code path}, up to {@code size}
   * hits each, as Qdrant's group-by driver finds them: each request asks for {@code groups · size}
   * points that have a value at {@code path} and were not found before, its prefetches (at every
   * depth) for {@code size} times their limits; first up to {@link #COLLECT_REQUESTS} leaving out
   * the groups already full, then up to {@link #FILL_REQUESTS} only for the best groups that are
   * not.
   */
  private Map<JsonNode, List<Record>> collect(
      String collection,
      UniversalQuery.Node node,
      FieldPath path,
      int groups,
      int size,
      UniversalQuery.Fetch fetch,
      SearchStats stats) {
    Groups found = new Groups(path, groups, size, query.higherIsBetter(collection, node));
    UniversalQuery.Node shaped = scaled(node, size, (int) Math.min(maxLimit, (long) groups * size));
    boolean filling = false;
    int left = COLLECT_REQUESTS;
    while (true) {
      if (left == 0) {
        if (filling) {
          break;
        }
        filling = true;
        left = FILL_REQUESTS;
      }
      left--;
      List<Condition> must = new ArrayList<>();
      List<Condition> mustNot = new ArrayList<>();
      mustNot.add(new Condition.IsEmpty(path));
      if (!found.seen.isEmpty()) {
        mustNot.add(new Condition.HasId(found.seen));
      }
      Set<Object> keys = filling ? found.openBest() : found.full();
      if (!keys.isEmpty()) {
        must.add(
            filling ? new Condition.MatchAny(path, keys) : new Condition.MatchExcept(path, keys));
      }
      List<Record> hits =
          query.run(
              collection, shaped, new Filter(must, List.of(), mustNot, null), 0, fetch, stats);
      found.add(hits);
      if (found.filledBest() >= groups || (filling && hits.isEmpty())) {
        break;
      }
      if (hits.isEmpty()) {
        left = 0; // nothing more to find: fill the best groups
      }
    }
    return found.distill();
  }

  /**
   * Hits gathered into groups by the values at {@code path}, over several requests, as Qdrant's
   * groups aggregator: a hit joins the group of each of its values (a point seen before is not
   * added again); groups rank by their best hit and hits by score, in the query's order ({@code
   * higherIsBetter}; {@code null}: as found); ties stay as found.
   */
  static final class Groups {
    private final FieldPath path;
    private final int groups;
    private final int size;
    private final java.util.Comparator<Record> better;
    private final Map<JsonNode, List<Record>> all = new LinkedHashMap<>();
    final Set<PointId> seen = new java.util.HashSet<>();

    Groups(FieldPath path, int groups, int size, Boolean higherIsBetter) {
      this.path = path;
      this.groups = groups;
      this.size = size;
      this.better =
          higherIsBetter == null
              ? (a, b) -> 0
              : higherIsBetter
                  ? (a, b) -> Float.compare(b.score(), a.score())
                  : (a, b) -> Float.compare(a.score(), b.score());
    }

    void add(List<Record> hits) {
      for (Record r : hits) {
        if (r.payload() == null || !seen.add(r.id())) {
          continue;
        }
        for (JsonNode v : values(Json.readStored(r.payload()), path)) {
          all.computeIfAbsent(v, k -> new ArrayList<>()).add(r);
        }
      }
    }

    /** The keys of the best {@code groups} groups, by their best hit. */
    List<JsonNode> best() {
      List<Map.Entry<JsonNode, Record>> tops = new ArrayList<>();
      for (Map.Entry<JsonNode, List<Record>> e : all.entrySet()) {
        Record top = null;
        for (Record r : e.getValue()) {
          if (top == null || better.compare(r, top) < 0) {
            top = r;
          }
        }
        tops.add(Map.entry(e.getKey(), top));
      }
      tops.sort((a, b) -> better.compare(a.getValue(), b.getValue()));
      List<JsonNode> out = new ArrayList<>();
      for (int i = 0; i < Math.min(groups, tops.size()); i++) {
        out.add(tops.get(i).getKey());
      }
      return out;
    }

    /** The values of the groups that are full, as a filter matches them. */
    Set<Object> full() {
      Set<Object> out = new LinkedHashSet<>();
      all.forEach(
          (k, hits) -> {
            if (hits.size() >= size) {
              out.add(matchable(k));
            }
          });
      return out;
    }

    /** The values of the best groups that are not full yet. */
    Set<Object> openBest() {
      Set<Object> out = new LinkedHashSet<>();
      for (JsonNode k : best()) {
        if (all.get(k).size() < size) {
          out.add(matchable(k));
        }
      }
      return out;
    }

    /** How many of the best groups are full. */
    int filledBest() {
      int n = 0;
      for (JsonNode k : best()) {
        n += all.get(k).size() >= size ? 1 : 0;
      }
      return n;
    }

    /** The best groups, best first, each with its best {@code size} hits. */
    Map<JsonNode, List<Record>> distill() {
      Map<JsonNode, List<Record>> out = new LinkedHashMap<>();
      for (JsonNode k : best()) {
        List<Record> hits = new ArrayList<>(all.get(k));
        hits.sort(better); // stable: ties stay as found
        out.put(k, hits.size() > size ? List.copyOf(hits.subList(0, size)) : hits);
      }
      return out;
    }

    /** A group key as a filter matches it: a string or a long. */
    private static Object matchable(JsonNode key) {
      return key.isString() ? key.asString() : (Object) key.longValue();
    }
  }

  /**
   * {@code node} asking for {@code limit} results, its prefetches at any depth for {@code times}
   * their limits.
   */
  private UniversalQuery.Node scaled(UniversalQuery.Node node, int times, int limit) {
    List<UniversalQuery.Node> prefetch = new ArrayList<>();
    for (UniversalQuery.Node p : node.prefetch()) {
      prefetch.add(scaled(p, times, (int) Math.min(maxLimit, (long) p.limit() * times)));
    }
    return new UniversalQuery.Node(
        node.path(),
        prefetch,
        node.query(),
        node.using(),
        node.filter(),
        node.params(),
        node.threshold(),
        limit,
        node.lookupFrom(),
        node.idfCorpus());
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
