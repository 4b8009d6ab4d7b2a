package io.flashvec.api.collections;

import io.flashvec.api.collections.StrictMode.Field;
import io.flashvec.api.web.Json;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.IndexParams;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.payload.PayloadFieldSchema;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/**
 * Enforces a collection's {@link StrictMode} on the requests to it, with Qdrant's messages: a limit
 * broken is a 400 {@code Bad request: <what>. Help: <how to fix it>}, a rate limit a 429 ({@link
 * RateLimiter}). The controllers hand each request body to {@link #check} with its {@link Route}
 * before they run it; the checks read the body as Qdrant's request JSON, so they are the same
 * whichever controller parses the request.
 *
 * <p>The rate limiters belong to this process, one read and one write bucket per collection, and
 * start full whenever the collection's strict mode is set (as Qdrant's do on every update): in a
 * cluster each proxy node limits the requests it serves, and a node other than the one that took
 * the update starts its limiters afresh only when the update changed the configuration.
 */
@Component
public class StrictModeGuard {

  /** The requests strict mode knows, by what their bodies hold. */
  public enum Route {
    SEARCH,
    SEARCH_BATCH,
    SEARCH_GROUPS,
    QUERY,
    QUERY_BATCH,
    QUERY_GROUPS,
    MATRIX,
    SCROLL,
    COUNT,
    FACET,
    /** {@code POST /points}: a body with {@code ids}. */
    RETRIEVE,
    /** {@code GET /points/{id}}: no body. */
    GET_POINT,
    UPSERT,
    UPDATE_VECTORS,
    DELETE_POINTS,
    DELETE_VECTORS,
    SET_PAYLOAD,
    DELETE_PAYLOAD,
    CLEAR_PAYLOAD,
    BATCH,
    CREATE_INDEX
  }

  private final CollectionService service;
  private final ConcurrentHashMap<String, State> states = new ConcurrentHashMap<>();

  /** The strict mode in force for a collection and its limiters; {@code json} is its source. */
  private record State(String json, StrictMode mode, RateLimiter read, RateLimiter write) {}

  /** A collection's strict mode with what the checks need of the collection. */
  private record Scope(
      String collection, CollectionService.Settings settings, StrictMode mode, State state) {}

  public StrictModeGuard(CollectionService service) {
    this.service = service;
  }

  /**
   * Forgets a collection's limiters: its strict mode was set (even to what it was: its limiters
   * start full, as Qdrant's do on every update), or it was created or deleted.
   */
  void forget(String collection) {
    states.remove(collection);
    String target = service.aliases().get(collection);
    if (target != null) {
      states.remove(target);
    }
  }

  /**
   * Checks {@code body} of a {@code route} request to {@code collection} against its strict mode,
   * if enabled, and takes the request's cost from the rate limiters. A missing collection is left
   * to the request itself to report.
   */
  public void check(String collection, Route route, JsonNode body) {
    Scope s = scope(collection);
    if (s == null) {
      return;
    }
    JsonNode b = body == null ? tools.jackson.databind.node.MissingNode.getInstance() : body;
    switch (route) {
      case SEARCH -> read(s, search(s, b, false));
      case SEARCH_BATCH -> read(s, batch(s, b, false));
      case SEARCH_GROUPS -> read(s, search(s, b, true));
      case QUERY -> read(s, query(s, b, Grouping.NONE));
      case QUERY_BATCH -> read(s, batch(s, b, true));
      case QUERY_GROUPS -> read(s, query(s, b, Grouping.GROUPS));
      case MATRIX -> {
        // as Qdrant: the product of those given
        long sample = count(b.path("sample"), -1);
        long limit = count(b.path("limit"), -1);
        if (sample >= 0 || limit >= 0) {
          long product = sample >= 0 && limit >= 0 ? sample * limit : Math.max(sample, limit);
          limit(s, Field.MAX_QUERY_LIMIT, product, "limit");
        }
        filter(s, b.get("filter"), false);
        read(s, (sample >= 0 ? sample : 10) + conditions(b.get("filter")));
      }
      case SCROLL -> {
        if (b.has("limit")) { // as Qdrant: the default limit is not checked
          limit(s, Field.MAX_QUERY_LIMIT, count(b.path("limit"), 10), "limit");
        }
        filter(s, b.get("filter"), false);
        read(s, 1 + conditions(b.get("filter")));
      }
      case COUNT -> {
        filter(s, b.get("filter"), false);
        exact(s, flag(b.path("exact"), true));
        read(s, 1 + conditions(b.get("filter")));
      }
      case FACET -> {
        if (b.has("limit")) {
          limit(s, Field.MAX_QUERY_LIMIT, count(b.path("limit"), 10), "limit");
        }
        filter(s, b.get("filter"), false);
        exact(s, flag(b.path("exact"), false));
        read(s, 1 + conditions(b.get("filter")));
      }
      case RETRIEVE -> read(s, b.path("ids").size());
      case GET_POINT -> read(s, 1);
      case BATCH -> {
        long cost = 0;
        for (JsonNode op : b.path("operations")) {
          for (Map.Entry<String, JsonNode> e : op.properties()) {
            Route r = batchRoute(e.getKey());
            if (r != null) {
              cost += write(s, r, e.getValue());
            }
          }
        }
        takeWrite(s, cost);
      }
      case CREATE_INDEX -> payloadIndexCount(s, text(b.path("field_name"), ""));
      default -> takeWrite(s, write(s, route, b));
    }
  }

