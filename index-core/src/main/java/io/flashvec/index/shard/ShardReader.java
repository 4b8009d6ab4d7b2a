package io.flashvec.index.shard;

import io.flashvec.index.Distance;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import io.flashvec.index.ScrollPage;
import io.flashvec.index.SearchStats;
import io.flashvec.index.SparseVector;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.payload.PayloadFieldSchema;
import io.flashvec.index.payload.PayloadIndexes;
import io.flashvec.index.query.Ordered;
import io.flashvec.index.query.OrderedScrollRequest;
import io.flashvec.index.query.PreparedSearch;
import io.flashvec.index.query.ScrollRequest;
import io.flashvec.index.query.SearchRequest;
import io.flashvec.index.query.TextSearchRequest;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.FieldGraph;
import io.flashvec.index.segment.Segment;
import io.flashvec.index.segment.TopK;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntPredicate;

/**
 * Every read of a shard: get, count, scroll, vector search, BM25 text search and scrolls ordered by
 * a payload index. Lock-free: each read takes a {@link Snapshot} reference for as long as it
 * touches segment data, and point locations from {@link IdLocations}.
 *
 * <p>A point being rewritten can briefly show two versions (the writer appends the new one before
 * it deletes the old); reads that collect several points keep one version of each id.
 */
final class ShardReader {

  private final int dim;
  private final Distance distance;
  private final SegmentSet segments;
  private final IdLocations locations;
  private final PayloadIndexes payloadIndexes;
  private final LiveIndexScheduler scheduler;

  ShardReader(
      int dim,
      Distance distance,
      SegmentSet segments,
      IdLocations locations,
      PayloadIndexes payloadIndexes,
      LiveIndexScheduler scheduler) {
    this.dim = dim;
    this.distance = distance;
    this.segments = segments;
    this.locations = locations;
    this.payloadIndexes = payloadIndexes;
    this.scheduler = scheduler;
  }

  /** The live version of a point, or {@code null}. */
  Record get(PointId id, boolean withPayload, boolean withVector) {
    Snapshot snap = segments.acquire();
    try {
      while (true) {
        // Location first, then the snapshot it must be in: an install between the two publishes
        // the new segment before it moves locations, so a miss means "read both again".
        long loc = locations.get(id);
        if (loc == IdLocations.NONE) {
          return null;
        }
        Segment s = snap.byId(IdLocations.segment(loc));
        if (s == null) {
          Snapshot next = segments.acquire();
          snap.release();
          snap = next;
          continue;
        }
        int ord = IdLocations.ordinal(loc);
        if (s.isDeleted(ord)) {
          // A new version moves the location before it deletes the old one: if the location
          // moved since it was read, the point was rewritten, not deleted; read it again.
          if (locations.get(id) != loc) {
            continue;
          }
          return null;
        }
        return record(s, ord, 0f, withPayload, withVector);
      }
    } finally {
      snap.release();
    }
  }

  /** Exact number of live points. */
  long count() {
    long n = 0;
    for (Segment s : segments.current().segments()) {
      n += s.liveCount();
    }
    return n;
  }

  /** Live points that match {@code filter} ({@code null}: all). */
  long count(FilterEvaluator filter) {
    if (filter == null || filter.matchesAll()) {
      return count();
    }
    long n = 0;
    Snapshot snap = segments.acquire();
    try {
      for (Segment seg : snap.segments()) {
        n += payloadIndexes.accepted(seg, filter).count();
      }
    } finally {
      snap.release();
    }
    return n;
  }

  /** Ids of the live points that match; deduplicated. */
  List<PointId> matchingIds(FilterEvaluator filter) {
    Set<PointId> out = new HashSet<>();
    Snapshot snap = segments.acquire();
    try {
      for (Segment seg : snap.segments()) {
        AcceptedOrdinals a = payloadIndexes.accepted(seg, filter);
        for (int ord = a.next(0); ord >= 0; ord = a.next(ord + 1)) {
          out.add(seg.idAt(ord));
        }
      }
    } finally {
      snap.release();
    }
    return new ArrayList<>(out);
  }

