package io.flashvec.api.search;

import io.flashvec.api.points.PointsController;
import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.cluster.CollectionNames;
import io.flashvec.cluster.CollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchParams;
import io.flashvec.index.SearchStats;
import io.flashvec.index.SparseVector;
import io.flashvec.index.TooLargeException;
import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.payload.Bm25Embedding;
import io.flashvec.index.query.DenseSearchRequest;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.SparseSearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;

/**
 * Qdrant's universal query ({@code POST …/points/query}): a tree whose nodes are the request and
 * its {@code prefetch}es. A leaf answers its {@code query} from the collection; a node with
 * prefetches first runs them (each with its own {@code limit}, {@code filter} and {@code params},
 * the parents' filters applying too) and then answers its query over their union:
 *
 * <ul>
 *   <li>{@code {"fusion": "rrf" | "dbsf"}} or {@code {"rrf": {"k", "weights"}}} fuses the lists
 *       ({@link Fusion});
 *   <li>any other query <i>rescores</i> the union: a nearest vector or a recommend, discover or
 *       context query scores exactly each candidate's stored vector, {@code order_by} orders the
 *       candidates by a payload index, {@code sample} shuffles them and a BM25 text query ranks
 *       those that match.
 * </ul>
 *
 * <p>The query kinds, at a leaf:
 *
 * <ul>
 *   <li>none: points in id order, as {@code scroll};
 *   <li>a vector, {@code {"nearest": vector}} or a point id: nearest neighbours (the point itself
 *       excluded);
 *   <li>{@code recommend} with strategy {@code average_vector} (the default): nearest neighbours of
 *       {@code 2·avg(positive) − avg(negative)} (or {@code avg(positive)}); strategies {@code
 *       best_score} and {@code sum_scores}, and {@code discover} and {@code context}: Qdrant's
 *       scores of each candidate against every example. Candidates are the nearest neighbours of
 *       every positive example (and the target), {@link #CANDIDATES_PER_RESULT} per wanted result,
 *       so the scores are exact and the recall approximate, as with Qdrant's graph search; with
 *       {@code params.exact} every point that matches the filter is scored;
 *   <li>{@code order_by}, {@code sample: "random"} and BM25 {@code text} queries.
 * </ul>
 *
 * Examples given as ids are read from the collection or from {@code lookup_from}'s, and are left
 * out of the results as Qdrant does. The executor runs above {@link CollectionService}, so it is
 * the same in a standalone server and behind the cluster proxy.
 */
final class UniversalQuery {

  /** Candidates an approximate custom-scored query fetches per example, per result wanted. */
  static final int CANDIDATES_PER_RESULT = 4;

  /** The fewest candidates an approximate custom-scored query fetches per example. */
  static final int MIN_CANDIDATES = 64;

  /** Points an exact custom-scored query (or a sample) reads per scroll page. */
  private static final int SCAN_PAGE = 1_000;

  /** Points {@code sample} may scan before it samples from a random window instead. */
  static final int SAMPLE_SCAN_MAX = 100_000;

  private final CollectionService service;
  private final int maxLimit;
  private final int maxNodes;
  private final AtomicLong sampleSeed;

  UniversalQuery(CollectionService service, int maxLimit, int maxNodes, long sampleSeed) {
    this.service = service;
    this.maxLimit = maxLimit;
    this.maxNodes = maxNodes;
    this.sampleSeed = new AtomicLong(sampleSeed);
  }

  /** What every result carries: payloads and vectors are read once, where results are found. */
  record Fetch(boolean withPayload, boolean withVector) {}

  /**
   * A node of the tree.
   *
   * @param path the node's place in the request, for messages ({@code ""}, {@code prefetch[1].})
   * @param query the query, {@code null} for none
   * @param filter this node's own filter ({@code null}: none)
   * @param limit results wanted
   * @param threshold Qdrant's {@code score_threshold} ({@code null}: none)
   * @param idfCorpus {@code params.idf.corpus}: the points a sparse search's IDF counts ({@code
   *     null}: all)
   */
  record Node(
      String path,
      List<Node> prefetch,
      JsonNode query,
      JsonNode using,
      Filter filter,
      SearchParams params,
      Float threshold,
      int limit,
      JsonNode lookupFrom,
      Filter idfCorpus) {}

  /**
   * Parses a request body (or one prefetch) into a node.
   *
   * @param nodes the nodes parsed so far in this request, so its tree stays bounded
   */
  Node parse(JsonNode b, String path, int[] nodes) {
    return parse(b, path, nodes, null);
  }

  /**
   * {@link #parse(JsonNode, String, int[])} for a query of one collection: a {@code limit} above
   * the largest FlashVec answers ({@code maxLimit}) is taken when the collection holds no more
   * points than that, since no answer can then be longer; the node asks for {@code maxLimit}
   * results.
   *
   * @param points the collection's live points, asked only for such a limit ({@code null}: every
   *     limit above {@code maxLimit} is refused)
   */
  Node parse(JsonNode b, String path, int[] nodes, java.util.function.LongSupplier points) {
    if (!b.isObject()) {
      throw new InvalidInputException("Wrong input: " + path + "query request must be an object");
    }
    if (++nodes[0] > maxNodes) {
      throw new TooLargeException(
          "Payload too large: too many prefetches in one query [max=" + maxNodes + "]");
    }
    if (path.endsWith("prefetch.") || path.endsWith("].") && path.contains("prefetch[")) {
      Requests.refuseUnknown(b, Requests.Fields.PREFETCH, path);
    }
    JsonNode from = b.get("lookup_from");
    if (from != null && from.isObject()) {
      Requests.refuseUnknown(from, Requests.Fields.LOOKUP_FROM, path + "lookup_from.");
    }
    List<Node> prefetch = new ArrayList<>();
    JsonNode p = b.get("prefetch");
    if (p != null && !p.isNull()) {
      if (p.isArray()) {
        for (int i = 0; i < p.size(); i++) {
          prefetch.add(parse(p.get(i), path + "prefetch[" + i + "].", nodes, points));
        }
      } else {
        prefetch.add(parse(p, path + "prefetch.", nodes, points));
      }
    }
    JsonNode q = b.get("query");
    if (q != null && q.isNull()) {
      q = null;
    }
    if (!prefetch.isEmpty() && q == null) {
      throw new InvalidInputException(
          "Bad request: A query is needed to merge the prefetches. Can't have prefetches without"
              + " defining a query.");
    }
    Float threshold = Requests.optionalFloat(b, "score_threshold");
    if (threshold != null && q == null) {
      throw new InvalidInputException(
          "Bad request: A query is needed to use the score_threshold. Can't have score_threshold"
              + " without defining a query.");
    }
    if (threshold != null && q.isObject() && q.has("order_by")) {
      throw new InvalidInputException(
          "Bad request: Can't use score_threshold with an order_by query.");
    }
    JsonNode limitNode = b.get("limit");
    if (limitNode != null && limitNode.isIntegralNumber() && limitNode.asLong(1) == 0) {
      throw new io.flashvec.api.web.ValidationException(
          "internal." + path + "limit", "value 0 invalid, must be 1 or larger");
    }
    int limit = Requests.limit(b, "limit", 10, maxLimit, points);
    JsonNode using = b.get("using");
    if (using != null && !using.isNull() && !using.isString()) {
      throw Requests.invalid("using must be a vector name", path + "using", using);
    }
    if (q != null
        && prefetch.isEmpty()
        && using != null
        && !using.asString("").isEmpty()
        && Fusion.parse(q, path + "query") != null) {
      // Qdrant's check (with prefetches, once they ran: their errors come first): a fusion ranks
      // lists, not a vector
      throw fusionWithUsing();
    }
    if (q != null && Fusion.parse(q, path + "query") != null && prefetch.isEmpty()) {
      throw Requests.invalid("a fusion query needs prefetches to fuse", path + "query", q);
    }
    return new Node(
        path,
        List.copyOf(prefetch),
        q,
        using,
        Requests.filter(b, path),
        Requests.params(b),
        threshold,
        limit,
        b.get("lookup_from"),
        Requests.idfCorpus(b, path));
  }