  /**
   * Checks {@code ?timeout} (seconds) of a request to {@code collection} against {@code
   * max_timeout}.
   */
  public void checkTimeout(String collection, long seconds) {
    Scope s = scope(collection);
    if (s != null) {
      limit(s, Field.MAX_TIMEOUT, seconds, "timeout");
    }
  }

  private Scope scope(String collection) {
    CollectionService.Settings settings;
    try {
      settings = service.settings(collection);
    } catch (NotFoundException e) {
      return null;
    }
    String json = settings.tuning().strictMode();
    if (json == null) {
      return null;
    }
    String key = service.aliases().getOrDefault(collection, collection);
    // a changed setting, here or on another node of a cluster: its limiters start full
    State st = states.get(key);
    if (st == null || !st.json().equals(json)) {
      st =
          states.compute(
              key, (k, old) -> old != null && old.json().equals(json) ? old : state(json));
    }
    return st.mode().enabled() ? new Scope(key, settings, st.mode(), st) : null;
  }

  private static State state(String json) {
    StrictMode mode = StrictMode.fromJson(json);
    boolean on = mode.enabled();
    long r = mode.limit(Field.READ_RATE_LIMIT);
    long w = mode.limit(Field.WRITE_RATE_LIMIT);
    return new State(
        json,
        mode,
        on && r > 0 ? new RateLimiter("Read", r, System::nanoTime) : null,
        on && w > 0 ? new RateLimiter("Write", w, System::nanoTime) : null);
  }

  // ------------------------------------------------------------------------------------ reads

  private enum Grouping {
    NONE,
    GROUPS,
    PREFETCH
  }

  /** The checks of a search or grouped search; returns its read cost. */
  private long search(Scope s, JsonNode b, boolean groups) {
    long limit = count(b.path("limit"), 10);
    if (groups) {
      groupBy(s, text(b.path("group_by"), ""));
      limit *= count(b.path("group_size"), 3);
    }
    limit(s, Field.MAX_QUERY_LIMIT, limit, "limit");
    filter(s, b.get("filter"), false);
    params(s, b.get("params"));
    return vectorCost(b.get("vector")) + conditions(b.get("filter"));
  }

  private long batch(Scope s, JsonNode b, boolean query) {
    JsonNode searches = b.path("searches");
    limit(s, Field.SEARCH_MAX_BATCHSIZE, searches.size(), "search batch size");
    long cost = 0;
    for (JsonNode q : searches) {
      cost += query ? query(s, q, Grouping.NONE) : search(s, q, false);
    }
    return cost;
  }

  /** The checks of a universal query or one of its prefetches; returns its read cost. */
  private long query(Scope s, JsonNode b, Grouping grouping) {
    JsonNode prefetch = b.get("prefetch");
    List<JsonNode> prefetches = new ArrayList<>();
    if (prefetch != null && prefetch.isArray()) {
      prefetch.forEach(prefetches::add);
    } else if (prefetch != null && prefetch.isObject()) {
      prefetches.add(prefetch);
    }
    long cost = 0;
    for (JsonNode p : prefetches) {
      cost += query(s, p, Grouping.PREFETCH);
    }
    JsonNode q = b.get("query");
    String kind = queryKind(q);
    if (kind.equals("formula")
        && Boolean.FALSE.equals(s.mode().flag(Field.UNINDEXED_FILTERING_RETRIEVE))) {
      Unindexed u = new Unindexed(s.settings().payloadSchema().fields());
      u.expression(q.get("formula"));
      if (u.key != null) {
        throw strict(
            "Index required but not found for \""
                + u.key
                + "\" of one of the following types: ["
                + String.join(", ", u.types)
                + "]",
            "Create an index for this key or use a different formula expression.");
      }
    }
    boolean vectorQuery = isVectorQuery(kind);
    if (prefetches.isEmpty() && vectorQuery) {
      fullScan(s, text(b.path("using"), ""));
    }
    if (grouping == Grouping.GROUPS) {
      groupBy(s, text(b.path("group_by"), ""));
    }
    long limit = count(b.path("limit"), 10);
    if (grouping == Grouping.GROUPS) {
      limit *= count(b.path("group_size"), 3);
    }
    limit(s, Field.MAX_QUERY_LIMIT, limit, "limit");
    filter(s, b.get("filter"), false);
    params(s, b.get("params"));
    if (!prefetches.isEmpty()) {
      return cost;
    }
    if (!vectorQuery) {
      return 1 + conditions(b.get("filter")); // a scroll
    }
    long ids = ids(q);
    return vectorCost(q) + conditions(b.get("filter")) + (ids > 0 ? ids + 1 : 0);
  }