  /**
   * {@link #scrollIds(PointId, int)} over the live points that match {@code filter} ({@code null}:
   * all). The filter is evaluated only for ids that would enter the page.
   */
  List<PointId> scrollIds(PointId from, int limit, FilterEvaluator filter) {
    if (filter == null || filter.matchesAll()) {
      return scrollIds(from, limit);
    }
    TreeSet<PointId> page = new TreeSet<>();
    if (limit <= 0) {
      return List.of();
    }
    Snapshot snap = segments.acquire();
    try {
      for (Segment seg : snap.segments()) {
        AcceptedOrdinals a = payloadIndexes.accepted(seg, filter);
        for (int ord = a.next(0); ord >= 0; ord = a.next(ord + 1)) {
          PointId id = seg.idAt(ord);
          if ((from != null && id.compareTo(from) < 0)
              || (page.size() >= limit && id.compareTo(page.last()) >= 0)) {
            continue;
          }
          page.add(id);
          if (page.size() > limit) {
            page.pollLast();
          }
        }
      }
    } finally {
      snap.release();
    }
    return new ArrayList<>(page);
  }

  /**
   * Returns, in order, the smallest live ids that are {@code >= from} (all if null), at most {@code
   * limit}.
   */
  List<PointId> scrollIds(PointId from, int limit) {
    return locations.smallest(from, limit);
  }

  /**
   * A page of the live points that match {@code filter} ({@code null}: all) from the request's
   * offset on, in id order, with payload and vector as it asks. A point rewritten between the id
   * scan and the read is checked again and left out if it no longer matches.
   */
  ScrollPage scroll(ScrollRequest req, FilterEvaluator filter) {
    if (filter != null && filter.matchesAll()) {
      filter = null;
    }
    int limit = req.limit();
    List<PointId> ids = scrollIds(req.offset(), limit + 1, filter);
    List<Record> page = new ArrayList<>(Math.min(limit, ids.size()));
    PointId next = null;
    for (PointId id : ids) {
      if (page.size() == limit) {
        next = id;
        break;
      }
      boolean vectors = filter != null && filter.needsVectors();
      Record r = get(id, req.withPayload() || filter != null, req.withVector() || vectors);
      if (r != null && filter != null) {
        Record got = r;
        if (!filter.matches(
            id,
            r.payload(),
            name ->
                name.isEmpty()
                    ? got.vector() != null
                    : got.sparse().containsKey(name)
                        || (got.dense() != null && got.dense().containsKey(name)))) {
          continue;
        }
        if (vectors && !req.withVector()) {
          r = r.withoutVectors();
        }
        if (!req.withPayload()) {
          r = r.withoutPayload();
        }
      }
      if (r != null) {
        page.add(r);
      }
    }
    return new ScrollPage(page, next);
  }

  /**
   * The best {@link PreparedSearch#k()} live points for a search, best first, with payload and
   * vector as its request asks; results below its score threshold (above, for distances) are
   * dropped. With a filter, each segment's matching ordinals are evaluated first (their count is
   * the planner's cardinality; see {@link io.flashvec.index.filter.FilterPlanner}).
   */
  List<Record> search(PreparedSearch search) {
    if (dim == 0) {
      throw new InvalidInputException(
          "Wrong input: the collection has no primary dense vector; name the vector to search");
    }
    if (search.query().length != dim) {
      throw new InvalidInputException(
          "Wrong input: Vector dimension error: expected dim: "
              + dim
              + ", got "
              + search.query().length);
    }
    Snapshot snap = segments.acquire();
    try {
      scheduler.noteSearch();
      return search(snap.segments(), search);
    } finally {
      snap.release();
    }
  }

  private List<Record> search(List<Segment> segs, PreparedSearch search) {
    SearchRequest req = search.request();
    TopK top = new TopK(distance, search.k());
    long total = 0;
    for (Segment seg : segs) {
      total += seg.size();
    }
    for (int i = 0; i < segs.size(); i++) {
      Segment seg = segs.get(i);
      AcceptedOrdinals accept =
          search.filtered() ? payloadIndexes.accepted(seg, search.filter()) : null;
      if (seg.withoutVector() > 0) {
        accept = AcceptedOrdinals.withVector(seg, accept);
      }
      // a graph search is sized to the segment's share of the points (Lucene does so; see
      // SearchShare); not with a filter, which may select mostly one segment's points
      double share = total > 0 && !search.filtered() ? (double) seg.size() / total : 1.0;
      seg.search(search, accept, share, top, i);
    }
    int n = top.size();
    float[] scores = new float[n];
    int[] slots = new int[n];
    int[] ords = new int[n];
    top.drainBestFirst(scores, slots, ords);
    List<Record> out = new ArrayList<>(n);
    Set<PointId> seen = new HashSet<>();
    Float threshold = req.scoreThreshold();
    for (int i = 0; i < n; i++) {
      if (threshold != null && !distance.passes(scores[i], threshold)) {
        break;
      }
      Segment s = segs.get(slots[i]);
      PointId id = s.idAt(ords[i]);
      // An upsert racing with this search can expose two versions of one id for an instant.
      if (!seen.add(id)) {
        continue;
      }
      out.add(record(s, ords[i], scores[i], req.withPayload(), req.withVector()));
    }
    return out;
  }