  /**
   * Answers a node: its best {@code node.limit() + extra} results (the request's {@code offset} is
   * {@code extra} at the root), best first.
   *
   * @param inherited the filters of the node's ancestors
   */
  List<Record> run(
      String collection, Node node, Filter inherited, int extra, Fetch fetch, SearchStats stats) {
    Filter filter = and(inherited, node.filter());
    int want = node.limit() + extra;
    if (!node.prefetch().isEmpty()) {
      return rescore(collection, node, filter, want, fetch, stats);
    }
    JsonNode q = node.query();
    String field = node.path() + "query";
    if (q == null) {
      ScrollPage page =
          service.scroll(
              collection,
              new ScrollRequest(
                  null, Math.max(1, want), fetch.withPayload(), fetch.withVector(), filter));
      return page.points();
    }
    if (isTextQuery(q)) {
      return textSearch(collection, node, q, want, filter, fetch);
    }
    if (q.isObject() && q.has("order_by")) {
      return orderBy(collection, q.get("order_by"), field + ".order_by", want, filter, fetch);
    }
    if (q.isObject() && q.has("sample")) {
      checkSample(q, field);
      return sample(collection, filter, want, fetch);
    }
    if (Formula.is(q)) {
      throw Requests.invalid(
          "a formula query rescores the results of its prefetches; give `prefetch`", field, q);
    }
    String sparse = sparseUsing(collection, node);
    if (sparse != null) {
      return sparseSearch(collection, node, sparse, q, field, want, filter, fetch);
    }
    if (node.idfCorpus() != null) {
      throw new InvalidInputException(
          "Wrong input: "
              + node.path()
              + "params.idf applies to a sparse vector with the idf modifier, not to a dense"
              + " one");
    }
    String using = denseUsing(collection, node);
    Scorer scorer = scorer(collection, node, q, field, false);
    if (scorer.mmr() != null) {
      SearchRequest req =
          new SearchRequest(
              scorer.vector(),
              Math.max(want, scorer.mmr().candidates()),
              0,
              node.threshold(),
              node.params(),
              fetch.withPayload(),
              true,
              and(filter, excluding(scorer.examples())));
      return scorer
          .mmr()
          .select(
              search(service, collection, using, req, stats),
              scorer.distance(),
              sim(collection, using, scorer.distance()),
              want,
              fetch.withVector(),
              using);
    }
    if (scorer.vector() != null) {
      SearchRequest req =
          new SearchRequest(
              scorer.vector(),
              want,
              0,
              node.threshold(),
              node.params(),
              fetch.withPayload(),
              fetch.withVector(),
              and(filter, excluding(scorer.examples())));
      return search(service, collection, using, req, stats);
    }
    return customScored(collection, node, scorer, filter, want, fetch, stats, using);
  }

  /** The node's query as an exact search of the sparse field {@code sparse}. */
  private List<Record> sparseSearch(
      String collection,
      Node node,
      String sparse,
      JsonNode q,
      String field,
      int want,
      Filter filter,
      Fetch fetch) {
    JsonNode v = q.isObject() && q.has("nearest") ? q.get("nearest") : q;
    SparseVector query;
    if (v != null && (v.isIntegralNumber() || v.isString())) {
      // a point's own sparse vector, the point itself left out of the results as Qdrant does
      PointId id = Requests.id(v, field);
      List<Record> r = service.retrieve(collection, List.of(id), false, true);
      if (r.isEmpty()) {
        throw PointsController.noSuchPoint(id);
      }
      query = r.getFirst().sparse() == null ? null : r.getFirst().sparse().get(sparse);
      if (query == null) {
        throw new InvalidInputException(
            "Wrong input: point " + id + " has no vector " + sparse + " [query=" + id + "]");
      }
      Condition notItself = new Condition.HasId(Set.of(id));
      filter =
          new Filter(
              filter == null ? List.of() : List.of(filter), List.of(), List.of(notItself), null);
    } else {
      query = sparseQuery(q, field, sparse);
    }
    return service.sparseSearch(
        collection,
        new SparseSearchRequest(
            sparse,
            query,
            want,
            0,
            filter,
            node.threshold(),
            fetch.withPayload(),
            fetch.withVector(),
            node.idfCorpus()));
  }

  /** A node with prefetches: fusion of their lists, or a query over their union. */
  private List<Record> rescore(
      String collection, Node node, Filter filter, int want, Fetch fetch, SearchStats stats) {
    List<List<Record>> lists = new ArrayList<>();
    for (Node child : node.prefetch()) {
      lists.add(run(collection, child, filter, 0, fetch, stats));
    }
    JsonNode q = node.query();
    String field = node.path() + "query";
    Fusion fusion = Fusion.parse(q, field);
    if (fusion != null) {
      if (!usingName(node).isEmpty()) {
        throw fusionWithUsing();
      }
      List<Fusion.Ranked> ranked = new ArrayList<>();
      for (int i = 0; i < lists.size(); i++) {
        Node child = node.prefetch().get(i);
        JsonNode cq = child.query();
        boolean higherIsBetter;
        if (isTextQuery(cq) || (cq != null && sparseUsing(collection, child) != null)) {
          higherIsBetter = true;
        } else {
          // the metric of the dense vector the child searches (the primary one's without a query)
          String u = cq == null ? "" : denseUsing(collection, child);
          higherIsBetter = service.config(collection).distance(u).higherIsBetter();
        }
        ranked.add(new Fusion.Ranked(lists.get(i), higherIsBetter));
      }
      return page(fusion.fuse(ranked), node.threshold(), true, want);
    }
    Map<PointId, Record> union = new LinkedHashMap<>();
    for (List<Record> l : lists) {
      for (Record r : l) {
        union.putIfAbsent(r.id(), r);
      }
    }
    if (union.isEmpty()) {
      return List.of();
    }
    Filter among = and(filter, Filter.must(new Condition.HasId(union.keySet())));
    if (isTextQuery(q)) {
      return textSearch(collection, node, q, want, among, fetch);
    }
    if (q.isObject() && q.has("order_by")) {
      return orderBy(collection, q.get("order_by"), field + ".order_by", want, among, fetch);
    }
    if (q.isObject() && q.has("sample")) {
      checkSample(q, field);
      List<Record> all = new ArrayList<>(union.values());
      shuffle(all);
      return all.subList(0, Math.min(want, all.size()));
    }
    if (Formula.is(q)) {
      return formula(collection, node, Formula.parse(q, field), lists, union, want, fetch);
    }
    String sparse = sparseUsing(collection, node);
    if (sparse != null) {
      return sparseSearch(collection, node, sparse, q, field, want, among, fetch);
    }
    String using = denseUsing(collection, node);
    Scorer scorer = scorer(collection, node, q, field, true);
    union.keySet().removeAll(scorer.examples());
    List<Record> withVectors =
        service.retrieve(collection, List.copyOf(union.keySet()), fetch.withPayload(), true);
    if (scorer.mmr() != null) {
      List<Record> ranked =
          top(
              scorer,
              withVectors,
              node.threshold(),
              Math.max(want, scorer.mmr().candidates()),
              true,
              using);
      return scorer
          .mmr()
          .select(
              ranked,
              scorer.distance(),
              sim(collection, using, scorer.distance()),
              want,
              fetch.withVector(),
              using);
    }
    return top(scorer, withVectors, node.threshold(), want, fetch.withVector(), using);
  }