  private static String queryKind(JsonNode q) {
    if (q == null || q.isNull() || q.isMissingNode()) {
      return "none";
    }
    if (q.isObject() && !q.has("indices")) {
      for (String k :
          List.of(
              "nearest",
              "recommend",
              "discover",
              "context",
              "relevance_feedback",
              "order_by",
              "fusion",
              "rrf",
              "formula",
              "sample")) {
        if (q.has(k)) {
          return k;
        }
      }
      return "other";
    }
    return "nearest";
  }

  private static boolean isVectorQuery(String kind) {
    return switch (kind) {
      case "nearest", "recommend", "discover", "context", "relevance_feedback" -> true;
      default -> false;
    };
  }

  /** Point ids a query names as examples (their vectors are looked up first). */
  private static long ids(JsonNode q) {
    if (q == null) {
      return 0;
    }
    if (q.isIntegralNumber() || q.isString()) {
      return 1;
    }
    long n = 0;
    if (q.isObject() && !q.has("indices")) {
      for (JsonNode v : q) {
        n += ids(v);
      }
    } else if (q.isArray() && !q.isEmpty() && !q.get(0).isNumber() && !q.get(0).isArray()) {
      for (JsonNode v : q) {
        n += ids(v);
      }
    }
    return n;
  }

  /**
   * How many vectors a query compares with each point, Qdrant's search cost: one for a vector or
   * id, one per vector of a multivector, the examples of a recommendation by best score or sum of
   * scores, the target and context pairs of a discovery.
   */
  private static long vectorCost(JsonNode q) {
    if (q == null || q.isNull() || q.isMissingNode()) {
      return 1;
    }
    if (q.isArray()) {
      return !q.isEmpty() && q.get(0).isArray() ? q.size() : 1;
    }
    if (!q.isObject() || q.has("indices")) {
      return 1;
    }
    if (q.has("nearest")) {
      return vectorCost(q.get("nearest"));
    }
    if (q.has("recommend")) {
      JsonNode r = q.get("recommend");
      String strategy = text(r.path("strategy"), "average_vector");
      if (strategy.equals("average_vector")) {
        return 1; // one averaged vector
      }
      return r.path("positive").size() + r.path("negative").size();
    }
    if (q.has("discover")) {
      JsonNode d = q.get("discover");
      return 1 + 2L * d.path("context").size();
    }
    if (q.has("context")) {
      JsonNode c = q.get("context");
      return c.isArray() ? 2L * c.size() : 2;
    }
    if (q.has("relevance_feedback")) {
      return 1 + q.path("relevance_feedback").path("feedback").size();
    }
    return 1;
  }

  /** Qdrant's check of a query that would scan: FlashVec's {@code flat} index (hnsw m = 0). */
  private static void fullScan(Scope s, String using) {
    if (!Boolean.FALSE.equals(s.mode().flag(Field.SEARCH_ALLOW_EXACT))) {
      return;
    }
    if (s.settings().config().sparseVectors().containsKey(using)) {
      return; // sparse vectors are never searched by a forbidden full scan of a graph
    }
    var config = s.settings().config();
    var field =
        using.isEmpty() && config.hasPrimary()
            ? null
            : config.denseField(using.isEmpty() ? CollectionConfig.UNNAMED_EXACT : using);
    if (field != null) {
      // a vector other than the primary one: indexed by its own graphs unless it has none (m 0);
      // a multivector's MaxSim has no graph either, but Qdrant indexes multivectors, so its
      // clients expect them searchable here unless its hnsw_config says m 0
      if (field.index().graph() || field.multivector() && !noIndexGiven(field.index())) {
        return;
      }
    } else if (!config.index().type().equals(IndexParams.FLAT)) {
      return;
    }
    // FlashVec has no tenant indexes, so no filter makes the scan one of a tenant's points
    throw strict(
        "Request is forbidden"
            + (using.isEmpty() ? "" : " on '" + using + "'")
            + " because global vector indexing is disabled (hnsw_config.m = 0)",
        "Use tenant-specific filter, enable global vector indexing or enable strict mode"
            + " `search_allow_exact` option");
  }

  /** Whether a vector's own {@code hnsw_config} (as given) says {@code m: 0}. */
  private static boolean noIndexGiven(io.flashvec.index.FieldIndex index) {
    String hnsw = index.hnswConfig();
    if (hnsw == null) {
      return false;
    }
    JsonNode m =
        io.flashvec.api.web.Json.parse(hnsw.getBytes(java.nio.charset.StandardCharsets.UTF_8))
            .get("m");
    return m != null && m.isIntegralNumber() && m.intValue() == 0;
  }