  /**
   * The point at {@code ord} of {@code s} as a record: payload and vectors (the default dense one
   * when the point has it, and the sparse ones) as asked.
   */
  static Record record(Segment s, int ord, float score, boolean withPayload, boolean withVector) {
    return new Record(
        s.idAt(ord),
        score,
        withVector && s.hasVector(ord) ? s.vectorAt(ord) : null,
        withPayload ? s.payloadAt(ord) : null,
        withVector ? s.sparseAt(ord) : null,
        withVector && s.hasDense() ? s.denseAt(ord) : null);
  }

  /**
   * The best {@code k} live points by {@code distance} between their dense vector {@code field}
   * (not the primary one) and the prepared {@code query}, among those {@code filter} accepts
   * ({@code null}: all). A sealed segment with a graph of the field ({@link FieldGraph}) is
   * searched through it with list {@code searchList} (at least {@code k}) over the nodes built so
   * far, and its other points are scanned; every other segment, a filter that leaves too few points
   * for a graph search to find them, and {@code exact} scan the points that have the field, scored
   * in place with the SIMD kernels. Scores are exact either way. Best first; ties by segment and
   * ordinal.
   */
  List<Record> denseSearch(
      String field,
      float[] query,
      Distance distance,
      int k,
      io.flashvec.index.SearchParams params,
      FilterEvaluator filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    Snapshot snap = segments.acquire();
    try {
      List<Segment> segs = snap.segments();
      TopK top = new TopK(distance, k);
      boolean filtered = filter != null && !filter.matchesAll();
      SearchStats stats = new SearchStats();
      for (int i = 0; i < segs.size(); i++) {
        Segment seg = segs.get(i);
        if (!seg.hasDense()) {
          continue;
        }
        AcceptedOrdinals accept = filtered ? payloadIndexes.accepted(seg, filter) : null;
        FieldGraph g = params.exact() ? null : seg.fieldGraph(field);
        int built = g == null ? 0 : g.built();
        if (g != null
            && built >= FieldGraph.MIN_POINTS
            && (accept == null || accept.count() >= graphFilterMin(built))) {
          int slot = i;
          IntPredicate ok = accept == null ? ord -> !seg.isDeleted(ord) : accept::get;
          g.search(
              query,
              k,
              Math.max(k, params.searchList()),
              params.rerankK(),
              ok,
              ord -> {
                float score = seg.denseScore(field, ord, query, distance);
                if (!Float.isNaN(score)) {
                  top.offer(score, slot, ord);
                }
              },
              stats);
          for (int node = built; node < g.nodes(); node++) {
            int ord = g.ordinal(node);
            if (ok.test(ord)) {
              float score = seg.denseScore(field, ord, query, distance);
              if (!Float.isNaN(score)) {
                top.offer(score, i, ord);
              }
            }
          }
          continue;
        }
        int n = accept == null ? seg.size() : accept.size();
        for (int ord = accept == null ? 0 : accept.next(0);
            ord >= 0 && ord < n;
            ord = accept == null ? ord + 1 : accept.next(ord + 1)) {
          if (accept == null && seg.isDeleted(ord)) {
            continue;
          }
          float score = seg.denseScore(field, ord, query, distance);
          if (!Float.isNaN(score)) {
            top.offer(score, i, ord);
          }
        }
      }
      return records(top, segs, distance, scoreThreshold, withPayload, withVector);
    } finally {
      snap.release();
    }
  }

  /**
   * The fewest points a filter must accept in a segment whose field graph has {@code built} nodes
   * for the graph to be searched: a quarter of them, so that a search list finds enough accepted
   * nodes; below that the accepted points are scanned, which then costs no more than the graph
   * search (Qdrant's {@code full_scan_threshold} decides the same way by cardinality).
   */
  static int graphFilterMin(int built) {
    return Math.max(FieldGraph.MIN_POINTS, built / 4);
  }

  /**
   * The best {@code k} live points by Qdrant's MaxSim ({@link Distance#maxSim}) of the prepared
   * multivector {@code query}, {@code dim}-sized vectors back to back, against their multivector
   * {@code field}, among those {@code filter} accepts ({@code null}: all): an exact scan of the
   * points that have the field, each scored in place with the SIMD kernels, one product per pair of
   * a query vector and a point's vector. Best first; ties by segment and ordinal.
   */
  List<Record> multiSearch(
      String field,
      float[] query,
      int dim,
      Distance distance,
      int k,
      FilterEvaluator filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    return exactScan(
        distance,
        k,
        filter,
        scoreThreshold,
        withPayload,
        withVector,
        Segment::hasDense,
        (seg, ord) -> seg.multiScore(field, ord, query, dim, distance));
  }