  /**
   * A formula query over the union of the prefetch results: each point's payload, its score in each
   * prefetch and whether it matches each of the formula's conditions (one filtered scroll over the
   * union per condition), ranked by the formula's value, highest first.
   */
  private List<Record> formula(
      String collection,
      Node node,
      Formula f,
      List<List<Record>> lists,
      Map<PointId, Record> union,
      int want,
      Fetch fetch) {
    List<Map<PointId, Float>> scores = new ArrayList<>();
    for (List<Record> l : lists) {
      Map<PointId, Float> m = new java.util.HashMap<>();
      for (Record r : l) {
        m.putIfAbsent(r.id(), r.score());
      }
      scores.add(m);
    }
    Filter among = Filter.must(new Condition.HasId(union.keySet()));
    List<Set<PointId>> matches = new ArrayList<>();
    for (Filter c : f.conditions()) {
      Set<PointId> ids = new java.util.HashSet<>();
      ScrollPage page =
          service.scroll(
              collection, new ScrollRequest(null, union.size(), false, false, and(c, among)));
      for (Record r : page.points()) {
        ids.add(r.id());
      }
      matches.add(ids);
    }
    List<Record> points =
        service.retrieve(collection, List.copyOf(union.keySet()), true, fetch.withVector());
    List<Record> scored = new ArrayList<>(points.size());
    for (Record r : points) {
      JsonNode payload = r.payload() == null ? null : Json.readStored(r.payload());
      float score = f.score(new Formula.Point(r.id(), payload), scores, matches);
      scored.add(
          new Record(
              r.id(),
              score,
              r.vector(),
              fetch.withPayload() ? r.payload() : null,
              r.sparse(),
              r.dense()));
    }
    scored.sort((a, b) -> Float.compare(b.score(), a.score()));
    return page(scored, node.threshold(), true, want);
  }

  /**
   * Qdrant's maximal marginal relevance: from the {@code candidates} nearest points, picks the
   * nearest, then repeatedly the candidate with the best {@code λ·sim(query) − (1 − λ)·max
   * sim(selected)}, with {@code λ = 1 − diversity}. Points keep their nearest-search scores.
   */
  record Mmr(double lambda, int candidates) {

    static Mmr parse(JsonNode n, String field, int limit, int maxLimit) {
      if (n == null || n.isNull()) {
        return null;
      }
      if (!n.isObject()) {
        throw Requests.invalid("mmr must be an object", field, n);
      }
      double diversity = 0.5;
      JsonNode dv = n.get("diversity");
      if (dv != null && !dv.isNull()) {
        if (!dv.isNumber() || dv.doubleValue() < 0 || dv.doubleValue() > 1) {
          throw Requests.invalid("mmr.diversity must be in [0, 1]", field + ".diversity", dv);
        }
        diversity = dv.doubleValue();
      }
      int candidates =
          Requests.nonNegativeInt(n, "candidates_limit", limit, Math.min(16_384, maxLimit));
      return new Mmr(1 - diversity, candidates);
    }