  private static void groupBy(Scope s, String key) {
    if (!Boolean.FALSE.equals(s.mode().flag(Field.UNINDEXED_FILTERING_RETRIEVE))) {
      return;
    }
    PayloadFieldSchema f = s.settings().payloadSchema().fields().get(key);
    if (f == null) {
      throw strict(
          "Index required but not found for \"" + key + "\"",
          "Create an index supporting `match` for this key.");
    }
    switch (f.type()) {
      case KEYWORD, INTEGER, UUID, BOOL -> {}
      default ->
          throw strict(
              "Index of type \"" + kindName(f.type()) + "\" found for \"" + key + "\"",
              "Create an index supporting `match` for this key.");
    }
  }

  private static String kindName(PayloadFieldSchema.Type t) {
    String n = t.apiName();
    return Character.toUpperCase(n.charAt(0)) + n.substring(1);
  }

  /** {@code params}: {@code hnsw_ef}, {@code exact} and {@code quantization.oversampling}. */
  private static void params(Scope s, JsonNode p) {
    if (p == null || !p.isObject()) {
      return;
    }
    JsonNode over = p.path("quantization").get("oversampling");
    double max = s.mode().maxOversampling();
    if (over != null && over.isNumber() && !Double.isNaN(max) && over.doubleValue() > max) {
      throw limitExceeded(number(over.doubleValue()), number(max), "oversampling");
    }
    JsonNode ef = p.get("hnsw_ef");
    if (ef != null && ef.isIntegralNumber()) {
      limit(s, Field.SEARCH_MAX_HNSW_EF, ef.longValue(), "hnsw_ef");
    }
    exact(s, flag(p.path("exact"), false));
  }

  private static void exact(Scope s, boolean exact) {
    if (exact && Boolean.FALSE.equals(s.mode().flag(Field.SEARCH_ALLOW_EXACT))) {
      throw strict("Exact search disabled!", "Set exact=false.");
    }
  }

  private static void read(Scope s, long cost) {
    if (s.state().read() != null) {
      s.state().read().consume(cost);
    }
  }

  // ----------------------------------------------------------------------------------- writes

  private static Route batchRoute(String operation) {
    return switch (operation) {
      case "upsert" -> Route.UPSERT;
      case "delete" -> Route.DELETE_POINTS;
      case "set_payload", "overwrite_payload" -> Route.SET_PAYLOAD;
      case "delete_payload" -> Route.DELETE_PAYLOAD;
      case "clear_payload" -> Route.CLEAR_PAYLOAD;
      case "update_vectors" -> Route.UPDATE_VECTORS;
      case "delete_vectors" -> Route.DELETE_VECTORS;
      default -> null;
    };
  }

  /** The checks of one write; returns its write cost (the points it writes, at least 1). */
  private long write(Scope s, Route route, JsonNode b) {
    switch (route) {
      case UPSERT, UPDATE_VECTORS -> {
        boolean upsert = route == Route.UPSERT;
        long n = b.has("batch") ? b.path("batch").path("ids").size() : b.path("points").size();
        limit(s, Field.UPSERT_MAX_BATCHSIZE, n, upsert ? "upsert limit" : "update limit");
        storage(s);
        sparseLengths(s, b);
        multivectorSizes(s, b);
        return Math.max(1, n);
      }
      case SET_PAYLOAD -> {
        JsonNode f = b.get("filter");
        filter(s, f, true);
        payloadSize(s);
        return selected(s, b.get("points"), f);
      }
      default -> {
        // deletes of points, vectors and payloads: by ids or by a filter
        JsonNode f = b.get("filter");
        filter(s, f, true);
        return selected(s, b.get("points"), f);
      }
    }
  }

  /**
   * The points a write selects, by ids or by a filter, when the write is limited: a filter whose
   * conditions all have payload indexes is counted exactly; one with a condition on a key without
   * an index is charged as Qdrant estimates it ({@link WriteCost}), its indexed conditions counted
   * exactly and each other one half the collection's points.
   */
  private long selected(Scope s, JsonNode points, JsonNode filter) {
    if (points != null && points.isArray()) {
      return Math.max(1, points.size());
    }
    if (filter == null || !filter.isObject() || s.state().write() == null) {
      return 1;
    }
    Map<String, PayloadFieldSchema> indexes = s.settings().payloadSchema().fields();
    // parsed whole first: a malformed filter is the parser's 400 before any token is taken
    var parsed = FilterParser.parse(filter, "filter");
    if (indexed(indexes, filter)) {
      return Math.max(1, service.count(s.collection(), parsed));
    }
    long total = service.count(s.collection());
    return Math.max(
        1,
        WriteCost.estimate(
            filter,
            total,
            c -> {
              JsonNode alone = Json.object().set("must", Json.array().add(c));
              return indexed(indexes, alone)
                  ? service.count(s.collection(), FilterParser.parse(alone, "filter"))
                  : -1;
            }));
  }