  /**
   * The best {@code k} live points by the dot product of their sparse vector {@code field} with
   * {@code query}, among those {@code filter} accepts ({@code null}: all): an exact scan of the
   * points that have the field. Points that share no index with the query, or score 0, are no
   * results (as in Qdrant's sparse search). Best first; ties by segment and ordinal.
   */
  List<Record> sparseSearch(
      String field,
      SparseVector query,
      int k,
      FilterEvaluator filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    return exactScan(
        Distance.DOT,
        k,
        filter,
        scoreThreshold,
        withPayload,
        withVector,
        Segment::hasSparse,
        (seg, ord) -> {
          SparseVector v = seg.sparseAt(ord, field);
          float score = v == null ? 0f : query.dot(v);
          return score != 0f ? score : Float.NaN;
        });
  }

  /**
   * The document frequencies of the sparse field {@code field} for IDF: element 0 is the number of
   * live points that have the field, element {@code 1 + i} the number of those whose vector has
   * index {@code indices[i]} ({@code indices} ascending as unsigned values, as a {@link
   * SparseVector}'s). A scan of the points that have the field, like the search it weights; a point
   * that an update moves between segments while it runs may be counted twice. With a {@code corpus}
   * filter ({@code null}: none), only the points that pass it count.
   */
  long[] sparseFrequencies(String field, int[] indices, FilterEvaluator corpus) {
    long[] out = new long[1 + indices.length];
    boolean filtered = corpus != null && !corpus.matchesAll();
    Snapshot snap = segments.acquire();
    try {
      for (Segment seg : snap.segments()) {
        if (!seg.hasSparse()) {
          continue;
        }
        AcceptedOrdinals accept = filtered ? payloadIndexes.accepted(seg, corpus) : null;
        int n = accept == null ? seg.size() : accept.size();
        for (int ord = accept == null ? 0 : accept.next(0);
            ord >= 0 && ord < n;
            ord = accept == null ? ord + 1 : accept.next(ord + 1)) {
          if (accept == null && seg.isDeleted(ord)) {
            continue;
          }
          SparseVector v = seg.sparseAt(ord, field);
          if (v == null) {
            continue;
          }
          out[0]++;
          // both ascending: one merge walk
          int[] d = v.indices();
          int i = 0;
          int j = 0;
          while (i < indices.length && j < d.length) {
            int c = Integer.compareUnsigned(indices[i], d[j]);
            if (c == 0) {
              out[1 + i]++;
              i++;
              j++;
            } else if (c < 0) {
              i++;
            } else {
              j++;
            }
          }
        }
      }
    } finally {
      snap.release();
    }
    return out;
  }

  /** A point's score in an exact scan; {@code NaN}: the point is no result. */
  @FunctionalInterface
  private interface OrdinalScorer {
    float score(Segment seg, int ord);
  }

  /**
   * The best {@code k} live points by {@code scorer} over the segments that {@code holds} accepts,
   * among the points {@code filter} accepts ({@code null}: all), ranked by {@code distance}; a
   * point that two segments hold (an update during the scan) is returned once, its best-ranked
   * version. Best first; ties by segment and ordinal.
   */
  private List<Record> exactScan(
      Distance distance,
      int k,
      FilterEvaluator filter,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector,
      java.util.function.Predicate<Segment> holds,
      OrdinalScorer scorer) {
    Snapshot snap = segments.acquire();
    try {
      List<Segment> segs = snap.segments();
      TopK top = new TopK(distance, k);
      boolean filtered = filter != null && !filter.matchesAll();
      for (int i = 0; i < segs.size(); i++) {
        Segment seg = segs.get(i);
        if (!holds.test(seg)) {
          continue;
        }
        AcceptedOrdinals accept = filtered ? payloadIndexes.accepted(seg, filter) : null;
        int n = accept == null ? seg.size() : accept.size();
        for (int ord = accept == null ? 0 : accept.next(0);
            ord >= 0 && ord < n;
            ord = accept == null ? ord + 1 : accept.next(ord + 1)) {
          if (accept == null && seg.isDeleted(ord)) {
            continue;
          }
          float score = scorer.score(seg, ord);
          if (!Float.isNaN(score)) {
            top.offer(score, i, ord);
          }
        }
      }
      return records(top, segs, distance, scoreThreshold, withPayload, withVector);
    } finally {
      snap.release();
    }
  }

