package io.flashvec.index.filter;

/**
 * Chooses how a filtered search runs on a graph segment, from the exact number of points the filter
 * accepts there (known for free: building the accepted bitset evaluates every point anyway).
 *
 * <h2>Cost model</h2>
 *
 * An unfiltered beam search with search list {@code L} visits about {@code 8·L} nodes (789 at L=100
 * on 100k×768). With a filter accepting a fraction {@code s} of the points, a beam that keeps
 * {@code L} accepted candidates visits about {@code 8·L / s} nodes. Scoring the {@code m = s·N}
 * accepted points exactly costs {@code m} full-precision distances, each about twice a PQ visit.
 * Exact is cheaper when {@code 2·m < 8·L·N / m}, i.e. {@code m < sqrt(4·L·N)}: 6,300 points (6%) of
 * a 100k segment at L=100, 20,000 (2%) of a 1M segment. Below {@link #MIN_EXACT} accepted points
 * the scan is always exact (a few hundred distances cost less than one graph search). Exact results
 * are also exactly right, which is what very selective filters need: a graph beam that must walk
 * past 99.9% rejected nodes loses recall first.
 *
 * <p>Above the threshold the graph search gets a wider candidate list, {@code L / s} capped at
 * {@link #MAX_SEARCH_LIST_FACTOR}·L: FlashVec's beam search (ADR 0007) keeps accepted and rejected
 * nodes alike in its list of {@code L}, so it holds about {@code s·L} accepted candidates; widening
 * by {@code 1/s} keeps about {@code L} of them, as in an unfiltered search. {@code
 * FilteredSearchTest} (20k×32, L=64, uniform filter): at 50% recall@10 0.94 with the list widened
 * by {@code 1/sqrt(s)} (the rule for jvector's searcher, which counted accepted nodes only), 0.988
 * with {@code 1/s} (1,181 nodes visited per query); a forced graph search at 10% reaches 1.0
 * visiting 3,200 nodes where the exact plan computes 1,900 distances.
 *
 * <h2>PQ scan</h2>
 *
 * A segment with PQ codes in memory has a third plan for the middle range: score every accepted
 * point with its codes (about a fifth of an exact distance: no record read, {@code dim/4} table
 * lookups), keep the best {@code L} and rescore those exactly: about {@code m + 5·L} PQ-distance
 * units. A graph search with a widened list {@code L'} costs its {@code 8·L'} visits, about {@code
 * 1.2·L'} expansions that each read a record and score it exactly ({@code 5} units), and the upkeep
 * of a sorted candidate list of {@code L'} entries, which grows like {@code L'²}: about {@code
 * 14·L' + 0.01·L'²} units. (Measured on 100k × 768 over REST with {@code
 * scripts/bench/bench-filtered.sh}: the graph at {@code L'=1,000} (10% accepted) ran at 0.41× the
 * unfiltered QPS, at {@code L'=200} (50%) at 0.83×.) The PQ scan therefore wins from the exact
 * plan's limit up to about 14% accepted of a 100k segment at L=100, and up to about 1.4% of 1M.
 */
public final class FilterPlanner {

  /** Always scan exactly when at most this many points are accepted. */
  public static final int MIN_EXACT = 1_000;

  /** Cap on the widening of the search list for filtered graph searches. */
  public static final int MAX_SEARCH_LIST_FACTOR = 16;

  private FilterPlanner() {}

  /** Whether to score the {@code accepted} points of a {@code size}-point segment exactly. */
  public static boolean exact(int accepted, int size, int searchList) {
    if (accepted <= MIN_EXACT) {
      return true;
    }
    return (double) accepted * accepted < 4.0 * searchList * size;
  }

  /** The three ways to run a search on a graph segment. */
  public enum Plan {
    /** Score every accepted point with its full vector. */
    EXACT,
    /** Score every accepted point with its PQ codes, rescore the best exactly. */
    PQ_SCAN,
    /** Beam search of the graph with the accepted set as the accept filter, list widened. */
    GRAPH
  }

  /**
   * How one segment search runs: its plan, and the search list of a graph search (widened for a
   * filter).
   */
  public record Decision(Plan plan, int searchList) {}

  /**
   * The decision for one search of a {@code size}-point segment at search list {@code searchList}:
   * exact when the request asks for it, a graph search without a filter ({@code accepted < 0}),
   * else {@link #choose}'s plan for the {@code accepted} matches. {@code pq}: whether the segment
   * has PQ codes in memory. A segment asks once per search and follows the answer.
   */
  public static Decision decide(
      boolean exactRequested, int accepted, int size, int searchList, boolean pq) {
    if (exactRequested) {
      return new Decision(Plan.EXACT, searchList);
    }
    if (accepted < 0) {
      return new Decision(Plan.GRAPH, searchList);
    }
    return force(choose(accepted, size, searchList, pq), accepted, size, searchList);
  }

  /** The decision with the plan given (tests compare plans this way). */
  public static Decision force(Plan plan, int accepted, int size, int searchList) {
    return new Decision(
        plan,
        plan == Plan.GRAPH && accepted >= 0 ? searchList(searchList, accepted, size) : searchList);
  }

  /**
   * The plan for {@code accepted} matches in a {@code size}-point segment at search list {@code
   * searchList}; {@code pq}: whether the segment has PQ codes in memory.
   */
  public static Plan choose(int accepted, int size, int searchList, boolean pq) {
    if (exact(accepted, size, searchList) && (!pq || accepted <= MIN_EXACT)) {
      return Plan.EXACT;
    }
    if (pq) {
      double l = searchList(searchList, accepted, size);
      double graph = 14 * l + 0.01 * l * l;
      if (accepted + 5.0 * searchList < graph) {
        return Plan.PQ_SCAN;
      }
    }
    return exact(accepted, size, searchList) ? Plan.EXACT : Plan.GRAPH;
  }

  /** The search list for a filtered graph search accepting {@code accepted} of {@code size}. */
  public static int searchList(int searchList, int accepted, int size) {
    if (accepted >= size || accepted <= 0) {
      return searchList;
    }
    double s = (double) accepted / size;
    return (int) Math.min((long) searchList * MAX_SEARCH_LIST_FACTOR, Math.ceil(searchList / s));
  }
}