  /** Whether every key of {@code filter} has a payload index that serves its condition. */
  private static boolean indexed(Map<String, PayloadFieldSchema> indexes, JsonNode filter) {
    Unindexed u = new Unindexed(indexes);
    u.filter("", filter);
    return u.key == null;
  }

  private static void takeWrite(Scope s, long cost) {
    if (s.state().write() != null && cost > 0) {
      s.state().write().consume(cost);
    }
  }

  /**
   * {@code max_points_count}, {@code max_collection_vector_size_bytes} and {@code
   * max_collection_payload_size_bytes}, before an insert: Qdrant refuses the insert once the
   * collection has reached the limit.
   */
  private void storage(Scope s) {
    payloadSize(s);
    long maxPoints = s.mode().limit(Field.MAX_POINTS_COUNT);
    long maxVectors = s.mode().limit(Field.MAX_COLLECTION_VECTOR_SIZE_BYTES);
    if (maxPoints < 0 && maxVectors < 0) {
      return;
    }
    long points = service.count(s.collection());
    if (maxPoints >= 0 && points >= maxPoints) {
      throw new InvalidInputException(
          "Bad request: Max points count limit of " + maxPoints + " reached!");
    }
    // full vectors are float32, one per point (sparse vectors are held apart and not counted)
    long bytes = points * s.settings().config().dimension() * Float.BYTES;
    if (maxVectors >= 0 && bytes >= maxVectors) {
      throw new InvalidInputException(
          "Bad request: Max vector storage size limit of " + megabytes(maxVectors) + "MB reached!");
    }
  }

  private void payloadSize(Scope s) {
    long max = s.mode().limit(Field.MAX_COLLECTION_PAYLOAD_SIZE_BYTES);
    if (max >= 0 && service.payloadBytes(s.collection()) >= max) {
      throw new InvalidInputException(
          "Bad request: Max payload storage size limit of " + megabytes(max) + "MB reached!");
    }
  }

  /** {@code sparse_config.<name>.max_length} of the sparse vectors an insert writes. */
  private static void sparseLengths(Scope s, JsonNode b) {
    Map<String, Long> limits = s.mode().sparseMaxLength();
    if (limits != null && !limits.isEmpty()) {
      forEachVector(b, (name, v) -> sparseLength(limits, name, v));
    }
  }

  /** {@code multivector_config.<name>.max_vectors} of the multivectors a write gives. */
  private static void multivectorSizes(Scope s, JsonNode b) {
    Map<String, Long> limits = s.mode().multivectorMaxVectors();
    if (limits != null && !limits.isEmpty()) {
      forEachVector(b, (name, v) -> multivectorSize(limits, name, v));
    }
  }

  /**
   * Each vector a write body gives, by name ({@code ""}: the unnamed one): in {@code points} (a
   * point's {@code vector}, bare or by name) or a {@code batch} (its {@code vectors}, a list or
   * lists by name).
   */
  private static void forEachVector(
      JsonNode b, java.util.function.BiConsumer<String, JsonNode> each) {
    if (b.has("batch")) {
      JsonNode vectors = b.path("batch").path("vectors");
      if (vectors.isObject()) {
        for (Map.Entry<String, JsonNode> e : vectors.properties()) {
          for (JsonNode v : e.getValue()) {
            each.accept(e.getKey(), v);
          }
        }
      } else if (vectors.isArray()) {
        for (JsonNode v : vectors) {
          each.accept("", v);
        }
      }
      return;
    }
    for (JsonNode p : b.path("points")) {
      JsonNode v = p.get("vector");
      if (v != null && v.isObject() && !v.has("indices")) {
        for (Map.Entry<String, JsonNode> e : v.properties()) {
          each.accept(e.getKey(), e.getValue());
        }
      } else if (v != null && !v.isObject()) {
        each.accept("", v);
      }
    }
  }

  private static void multivectorSize(Map<String, Long> limits, String name, JsonNode v) {
    Long max = limits.get(name);
    if (max == null || !v.isArray() || v.isEmpty() || !v.get(0).isArray()) {
      return;
    }
    if (v.size() > max) {
      throw new InvalidInputException(
          "Bad request: Multivector '"
              + name
              + "' has a limit of "
              + max
              + " vectors, but "
              + v.size()
              + " were provided!");
    }
  }