  /**
   * The points {@code top} holds as records, best first, down to {@code scoreThreshold} ({@code
   * null}: all); a point two segments hold (an update during the search) once, its best version.
   */
  private static List<Record> records(
      TopK top,
      List<Segment> segs,
      Distance distance,
      Float scoreThreshold,
      boolean withPayload,
      boolean withVector) {
    int n = top.size();
    float[] scores = new float[n];
    int[] slots = new int[n];
    int[] ords = new int[n];
    top.drainBestFirst(scores, slots, ords);
    List<Record> out = new ArrayList<>(n);
    Set<PointId> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      if (scoreThreshold != null && !distance.passes(scores[i], scoreThreshold)) {
        break;
      }
      Segment s = segs.get(slots[i]);
      if (seen.add(s.idAt(ords[i]))) {
        out.add(record(s, ords[i], scores[i], withPayload, withVector));
      }
    }
    return out;
  }

  /**
   * BM25 search of a request's text, as {@code tokens}, in its text field among the live points
   * that match {@code filter} ({@code null}: all); best first, scores are BM25 scores.
   */
  List<Record> textSearch(TextSearchRequest req, List<String> tokens, FilterEvaluator filter) {
    boolean withPayload = req.withPayload();
    boolean withVector = req.withVector();
    Snapshot snap = segments.acquire();
    try {
      List<Segment> segs = snap.segments();
      boolean filtered = filter != null && !filter.matchesAll();
      List<PayloadIndexes.Hit> hits =
          payloadIndexes.textSearch(
              segs,
              req.field(),
              tokens,
              req.limit(),
              filtered ? slot -> payloadIndexes.accepted(segs.get(slot), filter) : null);
      List<Record> out = new ArrayList<>(hits.size());
      Set<PointId> seen = new HashSet<>();
      for (var h : hits) {
        Segment seg = segs.get(h.slot());
        PointId id = seg.idAt(h.ord());
        if (seen.add(id)) {
          out.add(record(seg, h.ord(), (float) h.score(), withPayload, withVector));
        }
      }
      return out;
    } finally {
      snap.release();
    }
  }

  /**
   * The first {@code limit} live points that match {@code filter} ({@code null}: all) ordered by
   * the value of the request's key, whose numeric or datetime index is {@code key} (smallest value
   * of each point ascending, largest descending; ties by id), starting at its {@code startFrom}
   * (inclusive; {@code null}: the start). Points without a value are left out.
   */
  List<Ordered> orderedScroll(
      OrderedScrollRequest req, PayloadFieldSchema key, FilterEvaluator filter) {
    boolean ascending = req.ascending();
    Double startFrom = req.startFrom();
    int limit = req.limit();
    boolean withPayload = req.withPayload();
    boolean withVector = req.withVector();
    record Cand(Segment seg, int ord, PointId id, double value) {}
    Comparator<Cand> order =
        Comparator.comparingDouble((Cand c) -> ascending ? c.value() : -c.value())
            .thenComparing(Cand::id);
    PriorityQueue<Cand> heap = new PriorityQueue<>(order.reversed());
    Snapshot snap = segments.acquire();
    try {
      for (Segment seg : snap.segments()) {
        AcceptedOrdinals acc =
            filter != null && !filter.matchesAll()
                ? payloadIndexes.accepted(seg, filter)
                : AcceptedOrdinals.evaluate(seg, (id, p) -> true);
        payloadIndexes.orderValues(
            seg,
            key,
            acc,
            (v, ord) -> {
              if (startFrom != null && (ascending ? v < startFrom : v > startFrom)) {
                return;
              }
              Cand c = new Cand(seg, ord, seg.idAt(ord), v);
              if (heap.size() < limit) {
                heap.add(c);
              } else if (limit > 0 && order.compare(c, heap.peek()) < 0) {
                heap.poll();
                heap.add(c);
              }
            });
      }
      List<Cand> sorted = new ArrayList<>(heap);
      sorted.sort(order);
      List<Ordered> out = new ArrayList<>(sorted.size());
      // a point appears once per value; a point being rewritten may show two versions of one value
      record Seen(PointId id, double value) {}
      Set<Seen> seen = new HashSet<>();
      for (Cand c : sorted) {
        if (seen.add(new Seen(c.id(), c.value()))) {
          out.add(new Ordered(record(c.seg(), c.ord(), 0f, withPayload, withVector), c.value()));
        }
      }
      return out;
    } finally {
      snap.release();
    }
  }
}