    /** Picks {@code want} of {@code ranked} (best first, with vectors). */
    List<Record> select(
        List<Record> ranked, Distance d, Sim sim, int want, boolean withVector, String using) {
      List<Record> pool = new ArrayList<>();
      for (Record r : ranked) {
        if (vectorOf(r, using) != null) {
          pool.add(r);
        }
      }
      List<Record> picked = new ArrayList<>();
      if (pool.isEmpty()) {
        return picked;
      }
      int n = pool.size();
      double[] relevance = new double[n];
      for (int i = 0; i < n; i++) {
        // The search's score ranks as the similarity does; use the raw similarity as Qdrant does.
        relevance[i] = pool.get(i).score();
        if (d == Distance.EUCLID) {
          relevance[i] = -(double) pool.get(i).score() * pool.get(i).score();
        } else if (d == Distance.MANHATTAN) {
          relevance[i] = -(double) pool.get(i).score();
        }
      }
      double[] maxSim = new double[n];
      java.util.Arrays.fill(maxSim, Double.NEGATIVE_INFINITY);
      boolean[] taken = new boolean[n];
      int first = 0;
      for (int i = 1; i < n; i++) {
        if (relevance[i] > relevance[first]) {
          first = i;
        }
      }
      int next = first;
      while (next >= 0 && picked.size() < want) {
        taken[next] = true;
        Record r = pool.get(next);
        picked.add(withVector ? r : r.withoutVectors());
        int best = -1;
        double bestScore = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
          if (taken[i]) {
            continue;
          }
          maxSim[i] = Math.max(maxSim[i], sim.of(vectorOf(pool.get(i), using), vectorOf(r, using)));
          double score = lambda * relevance[i] - (1 - lambda) * maxSim[i];
          if (best < 0 || score > bestScore) {
            best = i;
            bestScore = score;
          }
        }
        next = best;
      }
      return picked;
    }
  }

  // ---- custom scoring -------------------------------------------------------------------------

  /**
   * How a vector query scores a point. Nearest and average-vector recommend queries are plain
   * searches ({@code vector} set); the others score each candidate's vector with {@code score}.
   *
   * @param examples the ids among the examples, which results leave out
   * @param seeds vectors whose neighbours are the candidates of an approximate custom query
   */
  record Scorer(
      float[] vector,
      Distance distance,
      java.util.function.ToDoubleFunction<float[]> score,
      Set<PointId> examples,
      List<float[]> seeds,
      boolean higherIsBetter,
      Mmr mmr) {

    Scorer(
        float[] vector,
        Distance distance,
        java.util.function.ToDoubleFunction<float[]> score,
        Set<PointId> examples,
        List<float[]> seeds,
        boolean higherIsBetter) {
      this(vector, distance, score, examples, seeds, higherIsBetter, null);
    }

    double scoreOf(float[] v) {
      return score != null ? score.applyAsDouble(v) : distance.score(vector, v, 0);
    }
  }

  /**
   * The scorer of a vector query. A plain nearest query that runs as a search needs nothing of the
   * collection (the search checks and prepares its vector); every other use reads its distance.
   *
   * @param scoresHere whether the scores are computed here (rescoring), not by a search
   */
  private Scorer scorer(
      String collection, Node node, JsonNode q, String field, boolean scoresHere) {
    String using = denseUsing(collection, node);
    Distance d =
        scoresHere || !plainNearest(q) || !using.isEmpty()
            ? service.config(collection).distance(using)
            : null;
    Examples ex = new Examples(collection, node.lookupFrom(), field, d, using);
    Sim sim = d == null ? null : sim(collection, using, d);
    if (q.isArray() || q.isIntegralNumber() || q.isString()) {
      return nearest(ex, q, field, d);
    }
    if (!q.isObject()) {
      throw Requests.invalid("query must be a vector, a point id or a query object", field, q);
    }
    if (q.has("nearest")) {
      JsonNode n = q.get("nearest");
      if (n.isObject()) {
        throw Requests.invalid(
            "only dense vectors and point ids are supported in nearest", field + ".nearest", n);
      }
      Scorer s = nearest(ex, n, field + ".nearest", d);
      Mmr mmr = Mmr.parse(q.get("mmr"), field + ".mmr", node.limit(), maxLimit);
      return mmr == null
          ? s
          : new Scorer(s.vector(), d, s.score(), s.examples(), s.seeds(), s.higherIsBetter(), mmr);
    }
    if (q.has("recommend")) {
      return recommend(ex, q.get("recommend"), field + ".recommend", d, sim);
    }
    if (q.has("discover")) {
      JsonNode disc = q.get("discover");
      String f = field + ".discover";
      if (!disc.isObject() || !disc.has("target")) {
        throw Requests.invalid("discover needs a target and context pairs", f, disc);
      }
      float[] target = ex.vector(disc.get("target"), f + ".target");
      List<float[][]> pairs = ex.pairs(disc.get("context"), f + ".context");
      return new Scorer(
          null,
          d,
          v -> {
            double rank = 0;
            for (float[][] pair : pairs) {
              rank += Double.compare(sim.of(pair[0], v), sim.of(pair[1], v));
            }
            return rank + scaledSigmoid(sim.of(target, v));
          },
          ex.ids,
          List.of(target),
          true);
    }
    if (q.has("context")) {
      List<float[][]> pairs = ex.pairs(q.get("context"), field + ".context");
      List<float[]> seeds = new ArrayList<>();
      for (float[][] pair : pairs) {
        seeds.add(pair[0]);
      }
      return new Scorer(
          null,
          d,
          v -> {
            double sum = 0;
            for (float[][] pair : pairs) {
              double diff = sim.of(pair[0], v) - sim.of(pair[1], v) - Math.ulp(1.0f);
              sum += sigmoid(Math.min(diff, 0));
            }
            return sum;
          },
          ex.ids,
          seeds,
          true);
    }
    if (q.has("relevance_feedback")) {
      return relevanceFeedback(
          ex, q.get("relevance_feedback"), field + ".relevance_feedback", d, sim);
    }
    String kind = q.propertyNames().iterator().hasNext() ? q.propertyNames().iterator().next() : "";
    throw Requests.invalid(
        "query `"
            + kind
            + "` is not supported; supported: nearest, recommend, discover, context, order_by,"
            + " sample, formula, relevance_feedback, fusion, rrf and BM25 text",
        field,
        q);
  }

  /**
   * Qdrant's relevance feedback, naive strategy: {@code a·sim(target, v) + Σ c·conf^b·(sim(p, v) −
   * sim(n, v))} over every ordered pair of feedback examples (p, n) whose scores differ by {@code
   * conf > 0}.
   */
  private static Scorer relevanceFeedback(
      Examples ex, JsonNode rf, String field, Distance d, Sim sim) {
    if (!rf.isObject() || !rf.has("target") || !rf.has("feedback") || !rf.has("strategy")) {
      throw Requests.invalid("relevance_feedback needs target, feedback and strategy", field, rf);
    }
    for (String k : rf.propertyNames()) {
      if (!Set.of("target", "feedback", "strategy").contains(k)) {
        throw Requests.invalid(
            "unknown field `" + k + "`; expected target, feedback, strategy", field + "." + k, rf);
      }
    }
    float[] target = ex.vector(rf.get("target"), field + ".target");
    JsonNode fb = rf.get("feedback");
    if (!fb.isArray() || fb.isEmpty()) {
      throw Requests.invalid("feedback elements must be non-empty", field + ".feedback", fb);
    }
    List<float[]> examples = new ArrayList<>();
    float[] scores = new float[fb.size()];
    for (int i = 0; i < fb.size(); i++) {
      JsonNode item = fb.get(i);
      String at = field + ".feedback[" + i + "]";
      if (!item.isObject() || !item.has("example") || !item.has("score")) {
        throw Requests.invalid("a feedback item is {\"example\": …, \"score\": …}", at, item);
      }
      if (!item.get("score").isNumber()) {
        throw Requests.invalid("score must be a number", at + ".score", item.get("score"));
      }
      examples.add(ex.vector(item.get("example"), at + ".example"));
      scores[i] = item.get("score").floatValue();
    }
    JsonNode strategy = rf.get("strategy");
    JsonNode naive = strategy.isObject() && strategy.size() == 1 ? strategy.get("naive") : null;
    if (naive == null || !naive.isObject()) {
      throw Requests.invalid(
          "strategy must be {\"naive\": {\"a\": …, \"b\": …, \"c\": …}}",
          field + ".strategy",
          strategy);
    }
    float[] abc = new float[3];
    String[] names = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
      JsonNode x = naive.get(names[i]);
      if (x == null || !x.isNumber()) {
        throw Requests.invalid(
            names[i] + " must be a number", field + ".strategy.naive." + names[i], x);
      }
      abc[i] = x.floatValue();
    }
    if (abc[1] < 0) {
      // Qdrant's validation of the request body, path and wording included
      throw new io.flashvec.api.web.ValidationException(
          "internal." + field + ".strategy.naive.b",
          "value " + abc[1] + " invalid, must be 0.0 or larger");
    }
    List<float[][]> pairs = new ArrayList<>();
    List<Float> weights = new ArrayList<>();
    for (int i = 0; i < scores.length; i++) {
      for (int j = 0; j < scores.length; j++) {
        float confidence = scores[i] - scores[j];
        if (i != j && confidence > 0) {
          pairs.add(new float[][] {examples.get(i), examples.get(j)});
          weights.add((float) Math.pow(confidence, abc[1]) * abc[2]);
        }
      }
    }
    float a = abc[0];
    List<float[]> seeds = new ArrayList<>(examples);
    seeds.addFirst(target);
    return new Scorer(
        null,
        d,
        v -> {
          double score = a * sim.of(target, v);
          for (int k = 0; k < pairs.size(); k++) {
            float[][] pair = pairs.get(k);
            score += weights.get(k) * (sim.of(pair[0], v) - sim.of(pair[1], v));
          }
          return score;
        },
        ex.ids,
        seeds,
        true);
  }

  private static Scorer nearest(Examples ex, JsonNode q, String field, Distance d) {
    float[] v = ex.vector(q, field);
    if (d != null) {
      v = ex.prepare(v);
    }
    return ex.nearest(v, List.of(v));
  }

  /** A vector or point id, alone or as {@code nearest}, without MMR. */
  private static boolean plainNearest(JsonNode q) {
    if (q.isObject() && q.has("nearest") && (q.get("mmr") == null || q.get("mmr").isNull())) {
      q = q.get("nearest");
    }
    return q.isArray() || q.isIntegralNumber() || q.isString();
  }

  private static Scorer recommend(Examples ex, JsonNode r, String field, Distance d, Sim sim) {
    if (!r.isObject()) {
      throw Requests.invalid("recommend must be an object", field, r);
    }
    List<float[]> pos = ex.list(r.get("positive"), field + ".positive");
    List<float[]> neg = ex.list(r.get("negative"), field + ".negative");
    if (pos.isEmpty() && neg.isEmpty()) {
      // Qdrant's validation of RecommendInput, before the strategy is looked at
      throw new io.flashvec.api.web.ValidationException(
          "internal." + field + ".positives, negatives",
          "At least one positive or negative vector/id must be provided");
    }
    JsonNode s = r.get("strategy");
    String strategy = s == null || s.isNull() ? "average_vector" : s.asString("");
    switch (strategy) {
      case "average_vector" -> {
        if (pos.isEmpty()) {
          throw new InvalidInputException(
              "Bad request: Positive vectors should not be empty with `average` strategy");
        }
        if (ex.multiDim > 0) {
          // Qdrant's average of multivectors: the positives' vectors and the negated negatives'
          float[] v = ex.prepare(concat(pos, neg));
          return ex.nearest(v, List.of(v));
        }
        float[] avg = average(pos);
        if (!neg.isEmpty()) {
          float[] avgNeg = average(neg);
          for (int i = 0; i < avg.length; i++) {
            avg[i] = avg[i] + avg[i] - avgNeg[i];
          }
        }
        float[] v = d.prepare(avg);
        return new Scorer(v, d, null, ex.ids, List.of(v), d.higherIsBetter());
      }
      case "best_score" -> {
        requireExamples(pos, neg);
        return new Scorer(
            null,
            d,
            v -> {
              double bestPos = Double.NEGATIVE_INFINITY;
              for (float[] p : pos) {
                bestPos = Math.max(bestPos, sim.of(p, v));
              }
              double bestNeg = Double.NEGATIVE_INFINITY;
              for (float[] n : neg) {
                bestNeg = Math.max(bestNeg, sim.of(n, v));
              }
              return bestPos > bestNeg ? scaledSigmoid(bestPos) : -scaledSigmoid(bestNeg);
            },
            ex.ids,
            pos.isEmpty() ? neg : pos,
            true);
      }
      case "sum_scores" -> {
        requireExamples(pos, neg);
        return new Scorer(
            null,
            d,
            v -> {
              double sum = 0;
              for (float[] p : pos) {
                sum += sim.of(p, v);
              }
              for (float[] n : neg) {
                sum -= sim.of(n, v);
              }
              return sum;
            },
            ex.ids,
            pos.isEmpty() ? neg : pos,
            true);
      }
      default ->
          throw Requests.invalid(
              "recommend strategy must be average_vector, best_score or sum_scores",
              field + ".strategy",
              s);
    }
  }

  private static void requireExamples(List<float[]> pos, List<float[]> neg) {
    if (pos.isEmpty() && neg.isEmpty()) {
      throw new InvalidInputException(
          "Bad request: At least one positive or negative example is required");
    }
  }

  /**
   * A custom-scored query at a leaf: candidates are the neighbours of its seeds (or, with {@code
   * exact}, every point that passes the filter), each scored exactly.
   */
  private List<Record> customScored(
      String collection,
      Node node,
      Scorer scorer,
      Filter filter,
      int want,
      Fetch fetch,
      SearchStats stats,
      String using) {
    Filter f = and(filter, excluding(scorer.examples()));
    if (node.params().exact()) {
      List<Record> best = new ArrayList<>();
      ScrollRequest req = new ScrollRequest(null, SCAN_PAGE, fetch.withPayload(), true, f);
      while (true) {
        ScrollPage page = service.scroll(collection, req);
        best.addAll(page.points());
        best = top(scorer, best, node.threshold(), want, true, using);
        if (page.nextOffset() == null) {
          break;
        }
        req = req.from(page.nextOffset());
      }
      return fetch.withVector() ? best : withoutVectors(best);
    }
    int perSeed = Math.min(maxLimit, Math.max(MIN_CANDIDATES, want * CANDIDATES_PER_RESULT));
    Map<PointId, Record> candidates = new LinkedHashMap<>();
    for (float[] seed : scorer.seeds()) {
      SearchRequest req =
          new SearchRequest(
              scorer.distance().prepare(seed),
              perSeed,
              0,
              null,
              node.params(),
              fetch.withPayload(),
              true,
              f);
      for (Record r : search(service, collection, using, req, stats)) {
        candidates.putIfAbsent(r.id(), r);
      }
    }
    return top(
        scorer,
        new ArrayList<>(candidates.values()),
        node.threshold(),
        want,
        fetch.withVector(),
        using);
  }

  /** The best {@code want} of {@code records} by {@code scorer}, best first, ties by id. */
  private static List<Record> top(
      Scorer scorer,
      List<Record> records,
      Float threshold,
      int want,
      boolean withVector,
      String using) {
    List<Record> scored = new ArrayList<>(records.size());
    for (Record r : records) {
      float[] v = vectorOf(r, using);
      if (v == null) {
        continue;
      }
      float s = (float) scorer.scoreOf(v);
      if (threshold != null && (scorer.higherIsBetter() ? s < threshold : s > threshold)) {
        continue;
      }
      scored.add(
          new Record(
              r.id(),
              s,
              withVector ? r.vector() : null,
              r.payload(),
              withVector ? r.sparse() : null,
              withVector ? r.dense() : null));
    }
    Comparator<Record> byScore = Comparator.comparingDouble(Record::score);
    if (scorer.higherIsBetter()) {
      byScore = byScore.reversed();
    }
    scored.sort(byScore.thenComparing(Record::id));
    return new ArrayList<>(scored.subList(0, Math.min(want, scored.size())));
  }

  private static List<Record> withoutVectors(List<Record> records) {
    List<Record> out = new ArrayList<>(records.size());
    for (Record r : records) {
      out.add(r.withoutVectors());
    }
    return out;
  }

  /**
   * The similarity custom scores compare vectors of one field by: {@link #similarity} for a field
   * of one vector per point, Qdrant's MaxSim of the metric's similarity for a multivector field.
   */
  @FunctionalInterface
  interface Sim {
    double of(float[] a, float[] b);
  }

  /** The similarity of the dense field {@code using} of {@code collection} by {@code d}. */
  private Sim sim(String collection, String using, Distance d) {
    int multiDim = multiDim(collection, using);
    if (multiDim == 0) {
      return (a, b) -> similarity(d, a, b);
    }
    return (a, b) -> maxSim(d, multiDim, a, b);
  }

  /** The size of each vector of the multivector field {@code using}, or 0 for another field. */
  private int multiDim(String collection, String using) {
    if (using.isEmpty()) {
      return 0;
    }
    io.flashvec.index.DenseVectorParams f = service.config(collection).denseField(using);
    return f != null && f.multivector() ? f.dimension() : 0;
  }

  /**
   * Qdrant's MaxSim for custom scores: for each vector of {@code a}, the best {@link #similarity}
   * to a vector of {@code b}, summed (no square root for Euclid, as Qdrant's custom scores).
   */
  static double maxSim(Distance d, int dim, float[] a, float[] b) {
    double sum = 0;
    for (int ao = 0; ao < a.length; ao += dim) {
      double best = Double.NEGATIVE_INFINITY;
      for (int bo = 0; bo < b.length; bo += dim) {
        best = Math.max(best, d.similarity(a, ao, b, bo, dim));
      }
      sum += best;
    }
    return sum;
  }

  /** Qdrant's similarity for custom scores ({@link Distance#similarity}). */
  static double similarity(Distance d, float[] a, float[] b) {
    return d.similarity(a, 0, b, 0, a.length);
  }

  /** Qdrant's fast sigmoid, in (−1, 1). */
  static double sigmoid(double x) {
    return x / (1 + Math.abs(x));
  }

  /** Qdrant's fast sigmoid scaled to (0, 1). */
  static double scaledSigmoid(double x) {
    return 0.5 * (sigmoid(x) + 1);
  }

  /** The vectors of {@code pos} and the negated ones of {@code neg}, back to back. */
  private static float[] concat(List<float[]> pos, List<float[]> neg) {
    int n = 0;
    for (float[] v : pos) {
      n += v.length;
    }
    for (float[] v : neg) {
      n += v.length;
    }
    float[] out = new float[n];
    int at = 0;
    for (float[] v : pos) {
      System.arraycopy(v, 0, out, at, v.length);
      at += v.length;
    }
    for (float[] v : neg) {
      for (float x : v) {
        out[at++] = -x;
      }
    }
    return out;
  }

  private static float[] average(List<float[]> vs) {
    float[] sum = new float[vs.getFirst().length];
    for (float[] v : vs) {
      for (int i = 0; i < sum.length; i++) {
        sum[i] += v[i];
      }
    }
    for (int i = 0; i < sum.length; i++) {
      sum[i] /= vs.size();
    }
    return sum;
  }

  /**
   * Vectors of a query's examples: literal vectors, or ids read from the collection (or {@code
   * lookup_from}'s). With a distance, vectors are prepared for it (normalised for cosine), as
   * stored vectors are, and literal ones checked against the collection's dimension; without one (a
   * plain search) they are left to the search.
   */
  private final class Examples {
    final String collection;
    final String field;
    final Distance distance;
    final Set<PointId> ids = new LinkedHashSet<>();

    /** The size of each vector of a multivector field {@code using}, or 0 for another field. */
    final int multiDim;

    private final String from;
    private final String using;
    private final String fromUsing;

    /**
     * What is wrong with {@code lookup_from}'s vector, told after the example ids are looked up (as
     * Qdrant does: an id missing from that collection is its 404 first); {@code null}: nothing.
     */
    private final InvalidInputException badLookup;

    Examples(
        String collection, JsonNode lookupFrom, String field, Distance distance, String using) {
      this.collection = collection;
      this.field = field;
      this.distance = distance;
      this.using = using;
      this.multiDim = multiDim(collection, using);
      String f;
      String fu;
      InvalidInputException bad = null;
      try {
        f = lookupCollection(lookupFrom, collection, using);
        fu = lookupVector(lookupFrom, f, collection, using);
      } catch (InvalidInputException e) {
        if (lookupFrom == null || !lookupFrom.path("collection").isString()) {
          throw e;
        }
        // the collection exists (else a 404 above): its points are looked up first
        f = lookupFrom.get("collection").asString();
        fu = null;
        bad = e;
      }
      this.from = f;
      this.fromUsing = fu;
      this.badLookup = bad;
    }

    /** A vector of the field prepared for its metric (each vector of a multivector). */
    float[] prepare(float[] v) {
      return multiDim > 0 ? distance.prepareMulti(v, multiDim) : distance.prepare(v);
    }

    /**
     * The scorer of a nearest query with the prepared {@code v}: a plain search, and for rescoring
     * the metric's score, or MaxSim as Qdrant reports it for a multivector field.
     */
    Scorer nearest(float[] v, List<float[]> seeds) {
      Distance d = distance;
      if (multiDim > 0) {
        int dim = multiDim;
        return new Scorer(v, d, x -> d.maxSim(v, dim, x), ids, seeds, d.higherIsBetter());
      }
      return new Scorer(v, d, null, ids, seeds, d == null || d.higherIsBetter());
    }

    /**
     * A multivector example or query: {@code [[...], ...]} of the field's vector size, or one
     * vector {@code [...]} as a multivector of one, as Qdrant takes it.
     */
    private float[] multiVector(JsonNode n, String where, boolean nested) {
      String name = using;
      if (nested && multiDim == 0) {
        throw Requests.notMultivector(
            name.isEmpty() ? service.config(collection).defaultVectorName() : name,
            service.config(collection).dimension(using));
      }
      float[] flat;
      if (nested) {
        float[][] vectors = Requests.multiVector(n, where);
        if (vectors[0].length != multiDim) {
          throw Requests.multivectorDimension(name, multiDim, vectors[0].length);
        }
        flat = Requests.flatten(vectors);
      } else {
        flat = Requests.vector(n, where);
        if (flat.length != multiDim) {
          throw Requests.multivectorDimension(name, multiDim, flat.length);
        }
      }
      return distance == null ? flat : distance.prepareMulti(flat, multiDim);
    }

    float[] vector(JsonNode n, String where) {
      if (n == null || n.isNull()) {
        throw new InvalidInputException("Wrong input: missing field `" + where + "`");
      }
      if (n.isArray() && badLookup != null) {
        throw badLookup;
      }
      boolean nested = n.isArray() && !n.isEmpty() && n.get(0).isArray();
      if (nested || (n.isArray() && multiDim > 0)) {
        return multiVector(n, where, nested);
      }
      if (n.isArray()) {
        float[] v = Requests.vector(n, where);
        if (distance == null) {
          return v; // a search checks and prepares it
        }
        int dim = service.config(collection).dimension(using);
        if (v.length != dim) {
          throw new InvalidInputException(
              "Wrong input: Vector dimension error: expected dim: "
                  + dim
                  + ", got "
                  + v.length
                  + " ["
                  + where
                  + "]");
        }
        return distance.prepare(v);
      }
      if (n.isIntegralNumber() || n.isString()) {
        PointId id = Requests.id(n, where);
        List<Record> r = service.retrieve(from, List.of(id), false, true);
        if (!r.isEmpty() && badLookup != null) {
          throw badLookup;
        }
        if (r.isEmpty() || vectorOf(r.getFirst(), fromUsing) == null) {
          throw PointsController.noSuchPoint(id);
        }
        if (from.equals(collection)) {
          ids.add(id);
        }
        float[] v = vectorOf(r.getFirst(), fromUsing);
        return distance == null ? v : prepare(v);
      }
      throw Requests.invalid("an example must be a vector or a point id", where, n);
    }

    List<float[]> list(JsonNode arr, String where) {
      List<float[]> out = new ArrayList<>();
      if (arr == null || arr.isNull()) {
        return out;
      }
      if (!arr.isArray()) {
        throw Requests.invalid(where + " must be an array of vectors or point ids", where, arr);
      }
      for (int i = 0; i < arr.size(); i++) {
        out.add(vector(arr.get(i), where + "[" + i + "]"));
      }
      return out;
    }

    /** Context pairs: one {@code {"positive", "negative"}} object or an array of them. */
    List<float[][]> pairs(JsonNode n, String where) {
      List<float[][]> out = new ArrayList<>();
      if (n == null || n.isNull()) {
        return out;
      }
      List<JsonNode> items = new ArrayList<>();
      if (n.isArray()) {
        n.forEach(items::add);
      } else {
        items.add(n);
      }
      for (int i = 0; i < items.size(); i++) {
        JsonNode p = items.get(i);
        String w = n.isArray() ? where + "[" + i + "]" : where;
        if (!p.isObject()) {
          throw Requests.invalid("a context pair must be {positive, negative}", w, p);
        }
        out.add(
            new float[][] {
              vector(p.get("positive"), w + ".positive"), vector(p.get("negative"), w + ".negative")
            });
      }
      return out;
    }
  }

  /** {@code lookup_from}: another collection's name (its default vector), or this collection. */
  private String lookupCollection(JsonNode lookupFrom, String collection, String using) {
    if (lookupFrom == null || lookupFrom.isNull()) {
      return collection;
    }
    if (!lookupFrom.isObject() || !lookupFrom.path("collection").isString()) {
      throw Requests.invalid(
          "lookup_from must be {\"collection\": name}", "lookup_from", lookupFrom);
    }
    requireLookup(service, lookupFrom.get("collection").asString());
    String name = lookupFrom.get("collection").asString();
    CollectionNames.validate(name);
    int dim = service.config(name).dimension(lookupVector(lookupFrom, name, collection, using));
    int ours = service.config(collection).dimension(using);
    if (dim != ours) {
      throw new InvalidInputException(
          "Wrong input: Vector dimension error: expected dim: "
              + ours
              + ", got "
              + dim
              + " [lookup_from.collection="
              + name
              + "]");
    }
    return name;
  }

  /**
   * The dense vector examples are read from in {@code from}, as an internal name: {@code
   * lookup_from.vector}, or by default the vector of the same name as the query's {@code using}.
   */
  private String lookupVector(JsonNode lookupFrom, String from, String collection, String using) {
    if (lookupFrom == null || lookupFrom.isNull()) {
      return using;
    }
    JsonNode vector = lookupFrom.get("vector");
    String name;
    if (vector != null && !vector.isNull()) {
      if (!vector.isString()) {
        throw Requests.invalid(
            "lookup_from.vector must be a vector name", "lookup_from.vector", vector);
      }
      name = vector.asString();
    } else {
      // the query's vector by the name it has in the request
      name = using.isEmpty() ? service.config(collection).defaultVectorName() : using;
    }
    CollectionConfig config = service.config(from);
    String internal = config.internalName(name);
    if (!config.isDense(internal)) {
      throw Requests.invalid(
          "lookup_from.vector must name a dense vector", "lookup_from.vector", vector);
    }
    return internal;
  }

  /** A collection named to look points up in; Qdrant's 404 when it does not exist. */
  static void requireLookup(CollectionService service, String name) {
    CollectionNames.validate(name);
    if (!service.exists(name)) {
      throw new NotFoundException("Collection " + name + " not found");
    }
  }

  // ---- sparse vectors -----------------------------------------------------------------------

  /**
   * The sparse vector field a node's {@code using} names, or {@code null} when it names a dense
   * vector (the primary one by its name, absent or empty for an unnamed one). A name that is no
   * vector of the collection is Qdrant's 400; so is an absent one in a collection whose vector is
   * named. A text query's {@code using} names a payload key instead ({@link #textSearch}).
   */
  private String sparseUsing(String collection, Node node) {
    if (isTextQuery(node.query())) {
      return null;
    }
    CollectionConfig config = service.config(collection);
    String internal = config.internalName(usingName(node));
    return config.isDense(internal) ? null : internal;
  }

  /**
   * The dense vector a node searches, as an internal name: {@code ""} for the primary vector (by
   * its name, or absent when it is unnamed), else another dense field's name. Call after {@link
   * #sparseUsing} found no sparse field.
   */
  private String denseUsing(String collection, Node node) {
    return service.config(collection).internalName(usingName(node));
  }

  /**
   * How the results of {@code node} are ranked, as Qdrant's {@code query_result_order}: {@code
   * true} when a higher score is better, {@code false} when a lower one is (the distances of Euclid
   * and Manhattan vectors, {@code order_by} ascending, points by id without a query), {@code null}
   * when they have no order to compare across requests (random samples, MMR).
   */
  Boolean higherIsBetter(String collection, Node node) {
    JsonNode q = node.query();
    if (q == null || q.isNull()) {
      return false; // points by id
    }
    if (Fusion.parse(q, node.path() + "query") != null) {
      return true;
    }
    if (q.isObject()) {
      if (q.has("formula") || q.has("discover") || q.has("context")) {
        return true;
      }
      if (q.has("order_by")) {
        JsonNode o = q.get("order_by");
        return o.isObject() && o.path("direction").asString("asc").equals("desc");
      }
      if (q.has("sample")) {
        return null;
      }
      if (q.has("nearest") && q.get("mmr") != null && !q.get("mmr").isNull()) {
        return null;
      }
      if (q.has("relevance_feedback")) {
        return true;
      }
      if (q.has("recommend")) {
        JsonNode strategy = q.get("recommend").get("strategy");
        boolean average =
            strategy == null
                || strategy.isNull()
                || strategy.asString("average_vector").equals("average_vector");
        if (!average) {
          return true;
        }
      }
    }
    if (isTextQuery(q) || sparseUsing(collection, node) != null) {
      return true;
    }
    return service.config(collection).distance(denseUsing(collection, node)).higherIsBetter();
  }

  /** The dense vector {@code using} ({@code ""}: the primary one) of a record read with vectors. */
  static float[] vectorOf(Record r, String using) {
    if (using.isEmpty()) {
      return r.vector();
    }
    return r.dense() == null ? null : r.dense().get(using);
  }

  /**
   * A search of the dense vector {@code using}: the primary one's graph ({@code ""}), or another
   * dense field's graphs and scans with the request's vector, limit, offset, filter, threshold,
   * search list ({@code hnsw_ef}), candidates rescored ({@code rerank_k}, {@code
   * quantization.oversampling}) and {@code exact}.
   */
  static List<Record> search(
      CollectionService service,
      String collection,
      String using,
      SearchRequest req,
      SearchStats stats) {
    if (using.isEmpty()) {
      return service.search(collection, req, stats);
    }
    return service.denseSearch(
        collection,
        new DenseSearchRequest(
            using,
            req.vector(),
            req.limit(),
            req.offset(),
            req.filter(),
            req.scoreThreshold(),
            req.withPayload(),
            req.withVector(),
            req.params()));
  }

  /** Qdrant's error for a fusion query that names a vector. */
  private static InvalidInputException fusionWithUsing() {
    return new InvalidInputException(
        "Bad request: Fusion queries cannot be combined with the 'using' field.");
  }

  /** The vector name a node's {@code using} gives ({@code ""} when absent). */
  static String usingName(Node node) {
    JsonNode using = node.using();
    return using == null || !using.isString() ? "" : using.asString();
  }

  /** A query of a sparse field: {@code {indices, values}}, alone or as {@code nearest}. */
  private static SparseVector sparseQuery(JsonNode q, String field, String name) {
    JsonNode v = q;
    String where = field;
    if (q.isObject() && q.has("nearest")) {
      v = q.get("nearest");
      where = field + ".nearest";
    }
    if (!Requests.isSparse(v)) {
      throw Requests.invalid(
          "a query of the sparse vector " + name + " must be a sparse vector {indices, values}",
          where,
          q);
    }
    return Requests.sparseVector(v, where);
  }

  // ---- other queries ----------------------------------------------------------------------

  /** Qdrant's document query: {@code {"text": "..."}}, also inside {@code nearest}. */
  static boolean isTextQuery(JsonNode q) {
    return q != null && q.isObject() && (q.has("text") || isTextQuery(q.get("nearest")));
  }

  /** BM25 over the text-indexed payload key that {@code using} (or {@code query.field}) names. */
  private List<Record> textSearch(
      String collection, Node node, JsonNode q, int limit, Filter filter, Fetch fetch) {
    String prefix = node.path();
    if (!q.has("text")) {
      q = q.get("nearest");
    }
    JsonNode text = q.get("text");
    if (!text.isString()) {
      throw Requests.invalid(prefix + "query.text must be a string", "text", text);
    }
    JsonNode model = q.get("model");
    JsonNode field = q.has("field") ? q.get("field") : node.using();
    if (!q.has("field")
        && field != null
        && field.isString()
        && service.config(collection).sparseVectors().containsKey(field.asString())) {
      // a document query of a sparse vector: the built-in BM25's query vector, searched as any
      Requests.model(model, prefix + "query.model");
      for (Map.Entry<String, JsonNode> e : q.properties()) {
        if (!Set.of("text", "model", "options").contains(e.getKey())) {
          throw Requests.invalid(
              "unknown document field", prefix + "query." + e.getKey(), e.getValue());
        }
      }
      SparseVector query =
          Bm25Embedding.parse(q.get("options"), prefix + "query.options").query(text.asString());
      return service.sparseSearch(
          collection,
          new SparseSearchRequest(
              field.asString(),
              query,
              limit,
              0,
              filter,
              node.threshold(),
              fetch.withPayload(),
              fetch.withVector(),
              node.idfCorpus()));
    }
    if (model != null
        && !model.isNull()
        && !List.of("bm25", "qdrant/bm25").contains(model.asString("").toLowerCase(Locale.ROOT))) {
      throw Requests.invalid("only BM25 text queries are supported", "model", model);
    }
    if (q.has("options") && !q.get("options").isNull()) {
      throw Requests.invalid(
          "options are the built-in BM25 model's, for a sparse vector named by using; a text query"
              + " of a payload key scores by classic BM25 (k1 1.2, b 0.75)",
          prefix + "query.options",
          q.get("options"));
    }
    if (!q.has("field") && field != null && field.isString() && isVector(collection, field)) {
      // a vector's name wins over a payload key of the same name
      throw Requests.invalid(
          "using names the vector "
              + field.asString()
              + ", which a text query cannot search; give the text-indexed payload key in"
              + " query.field",
          prefix + "using",
          field);
    }
    if (field == null || !field.isString() || field.asString().isEmpty()) {
      throw new InvalidInputException(
          "Wrong input: a text query names its text-indexed payload key with `"
              + prefix
              + "using` (or query.field)");
    }
    return page(
        service.textSearch(
            collection,
            new TextSearchRequest(
                field.asString(),
                text.asString(),
                limit,
                filter,
                fetch.withPayload(),
                fetch.withVector())),
        node.threshold(),
        true,
        limit);
  }

  /** Whether {@code name} is a vector name of the collection (not the unnamed vector's). */
  private boolean isVector(String collection, JsonNode name) {
    CollectionConfig config = service.config(collection);
    String n = name.asString();
    return !n.isEmpty() && config.hasVectorNamed(n);
  }

  /**
   * {@code order_by}: a key, or {@code {"key", "direction", "start_from"}}; the score of each point
   * is its value.
   */
  private List<Record> orderBy(
      String collection, JsonNode orderBy, String field, int want, Filter filter, Fetch fetch) {
    OrderedScrollRequest req =
        Requests.orderBy(orderBy, field, want, filter, fetch.withPayload(), fetch.withVector());
    List<Record> out = new ArrayList<>();
    for (Ordered o : service.scrollOrdered(collection, req)) {
      Record r = o.record();
      out.add(r.withScore((float) o.value()));
    }
    return out;
  }

  private static void checkSample(JsonNode q, String field) {
    JsonNode s = q.get("sample");
    if (!s.isString() || !s.asString().equals("random")) {
      throw Requests.invalid("sample must be \"random\"", field + ".sample", s);
    }
  }

  /**
   * {@code sample: "random"}: {@code want} points drawn at random among those that pass the filter.
   * Up to {@link #SAMPLE_SCAN_MAX} matching points are all candidates; beyond that the sample is
   * drawn from a window of that many points that starts at a random one of them.
   */
  List<Record> sample(String collection, Filter filter, int want, Fetch fetch) {
    long matching = service.count(collection, filter);
    if (matching == 0) {
      return List.of();
    }
    SplittableRandom rnd = new SplittableRandom(sampleSeed.incrementAndGet() * 0x9E3779B97F4A7C15L);
    long skip = matching > SAMPLE_SCAN_MAX ? rnd.nextLong(matching - SAMPLE_SCAN_MAX + 1) : 0;
    // Reservoir sampling over the window [skip, skip + SAMPLE_SCAN_MAX) in id order.
    List<PointId> reservoir = new ArrayList<>(want);
    long seen = 0;
    long index = 0;
    ScrollRequest req = new ScrollRequest(null, SCAN_PAGE, false, false, filter);
    outer:
    while (true) {
      ScrollPage page = service.scroll(collection, req);
      for (Record r : page.points()) {
        if (index++ < skip) {
          continue;
        }
        if (seen >= SAMPLE_SCAN_MAX) {
          break outer;
        }
        seen++;
        if (reservoir.size() < want) {
          reservoir.add(r.id());
        } else {
          long j = rnd.nextLong(seen);
          if (j < want) {
            reservoir.set((int) j, r.id());
          }
        }
      }
      if (page.nextOffset() == null) {
        break;
      }
      req = req.from(page.nextOffset());
    }
    List<Record> got =
        service.retrieve(collection, reservoir, fetch.withPayload(), fetch.withVector());
    List<Record> out = new ArrayList<>(got);
    for (int i = out.size() - 1; i > 0; i--) {
      int j = rnd.nextInt(i + 1);
      Record t = out.get(i);
      out.set(i, out.get(j));
      out.set(j, t);
    }
    return out;
  }

  private void shuffle(List<Record> list) {
    SplittableRandom rnd = new SplittableRandom(sampleSeed.incrementAndGet() * 0x9E3779B97F4A7C15L);
    for (int i = list.size() - 1; i > 0; i--) {
      int j = rnd.nextInt(i + 1);
      Record t = list.get(i);
      list.set(i, list.get(j));
      list.set(j, t);
    }
  }

  // ---- helpers ----------------------------------------------------------------------------

  /** The configuration of {@code collection}. */
  CollectionConfig config(String collection) {
    return service.config(collection);
  }

  Distance distance(String collection) {
    return service.config(collection).distance();
  }

  /** The first {@code want} records passing the threshold (scores where higher is better). */
  private static List<Record> page(
      List<Record> ranked, Float threshold, boolean higherIsBetter, int want) {
    List<Record> out = new ArrayList<>();
    for (Record r : ranked) {
      if (out.size() >= want) {
        break;
      }
      if (threshold != null && (higherIsBetter ? r.score() < threshold : r.score() > threshold)) {
        break;
      }
      out.add(r);
    }
    return out;
  }

  static Filter and(Filter a, Filter b) {
    if (a == null || a.isEmpty()) {
      return b;
    }
    if (b == null || b.isEmpty()) {
      return a;
    }
    return Filter.must(a, b);
  }

  /** A filter leaving out {@code ids} ({@code null} when there are none). */
  private static Filter excluding(Set<PointId> ids) {
    if (ids.isEmpty()) {
      return null;
    }
    return new Filter(List.of(), List.of(), List.of(new Condition.HasId(Set.copyOf(ids))), null);
  }
}