  private static void sparseLength(Map<String, Long> limits, String name, JsonNode v) {
    Long max = limits.get(name);
    if (max == null || !v.isObject() || !v.has("indices")) {
      return;
    }
    long n = v.path("indices").size();
    if (n > max || v.path("values").size() > max) {
      throw new InvalidInputException(
          "Bad request: Sparse vector '"
              + name
              + "' has a limit of "
              + max
              + " indices, but "
              + n
              + " were provided!");
    }
  }

  private static void payloadIndexCount(Scope s, String field) {
    long max = s.mode().limit(Field.MAX_PAYLOAD_INDEX_COUNT);
    Map<String, PayloadFieldSchema> indexes = s.settings().payloadSchema().fields();
    if (max >= 0 && indexes.size() >= max && !indexes.containsKey(field)) {
      throw strict(
          "Collection already has the maximum number of payload indices (" + max + ")",
          "Please delete an existing index before creating a new one.");
    }
  }

  // ---------------------------------------------------------------------------------- filters

  /**
   * A filter's keys must be indexed (unless {@code unindexed_filtering_retrieve} or {@code
   * unindexed_filtering_update}, for {@code write}, allows them), and it must keep {@code
   * filter_max_conditions} and {@code condition_max_size}.
   */
  private static void filter(Scope s, JsonNode filter, boolean write) {
    if (filter == null || !filter.isObject()) {
      return;
    }
    Field allow = write ? Field.UNINDEXED_FILTERING_UPDATE : Field.UNINDEXED_FILTERING_RETRIEVE;
    if (Boolean.FALSE.equals(s.mode().flag(allow))) {
      Unindexed u = new Unindexed(s.settings().payloadSchema().fields());
      u.filter("", filter);
      if (u.key != null) {
        throw strict(
            "Index required but not found for \""
                + u.key
                + "\" of one of the following types: ["
                + String.join(", ", u.types)
                + "]",
            "Create an index for this key or use a different filter.");
      }
    }
    long maxConditions = s.mode().limit(Field.FILTER_MAX_CONDITIONS);
    if (maxConditions >= 0) {
      long n = conditions(filter);
      if (n > maxConditions) {
        throw strict(
            "Filter condition limit reached (" + n + " > " + maxConditions + ")",
            "Reduce the amount of conditions of your filter.");
      }
    }
    long maxSize = s.mode().limit(Field.CONDITION_MAX_SIZE);
    if (maxSize >= 0) {
      long n = maxConditionSize(filter);
      if (n > maxSize) {
        throw strict(
            "Condition size limit reached (" + n + " > " + maxSize + ")",
            "Reduce the size of your condition.");
      }
    }
  }

  /** The conditions of a filter's clauses ({@code must}, {@code must_not}, ...), in order. */
  static List<JsonNode> clauses(JsonNode filter) {
    List<JsonNode> out = new ArrayList<>();
    if (filter == null || !filter.isObject()) {
      return out;
    }
    for (String clause : List.of("should", "min_should", "must", "must_not")) {
      JsonNode c = filter.get(clause);
      if (clause.equals("min_should") && c != null) {
        c = c.get("conditions");
      }
      if (c == null || c.isNull()) {
        continue;
      }
      if (c.isArray()) {
        c.forEach(out::add);
      } else {
        out.add(c);
      }
    }
    return out;
  }

  private static boolean isFilter(JsonNode c) {
    return !c.has("key")
        && (c.has("must") || c.has("should") || c.has("must_not") || c.has("min_should"));
  }

  /** Qdrant's count of a filter's conditions: every condition, nested ones included. */
  static long conditions(JsonNode filter) {
    long n = 0;
    for (JsonNode c : clauses(filter)) {
      if (c.has("nested")) {
        n += conditions(c.path("nested").get("filter"));
      } else if (isFilter(c)) {
        n += conditions(c);
      } else {
        n += 1;
      }
    }
    return n;
  }

  /** Qdrant's size of a filter's largest condition: the values of a match any or except, ids. */
  static long maxConditionSize(JsonNode filter) {
    long max = 0;
    for (JsonNode c : clauses(filter)) {
      long n;
      if (c.has("nested")) {
        n = maxConditionSize(c.path("nested").get("filter"));
      } else if (isFilter(c)) {
        n = maxConditionSize(c);
      } else if (c.has("has_id")) {
        n = c.path("has_id").size();
      } else {
        JsonNode m = c.path("match");
        n = m.has("any") ? m.path("any").size() : m.has("except") ? m.path("except").size() : 0;
      }
      max = Math.max(max, n);
    }
    return max;
  }

  /**
   * Finds the first key of a filter or formula that needs a payload index it does not have, with
   * the index types that would serve it (Qdrant's names).
   */
  static final class Unindexed {
    private final Map<String, PayloadFieldSchema> indexes;
    String key;
    List<String> types;

    Unindexed(Map<String, PayloadFieldSchema> indexes) {
      this.indexes = indexes;
    }

    /** Index capabilities, as Qdrant names them. */
    private enum Cap {
      INT_MATCH("integer"),
      INT_RANGE("integer"),
      KEYWORD_MATCH("keyword"),
      KEYWORD_PREFIX("keyword (with prefix: true)"),
      FLOAT_RANGE("float"),
      TEXT("text"),
      TEXT_PHRASE("text (with phrase_matching: true)"),
      BOOL_MATCH("bool"),
      UUID_MATCH("uuid"),
      UUID_RANGE("uuid"),
      DATETIME_RANGE("datetime"),
      GEO("geo");

      final String schema;

      Cap(String schema) {
        this.schema = schema;
      }
    }

    private static EnumSet<Cap> capabilities(PayloadFieldSchema f) {
      return switch (f.type()) {
        // as Qdrant: prefix matches need `prefix: true`, though FlashVec's keyword index serves
        // them either way (so strict mode asks for what a Qdrant collection would need)
        case KEYWORD ->
            f.prefix()
                ? EnumSet.of(Cap.KEYWORD_MATCH, Cap.KEYWORD_PREFIX)
                : EnumSet.of(Cap.KEYWORD_MATCH);
        // as Qdrant: `lookup: false` or `range: false` takes the capability away, though
        // FlashVec's one integer structure serves both either way
        case INTEGER -> {
          EnumSet<Cap> caps = EnumSet.noneOf(Cap.class);
          if (f.servesLookup()) {
            caps.add(Cap.INT_MATCH);
          }
          if (f.servesRange()) {
            caps.add(Cap.INT_RANGE);
          }
          yield caps;
        }
        case UUID -> EnumSet.of(Cap.UUID_MATCH, Cap.UUID_RANGE);
        case BOOL -> EnumSet.of(Cap.BOOL_MATCH);
        case FLOAT -> EnumSet.of(Cap.FLOAT_RANGE);
        case GEO -> EnumSet.of(Cap.GEO);
        case TEXT ->
            f.text() != null && f.text().phraseMatching()
                ? EnumSet.of(Cap.TEXT, Cap.TEXT_PHRASE)
                : EnumSet.of(Cap.TEXT);
        case DATETIME -> EnumSet.of(Cap.DATETIME_RANGE);
      };
    }

    void filter(String prefix, JsonNode filter) {
      for (JsonNode c : clauses(filter)) {
        if (key != null) {
          return;
        }
        condition(prefix, c);
      }
    }

    private void condition(String prefix, JsonNode c) {
      if (!c.isObject()) {
        return;
      }
      if (c.has("nested")) {
        JsonNode n = c.get("nested");
        filter(prefix + text(n.path("key"), "") + "[].", n.get("filter"));
        return;
      }
      if (isFilter(c)) {
        filter(prefix, c);
        return;
      }
      if (c.has("has_id") || c.has("has_vector") || c.has("slice")) {
        return;
      }
      if (!c.has("key")) {
        for (String f : List.of("is_empty", "is_null")) {
          if (c.path(f).has("key")) {
            need(prefix + text(c.path(f).path("key"), ""), EnumSet.allOf(Cap.class));
          }
        }
        return;
      }
      EnumSet<Cap> caps = EnumSet.noneOf(Cap.class);
      JsonNode m = c.get("match");
      if (m != null && m.isObject()) {
        if (m.has("value")) {
          JsonNode v = m.get("value");
          if (v.isString()) {
            if (isUuid(v.asString())) {
              caps.add(Cap.UUID_MATCH);
            }
            caps.add(Cap.KEYWORD_MATCH);
          } else if (v.isIntegralNumber()) {
            caps.add(Cap.INT_MATCH);
          } else if (v.isBoolean()) {
            caps.add(Cap.BOOL_MATCH);
          }
        } else if (m.has("any") || m.has("except")) {
          JsonNode list = m.has("any") ? m.get("any") : m.get("except");
          if (!list.isEmpty()) {
            if (list.get(0).isString()) {
              boolean uuids = true;
              for (JsonNode v : list) {
                uuids &= isUuid(text(v, ""));
              }
              if (uuids) {
                caps.add(Cap.UUID_MATCH);
              }
              caps.add(Cap.KEYWORD_MATCH);
            } else {
              caps.add(Cap.INT_MATCH);
            }
          }
        } else if (m.has("text") || m.has("text_any")) {
          caps.add(Cap.TEXT);
        } else if (m.has("phrase")) {
          caps.add(Cap.TEXT_PHRASE);
        } else if (m.has("prefix")) {
          caps.add(Cap.KEYWORD_PREFIX);
        }
      }
      JsonNode r = c.get("range");
      if (r != null && r.isObject()) {
        boolean datetime = false;
        for (JsonNode v : r) {
          datetime |= v.isString();
        }
        if (datetime) {
          caps.add(Cap.DATETIME_RANGE);
        } else {
          caps.add(Cap.FLOAT_RANGE);
          caps.add(Cap.INT_RANGE);
        }
      }
      if (c.has("geo_bounding_box") || c.has("geo_radius") || c.has("geo_polygon")) {
        caps.add(Cap.GEO);
      }
      if (c.has("values_count") || c.has("is_empty") || c.has("is_null")) {
        caps.addAll(EnumSet.allOf(Cap.class));
      }
      if (!caps.isEmpty()) {
        need(prefix + text(c.path("key"), ""), caps);
      }
    }

    /** Qdrant's formula expression: payload variables, conditions, geo distances, datetimes. */
    void expression(JsonNode e) {
      if (e == null || key != null) {
        return;
      }
      if (e.isString()) {
        String v = e.asString();
        if (!v.equals("$score") && !v.startsWith("$score[")) {
          need(v, EnumSet.of(Cap.INT_MATCH, Cap.INT_RANGE, Cap.FLOAT_RANGE));
        }
        return;
      }
      if (e.isArray()) {
        for (JsonNode x : e) {
          expression(x);
        }
        return;
      }
      if (!e.isObject()) {
        return;
      }
      if (e.has("key") || isFilter(e) || e.has("nested") || e.has("has_id")) {
        condition("", e);
        return;
      }
      if (e.has("geo_distance")) {
        need(text(e.path("geo_distance").path("to"), ""), EnumSet.of(Cap.GEO));
        return;
      }
      if (e.has("datetime_key")) {
        need(text(e.path("datetime_key"), ""), EnumSet.of(Cap.DATETIME_RANGE));
        return;
      }
      if (e.has("datetime")) {
        return;
      }
      for (Map.Entry<String, JsonNode> x : e.properties()) {
        switch (x.getKey()) {
          case "mult", "sum", "neg", "sqrt", "exp", "log10", "ln", "abs" ->
              expression(x.getValue());
          case "div" -> {
            expression(x.getValue().get("left"));
            expression(x.getValue().get("right"));
          }
          case "pow" -> {
            expression(x.getValue().get("base"));
            expression(x.getValue().get("exponent"));
          }
          case "exp_decay", "gauss_decay", "lin_decay" -> {
            expression(x.getValue().get("x"));
            expression(x.getValue().get("target"));
          }
          default -> {}
        }
      }
    }

    private void need(String k, EnumSet<Cap> required) {
      if (key != null) {
        return;
      }
      PayloadFieldSchema f = indexes.get(k);
      if (f != null) {
        EnumSet<Cap> has = capabilities(f);
        for (Cap c : required) {
          if (has.contains(c)) {
            return;
          }
        }
      }
      TreeSet<String> names = new TreeSet<>();
      for (Cap c : required) {
        names.add(c.schema);
      }
      key = k;
      types = List.copyOf(names);
    }

    private static boolean isUuid(String s) {
      try {
        java.util.UUID.fromString(s);
        return s.length() == 36 || s.length() == 32;
      } catch (IllegalArgumentException e) {
        return false;
      }
    }
  }

  // ------------------------------------------------------------------------- reading the body

  /** An integer of the body, or {@code dflt} when absent or not an integer (the parser says so). */
  private static long count(JsonNode n, long dflt) {
    return n.isIntegralNumber() && n.canConvertToLong() ? n.longValue() : dflt;
  }

  private static boolean flag(JsonNode n, boolean dflt) {
    return n.isBoolean() ? n.booleanValue() : dflt;
  }

  private static String text(JsonNode n, String dflt) {
    return n.isString() ? n.asString() : dflt;
  }

  // ----------------------------------------------------------------------------------- errors

  private static void limit(Scope s, Field f, long value, String name) {
    long max = s.mode().limit(f);
    if (max >= 0 && value > max) {
      throw limitExceeded(Long.toString(value), Long.toString(max), name);
    }
  }

  private static InvalidInputException limitExceeded(String value, String max, String name) {
    return strict(
        "Limit exceeded " + value + " > " + max + " for \"" + name + "\"",
        "Reduce the \"" + name + "\" parameter to or below " + max + ".");
  }

  /** Qdrant's strict mode error: a 400 {@code Bad request: <what>. Help: <how>}. */
  static InvalidInputException strict(String what, String help) {
    return new InvalidInputException("Bad request: " + what + ". Help: " + help);
  }

  /** A number as Rust prints it: {@code 2}, {@code 1.5}, {@code 0.00022888184}. */
  static String number(double d) {
    if (d == Math.rint(d) && Math.abs(d) < 1e15) {
      return Long.toString((long) d);
    }
    return new BigDecimal(Double.toString(d)).toPlainString();
  }

  private static String megabytes(long bytes) {
    float mb = bytes / (1024f * 1024f);
    if (mb == Math.rint(mb)) {
      return Long.toString((long) mb);
    }
    return new BigDecimal(Float.toString(mb)).toPlainString();
  }
}
